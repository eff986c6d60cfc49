"""hybrid-v2: each hybrid-v1 defect shown on v1 and gone in v2, its text to embed, and goldens.

Defects (each test measures v1, which must show it, and v2, which must not):

- citations: a piece of a block assembled from several source elements (a docling or DOCX
  list, a docling paragraph joined from text items) cited every element of the block,
  including those whose text the piece does not hold;
- headings: context lines that did not fit half the budget were removed from the record's
  ``heading_path``/``captions``, so a heading could end up in no field of any chunk;
- ids: slice ids carried document offsets (growing an earlier block changed later ids), and
  pieces of two sections with the same heading path could merge across the heading.

Edit survival on real Markdown documents (the fixtures plus the installed READMEs, one
paragraph inserted after the middle one, as ``tests/chunkers/test_md_heading_v2.py`` does)
is measured for both labels. The goldens (``tests/goldens/hybrid-v2/``, rewritten only with
``KEBAB_UPDATE_GOLDENS=1``) pin v2's chunks and texts to embed on every fixture format.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.corpora import distribution_readmes, fixture_markdown
from kebab_chunk.chunkers._budget import resolve_max_tokens
from kebab_chunk.chunkers._context import bound_line
from kebab_chunk.chunkers._hybrid import HybridChunker, embedded_text, part_ranges, trim_context
from kebab_chunk.chunkers.contextualize import contextualize
from kebab_chunk.chunkers.registry import get_chunker, label, registered_labels
from kebab_chunk.errors import UsageError
from kebab_chunk.model import (
    Block,
    CanonicalDocument,
    Chunk,
    ChunkPolicy,
    HeadingBlock,
    LineSpan,
    ListBlock,
    ParagraphBlock,
    make_policy,
)
from kebab_chunk.model.ids import doc_id
from kebab_chunk.model.spans import ElementSpan
from kebab_chunk.parsers.base import BlockIds
from kebab_chunk.parsers.decode import decode_text
from kebab_chunk.parsers.registry import detect_media_type, parse_document
from kebab_chunk.tokenizers import get_tokenizer
from tests.chunkers.helpers import outputs_under_hash_seeds
from tests.chunkers.token_docs import H, P, build, doc_with
from tests.golden import assert_golden, parse_for_golden

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
V1, V2 = "hybrid-v1", "hybrid-v2"
MINILM = "hf:all-MiniLM-L6-v2"
#: Small budgets, so that lists, paragraphs and tables of the fixtures are split.
SMALL = {
    "minilm-m12": make_policy(tokenizer=MINILM, max_tokens=12, overlap_tokens=0),
    "minilm-m24-o4": make_policy(tokenizer=MINILM, max_tokens=24, overlap_tokens=4),
    "chars-m20": make_policy(tokenizer="chars", target_tokens=20, overlap_tokens=0),
    "minilm-m16-items": make_policy(
        tokenizer=MINILM, max_tokens=16, overlap_tokens=0, merge_list_items=False
    ),
}
STRUCTURED = ["docling/report.docling.json", "docx/report.docx"]


#: The parser versions these tests and goldens were written against (the defaults before the
#: v2 parsers): the defects measured here are the chunker's, not a parser's.
PINNED_PARSERS = {
    "application/pdf": "pdf-text-v1",
    "text/html": "html-v1",
    "application/vnd.docling+json": "docling-json-v1",
}


def _parse_pinned(raw: bytes, uri: str) -> CanonicalDocument:
    media_type = detect_media_type(uri, raw[:8])
    return parse_document(
        raw, uri, media_type=media_type, parser_version=PINNED_PARSERS.get(media_type or "")
    )


def v1() -> HybridChunker:
    return HybridChunker(label("hybrid-v1"))


def v2() -> HybridChunker:
    return HybridChunker(label("hybrid-v2"))


@cache
def fixture(uri: str) -> CanonicalDocument:
    """A fixture parsed with its media type's registered parser."""
    return _parse_pinned((FIXTURES / uri).read_bytes(), uri)


