"""Chunk records → LangChain Documents, tested with the real langchain-core."""

from __future__ import annotations

import sys

import pytest
from langchain_core.documents import Document

from kebab_chunk import get_chunker, make_policy, parse_document
from kebab_chunk.chunkers.contextualize import contextualize
from kebab_chunk.chunkers.embedding import embed_text, with_embedding
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


def test_contextualized_content_is_the_records_embed_text(records: list[Chunk]) -> None:
    nested = next(r for r in records if len(r.heading_path) == 2)
    document = to_langchain_document(nested, contextualized=True)
    assert document.page_content == embed_text(nested)
    assert document.page_content.startswith("Install\n## Configure\n")  # no heading twice
    assert document.metadata["content_kind"] == "embed_text"
    assert document.metadata["text"] == nested.text and "embed_text" in document.metadata


def test_dict_records_are_accepted(records: list[Chunk]) -> None:
    as_json = records[0].model_dump(mode="json")
    assert to_langchain_document(as_json) == to_langchain_document(records[0])


def test_documents_stored_with_the_old_contextualized_content_still_read_back(
    records: list[Chunk],
) -> None:
    """Before embed_text, contextualized content was contextualize(chunk) with
    content_kind "contextualized"; vector stores hold such Documents, so they still give
    their record back, and content that is not of that form is refused."""
    record = records[-1]
    metadata = {**to_langchain_document(record).metadata, "content_kind": "contextualized"}
    old = Document(id=record.chunk_id, page_content=contextualize(record), metadata=metadata)
    assert chunk_from_langchain_document(old) == record
    old.page_content = "something else"
    with pytest.raises(ValueError, match="contextualize"):
        chunk_from_langchain_document(old)


def test_missing_langchain_gives_an_install_hint(
    records: list[Chunk], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "langchain_core.documents", None)
    with pytest.raises(ImportError, match=r"pip install langchain-core"):
        to_langchain_document(records[0])


def test_a_label_with_its_own_embed_text_needs_it_filled_in() -> None:
    """hybrid-v2 shortens context to its budget, which the record does not hold: a record
    made by the chunker directly is refused in one sentence; filled in, it converts."""
    policy = make_policy(target_tokens=64, overlap_tokens=0)
    chunker = get_chunker("hybrid-v2")
    doc = parse_document(b"# Guide\n\n## Setup\n\nInstall it with pip.\n", "guide.md")
    raw = chunker.chunk(doc, policy)
    with pytest.raises(ValueError, match=r"has no embed_text and hybrid-v2 makes its own") as info:
        to_langchain_document(raw[0], contextualized=True)
    assert "\n" not in str(info.value)
    filled = with_embedding(raw, chunker, policy)
    document = to_langchain_document(filled[0], contextualized=True)
    assert document.page_content == filled[0].embed_text == "Guide\nSetup\nInstall it with pip."
    assert chunk_from_langchain_document(document) == filled[0]
