"""Unit tests of md-heading-v1: every row of its test plan plus the issue's decisions.

Documents are built here from Markdown source written block by block (``build``), so each
test knows the exact source text and can check the exact-slice rule against it. The same
builder and invariant checker serve the property tests.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from kebab_chunk.chunkers import get_chunker
from kebab_chunk.chunkers.md_heading_v1 import MdHeadingV1Chunker
from kebab_chunk.chunkers.registry import label
from kebab_chunk.errors import UnsupportedDocumentError
from kebab_chunk.model import (
    BLOCK_ADAPTER,
    Block,
    CanonicalDocument,
    Chunk,
    ChunkPolicy,
    LineSpan,
    PageSpan,
    ParagraphBlock,
)
from kebab_chunk.model.ids import block_id, chunk_id, content_hash, doc_id
from tests.chunkers.helpers import outputs_under_hash_seeds

CHUNKER = MdHeadingV1Chunker(label("md-heading-v1"))
_BREAK = re.compile(r"\r\n|\r|\n")
MEDIA_KINDS = ("image_ref", "audio_ref")

# --------------------------------------------------------------------------------------
# Building documents from Markdown written block by block
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One block as written in the source, plus the source text before it."""

    kind: str
    text: str
    sep: str | None = None  # text before the block; None: a blank line ("" for the first)
    level: int = 0
    title: str = ""
    alt: str = ""
    src: str = ""
    caption: str | None = None
    language: str | None = None


def heading(level: int, title: str, sep: str | None = None) -> Part:
    return Part("heading", "#" * level + " " + title, sep, level=level, title=title)


def para(text: str, sep: str | None = None) -> Part:
    return Part("paragraph", text, sep)


def bullets(items: Sequence[str], sep: str | None = None) -> Part:
    return Part("list", "\n".join(f"- {item}" for item in items), sep)


def code(body: str, language: str = "python", sep: str | None = None) -> Part:
    return Part("code", f"```{language}\n{body}\n```", sep, language=language)


def table(header: Sequence[str], rows: Sequence[Sequence[str]], sep: str | None = None) -> Part:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return Part("table", "\n".join(lines), sep)


def image(alt: str, src: str, caption: str | None = None, sep: str | None = None) -> Part:
    return Part("image_ref", f"![{alt}]({src})", sep, alt=alt, src=src, caption=caption)


def audio(src: str, caption: str | None = None, sep: str | None = None) -> Part:
    return Part("audio_ref", f"[audio]({src})", sep, src=src, caption=caption)


def build(
    parts: Sequence[Part], *, newline: str = "\n", source_uri: str = "mem/doc.md"
) -> tuple[str, CanonicalDocument]:
    """The Markdown source of ``parts`` and its CanonicalDocument with exact line spans."""
    did = doc_id(source_uri)
    source = ""
    line = 1
    stack: list[tuple[int, str]] = []
    seen: dict[tuple[str, str], int] = {}
    blocks: list[Block] = []
    for index, part in enumerate(parts):
        sep = part.sep if part.sep is not None else ("" if index == 0 else "\n\n")
        sep = sep.replace("\n", newline)
        text = part.text.replace("\n", newline)
        source += sep
        line += len(_BREAK.findall(sep))
        start = len(source)
        source += text
        span = LineSpan(
            line_start=line,
            line_end=line + len(_BREAK.findall(text)),
            char_start=start,
            char_end=len(source),
        )
        line = span.line_end
        if part.kind == "heading":
            while stack and stack[-1][0] >= part.level:
                stack.pop()
            stack.append((part.level, part.title))
        occurrence = seen.get((part.kind, text), 0)
        seen[(part.kind, text)] = occurrence + 1
        common = {
            "block_id": block_id(did, part.kind, text, occurrence),
            "text": text,
            "heading_path": tuple(title for _, title in stack),
            "spans": (span,),
        }
        blocks.append(_make_block(part, common))
    doc = CanonicalDocument(
        doc_id=did,
        source_uri=source_uri,
        media_type="text/markdown",
        content_hash=content_hash(source.encode("utf-8")),
        parser_version="test-builder",
        blocks=tuple(blocks),
    )
    return source, doc


