"""pdf-text-v2: outline headings, a title, running headers/footers dropped, exact spans.

Each defect of ``pdf-text-v1`` is shown on v1 (which must keep it: its output is frozen)
and shown fixed on v2, on ``fixtures/pdf-text-v2/outlined-report.pdf`` (six pages, a
two-level outline with one entry not printed on its page, a running header and a
"Page N of 6" footer, no metadata title).
"""

from __future__ import annotations

import importlib.util
import io
import itertools
from pathlib import Path
from types import ModuleType

import pypdf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.errors import EncryptedDocumentError, LimitExceededError, ParseError
from kebab_chunk.model import (
    CanonicalDocument,
    ChunkPolicy,
    HeadingBlock,
    PageSpan,
    ParagraphBlock,
)
from kebab_chunk.parsers import ParseLimits, parse_document
from kebab_chunk.parsers._pdf import PdfTextParser, _body, _lines, _running
from kebab_chunk.parsers.registry import get_parser_by_version, parser_versions_for, version_row
from tests.golden import assert_golden

REPO = Path(__file__).resolve().parents[2]
V1_DIR = REPO / "fixtures" / "pdf"
V2_DIR = REPO / "fixtures" / "pdf-text-v2"
REPORT = "outlined-report.pdf"


def load(path: Path, name: str) -> ModuleType:
    """A fixture generator script as a module (fixtures/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = load(V2_DIR / "make_fixtures.py", "kebab_pdf_v2_fixtures")
GEN_V1 = load(V1_DIR / "make_fixtures.py", "kebab_pdf_fixtures_for_v2")
REPORT_BYTES = (V2_DIR / REPORT).read_bytes()


def v1(raw: bytes, uri: str = "pdf/report.pdf") -> CanonicalDocument:
    return get_parser_by_version("pdf-text-v1").parse(raw, uri)


def v2(
    raw: bytes, uri: str = "pdf/report.pdf", limits: ParseLimits | None = None
) -> CanonicalDocument:
    return get_parser_by_version("pdf-text-v2").parse(raw, uri, limits or ParseLimits())


def page_texts(raw: bytes) -> list[str]:
    """pypdf's text of every page: what every ``PageSpan`` indexes into."""
    return [page.extract_text() for page in pypdf.PdfReader(io.BytesIO(raw)).pages]


def assert_exact(doc: CanonicalDocument, raw: bytes) -> None:
    """Every block is the exact slice of the page text its single span names."""
    texts = page_texts(raw)
    for block in doc.blocks:
        assert len(block.spans) == 1
        span = block.spans[0]
        assert isinstance(span, PageSpan)
        assert texts[span.page - 1][span.char_start : span.char_end] == block.text


# --- the defects: v1 has them, v2 does not ------------------------------------------------


def test_v1_gives_no_heading_path_even_with_an_outline() -> None:
    doc = v1(REPORT_BYTES)
    assert len(pypdf.PdfReader(io.BytesIO(REPORT_BYTES)).outline) > 0
    assert not [b for b in doc.blocks if isinstance(b, HeadingBlock)]
    assert all(block.heading_path == () for block in doc.blocks)


def test_v2_takes_headings_and_levels_from_the_outline() -> None:
    doc = v2(REPORT_BYTES)
    headings = [b for b in doc.blocks if isinstance(b, HeadingBlock)]
    assert [(h.level, h.title, h.spans[0].page) for h in headings] == [  # type: ignore[union-attr]
        (1, "1 Introduction", 1),
        (2, "1.1 Scope", 1),
        (1, "2 Methods", 2),
        (2, "2.1 Sampling", 3),
        (1, "3 Results", 5),
        (1, "A Raw Data", 6),
    ]
    paths = {b.text.split("\n")[0]: b.heading_path for b in doc.blocks if b.kind == "paragraph"}
    assert paths["This report describes how the kebab stand was measured."] == ("1 Introduction",)
    assert paths["The scope covers one stand over one summer."] == ("1 Introduction", "1.1 Scope")
    # Page 2 opens with the tail of 1.1, then 2 Methods starts.
    assert paths["The scope leaves out the winter months."] == ("1 Introduction", "1.1 Scope")
    assert paths["We counted customers at noon and in the evening."] == ("2 Methods",)
    assert paths["Evening counts were twice the noon counts."] == ("3 Results",)


def test_v1_has_no_title_without_metadata_and_v2_takes_the_first_outline_entry() -> None:
    assert v1(REPORT_BYTES).title is None
    assert v2(REPORT_BYTES).title == "1 Introduction"


