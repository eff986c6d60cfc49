"""Locating pieces of an element's text on its source spans; its list items and table rows.

An :class:`Anchor` tells the token-aware chunkers how to locate a piece ``text[i:j]`` of an
element, by arithmetic on the element's spans, never by searching the text:

- ``slice``: the text is the source slice of its span (``len(text) == char_end -
  char_start``; the convention of every text format and of PDF page text), or of the
  range from its first to its last line span (a CSV table with one span per record).
  Characters shift by ``i``/``j``; line numbers advance by the line breaks before the piece
  (``"\\n"``, ``"\\r\\n"`` and a lone ``"\\r"`` are one break each, as in the parsers'
  newline view).
- ``element``: the text is an element's own text in a structured source (DOCX, docling
  JSON: ``ElementSpan``), possibly cut in parts by page; a piece gets the part(s) it
  overlaps, shifted the same way.
- ``rendered``: anything else (HTML, whose span covers markup while the text is what a
  browser shows): a piece can only be located by the element's own spans.

What lies between two ``slice`` spans is ``_separators.join_gap``'s business (the rule
``md-heading-v1`` uses too); :func:`joined_spans` makes one span of two that are joined.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from kebab_chunk.chunkers._separators import is_exact, line_break_ends, line_starts, sub_line_span
from kebab_chunk.model import LineSpan, PageSpan, SourceSpan
from kebab_chunk.model.spans import ElementSpan

__all__ = [
    "Anchor",
    "joined_spans",
    "list_item_ranges",
    "list_items_from_spans",
    "make_anchor",
    "table_row_starts",
    "table_rows_from_spans",
]


@dataclass
class Anchor:
    """Locates pieces of one element's text; see the module docstring for the kinds."""

    kind: str  # "slice" | "element" | "rendered"
    text: str
    spans: tuple[SourceSpan, ...]
    base: SourceSpan | None = None  # slice, element with one part: the whole text's span
    parts: tuple[ElementSpan, ...] = ()  # element cut by page: contiguous parts
    _breaks: list[int] | None = field(default=None, repr=False)

    def locate(self, i: int, j: int) -> tuple[SourceSpan, ...]:
        """The span(s) of ``text[i:j]`` (``j > i``)."""
        if (i, j) == (0, len(self.text)) or self.kind == "rendered":
            return self.spans
        if self.parts:
            origin = self.parts[0].char_start
            return tuple(
                ElementSpan(
                    ref=p.ref,
                    page=p.page,
                    char_start=max(p.char_start, origin + i),
                    char_end=min(p.char_end, origin + j),
                )
                for p in self.parts
                if p.char_start < origin + j and origin + i < p.char_end
            )
        base = self.base
        assert base is not None
        start, end = base.char_start + i, base.char_start + j
        if isinstance(base, PageSpan):
            return (PageSpan(page=base.page, char_start=start, char_end=end),)
        if isinstance(base, ElementSpan):
            return (ElementSpan(ref=base.ref, page=base.page, char_start=start, char_end=end),)
        assert isinstance(base, LineSpan)
        if self._breaks is None:
            self._breaks = line_break_ends(self.text)
        return (sub_line_span(base, self._breaks, i, j),)


def make_anchor(text: str, spans: Sequence[SourceSpan]) -> Anchor:
    """Classify how ``text`` maps onto ``spans`` (see the module docstring)."""
    spans = tuple(spans)
    first, last = spans[0], spans[-1]
    if is_exact(text, spans):
        kind = "element" if isinstance(first, ElementSpan) else "slice"
        return Anchor(kind, text, spans, base=first)
    if last.char_end - first.char_start == len(text) and _ordered(spans):
        if all(isinstance(s, LineSpan) for s in spans):
            assert isinstance(first, LineSpan) and isinstance(last, LineSpan)
            cover = LineSpan(
                line_start=first.line_start,
                line_end=last.line_end,
                char_start=first.char_start,
                char_end=last.char_end,
            )
            return Anchor("slice", text, spans, base=cover)
        parts = [s for s in spans if isinstance(s, ElementSpan)]
        if (
            len(parts) == len(spans)
            and len({p.ref for p in parts}) == 1
            and all(a.char_end == b.char_start for a, b in itertools.pairwise(parts))
        ):
            return Anchor("element", text, spans, parts=tuple(parts))
    return Anchor("rendered", text, spans)


def _ordered(spans: Sequence[SourceSpan]) -> bool:
    return all(a.char_end <= b.char_start for a, b in itertools.pairwise(spans))


def joined_spans(a: SourceSpan, b: SourceSpan) -> tuple[SourceSpan, ...]:
    """``a`` and ``b`` as one span when they can be (same line range kind, same page)."""
    if isinstance(a, LineSpan) and isinstance(b, LineSpan):
        return (
            LineSpan(
                line_start=a.line_start,
                line_end=b.line_end,
                char_start=a.char_start,
                char_end=b.char_end,
            ),
        )
    if isinstance(a, PageSpan) and isinstance(b, PageSpan) and a.page == b.page:
        return (PageSpan(page=a.page, char_start=a.char_start, char_end=b.char_end),)
    return (a, b)