def _make_block(part: Part, common: dict[str, object]) -> Block:
    extra: dict[str, object] = {
        "heading": {"level": part.level, "title": part.title},
        "code": {"language": part.language},
        "image_ref": {"alt": part.alt, "src": part.src, "caption": part.caption},
        "audio_ref": {"src": part.src, "caption": part.caption},
    }.get(part.kind, {})
    return BLOCK_ADAPTER.validate_python({"kind": part.kind, **common, **extra})


def sentences(count: int, start: int = 0) -> str:
    """Distinct prose sentences (about 60 bytes each)."""
    return " ".join(
        f"Sentence {i} explains how chunk boundaries follow the structure."
        for i in range(start, start + count)
    )


# --------------------------------------------------------------------------------------
# Invariants every output must satisfy (also used by the property tests)
# --------------------------------------------------------------------------------------


def start_of(chunk: Chunk) -> int:
    return chunk.source_spans[0].char_start


def end_of(chunk: Chunk) -> int:
    return chunk.source_spans[-1].char_end


def line_of(source: str, pos: int) -> int:
    return (
        1
        + len(_BREAK.findall(source, 0, pos))
        - (1 if pos > 0 and source[pos - 1] == "\r" and source[pos : pos + 1] == "\n" else 0)
    )


def check_invariants(
    source: str, doc: CanonicalDocument, chunks: Sequence[Chunk], policy: ChunkPolicy
) -> None:
    """Assert the contract of md-heading-v1 on one output, against the real source text."""
    blocks = {block.block_id: block for block in doc.blocks}
    order = {block.block_id: n for n, block in enumerate(doc.blocks)}
    assert [c.position for c in chunks] == list(range(len(chunks)))
    assert len({c.chunk_id for c in chunks}) == len(chunks), "chunk ids must be unique"
    for chunk in chunks:
        assert chunk.chunker_version == "md-heading-v1"
        assert chunk.policy_hash == policy.policy_hash
        assert chunk.doc_id == doc.doc_id and chunk.content_hash == doc.content_hash
        assert len(chunk.block_ids) == len(chunk.source_spans) >= 1
        indices = [order[b] for b in chunk.block_ids]
        assert indices == sorted(indices) and len(set(indices)) == len(indices)
        kinds = [blocks[b].kind for b in chunk.block_ids]
        assert "heading" not in kinds[1:], "a heading may only open a chunk"
        first = blocks[chunk.block_ids[0]]
        assert chunk.heading_path == first.heading_path
        if kinds[0] in MEDIA_KINDS:
            assert len(kinds) == 1
            continue
        assert not set(kinds) & set(MEDIA_KINDS)
        # the exact-slice rule, against the real source
        assert source[start_of(chunk) : end_of(chunk)] == chunk.text
        assert chunk.token_estimate == math.ceil(len(chunk.text.encode("utf-8")) / 3)
        for block_ref, span in zip(chunk.block_ids, chunk.source_spans, strict=True):
            block_span = blocks[block_ref].spans[0]
            assert isinstance(span, LineSpan)
            assert block_span.char_start <= span.char_start <= span.char_end <= block_span.char_end
            assert span.line_start == line_of(source, span.char_start)
            assert span.line_end == line_of(source, max(span.char_start, span.char_end - 1))
        if chunk.token_estimate > policy.target_tokens:
            assert kinds in (["code"], ["table"]), f"over budget: {kinds}"
    _check_no_loss_and_code_intact(source, doc, chunks)
    _check_overlap(doc, chunks, policy)


def _check_no_loss_and_code_intact(
    source: str, doc: CanonicalDocument, chunks: Sequence[Chunk]
) -> None:
    covered: dict[str, list[tuple[int, int]]] = {}
    whole_in: dict[str, int] = {}
    for chunk in chunks:
        for block_ref, span in zip(chunk.block_ids, chunk.source_spans, strict=True):
            covered.setdefault(block_ref, []).append((span.char_start, span.char_end))
    for block in doc.blocks:
        span = block.spans[0]
        ranges = covered.get(block.block_id, [])
        assert ranges, f"block {block.kind} {block.text[:30]!r} is in no chunk"
        if block.kind in MEDIA_KINDS:
            continue
        mask = bytearray(span.char_end - span.char_start)
        for lo, hi in ranges:
            mask[lo - span.char_start : hi - span.char_start] = b"\1" * (hi - lo)
        lost = "".join(block.text[i] for i, seen in enumerate(mask) if not seen)
        assert lost.strip() == "", f"text lost from {block.kind}: {lost[:40]!r}"
        if block.kind == "code":
            whole_in[block.block_id] = 0
            for chunk in chunks:
                if block.block_id in chunk.block_ids:
                    assert block.text in chunk.text, "a code block was split"
                    whole_in[block.block_id] += 1
            assert whole_in[block.block_id] == 1, "a code block must be in exactly one chunk"


