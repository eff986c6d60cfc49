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
import time
from collections.abc import Callable
from typing import Any

import pyromark

from kebab_chunk.errors import LimitExceededError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.blocks import (
    AudioRefBlock,
    CodeBlock,
    HeadingBlock,
    ImageRefBlock,
    ListBlock,
    ParagraphBlock,
    TableBlock,
    make_block,
)
from kebab_chunk.model.document import make_document
from kebab_chunk.model.ids import content_hash, doc_id
from kebab_chunk.model.spans import LineSpan, line_span
from kebab_chunk.parsers._front_matter import read_front_matter
from kebab_chunk.parsers._source import BLANK_CHARS, LineCounter, newline_view
from kebab_chunk.parsers.base import BlockIds, ParseLimits
from kebab_chunk.parsers.decode import decode_text
from kebab_chunk.parsers.markdown import _media_ref

__all__ = ["MEDIA_TYPE", "PARSER_VERSION", "PyromarkMarkdownParser"]

PARSER_VERSION = "md-pyromark-v1"
MEDIA_TYPE = "text/markdown"
_DEFAULT_LIMITS = ParseLimits()

#: GFM pipe tables on; every other extension off (CommonMark block structure otherwise).
_MARKDOWN = pyromark.Markdown(options=pyromark.Options.ENABLE_TABLES)

AnyBlock = (
    HeadingBlock
    | ParagraphBlock
    | ListBlock
    | CodeBlock
    | TableBlock
    | ImageRefBlock
    | AudioRefBlock
)

_LONE_CR = re.compile(r"\r(?!\n)")

#: The opener of an ATX heading line (a setext heading's first line never matches it).
_ATX_OPENER = re.compile(r"[ \t]*#{1,6}(?=[ \t\r\n]|$)")

#: The time budget and block limit are checked every 64 top-level blocks (and at the end).
_TIME_CHECK_MASK = 63

# What a top-level block needs from the events inside it.
_PLAIN, _HEADING, _LIST, _TABLE = 0, 1, 2, 3

#: One top-level block as scanned: kind, byte range, and the kind's details (byte ranges).
_Record = tuple[str, int, int, Any]


