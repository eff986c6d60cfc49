"""Chunk records → LlamaIndex ``TextNode`` (``pip install llama-index-core``).

``TextNode.id_`` is the ``chunk_id`` and the node's SOURCE relationship points at the
``doc_id``, so LlamaIndex's per-document deletes and upserts line up with ours.
``metadata`` holds every other record field as JSON values; all of it is excluded from
what LlamaIndex embeds and shows the LLM (ids and hashes are noise there; use
``contextualized=True`` to embed the heading path and captions with the text). For
line-located chunks, ``start_char_idx``/``end_char_idx`` are the source offsets of the
first and last span.

LlamaIndex is imported only when :func:`to_llama_index_node` is called.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kebab_chunk.integrations._common import (
    CONTENT_KIND_KEY,
    as_record,
    contextualize,
    record_from_metadata,
    record_metadata,
    require,
    strip_context,
)
from kebab_chunk.model import Chunk, LineSpan

__all__ = ["chunk_from_llama_index_node", "to_llama_index_node", "to_llama_index_nodes"]


def to_llama_index_node(chunk: Chunk | Mapping[str, Any], *, contextualized: bool = False) -> Any:
    """One record as a ``llama_index.core.schema.TextNode``."""
    schema = require("llama_index.core.schema", "llama-index-core", "llamaindex")
    record = as_record(chunk)
    metadata = record_metadata(record)
    metadata[CONTENT_KIND_KEY] = "contextualized" if contextualized else "text"
    hidden = sorted(metadata)
    offsets: dict[str, int] = {}
    spans = record.source_spans
    if all(isinstance(span, LineSpan) for span in spans):
        offsets = {"start_char_idx": spans[0].char_start, "end_char_idx": spans[-1].char_end}
    return schema.TextNode(
        id_=record.chunk_id,
        text=contextualize(record) if contextualized else record.text,
        metadata=metadata,
        excluded_embed_metadata_keys=hidden,
        excluded_llm_metadata_keys=hidden,
        relationships={
            schema.NodeRelationship.SOURCE: schema.RelatedNodeInfo(node_id=record.doc_id)
        },
        **offsets,
    )


def to_llama_index_nodes(
    chunks: Iterable[Chunk | Mapping[str, Any]], *, contextualized: bool = False
) -> list[Any]:
    """Records as ``TextNode`` objects, in the given order."""
    return [to_llama_index_node(chunk, contextualized=contextualized) for chunk in chunks]


def chunk_from_llama_index_node(node: Any) -> Chunk:
    """The record a node made by :func:`to_llama_index_node` came from."""
    metadata: dict[str, Any] = node.metadata
    text: str = node.text
    if metadata.get(CONTENT_KIND_KEY) == "contextualized":
        text = strip_context(metadata, text)
    return record_from_metadata(metadata, text)
