"""The hostile-input corpus of issue 7, built into a directory at test time.

Nothing here is committed as a file: every case is generated (a few seconds in all), so
the repository stays small and the sizes the issue names are real. Each case is an
:class:`Expect`: the path it gets under the corpus root and what a run must make of it,
derived from the contract (docs/internals/contract.md, "Bad input", and the parser/reader
docstrings), never from a previous run's output. ``build_bad_corpus`` returns them keyed
by ``source_uri``.

Sizes: the 50 MB single line is written in 1 MB slices; the PDF whose content stream
inflates to 2 GiB is made of one compressed 1 MiB block repeated (a full flush makes
deflate blocks independent), so it costs about 2 MB and no compression time; the DOCX zip
bomb declares 300 MiB for one member compressed from a stream of zeros.
"""

from __future__ import annotations

import datetime as dt
import io
import os
import struct
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from fpdf import FPDF

__all__ = [
    "BIG_LINE_BYTES",
    "BOMB_INFLATED_BYTES",
    "Expect",
    "build_bad_corpus",
    "deflate_zeros",
    "minimal_pdf",
    "text_pdf",
]

#: The single-line Markdown file is this large (above the size limit the corpus test uses).
BIG_LINE_BYTES = 50_000_000
#: What the PDF bomb's content stream inflates to.
BOMB_INFLATED_BYTES = 2 * 1024**3
_MIB = 1024 * 1024

CHUNKED, ZERO, ERRORS = "chunked", "zero_chunks", "errors"


@dataclass(frozen=True)
class Expect:
    """What a pipeline run must make of one corpus entry.

    ``bucket`` is the manifest bucket; for ``errors`` ``stage`` and ``error_type`` name
    the one error row; ``warning`` is a substring one document warning must contain
    (checked where a test parses the file itself); ``why`` says which rule decides.
    """

    bucket: str
    stage: str | None = None
    error_type: str | None = None
    warning: str | None = None
    why: str = ""


def _error(stage: str, error_type: str, why: str) -> Expect:
    return Expect(ERRORS, stage, error_type, why=why)


# --------------------------------------------------------------------------- PDFs


#: Without a font resource pypdf knows a page has no text and never decodes its stream.
_FONT = " /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >>"


def minimal_pdf(page_streams: Sequence[bytes | None], *, stream_filter: str | None = None) -> bytes:
    """A valid PDF written by hand: one page per entry, with that content stream.

    ``None`` pages share no content (blank). Offsets in the xref table are exact, so the
    only damage a case has is the damage it adds.
    """
    objects: list[bytes] = []
    n_pages = len(page_streams)
    kids = " ".join(f"{3 + i} 0 R" for i in range(n_pages))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode())
    content_objects: list[bytes] = []
    for stream in page_streams:
        if stream is None:
            contents = ""
        else:
            content_objects.append(stream)
            contents = f" /Contents {3 + n_pages + len(content_objects) - 1} 0 R" + _FONT
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]{contents} >>".encode()
        )
    for stream in content_objects:
        filt = f" /Filter /{stream_filter}" if stream_filter else ""
        head = f"<< /Length {len(stream)}{filt} >>\nstream\n".encode()
        objects.append(head + stream + b"\nendstream")
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return out.getvalue()


