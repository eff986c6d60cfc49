# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""``ChunkDocuments``: apply every requested chunker version to the documents it accepts.

Chunkers run isolated like parsers (:class:`~kebab_chunk.beam.isolation.Isolated`): each
document is chunked, under every applicable label, in a long-lived helper process with a
per-document time budget (``timeout_s``) and the same memory guard. A chunker that raises gives an
error row for that label while the other labels still chunk the document; one that hangs
past the budget (``timeout``), kills its process (``worker_crash``) or exhausts the memory
guard (``memory_limit``) gives one error row for the document, and the job goes on.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from itertools import chain
from typing import Any

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.pvalue import PCollection

from kebab_chunk.beam.isolation import Isolated
from kebab_chunk.beam.parse import (
    DEFAULT_MAX_MEMORY_MB,
    MEMORY_LIMIT,
    error_type_of,
    memory_message,
)
from kebab_chunk.beam.records import DocumentOutcome, ErrorRecord
from kebab_chunk.chunkers.base import Chunker
from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE, get_chunker
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy

__all__ = ["DEFAULT_CHUNK_TIMEOUT_S", "ChunkDocuments", "run_labels"]

DEFAULT_CHUNK_TIMEOUT_S = 60.0

ERRORS = "errors"
OUTCOMES = "outcomes"
NO_ACCEPTING_CHUNKER = "no_accepting_chunker"
_Outputs = dict[str, PCollection[Any]]


def run_labels(labels: Sequence[str] | None) -> tuple[str, ...]:
    """The labels a run can produce: the requested ones, or every default label."""
    if labels:
        return tuple(dict.fromkeys(labels))
    return tuple(sorted(set(chain.from_iterable(DEFAULT_LABELS_BY_MEDIA_TYPE.values()))))


@dataclass(frozen=True)
class _Chunked:
    """Everything chunking one document produced; crosses the helper-process boundary."""

    chunks: tuple[Chunk, ...]
    errors: tuple[ErrorRecord, ...]
    outcome: DocumentOutcome


def _outcome(doc: CanonicalDocument, counts: Sequence[tuple[str, int]]) -> DocumentOutcome:
    return DocumentOutcome(
        doc.source_uri, doc.media_type, doc.parser_version, len(doc.warnings), tuple(counts)
    )


class _ChunkFn(beam.DoFn):
    """Chunks one document under each applicable label.

    The chunker instances are resolved on the launching machine and travel with the DoFn,
    so a helper process needs no registry lookup (and sees exactly the launcher's labels).

    Returns one ``_Chunked`` per document (it crosses the helper-process boundary);
    ``max_memory_mb`` is only named in ``memory_limit`` messages.
    """

    def __init__(
        self,
        labels: tuple[str, ...] | None,
        policy: ChunkPolicy,
        chunkers: dict[str, Chunker],
        max_memory_mb: int | None = None,
    ) -> None:
        self._labels = labels
        self._policy = policy
        self._chunkers = chunkers
        self._max_memory_mb = max_memory_mb

    def _labels_for(self, doc: CanonicalDocument) -> tuple[str, ...]:
        if self._labels:
            return self._labels
        return DEFAULT_LABELS_BY_MEDIA_TYPE.get(doc.media_type, ())

    def process(self, doc: CanonicalDocument) -> Iterator[_Chunked]:
        counts: list[tuple[str, int]] = []
        chunks: list[Chunk] = []
        errors: list[ErrorRecord] = []
        labels = self._labels_for(doc)
        for label in labels:
            chunker = self._chunkers[label]
            try:
                if not chunker.accepts(doc):
                    continue
                produced = chunker.chunk(doc, self._policy)
            except Exception as exc:  # a chunker failure is a dead letter
                errors.append(self._error(doc, label, exc))
                counts.append((label, 0))
                continue
            counts.append((label, len(produced)))
            chunks.extend(produced)
        if not counts:
            errors.append(self._not_accepted(doc, labels))
        yield _Chunked(tuple(chunks), tuple(errors), _outcome(doc, counts))

    def _error(self, doc: CanonicalDocument, label: str, exc: Exception) -> ErrorRecord:
        error_type = error_type_of(exc)
        message = (
            memory_message(f"chunking ({label})", doc.source_uri, self._max_memory_mb)
            if error_type == MEMORY_LIMIT
            else str(exc) or type(exc).__name__
        )
        return ErrorRecord(
            doc.source_uri,
            "chunk",
            error_type,
            message,
            content_hash=doc.content_hash,
            media_type=doc.media_type,
            chunker_version=label,
        )

    @staticmethod
    def _not_accepted(doc: CanonicalDocument, labels: tuple[str, ...]) -> ErrorRecord:
        if labels:
            message = (
                f"none of the requested chunkers ({', '.join(labels)}) accepts "
                f"{doc.media_type} documents; add one that does to --chunkers."
            )
        else:
            message = (
                f"no chunker runs by default for {doc.media_type} documents; "
                "name one with --chunkers."
            )
        return ErrorRecord(
            doc.source_uri,
            "chunk",
            NO_ACCEPTING_CHUNKER,
            message,
            content_hash=doc.content_hash,
            media_type=doc.media_type,
        )


