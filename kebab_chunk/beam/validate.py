# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""``ValidateChunks``: one record per (chunker_version, chunk_id), never a silent overwrite."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.pvalue import PCollection

from kebab_chunk.beam import metrics
from kebab_chunk.model import Chunk
from kebab_chunk.output.records import ErrorRecord

__all__ = ["CHUNK_ID_CONFLICT", "ValidateChunks", "conflict_errors"]

ERRORS = "errors"
CHUNK_ID_CONFLICT = "chunk_id_conflict"


def _key(chunk: Chunk) -> tuple[str, str]:
    return (chunk.chunker_version, chunk.chunk_id)


def conflict_errors(label: str, chunk_id: str, variants: Iterable[Chunk]) -> list[ErrorRecord]:
    """The ``validate`` error rows for records that differ under one (label, chunk_id).

    One row per source involved, naming every source; counts ``chunk_id_conflicts``.
    Shared by ValidateChunks and the shard writer (kebab_chunk/beam/write.py), which
    checks ids itself so that the pipeline groups its chunks once.
    """
    distinct = {c.model_dump_json(): c for c in variants}
    ordered = [distinct[k] for k in sorted(distinct)]
    sources = sorted({c.source_uri for c in ordered})
    named = " and ".join(sources) if len(sources) > 1 else f"{sources[0]} (twice)"
    metrics.inc(metrics.keyed("chunk_id_conflicts", label))
    errors = []
    for uri in sources:
        first = next(c for c in ordered if c.source_uri == uri)
        errors.append(
            ErrorRecord(
                uri,
                "validate",
                CHUNK_ID_CONFLICT,
                f"chunk_id {chunk_id} of {label} was produced {len(ordered)} times with "
                f"different content, by {named}; none was written — this is a chunker "
                "bug, report it with these files.",
                content_hash=first.content_hash,
                chunker_version=label,
            )
        )
    return errors


class _CheckDuplicatesFn(beam.DoFn):
    """Identical duplicates collapse; different records under one id are all refused."""

    def process(self, element: tuple[tuple[str, str], Iterable[Chunk]]) -> Iterator[Any]:
        (label, chunk_id), group = element
        variants = {c.model_dump_json(): c for c in group}
        if len(variants) == 1:
            yield next(iter(variants.values()))
            return
        for error in conflict_errors(label, chunk_id, variants.values()):
            yield pvalue.TaggedOutput(ERRORS, error)


class ValidateChunks(beam.PTransform[PCollection[Chunk], dict[str, PCollection[Any]]]):
    """Group chunks by ``(chunker_version, chunk_id)``.

    The pipeline does not use this transform: WriteChunks makes the same check inside its
    shard groups (a chunk's shard is a function of its id), so chunks are grouped once.

    Outputs (a dict): ``chunks`` (unique records) and ``errors`` (stage ``validate``, one
    row per source involved in a conflict, naming every source).
    """

    def expand(self, chunks: PCollection[Chunk]) -> dict[str, PCollection[Any]]:
        out = (
            chunks
            | "Key by label and id" >> beam.Map(lambda c: (_key(c), c))
            | "Group by label and id" >> beam.GroupByKey()
            | "Check duplicates"
            >> beam.ParDo(_CheckDuplicatesFn()).with_outputs(ERRORS, main="chunks")
        )
        return {"chunks": out.chunks, ERRORS: out[ERRORS]}
