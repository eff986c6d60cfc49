"""The pipeline's output in a real Chroma collection: why the flat metadata form exists.

Chroma (the dev extra's vector store, in-process, nothing downloaded: the embeddings here are
a deterministic function of the text) refuses the full form's span dicts and takes the flat
form; what comes back joins on ``chunk_id`` to the exact records.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import chromadb
import pandas as pd
import pytest

from kebab_chunk.integrations import flat_metadata
from kebab_chunk.integrations.langchain import to_langchain_documents
from kebab_chunk.integrations.llamaindex import to_llama_index_nodes
from kebab_chunk.model import Chunk, ElementSpan, LineSpan, PageSpan

pytestmark = pytest.mark.slow


def _embed(text: str) -> list[float]:
    """Eight numbers in [0, 1) from the text's sha256: deterministic, no model."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [digest[i] / 256 for i in range(8)]


def _collection(path: Path, name: str) -> Any:
    client = chromadb.PersistentClient(
        path=str(path), settings=chromadb.Settings(anonymized_telemetry=False)
    )
    return client.create_collection(name, embedding_function=None)


def _rebuilt_span(metadata: dict[str, Any]) -> LineSpan | PageSpan | ElementSpan:
    """A one-span chunk's span, from flat metadata alone."""
    start, end = metadata["char_start"], metadata["char_end"]
    if metadata["span_kind"] == "lines":
        return LineSpan(
            line_start=metadata["line_start"],
            line_end=metadata["line_end"],
            char_start=start,
            char_end=end,
        )
    if metadata["span_kind"] == "page":
        return PageSpan(page=metadata["page"], char_start=start, char_end=end)
    return ElementSpan(
        ref=metadata["span_ref"], page=metadata["page"] or None, char_start=start, char_end=end
    )


def test_chroma_refuses_full_metadata(tmp_path: Path, pipeline_out: Path) -> None:
    [document, *_] = to_langchain_documents(pd.read_parquet(pipeline_out / "chunks"))
    collection = _collection(tmp_path, "full")

    def add(metadata: dict[str, Any]) -> None:
        collection.add(
            ids=[document.id],
            embeddings=[_embed(document.page_content)],
            metadatas=[metadata],
            documents=[document.page_content],
        )

    full = document.metadata
    assert full["captions"] == []
    with pytest.raises(ValueError, match="key 'captions' to be non-empty"):
        add(full)  # an empty list is refused...
    non_empty = {key: value for key, value in full.items() if value != []}
    with pytest.raises(ValueError, match="key 'source_spans' to contain only str, int"):
        add(non_empty)  # ...and so are the span dicts, whatever else is dropped
    with pytest.raises(TypeError):
        add({"chunk_id": document.id, "page": None})  # as is None, the Parquet rows' filler
    assert collection.count() == 0


@pytest.mark.parametrize("adapter", ["langchain", "llamaindex"])
def test_flat_metadata_goes_in_and_joins_back_to_the_exact_records(
    adapter: str, tmp_path: Path, pipeline_out: Path, pipeline_records: list[Chunk]
) -> None:
    frame = pd.read_parquet(pipeline_out / "chunks")
    if adapter == "langchain":
        items = [
            (d.id, d.page_content, d.metadata)
            for d in to_langchain_documents(frame, metadata="flat")
        ]
    else:
        items = [
            (n.node_id, n.text, n.metadata) for n in to_llama_index_nodes(frame, metadata="flat")
        ]
    collection = _collection(tmp_path, adapter)
    ids, texts, metadatas = (list(column) for column in zip(*items, strict=True))
    collection.add(
        ids=ids, embeddings=[_embed(t) for t in texts], metadatas=metadatas, documents=texts
    )
    # Re-ingesting the same output upserts: the ids are the content-addressed chunk ids.
    collection.upsert(
        ids=ids, embeddings=[_embed(t) for t in texts], metadatas=metadatas, documents=texts
    )
    assert collection.count() == len(pipeline_records)

    stored = collection.get(include=["metadatas", "documents"])
    by_id = {record.chunk_id: record for record in pipeline_records}
    assert sorted(stored["ids"]) == sorted(by_id)
    kinds = set()
    for chunk_id, text, metadata in zip(
        stored["ids"], stored["documents"], stored["metadatas"], strict=True
    ):
        record = by_id[chunk_id]
        assert text == record.text
        assert dict(metadata) == {**flat_metadata(record), "content_kind": "text"}
        if metadata["span_count"] == 1:
            kinds.add(metadata["span_kind"])
            assert (_rebuilt_span(dict(metadata)),) == record.source_spans
    assert kinds == {"lines", "page", "element"}


def test_flat_keys_filter_by_page_and_line(tmp_path: Path, pipeline_records: list[Chunk]) -> None:
    documents = to_langchain_documents(pipeline_records, metadata="flat")
    collection = _collection(tmp_path, "filters")
    collection.add(
        ids=[d.id or "" for d in documents],
        embeddings=[_embed(d.page_content) for d in documents],
        metadatas=[d.metadata for d in documents],
        documents=[d.page_content for d in documents],
    )
    pdf = "pdf/three-page-en.pdf"
    second_page = collection.get(where={"$and": [{"source_uri": pdf}, {"page": 2}]})
    assert sorted(second_page["ids"]) == sorted(
        r.chunk_id
        for r in pipeline_records
        if r.source_uri == pdf
        and isinstance(r.source_spans[0], PageSpan)
        and r.source_spans[0].page == 2
    )
    assert second_page["ids"]
    guide = "guides/installation.md"
    early = collection.get(where={"$and": [{"source_uri": guide}, {"line_start": {"$lte": 10}}]})
    assert sorted(early["ids"]) == sorted(
        r.chunk_id
        for r in pipeline_records
        if r.source_uri == guide and flat_metadata(r)["line_start"] <= 10  # type: ignore[operator]
    )
    assert early["ids"]
    hit = collection.query(query_embeddings=[_embed(documents[3].page_content)], n_results=1)
    assert hit["ids"] == [[documents[3].id]]