class PyromarkMarkdownParser:
    """Parser ``md-pyromark-v1``: Markdown source → blocks with exact ``lines`` spans."""

    version = PARSER_VERSION
    media_types = (MEDIA_TYPE,)

    def parse(
        self, raw: bytes, source_uri: str, limits: ParseLimits = _DEFAULT_LIMITS
    ) -> CanonicalDocument:
        started = _clock()
        text, warnings = decode_text(raw, source_uri)
        view = newline_view(text)
        front = read_front_matter(text, view)
        metadata = front.metadata if front else {}
        base = 0
        if front:
            warnings.extend(front.warnings)
            base = front.end
        body = text[base:] if base else text
        records, deepest = _scan(_lone_cr_as_lf(body), limits, started, source_uri)
        if deepest > limits.max_nesting:
            warnings.append(
                f"Markdown elements nest {deepest} levels deep (a list and its items count "
                f"as two), over max_nesting={limits.max_nesting}; the deeper structure is "
                "kept as the text of its top-level block"
            )
        the_doc_id = doc_id(source_uri)
        offsets = _code_points(body, base)
        blocks = _Builder(text, view, offsets, BlockIds(the_doc_id)).build(records)
        _check_time(started, limits, source_uri)
        title = metadata.get("title")
        if not isinstance(title, str):
            title = next(
                (b.title for b in blocks if isinstance(b, HeadingBlock) and b.level == 1), None
            )
        return make_document(
            doc_id=the_doc_id,
            source_uri=source_uri,
            media_type=MEDIA_TYPE,
            content_hash=content_hash(raw),
            parser_version=PARSER_VERSION,
            title=title,
            metadata=metadata,
            blocks=tuple(blocks),
            warnings=tuple(warnings),
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


def _clock() -> float:
    return time.monotonic()


def _check_time(started: float, limits: ParseLimits, source_uri: str) -> None:
    """Stop cooperatively once the document has used up ``limits.time_budget_s``."""
    elapsed = _clock() - started
    if elapsed > limits.time_budget_s:
        raise LimitExceededError(
            f"{source_uri} took {elapsed:.1f}s to parse, over time_budget_s="
            f"{limits.time_budget_s}; split the file or raise the budget."
        )


def _too_many_blocks(source_uri: str, limits: ParseLimits) -> LimitExceededError:
    return LimitExceededError(
        f"{source_uri} has more than {limits.max_blocks} blocks; split the file "
        "or raise ParseLimits.max_blocks."
    )


def _scan(
    body: str, limits: ParseLimits, started: float, source_uri: str
) -> tuple[list[_Record], int]:
    """Walk pulldown-cmark's events once; return the top-level blocks and the deepest nesting.

    Each record is ``(kind, byte_start, byte_end, details)``: for a heading ``(level,
    title_start, title_end)``, for a list ``(ordered, item_starts)``, for a code block its
    info string, for a table ``(header_cells, rows)`` of cell byte ranges. Thematic breaks
    (bare ``"Rule"`` events) and link reference definitions (no event) make no record.
    The time budget and the block limit are checked every 64 top-level blocks and at the
    end, so a document far over ``max_blocks`` fails before the rest of it is scanned.
    """
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
    max_blocks = limits.max_blocks
    for event, where in _MARKDOWN.events_with_range(body):
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
                if len(records) > max_blocks:
                    raise _too_many_blocks(source_uri, limits)
                _check_time(started, limits, source_uri)
            continue
        if mode == _HEADING:  # Text, Code, InlineHtml, ... inside a heading
            if first < 0:
                first = where["start"]
            last = where["end"]
    if len(records) > max_blocks:
        raise _too_many_blocks(source_uri, limits)
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

    def __init__(self, text: str, view: str, offsets: Callable[[int], int], ids: BlockIds) -> None:
        self.text = text
        self.view = view
        self.chars = offsets
        self.ids = ids
        self.lines = LineCounter(view)
        self.headings: list[tuple[int, str]] = []  # open sections: (level, title)
        self.path: tuple[str, ...] = ()  # titles of self.headings, rebuilt at each heading

    def build(self, records: list[_Record]) -> list[AnyBlock]:
        """Blocks of the scanned records, in order (records whose text is blank are dropped).

        The loop is the parser's hot path, so the per-block helpers are inlined: the line
        start is found with one ``rfind`` on the newline view, and line numbers are counted
        on from the previous block (records come in document order, see ``LineCounter``).
        """
        blocks: list[AnyBlock] = []
        chars, source, view, next_id = self.chars, self.text, self.view, self.ids.next
        line_of = self.lines.line_of
        for kind, byte_start, byte_end, details in records:
            pos = chars(byte_start)
            start = view.rfind("\n", 0, pos) + 1
            if start < pos and source[start:pos].strip(BLANK_CHARS):
                start = pos  # defensive: a block never starts mid-line at the top level
            text = source[start : chars(byte_end)].rstrip(BLANK_CHARS)
            if not text:
                continue
            end = start + len(text)
            span = line_span(line_of(start), line_of(end - 1), start, end)
            if kind == "paragraph":
                block: AnyBlock | None = None
                # not a block quote or HTML, and maybe an image-only paragraph
                if details is True and "![" in text:
                    block = _media_ref(text, self.ids, self.path, span)
                if block is None:
                    block = make_block(
                        ParagraphBlock, next_id("paragraph", text), text, self.path, (span,)
                    )
                blocks.append(block)
            else:
                blocks.append(self._block(kind, start, text, span, details))
        return blocks

    def _line_start(self, pos: int) -> int:
        """``pos`` moved back to the start of its line when only indentation precedes it."""
        line_start = self.view.rfind("\n", 0, pos) + 1
        if line_start < pos and self.text[line_start:pos].strip(BLANK_CHARS):
            return pos  # defensive: a block never starts mid-line at the top level
        return line_start

    def _block(self, kind: str, start: int, text: str, span: LineSpan, details: Any) -> AnyBlock:
        """A heading, list, code or table block (paragraphs are built in :meth:`build`)."""
        if kind == "heading":
            level, first, last = details
            title = "" if first < 0 else self._title(text, start, last)
            headings = self.headings
            while headings and headings[-1][0] >= level:
                headings.pop()
            headings.append((level, title))
            self.path = tuple(title for _, title in headings)
            return make_block(
                HeadingBlock,
                self.ids.next("heading", text),
                text,
                self.path,
                (span,),
                level=level,
                title=title,
            )
        if kind == "list":
            ordered, item_starts = details
            return make_block(
                ListBlock,
                self.ids.next("list", text),
                text,
                self.path,
                (span,),
                ordered=ordered,
                items=self._items(item_starts, start, start + len(text)),
            )
        if kind == "code":
            return make_block(
                CodeBlock, self.ids.next("code", text), text, self.path, (span,), language=details
            )
        header, rows = details
        return make_block(
            TableBlock,
            self.ids.next("table", text),
            text,
            self.path,
            (span,),
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
