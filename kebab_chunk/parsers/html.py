"""HTML → CanonicalDocument (parser version ``html-v1``).

Exact-slice rule for HTML: a block's ``LineSpan`` covers the element's *source markup*
(from the ``<`` of its start tag to the ``>`` of its end tag, or to the end of its last
content when the end tag is implied), while its ``text`` is the *rendered* text (tags
removed, entities decoded, ASCII whitespace collapsed; ``<pre>`` kept as written). So
``decoded[span.char_start:span.char_end]`` is the markup a reader can look up, and
``text`` is what a browser shows for it.

Tokens come from :mod:`kebab_chunk.parsers.html_tokenizer`, which reproduces exactly the
token stream of the standard library's ``html.parser`` as of CPython 3.11.7 (what html-v1
was built on) in linear time and independently of the running interpreter. That tokenizer
was chosen because it reports where each token starts, which makes every span exact (lxml
gives only a line number and selectolax none); it is lenient (malformed markup becomes
text, not an error) and iterative, so 100,000 nested ``<div>`` cost no recursion. On top
of it, :class:`_Builder` keeps a small stack of the *structural* elements only (blocks,
lists, tables, dropped subtrees) and applies the HTML5 implied-end-tag rules that matter
for block boundaries (``<p>`` closed by a block, ``<li>`` by the next ``<li>``, table
cells and rows); inline elements are transparent, so mis-nested inline markup cannot
disturb the block structure. One deliberate departure: an unclosed heading ends at the
next paragraph, list, table or sectioning element (a browser would make the rest of the
page part of the heading).

Blocks: ``h1``–``h6`` → heading; ``p`` → paragraph; outermost ``ul``/``ol`` → one list
(nested lists indented in ``text``, every item in ``items``); ``pre`` → code (language
from a ``language-*``/``lang-*`` class); outermost ``table`` → table (header = first row
when it is in ``<thead>`` or made of ``<th>``); ``img`` → image reference, captioned by
its ``<figure>``'s ``<figcaption>``. Text outside those (``div``, ``blockquote``, ``td``
of layout markup...) becomes implicit paragraphs split at block boundaries, so no visible
text is lost. Dropped with their content: ``script``, ``style``, ``noscript``,
``template``, ``nav``, form controls, embedded objects, page-level ``header``/``footer``
(not those inside ``article``/``section``/``main``/``aside``), and elements marked
``hidden``, ``aria-hidden="true"``, ``display:none`` or with a navigation/banner/
contentinfo role. Images with neither alt text nor caption are decorative by HTML's own
rule and are skipped, counted in a warning.
"""

from __future__ import annotations

import bisect
import codecs
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from kebab_chunk.errors import LimitExceededError, ParseError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.blocks import (
    CodeBlock,
    HeadingBlock,
    ImageRefBlock,
    ListBlock,
    ParagraphBlock,
    TableBlock,
)
from kebab_chunk.model.ids import content_hash, doc_id
from kebab_chunk.model.spans import LineSpan
from kebab_chunk.parsers._source import newline_view
from kebab_chunk.parsers.base import BlockIds, ParseLimits
from kebab_chunk.parsers.decode import decode_text
from kebab_chunk.parsers.html_tokenizer import HtmlTokenizer, MarkupError

__all__ = ["MEDIA_TYPE", "PARSER_VERSION", "HtmlParser"]

PARSER_VERSION = "html-v1"
MEDIA_TYPE = "text/html"


def _names(spaced: str) -> frozenset[str]:
    return frozenset(spaced.split())


