"""PDF parser ``pdf-text-v2``: headings from the outline, running headers and footers dropped.

Text comes from pypdf's ``extract_text()`` of each page, exactly as in ``pdf-text-v1``, and
every span is a ``PageSpan`` into that page text, so ``page_text[char_start:char_end] ==
block.text`` for every block. What v2 changes:

* **Title**: the metadata ``/Title`` when present and not blank, else the title of the first
  outline (bookmark) entry, else ``None``.
* **Headings from the outline**: every outline entry whose destination resolves to a page
  becomes a heading of level = its nesting depth (1 for top-level entries, capped at 6).
  Entries are placed on their target page in outline order (a stable sort by page). On that
  page the entry's title is searched for in the kept text, after the previous heading of
  the page: the words of the title, separated by any whitespace, case-insensitively, at the
  start of a line, optionally after a section number (``2.1``, ``A``, ``IV.``) and/or a
  word ``Chapter``/``Section``/``Appendix``/``Part``; a match that fills the rest of its
  line wins over one that does not. A found title becomes a :class:`HeadingBlock` whose
  ``text`` and span are that exact slice of the page (section number included) and whose
  ``title`` is the outline entry's title. A title that is not found is *not* invented as
  page text: its section is opened where the page's remaining text starts (so the text
  after it carries it in ``heading_path``), no block cites it, and a warning counts such
  entries. Text between headings becomes one :class:`ParagraphBlock` per run. A page's
  blocks tile its kept text (whitespace at its two ends excepted): a heading block runs
  through the whitespace after its title, a paragraph up to the next heading, so the spans
  of consecutive blocks touch and a page chunker can cut across them exactly.
* **Running headers and footers**: a page's *edge lines* are its first and last
  ``EDGE_LINES`` non-blank lines. Lines are compared after collapsing whitespace and
  replacing every run of digits with ``#`` (so page numbers do not matter). An edge line
  is dropped when its normalised text is at an edge of at least ``RUNNING_SHARE`` of the
  pages (and of at least ``RUNNING_MIN_PAGES`` pages), or when it contains a number and is
  at the same edge zone of ``RUNNING_MIN_PAGES`` or more consecutive pages with varying
  numbers (chapter-specific headers such as ``Chapter 4: Reference 13``), or when it is a
  bare page number (``7``, ``- 7 -``, ``Page 7 of 9``, ``7 / 9``) and such bare numbers
  are at an edge of at least ``RUNNING_MIN_PAGES`` pages. Only lines contiguous with the
  page's top or bottom are dropped (a kept line stops the walk), so body text is never cut
  out of the middle of a page. The count is in ``metadata["running_lines_dropped"]`` and
  in one document warning.

Empty pages produce no block (their warning stays, as in v1); ``metadata["page_count"]``
keeps the page count. Errors, limits, encryption and pypdf log capture behave exactly as in
``pdf-text-v1`` (the helpers are shared, unchanged, from :mod:`kebab_chunk.parsers.pdf`).
"""

from __future__ import annotations

import io
import math
import re
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pypdf
from pypdf.errors import DependencyError, LimitReachedError
from pypdf.generic import Destination

from kebab_chunk.errors import (
    EncryptedDocumentError,
    KebabError,
    LimitExceededError,
    ParseError,
)
from kebab_chunk.model import CanonicalDocument, PageSpan, ParagraphBlock
from kebab_chunk.parsers._assemble import Assembler, check_block_count
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits
from kebab_chunk.parsers.pdf import (
    _HEADER_WINDOW,
    _LONE_SURROGATE,
    _capture_pypdf_logs,
    _check_time,
    _describe,
    _library_warnings,
    _parse_error,
    _title,
    _unlock,
)

__all__ = ["PdfV2Parser"]

_MEDIA_TYPE = "application/pdf"

#: How many non-blank lines at the top and at the bottom of a page may be running lines.
EDGE_LINES = 3
#: A normalised edge line on at least this share of the pages is a running line ...
RUNNING_SHARE = 0.6
#: ... and on at least this many pages (documents shorter than this keep every line).
RUNNING_MIN_PAGES = 3
#: Outline nesting deeper than this is clamped (HeadingBlock levels are 1-6).
MAX_HEADING_LEVEL = 6

_DIGITS = re.compile(r"\d+")
#: A line that is only a page number: ``#``, ``- # -``, ``Page # of #``, ``# / #``, or a
#: lower-case roman numeral (front matter).
_BARE_PAGE_NUMBER = re.compile(
    r"(?i:page\s*)?#(?:\s*(?i:/|of)\s*#)?|-\s*#\s*-"
    r"|(?=[ivxlc])c{0,3}(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})"
)
_NUMBER_PREFIX = (
    r"(?:(?i:chapter|section|appendix|part)[ \t]+)?"
    r"(?:(?:[0-9]+|[A-Z]|[IVXLC]+)(?:\.[0-9]+)*\.?[ \t]+)?"
)