def budget(policy: ChunkPolicy) -> int:
    return resolve_max_tokens(policy, get_tokenizer(policy.tokenizer))


def full_path(doc: CanonicalDocument, chunk: Chunk) -> tuple[str, ...]:
    """The whole heading path of a chunk's element: its first block's (a heading that is
    an element of its own, an empty section, has its parent's path)."""
    first = next(b for b in doc.blocks if b.block_id == chunk.block_ids[0])
    return first.heading_path[:-1] if first.kind == "heading" else first.heading_path


# ----------------------------------------------------------------------------- promises


def promises(
    doc: CanonicalDocument,
    chunks: Sequence[Chunk],
    policy: ChunkPolicy,
    source: str | None,
    *,
    bounded: bool = False,
) -> None:
    """What hybrid-v2 promises beyond every chunker's properties (used by
    ``tests/properties/test_every_chunker.py`` on generated documents): the text to embed
    is counted exactly by ``token_estimate`` and fits the budget (only a single character
    may not), the record keeps the element's whole heading path (``bounded``, hybrid-v4:
    every line of it, each cut by ``bound_line``), and a chunk with one line span is the
    exact source slice it cites (``source``: None when texts are rendered)."""
    chunker = HybridChunker(label("hybrid-v2"))
    tokenizer = get_tokenizer(policy.tokenizer)
    limit = budget(policy)
    for chunk in chunks:
        text = chunker.embed_text(chunk, policy)
        count = tokenizer.count_tokens(text)
        assert chunk.token_estimate == count, "token_estimate counts the text to embed"
        assert count <= limit or len(chunk.text) == 1
        assert text.endswith(chunk.text)
        path = full_path(doc, chunk)
        if bounded:
            path = tuple(bound_line(line, tokenizer.count_tokens, limit) for line in path)
        assert chunk.heading_path == path, "headings are never dropped"
        if source is not None and len(chunk.source_spans) == 1:
            (span,) = chunk.source_spans
            if isinstance(span, LineSpan):
                assert source[span.char_start : span.char_end] == chunk.text


def check(
    doc: CanonicalDocument, chunks: Sequence[Chunk], policy: ChunkPolicy, *, bounded: bool = False
) -> None:
    """``promises`` plus unique ids and positions in order."""
    assert [c.position for c in chunks] == list(range(len(chunks)))
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    promises(doc, chunks, policy, None, bounded=bounded)


def test_v2_is_registered_beside_v1() -> None:
    assert {V1, V2} <= set(registered_labels())
    chunker = get_chunker(V2)
    assert isinstance(chunker, HybridChunker) and chunker.uses_tokenizers is None


# ----------------------------------------------------------------------------- citations


def element_texts(uri: str, doc: CanonicalDocument) -> dict[str, str]:
    """Source element ref -> its text, read from the source, not from any chunker.

    docling JSON: every text item's ``text``; other elements (tables, pictures, DOCX
    paragraphs) from blocks that cite them alone (one span: the block's text is the
    element's), and DOCX list items from lists with one span per item.
    """
    texts: dict[str, str] = {}
    for block in doc.blocks:
        spans = block.spans
        if len(spans) == 1 and isinstance(spans[0], ElementSpan):
            texts.setdefault(spans[0].ref, block.text)
        if isinstance(block, ListBlock) and len(block.items) == len(spans):
            for item, span in zip(block.items, spans, strict=True):
                assert isinstance(span, ElementSpan)
                texts[span.ref] = item
    if uri.endswith(".docling.json"):
        data = json.loads((FIXTURES / uri).read_bytes())
        texts.update({item["self_ref"]: item["text"] for item in data["texts"]})
    return texts


