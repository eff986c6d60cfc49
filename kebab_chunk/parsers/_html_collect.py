"""html-v1's collectors: the rendered text and fields of one block, fed by the builder.

The builder (:mod:`._html_build`) hands every token inside a heading, paragraph, caption,
``<pre>``, list or table to that block's collector, which renders it the way a browser
shows it (tags removed, entities decoded, ASCII whitespace collapsed, ``<pre>`` as written)
and keeps the fields of its kind (list items, table header and rows, code language). A
collector ends as zero or more :class:`HtmlDraft` records.
"""

from __future__ import annotations

import re
from dataclasses import KW_ONLY, dataclass, field

from kebab_chunk.errors import LimitExceededError
from kebab_chunk.parsers._assemble import Draft

__all__ = [
    "BLOCK",
    "LISTS",
    "WS",
    "WS_RUN",
    "Attrs",
    "CodeCollector",
    "Collector",
    "HtmlDraft",
    "ListCollector",
    "Piece",
    "TableCollector",
    "TextCollector",
    "Verbatim",
    "item_text",
    "names",
    "one_line",
    "render",
]


def names(spaced: str) -> frozenset[str]:
    return frozenset(spaced.split())


# Elements that end an implicit paragraph and separate lines inside a collected block.
BLOCK = names(
    "address article aside blockquote body caption center details dialog dd dir div dl dt "
    "fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup html legend "
    "li listing main menu nav ol p pre search section summary table tbody td tfoot th "
    "thead tr ul xmp"
)
LISTS = frozenset({"ul", "ol", "menu", "dir"})
_PRE = frozenset({"pre", "listing", "xmp"})

WS = " \t\n\r\f"
WS_RUN = re.compile(r"[ \t\n\r\f]+")
_LANG_CLASS = re.compile(r"(?:^|\s)(?:language|lang)-([\w+#.-]+)")

# A piece of collected text: a string, or None for a hard line break (<br>, block edge).
Piece = str | None
Attrs = list[tuple[str, str | None]]


@dataclass
class HtmlDraft(Draft):
    """A block before ids and heading paths (mutable: an image's caption comes later);
    ``start`` and ``end`` delimit its source markup."""

    _: KW_ONLY
    start: int
    end: int


def render(pieces: list[Piece]) -> str:
    """Rendered text: lines split at hard breaks, whitespace collapsed, blank lines dropped."""
    lines: list[str] = []
    current: list[str] = []
    for piece in [*pieces, None]:
        if piece is None:
            line = WS_RUN.sub(" ", "".join(current)).strip(WS)
            if line:
                lines.append(line)
            current = []
        else:
            current.append(piece)
    return "\n".join(lines)


def one_line(pieces: list[Piece]) -> str:
    return render(pieces).replace("\n", " ")


class Verbatim(str):
    """Text of a ``<pre>`` inside a list item, kept line by line (``code_in_lists``)."""

    __slots__ = ()


def item_text(pieces: list[Piece]) -> str:
    """A list item's text with its ``<pre>`` parts kept line by line: each run of other
    pieces on one line as ``one_line`` renders it, each ``<pre>`` as its lines (line
    endings as ``\\n``, the newline right after ``<pre>`` dropped as HTML does, trailing
    blanks removed)."""
    lines: list[str] = []
    run: list[Piece] = []
    index = 0
    while index <= len(pieces):
        piece = pieces[index] if index < len(pieces) else None
        if isinstance(piece, Verbatim) or index == len(pieces):
            text = one_line(run)
            if text:
                lines.append(text)
            run = []
            code: list[str] = []
            while index < len(pieces) and isinstance(pieces[index], Verbatim):
                code.append(str(pieces[index]))
                index += 1
            block = "".join(code).replace("\r\n", "\n").replace("\r", "\n")
            block = block[1:] if block.startswith("\n") else block
            lines.extend(line.rstrip() for line in block.rstrip().split("\n") if block.strip())
            if index == len(pieces):
                break
            continue
        run.append(piece)
        index += 1
    return "\n".join(lines)


