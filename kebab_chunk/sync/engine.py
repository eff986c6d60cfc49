"""``sync``: bring a vector store to exactly the chunks of an output (docs/guide/sync.md).

Reads the documents table's chunk index (never every chunk record), asks the store for its
digests, plans (kebab_chunk/sync/plan.py), then reads only the chunk records it must
write, embeds the texts neither the cache nor the store has, and writes: delete, upsert,
metadata updates, and the sync state last. A sync that stops half-way leaves a store the
next sync completes, because the plan compares digests, not the state.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow.compute as pc

from kebab_chunk.errors import OutputDirError, UsageError
from kebab_chunk.output import reader
from kebab_chunk.output.chunk_index import entry_of_chunk
from kebab_chunk.output.finished import open_output
from kebab_chunk.output.records import DocumentRow
from kebab_chunk.output.schema import row_to_chunk, row_to_document
from kebab_chunk.output.snapshots import snapshot_of
from kebab_chunk.sync.cache import EmbeddingCache, default_cache_path, text_key
from kebab_chunk.sync.embedders import Embedder, resolve_embedder
from kebab_chunk.sync.plan import Plan, Wanted, plan, select
from kebab_chunk.sync.store import StoreRow, SyncState, VectorStore
from kebab_chunk.sync.stores import open_store

__all__ = ["SyncReport", "sync"]

#: Rows per store write (one transaction or one Lance commit each).
WRITE_BATCH = 1000


@dataclass(frozen=True)
class SyncReport:
    """What one sync did; ``embedded`` counts texts sent to the embedder."""

    output: str
    snapshot: int
    labels: tuple[str, ...]
    store: str
    embedder: str
    chunks: int  # chunks of the output the store must hold
    embedded: int
    cached: int  # vectors taken from the cache instead of the embedder
    upserted: int
    metadata_updated: int
    deleted: int
    unchanged: int

    @property
    def wrote(self) -> bool:
        return bool(self.upserted or self.metadata_updated or self.deleted)


def _documents(root: str, manifest: dict[str, Any]) -> list[DocumentRow]:
    """The documents rows, with the chunk index rebuilt from the chunk records for an
    output written before the documents table had one."""
    docs = [row_to_document(r) for r in reader.read_documents(root, manifest=manifest).to_pylist()]
    if not any(d.chunks_by_label and not d.chunk_index for d in docs):
        return docs
    by_uri: dict[str, list[Any]] = {}
    for row in reader.read_chunks(root, manifest=manifest).to_pylist():
        by_uri.setdefault(row["source_uri"], []).append(entry_of_chunk(row_to_chunk(row)))
    return [
        dataclasses.replace(d, chunk_index=tuple(sorted(by_uri.get(d.source_uri, ()))))
        if not d.chunk_index
        else d
        for d in docs
    ]


def _records(root: str, manifest: dict[str, Any], ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The chunk records of ``ids`` in their JSON form, by chunk_id."""
    if not ids:
        return {}
    table = reader.read_chunks(root, manifest=manifest, rows=pc.field("chunk_id").isin(ids))
    records = {
        row["chunk_id"]: row_to_chunk(row).model_dump(mode="json") for row in table.to_pylist()
    }
    if len(records) != len(set(ids)):
        raise OutputDirError(
            f"{root!r} lists chunks in its documents table that its chunks table lacks; the "
            "output is damaged, so run the job again."
        )
    return records


def _batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _embed(
    texts: dict[str, str], embedder: Embedder, cache: EmbeddingCache, batch_size: int,
    progress: bool,
) -> tuple[dict[str, tuple[float, ...]], int, int]:
    """(vector by text key, texts embedded, vectors cached) for ``texts`` (key -> text)."""
    found = cache.get_many(embedder.id, list(texts))
    missing = sorted(k for k in texts if k not in found)
    bar: Any = None
    if progress and missing:
        from tqdm import tqdm  # type: ignore[import-untyped]

        bar = tqdm(total=len(missing), desc="embedding", unit="chunk")
    for keys in _batches(missing, batch_size):
        vectors = embedder.embed([texts[k] for k in keys])
        made = {k: tuple(float(x) for x in v) for k, v in zip(keys, vectors, strict=False)}
        if len(made) != len(keys) or any(len(v) != embedder.dimensions for v in made.values()):
            raise UsageError(
                f"embedder {embedder.id} returned vectors of the wrong number or size for "
                f"{len(keys)} texts (expected {embedder.dimensions} floats each); fix the "
                "embedder or its dimensions."
            )
        cache.put_many(embedder.id, made)
        found.update(made)
        if bar is not None:
            bar.update(len(keys))
    if bar is not None:
        bar.close()
    return found, len(missing), len(texts) - len(missing)