def cited_but_not_held(uri: str, chunks: Sequence[Chunk], doc: CanonicalDocument) -> int:
    """Cited element locations whose text the citing chunk does not contain."""
    texts = element_texts(uri, doc)
    missing = 0
    for chunk in chunks:
        for span in chunk.source_spans:
            assert isinstance(span, ElementSpan)
            missing += texts[span.ref][span.char_start : span.char_end] not in chunk.text
    return missing


@pytest.mark.parametrize("uri", STRUCTURED)
def test_pieces_cite_only_the_items_they_hold(uri: str) -> None:
    """v1 cited every item of a split list from every piece of it."""
    doc = fixture(uri)
    old = new = total = 0
    for policy in SMALL.values():
        old += cited_but_not_held(uri, v1().chunk(doc, policy), doc)
        chunks = v2().chunk(doc, policy)
        check(doc, chunks, policy)
        new += cited_but_not_held(uri, chunks, doc)
        total += sum(len(c.source_spans) for c in chunks)
    assert old > 5
    assert new == 0 and total > 50


def test_a_list_piece_cites_its_items_cut_to_what_it_holds() -> None:
    doc = fixture("docling/report.docling.json")
    policy = SMALL["minilm-m12"]
    pieces = [c for c in v2().chunk(doc, policy) if c.text.startswith("- Compute clusters")]
    assert [c.source_spans for c in pieces] == [
        (ElementSpan(ref="#/texts/5", page=2, char_start=0, char_end=16),)
    ]
    old = [c for c in v1().chunk(doc, policy) if c.text.startswith("- Compute clusters")]
    assert len(old[0].source_spans) == 5  # every item of the list


_DANGLING_MARKER = re.compile(r"(?:^|\n)[ \t]*(?:[-*+]|\d{1,9}[.)])$")


@pytest.mark.parametrize("uri", STRUCTURED)
def test_lists_are_cut_before_a_marker_not_after_it(uri: str) -> None:
    """v1 cut DOCX and docling lists where an item's text starts, so a piece ended with the
    next item's bare marker (``- Compute clusters\n-``)."""
    doc = fixture(uri)
    for chunker, dangling in ((v1(), True), (v2(), False)):
        ends = [
            c.text
            for policy in SMALL.values()
            for c in chunker.chunk(doc, policy)
            if _DANGLING_MARKER.search(c.text)
        ]
        assert bool(ends) is dangling, (chunker.label, ends[:3])


def _structured(blocks: list[tuple[str, str, list[tuple[str, int]]]]) -> CanonicalDocument:
    """A docling-shaped document: (kind, text, [(ref, length), ...]) per block."""
    uri = "shaped.docling.json"
    ids = BlockIds(doc_id(uri))
    out: list[Block] = []
    for kind, text, refs in blocks:
        spans = tuple(ElementSpan(ref=r, page=1, char_start=0, char_end=n) for r, n in refs)
        if kind == "list":
            items = tuple(line.lstrip().split(" ", 1)[1] for line in text.split("\n"))
            out.append(
                ListBlock(block_id=ids.next(kind, text), text=text, spans=spans, items=items)
            )
        else:
            out.append(ParagraphBlock(block_id=ids.next(kind, text), text=text, spans=spans))
    return doc_with(out, uri, "application/vnd.docling+json")


def test_items_made_of_several_elements_are_located_by_their_lengths() -> None:
    """A list item joined from two text elements (a docling inline group) and a paragraph
    joined from three: the spans' lengths tile the text, so each piece cites only what it
    holds. (The one-span-per-line layout does not apply: three spans, two items.)"""
    first, second_a, second_b = "alpha beta gamma delta", "epsilon zeta", "eta theta iota"
    listed = f"- {first}\n- {second_a} {second_b}"
    prose = ["one two three four", "five six seven", "eight nine ten eleven"]
    doc = _structured(
        [
            ("list", listed, [("#/texts/1", 22), ("#/texts/2", 12), ("#/texts/3", 14)]),
            ("paragraph", " ".join(prose), [(f"#/texts/{i}", len(t)) for i, t in
                                             enumerate(prose, 4)]),
        ]
    )  # fmt: skip
    assert part_ranges(doc.blocks[0]) == ((2, 24), (27, 39), (40, 54))
    texts = {"#/texts/1": first, "#/texts/2": second_a, "#/texts/3": second_b}
    texts.update({f"#/texts/{i}": t for i, t in enumerate(prose, 4)})
    policy = make_policy(tokenizer="chars", target_tokens=16, overlap_tokens=0)
    for chunker, wrong in ((v1(), True), (v2(), False)):
        chunks = chunker.chunk(doc, policy)
        misses = sum(
            texts[s.ref][s.char_start : s.char_end] not in c.text
            for c in chunks
            for s in c.source_spans
            if isinstance(s, ElementSpan)
        )
        assert (misses > 0) is wrong, chunker.label