class TextCollector:
    """Heading, paragraph or caption: rendered text of everything inside."""

    def __init__(self, kind: str, level: int = 0) -> None:
        self.kind = kind
        self.level = level
        self.pieces: list[Piece] = []

    def text(self, data: str) -> None:
        self.pieces.append(data)

    def start(self, tag: str, attrs: Attrs) -> None:
        if tag in BLOCK or tag == "br":
            self.pieces.append(None)

    def end(self, tag: str) -> None:
        if tag in BLOCK:
            self.pieces.append(None)

    def drafts(self, start: int, end: int) -> list[HtmlDraft]:
        if self.kind == "heading":
            title = one_line(self.pieces)
            return (
                [HtmlDraft("heading", title, start=start, end=end, level=self.level)]
                if title
                else []
            )
        text = render(self.pieces)
        return [HtmlDraft(self.kind, text, start=start, end=end)] if text else []


class CodeCollector:
    """``<pre>``: text kept as written (entities decoded), language from a class."""

    def __init__(self, attrs: Attrs) -> None:
        self.pieces: list[str] = []
        self.language = _language(attrs)

    def text(self, data: str) -> None:
        self.pieces.append(data)

    def start(self, tag: str, attrs: Attrs) -> None:
        if tag == "br":
            self.pieces.append("\n")
        elif tag == "code" and self.language is None:
            self.language = _language(attrs)

    def end(self, tag: str) -> None:
        return None

    def drafts(self, start: int, end: int) -> list[HtmlDraft]:
        text = "".join(self.pieces)
        if text.startswith("\r\n"):  # HTML drops one newline right after <pre>
            text = text[2:]
        elif text.startswith(("\n", "\r")):
            text = text[1:]
        text = text.rstrip()
        return (
            [HtmlDraft("code", text, start=start, end=end, language=self.language)]
            if text.strip()
            else []
        )


@dataclass
class _Item:
    depth: int
    marker: str
    pieces: list[Piece] = field(default_factory=list)


class ListCollector:
    """Outermost ``ul``/``ol`` (or a stray ``li``): every item, nested ones indented."""

    def __init__(
        self,
        tag: str,
        attrs: Attrs,
        max_nesting: int,
        source_uri: str,
        *,
        code_lines: bool = False,
    ) -> None:
        self.code_lines = code_lines  # HtmlRules.code_in_lists: <pre> keeps its lines
        self.in_pre = 0  # open <pre>-like elements (code_lines only)
        self.items: list[_Item] = []
        self.levels: list[list[int]] = []  # per open list: [ordered, next number]
        self.current: list[int | None] = []  # per open list: index of its open item
        self.max_nesting = max_nesting
        self.source_uri = source_uri
        self.ordered = tag == "ol"
        if tag == "li":
            self._open_list("ul", attrs)
            self._open_item()
        else:
            self._open_list(tag, attrs)

    def _open_list(self, tag: str, attrs: Attrs) -> None:
        if len(self.levels) >= self.max_nesting:
            raise LimitExceededError(
                f"{self.source_uri} nests lists deeper than max_nesting={self.max_nesting}; "
                "flatten the lists or raise ParseLimits.max_nesting."
            )
        first = _int_attr(attrs, "start", 1) if tag == "ol" else 1
        self.levels.append([int(tag == "ol"), first])
        self.current.append(None)

    def _open_item(self) -> None:
        level = self.levels[-1]
        marker = f"{level[1]}." if level[0] else "-"
        level[1] += 1
        self.items.append(_Item(len(self.levels) - 1, marker))
        self.current[-1] = len(self.items) - 1

    def _target(self) -> _Item | None:
        for index in reversed(self.current):
            if index is not None:
                return self.items[index]
        return None

    def text(self, data: str) -> None:
        target = self._target()
        if target is None:
            if not data.strip(WS):
                return
            self._open_item()  # text straight inside <ul>: keep it as an item
            target = self._target()
        assert target is not None
        target.pieces.append(Verbatim(data) if self.in_pre else data)

    def start(self, tag: str, attrs: Attrs) -> None:
        if self.code_lines and tag in _PRE:
            self.in_pre += 1
        if self.in_pre and tag == "br":
            self.text("\n")
        elif tag in LISTS:
            self._open_list(tag, attrs)
        elif tag == "li":
            self._open_item()
        elif tag in BLOCK or tag == "br":
            target = self._target()
            if target is not None:
                target.pieces.append(None)

    def end(self, tag: str) -> None:
        if self.in_pre and tag in _PRE:
            self.in_pre -= 1
        if tag in LISTS and len(self.levels) > 1:
            self.levels.pop()
            self.current.pop()
        elif tag == "li":
            self.current[-1] = None

    def drafts(self, start: int, end: int) -> list[HtmlDraft]:
        items: list[str] = []
        lines: list[str] = []
        for item in self.items:
            text = item_text(item.pieces) if self.code_lines else one_line(item.pieces)
            if text:
                items.append(text)
                first, *more = text.split("\n")
                indent = "  " * item.depth
                lines.append(f"{indent}{item.marker} {first}")
                hang = indent + " " * (len(item.marker) + 1)
                lines.extend(f"{hang}{line}" if line else "" for line in more)
        if not items:
            return []
        return [
            HtmlDraft(
                "list",
                "\n".join(lines),
                start=start,
                end=end,
                ordered=self.ordered,
                items=tuple(items),
            )
        ]


