"""html-v1's block builder: the token stream in, drafts (blocks without ids) out.

It keeps a small stack of the *structural* elements only (blocks, lists, tables, dropped
subtrees) and applies the HTML5 implied-end-tag rules that matter for block boundaries
(``<p>`` closed by a block, ``<li>`` by the next ``<li>``, table cells and rows); inline
elements are transparent, so mis-nested inline markup cannot disturb the block structure.
The rules (what is dropped, what becomes a block) are described in :mod:`._html`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from kebab_chunk.parsers._assemble import check_block_count
from kebab_chunk.parsers._html_collect import (
    BLOCK,
    LISTS,
    WS,
    WS_RUN,
    Attrs,
    CodeCollector,
    Collector,
    HtmlDraft,
    ListCollector,
    Piece,
    TableCollector,
    TextCollector,
    names,
    one_line,
    render,
)
from kebab_chunk.parsers.base import ParseLimits

__all__ = ["SECTIONING", "HtmlBuilder"]

_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_VOID = names(
    "area base basefont bgsound br col embed hr img input keygen link meta param source track wbr"
)
_DROP = names(
    "script style noscript template nav svg iframe object embed canvas select datalist "
    "button textarea title frameset noembed noframes"
)
SECTIONING = ("article", "aside", "main", "nav", "section")
_DROP_ROLES = frozenset({"navigation", "banner", "contentinfo"})
# A start tag of one of these closes an open <p> (HTML5 "close a p element").
_CLOSES_P = names(
    "address article aside blockquote center details dialog dir div dl dd dt fieldset "
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr li listing main "
    "menu nav ol p pre search section summary table ul xmp"
)
# Block starts that end an unclosed heading (a deliberate departure from HTML5, see HtmlBuilder).
_CLOSES_HEADING = names(
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
_BOUNDARY = BLOCK | frozenset({"tbody", "tfoot", "thead", "tr"})
_STRUCTURAL = _BOUNDARY | _DROP
_MAX_SEARCH = 512  # how deep an implied or explicit end tag looks for its element
_NON_WS = re.compile(r"[^ \t\n\r\f]")
_DISPLAY_NONE = re.compile(r"display\s*:\s*none", re.IGNORECASE)


@dataclass
class _Figure:
    images: list[HtmlDraft] = field(default_factory=list)
    caption: HtmlDraft | None = None


@dataclass
class _Open:
    """One element on the stack (structural elements, and everything inside dropped ones)."""

    tag: str
    start: int
    dropped: bool
    collector: Collector | None = None  # set on the element that opened the collector
    figure: _Figure | None = None


class HtmlBuilder:
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
        self.drafts: list[HtmlDraft] = []
        self.pending_images: list[HtmlDraft] = []
        self.warnings: list[str] = []
        self.code_in_lists = False  # a <pre> in a list item keeps its lines (html-v3's rule)
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
            if not data.strip(WS) or first is None:
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
            collector = TextCollector("heading", _HEADINGS[tag])
        elif tag == "p":
            collector = TextCollector("paragraph")
        elif tag in LISTS or tag == "li":
            collector = ListCollector(
                tag,
                attrs,
                self.limits.max_nesting,
                self.source_uri,
                code_lines=self.code_in_lists,
            )
        elif tag in ("pre", "listing", "xmp"):
            collector = CodeCollector(attrs)
        elif tag == "table":
            collector = TableCollector()
        elif tag == "figcaption":
            collector = TextCollector("caption")
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
            self.title = one_line(self._title_pieces) or None
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
        if isinstance(collector, TextCollector) and collector.kind == "caption":
            # a paragraph in document order until its <figure> closes with images
            drafts = [HtmlDraft("paragraph", d.text, start=d.start, end=d.end) for d in drafts]
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
        stripped_end = self._data_start + len(self.text[self._data_start : end].rstrip(WS))
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
            text = render(pieces)
            if text:
                self._add(HtmlDraft("paragraph", text, start=self._para_start, end=self._para_end))
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
            alt = WS_RUN.sub(" ", values.get("alt") or "").strip(WS)
            draft = HtmlDraft(
                "image_ref", alt, start=start, end=end, alt=alt, src=values.get("src") or ""
            )
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

    def _add(self, *drafts: HtmlDraft) -> None:
        self.drafts.extend(drafts)
        check_block_count(len(self.drafts), self.limits, self.source_uri)

    def _is_dropped(self, tag: str, attrs: Attrs) -> bool:
        if tag in _DROP:
            return True
        if tag in ("header", "footer") and not any(self.open_count[t] for t in SECTIONING):
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
    return isinstance(collector, TextCollector) and collector.kind == "heading"