_MARKER = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t\r\n]|$)")


def list_item_ranges(text: str, items: Sequence[str]) -> list[tuple[int, int]] | None:
    """``(start, end)`` in ``text`` of each top-level item of a list, or None.

    First, the item strings are aligned in order, each starting at the first line with
    content after the previous item (a verified walk, not a search: the item must begin
    exactly there). That is how the Markdown parser cuts items. Failing that, item starts
    come from the shape of the text: lines that begin with a list marker (``-``, ``*``,
    ``+``, ``1.``, ``1)``) at the list's own indentation, accepted only when there are
    exactly ``len(items)`` of them. None means neither works (e.g. a rendering without
    markers), so the caller keeps the list whole.
    """
    aligned = _aligned_items(text, items)
    if aligned is not None:
        return aligned
    starts = _marker_starts(text, len(items))
    if starts is None:
        return None
    ends = [*starts[1:], len(text)]
    return [(s, s + len(text[s:e].rstrip())) for s, e in zip(starts, ends, strict=True)]


def _aligned_items(text: str, items: Sequence[str]) -> list[tuple[int, int]] | None:
    ranges: list[tuple[int, int]] = []
    cursor = 0
    for item in items:
        if not item.strip():
            continue
        first = len(text) - len(text[cursor:].lstrip())
        line = max(text.rfind("\n", cursor, first), text.rfind("\r", cursor, first)) + 1
        start = max(cursor, line)
        if not text.startswith(item, start):
            return None
        ranges.append((start, start + len(item)))
        cursor = start + len(item)
    if not ranges or text[cursor:].strip():
        return None
    return ranges


def _marker_starts(text: str, n_items: int) -> list[int] | None:
    if n_items <= 0:
        return None
    markers: list[tuple[int, int]] = []  # (offset of the marker, indentation)
    for start in line_starts(text):
        m = _MARKER.match(text, start)
        if m:
            indent = len(m.group()) - len(m.group().lstrip(" \t"))
            markers.append((start + indent, indent))
    if not markers or markers[0][0] != markers[0][1]:  # the list must open with an item
        return None
    first, rest = markers[0][0], markers[1:]
    top_indent = min((ind for _, ind in rest), default=0)
    options = (
        [off for off, _ in markers],
        [first, *(off for off, ind in rest if ind == top_indent)],
        [first],
    )
    for option in options:
        if len(option) == n_items:
            return option
    return None


def table_row_starts(text: str, has_header: bool, n_rows: int) -> tuple[int, list[int]] | None:
    """``(end of the header lines, start offset of each row)`` for a one-row-per-line table.

    The text must have exactly ``n_rows`` lines after its header lines (one header line for
    CSV-like text, two for a Markdown header plus delimiter row, none without a header);
    tables whose cells span lines return None and are split at line boundaries instead.
    """
    starts = line_starts(text)
    header_lines = len(starts) - n_rows
    if n_rows <= 0 or header_lines not in ((1, 2) if has_header else (0,)):
        return None
    rows = starts[header_lines:]
    header_end = len(text[: rows[0]].rstrip()) if header_lines else 0
    return header_end, rows


def table_rows_from_spans(
    anchor: Anchor, has_header: bool, n_rows: int
) -> tuple[int, list[int]] | None:
    """Like :func:`table_row_starts`, from a parser that gave one span per record (CSV).

    Record spans are exact however the cells are quoted or wrapped, so they win over
    counting lines.
    """
    spans = anchor.spans
    if anchor.kind != "slice" or n_rows <= 0 or len(spans) != n_rows + int(has_header):
        return None
    origin = spans[0].char_start
    rows = [s.char_start - origin for s in spans[int(has_header) :]]
    header_end = spans[0].char_end - origin if has_header else 0
    return header_end, rows


def list_items_from_spans(
    text: str, items: Sequence[str], spans: Sequence[SourceSpan]
) -> list[tuple[int, int]] | None:
    """Items of a list rendered one per line whose parser gave one span per item (DOCX).

    Line ``k`` of the text must end with ``items[k]`` and span ``k`` must be exactly that
    long; the item's range is that line's tail (its marker left out).
    """
    if len(items) != len(spans) or not items:
        return None
    starts = line_starts(text)
    if len(starts) != len(items):
        return None
    ranges = []
    ends = [*(s - 1 for s in starts[1:]), len(text)]
    for item, span, start, end in zip(items, spans, starts, ends, strict=True):
        line = text[start:end].rstrip("\r\n")
        if not line.endswith(item) or span.char_end - span.char_start != len(item) or not item:
            return None
        ranges.append((start + len(line) - len(item), start + len(line)))
    return ranges