@dataclass
class _Cell:
    head: bool
    pieces: list[Piece] = field(default_factory=list)


@dataclass
class _Row:
    in_thead: bool
    cells: list[_Cell] = field(default_factory=list)


class TableCollector:
    """Outermost ``table``: rows of cells; nested tables flatten into their cell's text."""

    def __init__(self) -> None:
        self.rows: list[_Row] = []
        self.depth = 1
        self.in_thead = False
        self.cell: _Cell | None = None
        self.caption: list[Piece] | None = None
        self.captions: list[Piece] = []
        self.stray: list[Piece] = []

    def text(self, data: str) -> None:
        if self.caption is not None:
            self.caption.append(data)
        elif self.cell is not None:
            self.cell.pieces.append(data)
        else:
            self.stray.append(data)  # text misplaced in <table>/<tr>: kept, not dropped

    def start(self, tag: str, attrs: Attrs) -> None:
        if tag == "table":
            self.depth += 1
        if self.depth > 1 or self.caption is not None:
            if tag in BLOCK or tag == "br":
                self.text(" ")
            return
        if tag == "thead":
            self.in_thead = True
        elif tag in ("tbody", "tfoot"):
            self.in_thead = False
        elif tag == "tr":
            self.rows.append(_Row(self.in_thead))
            self.cell = None
        elif tag in ("td", "th"):
            if not self.rows:
                self.rows.append(_Row(self.in_thead))
            self.cell = _Cell(tag == "th")
            self.rows[-1].cells.append(self.cell)
        elif tag == "caption":
            self.caption = []
        elif self.cell is not None and (tag in BLOCK or tag == "br"):
            self.cell.pieces.append(None)

    def end(self, tag: str) -> None:
        if tag == "table":
            self.depth -= 1
            return
        if self.depth > 1:
            return
        if tag == "caption" and self.caption is not None:
            self.captions.extend([*self.caption, None])
            self.caption = None
        elif tag in ("td", "th", "tr"):
            self.cell = None
        elif tag == "thead":
            self.in_thead = False

    def drafts(self, start: int, end: int) -> list[HtmlDraft]:
        rows = [r for r in self.rows if r.cells]
        grid = [tuple(one_line(c.pieces) for c in r.cells) for r in rows]
        drafts: list[HtmlDraft] = []
        if any(any(cell for cell in row) for row in grid):
            first = rows[0]
            has_header = len(rows) > 1 and (first.in_thead or all(c.head for c in first.cells))
            header = grid[0] if has_header else ()
            body = grid[1:] if has_header else grid
            text = "\n".join(" | ".join(row) for row in grid)
            drafts.append(
                HtmlDraft("table", text, start=start, end=end, header=header, rows=tuple(body))
            )
        caption = render(self.captions)
        if caption:  # a <caption> is shown above its table: it comes first
            drafts.insert(0, HtmlDraft("paragraph", caption, start=start, end=end))
        stray = render(self.stray)
        if stray:
            drafts.append(HtmlDraft("paragraph", stray, start=start, end=end))
        return drafts


Collector = TextCollector | CodeCollector | ListCollector | TableCollector


def _language(attrs: Attrs) -> str | None:
    for name, value in attrs:
        if name == "data-lang" and value and value.strip():
            return value.strip()
        if name == "class" and value:
            match = _LANG_CLASS.search(value)
            if match:
                return match.group(1)
    return None


def _int_attr(attrs: Attrs, name: str, default: int) -> int:
    for key, value in attrs:
        if key == name and value is not None:
            try:
                return int(value.strip())
            except ValueError:
                return default
    return default
