"""html-v2's and html-v3's block builder: html-v1's builder plus html-v2's navigation rules
(``HtmlRules.drop_navigation``) and, switched by their own rules, html-v3's (named footers,
terms joined to definitions, a section's lone link list kept, one line ending); what each
leaves out or changes, and why: docs/internals/parser-changes.md.

:class:`NavBuilder` extends :class:`~._html_build.HtmlBuilder` without changing it (html-v1
keeps its output): it drops more elements at their start tag (navigation classes, DocBook
navigation tables), skips permalink marks, and notes where significant text sits inside
and outside links, so that :meth:`NavBuilder.finish` can leave out the blocks whose text is
entirely link text and separators (menus, breadcrumbs, texinfo's Next/Previous/Up bars).
Spans are untouched: on valid markup every kept block has exactly the span html-v1
gives it (malformed markup can move a kept block's span around what was left out; see
tests/parsers/test_html_v2.py).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from html import unescape

from kebab_chunk.parsers._html_build import SECTIONING, HtmlBuilder
from kebab_chunk.parsers._html_collect import WS, Attrs, HtmlDraft
from kebab_chunk.parsers.base import ParseLimits
from kebab_chunk.parsers.rules import HtmlRules

__all__ = ["NavBuilder"]

# Class names that mark navigation: texinfo 7 (nav-panel), DocBook XSL (navheader,
# navfooter, toc, table.nav), gtk-doc (table.navigation), common site templates.
_NAV_CLASSES = frozenset(
    {"nav", "navigation", "nav-panel", "navheader", "navfooter", "breadcrumb", "breadcrumbs", "toc"}
)
_NAV_ROLES = frozenset({"navigation", "banner", "contentinfo"})
# DocBook XSL and gtk-doc write summary="Navigation header" / "Navigation footer".
_NAV_SUMMARY = re.compile(r"\s*navigation\b", re.IGNORECASE)
# Words a navigation bar writes outside its links: texinfo's "Next: ... Previous: ... Up:".
_NAV_WORD = re.compile(
    r"(?<![^\W_])(?:next|previous|prev|up|top|forward|back)[ \t\n\r\f\xa0]*:", re.I
)
# A link that leaves the site: a scheme (https:, mailto:) or a network path (//host).
_EXTERNAL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:|//")
# The text of a skip link ("Skip to content", "Skip to main navigation").
_SKIP = re.compile(r"[ \t\n\r\f\xa0]*skip\b", re.IGNORECASE)
# A letter or digit: text made of anything else (| • » , [ ] :) is a separator.
_SIGNIFICANT = re.compile(r"[^\W_]")
# Alt texts of the arrow images navigation bars link (DocBook, gtk-doc, old site menus).
_NAV_ALTS = frozenset({"prev", "previous", "next", "up", "home", "top", "contents", "index"})
# The text of a permalink mark: the symbol a heading's self-link shows.
_MARKS = frozenset({"#", "¶", "§", "🔗", "⚓"})
_CLOSE_A = re.compile(r"</a[ \t\n\r\f>]", re.IGNORECASE)
_MARK_LOOKAHEAD = 48  # how far past <a href="#..."> a mark's text and "</a" may lie
_LINK_ONLY_KINDS = frozenset({"paragraph", "list", "table"})
# ids and classes of a page's footer in templates without <footer> (asciidoc's manual pages,
# Sphinx themes, site generators): HtmlRules.page_footer_names.
_FOOTER_NAMES = frozenset({"footer", "site-footer", "page-footer"})


class NavBuilder(HtmlBuilder):
    """html-v1's builder that also leaves out navigation, counting what it left out.

    ``nav_elements`` counts the outermost elements dropped as navigation (``<nav>``,
    navigation roles, page-level ``<header>``/``<footer>``, navigation classes and tables);
    ``link_only_blocks`` the blocks left out because all their text is link text;
    ``permalink_marks`` the ``#``/``¶`` marks skipped.
    """

    def __init__(self, text: str, source_uri: str, limits: ParseLimits, rules: HtmlRules) -> None:
        super().__init__(text, source_uri, limits)
        self.rules = rules
        self.code_in_lists = rules.code_in_lists
        self.nav_elements = 0
        self.link_only_blocks = 0
        self.permalink_marks = 0
        self._in_link = False  # inside <a href=...> (HTML has no nested links)
        self._link_noted = False  # the open link's first significant character is noted
        self._link_external = False  # the open link leaves the site (a scheme or "//")
        self._link_is_fragment = False  # the open link points into the page (href="#...")
        self._skip_mark = False  # the next text is a permalink mark's symbol
        # Source offsets (ascending) of: the first significant character of each link to
        # the site itself, of significant text outside those links, of navigation words.
        self._links: list[int] = []
        self._fragments: list[int] = []  # those of _links that point into the page
        self._plain: list[int] = []
        self._nav_words: list[int] = []
        self._linked_images: set[int] = set()  # start offsets of images inside links
        # Source ranges of the <dt> and <dd> elements (terms_with_definitions).
        self._terms: list[tuple[int, int]] = []
        self._definitions: list[tuple[int, int]] = []

    # -- token entry points

    def start_tag(self, tag: str, attrs: Attrs, start: int, end: int, self_closing: bool) -> None:
        if tag == "a":
            href = dict(attrs).get("href")
            target = (href or "").strip(WS)
            self._in_link = href is not None
            self._link_noted = False
            self._link_external = _EXTERNAL.match(target) is not None
            self._link_is_fragment = target.startswith("#")
            self._skip_mark = self._link_is_fragment and self._is_mark(end)
        elif tag == "img" and self._in_link and not self.dropped:
            self._linked_images.add(start)
        super().start_tag(tag, attrs, start, end, self_closing)

    def end_tag(self, tag: str, start: int, end: int) -> None:
        if tag == "a":
            self._in_link = False
            self._skip_mark = False
        super().end_tag(tag, start, end)

    def data(self, data: str, start: int) -> None:
        if self._skip_mark:  # a permalink's "#" or "¶": not part of the text it marks
            self._close_data(start)
            self._skip_mark = False
            if not self.dropped:
                self.permalink_marks += 1
            return
        if not self.dropped:
            self._note(data, start)
        super().data(data, start)

    def finish(self) -> None:
        super().finish()
        dropped: list[tuple[int, int]] = []
        kept: list[HtmlDraft] = []
        for index, draft in enumerate(self.drafts):
            if (
                draft.kind in _LINK_ONLY_KINDS
                and self._link_only(draft.start, draft.end)
                and not (self.rules.lone_section_links and self._see_also(index))
            ):
                dropped.append((draft.start, draft.end))
            else:
                kept.append(draft)
        inside = _Spans(dropped)
        self.drafts = [d for d in kept if not self._nav_image(d, inside)]
        self.link_only_blocks = len(dropped) + len(kept) - len(self.drafts)
        if self.rules.terms_with_definitions:
            self.drafts = _with_terms(self.drafts, _Spans(self._terms), _Spans(self._definitions))
        if self.rules.unix_line_endings:
            for draft in self.drafts:
                if "\r" in draft.text:
                    draft.text = draft.text.replace("\r\n", "\n").replace("\r", "\n")
        if self.nav_elements or self.link_only_blocks:
            self.warnings.append(
                f"navigation left out: {self.nav_elements} navigation element(s) (menus, "
                f"navigation bars, page header and footer) and {self.link_only_blocks} "
                "link-only block(s)"
            )

    @property
    def metadata(self) -> dict[str, int]:
        """What was left out, as counts for the document's metadata."""
        return {
            "navigation_elements_dropped": self.nav_elements,
            "link_only_blocks_dropped": self.link_only_blocks,
            "permalink_marks_dropped": self.permalink_marks,
        }

    # -- the rules

    def _is_dropped(self, tag: str, attrs: Attrs) -> bool:
        if super()._is_dropped(tag, attrs):
            if not self.dropped and (tag in ("nav", "header", "footer") or _has_nav_role(attrs)):
                self.nav_elements += 1
            return True
        if _is_nav_markup(tag, attrs) or (
            self.rules.page_footer_names
            and _is_named_footer(attrs)
            and not any(self.open_count[t] for t in SECTIONING)
        ):
            if not self.dropped:
                self.nav_elements += 1
            return True
        return False

    def _pop(self, end: int) -> None:
        element = self.stack[-1]
        super()._pop(end)
        if element.tag == "dt" and not self.dropped:
            self._terms.append((element.start, end))
        elif element.tag == "dd" and not self.dropped:
            self._definitions.append((element.start, end))

    def _is_mark(self, end: int) -> bool:
        """Whether the link opened at ``end`` shows only a permalink symbol (``#``, ``¶``)."""
        close = self.text.find("<", end, end + _MARK_LOOKAHEAD)
        if close < 0 or not _CLOSE_A.match(self.text, close):
            return False
        return unescape(self.text[end:close]).strip(WS + "\xa0") in _MARKS

    def _note(self, data: str, start: int) -> None:
        """Record where this text's significant characters sit (in a link or not)."""
        if self._in_link and not self._link_external:
            if not self._link_noted:
                found = _SIGNIFICANT.search(data)
                if found is not None:
                    self._link_noted = True
                    self._links.append(start + found.start())
                    if self._link_is_fragment:
                        self._fragments.append(start + found.start())
                    if self._link_is_fragment and _SKIP.match(data):
                        self._nav_words.append(start + found.start())  # "Skip to content"
            return
        words = _NAV_WORD.search(data)
        if words is not None:
            self._nav_words.append(start + words.start())
            data = _NAV_WORD.sub(lambda m: " " * len(m.group()), data)
        found = _SIGNIFICANT.search(data)
        if found is not None:
            self._plain.append(start + found.start())

    def _link_only(self, start: int, end: int) -> bool:
        """All significant text in ``[start, end)`` is the text of links within the site, and
        it reads as navigation: two or more links, or a navigation word (``Next:``, a skip
        link). Text of links that leave the site (``<Object>`` pointing at a language
        reference) counts as content, and so does a lone link (a term's anchor)."""
        if _count(self._plain, start, end):
            return False
        links = _count(self._links, start, end)
        return links >= 2 or (links == 1 and _count(self._nav_words, start, end) > 0)

    def _see_also(self, index: int) -> bool:
        """A link-only block kept as content: its section's only block, linking at least
        once out of the page (a table of contents links only into it)."""
        start, end = self.drafts[index].start, self.drafts[index].end
        outward = _count(self._links, start, end) - _count(self._fragments, start, end)
        return outward > 0 and _alone(self.drafts, index)

    def _nav_image(self, draft: HtmlDraft, inside: _Spans) -> bool:
        """An image inside a dropped link-only block, or a linked arrow (``Prev``, ``Up``)."""
        if draft.kind != "image_ref":
            return False
        if draft.start in self._linked_images and draft.alt.casefold() in _NAV_ALTS:
            return True
        return inside.contains(draft.start)


