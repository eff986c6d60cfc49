"""The compiled core's cut search gives exactly the Python reference's pieces.

The core replaces ``_md_heading.split_run`` (the md-heading engine's cut search, about half
of parse + chunk time in Python) and reads separators and whitespace itself, so each of
those is compared with the Python code on generated text full of the characters where the
two could part: CR/LF mixes, blanks around line breaks, sentence stops with closing quotes,
CJK stops, non-ASCII letters and spaces, Python-only whitespace (U+001C..U+001F), combining
marks and lone surrogates. Then whole documents (fixtures, the installed distributions'
READMEs, generated Markdown) are chunked both ways under every md-heading label of the
engine and compared record for record.
"""

from __future__ import annotations

import logging
import sys
import types
from collections.abc import Callable
from functools import cache
from types import ModuleType
from typing import TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.corpora import distribution_readmes, fixture_markdown
from kebab_chunk import _core
from kebab_chunk._core import using
from kebab_chunk.chunkers import _separators
from kebab_chunk.chunkers._md_heading import split_run
from kebab_chunk.chunkers.embedding import HeadingRule
from kebab_chunk.chunkers.registry import LABELS, get_chunker
from kebab_chunk.errors import ConfigurationError, MissingDependencyError
from kebab_chunk.model import CanonicalDocument, ChunkPolicy
from kebab_chunk.parsers.registry import get_parser
from kebab_chunk.tokenizers import get_tokenizer

T = TypeVar("T")

#: Characters where the core and Python could read text differently.
_ALPHABET = [
    *"ab Z9 .!?\n\n\r\t",
    "\r\n",
    "…",
    "。",
    "！",
    "？",
    '"',
    "'",
    "”",
    "’",
    "»",
    ")",
    "]",
    "é",
    "中",
    "\u0301",
    "\xa0",
    "\u2028",
    "\u3000",
    "\x1c",
    "\x1f",
    "\x0b",
    "\x0c",
    "\x85",
    "😀",
]
_TEXT = st.lists(st.sampled_from(_ALPHABET), max_size=160).map("".join)

#: The engine's labels (every md-heading label but v1, which has its own code).
ENGINE_LABELS = tuple(
    row.name for row in LABELS if row.engine.endswith("_md_heading:MdHeadingChunker")
)


def _reference(make: Callable[[], T]) -> T:
    with using("python"):
        return make()


def test_the_engine_has_labels() -> None:
    assert {"md-heading-v2", "md-heading-v3"} <= set(ENGINE_LABELS)


def test_the_core_reads_whitespace_as_python_does(compiled: ModuleType) -> None:
    python = [c for c in range(0x110000) if chr(c).isspace()]
    assert compiled.whitespace() == python


@settings(max_examples=400)
@given(_TEXT)
def test_separator_starts_are_pythons(compiled: ModuleType, text: str) -> None:
    for name in ("PARAGRAPH_BREAK", "SENTENCE_STOP", "LINE_END", "WHITESPACE"):
        sep = getattr(_separators, name)
        assert compiled.separator_starts(text, name) == _separators.separator_starts(sep, text), (
            name
        )


def _word_counter(text: str) -> int:
    """A counter that is neither monotone in size nor additive: words, plus one per stop."""
    return len(text.split()) + sum(text.count(c) for c in ".!?。") + (1 if text else 0)


_COUNTERS: dict[str, Callable[[str], int]] = {
    "bytes-3": get_tokenizer("bytes-3").count_tokens,
    "chars": get_tokenizer("chars").count_tokens,
    "words": _word_counter,
}


