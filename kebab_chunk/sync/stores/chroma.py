"""Chroma in a local folder (``chroma:FOLDER``): a second embedded store.

One collection per table; the record's flat metadata (kebab_chunk.integrations._common,
``FLAT_KEYS``: Chroma takes scalars only) plus ``kebab_label``, ``kebab_content_digest``
and ``kebab_record_digest``; the embedded text is the Chroma document. The embedder id,
the dimension and the sync state are collection metadata. Chroma is not a dependency of
the ``sync`` extra (its package pulls in onnxruntime and a gRPC stack): install
``chromadb`` to use it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import Any

from kebab_chunk.errors import MissingDependencyError, UsageError
from kebab_chunk.integrations._common import as_record, flat_metadata
from kebab_chunk.sync.store import StoredRow, StoreRow, SyncState

__all__ = ["ChromaStore"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{1,61}[A-Za-z0-9]$")
_LABEL, _CONTENT, _RECORD = "kebab_label", "kebab_content_digest", "kebab_record_digest"
_EMBEDDER, _DIMENSIONS, _STATE = "kebab_embedder", "kebab_dimensions", "kebab_sync_state"
_PAGE = 5000  # ids per get(): Chroma's SQLite layer limits the size of one query


class ChromaStore:
    """Chunks in the Chroma collection ``table`` of the folder ``path``."""

    kind = "chroma"

    def __init__(self, path: str | os.PathLike[str], table: str = "kebab_chunks") -> None:
        if not _NAME.match(table):
            raise UsageError(
                f"store table name {table!r} is not a valid Chroma collection name; use 3 to "
                "63 letters, digits, underscores or hyphens, starting and ending with a "
                "letter or digit."
            )
        try:
            import chromadb
            from chromadb.config import Settings
        except ImportError as exc:
            raise MissingDependencyError(
                "the Chroma store needs chromadb; install it with pip install chromadb."
            ) from exc
        self.path = os.fspath(path)
        self.table_name = table
        self._client = chromadb.PersistentClient(
            path=self.path, settings=Settings(anonymized_telemetry=False)
        )
        self._collection: Any = None

    def open(self, dimensions: int, embedder: str) -> None:
        names = {c if isinstance(c, str) else c.name for c in self._client.list_collections()}
        if self.table_name not in names:
            # No embedding function: Chroma's default would download a model to embed the
            # documents of update() itself; vectors only ever come from the sync.
            self._collection = self._client.create_collection(
                self.table_name,
                embedding_function=None,
                metadata={_EMBEDDER: embedder, _DIMENSIONS: dimensions, "hnsw:space": "cosine"},
            )
            return
        self._collection = self._client.get_collection(self.table_name, embedding_function=None)
        meta = self._collection.metadata or {}
        if meta.get(_EMBEDDER) != embedder or meta.get(_DIMENSIONS) != dimensions:
            raise UsageError(
                f"the store collection {self.table_name!r} in {self.path} holds "
                f"{meta.get(_DIMENSIONS, '?')}-float vectors of "
                f"{meta.get(_EMBEDDER) or 'an unknown embedder'}, not {dimensions}-float "
                f"vectors of {embedder}; sync into another table or use that embedder."
            )

    def _opened(self) -> Any:
        if self._collection is None:
            raise UsageError("the store is not open; call open(dimensions, embedder) first.")
        return self._collection

    def state(self) -> SyncState | None:
        self._opened()
        # Another handle may have written it: read the collection again.
        fresh = self._client.get_collection(self.table_name, embedding_function=None)
        raw = (fresh.metadata or {}).get(_STATE)
        if not raw:
            return None
        value = json.loads(raw)
        return SyncState(
            value["output"], int(value["snapshot"]), tuple(value["labels"]), value["embedder"]
        )

    def set_state(self, state: SyncState) -> None:
        collection = self._opened()
        meta = {k: v for k, v in (collection.metadata or {}).items() if not k.startswith("hnsw:")}
        meta[_STATE] = json.dumps(
            {"output": state.output, "snapshot": state.snapshot, "labels": list(state.labels),
             "embedder": state.embedder},
            sort_keys=True,
        )
        collection.modify(metadata=meta)

    def _get(self, include: list[str]) -> list[dict[str, Any]]:
        collection, rows, offset = self._opened(), [], 0
        while True:
            page = collection.get(include=include, limit=_PAGE, offset=offset)
            ids = page["ids"]
            for i, chunk_id in enumerate(ids):
                rows.append({"id": chunk_id, **{k: page[k][i] for k in include}})
            if len(ids) < _PAGE:
                return rows
            offset += _PAGE

    def digests(self) -> dict[str, tuple[str, str]]:
        return {
            r["id"]: (r["metadatas"][_CONTENT], r["metadatas"][_RECORD])
            for r in self._get(["metadatas"])
        }

    @staticmethod
    def _metadata(row: StoreRow) -> dict[str, Any]:
        return {
            **flat_metadata(as_record(row.record)),
            _LABEL: row.label,
            _CONTENT: row.content_digest,
            _RECORD: row.record_digest,
        }

    def upsert(self, rows: Sequence[StoreRow]) -> None:
        if rows:
            if any(r.vector is None for r in rows):
                raise ValueError("upsert needs a vector for every row")
            self._opened().upsert(
                ids=[r.chunk_id for r in rows],
                embeddings=[list(r.vector or ()) for r in rows],
                documents=[r.text for r in rows],
                metadatas=[self._metadata(r) for r in rows],
            )

    def update_metadata(self, rows: Sequence[StoreRow]) -> None:
        if rows:
            # No documents: same content means the same text, and Chroma embeds documents
            # given without vectors with its own model (a download).
            self._opened().update(
                ids=[r.chunk_id for r in rows], metadatas=[self._metadata(r) for r in rows]
            )

    def delete(self, chunk_ids: Sequence[str]) -> None:
        if chunk_ids:
            self._opened().delete(ids=list(chunk_ids))

    def rows(self) -> list[StoredRow]:
        out = []
        for r in sorted(self._get(["metadatas", "documents", "embeddings"]), key=lambda r: r["id"]):
            meta = dict(r["metadatas"])
            label, content, record = meta.pop(_LABEL), meta.pop(_CONTENT), meta.pop(_RECORD)
            out.append(
                StoredRow(
                    r["id"], label, content, record, r["documents"], meta,
                    tuple(float(x) for x in r["embeddings"]),
                )
            )
        return out

    def close(self) -> None:
        self._collection = None
