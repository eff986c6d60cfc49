"""Warnings and log lines quote document text in bounded length.

A 17 MB CSV once produced a 17 MB log line: a chunker warning quoted its whole header row.
Document warnings are capped when a parser stores them, and every warning or log line a
chunker writes about a document with a 5 MB header cell stays short.
"""

from __future__ import annotations

import inspect
import logging

import pytest

from kebab_chunk._quote import MAX_MESSAGE_CHARS, MAX_QUOTE_CHARS, cap, quote, quote_all
from kebab_chunk.chunkers.registry import get_chunker, registered_labels
from kebab_chunk.errors import UnsupportedDocumentError
from kebab_chunk.model import CanonicalDocument, ChunkPolicy, TableBlock
from kebab_chunk.parsers.registry import get_parser_by_version

#: Longest message allowed: the cap, its "… (N more characters)" marker, and a few quotes of
#: at most MAX_QUOTE_CHARS characters each inside a chunker's own sentence.
BOUND = MAX_MESSAGE_CHARS + 100
HUGE = 5 * 1024 * 1024


# --- the helpers ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "Price", "a 'quoted' \"cell\"\n", "x" * MAX_QUOTE_CHARS])
def test_quote_leaves_short_text_as_repr(text: str) -> None:
    assert quote(text) == repr(text)


def test_quote_cuts_long_text_and_counts_the_rest() -> None:
    quoted = quote("H" * HUGE)
    assert quoted == repr("H" * MAX_QUOTE_CHARS) + f"… ({HUGE - MAX_QUOTE_CHARS:,} more characters)"


def test_quote_all_is_repr_for_a_short_list_and_bounded_for_a_long_one() -> None:
    assert quote_all(["Intro", "Setup"]) == repr(["Intro", "Setup"])
    many = quote_all(["H" * HUGE] * 10)
    assert len(many) < 4 * (MAX_QUOTE_CHARS + 40)
    assert many.endswith("… (7 more texts)]")


def test_cap_leaves_short_messages_and_cuts_long_ones_to_the_limit() -> None:
    assert cap("page 3 has no extractable text") == "page 3 has no extractable text"
    assert cap("x" * MAX_MESSAGE_CHARS) == "x" * MAX_MESSAGE_CHARS
    for n in (MAX_MESSAGE_CHARS + 1, MAX_MESSAGE_CHARS + 50, HUGE):
        long = cap("x" * n)
        assert long.startswith("x" * 900) and long.endswith(" more characters)")
        assert len(long) <= MAX_MESSAGE_CHARS
        assert cap(long) == long  # idempotent: a stored warning round-trips


def test_documents_store_short_warnings_unchanged_and_long_ones_capped() -> None:
    short = "1 NUL byte(s) in the file: kept in the source text, removed from cells"
    doc = CanonicalDocument(
        doc_id="d",
        source_uri="a.csv",
        media_type="text/csv",
        content_hash="h",
        parser_version="csv-v1",
        warnings=(short, "y" * HUGE),
    )
    assert doc.warnings[0] == short
    assert len(doc.warnings[1]) <= MAX_MESSAGE_CHARS
    assert CanonicalDocument.model_validate_json(doc.model_dump_json()) == doc


# --- the CSV parser ------------------------------------------------------------------------------


def test_a_ragged_csv_with_many_row_widths_has_a_bounded_warning() -> None:
    # Row i has i cells: the "ragged rows" warning lists every distinct width.
    raw = "".join(",".join(["v"] * width) + "\n" for width in range(1, 3001)).encode()
    doc = get_parser_by_version("csv-v1").parse(raw, "ragged-wide.csv")
    assert any(w.startswith("ragged rows: rows have 1, 2, 3, ") for w in doc.warnings)
    assert all(len(w) < BOUND for w in doc.warnings), [len(w) for w in doc.warnings]


@pytest.fixture(scope="module")
def huge_header_csv() -> bytes:
    return ("id," + "H" * HUGE + "\n1,2\n3,4\n").encode()


@pytest.fixture(scope="module")
def huge_header_unterminated_csv() -> bytes:
    # An unterminated quote in the header: a field over the csv module's limit, read again
    # one row per line.
    return ('id,"' + "H" * HUGE + "\n1,2\n3,4\n").encode()


def test_csv_warnings_stay_short_with_a_huge_header_cell(
    huge_header_csv: bytes, huge_header_unterminated_csv: bytes
) -> None:
    for raw in (huge_header_csv, huge_header_unterminated_csv):
        doc = get_parser_by_version("csv-v1").parse(raw, "huge.csv")
        assert all(len(w) < BOUND for w in doc.warnings), [len(w) for w in doc.warnings]
    doc = get_parser_by_version("csv-v1").parse(huge_header_unterminated_csv, "huge.csv")
    assert any("CSV quoting error" in w for w in doc.warnings)


# --- the chunkers: warnings and log lines ---------------------------------------------------------


@pytest.mark.parametrize("label", registered_labels())
def test_chunker_warnings_and_log_lines_stay_short_with_a_huge_header_cell(
    label: str, huge_header_csv: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    doc = get_parser_by_version("csv-v1").parse(huge_header_csv, "huge.csv")
    assert isinstance(doc.blocks[0], TableBlock)
    assert len(doc.blocks[0].header[1]) == HUGE
    chunker = get_chunker(label)
    warnings: list[str] = []
    iter_chunks = getattr(chunker, "iter_chunks", None)
    sink = iter_chunks is not None and "warnings" in inspect.signature(iter_chunks).parameters
    caplog.set_level(logging.DEBUG)
    try:
        if sink:
            for _ in iter_chunks(doc, ChunkPolicy(), warnings):
                pass
        else:
            chunker.chunk(doc, ChunkPolicy())
    except UnsupportedDocumentError:
        pass  # a label for other media types: nothing chunked, still nothing long logged
    logged = [record.getMessage() for record in caplog.records]
    assert all(len(m) < BOUND for m in warnings), [len(m) for m in warnings]
    assert all(len(m) < BOUND for m in logged), [len(m) for m in logged]


def test_error_rows_carry_a_bounded_message() -> None:
    from kebab_chunk.output.records import ErrorRecord

    row = ErrorRecord("t.json", "parse", "parse_error", "bad key " + "k" * HUGE)
    assert row.message.startswith("bad key kkk") and len(row.message) <= MAX_MESSAGE_CHARS
    assert ErrorRecord("t.json", "parse", "parse_error", "short").message == "short"
