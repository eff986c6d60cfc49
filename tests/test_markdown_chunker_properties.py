"""Hypothesis properties of MarkdownChunker / md-header-chars-v1 over generated Markdown.

Invariants first (as text-splitter's tests do): every chunk fits the budget, positions are
0..n-1, output is deterministic, offsets slice back to the text, nothing non-blank is lost.
"""

from __future__ import annotations

import itertools
import re

from hypothesis import assume, given
from hypothesis import strategies as st

from kebab_chunk.chunkers import get_chunker
from kebab_chunk.integrations.markdown_chunker import MarkdownChunker, TextChunk
from kebab_chunk.model import LineSpan, make_policy
from kebab_chunk.parsers import parse_document

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzéß漢字0123456789", min_size=1, max_size=12)
_LINE = st.lists(_WORD, min_size=1, max_size=12).map(" ".join)


@st.composite
def _block(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["heading", "para", "code", "table", "list", "quote"]))
    if kind == "heading":
        return "#" * draw(st.integers(1, 6)) + " " + draw(_LINE)
    if kind == "para":
        return "\n".join(draw(st.lists(_LINE, min_size=1, max_size=6)))
    if kind == "code":
        body = draw(st.lists(st.one_of(_LINE, st.just("")), min_size=1, max_size=15))
        return "```\n" + "\n".join("    " + line if line else line for line in body) + "\n```"
    if kind == "table":
        rows = draw(st.lists(st.tuples(_WORD, _WORD), min_size=1, max_size=10))
        return "| a | b |\n|---|---|\n" + "\n".join(f"| {x} | {y} |" for x, y in rows)
    if kind == "list":
        return "\n".join("- " + item for item in draw(st.lists(_LINE, min_size=1, max_size=6)))
    return "\n".join("> " + line for line in draw(st.lists(_LINE, min_size=1, max_size=4)))


#: Markdown whose blocks are separated by blank lines with nothing else in between.
MARKDOWN = st.lists(_block(), min_size=0, max_size=14).map("\n\n".join)

#: Arbitrary text (CR, CRLF, tabs, control and non-BMP characters, stray Markdown marks).
ANY_TEXT = st.lists(
    st.one_of(
        st.sampled_from(["\n", "\r\n", "\r", "\t", " ", "#", "# ", "```", "|", "-", "*", ">"]),
        st.characters(exclude_categories=("Cs",)),
        _WORD,
    ),
    max_size=120,
).map("".join)


@st.composite
def _budget(draw: st.DrawFn) -> tuple[int, int]:
    size = draw(st.integers(min_value=1, max_value=300))
    overlap = draw(st.integers(min_value=0, max_value=size - 1))
    return size, overlap


def _rebuilt(text: str, spans: list[dict[str, int]]) -> str:
    """The chunk text from its spans: pieces joined by one LF per source line break."""
    out = text[spans[0]["char_start"] : spans[0]["char_end"]]
    for before, after in itertools.pairwise(spans):
        out += "\n" * (after["line_start"] - before["line_end"])
        out += text[after["char_start"] : after["char_end"]]
    return out


def _check_invariants(text: str, chunks: list[TextChunk], size: int) -> None:
    assert all(len(c.text) <= size for c in chunks)
    assert [c.metadata["position"] for c in chunks] == list(range(len(chunks)))
    starts = [c.metadata["char_start"] for c in chunks]
    assert starts == sorted(set(starts))
    for chunk in chunks:
        meta = chunk.metadata
        assert chunk.text  # never empty
        assert _rebuilt(text, meta["spans"]) == chunk.text
        assert meta["char_start"] == meta["spans"][0]["char_start"]
        assert meta["char_end"] == meta["spans"][-1]["char_end"]
        levels = [h["level"] for h in meta["headers"]]
        assert levels == sorted(set(levels)) and all(1 <= lv <= 6 for lv in levels)


