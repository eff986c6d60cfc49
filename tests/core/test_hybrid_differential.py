"""The hybrid engine's labels give the same Arrow table through the compiled core as
through Python, on Markdown read by md-pyromark-v1 under ``bytes-3`` and ``chars``.

The core runs ``_token_aware.iter_elements`` and ``_hybrid.Run`` (split to the budget,
peers merged, ids, ``embed_text``) in one pass; the Python path parses, chunks and fills in
the embedding fields record by record. Compared table for table under hybrid-v2 to v4 and
several policies (overlap, small budgets that split lists, tables and code, no merging,
list items as elements of their own), on the fixtures' Markdown, the installed
distributions' READMEs, pulldown-cmark's test suite (the CommonMark spec examples) and
generated documents. Contexts trimmed to half the budget are the core's too, with the same
warnings logged; a document whose Python chunks carry another warning (a line hybrid-v4
cuts, a character over budget) is declined by the core and chunked in Python: checked to
happen, and to give the same table.
"""

from __future__ import annotations

import logging
from functools import cache
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.corpora import distribution_readmes, fixture_markdown
from kebab_chunk._core import using
from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.elements import RawDocument
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.model.ids import content_hash
from kebab_chunk.parsers.base import ParseLimits
from kebab_chunk.runtime.tasks import Chunked, ChunkTask, ParseChunkTask, ParseTask
from kebab_chunk.table import chunk_table, chunk_tables
from tests.core.test_markdown_differential import suite_inputs
from tests.core.test_table_differential import _FRONT, _PART, _both, _explain

LABELS = ("hybrid-v3", "hybrid-v4")
POLICIES = (
    ChunkPolicy(target_tokens=256, overlap_tokens=64),
    ChunkPolicy(target_tokens=40, overlap_tokens=10),
    ChunkPolicy(target_tokens=300, overlap_tokens=30, tokenizer="chars"),
    ChunkPolicy(target_tokens=64, overlap_tokens=8, merge_peers=False),
    ChunkPolicy(target_tokens=64, overlap_tokens=8, merge_list_items=False),
    ChunkPolicy(target_tokens=342, overlap_tokens=0, max_tokens=200),
)


class _Taken:
    """Counts what the core answered for each document (row count, -1 declined)."""

    def __init__(self, compiled: ModuleType, patch: pytest.MonkeyPatch) -> None:
        self.rows: list[int] = []
        original = compiled.chunk_markdown

        def counting(*args: Any, **kwargs: Any) -> Any:
            found = original(*args, **kwargs)
            self.rows.extend(found["doc_rows"])
            return found

        patch.setattr(compiled, "chunk_markdown", counting)

    @property
    def taken(self) -> int:
        return sum(1 for r in self.rows if r >= 0)


@cache
def _documents() -> tuple[tuple[str, bytes], ...]:
    docs = list(fixture_markdown().documents) + list(distribution_readmes().documents)[:60]
    return tuple((f"file:///{i}-{d.name.replace('/', '_')}.md", d.raw) for i, d in enumerate(docs))


