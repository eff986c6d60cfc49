"""The vector stores ``sync`` writes to, and :func:`open_store` for a store's location.

A location is ``postgresql://...`` (PostgreSQL with pgvector,
:mod:`kebab_chunk.sync.stores.pgvector`) or a local folder, optionally written
``lancedb:FOLDER`` (LanceDB, :mod:`kebab_chunk.sync.stores.lance`), or ``chroma:FOLDER``
(Chroma, :mod:`kebab_chunk.sync.stores.chroma`). Any other store is an
object implementing :class:`kebab_chunk.sync.store.VectorStore` (docs/guide/sync.md says how).
"""

from __future__ import annotations

from kebab_chunk.errors import UsageError
from kebab_chunk.sync.store import VectorStore

__all__ = ["open_store"]

_POSTGRES = ("postgresql://", "postgres://")


def open_store(location: str, table: str = "kebab_chunks") -> VectorStore:
    """The store at ``location`` (see the module doc), its chunks in ``table``."""
    if not location.strip():
        raise UsageError("the store location is empty; give a folder or a postgresql:// URL.")
    if location.startswith(_POSTGRES):
        from kebab_chunk.sync.stores.pgvector import PgVectorStore

        store: VectorStore = PgVectorStore(location, table=table)
        return store
    scheme, sep, rest = location.partition(":")
    if scheme == "chroma" and sep:
        from kebab_chunk.sync.stores.chroma import ChromaStore

        return ChromaStore(rest, table=table)
    if sep and len(scheme) > 1 and scheme != "lancedb":  # c:\ and relative folders pass
        raise UsageError(
            f"unknown store {scheme!r} in {location!r}; use a folder (LanceDB), "
            "lancedb:FOLDER, chroma:FOLDER or a postgresql:// URL."
        )
    from kebab_chunk.sync.stores.lance import LanceStore

    return LanceStore(rest if scheme == "lancedb" else location, table=table)