_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_VOID = _names(
    "area base basefont bgsound br col embed hr img input keygen link meta param source track wbr"
)
# Elements that end an implicit paragraph and separate lines inside a collected block.
_BLOCK = _names(
    "address article aside blockquote body caption center details dialog dd dir div dl dt "
    "fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup html legend "
    "li listing main menu nav ol p pre search section summary table tbody td tfoot th "
    "thead tr ul xmp"
)
_DROP = _names(
    "script style noscript template nav svg iframe object embed canvas select datalist "
    "button textarea title frameset noembed noframes"
)
_SECTIONING = ("article", "aside", "main", "nav", "section")
_DROP_ROLES = frozenset({"navigation", "banner", "contentinfo"})
# A start tag of one of these closes an open <p> (HTML5 "close a p element").
_CLOSES_P = _names(
    "address article aside blockquote center details dialog dir div dl dd dt fieldset "
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr li listing main "
    "menu nav ol p pre search section summary table ul xmp"
)
# Block starts that end an unclosed heading (a deliberate departure from HTML5, see _Builder).
_CLOSES_HEADING = _names(
    "p ul ol dl li table pre blockquote figure form hr section article main aside nav header footer"
)
# Elements an implied or explicit end tag must not close across ("scope" boundaries).
_SCOPE = frozenset({"html", "table", "td", "th", "caption", "template", "button"})
_IMPLIED_ENDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    # start tag -> (open elements it closes, elements that stop the search)
    "li": (frozenset({"li"}), frozenset({"ul", "ol", "menu", "dir"}) | _SCOPE),
    "dt": (frozenset({"dt", "dd"}), frozenset({"dl"}) | _SCOPE),
    "dd": (frozenset({"dt", "dd"}), frozenset({"dl"}) | _SCOPE),
    "tr": (frozenset({"tr", "td", "th"}), frozenset({"table", "thead", "tbody", "tfoot"})),
    "td": (frozenset({"td", "th"}), frozenset({"tr", "table"})),
    "th": (frozenset({"td", "th"}), frozenset({"tr", "table"})),
    "thead": (frozenset({"tr", "td", "th", "thead", "tbody", "tfoot"}), frozenset({"table"})),
    "tbody": (frozenset({"tr", "td", "th", "thead", "tbody", "tfoot"}), frozenset({"table"})),
    "tfoot": (frozenset({"tr", "td", "th", "thead", "tbody", "tfoot"}), frozenset({"table"})),
}
_BOUNDARY = _BLOCK | frozenset({"tbody", "tfoot", "thead", "tr"})
_STRUCTURAL = _BOUNDARY | _DROP
_LISTS = frozenset({"ul", "ol", "menu", "dir"})
_DEFAULT_LIMITS = ParseLimits()
_MAX_SEARCH = 512  # how deep an implied or explicit end tag looks for its element

_WS = " \t\n\r\f"
_WS_RUN = re.compile(r"[ \t\n\r\f]+")
_NON_WS = re.compile(r"[^ \t\n\r\f]")
_LANG_CLASS = re.compile(r"(?:^|\s)(?:language|lang)-([\w+#.-]+)")
_DISPLAY_NONE = re.compile(r"display\s*:\s*none", re.IGNORECASE)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_LEGACY_CHARSETS = {"iso-8859-1": "cp1252", "latin1": "cp1252", "us-ascii": "cp1252"}
_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)

# A piece of collected text: a string, or None for a hard line break (<br>, block edge).
Piece = str | None
Attrs = list[tuple[str, str | None]]


class HtmlParser:
    """Parser ``html-v1``: exact markup spans, rendered text, boilerplate dropped."""

    version = PARSER_VERSION
    media_types = (MEDIA_TYPE,)

    def parse(
        self, raw: bytes, source_uri: str, limits: ParseLimits = _DEFAULT_LIMITS
    ) -> CanonicalDocument:
        text, warnings = _decode(raw, source_uri)
        builder = _Builder(text, source_uri, limits)
        try:
            HtmlTokenizer(text, builder).run()
        except (LimitExceededError, ParseError):
            raise
        except Exception as exc:  # a malformed <![ section (the only refusal), or a bug
            # html-v1's message names the exception of its original tokenizer, html.parser
            kind = "AssertionError" if isinstance(exc, MarkupError) else type(exc).__name__
            raise ParseError(
                f"{source_uri} could not be tokenized as HTML ({kind}: {exc}); "
                "check that the file is HTML or remove it from the corpus."
            ) from exc
        builder.finish()
        warnings.extend(builder.warnings)
        the_doc_id = doc_id(source_uri)
        return CanonicalDocument(
            doc_id=the_doc_id,
            source_uri=source_uri,
            media_type=MEDIA_TYPE,
            content_hash=content_hash(raw),
            parser_version=PARSER_VERSION,
            title=builder.title,
            blocks=_blocks(builder.drafts, text, the_doc_id),
            warnings=tuple(warnings),
        )


