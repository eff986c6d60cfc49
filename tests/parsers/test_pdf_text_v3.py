"""pdf-text-v3: headings of a PDF without an outline, found by their type.

On ``fixtures/pdf-text-v3/typeset-manual.pdf`` (no outline; a two-line title, sections,
subsections and a bold heading, and lines that only look like headings) v2 sees no
heading at all; v3 finds exactly the real ones, at levels that follow their sizes, with
exact spans. Where an outline exists v3 reads it as v2 does.
"""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path
from types import ModuleType

import pypdf
import pytest

from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.model import CanonicalDocument, ChunkPolicy, HeadingBlock, PageSpan
from kebab_chunk.parsers import ParseLimits, parse_document
from kebab_chunk.parsers._pdf_fonts import FontCollector, _Line, font_headings
from kebab_chunk.parsers.registry import get_parser_by_version
from tests.golden import assert_golden

REPO = Path(__file__).resolve().parents[2]
V3_DIR = REPO / "fixtures" / "pdf-text-v3"
MANUAL = (V3_DIR / "typeset-manual.pdf").read_bytes()
REPORT = (REPO / "fixtures" / "pdf-text-v2" / "outlined-report.pdf").read_bytes()
TITLE = "Operating the Kebab Stand: A Manual for New Staff"


