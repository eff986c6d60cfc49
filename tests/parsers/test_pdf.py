"""pdf-text-v1: one page-spanned paragraph per page, and every bad input as a clear error."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import blake3
import fpdf
import pypdf
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.errors import EncryptedDocumentError, LimitExceededError, ParseError
from kebab_chunk.model import CanonicalDocument, PageSpan, ParagraphBlock
from kebab_chunk.model.ids import doc_id
from kebab_chunk.parsers import ParseLimits, parse_document
from kebab_chunk.parsers._pdf import PdfTextParser
from kebab_chunk.parsers.base import BlockIds
from kebab_chunk.parsers.registry import get_parser_by_version, version_row
from tests.golden import assert_golden

PDF_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "pdf"


def load_generator() -> ModuleType:
    """fixtures/pdf/make_fixtures.py as a module (fixtures/ is not a package)."""
    spec = importlib.util.spec_from_file_location(
        "kebab_pdf_fixtures", PDF_DIR / "make_fixtures.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = load_generator()


def fixture_bytes(name: str) -> bytes:
    return (PDF_DIR / name).read_bytes()


def parse(name: str, limits: ParseLimits | None = None) -> CanonicalDocument:
    return get_parser_by_version("pdf-text-v1").parse(
        fixture_bytes(name), f"pdf/{name}", limits or ParseLimits()
    )


def squash(text: str) -> str:
    """Whitespace-normalised text (extraction re-wraps lines where the PDF wrapped them)."""
    return " ".join(text.split())


def hand_made_pdf(page_contents: list[bytes]) -> bytes:
    """A minimal uncompressed PDF with the given raw content streams, one page each."""
    n = len(page_contents)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids ["
        + b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(n))
        + b"] /Count %d >>" % n,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i, content in enumerate(page_contents):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 300] /Contents %d 0 R "
            b"/Resources << /Font << /F1 3 0 R >> >> >>" % (5 + 2 * i)
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def text_op(text: str) -> bytes:
    return b"BT /F1 12 Tf 20 200 Td (" + text.encode("latin-1") + b") Tj ET"


# --- the happy path ----------------------------------------------------------------------


def test_three_pages_give_three_page_spanned_paragraphs() -> None:
    raw = fixture_bytes("three-page-en.pdf")
    doc = get_parser_by_version("pdf-text-v1").parse(raw, "pdf/three-page-en.pdf")
    assert doc.parser_version == "pdf-text-v1"
    assert doc.media_type == "application/pdf"
    assert doc.doc_id == doc_id("pdf/three-page-en.pdf")
    assert doc.content_hash == blake3.blake3(raw).hexdigest()
    assert doc.title == "Three page sample"
    assert doc.warnings == ()
    assert len(doc.blocks) == 3
    ids = BlockIds(doc.doc_id)
    for number, (block, written) in enumerate(zip(doc.blocks, GEN.THREE_PAGES, strict=True), 1):
        assert isinstance(block, ParagraphBlock)
        assert squash(block.text) == squash(written)
        assert block.spans == (PageSpan(page=number, char_start=0, char_end=len(block.text)),)
        assert block.heading_path == ()
        assert block.block_id == ids.next("paragraph", block.text)


def test_text_is_pypdf_extract_text_of_each_page() -> None:
    raw = fixture_bytes("one-long-page.pdf")
    expected = [page.extract_text() for page in pypdf.PdfReader(io.BytesIO(raw)).pages]
    doc = get_parser_by_version("pdf-text-v1").parse(raw, "pdf/one-long-page.pdf")
    assert [block.text for block in doc.blocks] == expected
    assert doc.title == "One long page"


def test_golden_three_page_document() -> None:
    assert_golden(
        "pdf-text-v1", "three-page-en", parse("three-page-en.pdf").model_dump(mode="json")
    )


def test_document_round_trips_through_json() -> None:
    doc = parse("with-empty-page.pdf")
    assert CanonicalDocument.model_validate_json(doc.model_dump_json()) == doc


def test_parsing_is_repeatable() -> None:
    assert parse("three-page-en.pdf") == parse("three-page-en.pdf")


def test_registry_routes_pdf_bytes_to_this_parser_by_version() -> None:
    doc = parse_document(
        fixture_bytes("three-page-en.pdf"), "pdf/three-page-en.pdf", parser_version="pdf-text-v1"
    )
    assert doc.parser_version == "pdf-text-v1"
    assert doc == parse("three-page-en.pdf")


def test_empty_and_whitespace_pages_keep_blocks_and_warn() -> None:
    doc = parse("with-empty-page.pdf")
    assert [b.spans[0].page for b in doc.blocks] == [1, 2, 3, 4]  # type: ignore[union-attr]
    assert doc.blocks[1].text == ""
    assert doc.blocks[2].text.strip() == ""
    page_warnings = [w for w in doc.warnings if w.startswith("page ")]
    assert len(page_warnings) == 2
    assert page_warnings[0].startswith("page 2 ") and page_warnings[1].startswith("page 3 ")
    assert squash(doc.blocks[3].text) == "Page four has text again."


def test_document_without_title_metadata_has_none() -> None:
    assert parse("encrypted-empty-password.pdf").title is None


# --- encryption ----------------------------------------------------------------------------


def test_empty_user_password_is_tried() -> None:
    doc = parse("encrypted-empty-password.pdf")
    assert [squash(b.text) for b in doc.blocks] == [
        "This page is encrypted. Its text is readable with the right password."
    ]


def test_real_password_gives_encrypted_error_naming_the_file() -> None:
    with pytest.raises(EncryptedDocumentError) as info:
        parse("encrypted-real-password.pdf")
    assert "pdf/encrypted-real-password.pdf" in str(info.value)
    assert info.value.error_type == "encrypted"
    # The fixture really is readable with its password: the error is about the password.
    reader = pypdf.PdfReader(io.BytesIO(fixture_bytes("encrypted-real-password.pdf")))
    assert reader.decrypt(GEN.USER_PASSWORD) != pypdf.PasswordType.NOT_DECRYPTED


def test_aes_encryption_with_empty_password_is_opened() -> None:
    pdf = GEN._pdf(["AES protected page."], title="AES")
    pdf.set_encryption(
        owner_password="owner",
        user_password="",
        encryption_method=fpdf.enums.EncryptionMethod.AES_128,
    )
    doc = get_parser_by_version("pdf-text-v1").parse(bytes(pdf.output()), "aes.pdf")
    assert [squash(b.text) for b in doc.blocks] == ["AES protected page."]


# --- broken input ----------------------------------------------------------------------------


def test_truncated_pdf_gives_parse_error_naming_the_file() -> None:
    with pytest.raises(ParseError) as info:
        parse("truncated.pdf")
    assert type(info.value) is ParseError
    assert info.value.error_type == "parse_error"
    assert "pdf/truncated.pdf" in str(info.value)
    assert isinstance(info.value.__cause__, pypdf.errors.PyPdfError)


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"hello, I am plain text with a .pdf name\n",
        b"<html><body>not a pdf</body></html>",
        bytes(range(256)) * 4,
        b"%PDF-1.7\n",
        b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n%%EOF\n",
    ],
    ids=["empty", "text", "html", "binary", "header-only", "no-pages-object"],
)
def test_non_pdf_or_broken_bytes_give_parse_error_naming_the_file(raw: bytes) -> None:
    with pytest.raises(ParseError) as info:
        get_parser_by_version("pdf-text-v1").parse(raw, "docs/not-really.pdf")
    assert "docs/not-really.pdf" in str(info.value)
    assert str(info.value).endswith(".")


def test_deep_nesting_gives_parse_error_not_recursion_error() -> None:
    depth = 20_000
    content = b"BT /F1 12 Tf 20 200 Td " + b"[" * depth + b"(x)" + b"]" * depth + b" TJ ET"
    with pytest.raises(ParseError) as info:
        get_parser_by_version("pdf-text-v1").parse(hand_made_pdf([content]), "deep.pdf")
    assert "nested too deeply" in str(info.value)


def test_one_unreadable_page_degrades_with_a_warning() -> None:
    depth = 20_000
    bad = b"BT /F1 12 Tf 20 200 Td " + b"[" * depth + b"(x)" + b"]" * depth + b" TJ ET"
    doc = get_parser_by_version("pdf-text-v1").parse(
        hand_made_pdf([text_op("Good page."), bad]), "mixed.pdf"
    )
    assert [b.text for b in doc.blocks] == ["Good page.", ""]
    assert any(w.startswith("page 2: text extraction failed") for w in doc.warnings)


_THREE_PAGES = fixture_bytes("three-page-en.pdf")


@given(
    cut=st.integers(min_value=0, max_value=len(_THREE_PAGES)),
    flips=st.lists(
        st.tuples(st.integers(0, len(_THREE_PAGES) - 1), st.integers(0, 255)), max_size=8
    ),
)
def test_mutated_pdf_bytes_give_a_document_or_a_parse_error(
    cut: int, flips: list[tuple[int, int]]
) -> None:
    raw = bytearray(_THREE_PAGES)
    for index, value in flips:
        raw[index] = value
    try:
        doc = get_parser_by_version("pdf-text-v1").parse(bytes(raw[:cut]), "fuzz.pdf")
    except ParseError as exc:
        assert "fuzz.pdf" in str(exc)
    else:
        for number, block in enumerate(doc.blocks, start=1):
            assert block.spans == (PageSpan(page=number, char_start=0, char_end=len(block.text)),)


# --- limits --------------------------------------------------------------------------------


def test_max_pages_limit() -> None:
    assert len(parse("three-page-en.pdf", ParseLimits(max_pages=3)).blocks) == 3
    with pytest.raises(LimitExceededError) as info:
        parse("three-page-en.pdf", ParseLimits(max_pages=2))
    assert "max_pages=2" in str(info.value) and "pdf/three-page-en.pdf" in str(info.value)
    assert info.value.error_type == "limit_exceeded"


class StepClock:
    """A fake monotonic clock that advances ``step`` seconds per reading."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        self.now += self.step
        return self.now


