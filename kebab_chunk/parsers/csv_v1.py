"""CSV → CanonicalDocument (parser version ``csv-v1``): the whole file as one table block.

The header row is the first non-empty row; every other non-empty row is a table row.
The block carries one ``LineSpan`` per row, and each row's span is exact:
``decoded[span.char_start:span.char_end]`` is that row's source text (a quoted field may
run over several lines; the span excludes the row's final line break). The block's
``text`` is the source from the first row's start to the last row's end, so it too is an
exact slice. Rows whose cells are all blank (``,,,`` exports, empty lines) carry no text
and are skipped.

Only the delimiter is sniffed (:class:`csv.Sniffer`, limited to ``,``, ``;``, tab and
``|``; when it gives up, the most frequent of those, else ``,``); quoting stays RFC 4180
(``"`` with doubled ``""``), because the sniffer's guesses about quote characters and
escaping are unreliable on real data.

Bad input degrades with a document warning instead of being dropped: ragged rows are
kept as they are; bytes that are not UTF-8 are decoded as a legacy single-byte encoding
when no valid multi-byte UTF-8 appears in them (typical spreadsheet exports), else with
U+FFFD replacement; a UTF-16 file without byte order mark is recognised by its NUL
pattern; stray NUL bytes stay in the source text (so offsets stay exact) but are removed
from cell values, unless control bytes make up over 5 % of the first 8 KiB, which means
binary data (:class:`BinaryContentError`); a quoting error that the ``csv`` module cannot
get past (a field over its 128 KiB limit, usually from an unterminated quote) makes the
parser read the file again one row per line, with quotes as plain characters. A CSV row
counts as one element against ``ParseLimits.max_blocks``, since each row has its own span.
"""

from __future__ import annotations

import codecs
import csv
import re
from collections.abc import Iterator

from kebab_chunk.errors import BinaryContentError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.blocks import TableBlock
from kebab_chunk.model.spans import LineSpan
from kebab_chunk.parsers._assemble import Assembler, check_block_count
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits, VersionedParser
from kebab_chunk.parsers.decode import decode_text

__all__ = ["MEDIA_TYPE", "TSV_MEDIA_TYPE", "CsvParser", "TsvParser", "decode_csv"]

MEDIA_TYPE = "text/csv"
TSV_MEDIA_TYPE = "text/tab-separated-values"

_DELIMITERS = ",;\t|"
_SNIFF_CHARS = 16_384
_SNIFF_BYTES = 8192
_MAX_CONTROL_SHARE = 0.05  # more C0 control bytes than this (and not UTF-16): binary data
_CONTROL_BYTES = bytes([*range(0, 9), *range(14, 32)])
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


class CsvParser(VersionedParser):
    """Parser ``csv-v1``: one table block, header = first row, one exact span per row
    (built from its version row)."""

    media_types: tuple[str, ...] = (MEDIA_TYPE,)

    def parse(
        self, raw: bytes, source_uri: str, limits: ParseLimits = DEFAULT_LIMITS
    ) -> CanonicalDocument:
        media_type = self.media_types[0]
        text, warnings = decode_csv(raw, source_uri)
        delimiter = "\t" if media_type == TSV_MEDIA_TYPE else _sniff(text)
        rows = _read_rows(text, delimiter, source_uri, warnings, limits)
        assembler = Assembler(raw, source_uri, media_type, self.version, limits)
        if rows:
            cells = [_clean(row_cells) for row_cells, _ in rows]
            widths = sorted({len(c) for c in cells})
            if len(widths) > 1:
                warnings.append(
                    f"ragged rows: rows have {', '.join(map(str, widths))} cells "
                    f"(header has {len(cells[0])}); kept as they are"
                )
            spans = tuple(span for _, span in rows)
            body = text[spans[0].char_start : spans[-1].char_end]
            assembler.add(TableBlock, body, spans, header=cells[0], rows=tuple(cells[1:]))
        return assembler.finish(warnings, metadata={"delimiter": delimiter})


class TsvParser(CsvParser):
    """``csv-v1`` for tab-separated values (no sniffing: the delimiter is a tab)."""

    media_types = (TSV_MEDIA_TYPE,)


# --- decoding -----------------------------------------------------------------------------


def decode_csv(raw: bytes, source_uri: str) -> tuple[str, list[str]]:
    """Decode CSV bytes, degrading with a warning instead of failing (see module docs)."""
    if raw.startswith(_BOMS):  # (the UTF-32-LE BOM starts with the UTF-16-LE one)
        return decode_text(raw, source_uri)
    nul_count = raw.count(b"\x00")
    if nul_count:
        utf16 = _utf16_without_bom(raw)
        if utf16 is not None:
            return utf16
        sample = raw[:_SNIFF_BYTES]
        controls = len(sample) - len(sample.translate(None, _CONTROL_BYTES))
        if controls > _MAX_CONTROL_SHARE * len(sample):
            raise BinaryContentError(
                f"{source_uri} contains NUL bytes and {100 * controls // len(sample)}% control "
                "bytes, so it looks binary, not CSV; remove it from the corpus or give it the "
                "right extension."
            )
    text, warnings = _decode_8bit(raw)
    if nul_count:
        warnings.append(
            f"{nul_count} NUL byte(s) in the file: kept in the source text, removed from cells"
        )
    return text, warnings