# --- decoding ---------------------------------------------------------------------------


def _decode(raw: bytes, source_uri: str) -> tuple[str, list[str]]:
    """decode_text, but bytes that are not UTF-8 use the ``<meta charset>`` they declare."""
    text, warnings = decode_text(raw, source_uri)
    if "\ufffd" not in text or raw.startswith(_BOMS):
        return text, warnings
    try:
        raw.decode("utf-8")
        return text, warnings  # genuine U+FFFD characters, nothing to repair
    except UnicodeDecodeError:
        pass
    match = _META_CHARSET.search(raw[:4096])
    if match is None:
        return text, warnings
    declared = match.group(1).decode("ascii").lower()
    encoding = _LEGACY_CHARSETS.get(declared, declared)
    try:
        redecoded = raw.decode(encoding)
    except (LookupError, UnicodeDecodeError):
        return text, [*warnings, f"declared charset {declared!r} did not decode the bytes"]
    return redecoded, [f"not valid UTF-8; decoded as {encoding} as declared by <meta charset>"]


# --- collected blocks ---------------------------------------------------------------------


@dataclass
class _Draft:
    """A block before ids and heading paths are assigned (mutable: captions come later)."""

    kind: str
    text: str
    start: int
    end: int
    level: int = 0
    ordered: bool = False
    items: tuple[str, ...] = ()
    language: str | None = None
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    alt: str = ""
    src: str = ""
    caption: str | None = None


def _render(pieces: list[Piece]) -> str:
    """Rendered text: lines split at hard breaks, whitespace collapsed, blank lines dropped."""
    lines: list[str] = []
    current: list[str] = []
    for piece in [*pieces, None]:
        if piece is None:
            line = _WS_RUN.sub(" ", "".join(current)).strip(_WS)
            if line:
                lines.append(line)
            current = []
        else:
            current.append(piece)
    return "\n".join(lines)


def _one_line(pieces: list[Piece]) -> str:
    return _render(pieces).replace("\n", " ")


class _TextCollector:
    """Heading, paragraph or caption: rendered text of everything inside."""

    def __init__(self, kind: str, level: int = 0) -> None:
        self.kind = kind
        self.level = level
        self.pieces: list[Piece] = []

    def text(self, data: str) -> None:
        self.pieces.append(data)

    def start(self, tag: str, attrs: Attrs) -> None:
        if tag in _BLOCK or tag == "br":
            self.pieces.append(None)

    def end(self, tag: str) -> None:
        if tag in _BLOCK:
            self.pieces.append(None)

    def drafts(self, start: int, end: int) -> list[_Draft]:
        if self.kind == "heading":
            title = _one_line(self.pieces)
            return [_Draft("heading", title, start, end, level=self.level)] if title else []
        text = _render(self.pieces)
        return [_Draft(self.kind, text, start, end)] if text else []


class _CodeCollector:
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

    def drafts(self, start: int, end: int) -> list[_Draft]:
        text = "".join(self.pieces)
        if text.startswith("\r\n"):  # HTML drops one newline right after <pre>
            text = text[2:]
        elif text.startswith(("\n", "\r")):
            text = text[1:]
        text = text.rstrip()
        return [_Draft("code", text, start, end, language=self.language)] if text.strip() else []


@dataclass
class _Item:
    depth: int
    marker: str
    pieces: list[Piece] = field(default_factory=list)


class _ListCollector:
    """Outermost ``ul``/``ol`` (or a stray ``li``): every item, nested ones indented."""

    def __init__(self, tag: str, attrs: Attrs, max_nesting: int, source_uri: str) -> None:
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
            if not data.strip(_WS):
                return
            self._open_item()  # text straight inside <ul>: keep it as an item
            target = self._target()
        assert target is not None
        target.pieces.append(data)

    def start(self, tag: str, attrs: Attrs) -> None:
        if tag in _LISTS:
            self._open_list(tag, attrs)
        elif tag == "li":
            self._open_item()
        elif tag in _BLOCK or tag == "br":
            target = self._target()
            if target is not None:
                target.pieces.append(None)

    def end(self, tag: str) -> None:
        if tag in _LISTS and len(self.levels) > 1:
            self.levels.pop()
            self.current.pop()
        elif tag == "li":
            self.current[-1] = None

    def drafts(self, start: int, end: int) -> list[_Draft]:
        items: list[str] = []
        lines: list[str] = []
        for item in self.items:
            text = _one_line(item.pieces)
            if text:
                items.append(text)
                lines.append(f"{'  ' * item.depth}{item.marker} {text}")
        if not items:
            return []
        return [
            _Draft("list", "\n".join(lines), start, end, ordered=self.ordered, items=tuple(items))
        ]


