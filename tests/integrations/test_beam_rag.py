"""Chunk records → Beam RAG chunks, tested with the installed apache-beam."""

from __future__ import annotations

import apache_beam as beam
import pytest
from apache_beam.ml.rag.types import Chunk as BeamChunk
from apache_beam.ml.rag.types import Content
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to

from kebab_chunk.chunkers.embedding import embed_text
from kebab_chunk.integrations.beam_rag import (
    ToBeamRagChunks,
    chunk_from_beam_rag_chunk,
    to_beam_rag_chunk,
)
from kebab_chunk.model import Chunk


def test_beam_chunks_use_our_ids_positions_and_metadata(records: list[Chunk]) -> None:
    for record in records:
        converted = to_beam_rag_chunk(record)
        assert isinstance(converted, BeamChunk)
        assert converted.id == record.chunk_id
        assert converted.index == record.position
        assert converted.content == Content(text=record.text)
        assert converted.embedding is None
        assert converted.metadata["chunk_id"] == record.chunk_id
        assert converted.metadata["source_uri"] == record.source_uri
        assert converted.metadata["heading_path"] == list(record.heading_path)
        assert converted.metadata["content_kind"] == "text"


def test_round_trip_gives_the_same_records(records: list[Chunk]) -> None:
    for contextualized in (False, True):
        converted = [to_beam_rag_chunk(r, contextualized=contextualized) for r in records]
        assert [chunk_from_beam_rag_chunk(c) for c in converted] == records


def test_contextualized_text(records: list[Chunk]) -> None:
    record = next(r for r in records if r.captions)
    converted = to_beam_rag_chunk(record, contextualized=True)
    assert converted.content.text == embed_text(record)  # the record has none: the recipe
    assert converted.metadata["content_kind"] == "embed_text"
    given = record.model_copy(update={"embed_text": "as the pipeline wrote it"})
    assert to_beam_rag_chunk(given, contextualized=True).content.text == given.embed_text


def test_transform_in_a_pipeline(records: list[Chunk]) -> None:
    expected = [to_beam_rag_chunk(r, contextualized=True) for r in records]
    # Ids are content-addressed, so whole Beam chunks compare exactly (no uuid4 to ignore).
    with BeamTestPipeline() as pipeline:
        out = (
            pipeline
            | "Create records" >> beam.Create(records)
            | "To Beam RAG chunks" >> ToBeamRagChunks(contextualized=True)
        )
        assert_that(out, equal_to(expected))


def test_transform_accepts_records_in_dict_form(records: list[Chunk]) -> None:
    rows = [r.model_dump(mode="json") for r in records]
    with BeamTestPipeline() as pipeline:
        out = pipeline | beam.Create(rows) | ToBeamRagChunks()
        ids = out | beam.Map(lambda chunk: chunk.id)
        assert_that(ids, equal_to([r.chunk_id for r in records]))


def test_transform_options_are_checked_on_the_launcher() -> None:
    with pytest.raises(TypeError, match="contextualized must be True or False"):
        ToBeamRagChunks(contextualized="yes")  # type: ignore[arg-type]


def test_unknown_elements_are_refused() -> None:
    with pytest.raises(TypeError, match="expected a kebab_chunk Chunk record"):
        to_beam_rag_chunk("plain text")  # type: ignore[arg-type]