def _check_overlap(doc: CanonicalDocument, chunks: Sequence[Chunk], policy: ChunkPolicy) -> None:
    blocks = {block.block_id: block for block in doc.blocks}
    text_chunks = [c for c in chunks if blocks[c.block_ids[0]].kind not in MEDIA_KINDS]
    for prev, nxt in itertools.pairwise(text_chunks):
        assert start_of(nxt) > start_of(prev), "chunks must move forward"
        if start_of(nxt) >= end_of(prev):
            continue
        shared = prev.text[start_of(nxt) - start_of(prev) :]
        assert nxt.text.startswith(shared)
        assert len(shared.encode("utf-8")) <= policy.overlap_tokens * 3
        assert blocks[nxt.block_ids[0]].kind in ("paragraph", "list")
        assert prev.heading_path == nxt.heading_path
        assert all(blocks[b].kind != "heading" for b in nxt.block_ids)
        for block_ref, span in zip(nxt.block_ids, nxt.source_spans, strict=True):
            if span.char_start < end_of(prev):
                assert blocks[block_ref].kind in ("paragraph", "list"), "only prose overlaps"


def run(parts: Sequence[Part], policy: ChunkPolicy, **kwargs: str) -> tuple[str, list[Chunk]]:
    source, doc = build(parts, **kwargs)
    chunks = CHUNKER.chunk(doc, policy)
    check_invariants(source, doc, chunks, policy)
    return source, chunks


def kinds_of(chunk: Chunk, doc: CanonicalDocument) -> list[str]:
    blocks = {block.block_id: block for block in doc.blocks}
    return [blocks[b].kind for b in chunk.block_ids]


# --------------------------------------------------------------------------------------
# The test plan
# --------------------------------------------------------------------------------------


def test_heading_boundary_respected_no_chunk_crosses_h2_to_h2() -> None:
    parts = [
        heading(1, "Guide"),
        para("Intro."),
        heading(2, "Alpha"),
        para("Alpha text."),
        heading(2, "Beta"),
        para("Beta text."),
        heading(3, "Beta detail"),
        para("Detail text."),
    ]
    source, doc = build(parts)
    chunks = CHUNKER.chunk(doc, ChunkPolicy(target_tokens=500, overlap_tokens=50))
    check_invariants(source, doc, chunks, ChunkPolicy(target_tokens=500, overlap_tokens=50))
    # everything would fit one chunk; headings still cut: one chunk per section
    assert [c.text for c in chunks] == [
        "# Guide\n\nIntro.",
        "## Alpha\n\nAlpha text.",
        "## Beta\n\nBeta text.",
        "### Beta detail\n\nDetail text.",
    ]
    assert [c.heading_path for c in chunks] == [
        ("Guide",),
        ("Guide", "Alpha"),
        ("Guide", "Beta"),
        ("Guide", "Beta", "Beta detail"),
    ]
    for chunk in chunks:
        assert kinds_of(chunk, doc)[0] == "heading"


def test_code_block_of_800_tokens_stays_one_chunk_at_target_500() -> None:
    body = "\n".join(f"value_{i:04d} = compute({i}) + offset  # line" for i in range(58))
    block = code(body)
    assert math.ceil(len(block.text.encode()) / 3) >= 800
    policy = ChunkPolicy(target_tokens=500, overlap_tokens=50)
    _, chunks = run([heading(2, "Code"), para("Before."), block, para("After.")], policy)
    holding = [c for c in chunks if block.text in c.text]
    assert len(holding) == 1
    assert holding[0].text == block.text and holding[0].token_estimate >= 800
    assert [c.text for c in chunks] == ["## Code\n\nBefore.", block.text, "After."]


