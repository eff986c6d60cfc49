# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""``ParseDocuments``: bytes -> CanonicalDocument, one dead-letter row per failure.

Each document is parsed under a time budget and a memory guard in a separate, long-lived
helper process (:class:`~kebab_chunk.beam.isolation.Isolated` inside Beam's
``with_exception_handling``). A parser that raises gives an error row with its
``error_type``; one that hangs is stopped at the budget (``error_type`` ``timeout``); one
that kills its process (a crash in a native library) gives ``worker_crash``; one that
allocates more than ``max_memory_mb`` fails with ``MemoryError`` inside the helper
(``memory_limit``). Either way the job goes on with the next document.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from typing import Any

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.pvalue import PCollection

from kebab_chunk.beam import metrics
from kebab_chunk.beam.isolation import Isolated
from kebab_chunk.beam.records import ErrorRecord, RawDocument
from kebab_chunk.errors import ParseError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.parsers.base import ParseLimits
from kebab_chunk.parsers.registry import parse_document

__all__ = [
    "DEFAULT_MAX_MEMORY_MB",
    "DEFAULT_PARSE_TIMEOUT_S",
    "MEMORY_LIMIT",
    "ParseDocuments",
    "ParseFn",
    "error_type_of",
    "memory_message",
    "ran_out_of_memory",
]

DEFAULT_PARSE_TIMEOUT_S = 60.0
#: Address space (MiB) a parse or chunk helper process may add to what it started with.
DEFAULT_MAX_MEMORY_MB = 2048
#: ``error_type`` of a document that hit the memory guard.
MEMORY_LIMIT = "memory_limit"

#: The callable that parses one document; it must be importable on workers (module level).
ParseFn = Callable[[bytes, str, "str | None", ParseLimits], CanonicalDocument]

ERRORS = "errors"
_Outputs = dict[str, PCollection[Any]]


