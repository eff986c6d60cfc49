# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""``ChunkDocuments``: apply every requested chunker version to the documents it accepts.

Chunkers run isolated like parsers (:class:`~kebab_chunk.beam.isolation.IsolatedDoFn`): each
document is chunked, under every applicable label, in a long-lived helper process with a
per-document time budget (``timeout_s``) and the same memory guard. A chunker that raises gives an
error row for that label while the other labels still chunk the document; one that hangs
past the budget (``timeout``), kills its process (``worker_crash``) or exhausts the memory
guard (``memory_limit``) gives one error row for the document, and the job goes on.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain
from typing import Any

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.pvalue import PCollection

from kebab_chunk.beam.isolation import IsolatedDoFn
from kebab_chunk.beam.parse import stopped_error
from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE, get_chunker
from kebab_chunk.model import CanonicalDocument, ChunkPolicy
from kebab_chunk.runtime.supervisor import Finished
from kebab_chunk.runtime.tasks import DEFAULT_MAX_MEMORY_MB, Chunked, ChunkTask, outcome

__all__ = [
    "DEFAULT_CHUNK_TIMEOUT_S",
    "ChunkDocuments",
    "ChunkTask",
    "Chunked",
    "emit_chunked",
    "outcome",
    "run_labels",
]

DEFAULT_CHUNK_TIMEOUT_S = 60.0

ERRORS = "errors"
OUTCOMES = "outcomes"
_Outputs = dict[str, PCollection[Any]]


def run_labels(labels: Sequence[str] | None) -> tuple[str, ...]:
    """The labels a run can produce: the requested ones, or every default label."""
    if labels:
        return tuple(dict.fromkeys(labels))
    return tuple(sorted(set(chain.from_iterable(DEFAULT_LABELS_BY_MEDIA_TYPE.values()))))


def emit_chunked(item: Chunked) -> Iterator[Any]:
    """A ``Chunked`` as outputs: chunks or EncodedChunks (main), error rows and the
    outcome (tagged)."""
    yield from item.chunks
    yield from item.encoded
    for error in item.errors:
        yield pvalue.TaggedOutput(ERRORS, error)
    yield pvalue.TaggedOutput(OUTCOMES, item.outcome)


class _ChunkDoFn(IsolatedDoFn):
    """Chunks in the helper; a hang or crash gives one error row and an empty outcome."""

    def __init__(
        self, task: ChunkTask, *, timeout_s: float, max_memory_mb: int | None, isolate: bool
    ) -> None:
        super().__init__(task, budgets_s=(timeout_s,), max_memory_mb=max_memory_mb, isolate=isolate)
        self._timeout_s = timeout_s

    def outputs(self, done: Finished) -> Iterator[Any]:
        if done.failure is None:
            yield from emit_chunked(done.result)
            return
        doc: CanonicalDocument = done.element
        yield pvalue.TaggedOutput(
            ERRORS,
            stopped_error(
                "chunk",
                done.failure,
                source_uri=doc.source_uri,
                content_hash=doc.content_hash,
                media_type=doc.media_type,
                budget_s=self._timeout_s,
                max_memory_mb=self._max_memory_mb,
            ),
        )
        yield pvalue.TaggedOutput(OUTCOMES, outcome(doc, ()))


class ChunkDocuments(beam.PTransform[PCollection[CanonicalDocument], _Outputs]):
    """Chunk CanonicalDocuments with every requested chunker version that accepts them.

    ``labels=None`` applies the defaults per media type (``DEFAULT_LABELS_BY_MEDIA_TYPE``).
    Unknown labels fail here, on the launching machine. Outputs (a dict): ``chunks``
    (Chunk), ``errors`` (ErrorRecord, stage ``chunk``: a chunker raised, hung, crashed or
    ran out of memory, or no requested chunker accepts the document) and ``outcomes`` (one
    DocumentOutcome per document). ``timeout_s`` is the per-document budget for all its
    labels together and ``max_memory_mb`` the helper's memory guard (None: none);
    ``isolate=False`` chunks in the worker process itself, without either guard.
    ``encode=True`` gives ``chunks`` as one EncodedChunks per document and label (what
    ``WriteChunks`` takes besides Chunks; the job's path).
    """

    def __init__(
        self,
        labels: Sequence[str] | None = None,
        policy: ChunkPolicy | None = None,
        *,
        timeout_s: float = DEFAULT_CHUNK_TIMEOUT_S,
        max_memory_mb: int | None = DEFAULT_MAX_MEMORY_MB,
        isolate: bool = True,
        encode: bool = False,
    ) -> None:
        super().__init__()
        self._encode = encode
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        if max_memory_mb is not None and max_memory_mb <= 0:
            raise ValueError(f"max_memory_mb must be > 0, got {max_memory_mb}")
        self._labels = run_labels(labels) if labels else None
        # UnknownChunkerError (one sentence naming the registered labels) fails here
        self._chunkers = {label: get_chunker(label) for label in run_labels(labels)}
        self._policy = policy if policy is not None else ChunkPolicy()
        self._timeout_s = timeout_s
        self._isolate = isolate
        self._max_memory_mb = max_memory_mb if isolate else None

    @property
    def timeout_s(self) -> float:
        return self._timeout_s

    def task(self) -> ChunkTask:
        """The helper-side work of this transform (also run by ``ParseAndChunk``)."""
        return ChunkTask(
            self._labels, self._policy, self._chunkers, self._max_memory_mb, encode=self._encode
        )

    def expand(self, docs: PCollection[CanonicalDocument]) -> _Outputs:
        chunk = _ChunkDoFn(
            self.task(),
            timeout_s=self._timeout_s,
            max_memory_mb=self._max_memory_mb,
            isolate=self._isolate,
        )
        out = docs | "Chunk in helper process" >> beam.ParDo(chunk).with_outputs(
            ERRORS, OUTCOMES, main="chunks"
        )
        return {"chunks": out.chunks, ERRORS: out[ERRORS], OUTCOMES: out[OUTCOMES]}
