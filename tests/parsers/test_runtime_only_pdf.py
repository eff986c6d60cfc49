"""pdf-text-v1 extracts the same text where only the runtime dependencies are installed.

pypdf's text depends on optional packages: without fontTools the glyphs of an embedded CFF
(Type1C) font with a built-in encoding come out as raw character codes, without brotli a
``/BrotliDecode`` content stream cannot be read at all. The dev extras happen to bring
fontTools (through fpdf2 and matplotlib), so a test run in the dev environment alone would
never notice a missing runtime pin. This module uses a fresh virtual environment holding
the project with its runtime dependencies only (``pip install -c constraints.txt``, no
extras; the ``library_python`` fixture of tests/conftest.py) and checks that the PDF
parser's output there equals the output here, on the committed PDF fixtures and on two
generated PDFs that need fontTools and brotli.

It reaches the package registry once per session (pip's cache makes that quick).
"""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kebab_chunk.errors import ParseError
from kebab_chunk.parsers.registry import get_parser_by_version

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
PDF_FIXTURES = sorted((REPO / "fixtures").glob("**/*.pdf"))
GOLDEN = REPO / "tests" / "goldens" / "pdf-text-v1" / "three-page-en.json"
#: Packages whose exact version decides pdf-text-v1's text (pinned in pyproject.toml).
PINNED = ("pypdf", "fonttools", "brotli")

#: Runs in the runtime-only environment: parses each PDF named on stdin (JSON list of
#: [path, source_uri]) and prints the outcomes as JSON.
PARSE_SCRIPT = """
import json, sys
from importlib import metadata
import kebab_chunk
from kebab_chunk.errors import ParseError
from kebab_chunk.parsers.registry import get_parser_by_version

out = {"kebab_chunk_file": kebab_chunk.__file__, "versions": {}, "docs": {}}
for name in json.loads(sys.argv[1]):
    try:
        out["versions"][name] = metadata.version(name)
    except metadata.PackageNotFoundError:
        out["versions"][name] = None
for path, uri in json.loads(sys.stdin.read()):
    raw = open(path, "rb").read()
    try:
        doc = get_parser_by_version("pdf-text-v1").parse(raw, uri)
        out["docs"][uri] = doc.model_dump(mode="json")
    except ParseError as exc:
        out["docs"][uri] = {"error_type": exc.error_type, "message": str(exc)}
print(json.dumps(out))
"""


def _outcome(raw: bytes, uri: str) -> dict[str, Any]:
    try:
        doc = get_parser_by_version("pdf-text-v1").parse(raw, uri)
        dumped: dict[str, Any] = doc.model_dump(mode="json")
    except ParseError as exc:
        return {"error_type": exc.error_type, "message": str(exc)}
    return dumped


def _pins() -> dict[str, str]:
    pins = {}
    for line in (REPO / "constraints.txt").read_text(encoding="utf-8").splitlines():
        name, sep, version = line.strip().partition("==")
        if sep:
            pins[name.lower()] = version
    return pins


# --- PDFs whose text depends on an optional package of pypdf --------------------------------


def _pdf(objects: list[bytes]) -> bytes:
    """A minimal PDF from its numbered objects (1 = catalog), with an exact xref table."""
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    )
    return out.getvalue()


