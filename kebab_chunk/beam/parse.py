# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""``ParseDocuments``: bytes -> CanonicalDocument, one dead-letter row per failure.

Each document is parsed under a time budget and a memory guard in a separate, long-lived
helper process (:class:`~kebab_chunk.beam.isolation.IsolatedDoFn`). A parser that raises
gives an error row with its ``error_type``; one that hangs is stopped at the budget
(``error_type`` ``timeout``); one that kills its process (a crash in a native library)
gives ``worker_crash``; one that allocates more than ``max_memory_mb`` fails with
``MemoryError`` inside the helper (``memory_limit``). Either way the job goes on with the
next document. The helper-side work (``ParseTask``) lives in :mod:`kebab_chunk.runtime.tasks`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any, Literal

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.pvalue import PCollection

from kebab_chunk.beam import metrics
from kebab_chunk.beam.isolation import IsolatedDoFn
from kebab_chunk.elements import RawDocument
from kebab_chunk.output.records import ErrorRecord
from kebab_chunk.parsers.base import ParseLimits
from kebab_chunk.runtime.supervisor import CRASH, TIMEOUT, Failure, Finished
from kebab_chunk.runtime.tasks import (
    DEFAULT_MAX_MEMORY_MB,
    DEFAULT_PARSE_TIMEOUT_S,
    MEMORY_LIMIT,
    ParseFn,
    ParseTask,
    error_type_of,
    memory_message,
    ran_out_of_memory,
)

__all__ = [
    "DEFAULT_MAX_MEMORY_MB",
    "DEFAULT_PARSE_TIMEOUT_S",
    "MEMORY_LIMIT",
    "ParseDocuments",
    "ParseFn",
    "ParseTask",
    "error_type_of",
    "memory_message",
    "ran_out_of_memory",
    "stopped_error",
]

ERRORS = "errors"
_Outputs = dict[str, PCollection[Any]]


_WHAT = {
    "parse": ("parsing", "parser", "--parse-timeout-s"),
    "chunk": ("chunking", "chunker", "--chunk-timeout-s"),
}


def stopped_error(
    stage: Literal["parse", "chunk"],
    failure: Failure,
    *,
    source_uri: str,
    content_hash: str | None,
    media_type: str | None,
    budget_s: float,
    max_memory_mb: int | None,
) -> ErrorRecord:
    """The error row of a document whose parsing or chunking hung, crashed or blew up.

    ``failure`` comes from the isolation helper: a stage over its budget (``timeout``), a
    helper that died (``worker_crash``), or an exception outside the parser or chunkers
    (its class name; ``memory_limit`` for a ``MemoryError``).
    """
    doing, tool, option = _WHAT[stage]
    if failure.kind == TIMEOUT:
        error_type = "timeout"
        message = (
            f"{doing} {source_uri} took longer than {budget_s:g} s and was stopped; "
            f"raise {option} or remove the file from the corpus."
        )
    elif failure.kind == CRASH:
        error_type = "worker_crash"
        message = (
            f"the {tool} process died while {doing} {source_uri} (e.g. a crash in a "
            "native library, or one that ran out of --max-memory-mb); the file was skipped "
            "and the job went on."
        )
    elif failure.exc_type == "MemoryError":
        error_type = MEMORY_LIMIT
        message = memory_message(doing, source_uri, max_memory_mb)
    else:
        error_type = failure.exc_type
        outside = "the parser" if stage == "parse" else "the chunkers"
        message = f"{doing} {source_uri} failed outside {outside}: {failure.detail}"
    return ErrorRecord(
        source_uri, stage, error_type, message, content_hash=content_hash, media_type=media_type
    )


class _ParseDoFn(IsolatedDoFn):
    """Parses in the helper; documents to the main output, error rows to ``errors``."""

    def __init__(
        self, task: ParseTask, *, timeout_s: float, max_memory_mb: int | None, isolate: bool
    ) -> None:
        super().__init__(task, budgets_s=(timeout_s,), max_memory_mb=max_memory_mb, isolate=isolate)
        self._timeout_s = timeout_s

    def outputs(self, done: Finished) -> Iterator[Any]:
        doc: RawDocument = done.element
        if done.failure is not None:
            yield pvalue.TaggedOutput(
                ERRORS,
                stopped_error(
                    "parse",
                    done.failure,
                    source_uri=doc.source_uri,
                    content_hash=doc.content_hash,
                    media_type=doc.media_type,
                    budget_s=self._timeout_s,
                    max_memory_mb=self._max_memory_mb,
                ),
            )
        elif isinstance(done.result, ErrorRecord):
            yield pvalue.TaggedOutput(ERRORS, done.result)
        else:
            metrics.inc(metrics.keyed("documents_parsed", done.result.media_type))
            yield done.result


class ParseDocuments(beam.PTransform[PCollection[RawDocument], _Outputs]):
    """Parse RawDocuments with the registry's parser for their media type.

    Outputs (a dict): ``documents`` (CanonicalDocument, main) and ``errors``
    (ErrorRecord, stage ``parse``). ``timeout_s`` is the per-document budget; it is also
    passed to parsers as ``ParseLimits.time_budget_s`` so cooperative parsers stop early.
    ``isolate=False`` parses in the worker process itself, without a time budget (a hang
    stalls the worker and a crash kills it), which is only for measuring the isolation
    cost. ``parse_fn`` replaces the registry (it must be importable on workers).
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
        self._parse_fn: ParseFn | None = parse_fn
        self._isolate = isolate

    @property
    def timeout_s(self) -> float:
        return self._timeout_s

    @property
    def max_memory_mb(self) -> int | None:
        return self._max_memory_mb

    def task(self) -> ParseTask:
        """The helper-side work of this transform (also run by ``ParseAndChunk``)."""
        return ParseTask(self._parse_fn, self._limits, self._max_memory_mb)

    def expand(self, raw_docs: PCollection[RawDocument]) -> _Outputs:
        parse = _ParseDoFn(
            self.task(),
            timeout_s=self._timeout_s,
            max_memory_mb=self._max_memory_mb,
            isolate=self._isolate,
        )
        out = raw_docs | "Parse in helper process" >> beam.ParDo(parse).with_outputs(
            ERRORS, main="documents"
        )
        return {"documents": out.documents, ERRORS: out[ERRORS]}
