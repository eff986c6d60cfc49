"""Chunk records → LangChain Documents, tested with the real langchain-core."""

from __future__ import annotations

import sys

import pytest
from langchain_core.documents import Document

from kebab_chunk.chunkers.contextualize import contextualize
from kebab_chunk.integrations.langchain import (
    chunk_from_langchain_document,
    to_langchain_document,
    to_langchain_documents,
)
from kebab_chunk.model import Chunk


def test_documents_carry_ids_text_and_every_record_field(records: list[Chunk]) -> None:
    documents = to_langchain_documents(records)
    assert all(isinstance(d, Document) for d in documents)
    assert [d.id for d in documents] == [r.chunk_id for r in records]
    assert [d.page_content for d in documents] == [r.text for r in records]
    for document, record in zip(documents, records, strict=True):
        meta = document.metadata
        assert meta["chunk_id"] == record.chunk_id
        assert meta["doc_id"] == record.doc_id
        assert meta["source_uri"] == "guides/install.md"
        assert meta["chunker_version"] == "md-header-chars-v1"
        assert meta["heading_path"] == list(record.heading_path)
        assert meta["block_ids"] == list(record.block_ids)
        assert meta["source_spans"] == [s.model_dump(mode="json") for s in record.source_spans]
        assert meta["content_kind"] == "text"
        assert "text" not in meta


def test_round_trip_gives_the_same_records(records: list[Chunk]) -> None:
    for contextualized in (False, True):
        documents = to_langchain_documents(records, contextualized=contextualized)
        assert [chunk_from_langchain_document(d) for d in documents] == records


def test_round_trip_survives_json_serialisation(records: list[Chunk]) -> None:
    # What a vector store or a cache does: dump the Document and load it back.
    for record in records:
        stored = Document.model_validate_json(to_langchain_document(record).model_dump_json())
        assert stored.id == record.chunk_id
        assert chunk_from_langchain_document(stored) == record


def test_contextualized_content_is_the_projects_contextualize(records: list[Chunk]) -> None:
    nested = next(r for r in records if len(r.heading_path) == 2)
    document = to_langchain_document(nested, contextualized=True)
    assert document.page_content == contextualize(nested)
    assert document.page_content.startswith("Install\nConfigure\n")
    assert document.metadata["content_kind"] == "contextualized"


def test_dict_records_are_accepted(records: list[Chunk]) -> None:
    as_json = records[0].model_dump(mode="json")
    assert to_langchain_document(as_json) == to_langchain_document(records[0])


def test_a_document_with_foreign_content_is_refused(records: list[Chunk]) -> None:
    document = to_langchain_document(records[-1], contextualized=True)
    document.page_content = "something else"
    with pytest.raises(ValueError, match="contextualize"):
        chunk_from_langchain_document(document)


def test_missing_langchain_gives_an_install_hint(
    records: list[Chunk], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "langchain_core.documents", None)
    with pytest.raises(ImportError, match=r"pip install langchain-core"):
        to_langchain_document(records[0])
