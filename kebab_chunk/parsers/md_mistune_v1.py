"""Markdown → CanonicalDocument on mistune 3's block parser (parser version ``md-mistune-v1``).

Only mistune's *block* grammar runs: block boundaries are all a chunker needs, and inline
parsing would roughly double the cost. mistune does not report where a token came from,
so the top-level parse is watched instead (see :class:`_RecordingState` and
:class:`_BlockParser`): every top-level token is tagged with the source offset at which
mistune started it, and each token owns the source from its start to the next token's
start, trimmed of blank lines. The blocks therefore partition the source: a block's
``text`` is exactly ``decoded[char_start:char_end]`` and no text is lost between blocks.

mistune is fed the *newline view* of the decoded text (same length, ``"\\r\\n"`` → ``" \\n"``,
lone ``"\\r"`` → ``"\\n"``) with whitespace-only lines made of form feeds, so CRLF and
LF files get the same block structure and every offset mistune sees is an offset in the
source.
"""

from __future__ import annotations

import re
from functools import lru_cache
from re import Match
from typing import Any

from mistune.block_parser import BlockParser
from mistune.core import BlockState
from mistune.markdown import Markdown
from mistune.plugins.table import table

from kebab_chunk.errors import LimitExceededError
from kebab_chunk.model.blocks import CodeBlock, ListBlock, ParagraphBlock, TableBlock
from kebab_chunk.model.spans import LineSpan
from kebab_chunk.parsers._assemble import Assembler, check_block_count
from kebab_chunk.parsers._markdown import MEDIA_TYPE, MarkdownParserBase, MarkdownSource, media_ref
from kebab_chunk.parsers._source import LineCounter, trim_region
from kebab_chunk.parsers.base import ParseLimits

__all__ = ["MEDIA_TYPE", "MarkdownParser"]

_START = "_kebab_start"  # key added to top-level token dicts: source offset of the token
_ITEMS = "_kebab_items"  # key added to top-level list tokens: cursors after each item
_GAP = "_gap"  # pseudo token type: source consumed without a token (link reference defs)
_NO_BLOCK = frozenset({"blank_line", "thematic_break", _GAP})

_WHITESPACE_LINE = re.compile(r"^[ \t\f\v]+$", re.MULTILINE)


class _RecordingState(BlockState):
    """A BlockState that, when it is the root, notes where top-level tokens start.

    Tokens appended outside any ``parse_method`` call (mistune's fast paths for plain
    paragraphs and indented code) are tagged with the cursor here; tokens made inside a
    rule are tagged by :meth:`_BlockParser.parse_method` with the cursor at which the rule
    was entered. ``child_state`` calls are logged so a list's item boundaries are known.
    """

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.active = 0  # depth of parse_method calls in progress on this (root) state
        self.gaps: list[int] = []
        self.child_log: list[tuple[int, int]] = []  # (active depth, cursor) per child_state

    def append_token(self, token: dict[str, Any]) -> None:
        super().append_token(token)
        if self.parent is None and self.active == 0:
            token.setdefault(_START, self.cursor)

    def add_paragraph(self, text: str) -> None:
        previous = self.last_token()
        super().add_paragraph(text)
        if self.parent is None and self.tokens[-1] is not previous:
            self.tokens[-1].setdefault(_START, self.cursor)

    def child_state(self, src: str, lazy_line_starts: set[int] | None = None) -> BlockState:
        if self.parent is None:
            self.child_log.append((self.active, self.cursor))
        return super().child_state(src, lazy_line_starts)


class _BlockParser(BlockParser):
    """mistune's block parser, tagging each top-level token with its start offset."""

    def parse_method(self, m: Match[str], state: BlockState) -> int | None:
        if not isinstance(state, _RecordingState) or state.parent is not None:
            return super().parse_method(m, state)
        tokens = state.tokens
        start = state.cursor
        count = len(tokens)
        last = tokens[-1] if tokens else None
        last_shape = _shape(last)
        logged = len(state.child_log)
        state.active += 1
        try:
            end = super().parse_method(m, state)
        finally:
            state.active -= 1
        added = len(tokens) - count
        if added > 0:
            level = state.active + 1
            for token in tokens[-(added + 1) :]:
                if _START in token:
                    continue
                token[_START] = start
                if token["type"] == "list":
                    token[_ITEMS] = [c for d, c in state.child_log[logged:] if d == level]
        elif end and (tokens[-1] if tokens else None) is last and _shape(last) == last_shape:
            state.gaps.append(start)  # consumed without a token: a link reference definition
        return end


def _form_feeds(match: Match[str]) -> str:
    """A whitespace-only line as form feeds: blank to every mistune rule, same length.

    mistune's indented-code fast path would take a line of five or more spaces for code,
    and CRLF adds a character to every line; form feeds keep such lines plainly blank.
    """
    return "\f" * len(match.group())


def _shape(token: dict[str, Any] | None) -> tuple[str, int] | None:
    return None if token is None else (token["type"], len(token.get("text", "")))