@dataclass(frozen=True)
class _Entry:
    """One outline entry used as a heading: 1-based ``page``, ``level`` 1-6."""

    level: int
    title: str
    page: int


@dataclass(frozen=True)
class _Line:
    """A non-blank line of a page: ``[start, end)`` without its line break, and its key."""

    start: int
    end: int
    key: str  # whitespace collapsed, digit runs replaced by '#'
    raw: str


class PdfV2Parser:
    """``pdf-text-v2``: pypdf text, outline headings, running headers/footers removed.

    ``clock`` exists so tests can drive the time budget without depending on real speed.
    """

    version = "pdf-text-v2"
    media_types = (_MEDIA_TYPE,)

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock

    def parse(
        self, raw: bytes, source_uri: str, limits: ParseLimits = DEFAULT_LIMITS
    ) -> CanonicalDocument:
        """Parse one PDF; errors follow ``pdf-text-v1``'s contract (see its module)."""
        with _capture_pypdf_logs() as logged:
            try:
                return self._parse(raw, source_uri, limits, logged)
            except (KebabError, TimeoutError):
                raise  # our own errors, and a pipeline timeout, pass through unchanged
            except LimitReachedError as exc:
                raise LimitExceededError(
                    f"{source_uri} trips a pypdf safety limit ({_describe(exc)}), so it is "
                    "malformed or hostile; repair or re-export it, or remove it from the corpus."
                ) from exc
            except DependencyError as exc:
                raise EncryptedDocumentError(
                    f"{source_uri} uses an encryption that needs an extra package ({exc}); "
                    "install 'pypdf[crypto]' to read it."
                ) from exc
            except Exception as exc:  # pypdf raises many types on broken input
                raise _parse_error(source_uri, exc) from exc

    def _parse(
        self, raw: bytes, source_uri: str, limits: ParseLimits, logged: list[str]
    ) -> CanonicalDocument:
        started = self._clock()
        if b"%PDF-" not in raw[:_HEADER_WINDOW]:
            raise ParseError(
                f"{source_uri} is not a PDF (no '%PDF-' header in its first "
                f"{_HEADER_WINDOW} bytes); "
                "fix or remove the file, or give it the extension of its real type."
            )
        reader = pypdf.PdfReader(io.BytesIO(raw))
        _unlock(reader, source_uri)
        page_count = len(reader.pages)
        if page_count > limits.max_pages:
            raise LimitExceededError(
                f"{source_uri} has {page_count} pages, more than max_pages={limits.max_pages}; "
                "raise the limit or split the document."
            )
        warnings: list[str] = []
        title = _title(reader, warnings)
        outline_titles, entries = _outline(reader, page_count, warnings)
        check_block_count(len(entries), limits, source_uri, noun="outline entries", whole="PDF")
        if title is None and outline_titles:
            title = outline_titles[0]
        texts: list[str] = []
        failures = 0
        for number, page in enumerate(reader.pages, start=1):
            _check_time(self._clock() - started, limits, source_uri, number)
            try:
                text = page.extract_text()
            except (KebabError, TimeoutError):
                raise
            except Exception as exc:  # one bad page degrades, the document continues
                failures += 1
                if failures == page_count:
                    raise
                warnings.append(
                    f"page {number}: text extraction failed ({_describe(exc)}); "
                    "the page is kept with no text"
                )
                text = ""
            text, repaired = _LONE_SURROGATE.subn("\ufffd", text)
            if repaired:
                warnings.append(
                    f"page {number}: {repaired} invalid characters replaced with U+FFFD"
                )
            if not text.strip():
                warnings.append(f"page {number} has no extractable text (empty or whitespace)")
            texts.append(text)
        if page_count == 0:
            warnings.append("the PDF has no pages")
        doc = _Build(raw, source_uri, texts, entries, limits)
        return doc.finish(title, warnings, _library_warnings(logged))


# --- the outline -------------------------------------------------------------------------


def _clean(title: object) -> str:
    """An outline title as one line of text: invalid characters replaced, spaces collapsed."""
    if not isinstance(title, str):
        return ""
    return " ".join(_LONE_SURROGATE.sub("\ufffd", title).split())