@given(MARKDOWN, _budget())
def test_invariants_on_generated_markdown(md: str, budget: tuple[int, int]) -> None:
    size, overlap = budget
    chunks = MarkdownChunker(max_chunk_size=size, overlap=overlap).chunk_document(md, "g.md")
    _check_invariants(md, chunks, size)
    # Blocks separated by plain blank lines: every chunk is exactly a slice of the source.
    for chunk in chunks:
        assert md[chunk.metadata["char_start"] : chunk.metadata["char_end"]] == chunk.text
    if md.strip() and len(md.strip()) <= size and "#" not in md:
        assert len(chunks) == 1


@given(ANY_TEXT, _budget())
def test_invariants_on_arbitrary_text(text: str, budget: tuple[int, int]) -> None:
    size, overlap = budget
    chunks = MarkdownChunker(max_chunk_size=size, overlap=overlap).chunk_document(text, "t.md")
    _check_invariants(text, chunks, size)
    if not text.strip(" \t\r\n\f\v"):  # blank by the Markdown grammar
        assert chunks == []


@given(MARKDOWN, _budget())
def test_crlf_files_keep_exact_pieces(md: str, budget: tuple[int, int]) -> None:
    size, overlap = budget
    crlf = md.replace("\n", "\r\n")
    chunks = MarkdownChunker(max_chunk_size=size, overlap=overlap).chunk_document(crlf, "c.md")
    _check_invariants(crlf, chunks, size)
    lf = MarkdownChunker(max_chunk_size=size, overlap=overlap).chunk_document(md, "c.md")
    # Same structure: the same sections in the same order.
    assert {tuple(map(str, c.metadata["headers"])) for c in chunks} == {
        tuple(map(str, c.metadata["headers"])) for c in lf
    }


@given(st.one_of(MARKDOWN, ANY_TEXT), _budget())
def test_deterministic(text: str, budget: tuple[int, int]) -> None:
    size, overlap = budget
    first = MarkdownChunker(max_chunk_size=size, overlap=overlap).chunk_document(text, "d.md")
    second = MarkdownChunker(max_chunk_size=size, overlap=overlap).chunk_document(text, "d.md")
    assert first == second
    ids = [c.metadata["chunk_id"] for c in first]
    assert len(set(ids)) == len(ids)


@given(MARKDOWN, _budget())
def test_no_overlap_means_disjoint_ranges(md: str, budget: tuple[int, int]) -> None:
    size, _ = budget
    chunks = MarkdownChunker(max_chunk_size=size, overlap=0).chunk_document(md, "o.md")
    for before, after in itertools.pairwise(chunks):
        assert before.metadata["char_end"] <= after.metadata["char_start"]


@given(MARKDOWN, _budget())
def test_records_cover_every_non_blank_character_of_every_block(
    md: str, budget: tuple[int, int]
) -> None:
    size, overlap = budget
    doc = parse_document(md.encode("utf-8"), "cover.md")
    assume(doc.blocks)
    policy = make_policy(target_tokens=size, overlap_tokens=overlap, tokenizer="chars")
    records = get_chunker("md-header-chars-v1").chunk(doc, policy)
    covered = bytearray(len(md))
    for record in records:
        assert len(record.text) <= size
        for span in record.source_spans:
            assert isinstance(span, LineSpan)
            covered[span.char_start : span.char_end] = b"\x01" * (span.char_end - span.char_start)
    for block in doc.blocks:
        span = block.spans[0]
        for offset in range(span.char_start, span.char_end):
            assert covered[offset] or md[offset].isspace(), (block.kind, offset)
    block_order = {b.block_id: i for i, b in enumerate(doc.blocks)}
    for record in records:
        order = [block_order[b] for b in record.block_ids]
        assert order == sorted(order)


_HEADER_LINE = re.compile(r"^#{1,6} ", re.MULTILINE)


@given(MARKDOWN, _budget())
def test_a_chunk_never_spans_two_sections(md: str, budget: tuple[int, int]) -> None:
    size, overlap = budget
    chunks = MarkdownChunker(max_chunk_size=size, overlap=overlap).chunk_document(md, "s.md")
    for chunk in chunks:
        # A heading line may only open a chunk (a code or quote line never starts with "#").
        assert all(m.start() == 0 for m in _HEADER_LINE.finditer(chunk.text))
