# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""``ChunkDocuments``: apply every requested chunker version to the documents it accepts."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain
from typing import Any

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.pvalue import PCollection

from kebab_chunk.beam.parse import error_type_of
from kebab_chunk.beam.records import DocumentOutcome, ErrorRecord
from kebab_chunk.chunkers.base import Chunker
from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE, get_chunker
from kebab_chunk.model import CanonicalDocument, ChunkPolicy

__all__ = ["ChunkDocuments", "run_labels"]

ERRORS = "errors"
OUTCOMES = "outcomes"
NO_ACCEPTING_CHUNKER = "no_accepting_chunker"
_Outputs = dict[str, PCollection[Any]]


def run_labels(labels: Sequence[str] | None) -> tuple[str, ...]:
    """The labels a run can produce: the requested ones, or every default label."""
    if labels:
        return tuple(dict.fromkeys(labels))
    return tuple(sorted(set(chain.from_iterable(DEFAULT_LABELS_BY_MEDIA_TYPE.values()))))


class _ChunkFn(beam.DoFn):
    """Chunks one document under each applicable label; builds chunkers once per worker."""

    def __init__(self, labels: tuple[str, ...] | None, policy: ChunkPolicy) -> None:
        self._labels = labels
        self._policy = policy
        self._chunkers: dict[str, Chunker] = {}

    def setup(self) -> None:
        self._chunkers = {label: get_chunker(label) for label in run_labels(self._labels)}

    def _labels_for(self, doc: CanonicalDocument) -> tuple[str, ...]:
        if self._labels:
            return self._labels
        return DEFAULT_LABELS_BY_MEDIA_TYPE.get(doc.media_type, ())

    def process(self, doc: CanonicalDocument) -> Iterator[Any]:
        counts: list[tuple[str, int]] = []
        labels = self._labels_for(doc)
        for label in labels:
            chunker = self._chunkers[label]
            try:
                if not chunker.accepts(doc):
                    continue
                chunks = chunker.chunk(doc, self._policy)
            except Exception as exc:  # a chunker failure is a dead letter
                yield pvalue.TaggedOutput(ERRORS, self._error(doc, label, exc))
                counts.append((label, 0))
                continue
            counts.append((label, len(chunks)))
            yield from chunks
        if not counts:
            yield pvalue.TaggedOutput(ERRORS, self._not_accepted(doc, labels))
        yield pvalue.TaggedOutput(
            OUTCOMES,
            DocumentOutcome(
                doc.source_uri,
                doc.media_type,
                doc.parser_version,
                len(doc.warnings),
                tuple(counts),
            ),
        )

    @staticmethod
    def _error(doc: CanonicalDocument, label: str, exc: Exception) -> ErrorRecord:
        return ErrorRecord(
            doc.source_uri,
            "chunk",
            error_type_of(exc),
            str(exc) or type(exc).__name__,
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


class ChunkDocuments(beam.PTransform[PCollection[CanonicalDocument], _Outputs]):
    """Chunk CanonicalDocuments with every requested chunker version that accepts them.

    ``labels=None`` applies the defaults per media type (``DEFAULT_LABELS_BY_MEDIA_TYPE``).
    Unknown labels fail here, on the launching machine. Outputs (a dict): ``chunks``
    (Chunk), ``errors`` (ErrorRecord, stage ``chunk``: a chunker raised, or no requested
    chunker accepts the document) and ``outcomes`` (one DocumentOutcome per document).
    """

    def __init__(self, labels: Sequence[str] | None, policy: ChunkPolicy) -> None:
        super().__init__()
        self._labels = run_labels(labels) if labels else None
        for label in run_labels(labels):
            get_chunker(label)  # raises UnknownChunkerError with the registered labels
        self._policy = policy

    def expand(self, docs: PCollection[CanonicalDocument]) -> _Outputs:
        out = docs | "Apply chunkers" >> beam.ParDo(
            _ChunkFn(self._labels, self._policy)
        ).with_outputs(ERRORS, OUTCOMES, main="chunks")
        return {"chunks": out.chunks, ERRORS: out[ERRORS], OUTCOMES: out[OUTCOMES]}