def _outline(
    reader: pypdf.PdfReader, page_count: int, warnings: list[str]
) -> tuple[list[str], list[_Entry]]:
    """Every non-blank outline title in outline order, and the entries usable as headings.

    The headings are sorted by page (stably: outline order within a page). An unreadable
    outline costs its headings, not the document: it is recorded as a warning.
    """
    try:
        outline = reader.outline
    except Exception as exc:
        warnings.append(f"the outline (bookmarks) is unreadable ({_describe(exc)}); no headings")
        return [], []
    titles: list[str] = []
    entries: list[_Entry] = []
    unresolved = 0
    # pypdf's outline: a list of destinations, each optionally followed by a list of its
    # children. Walked with an explicit stack (no recursion on hostile nesting).
    stack: list[tuple[Sequence[object], int, int]] = [(outline, 0, 1)]
    while stack:
        items, index, depth = stack.pop()
        if index >= len(items):
            continue
        stack.append((items, index + 1, depth))
        item = items[index]
        if isinstance(item, list):
            stack.append((item, 0, depth + 1))
            continue
        if not isinstance(item, Destination):
            continue
        title = _clean(item.title)
        if not title:
            continue
        titles.append(title)
        try:
            number = reader.get_destination_page_number(item)
        except Exception:  # a broken destination: the entry is not a heading
            number = None
        if number is None or not 0 <= number < page_count:
            unresolved += 1
            continue
        entries.append(_Entry(min(depth, MAX_HEADING_LEVEL), title, number + 1))
    if unresolved:
        warnings.append(
            f"{unresolved} outline entries point to no page of the document; they give no heading"
        )
    entries.sort(key=lambda entry: entry.page)  # stable: outline order within a page
    return titles, entries


def _title_pattern(title: str) -> re.Pattern[str]:
    """The title at a line start (after an optional section number), any whitespace."""
    words = r"\s+".join(re.escape(word) for word in title.split())
    return re.compile(rf"^[ \t]*(?P<head>{_NUMBER_PREFIX}(?i:{words}))", re.MULTILINE)


def _find_title(text: str, title: str, start: int, end: int) -> tuple[int, int] | None:
    """Where ``title`` stands in ``text[start:end]``, preferring a match that ends its line."""
    first: tuple[int, int] | None = None
    for match in _title_pattern(title).finditer(text, start, end):
        found = match.span("head")
        rest = text[found[1] : end].split("\n", 1)[0]
        if not rest.strip():
            return found
        if first is None:
            first = found
    return first


# --- running headers and footers ----------------------------------------------------------


def _lines(text: str) -> list[_Line]:
    """The non-blank lines of ``text`` with their offsets and comparison keys."""
    lines: list[_Line] = []
    start = 0
    for piece in text.split("\n"):
        end = start + len(piece)
        collapsed = " ".join(piece.split())
        if collapsed:
            lines.append(_Line(start, end, _DIGITS.sub("#", collapsed), collapsed))
        start = end + 1
    return lines


def _edges(lines: list[_Line]) -> tuple[list[_Line], list[_Line]]:
    """The top edge lines (top first) and bottom edge lines (bottom first) of a page."""
    return lines[:EDGE_LINES], lines[::-1][:EDGE_LINES]


def _running(pages: list[list[_Line]]) -> list[set[str]]:
    """Per page, the keys of the edge lines that are running headers or footers there."""
    count = len(pages)
    keys_per_page = [{line.key for zone in _edges(lines) for line in zone} for lines in pages]
    pages_with: dict[str, int] = defaultdict(int)
    for keys in keys_per_page:
        for key in keys:
            pages_with[key] += 1
    needed = max(RUNNING_MIN_PAGES, math.ceil(RUNNING_SHARE * count))
    everywhere = {key for key, seen in pages_with.items() if seen >= needed}
    bare = {key for key in pages_with if _BARE_PAGE_NUMBER.fullmatch(key)}
    if sum(1 for keys in keys_per_page if keys & bare) >= RUNNING_MIN_PAGES:
        everywhere |= bare
    running = [set(everywhere) for _ in pages]
    for zone in (0, 1):  # numbered headers repeated on consecutive pages, one edge at a time
        runs: dict[str, list[tuple[int, str]]] = {}
        for index, lines in enumerate(pages):
            here = {line.key: line.raw for line in _edges(lines)[zone] if "#" in line.key}
            for key in list(runs):
                if key not in here:
                    _close_run(runs.pop(key), running)
            for key, raw in here.items():
                runs.setdefault(key, []).append((index, raw))
        for run in runs.values():
            _close_run(run, running)
    return running


def _close_run(run: list[tuple[int, str]], running: list[set[str]]) -> None:
    """Mark a finished run of consecutive pages as running when long enough and numbered."""
    if len(run) >= RUNNING_MIN_PAGES and len({raw for _, raw in run}) > 1:
        key = _DIGITS.sub("#", run[0][1])
        for index, _ in run:
            running[index].add(key)


