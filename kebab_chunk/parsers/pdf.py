"""PDF parser ``pdf-text-v1``: one paragraph block per page, text from pypdf.

Each page becomes one :class:`ParagraphBlock` whose ``text`` is pypdf's ``extract_text()``
of that page and whose single :class:`PageSpan` covers it (``char_start=0``,
``char_end=len(text)``), so ``pdf-page-v1`` can cite any slice of a page exactly. Pages
without text keep their block (page numbering stays intact) and add a document warning.

Bad input never escapes as a raw pypdf exception: encryption we cannot open raises
:class:`EncryptedDocumentError`, broken bytes :class:`ParseError`, and documents beyond
``ParseLimits.max_pages`` or ``time_budget_s`` :class:`LimitExceededError` (the time is
checked between pages, so a slow document stops at a page boundary; the pipeline's own
timeout covers a single pathological page). pypdf's logged warnings about repaired
structure are collected into the document's warnings instead of being printed.
"""

from __future__ import annotations

import contextvars
import io
import logging
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pypdf
from pypdf.errors import DependencyError, LimitReachedError

from kebab_chunk.errors import (
    EncryptedDocumentError,
    KebabError,
    LimitExceededError,
    ParseError,
)
from kebab_chunk.model import CanonicalDocument, PageSpan, ParagraphBlock
from kebab_chunk.parsers._assemble import Assembler
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits

__all__ = ["PdfParser"]

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


# --- the parser --------------------------------------------------------------------------


class PdfParser:
    """``pdf-text-v1``: pypdf text extraction, one page-spanned paragraph block per page.

    ``clock`` exists so tests can drive the time budget without depending on real speed.
    """

    version = "pdf-text-v1"
    media_types = (_MEDIA_TYPE,)

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
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
        return _document(raw, source_uri, title, texts, warnings + _library_warnings(logged))


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


def _document(
    raw: bytes, source_uri: str, title: str | None, texts: list[str], warnings: list[str]
) -> CanonicalDocument:
    assembler = Assembler(raw, source_uri, _MEDIA_TYPE, PdfParser.version)
    for number, text in enumerate(texts, start=1):
        assembler.add(
            ParagraphBlock, text, (PageSpan(page=number, char_start=0, char_end=len(text)),)
        )
    return assembler.finish(warnings, title=title, metadata={"page_count": len(texts)})


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