def test_table_below_twice_target_stays_single_chunk() -> None:
    rows = [(f"row {i}", f"value {i * 7}", "some descriptive text") for i in range(15)]
    tbl = table(("name", "value", "note"), rows)
    policy = ChunkPolicy(target_tokens=200, overlap_tokens=20)
    tokens = math.ceil(len(tbl.text) / 3)
    assert policy.target_tokens < tokens < 2 * policy.target_tokens
    _, chunks = run([heading(2, "Data"), tbl, para("After the table.")], policy)
    assert [c.text for c in chunks] == ["## Data", tbl.text, "After the table."]


def test_table_of_twice_target_or_more_splits_only_between_rows() -> None:
    rows = [(f"row {i}", f"value {i * 7}", "some descriptive text") for i in range(40)]
    tbl = table(("name", "value", "note"), rows)
    policy = ChunkPolicy(target_tokens=200, overlap_tokens=60)
    assert math.ceil(len(tbl.text) / 3) >= 2 * policy.target_tokens
    source, doc = build([heading(2, "Data"), tbl])
    chunks = CHUNKER.chunk(doc, policy)
    check_invariants(source, doc, chunks, policy)
    table_chunks = [c for c in chunks if doc.blocks[1].block_id in c.block_ids]
    assert len(table_chunks) >= 2
    lines = tbl.text.split("\n")
    pieces = []
    for chunk in table_chunks:
        piece = chunk.text.removeprefix("## Data\n\n")
        assert piece in tbl.text
        assert all(line in lines for line in piece.split("\n")), "split inside a row"
        pieces.append(piece.split("\n"))
    # rows are never repeated (no overlap into tables) and none is lost
    assert [line for piece in pieces for line in piece] == lines
    assert pieces[0][:2] == lines[:2], "header and delimiter rows stay together"
    assert all(c.chunk_id != table_chunks[0].chunk_id for c in table_chunks[1:])


def test_long_paragraph_split_with_overlap_applied() -> None:
    text = sentences(30)
    policy = ChunkPolicy(target_tokens=60, overlap_tokens=25)
    source, doc = build([heading(2, "Long"), para(text)])
    chunks = CHUNKER.chunk(doc, policy)
    check_invariants(source, doc, chunks, policy)
    assert len(chunks) >= 5
    for prev, nxt in itertools.pairwise(chunks):
        shared = source[start_of(nxt) : end_of(prev)]
        assert shared, "consecutive pieces of one paragraph overlap"
        assert len(shared.encode()) <= policy.overlap_tokens * 3
        assert re.fullmatch(r"Sentence \d+ .*\.", shared), "overlap starts at a sentence"
        assert nxt.block_ids == (doc.blocks[1].block_id,)
    assert all(c.token_estimate <= policy.target_tokens for c in chunks)
    para_span = doc.blocks[1].spans[0]
    assert end_of(chunks[-1]) == para_span.char_end
    # pieces of one block have the slice guard: distinct ids although block_ids are equal
    expected = chunk_id(
        doc.doc_id,
        "md-heading-v1",
        [doc.blocks[1].block_id],
        f"{policy.policy_hash}#c{start_of(chunks[2])}",
    )
    assert chunks[2].chunk_id == expected


def test_long_paragraph_without_overlap_has_disjoint_pieces() -> None:
    policy = ChunkPolicy(target_tokens=60, overlap_tokens=0)
    source, chunks = run([para(sentences(20))], policy)
    assert len(chunks) >= 3
    for prev, nxt in itertools.pairwise(chunks):
        assert start_of(nxt) > end_of(prev)
        assert source[end_of(prev) : start_of(nxt)] == " "
        assert prev.text.endswith("structure.") and nxt.text.startswith("Sentence")


def test_image_ref_produces_a_chunk_with_token_estimate_zero() -> None:
    policy = ChunkPolicy()
    source, doc = build([heading(2, "Pics"), para("Look."), image("", "a.png"), para("Done.")])
    chunks = CHUNKER.chunk(doc, policy)
    check_invariants(source, doc, chunks, policy)
    assert [c.text for c in chunks] == ["## Pics\n\nLook.", "", "Done."]
    img = chunks[1]
    assert img.token_estimate == 0
    assert img.block_ids == (doc.blocks[2].block_id,)
    assert img.source_spans == doc.blocks[2].spans
    assert img.heading_path == ("Pics",)


