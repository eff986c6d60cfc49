"""What a vector store must do for ``kebab-chunk sync`` (docs/guide/sync.md).

A store holds one row per chunk id: the vector, the text that was embedded (the record's
``embed_text``), the record's metadata in the store's own convention (flat scalars where
the store requires them, a JSON document where it has one), and the two digests of the
documents table's ``chunk_index`` (docs/internals/contract.md): ``content_digest`` (a change means
embed again) and ``record_digest`` (a change means update the metadata). The sync plans
from the digests alone, so it converges from whatever the store holds: a missed night, a
re-run, a rollback to an older snapshot or a store filled by hand all end equal to the
output. The sync state (which output, snapshot, labels and embedder the store last took)
is provenance and a shortcut, never the source of truth.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["StoreRow", "StoredRow", "SyncState", "VectorStore"]


@dataclass(frozen=True)
class SyncState:
    """What the store last took: written as the last step of a sync that finished."""

    output: str  # the output's location, as given to sync (normalised)
    snapshot: int  # the output's snapshot number (1 for an output never updated)
    labels: tuple[str, ...]  # the labels synced, sorted ("" entries never)
    embedder: str  # the embedder id the vectors came from


@dataclass(frozen=True)
class StoreRow:
    """One chunk to write. ``vector`` is None for a metadata-only update."""

    chunk_id: str
    label: str
    content_digest: str
    record_digest: str
    text: str  # the record's embed_text: what the vector embeds
    record: Mapping[str, Any]  # the chunk record (Chunk.model_dump(mode="json")), for metadata
    vector: Sequence[float] | None = None


@dataclass(frozen=True)
class StoredRow:
    """One row as a store reads it back (what tests compare with the output)."""

    chunk_id: str
    label: str
    content_digest: str
    record_digest: str
    text: str
    metadata: Mapping[str, Any]
    vector: tuple[float, ...]


@runtime_checkable
class VectorStore(Protocol):
    """A vector store ``sync`` can write to. Every method is idempotent.

    ``open`` first (creates the table if it is missing, refuses one whose vectors have
    another dimension or embedder, in one sentence: ``kebab_chunk.errors.UsageError``);
    then ``state``/``digests`` to plan, ``delete``/``upsert``/``update_metadata`` to
    write, and ``set_state`` last.
    """

    #: Short name for messages and the CLI (``lancedb``, ``pgvector``, ``chroma``).
    kind: str

    def open(self, dimensions: int, embedder: str) -> None: ...

    def state(self) -> SyncState | None: ...

    def digests(self) -> dict[str, tuple[str, str]]:
        """chunk_id -> (content_digest, record_digest) of every row the store holds."""
        ...

    def upsert(self, rows: Sequence[StoreRow]) -> None:
        """Insert or replace rows by chunk_id; every row has a vector."""
        ...

    def update_metadata(self, rows: Sequence[StoreRow]) -> None:
        """Replace metadata, text and digests of existing rows, keeping their vectors."""
        ...

    def delete(self, chunk_ids: Sequence[str]) -> None: ...

    def set_state(self, state: SyncState) -> None: ...

    def rows(self) -> list[StoredRow]:
        """Every row, sorted by chunk_id (for checks and small stores; reads everything)."""
        ...

    def close(self) -> None: ...