def test_metadata_title_wins_over_the_outline_and_a_blank_one_does_not() -> None:
    assert v2(GEN.outlined_report(title="Field report, summer")).title == "Field report, summer"
    assert v2(GEN.outlined_report(title="   ")).title == "1 Introduction"
    assert v2((V1_DIR / "three-page-en.pdf").read_bytes()).title == "Three page sample"


def test_v1_repeats_the_running_header_and_footer_in_every_page() -> None:
    doc = v1(REPORT_BYTES)
    assert len(doc.blocks) == 6
    for number, block in enumerate(doc.blocks, start=1):
        assert GEN.RUNNING_HEADER in block.text
        assert f"Page {number} of 6" in block.text


def test_v2_drops_the_running_header_and_footer_and_says_so() -> None:
    doc = v2(REPORT_BYTES)
    assert doc.blocks
    for block in doc.blocks:
        assert GEN.RUNNING_HEADER not in block.text
        assert " of 6" not in block.text
    assert doc.metadata["running_lines_dropped"] == 12
    assert any(
        w.startswith("12 running header/footer lines") and GEN.RUNNING_HEADER in w
        for w in doc.warnings
    )
    kept = "".join(b.text for b in doc.blocks)
    for text in GEN.PAGES:  # nothing but the running lines went missing
        for line in text.split("\n"):
            assert line in kept


# --- citations -----------------------------------------------------------------------------


def test_every_v2_span_is_the_exact_page_slice() -> None:
    assert_exact(v2(REPORT_BYTES), REPORT_BYTES)


def test_heading_blocks_cite_the_printed_title_with_its_number() -> None:
    doc = v2(REPORT_BYTES)
    appendix = [b for b in doc.blocks if isinstance(b, HeadingBlock) and b.title == "A Raw Data"]
    assert len(appendix) == 1
    assert appendix[0].text.rstrip() == "Appendix A Raw Data"
    for block in doc.blocks:
        if isinstance(block, HeadingBlock):
            assert block.text.rstrip().endswith(block.title)
            assert block.text.strip() == block.text.rstrip()  # starts on the title line


def test_a_page_s_blocks_tile_its_kept_text() -> None:
    """Consecutive blocks of a page touch, so a page chunker can cut across them exactly."""
    doc = v2(REPORT_BYTES)
    spans = [b.spans[0] for b in doc.blocks]
    for left, right in itertools.pairwise(spans):
        assert isinstance(left, PageSpan) and isinstance(right, PageSpan)
        if left.page == right.page:
            assert left.char_end == right.char_start
    for block in doc.blocks:
        assert block.text == block.text.lstrip()  # whitespace never starts a block


def test_an_outline_title_not_on_its_page_heads_the_section_without_a_block() -> None:
    doc = v2(REPORT_BYTES)
    assert "2.2 Data Entry" not in [b.title for b in doc.blocks if isinstance(b, HeadingBlock)]
    assert all("Data Entry" not in b.text for b in doc.blocks)
    page4 = [b for b in doc.blocks if b.spans[0].page == 4]  # type: ignore[union-attr]
    assert [type(b) for b in page4] == [ParagraphBlock]
    assert page4[0].heading_path == ("2 Methods", "2.2 Data Entry")
    assert doc.metadata["outline_headings"] == 7
    assert doc.metadata["outline_headings_cited"] == 6
    assert any("1 of 7 outline headings were not found" in w for w in doc.warnings)


def test_a_mention_inside_a_line_is_not_taken_for_the_heading() -> None:
    """'Methods' stands mid-line on page 2 before the real heading line; the line wins."""
    doc = v2(REPORT_BYTES)
    methods = next(b for b in doc.blocks if isinstance(b, HeadingBlock) and b.title == "2 Methods")
    assert methods.text == "2 Methods\n"
    before = doc.blocks[doc.blocks.index(methods) - 1]
    assert "As the Methods section explains" in before.text


# --- running-line rules, on page texts -------------------------------------------------------


def dropped_lines(texts: list[str]) -> list[list[str]]:
    """Per page, the running lines the parser leaves out."""
    pages = [_lines(text) for text in texts]
    running = _running(pages)
    return [
        [line.raw for line in _body(lines, keys, len(text))[2]]
        for text, lines, keys in zip(texts, pages, running, strict=True)
    ]


