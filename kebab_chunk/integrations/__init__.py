"""Adapters from our chunk records into other RAG toolkits (optional extras).

Each adapter keeps ``chunk_id`` as the target's id, so re-ingesting a corpus upserts the
same rows instead of duplicating them, and carries every other record field (spans,
heading path, versions, hashes) as JSON metadata, so a hit can still be cited exactly.

- :mod:`kebab_chunk.integrations.langchain`: ``langchain_core.documents.Document``
  (``pip install langchain-core``);
- :mod:`kebab_chunk.integrations.beam_rag`: ``apache_beam.ml.rag.types.Chunk`` and the
  ``ToBeamRagChunks`` transform for use after the pipeline's chunking step (Beam is a core
  dependency);
- :mod:`kebab_chunk.integrations.llamaindex`: ``llama_index.core.schema.TextNode``
  (``pip install llama-index-core``).

The third-party packages are imported only when an adapter is called; a missing one gives
an ``ImportError`` that says what to install.
"""

from kebab_chunk.integrations._common import (
    contextualize,
    record_from_metadata,
    record_metadata,
)

__all__ = ["contextualize", "record_from_metadata", "record_metadata"]