@pytest.mark.parametrize(
    "policy", POLICIES, ids=lambda p: f"{p.tokenizer}-{p.target_tokens}-{p.merge_list_items}"
)
@pytest.mark.parametrize("label", LABELS)
def test_real_documents_give_the_same_table(
    compiled: ModuleType, label: str, policy: ChunkPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = _Taken(compiled, monkeypatch)
    rows = 0
    for uri, raw in _documents():
        fast, slow = _both(raw, uri, label, policy)
        assert fast.equals(slow), f"{uri}: {_explain(fast, slow)}"
        rows += fast.num_rows
    assert rows > 300  # the documents really were chunked
    assert taken.taken > len(_documents()) // 2  # and mostly by the core


def test_hybrid_v2_is_hybrid_v3_on_markdown(compiled: ModuleType) -> None:
    """Every Markdown element is an exact slice, so the rule that tells v2 from v3 (a slice
    merged with a rendered piece) never applies: the core runs both."""
    for uri, raw in _documents()[:40]:
        fast, slow = _both(raw, uri, "hybrid-v2", POLICIES[1])
        assert fast.equals(slow), f"{uri}: {_explain(fast, slow)}"


def test_the_core_takes_ordinary_documents(
    compiled: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the default policy almost no document is declined: the comparison is of two
    paths, not one."""
    taken = _Taken(compiled, monkeypatch)
    chunk_tables([(raw, uri) for uri, raw in _documents()], "hybrid-v4", ChunkPolicy())
    assert len(taken.rows) == len(_documents())
    assert taken.taken > 10 * (len(taken.rows) - taken.taken)


def test_commonmark_suite_inputs_give_the_same_table(compiled: ModuleType) -> None:
    """pulldown-cmark's suite (the spec examples and its own cases) at a budget that splits."""
    policy = ChunkPolicy(target_tokens=12, overlap_tokens=3)
    inputs = suite_inputs()
    assert len(inputs) > 1000
    for index, text in enumerate(inputs):
        for label in LABELS:
            fast, slow = _both(
                text.encode("utf-8", "surrogatepass"), f"s/{index}.md", label, policy
            )
            assert fast.equals(slow), f"suite input {index} ({label}): {_explain(fast, slow)}"


#: What the hybrid engine splits at or reads differently: long lists (ordered, nested,
#: with an empty item or a marker in Unicode digits), long tables and code, headings at
#: several levels (empty sections), long headings, image captions, blank-looking text.
_HYBRID_PART = st.sampled_from(
    [
        "".join(f"- item {i} with a few words to fill it\n" for i in range(12)),
        "".join(f"{i}. step {i} of the procedure. It has two sentences.\n" for i in range(1, 9)),
        "- a\n-\n- c\n",
        "١. first\n٢. second\n",
        "* outer\n  * inner one\n  * inner two\n* outer again\n",
        "| h1 | h2 |\n|----|----|\n" + "".join(f"| r{i} | value {i} |\n" for i in range(15)),
        "```\n" + "".join(f"line {i} = {i} * {i}\n" for i in range(20)) + "```\n",
        "# One\n",
        "## Two\n",
        "### Three\n",
        "#### " + "very long heading " * 12 + "\n",
        '![diagram](d.png "A caption that is rather long for a caption")\n\n',
        "\u00a0\u3000\n\n",
        "Sentence one. Sentence two! Sentence three? " * 6 + "\n\n",
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    _FRONT,
    st.lists(st.one_of(_PART, _HYBRID_PART), min_size=1, max_size=25).map("".join),
    st.sampled_from(POLICIES),
    st.sampled_from(LABELS),
)
def test_generated_markdown_gives_the_same_table(
    compiled: ModuleType, front: str, body: str, policy: ChunkPolicy, label: str
) -> None:
    raw = (front + body).encode("utf-8")
    fast, slow = _both(raw, "file:///generated.md", label, policy)
    assert fast.equals(slow), _explain(fast, slow)


#: Headings over half the budget above a text that must be split: Python trims the
#: context its pieces count (and embed), with one warning per split element.
TRIMMED = (
    "# " + "long heading words " * 8 + "\n\n" + "Body text. " * 30 + "\n\n"
    "| "
    + "wide header cell | " * 12
    + "\n|"
    + "---|" * 12
    + "\n"
    + "".join("| " + "v | " * 12 + "\n" for _ in range(30))
)


@pytest.mark.parametrize(
    ("label", "text", "what"),
    [
        ("hybrid-v3", TRIMMED, "keeps only"),
        # a heading line over the bound: hybrid-v4 records it cut, once warned
        ("hybrid-v4", "# " + "long heading words " * 20 + "\n\nBody text.\n", "record only"),
        ("hybrid-v4", TRIMMED, "record only"),
    ],
)
def test_what_python_warns_about_gives_the_same_rows_and_warnings(
    compiled: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    label: str,
    text: str,
    what: str,
) -> None:
    taken = _Taken(compiled, monkeypatch)
    policy = ChunkPolicy(target_tokens=40, overlap_tokens=0)
    with caplog.at_level(logging.WARNING):
        fast = chunk_table(text.encode(), "file:///wide.md", label, policy)
        core_warnings = [r.getMessage() for r in caplog.records]
        caplog.clear()
        with using("python"):
            slow = chunk_table(text.encode(), "file:///wide.md", label, policy)
        python_warnings = [r.getMessage() for r in caplog.records]
    assert taken.rows == [fast.num_rows]  # the core took it
    assert fast.equals(slow), _explain(fast, slow)
    assert core_warnings and what in core_warnings[0]
    assert core_warnings == python_warnings


def test_a_trimmed_context_embeds_the_lines_it_counts(compiled: ModuleType) -> None:
    table = chunk_table(
        TRIMMED.encode(),
        "file:///wide.md",
        "hybrid-v3",
        ChunkPolicy(target_tokens=40, overlap_tokens=0),
    )
    embedded = table.column("embed_text").to_pylist()
    paths = table.column("heading_path").to_pylist()
    assert any(not e.startswith(p[0]) for e, p in zip(embedded, paths, strict=True) if p)


def test_one_character_over_the_budget_is_left_to_python(
    compiled: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A character that alone costs more than the budget is kept with a warning the core
    does not word: the document takes the Python path."""
    taken = _Taken(compiled, monkeypatch)
    policy = ChunkPolicy(target_tokens=1, overlap_tokens=0)
    fast, slow = _both("Ünï 😀😀\n".encode(), "file:///tiny.md", "hybrid-v3", policy)
    assert taken.rows == [-1]
    assert fast.equals(slow)


def _chunked(labels: tuple[str, ...], policy: ChunkPolicy, raw: RawDocument) -> Chunked:
    chunkers = {name: get_chunker(name) for name in labels}
    task = ParseChunkTask(
        ParseTask(None, ParseLimits(max_nesting=4)),
        ChunkTask(labels, policy, chunkers, encode=True),
    )
    result = task.run(raw, lambda stage, note: None)
    assert isinstance(result, Chunked)
    return result


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.one_of(_PART, _HYBRID_PART), min_size=1, max_size=20).map("".join),
    st.sampled_from(POLICIES),
    st.sampled_from([("hybrid-v3", "md-heading-v3"), ("hybrid-v4",)]),
)
def test_the_job_helper_writes_the_same_entries(
    compiled: ModuleType, body: str, policy: ChunkPolicy, labels: tuple[str, ...]
) -> None:
    """A run's helper (spill entries and the document's facts) under hybrid labels, alone
    and with the default label, with the core and without."""
    data = body.encode("utf-8")
    raw = RawDocument("generated/doc.md", None, content_hash(data), data)
    fast = _chunked(labels, policy, raw)
    with using("python"):
        slow = _chunked(labels, policy, raw)
    assert fast.outcome == slow.outcome
    assert fast.encoded == slow.encoded