def _body(lines: list[_Line], running: set[str], length: int) -> tuple[int, int, list[_Line]]:
    """``[start, end)`` of the page text left after its running lines, and the lines dropped."""
    dropped: list[_Line] = []
    top = 0
    for line in lines[:EDGE_LINES]:
        if line.key not in running:
            break
        dropped.append(line)
        top += 1
    bottom = len(lines)
    for line in lines[::-1][:EDGE_LINES]:
        if bottom <= top or line.key not in running:
            break
        dropped.append(line)
        bottom -= 1
    start = lines[top - 1].end if top else 0
    end = lines[bottom].start if bottom < len(lines) else length
    return start, max(start, end), dropped


# --- assembling the document ------------------------------------------------------------


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` narrowed to exclude whitespace at both ends (empty when all blank)."""
    piece = text[start:end]
    stripped = piece.strip()
    if not stripped:
        return end, end
    begin = start + len(piece) - len(piece.lstrip())
    return begin, begin + len(stripped)


class _Build:
    """The blocks of one document: page by page, headings placed, running lines left out."""

    def __init__(
        self,
        raw: bytes,
        source_uri: str,
        texts: list[str],
        entries: list[_Entry],
        limits: ParseLimits,
    ) -> None:
        self.texts = texts
        self.entries = entries
        self.assembler = Assembler(raw, source_uri, _MEDIA_TYPE, PdfV2Parser.version, limits)
        self.dropped = 0
        self.examples: list[str] = []
        self.cited = 0
        self.uncited: list[str] = []
        pages = [_lines(text) for text in texts]
        running = _running(pages) if len(texts) >= RUNNING_MIN_PAGES else [set() for _ in texts]
        by_page: dict[int, list[_Entry]] = defaultdict(list)
        for entry in entries:
            by_page[entry.page].append(entry)
        for number, (text, lines, keys) in enumerate(zip(texts, pages, running, strict=True), 1):
            start, end, dropped = _body(lines, keys, len(text))
            self.dropped += len(dropped)
            for line in dropped:
                if line.raw not in self.examples and len(self.examples) < 2:
                    self.examples.append(line.raw)
            self._page(number, text, start, end, by_page.get(number, []))

    def _page(self, number: int, text: str, start: int, end: int, entries: list[_Entry]) -> None:
        """The blocks of one page's kept text ``text[start:end]``, tiling it without gaps.

        Whitespace at the two ends of the kept text belongs to no block; a heading's block
        takes the whitespace after its title (its line break), so the next block starts
        on text and consecutive blocks' spans touch: a page chunker can cut across them
        and still cite one exact range.
        """
        start, end = _trim(text, start, end)
        cursor = start
        for entry in entries:
            found = _find_title(text, entry.title, cursor, end)
            if found is None:
                self.assembler.open_section(entry.level, entry.title)
                self.uncited.append(entry.title)
                continue
            head_start, head_end = found
            self._paragraph(number, text, cursor, head_start)
            block_end = _trim(text, head_end, end)[0]  # through the whitespace after it
            self.assembler.add_heading(
                entry.level,
                entry.title,
                text[head_start:block_end],
                (PageSpan(page=number, char_start=head_start, char_end=block_end),),
            )
            self.cited += 1
            cursor = block_end
        self._paragraph(number, text, cursor, end)

    def _paragraph(self, number: int, text: str, start: int, end: int) -> None:
        """A paragraph of exactly ``text[start:end]``, unless that is empty."""
        if start < end:
            self.assembler.add(
                ParagraphBlock,
                text[start:end],
                (PageSpan(page=number, char_start=start, char_end=end),),
            )

    def finish(
        self, title: str | None, warnings: list[str], library: list[str]
    ) -> CanonicalDocument:
        notes = list(warnings)
        if self.dropped:
            shown = ", ".join(repr(example) for example in self.examples)
            notes.append(
                f"{self.dropped} running header/footer lines repeated across pages were "
                f"left out of the text (such as {shown})"
            )
        if self.uncited:
            notes.append(
                f"{len(self.uncited)} of {len(self.entries)} outline headings were not found "
                f"in their page's text (such as {self.uncited[0]!r}); they head their "
                "sections in heading_path without a heading block"
            )
        metadata: dict[str, int] = {
            "page_count": len(self.texts),
            "outline_headings": len(self.entries),
            "outline_headings_cited": self.cited,
            "running_lines_dropped": self.dropped,
        }
        return self.assembler.finish(notes + library, title=title, metadata=dict(metadata))
