"""Chunk records → Beam RAG chunks (``apache_beam.ml.rag.types.Chunk``).

Beam's embedding and vector-store ingestion transforms consume
``apache_beam.ml.rag.types.Chunk``; its own chunkers give them random uuid4 ids, ours keep
the content-addressed ``chunk_id``, so writing the same corpus twice upserts the same rows.
``index`` is the record's ``position`` and ``metadata`` every other record field as JSON
values (``metadata="full"``, see :func:`kebab_chunk.integrations.record_metadata`) or
scalars only (``metadata="flat"``, for vector stores with scalar columns; see
:func:`kebab_chunk.integrations.flat_metadata`). Elements may be records, their dict form
or the pipeline's Parquet rows (read back with their ``chunker_version`` column).

Use :class:`ToBeamRagChunks` right after the pipeline's chunking step::

    chunks | "To Beam RAG chunks" >> ToBeamRagChunks() | MLTransform(...)  # embeddings
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kebab_chunk.errors import MissingDependencyError, WrongTypeError

try:  # Apache Beam is the pipeline extra: its absence is one sentence, not a traceback
    import apache_beam as beam
    from apache_beam.ml.rag.types import Chunk as BeamChunk
    from apache_beam.ml.rag.types import Content
    from apache_beam.pvalue import PCollection
except ModuleNotFoundError as exc:
    if exc.name != "apache_beam":
        raise
    raise MissingDependencyError.for_extra(
        "kebab_chunk.integrations.beam_rag", "Apache Beam", "pipeline"
    ) from None

from kebab_chunk.integrations._common import (
    MetadataMode,
    adapter_metadata,
    adapter_text,
    as_record,
    check_metadata_mode,
    record_from_content,
)
from kebab_chunk.model import Chunk

__all__ = ["ToBeamRagChunks", "chunk_from_beam_rag_chunk", "to_beam_rag_chunk"]


def to_beam_rag_chunk(
    chunk: Chunk | Mapping[str, Any],
    *,
    contextualized: bool = False,
    metadata: MetadataMode = "full",
) -> BeamChunk:
    """One record as a Beam RAG chunk.

    ``contextualized`` makes the text the record's ``embed_text`` (the one text to embed);
    the record is recoverable either way (from ``"full"`` metadata). ``metadata`` is
    ``"full"`` or ``"flat"`` (module doc).
    """
    record = as_record(chunk)
    values = adapter_metadata(record, contextualized=contextualized, metadata=metadata)
    text = adapter_text(record, contextualized=contextualized)
    return BeamChunk(
        content=Content(text=text), id=record.chunk_id, index=record.position, metadata=values
    )


def chunk_from_beam_rag_chunk(chunk: BeamChunk) -> Chunk:
    """The record a Beam RAG chunk made by :func:`to_beam_rag_chunk` came from."""
    return record_from_content(chunk.metadata, chunk.content.text or "")


class ToBeamRagChunks(beam.PTransform[PCollection[Any], PCollection[BeamChunk]]):
    """PCollection of chunk records (or their dict form) → Beam RAG ``Chunk`` objects.

    ``contextualized=True`` gives each record's ``embed_text`` (heading path and captions
    the text lacks, then the text), so the embedding sees which section it came from;
    ``metadata="flat"`` gives scalar-only metadata.
    """

    def __init__(self, contextualized: bool = False, metadata: MetadataMode = "full") -> None:
        super().__init__()
        if not isinstance(contextualized, bool):
            raise WrongTypeError(f"contextualized must be True or False, got {contextualized!r}.")
        self._contextualized = contextualized
        self._metadata: MetadataMode = check_metadata_mode(metadata)

    def expand(self, pcoll: PCollection[Any]) -> PCollection[BeamChunk]:
        convert = beam.Map(  # type: ignore[no-untyped-call]
            to_beam_rag_chunk, contextualized=self._contextualized, metadata=self._metadata
        )
        converted: PCollection[BeamChunk] = pcoll | "Convert records to Beam RAG chunks" >> convert
        return converted
