"""The engine of the PDF parser versions (``pdf-text-v1`` to ``pdf-text-v3``): pypdf text,
one page at a time, every span a ``PageSpan`` into that page's text.

Every version it serves is a row of the registry with one
:class:`~kebab_chunk.parsers.rules.PdfRules` value (every rule in which it differs from the
others); the rest is this module's, the same for every version. A new version is a new row,
never a copied module or an overridden step.

What every version does:

* **Text**: pypdf's ``extract_text()`` of each page; lone surrogates become U+FFFD (a
  warning counts them); a page without text adds a warning; ``metadata["page_count"]`` is
  the page count. ``page_text[char_start:char_end] == block.text`` for every block.
* **Title**: the metadata ``/Title`` when present and not blank (under
  ``outline_headings``, else the first outline title), else ``None``.
* **Errors**: bad input never escapes as a raw pypdf exception: encryption we cannot open
  raises :class:`EncryptedDocumentError`, broken bytes :class:`ParseError`, and documents
  beyond ``ParseLimits.max_pages`` or ``time_budget_s`` :class:`LimitExceededError` (the
  time is checked between pages, so a slow document stops at a page boundary; the
  pipeline's own timeout covers a single pathological page). pypdf's logged warnings about
  repaired structure are collected into the document's warnings instead of being printed.

What the rules change (the details, and why: docs/internals/parser-changes.md):

* ``whole_pages``: each page is one paragraph block of its whole text (blank pages too, so
  block *i* is page *i*); off, whitespace at the two ends of a page's kept text belongs to
  no block, a blank page gives none, and headings split a page into touching blocks.
* ``outline_headings``: outline (bookmark) entries become headings found in their page's
  text (or sections opened without a block), and the first outline title is the fallback
  title.
* ``drop_running_lines``: running headers and footers repeated across pages are left out.
* ``font_headings``: where the outline gives no heading, headings are found by their type
  (:mod:`._pdf_fonts`, fed by a callback during the same text extraction) and placed as
  outline headings are; the first, if of level 1, is the fallback title.
"""

from __future__ import annotations

import contextvars
import io
import logging
import math
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

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
from kebab_chunk.parsers._pdf_fonts import FontCollector, font_headings
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits, ParserVersion, VersionedParser
from kebab_chunk.parsers.rules import PdfRules

__all__ = ["PdfTextParser"]

#: At most this many distinct pypdf log messages are kept per document.
MAX_LIBRARY_WARNINGS = 20

_MEDIA_TYPE = "application/pdf"
#: Like common PDF readers, accept a header preceded by some junk (e.g. an e-mail header).
_HEADER_WINDOW = 1024
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

# --- pypdf log capture -----------------------------------------------------------------
#
# pypdf reports repairs it made ("incorrect startxref pointer", ...) through the logging
# module. While a parse runs, those records go into that parse's list (a context variable,
# so concurrent parses in threads stay apart); outside a parse they are handed on to the
# root logger exactly as normal propagation would, so users' logging setup is unaffected.

_SINK: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "kebab_pdf_log_sink", default=None
)


class _PypdfLogRouter(logging.Handler):
    """Sends pypdf records to the active parse's warning list, else on to the root logger."""

    def emit(self, record: logging.LogRecord) -> None:
        sink = _SINK.get()
        if sink is None:
            logging.getLogger().handle(record)
        else:
            sink.append(record.getMessage())


def _install_log_router() -> None:
    logger = logging.getLogger("pypdf")
    if not any(isinstance(h, _PypdfLogRouter) for h in logger.handlers):
        logger.addHandler(_PypdfLogRouter())
        logger.propagate = False  # the router forwards to root itself when not capturing


_install_log_router()


@contextmanager
def _capture_pypdf_logs() -> Iterator[list[str]]:
    messages: list[str] = []
    token = _SINK.set(messages)
    try:
        yield messages
    finally:
        _SINK.reset(token)