@lru_cache(maxsize=8)
def _block_parser(max_nested_level: int) -> _BlockParser:
    """One shared parser per nesting limit; parse state lives in the BlockState, not here."""
    parser = _BlockParser(max_nested_level=max_nested_level)
    table(Markdown(block=parser))  # the GFM table plugin registers its block rules
    return parser


class MarkdownParser(MarkdownParserBase):
    """Parser ``md-mistune-v1``: Markdown source → blocks with exact ``lines`` spans."""

    def add_blocks(self, source: MarkdownSource, assembler: Assembler) -> None:
        limits, source_uri = assembler.limits, assembler.source_uri
        regions = _top_level_regions(source.view, source.body_start, limits, source_uri)
        count = sum(1 for region in regions if region[2]["type"] not in _NO_BLOCK)
        check_block_count(count, limits, source_uri)
        assembler.check_time()
        _Builder(source, assembler).build(regions)


def _top_level_regions(
    view: str, start: int, limits: ParseLimits, source_uri: str
) -> list[tuple[int, int, dict[str, Any]]]:
    """Run mistune's block grammar; return ``(start, end, token)`` per top-level token.

    Regions partition ``view[start:]`` in document order; ``end`` is the next region's start.
    """
    src = _WHITESPACE_LINE.sub(_form_feeds, view)
    if not src.endswith("\n"):
        src += "\n"  # mistune's rules expect a final line break; offsets are unaffected
    state = _RecordingState()
    state.process(src)
    state.cursor = start
    try:
        _block_parser(max(limits.max_nesting, 1)).parse(state)
    except RecursionError:
        raise LimitExceededError(
            f"{source_uri} nests Markdown containers too deeply to parse; "
            f"lower ParseLimits.max_nesting (now {limits.max_nesting}) or flatten the file."
        ) from None
    tagged: list[tuple[int, dict[str, Any]]] = [
        (token[_START], token) for token in state.tokens if _START in token
    ]
    tagged.extend((gap, {"type": _GAP}) for gap in state.gaps)
    tagged.sort(key=lambda pair: pair[0])  # stable: equal starts keep mistune's order
    size = len(view)
    regions = []
    for index, (token_start, token) in enumerate(tagged):
        end = tagged[index + 1][0] if index + 1 < len(tagged) else size
        regions.append((min(token_start, size), min(end, size), token))
    return regions


class _Builder:
    """Turns top-level regions into blocks with exact ``lines`` spans."""

    def __init__(self, source: MarkdownSource, assembler: Assembler) -> None:
        self.text = source.text
        self.view = source.view
        self.assembler = assembler
        self.lines = LineCounter(source.view)

    def build(self, regions: list[tuple[int, int, dict[str, Any]]]) -> None:
        for start, end, token in regions:
            if token["type"] in _NO_BLOCK:
                continue
            trimmed = trim_region(self.text, self.view, start, end)
            if trimmed is not None:
                self._block(token, *trimmed)

    def _block(self, token: dict[str, Any], start: int, end: int) -> None:
        text = self.text[start:end]
        spans = (
            LineSpan(
                line_start=self.lines.line_of(start),
                line_end=self.lines.line_of(end - 1),
                char_start=start,
                char_end=end,
            ),
        )
        add = self.assembler.add
        kind = token["type"]
        if kind == "heading":
            title = " ".join(str(token.get("text", "")).split())
            self.assembler.add_heading(int(token["attrs"]["level"]), title, text, spans)
        elif kind == "list":
            ordered = bool(token["attrs"]["ordered"])
            add(ListBlock, text, spans, ordered=ordered, items=self._items(token, start, end))
        elif kind == "block_code":
            info = str(token.get("attrs", {}).get("info", "")).split()
            add(CodeBlock, text, spans, language=info[0] if info else None)
        elif kind == "table":
            head, body = token["children"]
            header = tuple(_cell(c) for c in head["children"])
            rows = tuple(tuple(_cell(c) for c in row["children"]) for row in body["children"])
            add(TableBlock, text, spans, header=header, rows=rows)
        elif kind != "paragraph" or media_ref(text, self.assembler, spans[0]) is None:
            add(ParagraphBlock, text, spans)  # paragraphs, block quotes, HTML blocks: as written

    def _items(self, token: dict[str, Any], start: int, end: int) -> tuple[str, ...]:
        """Source text of each top-level item, split where mistune started the next item.

        mistune creates one child state per item; when an item is followed by another, the
        cursor at that moment sits just after the next item's marker line.
        """
        cursors: list[int] = token.get(_ITEMS, [])
        if len(cursors) != len(token.get("children", ())):
            return (self.text[start:end],)  # defensive: unexpected mistune behaviour
        starts = [start]
        for cursor in cursors[:-1]:
            starts.append(self.view.rfind("\n", 0, cursor - 1) + 1)
        items = []
        for index, item_start in enumerate(starts):
            item_end = starts[index + 1] if index + 1 < len(starts) else end
            trimmed = trim_region(self.text, self.view, item_start, item_end)
            items.append(self.text[trimmed[0] : trimmed[1]] if trimmed else "")
        return tuple(items)


def _cell(cell: dict[str, Any]) -> str:
    return str(cell.get("text", "")).strip()