def _cache(cache: EmbeddingCache | str | os.PathLike[str] | None) -> tuple[EmbeddingCache, bool]:
    if isinstance(cache, EmbeddingCache):
        return cache, False
    return EmbeddingCache(default_cache_path() if cache is None else cache), True


def sync(
    output: str | os.PathLike[str],
    store: VectorStore | str,
    *,
    labels: Sequence[str] | None = None,
    embedder: Embedder | str | os.PathLike[str] | None = None,
    cache: EmbeddingCache | str | os.PathLike[str] | None = None,
    snapshot: int | None = None,
    batch_size: int = 64,
    progress: bool = False,
) -> SyncReport:
    """Make ``store`` hold exactly the chunks of ``output`` (its latest snapshot, or
    ``snapshot``), embedded by ``embedder`` (default: the packaged all-MiniLM-L6-v2).

    ``store``: a :class:`~kebab_chunk.sync.store.VectorStore` or a location
    (:func:`kebab_chunk.sync.stores.open_store`); ``labels``: the labels to sync (default:
    the output's only label, else each document's default label); ``cache``: an
    :class:`EmbeddingCache`, or its file (default: the user's cache).
    """
    if batch_size < 1:
        raise UsageError(f"batch_size must be at least 1, got {batch_size}.")
    root, manifest = open_output(os.fspath(output), "OUTPUT", snapshot=snapshot)
    synced, wanted = select(
        _documents(root, manifest), manifest["chunkers"]["labels"], labels, repr(root)
    )
    model = resolve_embedder(embedder)
    target, own_store = (open_store(store), True) if isinstance(store, str) else (store, False)
    vectors, own_cache = _cache(cache)
    try:
        target.open(model.dimensions, model.id)
        state = SyncState(root, snapshot_of(manifest), synced, model.id)
        todo = plan(wanted, target.digests())
        report = _apply(
            root, manifest, todo, wanted, target, model, vectors, batch_size, progress
        )
        if report.wrote or target.state() != state:
            target.set_state(state)
    finally:
        if own_cache:
            vectors.close()
        if own_store:
            target.close()
    return dataclasses.replace(
        report, output=root, snapshot=state.snapshot, labels=synced, store=target.kind,
        embedder=model.id, chunks=len(wanted),
    )


def _apply(
    root: str, manifest: dict[str, Any], todo: Plan, wanted: Mapping[str, Wanted],
    store: VectorStore, model: Embedder, cache: EmbeddingCache, batch_size: int,
    progress: bool,
) -> SyncReport:
    records = _records(root, manifest, [*todo.embed, *todo.metadata])

    def row(chunk_id: str, vector: Sequence[float] | None) -> StoreRow:
        record, want = records[chunk_id], wanted[chunk_id]
        return StoreRow(
            chunk_id, want.label, want.content_digest, want.record_digest,
            record["embed_text"], record, vector,
        )

    texts = {text_key(records[i]["embed_text"]): records[i]["embed_text"] for i in todo.embed}
    found, embedded, cached = _embed(texts, model, cache, batch_size, progress)
    if todo.delete:
        for ids in _batches(todo.delete, WRITE_BATCH):
            store.delete(list(ids))
    for ids in _batches(todo.embed, WRITE_BATCH):
        store.upsert([row(i, found[text_key(records[i]["embed_text"])]) for i in ids])
    for ids in _batches(todo.metadata, WRITE_BATCH):
        store.update_metadata([row(i, None) for i in ids])
    return SyncReport(
        output=root, snapshot=0, labels=(), store=store.kind, embedder=model.id, chunks=0,
        embedded=embedded, cached=cached, upserted=len(todo.embed),
        metadata_updated=len(todo.metadata), deleted=len(todo.delete),
        unchanged=todo.unchanged,
    )