_part = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "x", "1.", "-"]),
                 min_size=1, max_size=6).map(" ".join)  # fmt: skip


@given(
    items=st.lists(
        st.tuples(st.integers(0, 2), st.lists(_part, min_size=1, max_size=3)),
        min_size=1,
        max_size=8,
    ),
    ordered=st.booleans(),
    target=st.integers(4, 60),
    overlap=st.integers(0, 3),
    merge_list_items=st.booleans(),
)
def test_generated_lists_cite_only_what_each_chunk_holds(
    items: list[tuple[int, list[str]]],
    ordered: bool,
    target: int,
    overlap: int,
    merge_list_items: bool,
) -> None:
    """docling-shaped lists (nested, items joined from one to three text elements, words
    that look like markers) at any small budget: every cited part is held by its chunk."""
    lines: list[str] = []
    refs: list[tuple[str, int]] = []
    texts: dict[str, str] = {}
    for number, (level, parts) in enumerate(items, 1):
        marker = f"{number}." if ordered else "-"
        lines.append(f"{'  ' * level}{marker} {' '.join(parts)}")
        for part in parts:
            ref = f"#/texts/{len(refs)}"
            refs.append((ref, len(part)))
            texts[ref] = part
    doc = _structured([("list", "\n".join(lines), refs)])
    policy = make_policy(
        tokenizer="chars",
        target_tokens=target,
        overlap_tokens=min(overlap, target - 1),
        merge_list_items=merge_list_items,
    )
    chunks = v2().chunk(doc, policy)
    check(doc, chunks, policy)
    for chunk in chunks:
        for span in chunk.source_spans:
            assert isinstance(span, ElementSpan)
            assert texts[span.ref][span.char_start : span.char_end] in chunk.text


def test_a_layout_that_does_not_add_up_keeps_the_block_spans() -> None:
    """Lengths that do not tile the text: nothing is guessed, pieces cite the block."""
    doc = _structured([("paragraph", "one two  three", [("#/texts/1", 3), ("#/texts/2", 3)])])
    assert part_ranges(doc.blocks[0]) is None
    policy = make_policy(tokenizer="chars", target_tokens=6, overlap_tokens=0)
    chunks = v2().chunk(doc, policy)
    assert len(chunks) > 1 and all(c.source_spans == doc.blocks[0].spans for c in chunks)


# ----------------------------------------------------------------------------- headings


def all_heading_titles(doc: CanonicalDocument) -> set[str]:
    return {b.heading_path[-1] for b in doc.blocks if isinstance(b, HeadingBlock)}


def titles_in_no_chunk(doc: CanonicalDocument, chunks: Sequence[Chunk]) -> set[str]:
    """Heading titles that appear in no heading path and no text of any chunk."""
    seen = {title for c in chunks for title in c.heading_path}
    return {t for t in all_heading_titles(doc) if t not in seen and all(t not in c.text
                                                                      for c in chunks)}  # fmt: skip


