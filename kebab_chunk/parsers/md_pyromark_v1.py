"""Markdown → CanonicalDocument on pulldown-cmark via ``pyromark`` (``md-pyromark-v1``).

pulldown-cmark is a compiled CommonMark pull parser that reports the source range of every
event, so block boundaries come from the parser itself instead of being reconstructed.
Only *top-level* blocks become :class:`Block` records, so the event stream is walked once
with a depth counter; events inside a top-level block are looked at only where they carry
a field of the block (a heading's title, a list's items, a table's cells).

Offsets: pulldown-cmark ranges are UTF-8 byte offsets. For ASCII text they are code-point
offsets already; otherwise :class:`_Utf8Offsets` converts them incrementally (each
conversion decodes only the bytes since the previous one, so a document costs one extra
decode in total). A block's span starts at the beginning of its first line (indentation
is source as written, as in ``md-mistune-v1``) and ends at the end of its range with
trailing blanks and line breaks dropped, so ``block.text == decoded[char_start:char_end]``.
Front matter is cut off before parsing (same rule as ``md-mistune-v1``) and its length
added back to every offset.

pulldown-cmark reads LF and CRLF line ends natively; only lone CRs are given to it as LF
(same length, so offsets do not move). Line numbers are counted on the newline view (see
:mod:`._source`). Nothing here recurses, so any nesting depth parses; a depth over
``ParseLimits.max_nesting`` is reported as a document warning.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pyromark

from kebab_chunk._core import core
from kebab_chunk.model.blocks import CodeBlock, ListBlock, ParagraphBlock, TableBlock, make_block
from kebab_chunk.model.spans import LineSpan, line_span
from kebab_chunk.parsers._assemble import Assembler, check_block_count
from kebab_chunk.parsers._markdown import MEDIA_TYPE, MarkdownParserBase, MarkdownSource, media_ref
from kebab_chunk.parsers._source import BLANK_CHARS

__all__ = ["MEDIA_TYPE", "PyromarkMarkdownParser", "nesting_warning"]

#: GFM pipe tables on; every other extension off (CommonMark block structure otherwise).
_MARKDOWN = pyromark.Markdown(options=pyromark.Options.ENABLE_TABLES)

_LONE_CR = re.compile(r"\r(?!\n)")

#: The opener of an ATX heading line (a setext heading's first line never matches it).
_ATX_OPENER = re.compile(r"[ \t]*#{1,6}(?=[ \t\r\n]|$)")

#: The time budget and block limit are checked every 64 top-level blocks (and at the end).
_TIME_CHECK_MASK = 63

# What a top-level block needs from the events inside it.
_PLAIN, _HEADING, _LIST, _TABLE = 0, 1, 2, 3

#: One top-level block as scanned: kind, byte range, and the kind's details (byte ranges).
_Record = tuple[str, int, int, Any]


class PyromarkMarkdownParser(MarkdownParserBase):
    """Parser ``md-pyromark-v1``: Markdown source → blocks with exact ``lines`` spans."""

    def add_blocks(self, source: MarkdownSource, assembler: Assembler) -> None:
        base = source.body_start
        body = source.text[base:] if base else source.text
        records, deepest = _scan(_lone_cr_as_lf(body), assembler)
        warning = nesting_warning(deepest, assembler.limits.max_nesting)
        if warning is not None:
            source.warnings.append(warning)
        _Builder(source, _code_points(body, base), assembler).build(records)


def nesting_warning(deepest: int, max_nesting: int) -> str | None:
    """The document warning for nesting ``deepest`` levels deep, or None within the limit
    (the compiled core's path words it with this function too)."""
    if deepest <= max_nesting:
        return None
    return (
        f"Markdown elements nest {deepest} levels deep (a list and its items count "
        f"as two), over max_nesting={max_nesting}; the deeper structure is "
        "kept as the text of its top-level block"
    )


def _lone_cr_as_lf(body: str) -> str:
    """``body`` with each lone ``"\\r"`` line end as ``"\\n"`` (same length in bytes and chars).

    pulldown-cmark reads LF and CRLF line ends, but not every rule accepts a lone CR (an
    opening code fence followed by one is not a fence), although CommonMark counts it as a
    line end. CRLF is left to the parser as it is.
    """
    if "\r" not in body:
        return body
    return _LONE_CR.sub("\n", body)


def _scan(body: str, assembler: Assembler) -> tuple[list[_Record], int]:
    """Walk pulldown-cmark's events once; return the top-level blocks and the deepest nesting.

    Each record is ``(kind, byte_start, byte_end, details)``: for a heading ``(level,
    title_start, title_end)``, for a list ``(ordered, item_starts)``, for a code block its
    info string, for a table ``(header_cells, rows)`` of cell byte ranges. Thematic breaks
    (bare ``"Rule"`` events) and link reference definitions (no event) make no record.
    The time budget and the block limit are checked every 64 top-level blocks and at the
    end, so a document far over ``max_blocks`` fails before the rest of it is scanned.
    The compiled core (:mod:`kebab_chunk._core`) gives the same records when installed;
    it counts blocks the same way and the time budget is checked once its scan is done.
    """
    limits, source_uri = assembler.limits, assembler.source_uri
    compiled = core()
    scanned = None if compiled is None else compiled.scan_markdown(body, limits.max_blocks)
    if scanned is not None:  # the same records, without one Python object per event
        found, deepest_found, _ = scanned  # over the limit or not, the count says so
        check_block_count(len(found), limits, source_uri)
        assembler.check_time()
        return found, deepest_found
    records: list[_Record] = []
    depth = deepest = 0
    mode = _PLAIN
    kind = ""
    start = 0
    details: Any = None
    first = last = -1  # heading title range
    items: list[int] = []
    header: list[tuple[int, int]] = []
    rows: list[list[tuple[int, int]]] = []
    for event, where in _MARKDOWN.events_with_range(body):
        if depth and mode == _PLAIN:
            # Inside a paragraph, code block, HTML block or block quote (most events): only
            # the nesting depth matters, until the top-level block's own End.
            if event.__class__ is not dict:
                continue
            if "Start" in event:
                depth += 1
                if depth > deepest:
                    deepest = depth
                continue
            if "End" not in event:
                continue
            depth -= 1
            if depth:
                continue
            records.append((kind, start, where["end"], details))
            if not len(records) & _TIME_CHECK_MASK:
                check_block_count(len(records), limits, source_uri)
                assembler.check_time()
            continue
        if event.__class__ is not dict:
            # SoftBreak / HardBreak (inline) or Rule (a thematic break: no block)
            if mode == _HEADING:
                last = where["end"]
            continue
        if "Start" in event:
            depth += 1
            if depth == 1:
                start = where["start"]
                kind, mode, details = _open(event["Start"])
                if mode == _HEADING:
                    first = last = -1
                elif mode == _LIST:
                    items = []
                    last = where["end"]
                elif mode == _TABLE:
                    header, rows = [], []
            elif mode == _HEADING:
                if first < 0:
                    first = where["start"]
                last = where["end"]
            elif mode == _LIST:
                if depth == 2:
                    items.append(where["start"])
            elif mode == _TABLE:
                if depth == 3:
                    (rows[-1] if rows else header).append((where["start"], where["end"]))
                elif depth == 2 and event["Start"] == "TableRow":
                    rows.append([])
            if depth > deepest:
                deepest = depth
            continue
        if "End" in event:
            depth -= 1
            if depth:
                if mode == _HEADING:
                    last = where["end"]
                elif mode == _LIST and depth == 1:
                    last = where["end"]  # the end of the list's last item, see below
                continue
            end = where["end"]
            if mode == _HEADING:
                details = (details, first, last)
            elif mode == _LIST:
                # pulldown-cmark stretches a list's range over a link reference definition
                # that follows it; the list's own source ends where its last item ends.
                details = (details, items)
                end = last
            elif mode == _TABLE:
                details = (header, rows)
            records.append((kind, start, end, details))
            mode = _PLAIN
            if not len(records) & _TIME_CHECK_MASK:
                check_block_count(len(records), limits, source_uri)
                assembler.check_time()
            continue
        if mode == _HEADING:  # Text, Code, InlineHtml, ... inside a heading
            if first < 0:
                first = where["start"]
            last = where["end"]
    check_block_count(len(records), limits, source_uri)
    return records, deepest


def _open(tag: Any) -> tuple[str, int, Any]:
    """``(kind, mode, details)`` for a top-level Start tag."""
    if tag.__class__ is str:  # "Paragraph", "HtmlBlock" (and extensions we do not enable)
        return "paragraph", _PLAIN, tag == "Paragraph"
    name, value = next(iter(tag.items()))
    if name == "Heading":
        return "heading", _HEADING, int(value["level"][1])
    if name == "List":
        return "list", _LIST, value is not None
    if name == "CodeBlock":
        info = value["Fenced"].split() if value.__class__ is dict else ()
        return "code", _PLAIN, info[0] if info else None
    if name == "Table":
        return "table", _TABLE, None
    return "paragraph", _PLAIN, False  # block quotes: kept as written


def _code_points(body: str, base: int) -> Callable[[int], int]:
    """A function mapping UTF-8 byte offsets of ``body`` to code-point offsets in the text.

    ``body`` starts at code point ``base`` of the decoded text (after any front matter).
    For ASCII text the mapping is adding ``base`` (a C-level bound method, no Python frame).
    """
    if body.isascii():
        return base.__add__
    return _Utf8Offsets(body, base)


class _Utf8Offsets:
    """Byte → code-point offsets for non-ASCII text, converted incrementally.

    Each query decodes only the bytes between it and the previous query; queries come
    almost in document order, so converting all of a document's offsets costs about one
    decode of the document instead of one per offset.
    """

    def __init__(self, body: str, base: int) -> None:
        self._data = body.encode("utf-8")
        self._byte = 0
        self._char = base

    def __call__(self, offset: int) -> int:
        if offset >= self._byte:
            self._char += len(self._data[self._byte : offset].decode("utf-8"))
        else:
            self._char -= len(self._data[offset : self._byte].decode("utf-8"))
        self._byte = offset
        return self._char


class _Builder:
    """Turns scanned records into blocks with exact spans, heading paths and ids."""

    def __init__(
        self, source: MarkdownSource, offsets: Callable[[int], int], assembler: Assembler
    ) -> None:
        self.text = source.text
        self.view = source.view
        self.chars = offsets
        self.assembler = assembler

    def build(self, records: list[_Record]) -> None:
        """Add the blocks of the scanned records, in order (blank ones are dropped).

        The loop is the parser's hot path, so the per-block helpers are inlined: the line
        start is found with one ``rfind`` on the newline view, line numbers are counted
        on from the previous block (records come in document order; the walk of
        ``_source.LineCounter``, inlined), and a plain paragraph is made and appended
        without a call to the assembler.
        """
        chars, source, view = self.chars, self.text, self.view
        assembler = self.assembler
        next_id, append = assembler.ids.next, assembler.blocks.append
        count = view.count
        at, line = 0, 1  # LineCounter's walk, inlined: line holds the line of offset at
        for kind, byte_start, byte_end, details in records:
            pos = chars(byte_start)
            start = view.rfind("\n", 0, pos) + 1
            if start < pos and source[start:pos].strip(BLANK_CHARS):
                start = pos  # defensive: a block never starts mid-line at the top level
            text = source[start : chars(byte_end)].rstrip(BLANK_CHARS)
            if not text:
                continue
            end = start + len(text)
            if start >= at:
                line += count("\n", at, start)
            else:
                line -= count("\n", start, at)
            first_line = line
            line += count("\n", start, end - 1)  # end - 1 >= start: text is not empty
            at = end - 1
            span = line_span(first_line, line, start, end)
            if kind != "paragraph":
                self._block(kind, start, text, span, details)
                continue
            # details: not a block quote or HTML block, so maybe an image-only paragraph
            if details is True and "![" in text and media_ref(text, assembler, span):
                continue
            paragraph = next_id("paragraph", text)
            append(make_block(ParagraphBlock, paragraph, text, assembler.path, (span,)))

    def _line_start(self, pos: int) -> int:
        """``pos`` moved back to the start of its line when only indentation precedes it."""
        line_start = self.view.rfind("\n", 0, pos) + 1
        if line_start < pos and self.text[line_start:pos].strip(BLANK_CHARS):
            return pos  # defensive: a block never starts mid-line at the top level
        return line_start

    def _block(self, kind: str, start: int, text: str, span: LineSpan, details: Any) -> None:
        """Add a heading, list, code or table block (paragraphs are added by :meth:`build`)."""
        spans = (span,)
        if kind == "heading":
            level, first, last = details
            title = "" if first < 0 else self._title(text, start, last)
            self.assembler.add_heading(level, title, text, spans)
        elif kind == "list":
            ordered, item_starts = details
            items = self._items(item_starts, start, start + len(text))
            self.assembler.add(ListBlock, text, spans, ordered=ordered, items=items)
        elif kind == "code":
            self.assembler.add(CodeBlock, text, spans, language=details)
        else:
            header, rows = details
            self.assembler.add(
                TableBlock,
                text,
                spans,
                header=tuple(self._slice(*cell).strip() for cell in header),
                rows=tuple(tuple(self._slice(*cell).strip() for cell in row) for row in rows),
            )

    def _title(self, text: str, start: int, byte_end: int) -> str:
        """A heading's content as written (ATX marker and closing sequence excluded).

        The content starts after the ATX opener (or at the first non-blank character of a
        setext heading) rather than at the first inline event, because an escaped first
        character's event starts after its backslash; it ends where the last inline event
        ends, before any closing ``#`` sequence. Runs of whitespace become one space.
        """
        opener = _ATX_OPENER.match(text)
        content_start = opener.end() if opener else 0
        return " ".join(text[content_start : self.chars(byte_end) - start].split())

    def _slice(self, byte_start: int, byte_end: int) -> str:
        return self.text[self.chars(byte_start) : self.chars(byte_end)]

    def _items(self, item_starts: list[int], start: int, end: int) -> tuple[str, ...]:
        """Source text of each top-level item: from its line start to the next item's."""
        if not item_starts:
            return (self.text[start:end],)
        starts = [start] + [self._line_start(self.chars(s)) for s in item_starts[1:]]
        starts.append(end)
        return tuple(
            self.text[starts[i] : starts[i + 1]].rstrip(BLANK_CHARS) for i in range(len(starts) - 1)
        )