def test_image_and_audio_text_are_alt_and_caption() -> None:
    policy = ChunkPolicy()
    source, doc = build(
        [
            image("A chart", "c.png", caption="Figure 1: sales"),
            audio("talk.mp3", "Keynote"),
            audio("noise.mp3"),
        ]
    )
    chunks = CHUNKER.chunk(doc, policy)
    check_invariants(source, doc, chunks, policy)
    assert [c.text for c in chunks] == ["A chart\nFigure 1: sales", "Keynote", ""]
    assert [c.captions for c in chunks] == [("Figure 1: sales",), ("Keynote",), ()]
    assert chunks[0].token_estimate == math.ceil(len("A chart\nFigure 1: sales") / 3)
    assert chunks[2].token_estimate == 0


def _determinism_parts() -> list[Part]:
    return [
        heading(1, "Title"),
        para(sentences(12)),
        code("print('x')"),
        heading(2, "Sub"),
        bullets([f"item {i} with détail 🙂" for i in range(30)]),
        table(("a", "b"), [(str(i), str(i * i)) for i in range(10)]),
        image("alt", "x.png"),
        para(sentences(12, 100)),
    ]


def test_determinism_identical_input_gives_identical_chunk_ids() -> None:
    policy = ChunkPolicy(target_tokens=80, overlap_tokens=20)
    _, doc = build(_determinism_parts())
    first = CHUNKER.chunk(doc, policy)
    second = get_chunker("md-heading-v1").chunk(doc, policy)
    assert first == second
    assert [c.chunk_id for c in first] == [c.chunk_id for c in second]


_SUBPROCESS = """
import itertools
import json
from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.model import ChunkPolicy
from tests.chunkers.test_md_heading_v1 import _determinism_parts, build
_, doc = build(_determinism_parts())
chunks = get_chunker("md-heading-v1").chunk(doc, ChunkPolicy(target_tokens=80, overlap_tokens=20))
print(json.dumps([c.model_dump(mode="json") for c in chunks], sort_keys=True))
"""


def test_determinism_across_pythonhashseed_values() -> None:
    outputs = outputs_under_hash_seeds(_SUBPROCESS, ("0", "1", "4242"))
    _, doc = build(_determinism_parts())
    here = CHUNKER.chunk(doc, ChunkPolicy(target_tokens=80, overlap_tokens=20))
    expected = json.dumps([c.model_dump(mode="json") for c in here], sort_keys=True) + "\n"
    assert outputs == [expected] * 3


# --------------------------------------------------------------------------------------
# The issue's decisions
# --------------------------------------------------------------------------------------


def test_section_over_budget_splits_between_blocks() -> None:
    paragraphs = [para(sentences(2, 10 * i)) for i in range(6)]  # ~130 bytes each
    policy = ChunkPolicy(target_tokens=100, overlap_tokens=0)
    source, doc = build([heading(2, "Many"), *paragraphs])
    chunks = CHUNKER.chunk(doc, policy)
    check_invariants(source, doc, chunks, policy)
    assert len(chunks) >= 3
    for chunk in chunks:
        # every block is whole: no paragraph needed splitting
        for block_ref, span in zip(chunk.block_ids, chunk.source_spans, strict=True):
            block = next(b for b in doc.blocks if b.block_id == block_ref)
            assert span == block.spans[0]
    assert chunks[0].text.startswith("## Many\n\n" + paragraphs[0].text)


def test_overlap_between_whole_blocks_repeats_trailing_prose_only() -> None:
    policy = ChunkPolicy(target_tokens=60, overlap_tokens=30)
    parts = [
        heading(2, "S"),
        para("Short one."),
        para(sentences(2)),
        para("Tail para."),
        para(sentences(2, 5)),
    ]
    source, doc = build(parts)
    chunks = CHUNKER.chunk(doc, policy)
    check_invariants(source, doc, chunks, policy)
    overlapping = [(p, n) for p, n in itertools.pairwise(chunks) if start_of(n) < end_of(p)]
    assert overlapping, "a section split between blocks carries overlap"
    # an overlap that starts at a block start repeats whole blocks
    assert any(
        n.source_spans[0] == next(b for b in doc.blocks if b.block_id == n.block_ids[0]).spans[0]
        for _, n in overlapping
    )