@pytest.mark.parametrize("uri", [*STRUCTURED, "html/article.html"])
def test_headings_stay_in_the_record(uri: str) -> None:
    """v1 removed headings that did not fit half the budget from ``heading_path``; at 12
    MiniLM tokens some heading of each fixture was then in no field of any chunk."""
    doc = fixture(uri)
    policy = SMALL["minilm-m12"]
    old = v1().chunk(doc, policy)
    assert any(c.heading_path != full_path(doc, c) for c in old)
    assert titles_in_no_chunk(doc, old)
    new = v2().chunk(doc, policy)
    check(doc, new, policy)
    assert all(c.heading_path == full_path(doc, c) for c in new)
    assert not titles_in_no_chunk(doc, new)


def test_a_csv_header_stays_in_the_captions_of_every_continuation() -> None:
    doc = fixture("csv/inventory.csv")
    header = "sku,name,description,price"
    policy = SMALL["minilm-m12"]
    old, new = v1().chunk(doc, policy), v2().chunk(doc, policy)
    assert len(new) > 2
    assert [c.captions for c in old[1:]] != [(header,)] * (len(old) - 1)
    assert [c.captions for c in new[1:]] == [(header,)] * (len(new) - 1)
    check(doc, new, policy)


LONG_HEADING = " ".join(f"topic{i}" for i in range(120))


def _long_heading_html() -> CanonicalDocument:
    body = " ".join(f"Sentence {i} tells one more thing about the system." for i in range(40))
    html = f"<html><body><h1>Guide</h1><h2>{LONG_HEADING}</h2><p>{body}</p></body></html>"
    return _parse_pinned(html.encode(), "long.html")


def test_an_over_long_heading_is_kept_and_only_its_counted_text_is_cut() -> None:
    """At MiniLM's 256 tokens the heading alone costs more than half: v1 dropped it from the
    record (and its parent with it); v2 keeps both and embeds a prefix of the heading."""
    doc = _long_heading_html()
    policy = make_policy(tokenizer=MINILM)
    old = v1().chunk(doc, policy)
    assert len(old) > 1 and all(c.heading_path == () for c in old)
    chunker = v2()
    new = chunker.chunk(doc, policy)
    assert len(new) > 1 and all(c.heading_path == ("Guide", LONG_HEADING) for c in new)
    count = get_tokenizer(MINILM).count_tokens
    for chunk in new:
        text = chunker.embed_text(chunk)
        head = text[: -len(chunk.text) - 1]
        assert "\n" not in head and LONG_HEADING.startswith(head) and len(head) > 100
        assert head.endswith(("0", "1", "2", "3", "4", "5", "6", "7", "8", "9"))  # a word end
        next_word = LONG_HEADING.find(" ", len(head) + 1)
        assert count(head) <= 128 < count(LONG_HEADING[:next_word])
        assert chunk.token_estimate == count(text) <= 256
    check(doc, new, policy)


def test_trim_context_keeps_inner_lines_then_a_prefix() -> None:
    def count(text: str) -> int:
        return len(text)

    assert trim_context(("a" * 5, "b" * 5), count, 11) == ("a" * 5, "b" * 5)
    assert trim_context(("a" * 5, "b" * 5), count, 10) == ("b" * 5,)
    assert trim_context(("outer", "one two three"), count, 9) == ("one two",)
    assert trim_context(("abcdefgh",), count, 3) == ("abc",)  # no word end fits: characters
    assert trim_context(("abc",), count, 0) == ()
    assert trim_context((), count, 0) == ()


def test_the_full_context_is_embedded_whenever_it_fits() -> None:
    count = get_tokenizer("chars").count_tokens
    assert embedded_text(("A", "B"), ("cap",), "text", count, 12) == "A\nB\ncap\ntext"
    assert embedded_text(("A", "B"), ("cap",), "text", count, 11) == "B\ncap\ntext"


# ----------------------------------------------------------------------------- embed_text


