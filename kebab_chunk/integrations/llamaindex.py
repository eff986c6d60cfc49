"""Chunk records → LlamaIndex ``TextNode`` (``pip install kebab-chunk[llamaindex]``).

``TextNode.id_`` is the ``chunk_id`` and the node's SOURCE relationship points at the
``doc_id``, so LlamaIndex's per-document deletes and upserts line up with ours. The
records can be given in any form the pipeline's output is read back in (``Chunk``
objects, dicts, pyarrow rows, a pandas ``DataFrame`` from ``pd.read_parquet(OUT /
"chunks")``, a ``pyarrow.Table``; see :mod:`kebab_chunk.integrations._common`).

``metadata=`` picks the metadata form: ``"full"`` (default) holds every record field
except ``text`` as JSON values, so :func:`chunk_from_llama_index_node` rebuilds the
record; ``"flat"`` holds scalars only (``str``/``int``: the scalar fields, ``heading_path``
and ``captions`` joined with ``"\\n"``, ``page``/``page_end``, ``line_start``/``line_end``,
``char_start``/``char_end`` with ``0`` for what a chunk lacks, ``span_kind``,
``span_count``, ``span_ref``), for vector stores that reject lists, dicts or ``None``.
Either way all of it is excluded from what LlamaIndex embeds and shows the LLM (ids and
hashes are noise there; use ``contextualized=True`` to embed the heading path and captions
with the text). For line-located chunks, ``start_char_idx``/``end_char_idx`` are the
source offsets of the first and last span.

:class:`KebabNodeParser` (a LlamaIndex ``NodeParser``, in
:mod:`kebab_chunk.integrations.llamaindex_parser`) chunks LlamaIndex documents with any
registered label and returns such nodes.

LlamaIndex is imported only when an adapter is called.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from kebab_chunk.integrations._common import (
    MetadataMode,
    adapter_metadata,
    adapter_text,
    as_record,
    convert_all,
    lazy_export,
    record_from_content,
    require,
)
from kebab_chunk.model import Chunk, LineSpan

if TYPE_CHECKING:
    from kebab_chunk.integrations.llamaindex_parser import KebabNodeParser

__all__ = [
    "KebabNodeParser",
    "chunk_from_llama_index_node",
    "to_llama_index_node",
    "to_llama_index_nodes",
]


def to_llama_index_node(
    chunk: Chunk | Mapping[str, Any],
    *,
    contextualized: bool = False,
    metadata: MetadataMode = "full",
) -> Any:
    """One record (in any accepted form) as a ``llama_index.core.schema.TextNode``."""
    schema = require("llama_index.core.schema", "llama-index-core", "llamaindex")
    record = as_record(chunk)
    values = adapter_metadata(record, contextualized=contextualized, metadata=metadata)
    hidden = sorted(values)
    offsets: dict[str, int] = {}
    spans = record.source_spans
    if all(isinstance(span, LineSpan) for span in spans):
        offsets = {"start_char_idx": spans[0].char_start, "end_char_idx": spans[-1].char_end}
    return schema.TextNode(
        id_=record.chunk_id,
        text=adapter_text(record, contextualized=contextualized),
        metadata=values,
        excluded_embed_metadata_keys=hidden,
        excluded_llm_metadata_keys=hidden,
        relationships={
            schema.NodeRelationship.SOURCE: schema.RelatedNodeInfo(node_id=record.doc_id)
        },
        **offsets,
    )


def to_llama_index_nodes(
    chunks: Iterable[Chunk | Mapping[str, Any]] | Any,
    *,
    contextualized: bool = False,
    metadata: MetadataMode = "full",
) -> list[Any]:
    """Records as ``TextNode`` objects, in the given order.

    ``chunks`` is a list of records or rows, a pandas ``DataFrame`` or a pyarrow
    ``Table``/``RecordBatch``/dataset (module doc).
    """
    one = to_llama_index_node
    return convert_all(one, chunks, contextualized=contextualized, metadata=metadata)


def chunk_from_llama_index_node(node: Any) -> Chunk:
    """The record a node made with full metadata came from.

    A flat-metadata node gives a one-sentence ``ValueError``: look its ``chunk_id`` up in
    the records instead.
    """
    return record_from_content(node.metadata, node.text)


__getattr__ = lazy_export(__name__, "KebabNodeParser", "kebab_chunk.integrations.llamaindex_parser")
