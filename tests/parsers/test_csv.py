"""Tests of the CSV parser ``csv-v1`` on fixtures/csv/ and generated tables."""

from __future__ import annotations

import codecs
import csv
import io
import random
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.errors import BinaryContentError, LimitExceededError
from kebab_chunk.model import CanonicalDocument, LineSpan, TableBlock
from kebab_chunk.parsers.base import ParseLimits
from kebab_chunk.parsers.csv_v1 import CsvParser, decode_csv
from kebab_chunk.parsers.registry import detect_media_type, get_parser_by_version, parse_document
from tests.golden import assert_golden

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "csv"
NAMES = sorted(p.name for p in FIXTURES.iterdir() if p.suffix in (".csv", ".tsv"))


def parse(name: str) -> tuple[CanonicalDocument, str]:
    raw = (FIXTURES / name).read_bytes()
    return parse_document(raw, f"csv/{name}"), decode_csv(raw, name)[0]


def table(doc: CanonicalDocument) -> TableBlock:
    (block,) = doc.blocks
    assert isinstance(block, TableBlock)
    return block


def breaks(text: str) -> int:
    """Line breaks in ``text`` (``\\r\\n``, ``\\r`` or ``\\n``)."""
    return len(re.findall(r"\r\n|\r|\n", text))


def reparse(row_source: str, delimiter: str) -> list[str]:
    """What the csv module makes of one row's source slice on its own."""
    (row,) = list(csv.reader(io.StringIO(row_source, newline=""), delimiter=delimiter))
    return row


def check_rows(doc: CanonicalDocument, text: str) -> None:
    """Each row span slices exactly that row's source; the block text spans them all."""
    block = table(doc)
    spans = block.spans
    assert all(isinstance(span, LineSpan) for span in spans)
    assert block.text == text[spans[0].char_start : spans[-1].char_end]
    delimiter = str(doc.metadata["delimiter"])
    for span, cells in zip(spans, (block.header, *block.rows), strict=True):
        assert isinstance(span, LineSpan)
        source = text[span.char_start : span.char_end]
        assert not source.endswith(("\n", "\r"))
        assert span.line_start == breaks(text[: span.char_start]) + 1
        assert span.line_end == span.line_start + breaks(source)
        if "quoting error" in " ".join(doc.warnings):
            continue  # read one row per line: the csv module would disagree on purpose
        parsed = tuple(c.replace("\x00", "") for c in reparse(source, delimiter))
        if "unterminated quote" in " ".join(doc.warnings) and span is spans[-1]:
            # the open field swallowed the file's final line break, which no span includes
            parsed = (*parsed[:-1], parsed[-1] + text[span.char_end :])
        assert parsed == cells


@pytest.mark.parametrize("name", NAMES)
def test_golden(name: str) -> None:
    doc, text = parse(name)
    check_rows(doc, text)
    assert doc.parser_version == "csv-v1"
    assert_golden("csv-v1", name, doc.model_dump(mode="json"))


def test_inventory_quotes_multiline_cells_and_blank_rows() -> None:
    doc, _ = parse("inventory.csv")
    block = table(doc)
    assert block.header == ("sku", "name", "description", "price")
    assert block.rows == (
        ("A-100", "Widget, large", 'Heavy-duty widget with a "lifetime" warranty', "19.99"),
        ("A-101", "Gadget", "Two-line\r\ndescription kept in one cell", "5.00"),
        ("A-102", "Gizmo", "Plain", "0.50"),
    )
    lines = [(s.line_start, s.line_end) for s in block.spans]  # type: ignore[union-attr]
    assert lines == [(1, 1), (2, 2), (3, 4), (7, 7)]  # blank line 5 and ",,," line 6 skipped
    assert "\r\n" in block.text and block.text.endswith("A-102,Gizmo,Plain,0.50")
    assert doc.warnings == ()
    assert block.heading_path == ()


def test_delimiters_are_sniffed_or_fixed_for_tsv() -> None:
    assert parse("semicolon.csv")[0].metadata["delimiter"] == ";"
    assert table(parse("semicolon.csv")[0]).rows[0] == ("Deutschland", "Berlin", "3,7")
    tsv, _ = parse("services.tsv")
    assert tsv.media_type == "text/tab-separated-values" and tsv.metadata["delimiter"] == "\t"
    assert table(tsv).header == ("host", "port", "service")
    pipes = get_parser_by_version("csv-v1").parse(b"a|b|c\n1|2|3\n", "p.csv")
    assert table(pipes).rows == (("1", "2", "3"),)


def test_ragged_rows_are_kept_with_a_warning() -> None:
    doc, _ = parse("ragged.csv")
    assert table(doc).rows == (
        ("1", "alice", "90"),
        ("2", "bob"),
        ("3", "carol", "75", "extra", "fields"),
        ("4",),
    )
    assert doc.warnings == (
        "ragged rows: rows have 1, 2, 3, 5 cells (header has 3); kept as they are",
    )


def test_wrong_encoding_degrades_to_cp1252_with_a_warning() -> None:
    doc, _ = parse("cp1252.csv")
    assert table(doc).rows == (("München", "Café am Markt"), ("Zürich", "“quoted” € price"))
    assert "decoded as cp1252" in doc.warnings[0]