def test_a_line_on_most_pages_is_running_and_one_on_few_is_not() -> None:
    words = ["alpha", "beta", "gamma", "delta", "epsilon"]
    texts = [f"Acme Manual\nAbout {w}.\nMore on {w}.\n{i + 1}" for i, w in enumerate(words)]
    texts[1] = "Only here\n" + texts[1]  # a top line on 2 of 5 pages is kept
    texts[3] = "Only here\n" + texts[3]
    dropped = dropped_lines(texts)
    assert dropped[0] == ["Acme Manual", "1"]
    assert all("Only here" not in page for page in dropped)
    # The walk from the top stops at the kept line, so "Acme Manual" below it stays there;
    # the walk from the bottom still drops the page number.
    assert dropped[1] == ["2"]


def test_numbered_chapter_headers_on_consecutive_pages_are_running() -> None:
    texts = [
        "Chapter 2: Setup 3\nFirst.",
        "Chapter 2: Setup 4\nSecond.",
        "Chapter 2: Setup 5\nThird.",
        "Chapter 3: Usage 6\nFourth.",
        "Chapter 3: Usage 7\nFifth.",
    ]
    dropped = dropped_lines(texts)
    assert dropped[:3] == [["Chapter 2: Setup 3"], ["Chapter 2: Setup 4"], ["Chapter 2: Setup 5"]]
    assert dropped[3:] == [[], []]  # a run of two pages is not enough


def test_documents_shorter_than_three_pages_keep_every_line() -> None:
    texts = ["Header\nOne.\nFooter", "Header\nTwo.\nFooter"]
    raw = GEN_V1._bytes(GEN_V1._pdf(texts))
    doc = v2(raw)
    assert doc.metadata["running_lines_dropped"] == 0
    assert [b.text for b in doc.blocks] == [b.text for b in v1(raw).blocks]


# --- documents without an outline, and the rest of v1's contract ------------------------------


def test_without_outline_or_running_lines_v2_gives_v1_s_page_texts() -> None:
    raw = (V1_DIR / "three-page-en.pdf").read_bytes()
    old, new = v1(raw), v2(raw)
    assert new.parser_version == "pdf-text-v2"
    assert [b.text for b in new.blocks] == [b.text.strip() for b in old.blocks]
    assert all(isinstance(b, ParagraphBlock) and b.heading_path == () for b in new.blocks)
    assert new.metadata == {
        "page_count": 3,
        "outline_headings": 0,
        "outline_headings_cited": 0,
        "running_lines_dropped": 0,
    }


def test_empty_pages_give_no_block_but_keep_their_warning() -> None:
    doc = v2((V1_DIR / "with-empty-page.pdf").read_bytes())
    assert [b.spans[0].page for b in doc.blocks] == [1, 4]  # type: ignore[union-attr]
    assert [w for w in doc.warnings if w.startswith("page ")][:2] == [
        "page 2 has no extractable text (empty or whitespace)",
        "page 3 has no extractable text (empty or whitespace)",
    ]
    assert doc.metadata["page_count"] == 4


def test_an_unreadable_outline_costs_the_headings_not_the_document(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(self: pypdf.PdfReader) -> object:
        raise pypdf.errors.PdfReadError("bad outline")

    monkeypatch.setattr(pypdf.PdfReader, "outline", property(broken))
    doc = v2(REPORT_BYTES)
    assert not [b for b in doc.blocks if isinstance(b, HeadingBlock)]
    assert doc.title is None
    assert any(w.startswith("the outline (bookmarks) is unreadable") for w in doc.warnings)
    assert doc.metadata["running_lines_dropped"] == 12


def test_outline_entries_pointing_nowhere_give_no_heading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pypdf.PdfReader, "get_destination_page_number", lambda self, d: None)
    doc = v2(REPORT_BYTES)
    assert not [b for b in doc.blocks if isinstance(b, HeadingBlock)]
    assert doc.title == "1 Introduction"  # the title still comes from the outline
    assert "7 outline entries point to no page of the document; they give no heading" in (
        doc.warnings
    )


def test_errors_follow_v1_s_contract() -> None:
    with pytest.raises(ParseError) as info:
        v2((V1_DIR / "truncated.pdf").read_bytes(), "pdf/truncated.pdf")
    assert "pdf/truncated.pdf" in str(info.value)
    with pytest.raises(EncryptedDocumentError):
        v2((V1_DIR / "encrypted-real-password.pdf").read_bytes())
    with pytest.raises(LimitExceededError):
        v2(REPORT_BYTES, limits=ParseLimits(max_pages=5))
    with pytest.raises(ParseError):
        v2(b"not a pdf at all")
    assert [b.text for b in v2((V1_DIR / "encrypted-empty-password.pdf").read_bytes()).blocks]