def test_overlap_never_repeats_heading_code_or_table() -> None:
    policy = ChunkPolicy(target_tokens=40, overlap_tokens=30)
    parts = [
        heading(2, "H"),
        code("x = 1"),
        para(sentences(3)),
        table(("a",), [("1",)]),
        para(sentences(3, 50)),
        heading(2, "Next"),
        para(sentences(2, 90)),
    ]
    source, doc = build(parts)
    chunks = CHUNKER.chunk(doc, policy)
    check_invariants(source, doc, chunks, policy)
    for kind in ("heading", "code", "table"):
        for block in (b for b in doc.blocks if b.kind == kind):
            assert sum(block.block_id in c.block_ids for c in chunks) == 1


def test_overlap_never_crosses_a_heading() -> None:
    policy = ChunkPolicy(target_tokens=50, overlap_tokens=40)
    source, doc = build([heading(2, "A"), para(sentences(2)), heading(2, "B"), para("Short.")])
    chunks = CHUNKER.chunk(doc, policy)
    check_invariants(source, doc, chunks, policy)
    b_first = next(c for c in chunks if c.heading_path == ("B",))
    assert b_first.text == "## B\n\nShort."


def test_crlf_document_slices_exactly() -> None:
    policy = ChunkPolicy(target_tokens=40, overlap_tokens=10)
    parts = [
        heading(1, "Title"),
        para("one line"),
        para("two\nlines here"),
        bullets(["a", "b"]),
        para(sentences(6)),
    ]
    _, chunks = run(parts, policy, newline="\r\n")
    assert "\r\n" in chunks[0].text
    assert chunks[0].text.startswith("# Title\r\n\r\none line")


def test_single_line_blocks_join_with_blank_lines() -> None:
    _, chunks = run([heading(1, "T"), para("a"), para("b")], ChunkPolicy())
    assert [c.text for c in chunks] == ["# T\n\na\n\nb"]


@pytest.mark.parametrize(
    "gap",
    ["\n\n---\n\n", "\n  \n", "\n\n[ref]: https://example.com\n\n", "  \n\n"],
    ids=["thematic-break", "spaces-on-blank-line", "link-ref-definition", "trailing-spaces"],
)
def test_unknown_gap_between_blocks_is_a_boundary(gap: str) -> None:
    policy = ChunkPolicy()
    source, doc = build([para("first para"), para("second para", sep=gap), para("third para")])
    chunks = CHUNKER.chunk(doc, policy)
    check_invariants(source, doc, chunks, policy)
    assert [c.text for c in chunks] == ["first para", "second para\n\nthird para"]


def test_mixed_line_endings_never_join_blocks_wrongly() -> None:
    policy = ChunkPolicy()
    parts = [para("a\r\nb"), para("c\nd", sep="\n\n"), para("e", sep="\r\n\r\n")]
    source, doc = build(parts)
    chunks = CHUNKER.chunk(doc, policy)
    check_invariants(source, doc, chunks, policy)
    assert [c.text for c in chunks] == ["a\r\nb", "c\nd", "e"]


def test_paragraph_without_sentence_ends_splits_at_whitespace() -> None:
    words = " ".join(f"word{i}" for i in range(200))
    policy = ChunkPolicy(target_tokens=30, overlap_tokens=5)
    _, chunks = run([para(words)], policy)
    assert len(chunks) > 5
    for chunk in chunks:
        assert re.fullmatch(r"word\d+( word\d+)*", chunk.text), chunk.text


def test_list_over_budget_splits_at_item_lines() -> None:
    items = [f"item number {i} without a full stop" for i in range(40)]
    policy = ChunkPolicy(target_tokens=50, overlap_tokens=15)
    _, chunks = run([bullets(items)], policy)
    assert len(chunks) > 3
    for chunk in chunks:
        assert all(line.startswith("- item number") for line in chunk.text.split("\n"))