def test_damaged_utf8_keeps_the_good_characters() -> None:
    raw = "name,city\nJürgen,Köln\n".encode() + b"bad,\xff\xfe\n"
    doc = get_parser_by_version("csv-v1").parse(raw, "d.csv")
    assert table(doc).rows == (("Jürgen", "Köln"), ("bad", "\ufffd\ufffd"))
    assert "invalid UTF-8 at byte" in doc.warnings[0]


def test_nul_bytes_stay_in_the_source_but_not_in_cells() -> None:
    doc, text = parse("nul-bytes.csv")
    assert "\x00" in text and "\x00" in table(doc).text
    assert table(doc).rows == (("alpha", "onetwo"), ("beta", "three"))
    assert doc.warnings == (
        "1 NUL byte(s) in the file: kept in the source text, removed from cells",
    )


def test_binary_data_is_rejected() -> None:
    noise = random.Random(7).randbytes(4000)
    with pytest.raises(BinaryContentError, match="looks binary"):
        get_parser_by_version("csv-v1").parse(b"\x00" + noise, "noise.csv")


def test_utf16_with_and_without_bom() -> None:
    doc, _ = parse("utf16-excel.csv")
    assert table(doc).rows == (("Jürgen", "Köln"), ("Anaïs", "Lyon"))
    assert doc.warnings == ("decoded as utf-16 (byte order mark found)",)
    raw = "a,b\r\nx,y\r\n".encode("utf-16-be")
    no_bom = get_parser_by_version("csv-v1").parse(raw, "be.csv")
    assert table(no_bom).rows == (("x", "y"),)
    assert "utf-16-be" in no_bom.warnings[0]
    assert decode_csv(codecs.BOM_UTF8 + b"a,b\n", "bom.csv") == ("a,b\n", [])


def test_unterminated_quote_is_reported() -> None:
    doc, _ = parse("unterminated-quote.csv")
    assert table(doc).rows == (("1", "this quote never closes\n2,swallowed\n3,also swallowed\n"),)
    assert "unterminated quote in the row starting on line 2" in doc.warnings[0]


def test_field_over_the_csv_limit_falls_back_to_plain_rows() -> None:
    raw = b'id,text\n1,"' + b"x" * 200_000 + b"\n2,after\n"
    doc = get_parser_by_version("csv-v1").parse(raw, "huge.csv")
    block = table(doc)
    assert block.rows == (("1", '"' + "x" * 200_000), ("2", "after"))
    assert "read again one row per line" in doc.warnings[0]
    check_rows(doc, raw.decode())


def test_empty_and_blank_files_have_no_blocks() -> None:
    assert get_parser_by_version("csv-v1").parse(b"", "empty.csv").blocks == ()
    assert get_parser_by_version("csv-v1").parse(b"\n\n,,\n", "blank.csv").blocks == ()


def test_rows_count_against_max_blocks() -> None:
    raw = b"h\n1\n2\n"
    assert (
        len(
            table(
                get_parser_by_version("csv-v1").parse(raw, "a.csv", ParseLimits(max_blocks=3))
            ).spans
        )
        == 3
    )
    with pytest.raises(LimitExceededError, match="more than 2 rows"):
        get_parser_by_version("csv-v1").parse(raw, "a.csv", ParseLimits(max_blocks=2))


def test_registry_routes_csv_and_tsv() -> None:
    assert detect_media_type("data/x.CSV") == "text/csv"
    assert detect_media_type("data/x.tsv") == "text/tab-separated-values"
    assert isinstance(get_parser_by_version("csv-v1", "text/tab-separated-values"), CsvParser)


# Cells with quotes, commas, spaces and line breaks; no other delimiter candidates, so the
# sniffer can only choose ",".
_CELL = st.text(alphabet=st.sampled_from(list("ab é\"',\n\r\u00e9x1")), max_size=8)


@given(
    rows=st.lists(st.lists(_CELL, min_size=2, max_size=4), min_size=1, max_size=8),
    style=st.sampled_from(
        [("\r\n", csv.QUOTE_MINIMAL), ("\n", csv.QUOTE_MINIMAL), ("\n", csv.QUOTE_ALL)]
    ),
)
def test_every_row_span_slices_exactly(rows: list[list[str]], style: tuple[str, int]) -> None:
    terminator, quoting = style
    if terminator == "\n" and quoting == csv.QUOTE_MINIMAL:
        # csv.writer leaves a lone "\r" unquoted then, which no reader can tell from a line end
        rows = [[cell.replace("\r", "") for cell in row] for row in rows]
    buffer = io.StringIO(newline="")
    csv.writer(buffer, lineterminator=terminator, quoting=quoting).writerows(rows)  # type: ignore[call-overload]
    source = buffer.getvalue()
    doc = get_parser_by_version("csv-v1").parse(source.encode(), "gen.csv")
    kept = [tuple(r) for r in rows if any(cell.strip() for cell in r)]
    if not kept:
        assert doc.blocks == ()
        return
    block = table(doc)
    assert (block.header, *block.rows) == tuple(kept)
    assert len(block.spans) == len(kept)
    for span, cells in zip(block.spans, kept, strict=True):
        assert isinstance(span, LineSpan)
        row_source = source[span.char_start : span.char_end]
        assert tuple(reparse(row_source, ",")) == cells
        assert span.line_start == breaks(source[: span.char_start]) + 1
        assert span.line_end == span.line_start + breaks(row_source)
