"""Chunk records → LlamaIndex TextNodes, tested with the real llama-index-core (dev extra)."""

from __future__ import annotations

import sys

import pytest
from llama_index.core import schema

from kebab_chunk.chunkers.embedding import embed_text
from kebab_chunk.integrations.llamaindex import (
    chunk_from_llama_index_node,
    to_llama_index_node,
    to_llama_index_nodes,
)
from kebab_chunk.model import Chunk


def test_missing_llama_index_gives_an_install_hint(
    records: list[Chunk], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "llama_index.core.schema", None)
    with pytest.raises(ImportError, match=r"pip install llama-index-core"):
        to_llama_index_node(records[0])


def test_nodes_carry_ids_source_and_offsets(records: list[Chunk]) -> None:
    nodes = to_llama_index_nodes(records)
    assert all(isinstance(n, schema.TextNode) for n in nodes)
    assert [n.id_ for n in nodes] == [r.chunk_id for r in records]
    for node, record in zip(nodes, records, strict=True):
        assert node.text == record.text
        assert node.ref_doc_id == record.doc_id
        assert node.start_char_idx == record.source_spans[0].char_start
        assert node.end_char_idx == record.source_spans[-1].char_end
        assert node.metadata["chunk_id"] == record.chunk_id
        # Ids and hashes stay out of what gets embedded.
        embedded = node.get_content(metadata_mode=schema.MetadataMode.EMBED)
        assert embedded == record.text


def test_round_trip_gives_the_same_records(records: list[Chunk]) -> None:
    for contextualized in (False, True):
        nodes = to_llama_index_nodes(records, contextualized=contextualized)
        restored = [schema.TextNode.from_json(n.to_json()) for n in nodes]
        assert [chunk_from_llama_index_node(n) for n in restored] == records


def test_contextualized_text(records: list[Chunk]) -> None:
    record = next(r for r in records if len(r.heading_path) == 2)
    assert to_llama_index_node(record, contextualized=True).text == embed_text(record)