class _RouteChunkedFn(beam.DoFn):
    """Splits each ``_Chunked`` into chunks (main), error rows and the outcome."""

    def process(self, item: _Chunked) -> Iterator[Any]:
        yield from item.chunks
        for error in item.errors:
            yield pvalue.TaggedOutput(ERRORS, error)
        yield pvalue.TaggedOutput(OUTCOMES, item.outcome)


def _stopped(
    dead: tuple[CanonicalDocument, tuple[type[BaseException], str, list[str]]],
    timeout_s: float,
) -> Iterator[Any]:
    """A document whose chunking hung or killed its helper: one error row and its outcome."""
    doc, (exc_type, exc_repr, _trace) = dead
    if issubclass(exc_type, TimeoutError):
        error_type = "timeout"
        message = (
            f"chunking {doc.source_uri} took longer than {timeout_s:g} s and was stopped; "
            "raise --chunk-timeout-s or remove the file from the corpus."
        )
    elif issubclass(exc_type, BrokenProcessPool):
        error_type = "worker_crash"
        message = (
            f"the chunker process died while chunking {doc.source_uri} (e.g. a crash in a "
            "native library, or one that ran out of --max-memory-mb); the file was skipped "
            "and the job went on."
        )
    else:
        error_type = exc_type.__name__
        message = f"chunking {doc.source_uri} failed outside the chunkers: {exc_repr}"
    yield pvalue.TaggedOutput(
        ERRORS,
        ErrorRecord(
            doc.source_uri,
            "chunk",
            error_type,
            message,
            content_hash=doc.content_hash,
            media_type=doc.media_type,
        ),
    )
    yield pvalue.TaggedOutput(OUTCOMES, _outcome(doc, ()))


class ChunkDocuments(beam.PTransform[PCollection[CanonicalDocument], _Outputs]):
    """Chunk CanonicalDocuments with every requested chunker version that accepts them.

    ``labels=None`` applies the defaults per media type (``DEFAULT_LABELS_BY_MEDIA_TYPE``).
    Unknown labels fail here, on the launching machine. Outputs (a dict): ``chunks``
    (Chunk), ``errors`` (ErrorRecord, stage ``chunk``: a chunker raised, hung, crashed or
    ran out of memory, or no requested chunker accepts the document) and ``outcomes`` (one
    DocumentOutcome per document). ``timeout_s`` is the per-document budget for all its
    labels together and ``max_memory_mb`` the helper's memory guard (None: none);
    ``isolate=False`` chunks in the worker process itself, without either guard.
    """

    def __init__(
        self,
        labels: Sequence[str] | None,
        policy: ChunkPolicy,
        *,
        timeout_s: float = DEFAULT_CHUNK_TIMEOUT_S,
        max_memory_mb: int | None = DEFAULT_MAX_MEMORY_MB,
        isolate: bool = True,
    ) -> None:
        super().__init__()
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        if max_memory_mb is not None and max_memory_mb <= 0:
            raise ValueError(f"max_memory_mb must be > 0, got {max_memory_mb}")
        self._labels = run_labels(labels) if labels else None
        # UnknownChunkerError (one sentence naming the registered labels) fails here
        self._chunkers = {label: get_chunker(label) for label in run_labels(labels)}
        self._policy = policy
        self._timeout_s = timeout_s
        self._isolate = isolate
        self._max_memory_mb = max_memory_mb if isolate else None

    def expand(self, docs: PCollection[CanonicalDocument]) -> _Outputs:
        chunk_fn = _ChunkFn(self._labels, self._policy, self._chunkers, self._max_memory_mb)
        if self._isolate:
            isolated = Isolated(
                chunk_fn, timeout_s=self._timeout_s, max_memory_mb=self._max_memory_mb
            )
            done, dead = (
                docs | "Chunk in helper process" >> beam.ParDo(isolated).with_exception_handling()
            )
        else:
            done, dead = docs | "Chunk in process" >> beam.ParDo(chunk_fn).with_exception_handling(
                timeout=self._timeout_s
            )
        routed = done | "Route chunker results" >> beam.ParDo(_RouteChunkedFn()).with_outputs(
            ERRORS, OUTCOMES, main="chunks"
        )
        stopped = dead | "Hangs and crashes to error rows" >> beam.FlatMap(
            _stopped, self._timeout_s
        ).with_outputs(ERRORS, OUTCOMES)
        errors = (routed[ERRORS], stopped[ERRORS]) | "Collect chunk errors" >> beam.Flatten()
        outcomes = (routed[OUTCOMES], stopped[OUTCOMES]) | "Collect outcomes" >> beam.Flatten()
        return {"chunks": routed.chunks, ERRORS: errors, OUTCOMES: outcomes}
