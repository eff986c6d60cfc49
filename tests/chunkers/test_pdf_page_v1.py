"""pdf-page-v1: its test plan, the exact-slice rule, goldens (docs/internals/decisions.md)."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

import pytest

from kebab_chunk.chunkers import get_chunker
from kebab_chunk.chunkers.pdf_page_v1 import PdfPageV1Chunker
from kebab_chunk.chunkers.registry import label
from kebab_chunk.errors import UnsupportedDocumentError
from kebab_chunk.model import (
    CanonicalDocument,
    Chunk,
    ChunkPolicy,
    HeadingBlock,
    LineSpan,
    PageSpan,
    ParagraphBlock,
)
from kebab_chunk.model.ids import chunk_id, content_hash, doc_id, policy_hash_of, slice_id_policy
from kebab_chunk.parsers.registry import get_parser_by_version, parse_document
from kebab_chunk.tokenizers import BYTES_PER_TOKEN
from tests.chunkers import token_docs
from tests.chunkers.helpers import outputs_under_hash_seeds
from tests.golden import assert_golden

REPO = Path(__file__).resolve().parents[2]
PDF_DIR = REPO / "fixtures" / "pdf"
PARSEABLE_FIXTURES = (
    "three-page-en.pdf",
    "one-long-page.pdf",
    "with-empty-page.pdf",
    "encrypted-empty-password.pdf",
)
CHUNKER = PdfPageV1Chunker(label("pdf-page-v1"))


def page_doc(pages: Sequence[str], source_uri: str = "mem/doc.pdf") -> CanonicalDocument:
    """A CanonicalDocument shaped like pdf-text-v1 output, one paragraph per page."""
    raw = "\f".join(pages).encode("utf-8")
    return token_docs.page_doc(pages, source_uri, raw=raw, parser_version="pdf-text-v1")


def page_texts(doc: CanonicalDocument) -> dict[int, str]:
    texts = {}
    for block in doc.blocks:
        span = block.spans[0]
        assert isinstance(span, PageSpan)
        texts[span.page] = block.text
    return texts


def span_of(chunk: Chunk) -> PageSpan:
    assert len(chunk.source_spans) == 1
    span = chunk.source_spans[0]
    assert isinstance(span, PageSpan)
    return span


def assert_exact_slices(doc: CanonicalDocument, chunks: list[Chunk]) -> None:
    texts = page_texts(doc)
    for chunk in chunks:
        span = span_of(chunk)
        assert texts[span.page][span.char_start : span.char_end] == chunk.text


def parse_fixture(name: str) -> CanonicalDocument:
    return get_parser_by_version("pdf-text-v1").parse((PDF_DIR / name).read_bytes(), f"pdf/{name}")


SENTENCE = "abcdefgh. "  # 10 bytes: one segment


# --- the ten tests of the plan ----------------------------------------------------------


def test_label() -> None:
    assert CHUNKER.label == "pdf-page-v1"
    chunker = get_chunker("pdf-page-v1")
    assert isinstance(chunker, PdfPageV1Chunker)
    assert chunker.label == "pdf-page-v1"
    chunks = chunker.chunk(page_doc(["Hello."]), ChunkPolicy())
    assert [c.chunker_version for c in chunks] == ["pdf-page-v1"]


def test_three_small_pages_give_one_chunk_per_page() -> None:
    pages = ["First page text.", "Second page. Two sentences.", "Third!\n\nWith a break."]
    doc = page_doc(pages)
    policy = ChunkPolicy(target_tokens=64, overlap_tokens=8)
    chunks = CHUNKER.chunk(doc, policy)
    assert [c.text for c in chunks] == pages
    assert [c.position for c in chunks] == [0, 1, 2]
    for number, (chunk, block) in enumerate(zip(chunks, doc.blocks, strict=True), start=1):
        assert span_of(chunk) == PageSpan(page=number, char_start=0, char_end=len(block.text))
        assert chunk.block_ids == (block.block_id,)
        assert chunk.heading_path == ()
        # A page that gives one chunk uses the plain policy hash in its id.
        assert chunk.chunk_id == chunk_id(
            doc.doc_id, "pdf-page-v1", [block.block_id], policy.policy_hash
        )


def test_huge_page_splits_on_its_page_with_overlap_and_unique_ids() -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(200))
    doc = page_doc([text])
    policy = ChunkPolicy(target_tokens=40, overlap_tokens=5)
    budget, overlap = 40 * BYTES_PER_TOKEN, 5 * BYTES_PER_TOKEN
    chunks = CHUNKER.chunk(doc, policy)
    assert len(chunks) > 10
    assert_exact_slices(doc, chunks)
    spans = [span_of(c) for c in chunks]
    assert {s.page for s in spans} == {1}
    assert spans[0].char_start == 0 and spans[-1].char_end == len(text)
    for prev, nxt in pairwise(spans):
        # The next chunk starts `overlap` characters before the previous one's end.
        assert nxt.char_start == max(prev.char_end - overlap, prev.char_start + 1)
        # Its own part (after the overlap) fits the budget and ends a sentence.
        assert len(text[prev.char_end : nxt.char_end].encode()) <= budget
    assert all(text[s.char_end - 2 : s.char_end] == ". " for s in spans[:-1])
    ids = [c.chunk_id for c in chunks]
    assert len(set(ids)) == len(ids)
    for chunk, span in zip(chunks, spans, strict=True):
        assert chunk.policy_hash == policy.policy_hash
        expected_id_policy = slice_id_policy(policy.policy_hash, span.char_start)
        assert chunk.chunk_id == chunk_id(
            doc.doc_id, "pdf-page-v1", [doc.blocks[0].block_id], expected_id_policy
        )


def test_empty_page_gives_no_chunks() -> None:
    doc = page_doc(["Page one.", "", "Page three."])
    chunks = CHUNKER.chunk(doc, ChunkPolicy())
    assert [span_of(c).page for c in chunks] == [1, 3]
    assert [c.position for c in chunks] == [0, 1]


def test_whitespace_only_page_gives_no_chunks() -> None:
    doc = page_doc([" \n\t  \n\n ", "Page two.", "\u3000\u00a0 "])
    chunks = CHUNKER.chunk(doc, ChunkPolicy())
    assert [span_of(c).page for c in chunks] == [2]
    # Also when the whitespace page is far over the budget.
    big = page_doc([" " * 10_000])
    assert CHUNKER.chunk(big, ChunkPolicy(target_tokens=10, overlap_tokens=2)) == []


def markdown_doc() -> CanonicalDocument:
    did = doc_id("notes.md")
    return CanonicalDocument(
        doc_id=did,
        source_uri="notes.md",
        media_type="text/markdown",
        content_hash=content_hash(b"# Title\n\nBody."),
        parser_version="md-mistune-v1",
        blocks=(
            HeadingBlock(
                block_id="h" * 32,
                text="# Title",
                level=1,
                title="Title",
                heading_path=("Title",),
                spans=(LineSpan(line_start=1, line_end=1, char_start=0, char_end=7),),
            ),
            ParagraphBlock(
                block_id="p" * 32,
                text="Body.",
                heading_path=("Title",),
                spans=(LineSpan(line_start=3, line_end=3, char_start=9, char_end=14),),
            ),
        ),
    )


def test_non_pdf_document_is_an_error() -> None:
    doc = markdown_doc()
    assert not CHUNKER.accepts(doc)
    with pytest.raises(UnsupportedDocumentError) as info:
        CHUNKER.chunk(doc, ChunkPolicy())
    message = str(info.value)
    assert message.startswith("pdf-page-v1 needs every block to be a paragraph citing one exact")
    assert "(text/markdown, parsed by" in message and "such as hybrid-v4" in message
    assert "--parsers" not in message  # no PDF parser can help a Markdown document


def test_determinism_over_1000_runs() -> None:
    text = " ".join(f"Line {i} of a long page." for i in range(40)) + "\n\n" + "漢字" * 100
    doc = page_doc(["Short first page.", text, "", "Last page."])
    policy = ChunkPolicy(target_tokens=50, overlap_tokens=10)
    first = CHUNKER.chunk(doc, policy)
    first_json = [c.model_dump_json() for c in first]
    assert len(first) > 5
    for _ in range(999):
        again = CHUNKER.chunk(doc, policy)
        assert again == first
    assert [c.model_dump_json() for c in again] == first_json


def test_snapshot_is_stable() -> None:
    doc = parse_fixture("three-page-en.pdf")
    first = [c.model_dump(mode="json") for c in CHUNKER.chunk(doc, ChunkPolicy())]
    second = [c.model_dump(mode="json") for c in CHUNKER.chunk(doc, ChunkPolicy())]
    assert first == second
    assert len(first) == 3  # the done-when: three chunks, one per page
    assert_golden("pdf-page-v1", "three-page-en", first)


def test_policy_hash_matches_the_shared_recipe() -> None:
    policy = ChunkPolicy(target_tokens=300, overlap_tokens=30)
    chunks = CHUNKER.chunk(page_doc(["One page."]), policy)
    assert {c.policy_hash for c in chunks} == {policy_hash_of(policy.as_json())}
    assert len(policy.policy_hash) == 16


def test_policy_hash_equals_md_heading_v1() -> None:
    if importlib.util.find_spec("kebab_chunk.chunkers.md_heading_v1") is None:
        pytest.skip("md-heading-v1 is not implemented yet; the recipe test above still runs")
    policy = ChunkPolicy(target_tokens=300, overlap_tokens=30)
    md_chunks = get_chunker("md-heading-v1").chunk(markdown_doc(), policy)
    pdf_chunks = CHUNKER.chunk(page_doc(["One page."]), policy)
    assert md_chunks and pdf_chunks
    assert {c.policy_hash for c in md_chunks} == {c.policy_hash for c in pdf_chunks}


# The tenth test of the plan, "never crosses a page as a property over >= 10 random docs", is
# test_chunks_never_cross_pages in test_pdf_page_properties.py.


# --- segmentation and sizing ---------------------------------------------------------------


def test_greedy_growth_packs_whole_sentences() -> None:
    doc = page_doc([SENTENCE * 5])
    chunks = CHUNKER.chunk(doc, ChunkPolicy(target_tokens=7, overlap_tokens=0))  # 21 bytes
    assert [c.text for c in chunks] == [SENTENCE * 2, SENTENCE * 2, SENTENCE]


def test_at_least_one_segment_per_chunk_is_never_below_a_code_point() -> None:
    doc = page_doc(["😀😀😀"])  # 4 bytes each, budget 3 bytes
    chunks = CHUNKER.chunk(doc, ChunkPolicy(target_tokens=1, overlap_tokens=0))
    assert [c.text for c in chunks] == ["😀", "😀", "😀"]


def test_blank_lines_are_boundaries() -> None:
    text = "first paragraph without an end\n\nsecond one also open\n\nthird"
    chunks = CHUNKER.chunk(page_doc([text]), ChunkPolicy(target_tokens=12, overlap_tokens=0))
    assert [c.text for c in chunks] == [
        "first paragraph without an end\n\n",
        "second one also open\n\nthird",
    ]


def test_punctuation_without_whitespace_is_not_a_boundary() -> None:
    text = "Pi is 3.14159 and e is 2.71828 roughly so. Next sentence here."
    chunks = CHUNKER.chunk(page_doc([text]), ChunkPolicy(target_tokens=15, overlap_tokens=0))
    assert [c.text for c in chunks] == [
        "Pi is 3.14159 and e is 2.71828 roughly so. ",
        "Next sentence here.",
    ]
    # Decimal points alone are no boundary: with none at all the cut is hard at the budget.
    numbers = "a3.14b" * 20  # 120 bytes
    chunks = CHUNKER.chunk(page_doc([numbers]), ChunkPolicy(target_tokens=10, overlap_tokens=0))
    assert [len(c.text) for c in chunks] == [30, 30, 30, 30]


def test_whitespace_only_slices_are_dropped() -> None:
    text = "Text. " + " " * 100 + "More."
    chunks = CHUNKER.chunk(page_doc([text]), ChunkPolicy(target_tokens=5, overlap_tokens=0))
    # Budget 15 bytes: the 106-byte first segment is cut hard every 15 characters; the
    # slices holding only spaces carry nothing and are left out.
    assert [c.text for c in chunks] == ["Text. " + " " * 9, " More."]
    assert [span_of(c).char_start for c in chunks] == [0, 105]


def test_cjk_without_punctuation_is_cut_hard_at_the_budget() -> None:
    text = "漢" * 100  # 300 bytes, no segment boundary at all
    policy = ChunkPolicy(target_tokens=10, overlap_tokens=2)  # 30 bytes = 10 chars; overlap 6
    chunks = CHUNKER.chunk(page_doc([text]), policy)
    spans = [(span_of(c).char_start, span_of(c).char_end) for c in chunks]
    assert spans == [(0, 10)] + [(10 * k - 6, 10 * k + 10) for k in range(1, 10)]


def test_hard_cut_never_splits_a_code_point() -> None:
    text = "é" * 50  # 2 bytes each; budget 3*7 = 21 bytes -> 10 chars (20 bytes)
    chunks = CHUNKER.chunk(page_doc([text]), ChunkPolicy(target_tokens=7, overlap_tokens=0))
    assert [len(c.text) for c in chunks] == [10, 10, 10, 10, 10]


def test_overlap_never_reaches_back_to_the_previous_start() -> None:
    # A 4-character first core followed by an oversized segment: overlap 30 > 4.
    text = "Hi. " + "x" * 60
    policy = ChunkPolicy(target_tokens=10, overlap_tokens=9)  # 30 bytes, overlap 27 chars
    spans = [span_of(c) for c in CHUNKER.chunk(page_doc([text]), policy)]
    assert (spans[0].char_start, spans[0].char_end) == (0, 4)
    assert spans[1].char_start == 1  # clamped to just after the previous start
    assert all(b.char_start > a.char_start for a, b in pairwise(spans))


def test_page_within_budget_is_kept_whole_with_its_whitespace() -> None:
    text = "  padded page text.  \n"
    chunks = CHUNKER.chunk(page_doc([text]), ChunkPolicy())
    assert [c.text for c in chunks] == [text]


def test_token_estimate_is_the_byte_proxy() -> None:
    chunks = CHUNKER.chunk(page_doc(["ab漢"]), ChunkPolicy())  # 5 bytes
    assert [c.token_estimate for c in chunks] == [2]


# --- input contract ------------------------------------------------------------------------


def test_blocks_that_are_not_single_page_spanned_paragraphs_are_rejected() -> None:
    good = page_doc(["Page."]).blocks[0]
    assert isinstance(good, ParagraphBlock)
    two_spans = good.model_copy(
        update={"spans": (*good.spans, PageSpan(page=2, char_start=0, char_end=5))}
    )
    heading = HeadingBlock(
        block_id="h" * 32, text="Page.", level=1, title="Page.", spans=good.spans
    )
    short_span = good.model_copy(update={"spans": (PageSpan(page=1, char_start=0, char_end=2),)})
    for block in (two_spans, heading, short_span):
        doc = page_doc(["Page."]).model_copy(update={"blocks": (block,)})
        assert not CHUNKER.accepts(doc)
        with pytest.raises(UnsupportedDocumentError, match=r"^pdf-page-v1 needs every block"):
            CHUNKER.chunk(doc, ChunkPolicy())


def test_a_pdf_from_another_pdf_parser_is_refused_naming_the_parser_to_pin() -> None:
    """The default PDF parser (pdf-text-v3) makes headings from an outline, which
    pdf-page-v1 does not take: the one sentence says which parser to pin and how."""
    pdf = REPO / "fixtures" / "pdf-text-v2" / "outlined-report.pdf"
    doc = parse_document(pdf.read_bytes(), "outlined-report.pdf")
    assert doc.parser_version == "pdf-text-v3" and not CHUNKER.accepts(doc)
    with pytest.raises(UnsupportedDocumentError) as info:
        CHUNKER.chunk(doc, ChunkPolicy())
    assert str(info.value) == (
        "pdf-page-v1 needs blocks from parser pdf-text-v1, but outlined-report.pdf was parsed "
        "by pdf-text-v3; pass --parsers pdf-text-v1 (parser_version='pdf-text-v1' in the "
        "library)"
    )
    pinned = parse_document(pdf.read_bytes(), "outlined-report.pdf", parser_version="pdf-text-v1")
    assert CHUNKER.chunk(pinned, ChunkPolicy())  # the advice works


def test_empty_documents_are_accepted_only_when_they_are_pdfs() -> None:
    empty_pdf = page_doc([])
    assert CHUNKER.accepts(empty_pdf)
    assert CHUNKER.chunk(empty_pdf, ChunkPolicy()) == []
    empty_md = empty_pdf.model_copy(update={"media_type": "text/markdown"})
    assert not CHUNKER.accepts(empty_md)


def test_span_offsets_are_relative_to_the_page_text() -> None:
    """A block covering part of a page (offset span) yields chunk spans in page offsets."""
    block = page_doc([SENTENCE * 3]).blocks[0]
    shifted = block.model_copy(update={"spans": (PageSpan(page=4, char_start=100, char_end=130),)})
    doc = page_doc([]).model_copy(update={"blocks": (shifted,)})
    chunks = CHUNKER.chunk(doc, ChunkPolicy(target_tokens=4, overlap_tokens=0))
    assert [(span_of(c).char_start, span_of(c).char_end) for c in chunks] == [
        (100, 110),
        (110, 120),
        (120, 130),
    ]


# --- fixtures and goldens ------------------------------------------------------------------

POLICIES = (
    ChunkPolicy(),
    ChunkPolicy(target_tokens=128, overlap_tokens=16),
    ChunkPolicy(target_tokens=20, overlap_tokens=19),
    ChunkPolicy(target_tokens=1, overlap_tokens=0),
)


@pytest.mark.parametrize("name", PARSEABLE_FIXTURES)
def test_every_fixture_chunk_is_an_exact_page_slice(name: str) -> None:
    doc = parse_fixture(name)
    texts = page_texts(doc)
    for policy in POLICIES:
        chunks = CHUNKER.chunk(doc, policy)
        assert chunks
        assert_exact_slices(doc, chunks)
        pages_with_text = sorted(p for p, t in texts.items() if t.strip())
        assert sorted({span_of(c).page for c in chunks}) == pages_with_text
        assert len({c.chunk_id for c in chunks}) == len(chunks)


def test_one_long_page_splits_under_the_default_policy() -> None:
    chunks = CHUNKER.chunk(parse_fixture("one-long-page.pdf"), ChunkPolicy())
    assert len(chunks) > 1
    assert {span_of(c).page for c in chunks} == {1}


def test_golden_one_long_page_small_budget() -> None:
    doc = parse_fixture("one-long-page.pdf")
    chunks = CHUNKER.chunk(doc, ChunkPolicy(target_tokens=128, overlap_tokens=16))
    assert_golden(
        "pdf-page-v1", "one-long-page-t128-o16", [c.model_dump(mode="json") for c in chunks]
    )


def test_golden_with_empty_page() -> None:
    chunks = CHUNKER.chunk(parse_fixture("with-empty-page.pdf"), ChunkPolicy())
    assert_golden("pdf-page-v1", "with-empty-page", [c.model_dump(mode="json") for c in chunks])


_SCRIPT = """
import json, sys
from kebab_chunk.model import ChunkPolicy
from tests.chunkers.test_pdf_page_v1 import CHUNKER, page_doc
pages = json.loads(sys.argv[1])
chunks = CHUNKER.chunk(page_doc(pages), ChunkPolicy(target_tokens=20, overlap_tokens=4))
print(json.dumps([c.model_dump(mode="json") for c in chunks]))
"""


def test_output_is_identical_across_hash_seeds() -> None:
    pages = ["Alpha. Beta gamma.\n\nDelta " * 20, "", "漢字かな" * 40, "Tail."]
    outputs = outputs_under_hash_seeds(_SCRIPT, ("1", "2"), [json.dumps(pages)])
    assert outputs[0] == outputs[1]
    assert len(json.loads(outputs[0])) > 5