def deflate_zeros(total: int, block: int = _MIB) -> bytes:
    """A valid zlib stream of ``total`` zero bytes, built without compressing them all.

    After ``Z_FULL_FLUSH`` a raw deflate stream keeps no history, so compressing the same
    block again gives the same bytes: one block is compressed and repeated, the zlib
    header and the Adler-32 of the whole are written around it.
    """
    assert total % block == 0
    zeros = bytes(block)
    raw = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = raw.compress(zeros) + raw.flush(zlib.Z_FULL_FLUSH)
    again = raw.compress(zeros) + raw.flush(zlib.Z_FULL_FLUSH)
    assert piece == again, "full flush must make blocks independent"
    # Adler-32 of n zero bytes: the byte sum stays 1, the running sum is n (mod 65521).
    checksum = ((total % 65521) << 16) | 1
    end = raw.flush(zlib.Z_FINISH)
    return b"\x78\xda" + piece * (total // block) + end + struct.pack(">I", checksum)


def text_pdf(pages: Sequence[str], *, user_password: str | None = None) -> bytes:
    """A text PDF from fpdf2 (core font), optionally RC4-encrypted with ``user_password``."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.set_creation_date(dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    pdf.set_font("Helvetica", size=11)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 14, text)
    if user_password is not None:
        pdf.set_encryption(owner_password="kebab-owner", user_password=user_password)
    return bytes(pdf.output())


_PDF_PAGES = [
    "The first page talks about hostile input. It has two sentences.",
    "The second page is about accounting: every file is counted once.",
    "The third page ends the document.",
]


def _xref_corrupt() -> bytes:
    """A good three-page PDF whose startxref and xref offsets all point at garbage."""
    good = text_pdf(_PDF_PAGES)
    head, _, tail = good.rpartition(b"startxref")
    offset = tail.split()[0]
    broken = head + b"startxref" + tail.replace(offset, b"9" * len(offset), 1)
    xref_at = int(offset)
    table_end = broken.index(b"trailer", xref_at)
    table = bytearray(broken[xref_at:table_end])
    for i, ch in enumerate(table):
        if i > 30 and chr(ch).isdigit():
            table[i] = ord("7")
    return broken[:xref_at] + bytes(table) + broken[table_end:]


# --------------------------------------------------------------------------- DOCX


def _docx_bomb(declared: int = 300 * _MIB) -> bytes:
    """A zip with the DOCX parts whose document.xml inflates to ``declared`` bytes."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/'
            'package/2006/content-types"/>',
        )
        info = zipfile.ZipInfo("word/document.xml", date_time=(2024, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        chunk = b" " * _MIB
        with zf.open(info, "w", force_zip64=True) as member:
            for _ in range(declared // _MIB):
                member.write(chunk)
    return out.getvalue()


def _pdf_bomb() -> bytes:
    return minimal_pdf([deflate_zeros(BOMB_INFLATED_BYTES)], stream_filter="FlateDecode")


def _write(make: Callable[[], bytes]) -> Callable[[Path], None]:
    """Defer building an expensive case until the corpus is written."""

    def write(path: Path) -> None:
        path.write_bytes(make())

    return write


# --------------------------------------------------------------------------- Markdown


def _big_line(path: Path) -> None:
    piece = (b"lorem ipsum dolor sit amet " * 40_000)[:_MIB]
    with path.open("wb") as f:
        remaining = BIG_LINE_BYTES
        while remaining:
            n = min(remaining, len(piece))
            f.write(piece[:n])
            remaining -= n


def _table(columns: int, sep: str) -> bytes:
    header = sep.join(f"c{i}" for i in range(columns))
    values = sep.join(str(i % 10) for i in range(columns))
    if sep == "|":
        rule = "|".join("-" for _ in range(columns))
        return f"# Wide\n\n|{header}|\n|{rule}|\n|{values}|\n".encode()
    return f"{header}\n{values}\n".encode()


_GOOD_MD = "# A good document\n\nIt has a paragraph with a sentence or two. Nothing more.\n"

# (relative path, bytes or writer, expectation)
_Writer = Callable[[Path], None]


def _cases() -> list[tuple[str, bytes | _Writer, Expect]]:
    md_ok = Expect(CHUNKED, why="valid text: parsed and chunked")
    return [
        # zero-byte files of every type
        ("empty/empty.md", b"", Expect(ZERO, why="an empty text document has no blocks")),
        ("empty/empty.txt", b"", Expect(ZERO, why="an empty text document has no blocks")),
        ("empty/empty.html", b"", Expect(ZERO, why="an empty page has no elements")),
        ("empty/empty.csv", b"", Expect(ZERO, why="a CSV without rows has no table")),
        ("empty/empty.tsv", b"", Expect(ZERO, why="a TSV without rows has no table")),
        ("empty/empty.pdf", b"", _error("parse", "parse_error", "no %PDF- header")),
        ("empty/empty.docx", b"", _error("parse", "parse_error", "not a zip package")),
        ("empty/empty.docling.json", b"", _error("parse", "parse_error", "not JSON")),
        ("empty/empty.json", b"", _error("parse", "unsupported_media_type", "no JSON parser")),
        ("empty/no-extension", b"", _error("parse", "unsupported_media_type", "unknown type")),
        # encodings
        (
            "text/binary-blob.md",
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8,
            _error("parse", "binary_content", "NUL bytes under a text name"),
        ),
        (
            "text/invalid-utf8.md",
            b"# Title\n\nvalid text then \xff\xfe bad bytes \xc3 and more text.\n",
            Expect(CHUNKED, warning="invalid UTF-8", why="degrades with U+FFFD"),
        ),
        (
            "text/utf16-bom.md",
            "# Titel\n\nUTF-16 mit BOM: äöü ß.\n".encode("utf-16"),
            Expect(CHUNKED, warning="utf-16", why="decoded by its byte order mark"),
        ),
        (
            "text/latin1.md",
            "# Café\n\nDéjà vu, naïve façade, señor.\n".encode("latin-1"),
            Expect(CHUNKED, warning="invalid UTF-8", why="Latin-1 is invalid UTF-8"),
        ),
        (
            "text/single-line-50mb.md",
            _big_line,
            _error("read", "limit_exceeded", "above --max-file-bytes, refused unread"),
        ),
        # pathological Markdown
        (
            "markdown/nested-lists-10000.md",
            ("# Deep\n\n" + "- " * 10_000 + "bottom\n\n" + "1. " * 10_000 + "end\n").encode(),
            md_ok,
        ),
        (
            "markdown/nested-quotes-10000.md",
            ("# Deep\n\n" + "> " * 10_000 + "bottom of the quotes\n").encode(),
            md_ok,
        ),
        (
            "markdown/headings-100000.md",
            "".join(f"{'#' * (1 + i % 6)} h{i}\n" for i in range(100_000)).encode(),
            md_ok,
        ),
        ("markdown/table-10000-columns.md", _table(10_000, "|"), md_ok),
        (
            "markdown/unclosed-fence.md",
            b"# Code\n\n```python\n" + b"print('never closed')\n" * 2_000,
            md_ok,
        ),
        ("markdown/emphasis-runs.md", b"# Emphasis\n\n" + b"*a**a***" * 50_000 + b"\n", md_ok),
        (
            "markdown/link-reference-bomb.md",
            b"# Links\n\n"
            + b"".join(b"[r%d]: https://example.com/%d\n" % (i, i) for i in range(20_000))
            + b"\n"
            + b"[" * 5_000
            + b"".join(b"[x][r%d] " % i for i in range(20_000))
            + b"]" * 5_000
            + b"\n",
            md_ok,
        ),
        # PDFs
        (
            "pdf/truncated.pdf",
            text_pdf(_PDF_PAGES)[:1500],
            _error("parse", "parse_error", "cut off before its pages and xref"),
        ),
        (
            "pdf/encrypted-empty-password.pdf",
            text_pdf(_PDF_PAGES, user_password=""),
            Expect(CHUNKED, why="the empty user password opens it"),
        ),
        (
            "pdf/encrypted-real-password.pdf",
            text_pdf(_PDF_PAGES, user_password="kebab-secret"),
            _error("parse", "encrypted", "needs a password we do not have"),
        ),
        (
            "pdf/xref-corrupt.pdf",
            _xref_corrupt(),
            Expect(CHUNKED, warning="pypdf", why="pypdf rebuilds the xref, with a warning"),
        ),
        (
            "pdf/blank-5000-pages.pdf",
            minimal_pdf([None] * 5_000),
            _error("parse", "limit_exceeded", "more pages than max_pages=2000"),
        ),
        (
            "pdf/decompression-bomb.pdf",
            _write(_pdf_bomb),
            _error("parse", "limit_exceeded", "content stream inflates past pypdf's limit"),
        ),
        # DOCX
        (
            "docx/zip-bomb.docx",
            _write(_docx_bomb),
            _error("parse", "limit_exceeded", "declares more than 256 MiB uncompressed"),
        ),
        (
            "docx/not-a-zip.docx",
            b"This is plain text wearing a .docx name.\n",
            _error("parse", "parse_error", "not a zip package"),
        ),
        # HTML and CSV
        (
            "html/nested-divs-100000.html",
            b"<html><body>" + b"<div>" * 100_000 + b"deep text" + b"</div>" * 100_000 + b"</body>",
            Expect(CHUNKED, why="iterative HTML parser keeps the deep text"),
        ),
        (
            "csv/ragged.csv",
            b"id,name,score\n1,alice,90\n2,bob\n3,carol,75,extra,fields\n4\n",
            Expect(CHUNKED, warning="", why="ragged rows are kept as they are"),
        ),
        (
            "csv/nul-bytes.csv",
            b"key,value\nalpha,one\x00two\nbeta,three\n",
            Expect(CHUNKED, warning="NUL", why="csv-v1 keeps NUL bytes, with a warning"),
        ),
        ("csv/table-10000-columns.csv", _table(10_000, ","), md_ok),
        # hostile file names (good content: they must chunk end to end)
        ("names/with spaces.md", _GOOD_MD.encode(), md_ok),
        ("names/new\nline.md", _GOOD_MD.encode(), md_ok),
        ("names/-leading-dash.md", _GOOD_MD.encode(), md_ok),
        ("names/--help.md", _GOOD_MD.encode(), md_ok),
        ("names/x.pdf/inside-a-directory-named-x.pdf.md", _GOOD_MD.encode(), md_ok),
    ]


#: The name written with a non-UTF-8 byte, and the ``source_uri`` the run must give it.
NON_UTF8_NAME = b"names/non-utf8-\xff\xfe.md"
NON_UTF8_URI = "names/non-utf8-%FF%FE.md"


def expected_outcomes() -> dict[str, Expect]:
    """Every case's ``source_uri`` and expectation, without writing anything."""
    expected = {relative: expect for relative, _, expect in _cases()}
    expected.update(_SPECIAL)
    return expected


_SPECIAL: dict[str, Expect] = {
    NON_UTF8_URI: Expect(CHUNKED, why="non-UTF-8 name, escaped in source_uri"),
    "links/to-outside-file.md": _error("read", "symlink_outside_corpus", "leaves the root"),
    "links/to-outside-dir": _error("read", "symlink_outside_corpus", "leaves the root"),
    "links/dangling.md": _error("read", "broken_symlink", "its target is missing"),
    "links/to-inside-file.md": Expect(CHUNKED, why="a link inside the root is followed"),
    "links/fifo.md": _error("read", "not_a_regular_file", "would block a reader"),
}


def build_bad_corpus(root: Path, outside: Path) -> dict[str, Expect]:
    """Write every case under ``root`` (links to ``outside``); returns uri -> Expect.

    ``outside`` must not be inside ``root``: it holds the targets of the links that
    leave the corpus.
    """
    expected: dict[str, Expect] = {}
    for relative, content, expect in _cases():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content(path)
        else:
            path.write_bytes(content)
        expected[relative] = expect
    with open(os.fsencode(root) + b"/" + NON_UTF8_NAME, "wb") as f:
        f.write(_GOOD_MD.encode())
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "secret.md").write_text("# Outside\n\nThis must never be read.\n")
    links = root / "links"
    links.mkdir(exist_ok=True)
    (links / "to-outside-file.md").symlink_to(outside / "secret.md")
    (links / "to-outside-dir").symlink_to(outside, target_is_directory=True)
    (links / "dangling.md").symlink_to(outside / "does-not-exist.md")
    (links / "to-inside-file.md").symlink_to(root / "names" / "with spaces.md")
    # A link to a directory inside the root is no entry of its own: its files are
    # matched under their real paths.
    (links / "to-inside-dir").symlink_to(root / "names", target_is_directory=True)
    os.mkfifo(links / "fifo.md")
    expected.update(_SPECIAL)
    return expected
