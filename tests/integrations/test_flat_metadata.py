"""The flat metadata form: scalars only, the same keys for every record, exact locations."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.documents import Document

from kebab_chunk.chunkers.contextualize import contextualize
from kebab_chunk.integrations import FLAT_KEYS, flat_metadata
from kebab_chunk.integrations.beam_rag import (
    ToBeamRagChunks,
    chunk_from_beam_rag_chunk,
    to_beam_rag_chunk,
)
from kebab_chunk.integrations.langchain import (
    chunk_from_langchain_document,
    to_langchain_document,
)
from kebab_chunk.integrations.llamaindex import chunk_from_llama_index_node, to_llama_index_node
from kebab_chunk.model import Chunk, ElementSpan, LineSpan, PageSpan

CONVERTERS = {
    "langchain": (to_langchain_document, lambda d: d.metadata, chunk_from_langchain_document),
    "llamaindex": (to_llama_index_node, lambda n: n.metadata, chunk_from_llama_index_node),
    "beam_rag": (to_beam_rag_chunk, lambda c: c.metadata, chunk_from_beam_rag_chunk),
}


def _record(
    *spans: Any, heading_path: tuple[str, ...] = (), captions: tuple[str, ...] = ()
) -> Chunk:
    return Chunk(
        chunk_id="c" * 32,
        doc_id="d" * 32,
        source_uri="a/b.md",
        chunker_version="md-heading-v1",
        policy_hash="p" * 16,
        parser_version="md-pyromark-v1",
        position=3,
        text="some text",
        heading_path=heading_path,
        captions=captions,
        block_ids=("b1", "b2"),
        source_spans=spans,
        token_estimate=4,
        content_hash="h" * 64,
    )


def _is_scalar(value: object) -> bool:
    return type(value) in (str, int)


@pytest.mark.parametrize("adapter", list(CONVERTERS))
def test_every_adapter_gives_the_same_scalar_keys_for_every_record(
    adapter: str, pipeline_records: list[Chunk]
) -> None:
    convert, metadata_of, _back = CONVERTERS[adapter]
    for record in pipeline_records:
        metadata = metadata_of(convert(record, metadata="flat"))
        assert list(metadata) == [*FLAT_KEYS, "content_kind"]
        assert all(_is_scalar(v) for v in metadata.values()), metadata
        assert metadata["chunk_id"] == record.chunk_id
        assert metadata["chunker_version"] == record.chunker_version


def test_single_span_locations_are_exact(pipeline_records: list[Chunk]) -> None:
    seen = set()
    for record in pipeline_records:
        flat = flat_metadata(record)
        if len(record.source_spans) != 1:
            continue
        [span] = record.source_spans
        seen.add(span.kind)
        assert (flat["span_kind"], flat["span_count"]) == (span.kind, 1)
        assert (flat["char_start"], flat["char_end"]) == (span.char_start, span.char_end)
        if isinstance(span, LineSpan):
            assert (flat["line_start"], flat["line_end"]) == (span.line_start, span.line_end)
            assert (flat["page"], flat["page_end"], flat["span_ref"]) == (0, 0, "")
        elif isinstance(span, PageSpan):
            assert (flat["page"], flat["page_end"]) == (span.page, span.page)
            assert (flat["line_start"], flat["line_end"], flat["span_ref"]) == (0, 0, "")
        else:
            assert isinstance(span, ElementSpan)
            assert flat["span_ref"] == span.ref and flat["span_ref"].startswith("/w:document")
            assert (flat["line_start"], flat["line_end"]) == (0, 0)
    assert seen == {"lines", "page", "element"}


def test_several_spans_give_the_range_from_the_first_start_to_the_last_end() -> None:
    lines = _record(
        LineSpan(line_start=3, line_end=4, char_start=10, char_end=40),
        LineSpan(line_start=6, line_end=9, char_start=50, char_end=90),
    )
    flat = flat_metadata(lines)
    assert (flat["line_start"], flat["line_end"]) == (3, 9)
    assert (flat["char_start"], flat["char_end"], flat["span_count"]) == (10, 90, 2)
    pages = _record(
        PageSpan(page=2, char_start=700, char_end=900), PageSpan(page=3, char_start=0, char_end=120)
    )
    flat = flat_metadata(pages)
    assert (flat["page"], flat["page_end"], flat["char_start"], flat["char_end"]) == (
        2,
        3,
        700,
        120,
    )
    elements = _record(
        ElementSpan(ref="#/texts/1", page=None, char_start=0, char_end=5),
        ElementSpan(ref="#/texts/2", page=4, char_start=0, char_end=7),
    )
    flat = flat_metadata(elements)
    assert (flat["span_ref"], flat["page"], flat["page_end"]) == ("#/texts/1", 4, 4)


def test_heading_path_and_captions_are_joined_as_contextualize_writes_them() -> None:
    record = _record(
        LineSpan(line_start=1, line_end=1, char_start=0, char_end=9),
        heading_path=("Install", "Configure > advanced"),
        captions=("Figure 1: data flow",),
    )
    flat = flat_metadata(record)
    assert flat["heading_path"] == "Install\nConfigure > advanced"
    assert flat["captions"] == "Figure 1: data flow"
    prefix = f"{flat['heading_path']}\n{flat['captions']}\n"
    assert contextualize(record) == prefix + record.text
    bare = flat_metadata(_record(LineSpan(line_start=1, line_end=1, char_start=0, char_end=9)))
    assert (bare["heading_path"], bare["captions"]) == ("", "")


@pytest.mark.parametrize("adapter", list(CONVERTERS))
def test_flat_metadata_cannot_rebuild_the_record_and_says_so(
    adapter: str, records: list[Chunk]
) -> None:
    convert, _metadata_of, back = CONVERTERS[adapter]
    for contextualized in (False, True):
        converted = convert(records[1], metadata="flat", contextualized=contextualized)
        with pytest.raises(ValueError, match=r"flat form keeps scalars only.*chunk_id"):
            back(converted)
    # The full form still round-trips.
    assert back(convert(records[1], metadata="full", contextualized=True)) == records[1]


@pytest.mark.parametrize("adapter", list(CONVERTERS))
def test_an_unknown_metadata_form_is_refused_in_one_sentence(
    adapter: str, records: list[Chunk]
) -> None:
    convert, _metadata_of, _back = CONVERTERS[adapter]
    with pytest.raises(
        ValueError, match=r"^metadata must be 'full' .* or 'flat' .*got 'nested'\.$"
    ):
        convert(records[0], metadata="nested")


def test_the_beam_transform_takes_the_metadata_form_on_the_launcher() -> None:
    with pytest.raises(ValueError, match="metadata must be 'full'"):
        ToBeamRagChunks(metadata="scalars")  # type: ignore[arg-type]


def test_a_langchain_document_survives_json_with_flat_metadata(records: list[Chunk]) -> None:
    document = to_langchain_document(records[0], metadata="flat")
    assert Document.model_validate_json(document.model_dump_json()) == document