@pytest.mark.parametrize("name", sorted(SMALL))
def test_embed_text_is_what_token_estimate_counts(name: str) -> None:
    policy = SMALL[name]
    for uri in [*STRUCTURED, "html/article.html", "csv/inventory.csv", "markdown/lists.md"]:
        doc = fixture(uri)
        chunker = v2()
        chunks = chunker.chunk(doc, policy)
        check(doc, chunks, policy)
        for chunk in chunks:  # the chunker remembers the policy it chunked with
            assert chunker.embed_text(chunk) == chunker.embed_text(chunk, policy)


def test_embed_text_of_an_unknown_policy_is_refused() -> None:
    doc = fixture("docling/report.docling.json")
    policy = make_policy(tokenizer=MINILM)
    chunk = v2().chunk(doc, policy)[0]
    with pytest.raises(UsageError, match="pass that policy"):
        v2().embed_text(chunk)
    with pytest.raises(UsageError, match="the policy the chunk was made with"):
        v2().embed_text(chunk, make_policy())
    assert v2().embed_text(chunk, policy) == contextualize(chunk)  # nothing trimmed here


# ----------------------------------------------------------------------------- ids


def _grow_first_paragraph(raw: bytes) -> bytes:
    old = b"This runbook restores capacity"
    assert raw.count(old) == 1
    return raw.replace(old, b"This runbook quickly and safely restores capacity")


def ids_lost_outside(chunker_version: str, before: CanonicalDocument, after: CanonicalDocument,
                     edited: str, policy: ChunkPolicy) -> int:  # fmt: skip
    """Chunk ids of ``before`` that are gone from ``after`` although the chunk does not hold
    the edited block."""
    new_ids = {c.chunk_id for c in get_chunker(chunker_version).chunk(after, policy)}
    return sum(
        c.chunk_id not in new_ids and edited not in c.block_ids
        for c in get_chunker(chunker_version).chunk(before, policy)
    )


def test_growing_a_block_changes_no_id_of_later_slices() -> None:
    """v1's slice ids held the document offset of the slice: growing the first paragraph of
    the HTML fixture changed the ids of the slices of every later block."""
    uri = "html/article.html"
    raw = (FIXTURES / uri).read_bytes()
    before, after = _parse_pinned(raw, uri), _parse_pinned(_grow_first_paragraph(raw), uri)
    [edited] = [b.block_id for b in before.blocks if "restores capacity" in b.text]
    policy = SMALL["minilm-m24-o4"]
    assert ids_lost_outside(V1, before, after, edited, policy) > 5
    assert ids_lost_outside(V2, before, after, edited, policy) == 0


def test_markdown_slice_ids_do_not_depend_on_document_offsets() -> None:
    paragraph = " ".join(f"Word{n} is here." for n in range(200))
    policy = make_policy(max_tokens=40, overlap_tokens=8)
    ids = {}
    for name in (V1, V2):
        found = []
        for intro in ("Short intro.", "A much longer introduction paragraph than before."):
            built = build([H(1, "Intro"), P(intro), H(1, "Body"), P(paragraph)])
            chunks = get_chunker(name).chunk(built.doc, policy)
            found.append({c.chunk_id for c in chunks if c.heading_path == ("Body",)})
        assert len(found[0]) > 3
        ids[name] = found
    assert ids[V1][0] != ids[V1][1]
    assert ids[V2][0] == ids[V2][1]


def _same_titles() -> CanonicalDocument:
    """Two sections with the same heading path (``Doc > Examples``) in a structured source."""
    uri = "same.docx"
    ids = BlockIds(doc_id(uri))
    blocks: list[Block] = []
    n = 0

    def span(text: str) -> tuple[ElementSpan, ...]:
        nonlocal n
        n += 1
        return (ElementSpan(ref=f"/w:p[{n}]", char_start=0, char_end=len(text)),)

    for level, title in ((1, "Doc"), (2, "Examples"), (2, "Examples")):
        path = ("Doc",) if level == 1 else ("Doc", "Examples")
        blocks.append(
            HeadingBlock(block_id=ids.next("heading", title), text=title, level=level,
                         heading_path=path, spans=span(title))
        )  # fmt: skip
        if level == 2:
            text = f"Example number {len(blocks)}."
            blocks.append(
                ParagraphBlock(block_id=ids.next("paragraph", text), text=text,
                               heading_path=path, spans=span(text))
            )  # fmt: skip
    return doc_with(blocks, uri, "application/vnd.docx")