def test_time_budget_stops_at_a_page_boundary() -> None:
    clock = StepClock(step=10.0)
    parser = PdfTextParser(version_row("pdf-text-v1"), clock=clock)
    with pytest.raises(LimitExceededError) as info:
        parser.parse(fixture_bytes("three-page-en.pdf"), "slow.pdf", ParseLimits(time_budget_s=25))
    # start reads 10; page 1 sees 10 s elapsed, page 2 sees 20 s, page 3 sees 30 s > 25 s.
    assert "before page 3" in str(info.value) and "slow.pdf" in str(info.value)
    doc = PdfTextParser(version_row("pdf-text-v1"), clock=StepClock(step=10.0)).parse(
        fixture_bytes("three-page-en.pdf"), "ok.pdf", ParseLimits(time_budget_s=35)
    )
    assert len(doc.blocks) == 3


# --- pypdf logging --------------------------------------------------------------------------


@pytest.fixture
def pypdf_warning_pdf() -> bytes:
    """three-page-en.pdf with a wrong startxref offset, which pypdf repairs and logs."""
    raw = fixture_bytes("three-page-en.pdf")
    head, _, tail = raw.rpartition(b"startxref\n")
    offset, _, rest = tail.partition(b"\n")
    return head + b"startxref\n" + str(int(offset) + 7).encode() + b"\n" + rest


class ListHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def root_records() -> Iterator[list[logging.LogRecord]]:
    """Records that reach the root logger's handlers (pytest also hooks other loggers)."""
    handler = ListHandler()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler.records
    finally:
        root.removeHandler(handler)


def test_pypdf_log_warnings_become_document_warnings(
    pypdf_warning_pdf: bytes, root_records: list[logging.LogRecord]
) -> None:
    doc = get_parser_by_version("pdf-text-v1").parse(pypdf_warning_pdf, "repaired.pdf")
    assert len(doc.blocks) == 3
    assert "pypdf: incorrect startxref pointer(3)" in doc.warnings
    assert not [r for r in root_records if r.name.startswith("pypdf")]


def test_parsing_a_repaired_pdf_prints_nothing(pypdf_warning_pdf: bytes, tmp_path: Path) -> None:
    """No logging configured (a plain script): nothing may reach stderr via lastResort."""
    path = tmp_path / "repaired.pdf"
    path.write_bytes(pypdf_warning_pdf)
    script = (
        "import sys; from pathlib import Path; "
        "from kebab_chunk.parsers.registry import get_parser_by_version as parser; "
        "doc = parser('pdf-text-v1').parse(Path(sys.argv[1]).read_bytes(), 'repaired.pdf'); "
        "print(len(doc.warnings))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        check=True,
    )
    assert done.stderr == ""
    assert int(done.stdout) >= 1