#: Process-specific numbers pypdf prints: ``IndirectObject(6, 0, <id of the reader>)`` and
#: ``<... at 0x7f...>`` addresses. They differ on every run, so they are dropped.
_OBJECT_ID = re.compile(r"IndirectObject\((\d+), (\d+), \d+\)")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _reproducible(message: str) -> str:
    """``message`` without the process-specific numbers in it."""
    return _ADDRESS.sub("", _OBJECT_ID.sub(r"IndirectObject(\1, \2)", message.strip()))


def _library_warnings(messages: list[str]) -> list[str]:
    """Distinct pypdf messages in first-seen order, capped at ``MAX_LIBRARY_WARNINGS``.

    Messages are made reproducible first (:func:`_reproducible`): a warning that printed a
    pypdf object once carried the reader's memory address, so identical runs differed.
    """
    distinct = list(dict.fromkeys(_reproducible(m) for m in messages if m.strip()))
    kept = [f"pypdf: {m}" for m in distinct[:MAX_LIBRARY_WARNINGS]]
    if len(distinct) > MAX_LIBRARY_WARNINGS:
        kept.append(f"pypdf: {len(distinct) - MAX_LIBRARY_WARNINGS} further distinct messages")
    return kept


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


class PdfTextParser(VersionedParser):
    """A PDF parser built from one version row (its
    :class:`~kebab_chunk.parsers.rules.PdfRules`; see the module docstring); nothing else is
    meant to be overridden.

    ``clock`` exists so tests can drive the time budget without depending on real speed.
    """

    media_types = (_MEDIA_TYPE,)

    def __init__(self, row: ParserVersion, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(row)
        self.rules = row.rules_as(PdfRules)
        self._clock = clock

    def parse(
        self, raw: bytes, source_uri: str, limits: ParseLimits = DEFAULT_LIMITS
    ) -> CanonicalDocument:
        """Parse one PDF; see the module docstring for the error contract."""
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
        entries: list[_Entry] = []
        if self.rules.outline_headings:
            outline_titles, entries = _outline(reader, page_count, warnings)
            check_block_count(len(entries), limits, source_uri, noun="outline entries", whole="PDF")
            if title is None and outline_titles:
                title = outline_titles[0]
        texts: list[str] = []
        typeset: list[list[Any]] = []  # per page, its lines as set (font_headings)
        failures = 0
        for number, page in enumerate(reader.pages, start=1):
            _check_time(self._clock() - started, limits, source_uri, number)
            fonts = FontCollector()
            typeset.append(fonts.lines)
            try:
                if self.rules.font_headings:
                    text = page.extract_text(visitor_text=fonts)
                else:
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
                typeset[-1] = []  # nor any heading from what was seen of it
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
        typed = 0
        if self.rules.font_headings and not entries:
            entries = [_Entry(h.level, h.title, h.page) for h in font_headings(typeset)]
            if len(entries) > limits.max_blocks:  # the type is no guide here: read no headings
                warnings.append(
                    f"{len(entries)} lines set as headings are more than max_blocks="
                    f"{limits.max_blocks}; no heading is taken from the type"
                )
                entries = []
            typed = len(entries)
            if title is None and entries and entries[0].level == 1:
                title = entries[0].title  # as the first outline title is
        doc = _Build(self.rules, self.version, raw, source_uri, texts, entries, limits)
        if self.rules.font_headings:
            doc.metadata["font_headings"] = typed
        return doc.finish(title, warnings, _library_warnings(logged))


def _unlock(reader: pypdf.PdfReader, source_uri: str) -> None:
    """Open an encrypted PDF with the empty user password, or raise EncryptedDocumentError."""
    if not reader.is_encrypted:
        return
    if reader.decrypt("") == pypdf.PasswordType.NOT_DECRYPTED:
        raise EncryptedDocumentError(
            f"{source_uri} is encrypted with a password; "
            "decrypt it (e.g. with qpdf --decrypt) before adding it to the corpus."
        )


def _title(reader: pypdf.PdfReader, warnings: list[str]) -> str | None:
    """The metadata title, stripped; ``None`` when absent, empty or unreadable."""
    try:
        metadata = reader.metadata
        raw_title = metadata.title if metadata is not None else None
    except Exception as exc:  # broken /Info: keep the pages, note the loss
        warnings.append(f"document metadata unreadable ({_describe(exc)}); no title taken")
        return None
    if not isinstance(raw_title, str):
        return None
    title = _LONE_SURROGATE.sub("\ufffd", raw_title).strip()
    return title or None


def _check_time(elapsed: float, limits: ParseLimits, source_uri: str, page: int) -> None:
    if elapsed > limits.time_budget_s:
        raise LimitExceededError(
            f"{source_uri} took {elapsed:.1f}s, over time_budget_s={limits.time_budget_s} "
            f"before page {page}; raise the budget or remove the document."
        )


def _describe(exc: BaseException) -> str:
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    name = type(exc).__name__
    return f"{name}: {detail[:200]}" if detail else name


def _parse_error(source_uri: str, exc: BaseException) -> ParseError:
    if isinstance(exc, RecursionError):
        reason = "its object structure is nested too deeply to read"
    else:
        reason = f"it is corrupt or truncated ({_describe(exc)})"
    return ParseError(
        f"{source_uri} could not be read as a PDF because {reason}; "
        "repair or re-export the file, or remove it from the corpus."
    )


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
    """The blocks of one document: page by page, headings placed, running lines left out
    (each as the rules say)."""

    def __init__(
        self,
        rules: PdfRules,
        version: str,
        raw: bytes,
        source_uri: str,
        texts: list[str],
        entries: list[_Entry],
        limits: ParseLimits,
    ) -> None:
        self.rules = rules
        self.texts = texts
        self.entries = entries
        self.assembler = Assembler(raw, source_uri, _MEDIA_TYPE, version, limits)
        self.dropped = 0
        self.examples: list[str] = []
        self.cited = 0
        self.uncited: list[str] = []
        self.metadata: dict[str, Any] = {}  # more of the document's metadata
        pages = [_lines(text) for text in texts]
        if rules.drop_running_lines and len(texts) >= RUNNING_MIN_PAGES:
            running = _running(pages)
        else:
            running = [set() for _ in texts]
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

        Whitespace at the two ends of the kept text belongs to no block (under
        ``whole_pages`` it does, and a page without a heading block is one paragraph even
        when blank); a heading's block takes the whitespace after its title (its line
        break), so the next block starts on text and consecutive blocks' spans touch: a
        page chunker can cut across them and still cite one exact range.
        """
        whole = self.rules.whole_pages
        if not whole:
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
        self._paragraph(number, text, cursor, end, keep_empty=whole and cursor == start)

    def _paragraph(
        self, number: int, text: str, start: int, end: int, *, keep_empty: bool = False
    ) -> None:
        """A paragraph of exactly ``text[start:end]``, unless that is empty (and not
        ``keep_empty``)."""
        if start < end or keep_empty:
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
            source = "font" if self.metadata.get("font_headings") else "outline"
            notes.append(
                f"{len(self.uncited)} of {len(self.entries)} {source} headings were not found "
                f"in their page's text (such as {self.uncited[0]!r}); they head their "
                "sections in heading_path without a heading block"
            )
        metadata: dict[str, Any] = {"page_count": len(self.texts), **self.metadata}
        if self.metadata.get("font_headings"):  # the outline gave none
            metadata["outline_headings"] = metadata["outline_headings_cited"] = 0
            metadata["font_headings_cited"] = self.cited
        elif self.rules.outline_headings:
            metadata["outline_headings"] = len(self.entries)
            metadata["outline_headings_cited"] = self.cited
        if self.rules.drop_running_lines:
            metadata["running_lines_dropped"] = self.dropped
        return self.assembler.finish(notes + library, title=title, metadata=metadata)