def ran_out_of_memory(exc: BaseException) -> bool:
    """True when ``exc`` is, or was raised while handling, a ``MemoryError``.

    Parsers wrap library failures (the PDF parser turns anything pypdf raises into a
    ParseError), so the memory guard's ``MemoryError`` is looked for along the chain.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, MemoryError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def error_type_of(exc: BaseException) -> str:
    """``memory_limit``, ``ParseError.error_type`` for our own errors, else the class name."""
    if ran_out_of_memory(exc):
        return MEMORY_LIMIT
    return exc.error_type if isinstance(exc, ParseError) else type(exc).__name__


def memory_message(what: str, source_uri: str, max_memory_mb: int | None) -> str:
    """The one sentence of a ``memory_limit`` error row."""
    return (
        f"{what} {source_uri} needed more memory than --max-memory-mb={max_memory_mb} "
        "allows and was stopped; raise the limit or remove the file from the corpus."
    )


def _default_parse(
    raw: bytes, source_uri: str, media_type: str | None, limits: ParseLimits
) -> CanonicalDocument:
    return parse_document(raw, source_uri, media_type, limits)


class _ParseFn(beam.DoFn):
    """Runs in the helper process: returns the document, or the error row for it.

    ``max_memory_mb`` is the helper's memory guard, named in ``memory_limit`` messages.
    """

    def __init__(
        self, parse_fn: ParseFn, limits: ParseLimits, max_memory_mb: int | None = None
    ) -> None:
        self._parse_fn = parse_fn
        self._limits = limits
        self._max_memory_mb = max_memory_mb

    def process(self, doc: RawDocument) -> Iterator[CanonicalDocument | ErrorRecord]:
        try:
            yield self._parse_fn(doc.raw, doc.source_uri, doc.media_type, self._limits)
        except Exception as exc:  # every parser failure is a dead letter
            error_type = error_type_of(exc)
            message = (
                memory_message("parsing", doc.source_uri, self._max_memory_mb)
                if error_type == MEMORY_LIMIT
                else str(exc) or type(exc).__name__
            )
            yield ErrorRecord(
                doc.source_uri,
                "parse",
                error_type,
                message,
                content_hash=doc.content_hash,
                media_type=doc.media_type,
            )


class _RouteFn(beam.DoFn):
    """Splits parse results into documents and error rows, counting both."""

    def process(self, item: CanonicalDocument | ErrorRecord) -> Iterator[Any]:
        if isinstance(item, ErrorRecord):
            yield pvalue.TaggedOutput(ERRORS, item)
        else:
            metrics.inc(metrics.keyed("documents_parsed", item.media_type))
            yield item


def _dead_letter_to_error(
    dead: tuple[RawDocument, tuple[type[BaseException], str, list[str]]], timeout_s: float
) -> ErrorRecord:
    """Turns what ``with_exception_handling`` caught (hang, crash) into an error row."""
    doc, (exc_type, exc_repr, _trace) = dead
    if issubclass(exc_type, TimeoutError):
        error_type = "timeout"
        message = (
            f"parsing {doc.source_uri} took longer than {timeout_s:g} s and was stopped; "
            "raise --parse-timeout-s or remove the file from the corpus."
        )
    elif issubclass(exc_type, BrokenProcessPool):
        error_type = "worker_crash"
        message = (
            f"the parser process died while parsing {doc.source_uri} (e.g. a crash in a "
            "native library, or one that ran out of --max-memory-mb); the file was skipped "
            "and the job went on."
        )
    else:
        error_type = exc_type.__name__
        message = f"parsing {doc.source_uri} failed outside the parser: {exc_repr}"
    return ErrorRecord(
        doc.source_uri,
        "parse",
        error_type,
        message,
        content_hash=doc.content_hash,
        media_type=doc.media_type,
    )


class ParseDocuments(beam.PTransform[PCollection[RawDocument], _Outputs]):
    """Parse RawDocuments with the registry's parser for their media type.

    Outputs (a dict): ``documents`` (CanonicalDocument, main) and ``errors``
    (ErrorRecord, stage ``parse``). ``timeout_s`` is the per-document budget; it is also
    passed to parsers as ``ParseLimits.time_budget_s`` so cooperative parsers stop early.
    ``isolate=False`` parses in the worker process itself (a time-out then leaves the
    stuck thread behind and a crash kills the worker), which is only for measuring the
    isolation cost. ``parse_fn`` replaces the registry (it must be importable on workers).
    ``max_memory_mb`` is the memory guard of the helper process (None: no guard; ignored
    when ``isolate=False``, since a worker must never cap its own memory).
    """

    def __init__(
        self,
        *,
        timeout_s: float = DEFAULT_PARSE_TIMEOUT_S,
        limits: ParseLimits | None = None,
        parse_fn: ParseFn | None = None,
        isolate: bool = True,
        max_memory_mb: int | None = DEFAULT_MAX_MEMORY_MB,
    ) -> None:
        super().__init__()
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        if max_memory_mb is not None and max_memory_mb <= 0:
            raise ValueError(f"max_memory_mb must be > 0, got {max_memory_mb}")
        self._max_memory_mb = max_memory_mb if isolate else None
        self._limits = replace(limits or ParseLimits(), time_budget_s=timeout_s)
        self._timeout_s = timeout_s
        self._parse_fn: ParseFn = parse_fn or _default_parse
        self._isolate = isolate

    def expand(self, raw_docs: PCollection[RawDocument]) -> _Outputs:
        parse_fn = _ParseFn(self._parse_fn, self._limits, self._max_memory_mb)
        if self._isolate:
            isolated = Isolated(
                parse_fn, timeout_s=self._timeout_s, max_memory_mb=self._max_memory_mb
            )
            parsed, dead = (
                raw_docs
                | "Parse in helper process" >> beam.ParDo(isolated).with_exception_handling()
            )
        else:
            parsed, dead = raw_docs | "Parse in process" >> beam.ParDo(
                parse_fn
            ).with_exception_handling(timeout=self._timeout_s)
        timeout_s = self._timeout_s
        stopped = dead | "Hangs and crashes to error rows" >> beam.Map(
            _dead_letter_to_error, timeout_s
        )
        routed = parsed | "Route parse results" >> beam.ParDo(_RouteFn()).with_outputs(
            ERRORS, main="documents"
        )
        errors = (routed[ERRORS], stopped) | "Collect parse errors" >> beam.Flatten()
        return {"documents": routed.documents, ERRORS: errors}