@dataclass
class _Cell:
    head: bool
    pieces: list[Piece] = field(default_factory=list)


@dataclass
class _Row:
    in_thead: bool
    cells: list[_Cell] = field(default_factory=list)


class _TableCollector:
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
            if tag in _BLOCK or tag == "br":
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
        elif self.cell is not None and (tag in _BLOCK or tag == "br"):
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

    def drafts(self, start: int, end: int) -> list[_Draft]:
        rows = [r for r in self.rows if r.cells]
        grid = [tuple(_one_line(c.pieces) for c in r.cells) for r in rows]
        drafts: list[_Draft] = []
        if any(any(cell for cell in row) for row in grid):
            first = rows[0]
            has_header = len(rows) > 1 and (first.in_thead or all(c.head for c in first.cells))
            header = grid[0] if has_header else ()
            body = grid[1:] if has_header else grid
            text = "\n".join(" | ".join(row) for row in grid)
            drafts.append(_Draft("table", text, start, end, header=header, rows=tuple(body)))
        caption = _render(self.captions)
        if caption:  # a <caption> is shown above its table: it comes first
            drafts.insert(0, _Draft("paragraph", caption, start, end))
        stray = _render(self.stray)
        if stray:
            drafts.append(_Draft("paragraph", stray, start, end))
        return drafts


Collector = _TextCollector | _CodeCollector | _ListCollector | _TableCollector


@dataclass
class _Figure:
    images: list[_Draft] = field(default_factory=list)
    caption: _Draft | None = None


@dataclass
class _Open:
    """One element on the stack (structural elements, and everything inside dropped ones)."""

    tag: str
    start: int
    dropped: bool
    collector: Collector | None = None  # set on the element that opened the collector
    figure: _Figure | None = None


# --- the block builder --------------------------------------------------------------------