def parse(version: str, raw: bytes, uri: str = "pdf/manual.pdf") -> CanonicalDocument:
    return get_parser_by_version(version).parse(raw, uri)


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("kebab_pdf_v3_fixtures", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_v3_is_the_default_for_pdf() -> None:
    assert parse_document(MANUAL, "pdf/manual.pdf") == parse("pdf-text-v3", MANUAL)


def test_v2_sees_no_heading_in_a_pdf_without_outline() -> None:
    doc = parse("pdf-text-v2", MANUAL)
    assert not [b for b in doc.blocks if isinstance(b, HeadingBlock)]
    assert doc.title is None


def test_v3_finds_the_typeset_headings_at_levels_that_follow_their_size() -> None:
    doc = parse("pdf-text-v3", MANUAL)
    headings = [(b.level, " ".join(b.text.split())) for b in doc.blocks if b.kind == "heading"]
    assert headings == [
        (1, TITLE),  # 20 pt over two lines: one heading
        (2, "Opening the Stand"),  # 15 pt
        (3, "Preparing the Meat"),  # 12.5 pt
        (2, "Serving Customers"),
        (4, "Payments and Change"),  # bold at the body size: below every larger size
        (2, "Closing Down"),
        (3, "Cleaning the Grill"),
        (2, "Safety"),
    ]
    assert doc.title == TITLE
    assert doc.metadata["font_headings"] == doc.metadata["font_headings_cited"] == 8
    assert doc.metadata["outline_headings"] == 0
    text = "\n".join(b.text for b in doc.blocks)
    # look-alikes stay text: the year, the five-line lead set large, the bold term opening
    # a line, the bold symbols; the running header is left out as in v2
    for kept in ("2024", "This manual explains", "Marinade: keep the bowl", "-> => <= !="):
        assert kept in text
        assert not any(kept in b.text for b in doc.blocks if b.kind == "heading")
    assert "Kebab Stand Operations Manual" not in text


def test_v3_blocks_cite_exact_page_text() -> None:
    pages = [p.extract_text() for p in pypdf.PdfReader(io.BytesIO(MANUAL)).pages]
    doc = parse("pdf-text-v3", MANUAL)
    for block in doc.blocks:
        [span] = block.spans
        assert isinstance(span, PageSpan)
        assert pages[span.page - 1][span.char_start : span.char_end] == block.text
    paths = {b.text.split("\n")[0]: b.heading_path for b in doc.blocks if b.kind != "heading"}
    assert paths["Use the long brush and warm water only."] == (
        TITLE,
        "Closing Down",
        "Cleaning the Grill",
    )


def test_an_outline_wins_over_type() -> None:
    v2, v3 = parse("pdf-text-v2", REPORT), parse("pdf-text-v3", REPORT)
    assert [(b.kind, b.text, b.heading_path) for b in v3.blocks] == [
        (b.kind, b.text, b.heading_path) for b in v2.blocks
    ]
    assert v3.metadata == {**v2.metadata, "font_headings": 0}


def test_chunks_of_v3_carry_the_found_heading_path() -> None:
    doc = parse("pdf-text-v3", MANUAL)
    chunks = get_chunker("pdf-page-v3").chunk(doc, ChunkPolicy(target_tokens=64, overlap_tokens=0))
    safety = next(c for c in chunks if "fire blanket" in c.text)
    assert safety.heading_path == (TITLE, "Safety")


def _line(text: str, size: float, bold: bool = False) -> _Line:
    line = _Line([text])
    line.styles[(size, bold)] += sum(1 for c in text if not c.isspace())
    return line


def test_font_rules_on_lines() -> None:
    body = [_line("Running text of the page goes on for a while here.", 10.0) for _ in range(8)]
    # a five-line paragraph set large is no heading; three large lines in a row are one
    lead = [_line(f"Lead line {n} set large", 14.0) for n in range(5)]
    title = [_line(f"Title part {n}", 14.0) for n in range(3)]
    pages = [[*title, *body], [*lead, *body]]
    assert [(h.level, h.title, h.page) for h in font_headings(pages)] == [
        (1, "Title part 0 Title part 1 Title part 2", 1)
    ]
    # a line on three pages is running text; numbers and symbols are not titles
    pages = [[_line("Annual Report", 14.0), _line("2024", 14.0), *body] for _ in range(3)]
    pages.append([_line("Risk Factors", 14.0), _line("=> -> <=", 14.0), *body])
    pages.append([_line("Total revenue 12,345 11,234", 14.0), _line("Item 1A. Risks", 14.0)])
    assert [h.title for h in font_headings(pages)] == ["Risk Factors", "Item 1A. Risks"]
    # bold marks headings only where the running text is not mostly bold
    bold_body = [_line("Bold running text of the page.", 10.0, bold=True) for _ in range(8)]
    assert font_headings([[_line("Scope", 10.0, bold=True), *bold_body]]) == []
    found = font_headings([[_line("Scope", 10.0, bold=True), *body]])
    assert [(h.level, h.title) for h in found] == [(1, "Scope")]
    assert font_headings([]) == []


def test_collector_measures_the_effective_size_and_reads_bold_from_the_font_name() -> None:
    collector = FontCollector()
    bold = {"/BaseFont": "/ABCDEF+Helvetica-Bold"}
    collector("Big", [1, 0, 0, 2, 0, 0], [1, 0, 0, 1.5, 0, 0], bold, 10.0)
    collector("\nsmall text", [1, 0, 0, 1, 0, 0], [1, 0, 0, 1, 0, 0], {}, 9.0)
    first, second = collector.lines
    assert first.text() == "Big" and dict(first.styles) == {(30.0, True): 3}
    assert second.text() == "small text" and dict(second.styles) == {(9.0, False): 9}


def test_collector_takes_broken_values_without_raising() -> None:
    collector = FontCollector()
    collector("a", [], [], None, 10.0)  # matrices too short
    collector("b", [1, 0, 0, 1, 0, 0], [1, 0, 0, float("inf"), 0, 0], 7, 10.0)  # font not a dict
    collector("c", [1, 0, 0, 1, 0, 0], [1, 0, 0, 1, 0, 0], {}, None)  # type: ignore[arg-type]
    [line] = collector.lines
    assert line.text() == "abc" and dict(line.styles) == {(0.0, False): 3}


def test_more_type_headings_than_max_blocks_gives_none_not_an_error() -> None:
    limits = ParseLimits(max_blocks=6)  # the 4 pages fit, with their 8 headings they do not
    doc = get_parser_by_version("pdf-text-v3").parse(MANUAL, "pdf/manual.pdf", limits)
    assert [b.kind for b in doc.blocks] == ["paragraph"] * 4
    assert doc.metadata["font_headings"] == 0
    assert any("more than max_blocks=6" in w for w in doc.warnings)


def test_a_page_whose_extraction_fails_gives_no_heading(monkeypatch: pytest.MonkeyPatch) -> None:
    real = pypdf.PageObject.extract_text
    calls = []

    def flaky(page: pypdf.PageObject, *args: object, **kwargs: object) -> str:
        calls.append(1)
        if len(calls) == 3:  # page 3: a heading-sized line is seen, then pypdf fails
            visitor = kwargs["visitor_text"]
            assert callable(visitor)
            visitor("Phantom Section", [1, 0, 0, 1, 0, 0], [1, 0, 0, 1, 0, 0], {}, 30.0)
            raise ValueError("broken content stream")
        return real(page, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pypdf.PageObject, "extract_text", flaky)
    doc = parse("pdf-text-v3", MANUAL)
    assert any("page 3: text extraction failed" in w for w in doc.warnings)
    headings = [" ".join(b.text.split()) for b in doc.blocks if b.kind == "heading"]
    assert "Phantom Section" not in headings and "Phantom Section" not in str(doc.warnings)
    assert "Closing Down" not in headings  # page 3's own headings went with its text
    assert headings[:2] == [TITLE, "Opening the Stand"]


def test_generator_rebuilds_the_committed_fixture() -> None:
    assert _load(V3_DIR / "make_fixtures.py").typeset_manual() == MANUAL


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("typeset-manual", MANUAL),
        ("outlined-report", REPORT),
        ("three-page-en", (REPO / "fixtures" / "pdf" / "three-page-en.pdf").read_bytes()),
    ],
)
def test_golden(name: str, raw: bytes) -> None:
    doc = parse("pdf-text-v3", raw, f"pdf/{name}.pdf")
    assert_golden("pdf-text-v3", name, doc.model_dump(mode="json"))