@settings(max_examples=400)
@given(
    text=_TEXT,
    cuts=st.lists(st.integers(0, 160), max_size=4),
    glue=st.none() | st.integers(0, 160),
    budget=st.integers(1, 40),
    overlap=st.integers(0, 39),
    counter=st.sampled_from(sorted(_COUNTERS)),
)
def test_split_run_gives_the_python_pieces(
    compiled: ModuleType,
    text: str,
    cuts: list[int],
    glue: int | None,
    budget: int,
    overlap: int,
    counter: str,
) -> None:
    structural = sorted({min(c, len(text)) for c in cuts})
    overlap = min(overlap, budget - 1)
    count = _COUNTERS[counter]
    native = counter if counter in ("bytes-3", "chars") else None
    expected = _reference(lambda: split_run(text, structural, glue, count, budget, overlap, native))
    assert compiled.split_run(text, structural, glue, budget, overlap, native or count) == expected
    # the callable route gives the same pieces as the native count it mirrors
    assert compiled.split_run(text, structural, glue, budget, overlap, count) == expected


def test_text_with_a_lone_surrogate_takes_the_python_path(compiled: ModuleType) -> None:
    """Parsed text never holds one (it is decoded from bytes), but a caller's may: the core
    declines it and the Python path answers (with ``chars``; UTF-8 counts cannot)."""
    text = "a. b\ud800 c. " * 20
    assert compiled.split_run(text, [], None, 5, 1, "chars") is None
    count = _COUNTERS["chars"]
    pieces = split_run(text, [], None, count, 5, 1, "chars")
    assert pieces == _reference(lambda: split_run(text, [], None, count, 5, 1, "chars"))
    assert len(pieces) > 20


def test_a_wrong_counter_or_cut_is_refused_in_one_sentence(compiled: ModuleType) -> None:
    with pytest.raises(ValueError, match="natively"):
        compiled.split_run("a b", [], None, 5, 0, "cl100k")
    with pytest.raises(ValueError, match="past the end"):
        compiled.split_run("a b", [9], None, 5, 0, "bytes-3")


def test_an_error_of_a_python_counter_reaches_the_caller(compiled: ModuleType) -> None:
    def broken(text: str) -> int:
        raise RuntimeError("tokenizer crashed")

    with pytest.raises(RuntimeError, match="tokenizer crashed"):
        compiled.split_run("a b c " * 50, [], None, 5, 0, broken)


# -- whole documents ----------------------------------------------------------------------

_POLICIES = (
    ChunkPolicy(target_tokens=256, overlap_tokens=64),
    ChunkPolicy(target_tokens=40, overlap_tokens=10),
    ChunkPolicy(target_tokens=300, overlap_tokens=30, tokenizer="chars"),
    ChunkPolicy(target_tokens=64, overlap_tokens=8, merge_peers=False),
    ChunkPolicy(target_tokens=48, overlap_tokens=12, tokenizer="hf:all-MiniLM-L6-v2"),
)


@cache
def _documents() -> tuple[CanonicalDocument, ...]:
    parser = get_parser("text/markdown")
    docs = list(fixture_markdown().documents) + list(distribution_readmes().documents)[:60]
    return tuple(parser.parse(d.raw, d.name) for d in docs)


def _dumps(label: str, docs: tuple[CanonicalDocument, ...], policy: ChunkPolicy) -> list[str]:
    chunker = get_chunker(label)
    return [c.model_dump_json() for doc in docs for c in chunker.chunk(doc, policy)]


@pytest.mark.parametrize("policy", _POLICIES, ids=lambda p: f"{p.tokenizer}-{p.target_tokens}")
@pytest.mark.parametrize("label", ENGINE_LABELS)
def test_real_documents_give_the_same_records(
    compiled: ModuleType, label: str, policy: ChunkPolicy
) -> None:
    docs = _documents()
    if policy.tokenizer.startswith("hf:"):
        docs = docs[:25]  # a real tokenizer counts slowly in Python either way
    fast = _dumps(label, docs, policy)
    assert len(fast) > 100  # the documents really were chunked
    assert fast == _reference(lambda: _dumps(label, docs, policy))


_MARKDOWN_PART = st.sampled_from(
    [
        "# Title\n\n",
        "## Sub\n",
        "Plain words here and there. ",
        "A sentence ends.” Next one!\n",
        "- item one\n- item two\n",
        "\n\n",
        "\r\n",
        "| a | b |\n|---|---|\n| 1 | 2 |\n",
        "```\ncode line\n```\n",
        "中文句子。下一句！",
        "word\u2028word ",
        "trailing  \n",
        "---\n",
    ]
)


