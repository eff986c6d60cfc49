"""hybrid-v3: hybrid-v2 with a plain-text block merged with the rendered table or list
beside it, and goldens.

The defect (shown on v2, gone in v3): in HTML, a block whose text is exact source text
(``<summary>History</summary>`` above a change table in API references) never merged with a
rendered element, so it became a chunk of one word. Everything else is v2's: two source
slices merge only over a gap the spans pin down (Markdown chunks stay exact slices), and a
document without mixed kinds gets v2's chunks. The goldens (``tests/goldens/hybrid-v3/``,
rewritten only with ``KEBAB_UPDATE_GOLDENS=1``) pin v3's chunks and texts to embed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kebab_chunk.chunkers._hybrid import HybridChunker
from kebab_chunk.chunkers.registry import get_chunker, label, registered_labels
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy, LineSpan, make_policy
from kebab_chunk.parsers.registry import parse_document
from tests.chunkers.test_hybrid_v2 import (
    GOLDEN_FIXTURES,
    GOLDEN_POLICIES,
    SMALL,
    check,
)
from tests.golden import assert_golden, parse_for_golden

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
V2, V3 = "hybrid-v2", "hybrid-v3"
#: An API reference page: "History" summaries above change tables, "Added in" lines.
CHANGELOG = "html/changelog/api-reference.html"


def _doc(uri: str, parser_version: str | None = None) -> CanonicalDocument:
    return parse_document((FIXTURES / uri).read_bytes(), uri, parser_version=parser_version)


def _chunks(label: str, doc: CanonicalDocument, policy: ChunkPolicy) -> list[Chunk]:
    return get_chunker(label).chunk(doc, policy)


def _shape(chunks: list[Chunk]) -> list[tuple[object, ...]]:
    """What a chunk is apart from its label (and so its id): text, citations, context."""
    return [(c.text, tuple(c.source_spans), c.heading_path, c.captions) for c in chunks]


def test_both_labels_stay_registered() -> None:
    assert {V2, V3} <= set(registered_labels())


@pytest.mark.parametrize("parser", ["html-v1", "html-v2"])
def test_a_history_summary_joins_its_change_table(parser: str) -> None:
    doc = _doc(CHANGELOG, parser)
    old = _chunks(V2, doc, make_policy())
    new = _chunks(V3, doc, make_policy())
    assert [c.text for c in old].count("History") == 2, "v2 leaves the summary alone"
    assert not any(len(c.text) < 25 for c in new)
    table_chunks = [c for c in new if "Version | Changes" in c.text]
    assert len(table_chunks) == 2
    raw = (FIXTURES / CHANGELOG).read_text(encoding="utf-8")
    for chunk in table_chunks:
        assert chunk.text.startswith("History\nVersion | Changes\n")
        # The summary is cited by its own span, exactly the word it holds.
        first = chunk.source_spans[0]
        assert isinstance(first, LineSpan)
        assert raw[first.char_start : first.char_end] == "History"
    assert len(new) == len(old) - 2


@pytest.mark.parametrize("policy_name", ["default", *SMALL])
def test_v3_keeps_v2_promises_on_the_changelog(policy_name: str) -> None:
    policy = make_policy() if policy_name == "default" else SMALL[policy_name]
    doc = _doc(CHANGELOG)
    check(doc, _chunks(V3, doc, policy), policy)


@pytest.mark.parametrize(
    "uri", [u for u in GOLDEN_FIXTURES if u.startswith(("markdown/", "pdf/", "csv/"))]
)
def test_documents_of_source_slices_get_v2_chunks(uri: str) -> None:
    """Slices merge only with slices over pinned gaps, as in v2: same texts and spans."""
    doc = parse_for_golden((FIXTURES / uri).read_bytes(), uri)
    for policy in (make_policy(), *SMALL.values()):
        assert _shape(_chunks(V3, doc, policy)) == _shape(_chunks(V2, doc, policy))


def test_merged_mixed_chunk_is_rendered_and_not_claimed_exact() -> None:
    """A merged chunk of a slice and a rendered element cites one span per element, so
    hybrid's exact-slice promise (a chunk with one line span) does not apply to it."""
    doc = _doc(CHANGELOG)
    raw = (FIXTURES / CHANGELOG).read_text(encoding="utf-8")
    for chunk in _chunks(V3, doc, make_policy()):
        if chunk.text.startswith("History"):
            assert len(chunk.source_spans) > 1
            lo, hi = chunk.source_spans[0].char_start, chunk.source_spans[-1].char_end
            assert raw[lo:hi] != chunk.text


# Same output under any hash seed: tests/chunkers/test_hybrid_v2.py runs that test for v3 too.


# ----------------------------------------------------------------------------- goldens


@pytest.mark.parametrize("uri", [*GOLDEN_FIXTURES, CHANGELOG])
def test_golden(uri: str) -> None:
    """Each record plus its text to embed, under four policies (one file per fixture)."""
    doc = parse_for_golden((FIXTURES / uri).read_bytes(), uri)
    chunker = HybridChunker(label("hybrid-v3"))
    data = {}
    for name, policy in GOLDEN_POLICIES.items():
        chunks = chunker.chunk(doc, policy)
        check(doc, chunks, policy)
        assert all(c.chunker_version == V3 for c in chunks)
        data[name] = [
            {**c.model_dump(mode="json"), "embed_text": chunker.embed_text(c)} for c in chunks
        ]
    assert_golden(V3, uri.replace("/", "__"), data)