class _Builder:
    """Turns the token stream into drafts; iterative, so nesting depth costs no recursion.

    ``collector`` is the outermost open block being collected (heading, paragraph, list,
    code, table, caption); everything inside it feeds it. Text outside any collector feeds
    the implicit paragraph, which ends at the next block boundary. Images met inside a
    collector or paragraph wait in ``pending_images`` and follow that block.
    """

    def __init__(self, text: str, source_uri: str, limits: ParseLimits) -> None:
        self.text = text
        self.source_uri = source_uri
        self.limits = limits
        self.stack: list[_Open] = []
        self.open_count: Counter[str] = Counter()
        self.dropped = 0
        self.collector: Collector | None = None
        self.figures: list[_Figure] = []
        self.drafts: list[_Draft] = []
        self.pending_images: list[_Draft] = []
        self.warnings: list[str] = []
        self.title: str | None = None
        self._title_pieces: list[Piece] | None = None
        self._para: list[Piece] | None = None  # the implicit paragraph, when open
        self._para_start = 0
        self._para_end = 0
        self._inline_start: int | None = None  # first inline tag since the last boundary
        self._last_end = 0  # end of the last tag or non-blank text: ends implied end tags
        self._data_start: int | None = None
        self._data_in_para = False

    # -- token entry points

    def start_tag(self, tag: str, attrs: Attrs, start: int, end: int, self_closing: bool) -> None:
        self._close_data(start)
        self._implied_ends(tag)
        if tag in _VOID:
            self._void(tag, attrs, start, end)
            self._last_end = end
            return
        dropped = self._is_dropped(tag, attrs)
        if self_closing and self.dropped:
            return  # foreign content (svg, math) inside a dropped subtree
        if tag not in _STRUCTURAL and not dropped and not self.dropped:
            if self.collector is not None:
                self.collector.start(tag, attrs)  # e.g. <code class="language-x"> in <pre>
            self._inline_tag(start, end)
            return
        if tag in _BOUNDARY:
            self._boundary()
        if tag == "title" and self.title is None and not self.open_count["svg"]:
            self._title_pieces = []
        element = _Open(tag, start, dropped)
        self.stack.append(element)
        self.open_count[tag] += 1
        self.dropped += dropped
        self._last_end = end
        if not self.dropped:
            self._open(element, attrs)
        if self_closing:  # <div/>: treated as opened and closed at once
            self._close_to(len(self.stack) - 1, end)

    def end_tag(self, tag: str, start: int, end: int) -> None:
        self._close_data(start)
        if tag == "br" and not self.dropped:  # </br> is a line break for browsers too
            self._void("br", [], start, end)
            return
        target: int | None = None
        if tag in _HEADINGS and not self.dropped:
            target = self._find(_HEADINGS.keys(), _SCOPE)
        elif self.open_count[tag]:
            target = self._find((tag,), frozenset() if tag in _SCOPE else _SCOPE)
        if target is None:
            if tag not in _STRUCTURAL:
                self._inline_tag(start, end)
            return
        if tag in _BOUNDARY:
            self._boundary()
        self._close_to(target, end)
        self._last_end = end

    def data(self, data: str, start: int) -> None:
        self._close_data(start)
        self._data_start = start
        if self._title_pieces is not None:
            self._title_pieces.append(data)
        if self.dropped:
            return
        if self.collector is not None:
            self.collector.text(data)
            return
        if self._para is None:
            first = _NON_WS.search(self.text, start)
            if not data.strip(_WS) or first is None:
                return
            self._para = []
            self._para_start = first.start()
            if self._inline_start is not None:
                self._para_start = min(self._para_start, self._inline_start)
        self._para.append(data)
        self._data_in_para = True

    def other(self, start: int) -> None:
        self._close_data(start)

    def finish(self) -> None:
        self._close_data(len(self.text))
        self._boundary()
        self._close_to(0, self._last_end)
        self._flush_pending()
        kept = [d for d in self.drafts if d.kind != "image_ref" or d.alt or d.caption]
        if len(kept) < len(self.drafts):
            self.warnings.append(
                f"{len(self.drafts) - len(kept)} image(s) without alt text or caption "
                "skipped (decorative by HTML's rules)"
            )
        self.drafts = kept

    # -- element bookkeeping

    def _open(self, element: _Open, attrs: Attrs) -> None:
        """Start a collector, feed the open one, or open a figure context."""
        tag = element.tag
        if self.collector is not None:
            self.collector.start(tag, attrs)
            return
        collector: Collector | None = None
        if tag in _HEADINGS:
            collector = _TextCollector("heading", _HEADINGS[tag])
        elif tag == "p":
            collector = _TextCollector("paragraph")
        elif tag in _LISTS or tag == "li":
            collector = _ListCollector(tag, attrs, self.limits.max_nesting, self.source_uri)
        elif tag in ("pre", "listing", "xmp"):
            collector = _CodeCollector(attrs)
        elif tag == "table":
            collector = _TableCollector()
        elif tag == "figcaption":
            collector = _TextCollector("caption")
        elif tag == "figure":
            element.figure = _Figure()
            self.figures.append(element.figure)
        element.collector = collector
        self.collector = collector or self.collector

    def _close_to(self, index: int, end: int) -> None:
        """Pop elements down to ``index``; the last one popped ends at ``end``."""
        while len(self.stack) > index:
            self._pop(end if len(self.stack) == index + 1 else self._last_end)

    def _pop(self, end: int) -> None:
        element = self.stack.pop()
        self.open_count[element.tag] -= 1
        if element.tag == "title" and self._title_pieces is not None:
            self.title = _one_line(self._title_pieces) or None
            self._title_pieces = None
        if element.dropped:
            self.dropped -= 1
        elif element.collector is not None:
            self.collector = None
            self._collected(element.collector, element.start, max(end, element.start))
        elif self.collector is not None and not self.dropped:
            self.collector.end(element.tag)
        if element.figure is not None:
            self.figures.pop()
            caption = element.figure.caption
            if caption is not None and element.figure.images:
                # the caption belongs to the figure's images instead of standing alone
                self.drafts = [d for d in self.drafts if d is not caption]
                for image in element.figure.images:
                    image.caption = caption.text

    def _collected(self, collector: Collector, start: int, end: int) -> None:
        drafts = collector.drafts(start, end)
        if isinstance(collector, _TextCollector) and collector.kind == "caption":
            # a paragraph in document order until its <figure> closes with images
            drafts = [_Draft("paragraph", d.text, d.start, d.end) for d in drafts]
            if self.figures and drafts:
                self.figures[-1].caption = drafts[0]
        self._add(*drafts)
        self._flush_pending()

    def _find(self, tags: Iterable[str], stops: frozenset[str]) -> int | None:
        """Index of the topmost open element in ``tags``, unless a scope boundary is nearer.

        The search looks at most ``_MAX_SEARCH`` elements deep, so hostile nesting cannot
        make each tag cost a walk of the whole stack.
        """
        wanted = frozenset(tags)
        lowest = max(0, len(self.stack) - _MAX_SEARCH)
        for index in range(len(self.stack) - 1, lowest - 1, -1):
            tag = self.stack[index].tag
            if tag in wanted:
                return index
            if tag in stops:
                return None
        return None

    def _implied_ends(self, tag: str) -> None:
        """HTML5's implied end tags that decide block boundaries."""
        if self.dropped:
            return
        if tag in _CLOSES_P and self.open_count["p"]:
            self._implied_close(("p",), _SCOPE)
        if tag in _IMPLIED_ENDS:
            closes, stops = _IMPLIED_ENDS[tag]
            if any(self.open_count[t] for t in closes):
                self._implied_close(closes, stops)
        if tag in _HEADINGS and self.stack and self.stack[-1].tag in _HEADINGS:
            self._implied_close((self.stack[-1].tag,), _SCOPE)
        elif tag in _CLOSES_HEADING and _is_heading(self.collector):
            # browsers would nest the block inside the unclosed heading and make the rest
            # of the page one huge heading; closing it keeps the heading a heading
            self._implied_close(_HEADINGS.keys(), _SCOPE)

    def _implied_close(self, tags: Iterable[str], stops: frozenset[str]) -> None:
        """Close the *lowest* open element in ``tags`` above the nearest ``stops`` element.

        (A new ``<tr>`` closes the open cell and its row; a new ``<tbody>`` the old one.)
        """
        wanted = frozenset(tags)
        index: int | None = None
        lowest = max(0, len(self.stack) - _MAX_SEARCH)
        for position in range(len(self.stack) - 1, lowest - 1, -1):
            tag = self.stack[position].tag
            if tag in wanted:
                index = position
            elif tag in stops:
                break
        if index is not None:
            self._boundary()
            self._close_to(index, self._last_end)

    # -- text, boundaries and images

    def _close_data(self, end: int) -> None:
        """The previous data token ends where this token starts: note its trimmed end."""
        if self._data_start is None:
            return
        stripped_end = self._data_start + len(self.text[self._data_start : end].rstrip(_WS))
        if stripped_end > self._data_start:
            self._last_end = stripped_end
            if self._data_in_para:
                self._para_end = stripped_end
        self._data_start = None
        self._data_in_para = False

    def _boundary(self) -> None:
        """A block edge: the implicit paragraph (if any) ends here."""
        self._inline_start = None
        if self._para is not None:
            pieces, self._para = self._para, None
            text = _render(pieces)
            if text:
                self._add(_Draft("paragraph", text, self._para_start, self._para_end))
        self._flush_pending()

    def _inline_tag(self, start: int, end: int) -> None:
        if self.dropped or self.collector is not None:
            return
        if self._para is None:
            if self._inline_start is None:
                self._inline_start = start
        else:
            self._para_end = end
        self._last_end = end

    def _void(self, tag: str, attrs: Attrs, start: int, end: int) -> None:
        if self.dropped:
            return
        if tag == "hr":
            self._boundary()
        elif tag == "br":
            if self.collector is not None:
                self.collector.start("br", attrs)
            elif self._para is not None:
                self._para.append(None)
        elif tag == "img" and not self._is_dropped(tag, attrs):
            values = dict(attrs)
            alt = _WS_RUN.sub(" ", values.get("alt") or "").strip(_WS)
            draft = _Draft("image_ref", alt, start, end, alt=alt, src=values.get("src") or "")
            if self.figures:
                self.figures[-1].images.append(draft)
            pending = self._inline_start is not None or self._para is not None
            if pending or self.collector is not None:
                self.pending_images.append(draft)  # follows the block it sits in
            else:
                self._add(draft)

    def _flush_pending(self) -> None:
        if self.pending_images and self.collector is None and self._para is None:
            images, self.pending_images = self.pending_images, []
            self._add(*images)

    def _add(self, *drafts: _Draft) -> None:
        self.drafts.extend(drafts)
        if len(self.drafts) > self.limits.max_blocks:
            raise LimitExceededError(
                f"{self.source_uri} has more than {self.limits.max_blocks} blocks; split "
                "the file or raise ParseLimits.max_blocks."
            )

    def _is_dropped(self, tag: str, attrs: Attrs) -> bool:
        if tag in _DROP:
            return True
        if tag in ("header", "footer") and not any(self.open_count[t] for t in _SECTIONING):
            return True  # page-level banner / footer, not an article's own header
        for name, value in attrs:
            if name == "hidden":
                return True
            if value is None:
                continue
            if name == "aria-hidden" and value.strip().lower() == "true":
                return True
            if name == "role" and value.strip().lower() in _DROP_ROLES:
                return True
            if name == "style" and _DISPLAY_NONE.search(value):
                return True
        return False