def _utf16_without_bom(raw: bytes) -> tuple[str, list[str]] | None:
    """UTF-16 text without a BOM has a NUL in every other byte of its ASCII characters."""
    sample = raw[:_SNIFF_BYTES]
    even = sample[0::2].count(0)
    odd = sample[1::2].count(0)
    if len(raw) % 2 or (even + odd) < len(sample) // 4:
        return None
    encoding = "utf-16-le" if odd > 9 * even else "utf-16-be" if even > 9 * odd else None
    if encoding is None:
        return None
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError:
        return None
    return text, [f"no byte order mark, but the NUL pattern says {encoding}; decoded as such"]


def _decode_8bit(raw: bytes) -> tuple[str, list[str]]:
    try:
        return raw.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        first_bad = exc.start
    replaced = raw.decode("utf-8", errors="replace")
    if any(ord(char) > 0x7F and char != "\ufffd" for char in replaced):
        # real multi-byte UTF-8 next to the bad bytes: a damaged UTF-8 file
        return replaced, [
            f"invalid UTF-8 at byte {first_bad}; undecodable bytes replaced with U+FFFD"
        ]
    for encoding in ("cp1252", "latin-1"):
        try:
            return raw.decode(encoding), [
                f"not valid UTF-8 (byte {first_bad}) and no multi-byte UTF-8 found; "
                f"decoded as {encoding}"
            ]
        except UnicodeDecodeError:
            continue
    raise AssertionError("latin-1 decodes every byte")  # pragma: no cover


# --- reading rows -------------------------------------------------------------------------


def _sniff(text: str) -> str:
    """The delimiter of the first lines: :class:`csv.Sniffer`, else the most frequent
    candidate (the sniffer gives up on ragged rows), else ``,`` (a single column)."""
    sample = text[:_SNIFF_CHARS]
    if len(text) > _SNIFF_CHARS:
        cut = max(sample.rfind("\n"), sample.rfind("\r"))
        sample = sample[: cut + 1] if cut > 0 else sample
    try:
        delimiter = csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        delimiter = ""
    if delimiter and delimiter in _DELIMITERS:
        return delimiter
    counts = [(sample.count(candidate), candidate) for candidate in _DELIMITERS]
    best_count, best = max(counts, key=lambda pair: pair[0])  # ties: earliest candidate
    return best if best_count else ","


def _read_rows(
    text: str, delimiter: str, source_uri: str, warnings: list[str], limits: ParseLimits
) -> list[tuple[list[str], LineSpan]]:
    try:
        return _rows(text, delimiter, True, source_uri, warnings, limits)
    except csv.Error as exc:
        problem = str(exc)
    rows = _rows(text, delimiter, False, source_uri, warnings, limits)
    warnings.append(
        f"CSV quoting error ({problem}); read again one row per line, quotes as plain text"
    )
    return rows


def _rows(
    text: str,
    delimiter: str,
    quoted: bool,
    source_uri: str,
    warnings: list[str],
    limits: ParseLimits,
) -> list[tuple[list[str], LineSpan]]:
    """Rows with exact spans: ``csv.reader.line_num`` says which lines each row used."""
    lines: list[tuple[int, int]] = []  # (start, end without the line break) per line

    def source_lines() -> Iterator[str]:
        for match in _LINE.finditer(text):
            line = match.group()
            lines.append((match.start(), match.start() + len(line.rstrip("\r\n"))))
            yield line

    parsed: Iterator[tuple[list[str], int]]
    if quoted:
        reader = csv.reader(source_lines(), delimiter=delimiter, quotechar='"')
        parsed = ((row, reader.line_num) for row in reader)
    else:  # one row per line, quote characters are plain text: cannot fail
        parsed = (
            (line.rstrip("\r\n").split(delimiter), number)
            for number, line in enumerate(source_lines(), 1)
        )
    rows: list[tuple[list[str], LineSpan]] = []
    consumed = 0
    for row, line_num in parsed:
        first, consumed = consumed, line_num
        if not any(cell.strip() for cell in row):
            continue
        check_block_count(len(rows) + 1, limits, source_uri, noun="rows")
        start, end = lines[first][0], lines[consumed - 1][1]
        span = LineSpan(line_start=first + 1, line_end=consumed, char_start=start, char_end=end)
        rows.append((row, span))
    if rows and quoted and rows[-1][1].line_end == len(lines):
        last = rows[-1][1]
        if text.count('"', last.char_start, last.char_end) % 2:
            warnings.append(
                f"unterminated quote in the row starting on line {last.line_start}; "
                "the rest of the file was read as one field"
            )
    return rows


def _clean(cells: list[str]) -> tuple[str, ...]:
    return tuple(cell.replace("\x00", "") for cell in cells)