@settings(max_examples=150)
@given(
    st.lists(_MARKDOWN_PART, min_size=1, max_size=40).map("".join),
    st.sampled_from(_POLICIES[:4]),
)
def test_generated_markdown_gives_the_same_records(
    compiled: ModuleType, source: str, policy: ChunkPolicy
) -> None:
    doc = get_parser("text/markdown").parse(source.encode("utf-8"), "generated.md")
    for label in ENGINE_LABELS:
        fast = _dumps(label, (doc,), policy)
        assert fast == _reference(lambda: _dumps(label, (doc,), policy)), label  # noqa: B023


# -- choosing the core ----------------------------------------------------------------------


def test_kebab_core_python_turns_the_core_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEBAB_CORE", "python")
    assert _core.core() is None


def test_a_wrong_kebab_core_value_is_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEBAB_CORE", "fast")
    with pytest.raises(ConfigurationError, match=r"^KEBAB_CORE='fast' is not a core mode"):
        _core.core()


def test_native_without_the_core_names_how_to_build_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_core, "_tried", True)
    monkeypatch.setattr(_core, "_loaded", None)
    monkeypatch.setenv("KEBAB_CORE", "native")
    with pytest.raises(MissingDependencyError, match=r"pip install \./native"):
        _core.core()
    monkeypatch.setenv("KEBAB_CORE", "auto")
    assert _core.core() is None  # auto: the Python path, silently


def test_a_core_of_another_api_is_left_unused_with_one_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A stale wheel (a worker image built from older sources) must not be called with
    arguments it does not take: the Python path answers, and ``native`` says to rebuild."""
    stale = types.ModuleType("kebab_chunk_core")
    stale.API = _core.API - 1  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "kebab_chunk_core", stale)
    monkeypatch.setattr(_core, "_tried", False)
    monkeypatch.setattr(_core, "_loaded", None)
    monkeypatch.setattr(_core, "_mismatch", None)
    monkeypatch.setenv("KEBAB_CORE", "auto")
    with caplog.at_level(logging.WARNING, logger="kebab_chunk._core"):
        assert _core.core() is None
        assert _core.core() is None
    assert [
        r.getMessage().count("rebuild it with `pip install ./native`") for r in caplog.records
    ] == [1]
    monkeypatch.setenv("KEBAB_CORE", "native")
    with pytest.raises(MissingDependencyError, match=rf"has API {_core.API - 1}, but"):
        _core.core()


def test_the_built_core_has_the_api_this_package_calls(compiled: ModuleType) -> None:
    assert compiled.API == _core.API


# -- embed_text ------------------------------------------------------------------------------

_LINE_PARTS = st.sampled_from(
    [
        "#",
        "##",
        "####### ",
        " ",
        "   ",
        "    ",
        "\t",
        "=",
        "===",
        "-",
        "--",
        "Title",
        "x y",
        "\r",
        "\n",
        "\r\n",
        "\u2028",
        "\x0b",
        "\x85",
        "\ufeff",
        "é",
        "#x",
        " ## ",
        "\\#",
    ]
)
_EMBED_TEXT = st.lists(_LINE_PARTS, max_size=30).map("".join)


@settings(max_examples=500)
@given(
    st.lists(st.sampled_from(["Title", "x y", "", " A  b ", "#", "Tit"]), max_size=3),
    st.lists(st.sampled_from(["cap", ""]), max_size=2),
    _EMBED_TEXT,
    st.booleans(),
)
def test_embed_text_is_pythons(
    compiled: ModuleType, headings: list[str], captions: list[str], text: str, leading: bool
) -> None:
    from kebab_chunk.chunkers.contextualize import contextualize_parts
    from kebab_chunk.chunkers.embedding import _unrepeated

    # embedding.embed_text(chunk, rule), on the chunk's parts
    rule: HeadingRule = "leading" if leading else "first-line"
    expected = contextualize_parts(_unrepeated(headings, text, rule), captions, text)
    assert compiled.embed_text(headings, captions, text, leading) == expected