def test_text_without_whitespace_splits_hard_on_code_points() -> None:
    text = "가나다라마바사🙂é" * 40
    policy = ChunkPolicy(target_tokens=20, overlap_tokens=4)
    _, chunks = run([para(text)], policy)
    assert len(chunks) > 5
    assert all(len(c.text.encode()) <= 60 for c in chunks)
    for prev, nxt in itertools.pairwise(chunks):
        assert start_of(nxt) < end_of(prev), "hard pieces overlap too"


def test_empty_document_gives_no_chunks() -> None:
    _, doc = build([])
    assert CHUNKER.chunk(doc, ChunkPolicy()) == []


def test_positions_and_heading_paths_in_document_order() -> None:
    policy = ChunkPolicy(target_tokens=30, overlap_tokens=0)
    parts = [para("Preamble."), heading(1, "A"), para(sentences(3)), heading(2, "B"), para("x")]
    _, chunks = run(parts, policy)
    assert chunks[0].heading_path == () and chunks[0].text == "Preamble."
    assert chunks[-1].heading_path == ("A", "B")


def test_page_span_document_is_unsupported_with_one_sentence() -> None:
    did = doc_id("a.pdf")
    doc = CanonicalDocument(
        doc_id=did,
        source_uri="a.pdf",
        media_type="application/pdf",
        content_hash="0" * 64,
        parser_version="pdf-text-v1",
        blocks=(
            ParagraphBlock(
                block_id=block_id(did, "paragraph", "page", 0),
                text="page",
                spans=(PageSpan(page=1, char_start=0, char_end=4),),
            ),
        ),
    )
    assert not CHUNKER.accepts(doc)
    with pytest.raises(UnsupportedDocumentError) as info:
        CHUNKER.chunk(doc, ChunkPolicy())
    message = str(info.value)
    assert "page spans" in message and "pdf-page-v1" in message
    assert message.count(". ") == 0 and message.endswith(".")


def test_policy_hash_of_chunks_equals_policy_hash() -> None:
    policy = ChunkPolicy(target_tokens=64, overlap_tokens=8)
    _, chunks = run([heading(1, "T"), para(sentences(10))], policy)
    expected = ChunkPolicy(target_tokens=64, overlap_tokens=8).policy_hash
    assert len(expected) == 16
    assert {c.policy_hash for c in chunks} == {expected}
    assert CHUNKER.policy_hash(policy) == expected
    other = CHUNKER.chunk(build([heading(1, "T"), para(sentences(10))])[1], ChunkPolicy())
    assert other[0].chunk_id != chunks[0].chunk_id, "the policy is part of the chunk id"


def test_registry_returns_this_chunker() -> None:
    chunker = get_chunker("md-heading-v1")
    assert isinstance(chunker, MdHeadingV1Chunker)
    assert chunker.label == "md-heading-v1" and chunker.accepts_description


def test_block_whose_text_is_not_its_source_slice_stands_alone() -> None:
    # e.g. a parser that renders markup: the text is shorter than the source it spans
    source, doc = build([para("Before."), para("<p>Rendered</p>"), para("After.")])
    rendered = doc.blocks[1].model_copy(update={"text": "Rendered"})
    doc = doc.model_copy(update={"blocks": (doc.blocks[0], rendered, doc.blocks[2])})
    chunks = CHUNKER.chunk(doc, ChunkPolicy())
    assert [c.text for c in chunks] == ["Before.", "Rendered", "After."]
    assert chunks[1].source_spans == rendered.spans
    assert source[start_of(chunks[0]) : end_of(chunks[0])] == chunks[0].text
    assert source[start_of(chunks[2]) : end_of(chunks[2])] == chunks[2].text


def test_oversized_heading_splits_but_still_opens_its_section() -> None:
    policy = ChunkPolicy(target_tokens=10, overlap_tokens=2)
    title = " ".join(f"w{i}" for i in range(30))
    source, doc = build([heading(2, title), para("Body.")])
    chunks = CHUNKER.chunk(doc, policy)
    check_invariants(source, doc, chunks, policy)
    assert chunks[0].text.startswith("## w0") and chunks[0].block_ids == (doc.blocks[0].block_id,)
    assert all(c.token_estimate <= 10 for c in chunks)
    assert chunks[-1].text.endswith("Body.")