class StepClock:
    """A fake monotonic clock that advances ``step`` seconds per reading."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_time_budget_stops_at_a_page_boundary() -> None:
    parser = PdfTextParser(version_row("pdf-text-v2"), clock=StepClock(step=10.0))
    with pytest.raises(LimitExceededError) as info:
        parser.parse(REPORT_BYTES, "slow.pdf", ParseLimits(time_budget_s=25))
    assert "before page 3" in str(info.value) and "slow.pdf" in str(info.value)


def test_outline_entries_count_against_max_blocks() -> None:
    with pytest.raises(LimitExceededError) as info:
        v2(REPORT_BYTES, limits=ParseLimits(max_blocks=5))
    assert "outline entries" in str(info.value)


_MUTATED_BASE = REPORT_BYTES


@settings(max_examples=40, deadline=None)
@given(
    cut=st.integers(min_value=0, max_value=len(_MUTATED_BASE)),
    flips=st.lists(
        st.tuples(st.integers(0, len(_MUTATED_BASE) - 1), st.integers(0, 255)), max_size=6
    ),
)
def test_mutated_bytes_give_an_exact_document_or_a_parse_error(
    cut: int, flips: list[tuple[int, int]]
) -> None:
    raw = bytearray(_MUTATED_BASE)
    for index, value in flips:
        raw[index] = value
    data = bytes(raw[:cut])
    try:
        doc = v2(data, "fuzz.pdf")
    except ParseError as exc:
        assert "fuzz.pdf" in str(exc)
    else:
        assert_exact(doc, data)


# --- determinism, registry, goldens ---------------------------------------------------------


def test_parsing_is_repeatable_and_round_trips_through_json() -> None:
    doc = v2(REPORT_BYTES)
    assert doc == v2(REPORT_BYTES)
    assert CanonicalDocument.model_validate_json(doc.model_dump_json()) == doc


def test_registered_by_version_beside_v1() -> None:
    assert parser_versions_for("pdf-text-v2") == ("application/pdf",)
    assert get_parser_by_version("pdf-text-v2").version == "pdf-text-v2"
    doc = parse_document(REPORT_BYTES, "pdf/report.pdf", parser_version="pdf-text-v2")
    assert doc == v2(REPORT_BYTES)
    # pdf-text-v3 replaced it as the default: v2 is chosen by name only
    assert parse_document(REPORT_BYTES, "pdf/report.pdf").parser_version == "pdf-text-v3"


def test_fixture_generator_reproduces_the_committed_text(tmp_path: Path) -> None:
    GEN.main(["--out", str(tmp_path)])
    assert page_texts((tmp_path / REPORT).read_bytes()) == page_texts(REPORT_BYTES)
    assert GEN.outlined_report() == GEN.outlined_report()


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("outlined-report", REPORT_BYTES),
        ("three-page-en", (V1_DIR / "three-page-en.pdf").read_bytes()),
    ],
)
def test_golden(name: str, raw: bytes) -> None:
    assert_golden("pdf-text-v2", name, v2(raw, f"pdf/{name}.pdf").model_dump(mode="json"))


# --- what the chunkers make of it -----------------------------------------------------------


def test_hierarchical_and_hybrid_chunks_carry_the_outline_heading_path() -> None:
    doc = v2(REPORT_BYTES)
    for label in ("hierarchical-v1", "hybrid-v1"):
        chunks = get_chunker(label).chunk(doc, ChunkPolicy())
        assert chunks
        assert all(c.heading_path for c in chunks), label
        results = next(c for c in chunks if "Evening counts" in c.text)
        assert results.heading_path == ("3 Results",)
        assert all(GEN.RUNNING_HEADER not in c.text for c in chunks)
    old = get_chunker("hybrid-v1").chunk(v1(REPORT_BYTES), ChunkPolicy())
    assert all(c.heading_path == () for c in old)
    assert all(GEN.RUNNING_HEADER in c.text for c in old)


def test_pdf_page_v1_refuses_documents_with_heading_blocks() -> None:
    """pdf-page-v1 takes only paragraphs: with an outline, use pdf-page-v2 or hybrid-v1."""
    chunker = get_chunker("pdf-page-v1")
    assert not chunker.accepts(v2(REPORT_BYTES))
    assert chunker.accepts(v2((V1_DIR / "three-page-en.pdf").read_bytes()))