def test_pieces_never_merge_across_a_heading() -> None:
    """v1 merged the two ``Examples`` sections of a DOCX into one chunk (same heading path,
    no source text between structured elements); v2 packs each section on its own."""
    doc = _same_titles()
    assert [c.text for c in v1().chunk(doc, ChunkPolicy())] == ["Example number 2.\nExample "
                                                                "number 4."]  # fmt: skip
    chunks = v2().chunk(doc, ChunkPolicy())
    assert [c.text for c in chunks] == ["Example number 2.", "Example number 4."]
    check(doc, chunks, ChunkPolicy())


# ----------------------------------------------------------------------------- survival


INSERTED = (
    "This new paragraph was inserted by an editor to check which chunk ids survive an edit "
    "of one section."
)
SURVIVAL_POLICIES = {
    "t256-o25": make_policy(target_tokens=256, overlap_tokens=25),
    "minilm-m64-o16": make_policy(tokenizer=MINILM, max_tokens=64, overlap_tokens=16),
}


@dataclass(frozen=True)
class Real:
    """One real Markdown document: its name, decoded source and parsed form."""

    name: str
    source: str
    doc: CanonicalDocument


@cache
def real_documents() -> tuple[Real, ...]:
    """Fixture Markdown and installed READMEs that hold a heading and a paragraph."""
    docs = [*fixture_markdown(FIXTURES).documents, *distribution_readmes().documents]
    out = []
    for d in docs:
        source, _ = decode_text(d.raw, d.name)
        doc = parse_document(d.raw, d.name, media_type="text/markdown")
        kinds = {b.kind for b in doc.blocks}
        if {"heading", "paragraph"} <= kinds:
            out.append(Real(d.name, source, doc))
    return tuple(out)


def _sections(doc: CanonicalDocument) -> dict[str, int]:
    """Block id -> section number (a section: a run of headings and the blocks below it)."""
    number, prev = 0, "heading"
    out: dict[str, int] = {}
    for block in doc.blocks:
        if block.kind == "heading" and prev != "heading":
            number += 1
        out[block.block_id] = number
        prev = block.kind
    return out


@dataclass(frozen=True)
class Edit:
    """One document's ids before and after the insertion."""

    share: float  # of the ids before, those still present after
    outside: int  # ids lost although none of their blocks is in the edited section