def test_pypdf_logs_outside_a_parse_still_reach_the_root_logger(
    root_records: list[logging.LogRecord],
) -> None:
    logging.getLogger("pypdf._reader").warning("outside any parse")
    assert [r.getMessage() for r in root_records] == ["outside any parse"]


# --- fixtures ---------------------------------------------------------------------------------

FIXTURE_NAMES = sorted(GEN.build_all())


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pdf-fixtures")
    GEN.write_all(out)
    return out


def extracted(raw: bytes) -> list[str] | str:
    """Every page's text, or the error type when the file does not parse."""
    try:
        return [
            block.text for block in get_parser_by_version("pdf-text-v1").parse(raw, "x.pdf").blocks
        ]
    except ParseError as exc:
        return exc.error_type


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_generator_reproduces_committed_text(regenerated: Path, name: str) -> None:
    assert extracted((regenerated / name).read_bytes()) == extracted(fixture_bytes(name))


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_is_small_and_listed_in_manifest(name: str) -> None:
    manifest = json.loads((PDF_DIR / "manifest.json").read_text(encoding="utf-8"))
    raw = fixture_bytes(name)
    assert len(raw) < 50_000
    assert manifest["files"][name] == hashlib.sha256(raw).hexdigest()


def test_fixture_generator_is_byte_identical(regenerated: Path) -> None:
    manifest = json.loads((PDF_DIR / "manifest.json").read_text(encoding="utf-8"))
    if manifest["fpdf2_version"] != fpdf.FPDF_VERSION:
        pytest.skip(
            f"fixtures were written by fpdf2 {manifest['fpdf2_version']}, "
            f"installed is {fpdf.FPDF_VERSION}; only extracted text is compared"
        )
    for name in FIXTURE_NAMES:
        assert (regenerated / name).read_bytes() == fixture_bytes(name), name


def test_fixture_generator_output_is_deterministic_in_process() -> None:
    assert GEN.build_all() == GEN.build_all()


def test_pypdf_warnings_carry_no_process_specific_numbers() -> None:
    """A pypdf message printing an object once held the reader's id: runs differed."""
    from kebab_chunk.parsers._pdf import _library_warnings

    one = _library_warnings(["font {'/F1': IndirectObject(6, 0, 140211234567)}", "x at 0x7f12"])
    two = _library_warnings(["font {'/F1': IndirectObject(6, 0, 139999999999)}", "x at 0x7fab"])
    assert one == two == ["pypdf: font {'/F1': IndirectObject(6, 0)}", "pypdf: x"]