class _Spans:
    """Source ranges, asking whether an offset lies in any of them in logarithmic time."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        spans = sorted(spans)
        self._starts = [start for start, _ in spans]
        self._reach: list[int] = []  # the furthest end among the spans starting up to here
        for _, end in spans:
            self._reach.append(max(end, self._reach[-1] if self._reach else end))

    def contains(self, offset: int) -> bool:
        index = bisect_right(self._starts, offset) - 1
        return index >= 0 and self._reach[index] > offset


def _alone(drafts: list[HtmlDraft], index: int) -> bool:
    """Whether ``drafts[index]`` is its section's only block: after a heading, and before
    the next heading or the end."""
    after_heading = index > 0 and drafts[index - 1].kind == "heading"
    return after_heading and (index + 1 == len(drafts) or drafts[index + 1].kind == "heading")


def _with_terms(drafts: list[HtmlDraft], terms: _Spans, definitions: _Spans) -> list[HtmlDraft]:
    """Each run of ``<dt>`` paragraphs joined to the paragraph that starts its ``<dd>``
    (one block from the first term's markup to that paragraph's), or to each other."""
    out: list[HtmlDraft] = []
    run: list[HtmlDraft] = []
    for draft in drafts:
        if draft.kind == "paragraph" and terms.contains(draft.start):
            run.append(draft)
            continue
        if run and draft.kind == "paragraph" and definitions.contains(draft.start):
            run.append(draft)
            draft = _joined(run)
        elif run:
            out.append(_joined(run))
        run = []
        out.append(draft)
    if run:
        out.append(_joined(run))
    return out


def _joined(paragraphs: list[HtmlDraft]) -> HtmlDraft:
    if len(paragraphs) == 1:
        return paragraphs[0]
    text = "\n".join(p.text for p in paragraphs)
    return HtmlDraft("paragraph", text, start=paragraphs[0].start, end=paragraphs[-1].end)


def _is_named_footer(attrs: Attrs) -> bool:
    for name, value in attrs:
        if value is None:
            continue
        if name == "id" and value.strip().lower() in _FOOTER_NAMES:
            return True
        if name == "class" and not _FOOTER_NAMES.isdisjoint(value.lower().split()):
            return True
    return False


def _count(offsets: list[int], start: int, end: int) -> int:
    return bisect_left(offsets, end) - bisect_left(offsets, start)


def _has_nav_role(attrs: Attrs) -> bool:
    return any(
        name == "role" and value is not None and value.strip().lower() in _NAV_ROLES
        for name, value in attrs
    )


def _is_nav_markup(tag: str, attrs: Attrs) -> bool:
    """A navigation class (``nav-panel``, ``navheader``, ``toc``...) or a DocBook/gtk-doc
    navigation table (``summary="Navigation header"``)."""
    for name, value in attrs:
        if value is None:
            continue
        if name == "class" and not _NAV_CLASSES.isdisjoint(value.lower().split()):
            return True
        if name == "summary" and tag == "table" and _NAV_SUMMARY.match(value):
            return True
    return False