def _is_heading(collector: Collector | None) -> bool:
    return isinstance(collector, _TextCollector) and collector.kind == "heading"


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


# --- drafts → blocks ----------------------------------------------------------------------


class _Lines:
    """1-based line of an offset (line ends ``\\r\\n``, ``\\r`` or ``\\n``), by bisection."""

    def __init__(self, text: str) -> None:
        self._breaks = [m.start() for m in re.finditer("\n", newline_view(text))]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_left(self._breaks, offset) + 1


HtmlBlock = HeadingBlock | ParagraphBlock | ListBlock | CodeBlock | TableBlock | ImageRefBlock


def _blocks(drafts: list[_Draft], text: str, the_doc_id: str) -> tuple[HtmlBlock, ...]:
    """Assign heading paths (outermost first, a heading ends its own path) and block ids."""
    ids = BlockIds(the_doc_id)
    lines = _Lines(text)
    path: list[tuple[int, str]] = []
    blocks: list[HtmlBlock] = []
    for d in drafts:
        if d.kind == "heading":
            while path and path[-1][0] >= d.level:
                path.pop()
            path.append((d.level, d.text))
        heading_path = tuple(title for _, title in path)
        span = LineSpan(
            line_start=lines.line_of(d.start),
            line_end=lines.line_of(max(d.end - 1, d.start)),
            char_start=d.start,
            char_end=d.end,
        )
        block_text = d.text or d.caption or ""
        block_id = ids.next(d.kind, block_text)
        spans = (span,)
        block: HtmlBlock
        if d.kind == "heading":
            block = HeadingBlock(
                block_id=block_id,
                text=block_text,
                heading_path=heading_path,
                spans=spans,
                level=d.level,
                title=d.text,
            )
        elif d.kind == "list":
            block = ListBlock(
                block_id=block_id,
                text=block_text,
                heading_path=heading_path,
                spans=spans,
                ordered=d.ordered,
                items=d.items,
            )
        elif d.kind == "code":
            block = CodeBlock(
                block_id=block_id,
                text=block_text,
                heading_path=heading_path,
                spans=spans,
                language=d.language,
            )
        elif d.kind == "table":
            block = TableBlock(
                block_id=block_id,
                text=block_text,
                heading_path=heading_path,
                spans=spans,
                header=d.header,
                rows=d.rows,
            )
        elif d.kind == "image_ref":
            block = ImageRefBlock(
                block_id=block_id,
                text=block_text,
                heading_path=heading_path,
                spans=spans,
                alt=d.alt,
                src=d.src,
                caption=d.caption,
            )
        else:
            block = ParagraphBlock(
                block_id=block_id, text=block_text, heading_path=heading_path, spans=spans
            )
        blocks.append(block)
    return tuple(blocks)
