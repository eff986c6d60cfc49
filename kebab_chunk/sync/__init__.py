"""Keep a vector store equal to an output's chunks (docs/guide/sync.md).

:func:`sync` embeds each new text once (an :class:`EmbeddingCache` keyed by embedder and
text), upserts added chunks by ``chunk_id``, deletes removed ones and updates the metadata
of relocated ones without embedding again. Stores: LanceDB in a local folder (the
default) and PostgreSQL + pgvector; any object implementing :class:`VectorStore`.
"""

from kebab_chunk.sync.cache import EmbeddingCache
from kebab_chunk.sync.embedders import Embedder, callable_embedder, model_embedder
from kebab_chunk.sync.engine import SyncReport, sync
from kebab_chunk.sync.store import StoredRow, StoreRow, SyncState, VectorStore
from kebab_chunk.sync.stores import open_store

__all__ = [
    "Embedder",
    "EmbeddingCache",
    "StoreRow",
    "StoredRow",
    "SyncReport",
    "SyncState",
    "VectorStore",
    "callable_embedder",
    "model_embedder",
    "open_store",
    "sync",
]