@cache
def edits(label: str, policy: ChunkPolicy) -> tuple[Edit, ...]:
    """One paragraph inserted after the middle paragraph of every real document."""
    out = []
    for real in real_documents():
        paragraphs = [b for b in real.doc.blocks if b.kind == "paragraph"]
        middle = paragraphs[len(paragraphs) // 2]
        end = middle.spans[0].char_end
        edited_source = real.source[:end] + "\n\n" + INSERTED + real.source[end:]
        edited = parse_document(edited_source.encode(), real.name, media_type="text/markdown")
        sections = _sections(real.doc)
        before = get_chunker(label).chunk(real.doc, policy)
        after = {c.chunk_id for c in get_chunker(label).chunk(edited, policy)}
        lost = [c for c in before if c.chunk_id not in after]
        outside = sum(
            all(sections[b] != sections[middle.block_id] for b in c.block_ids) for c in lost
        )
        out.append(Edit(1 - len(lost) / len(before), outside))
    return tuple(out)


def meets_stability_target(shares: Sequence[float]) -> bool:
    """Median >= 98% and >= 90% of documents keep >= 95% of their ids."""
    kept = sum(s >= 0.95 for s in shares) / len(shares)
    return statistics.median(shares) >= 0.98 and kept >= 0.90


@pytest.mark.parametrize("name", sorted(SURVIVAL_POLICIES))
def test_an_insertion_changes_no_id_outside_its_section(name: str) -> None:
    """Measured at 256 tokens: v1 lost ids outside the edited section in 28 of 107 documents,
    v2 in none; v2's median survival is 90% (v1: 83%), bounded by packing (the chunk that
    receives the paragraph must change, and the median document has ten chunks)."""
    policy = SURVIVAL_POLICIES[name]
    old, new = edits(V1, policy), edits(V2, policy)
    assert len(new) >= 10
    assert sum(e.outside > 0 for e in old) >= len(old) // 10
    assert sum(e.outside for e in new) == 0
    median_new = statistics.median(e.share for e in new)
    assert median_new > statistics.median(e.share for e in old)


def test_one_element_per_chunk_meets_the_stability_target() -> None:
    """With ``merge_peers=False`` the inserted paragraph is a chunk of its own: every other
    id survives in v2 (v1 still loses the later slices)."""
    policy = make_policy(target_tokens=256, overlap_tokens=25, merge_peers=False)
    old = [e.share for e in edits(V1, policy)]
    new = [e.share for e in edits(V2, policy)]
    assert not meets_stability_target(old)
    assert meets_stability_target(new) and min(new) == 1.0


_SCRIPT = """
import json, sys
from pathlib import Path
from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.model import make_policy
from kebab_chunk.parsers.registry import parse_document
chunker = get_chunker(sys.argv[1])
out = []
for uri in sys.argv[2:]:
    doc = parse_document(Path("fixtures", uri).read_bytes(), uri)
    for policy in (make_policy(max_tokens=12, overlap_tokens=2), make_policy()):
        out += [[c.model_dump(mode="json"), chunker.embed_text(c)]
                for c in chunker.chunk(doc, policy)]
print(json.dumps(out, sort_keys=True))
"""


@pytest.mark.parametrize(
    "label, uris",
    [
        (V2, ["docling/report.docling.json", "docx/report.docx", "html/article.html"]),
        ("hybrid-v3", ["html/changelog/api-reference.html", "docx/report.docx"]),
    ],
)
def test_output_is_the_same_under_any_hash_seed(label: str, uris: list[str]) -> None:
    outputs = outputs_under_hash_seeds(_SCRIPT, ("1", "2"), [label, *uris])
    assert outputs[0] == outputs[1] and len(json.loads(outputs[0])) > 20


# ----------------------------------------------------------------------------- goldens

GOLDEN_FIXTURES = [
    *sorted(
        p.relative_to(FIXTURES).as_posix()
        for p in FIXTURES.glob("markdown/*.md")
        if p.name != "README.md"
    ),
    "pdf/three-page-en.pdf",
    "pdf/one-long-page.pdf",
    "html/article.html",
    "csv/inventory.csv",
    "docx/report.docx",
    "docling/report.docling.json",
]
GOLDEN_POLICIES = {
    "default": make_policy(),
    "minilm": make_policy(tokenizer=MINILM),
    "cl100k-m64-o8": make_policy(tokenizer="tiktoken:cl100k_base", max_tokens=64, overlap_tokens=8),
    "minilm-m24-o4": SMALL["minilm-m24-o4"],
}


@pytest.mark.parametrize("uri", GOLDEN_FIXTURES)
def test_golden(uri: str) -> None:
    """Each record plus its text to embed, under four policies (one file per fixture)."""
    doc = parse_for_golden((FIXTURES / uri).read_bytes(), uri)
    chunker = v2()
    data = {}
    for name, policy in GOLDEN_POLICIES.items():
        chunks = chunker.chunk(doc, policy)
        check(doc, chunks, policy)
        data[name] = [
            {**c.model_dump(mode="json"), "embed_text": chunker.embed_text(c)} for c in chunks
        ]
    assert_golden(V2, uri.replace("/", "__"), data)
