# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""``ParseDocuments``: bytes -> CanonicalDocument, one dead-letter row per failure.

Each document is parsed under a time budget in a separate, long-lived helper process
(Beam's ``with_exception_handling(use_subprocess=True, timeout=...)``). A parser that
raises gives an error row with its ``error_type``; one that hangs is stopped at the budget
(``error_type`` ``timeout``); one that kills its process (a crash in a native library)
gives ``worker_crash``. Either way the job goes on with the next document.
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
from kebab_chunk.beam.records import ErrorRecord, RawDocument
from kebab_chunk.errors import ParseError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.parsers.base import ParseLimits
from kebab_chunk.parsers.registry import parse_document

__all__ = ["DEFAULT_PARSE_TIMEOUT_S", "ParseDocuments", "ParseFn", "error_type_of"]

DEFAULT_PARSE_TIMEOUT_S = 60.0

#: The callable that parses one document; it must be importable on workers (module level).
ParseFn = Callable[[bytes, str, "str | None", ParseLimits], CanonicalDocument]

ERRORS = "errors"
_Outputs = dict[str, PCollection[Any]]


def error_type_of(exc: BaseException) -> str:
    """``ParseError.error_type`` for our own errors, the class name for anything else."""
    return exc.error_type if isinstance(exc, ParseError) else type(exc).__name__


def _default_parse(
    raw: bytes, source_uri: str, media_type: str | None, limits: ParseLimits
) -> CanonicalDocument:
    return parse_document(raw, source_uri, media_type, limits)


class _ParseFn(beam.DoFn):
    """Runs in the helper process: returns the document, or the error row for it."""

    def __init__(self, parse_fn: ParseFn, limits: ParseLimits) -> None:
        self._parse_fn = parse_fn
        self._limits = limits

    def process(self, doc: RawDocument) -> Iterator[CanonicalDocument | ErrorRecord]:
        try:
            yield self._parse_fn(doc.raw, doc.source_uri, doc.media_type, self._limits)
        except Exception as exc:  # every parser failure is a dead letter
            yield ErrorRecord(
                doc.source_uri,
                "parse",
                error_type_of(exc),
                str(exc) or type(exc).__name__,
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
            "native library); the file was skipped and the job went on."
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
    """

    def __init__(
        self,
        *,
        timeout_s: float = DEFAULT_PARSE_TIMEOUT_S,
        limits: ParseLimits | None = None,
        parse_fn: ParseFn | None = None,
        isolate: bool = True,
    ) -> None:
        super().__init__()
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        self._limits = replace(limits or ParseLimits(), time_budget_s=timeout_s)
        self._timeout_s = timeout_s
        self._parse_fn: ParseFn = parse_fn or _default_parse
        self._isolate = isolate

    def expand(self, raw_docs: PCollection[RawDocument]) -> _Outputs:
        parsed, dead = raw_docs | "Parse in helper process" >> beam.ParDo(
            _ParseFn(self._parse_fn, self._limits)
        ).with_exception_handling(use_subprocess=self._isolate, timeout=self._timeout_s)
        timeout_s = self._timeout_s
        stopped = dead | "Hangs and crashes to error rows" >> beam.Map(
            _dead_letter_to_error, timeout_s
        )
        routed = parsed | "Route parse results" >> beam.ParDo(_RouteFn()).with_outputs(
            ERRORS, main="documents"
        )
        errors = (routed[ERRORS], stopped) | "Collect parse errors" >> beam.Flatten()
        return {"documents": routed.documents, ERRORS: errors}
