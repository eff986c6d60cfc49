"""Hypothesis properties of pdf-page-v1 over random page texts and policies.

Pages mix Latin sentences, blank lines, CJK runs with no punctuation at all, emoji, and
pages of only whitespace, so every branch (single chunk, greedy segments, hard cut,
overlap clamping, dropped whitespace) is exercised.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kebab_chunk.model import Chunk, ChunkPolicy, PageSpan
from kebab_chunk.tokenizers import BYTES_PER_TOKEN
from tests.chunkers.test_pdf_page_v1 import CHUNKER, page_doc

_FRAGMENTS = st.sampled_from(
    [
        "word",
        "Alpha",
        "beta",
        "3.14",
        "Done.",
        "Why?",
        "Yes!",
        "終わり。",
        "é",
        "😀",
        " ",
        " ",
        "\n",
        "\n\n",
        "\t",
        "\u3000",
        ". ",
        "! ",
        "? ",
    ]
)
_CJK_RUN = st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x4FFF), max_size=300)
_WHITESPACE = st.text(alphabet=" \t\n\r\u3000\u00a0", max_size=60)
_MIXED = st.lists(_FRAGMENTS, max_size=150).map("".join)
_GAPPY = st.lists(st.one_of(_FRAGMENTS, _WHITESPACE), max_size=40).map("".join)
PAGE = st.one_of(_MIXED, _CJK_RUN, _WHITESPACE, _GAPPY, st.text(max_size=200))
PAGES = st.lists(PAGE, min_size=1, max_size=6)


@st.composite
def policies(draw: st.DrawFn) -> ChunkPolicy:
    target = draw(st.integers(min_value=1, max_value=80))
    overlap = draw(st.integers(min_value=0, max_value=target - 1))
    return ChunkPolicy(target_tokens=target, overlap_tokens=overlap)


def span_of(chunk: Chunk) -> PageSpan:
    assert len(chunk.source_spans) == 1
    span = chunk.source_spans[0]
    assert isinstance(span, PageSpan)
    return span


@settings(max_examples=max(10, settings().max_examples))
@given(pages=PAGES, policy=policies())
def test_chunks_never_cross_pages(pages: list[str], policy: ChunkPolicy) -> None:
    doc = page_doc(pages)
    for chunk in CHUNKER.chunk(doc, policy):
        span = span_of(chunk)
        page_text = pages[span.page - 1]
        assert 0 <= span.char_start < span.char_end <= len(page_text)
        assert chunk.block_ids == (doc.blocks[span.page - 1].block_id,)


@given(pages=PAGES, policy=policies())
def test_all_invariants(pages: list[str], policy: ChunkPolicy) -> None:
    doc = page_doc(pages)
    budget = policy.target_tokens * BYTES_PER_TOKEN
    overlap = policy.overlap_tokens * BYTES_PER_TOKEN
    chunks = CHUNKER.chunk(doc, policy)

    # Records: positions, ids, labels, plain policy hash, no heading path.
    assert [c.position for c in chunks] == list(range(len(chunks)))
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    assert all(c.chunker_version == "pdf-page-v1" for c in chunks)
    assert all(c.policy_hash == policy.policy_hash for c in chunks)
    assert all(c.heading_path == () for c in chunks)
    assert chunks == CHUNKER.chunk(doc, policy)

    # Exact slices, in page order.
    keys = [(span_of(c).page, span_of(c).char_start) for c in chunks]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    for chunk in chunks:
        span = span_of(chunk)
        assert pages[span.page - 1][span.char_start : span.char_end] == chunk.text
        assert chunk.text.strip()

    for number, text in enumerate(pages, start=1):
        spans = [span_of(c) for c in chunks if span_of(c).page == number]
        if not text.strip():
            assert spans == []  # empty and whitespace-only pages give no chunk
            continue
        if len(text.encode()) <= budget:
            assert [(s.char_start, s.char_end) for s in spans] == [(0, len(text))]
            continue
        # Every non-whitespace character is in some chunk.
        covered = [False] * len(text)
        for s in spans:
            covered[s.char_start : s.char_end] = [True] * (s.char_end - s.char_start)
        assert all(covered[i] or ch.isspace() for i, ch in enumerate(text))
        previous: PageSpan | None = None
        for s in spans:
            own_from = s.char_start if previous is None else max(s.char_start, previous.char_end)
            own = text[own_from : s.char_end].lstrip()
            # Outside the overlap a chunk fits the budget, or is one code point (hard cut).
            assert len(own.encode()) <= max(budget, 4)
            if previous is not None:
                assert s.char_start > previous.char_start  # never at or before its start
                assert s.char_end > previous.char_end
                assert s.char_start >= previous.char_end - overlap  # overlap is bounded
                assert not text[previous.char_end : s.char_start].strip()  # gaps: whitespace
            previous = s


@given(
    run=st.text(
        alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),
        min_size=50,
        max_size=500,
    ),
    policy=policies(),
)
def test_cjk_without_punctuation_splits_within_budget(run: str, policy: ChunkPolicy) -> None:
    budget = policy.target_tokens * BYTES_PER_TOKEN
    chunks = CHUNKER.chunk(page_doc([run]), policy)
    if len(run.encode()) <= budget:
        assert len(chunks) == 1
        return
    assert len(chunks) >= -(-len(run.encode()) // budget)
    previous_end = 0
    for chunk in chunks:
        span = span_of(chunk)
        # Each chunk's new text is as many whole characters as fit the budget.
        own = run[max(span.char_start, previous_end) : span.char_end]
        assert len(own.encode()) <= budget
        if span.char_end < len(run):
            assert len(own.encode()) + 3 > budget
        previous_end = span.char_end
    assert previous_end == len(run)