def _stream(data: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d %s>>\nstream\n%s\nendstream" % (len(data), extra, data)


def _page_objects(font: bytes, content: bytes, content_extra: bytes = b"") -> list[bytes]:
    return [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        font,
        _stream(content, content_extra),
    ]


CFF_TEXT = "Hello CFF"
BROTLI_TEXT = "Hello Brotli"


def cff_font_pdf() -> bytes:
    """Text in a Type1 font whose program is a bare CFF (``/FontFile3 /Type1C``) with a
    built-in encoding, no ``/Encoding`` and no ``/ToUnicode``, as TeX and Ghostscript
    subsets often are. The codes 1..n mean nothing in StandardEncoding, so only a reader of
    the CFF encoding (pypdf does it with fontTools) recovers the text."""
    from fontTools.fontBuilder import FontBuilder
    from fontTools.pens.t2CharStringPen import T2CharStringPen

    names = {char: "space" if char == " " else char for char in sorted(set(CFF_TEXT))}
    glyphs = [".notdef", *names.values()]
    builder = FontBuilder(1000, isTTF=False)
    builder.setupGlyphOrder(glyphs)
    builder.setupCharacterMap({ord(char): name for char, name in names.items()})
    charstrings = {}
    for glyph in glyphs:
        pen = T2CharStringPen(500, None)
        if glyph != "space":
            pen.moveTo((50, 0))
            pen.lineTo((450, 0))
            pen.lineTo((450, 700))
            pen.closePath()
        charstrings[glyph] = pen.getCharString()
    builder.setupCFF("KebabCff", {"FullName": "KebabCff"}, charstrings, {})
    builder.setupHorizontalMetrics({glyph: (500, 50) for glyph in glyphs})
    builder.setupHorizontalHeader(ascent=800, descent=-200)
    cff = builder.font["CFF "].cff
    code_of = {glyph: code for code, glyph in enumerate(glyphs[1:], start=1)}
    encoding = [".notdef"] * 256
    for glyph, code in code_of.items():
        encoding[code] = glyph
    cff.topDictIndex[0].Encoding = encoding
    program = io.BytesIO()
    cff.compile(program, builder.font)
    codes = bytes(code_of[names[char]] for char in CFF_TEXT)
    widths = b" ".join(b"500" for _ in code_of)
    objects = _page_objects(
        b"<< /Type /Font /Subtype /Type1 /BaseFont /KebabCff /FirstChar 1 /LastChar %d "
        b"/Widths [%s] /FontDescriptor 6 0 R >>" % (len(code_of), widths),
        b"BT /F1 24 Tf 72 700 Td <%s> Tj ET" % codes.hex().encode(),
    )
    objects.append(
        b"<< /Type /FontDescriptor /FontName /KebabCff /Flags 4 /FontBBox [0 0 500 700] "
        b"/ItalicAngle 0 /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 /FontFile3 7 0 R >>"
    )
    objects.append(_stream(program.getvalue(), b"/Subtype /Type1C "))
    return _pdf(objects)


def brotli_pdf() -> bytes:
    """One page whose content stream is compressed with ``/BrotliDecode``."""
    import brotli

    content = brotli.compress(b"BT /F1 24 Tf 72 700 Td (%s) Tj ET" % BROTLI_TEXT.encode())
    return _pdf(
        _page_objects(
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            content,
            b"/Filter /BrotliDecode ",
        )
    )


# --- the runtime-only environment --------------------------------------------------------------


@pytest.fixture(scope="module")
def runtime_python(library_python: Path) -> Path:
    """A fresh venv holding the project and its runtime dependencies, nothing else
    (tests/conftest.py)."""
    return library_python


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """source_uri -> file: the committed PDF fixtures and the two generated ones."""
    out = tmp_path_factory.mktemp("pdf-samples")
    (out / "cff-font.pdf").write_bytes(cff_font_pdf())
    (out / "brotli.pdf").write_bytes(brotli_pdf())
    chosen = {p.relative_to(REPO / "fixtures").as_posix(): p for p in PDF_FIXTURES}
    chosen.update({"generated/cff-font.pdf": out / "cff-font.pdf"})
    chosen.update({"generated/brotli.pdf": out / "brotli.pdf"})
    return chosen


@pytest.fixture(scope="module")
def runtime_outcomes(runtime_python: Path, samples: dict[str, Path]) -> dict[str, Any]:
    jobs = [[str(path), uri] for uri, path in samples.items()]
    done = subprocess.run(
        [str(runtime_python), "-I", "-c", PARSE_SCRIPT, json.dumps(PINNED)],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        cwd=runtime_python.parent,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_the_runtime_environment_is_the_installed_package(
    runtime_python: Path, runtime_outcomes: dict[str, Any]
) -> None:
    installed = Path(runtime_outcomes["kebab_chunk_file"])
    assert installed.is_relative_to(runtime_python.parent.parent), installed


def test_text_extraction_packages_are_installed_at_their_pins(
    runtime_outcomes: dict[str, Any],
) -> None:
    pins = _pins()
    assert runtime_outcomes["versions"] == {name: pins[name] for name in PINNED}


def test_generated_pdfs_need_the_optional_packages() -> None:
    """Here (dev environment) both generated PDFs give their text back."""
    assert [b["text"] for b in _outcome(cff_font_pdf(), "generated/cff-font.pdf")["blocks"]] == [
        CFF_TEXT
    ]
    assert [b["text"] for b in _outcome(brotli_pdf(), "generated/brotli.pdf")["blocks"]] == [
        BROTLI_TEXT
    ]


def test_runtime_only_output_equals_the_dev_output(
    samples: dict[str, Path], runtime_outcomes: dict[str, Any]
) -> None:
    for uri, path in samples.items():
        expected = _outcome(path.read_bytes(), uri)
        assert runtime_outcomes["docs"][uri] == expected, uri


def test_runtime_only_output_matches_the_golden(runtime_outcomes: dict[str, Any]) -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert runtime_outcomes["docs"]["pdf/three-page-en.pdf"] == golden
