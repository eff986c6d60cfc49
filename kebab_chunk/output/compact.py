"""Rewrite one snapshot's live rows as a full run lays them out: ``compact`` and ``export``.

An update (kebab_chunk/beam/update.py) leaves each changed document's old rows in place
behind a delete file and adds small files; reads then skip deleted rows and open more
files. Both commands below rewrite the live rows of one snapshot with the writers' own
recipes (kebab_chunk/output/layout.py: ``n = ceil(rows / rows per file)`` part files per
table, chunk rows by ``chunk_id`` and documents rows by ``doc_id``, each file sorted as a
full run sorts it), so the files hold the bytes a full run over the same corpus writes:

* :func:`compact_output` commits them as the next snapshot of the same output (names
  ``s<n>-part-*``, no delete file, an empty change feed: no record changed). Expiring
  older snapshots afterwards frees their files.
* :func:`export_output` writes them to a new directory as a plain output (names
  ``part-*``, its own ``manifest.json``), which any tool reads by globbing the folders:
  Spark, BigQuery, Trino or DuckDB without kebab-chunk.

One table at a time is held in memory (a label's chunk rows as Arrow data).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from kebab_chunk.errors import OutputDirError
from kebab_chunk.output.changes import CHANGES_DIR, changes_table
from kebab_chunk.output.digest import DigestSink
from kebab_chunk.output.finished import normalise_path, open_output
from kebab_chunk.output.layout import (
    CHUNK_ROWS_PER_FILE,
    CHUNKS_DIR,
    DOCUMENT_ROWS_PER_FILE,
    DOCUMENTS_DIR,
    ERRORS_DIR,
    MANIFEST_NAME,
    chunk_shard,
    document_shard,
    part_name,
    shard_count,
)
from kebab_chunk.output.reader import read_chunks, read_documents, read_errors
from kebab_chunk.output.schema import (
    PARTITION_COLUMN,
    chunks_table,
    documents_table,
    errors_table,
    row_to_chunk,
    row_to_document,
    row_to_error,
    write_parquet,
)
from kebab_chunk.output.snapshots import commit_snapshot, snapshot_ids, snapshot_of, snapshot_prefix

__all__ = ["compact_output", "export_output"]


def _filesystem(path: str) -> tuple[pafs.FileSystem, str]:
    if "://" in path:
        fs, inner = pafs.FileSystem.from_uri(path)
        return fs, str(inner)
    return pafs.LocalFileSystem(), path


def _write(root: str, relative: str, table: pa.Table) -> dict[str, Any]:
    fs, inner = _filesystem(root)
    fs.create_dir(f"{inner}/{relative.rsplit('/', 1)[0]}", recursive=True)
    with fs.open_output_stream(f"{inner}/{relative}") as f:
        sink = DigestSink(f)
        write_parquet(table, sink)
    return {"path": relative, "rows": table.num_rows, "bytes": sink.size, "blake3": sink.digest}


def _shards(keys: pa.Array, count: int, recipe: Any) -> list[pa.Array]:
    """Row indices of each shard (by the writers' recipe on ``keys``), in key order."""
    order = pc.sort_indices(keys)
    shard = [recipe(str(k), count) for k in pc.take(keys, order).to_pylist()]
    groups: list[list[int]] = [[] for _ in range(count)]
    for i, s in zip(order.to_pylist(), shard, strict=True):
        groups[s].append(i)
    return [pa.array(g, pa.int64()) for g in groups]


def rewrite_tables(
    source: str, manifest: Mapping[str, Any], dest: str, prefix: str
) -> dict[str, list[dict[str, Any]]]:
    """Write the live rows of ``manifest``'s snapshot of ``source`` under ``dest`` as a full
    run writes them (file names start with ``prefix``); returns the ``outputs`` listing."""
    outputs: dict[str, list[dict[str, Any]]] = {CHUNKS_DIR: [], DOCUMENTS_DIR: [], ERRORS_DIR: []}
    chunks = read_chunks(source, manifest=manifest)
    for label in sorted(manifest["chunkers"]["labels"]):
        rows = chunks.filter(pc.field(PARTITION_COLUMN) == label)
        count = shard_count(rows.num_rows, CHUNK_ROWS_PER_FILE)
        for i, take in enumerate(
            _shards(rows.column("chunk_id").combine_chunks(), count, chunk_shard)
        ):
            part = [row_to_chunk(r) for r in rows.take(take).to_pylist()]
            relative = f"{CHUNKS_DIR}/{PARTITION_COLUMN}={label}/{prefix}{part_name(i, count)}"
            outputs[CHUNKS_DIR].append(_write(dest, relative, chunks_table(part)))
        del rows
    del chunks
    documents = read_documents(source, manifest=manifest)
    count = shard_count(documents.num_rows, DOCUMENT_ROWS_PER_FILE)
    uris = documents.column("source_uri").combine_chunks()
    for i, take in enumerate(_shards(uris, count, document_shard)):
        document_rows = [row_to_document(r) for r in documents.take(take).to_pylist()]
        relative = f"{DOCUMENTS_DIR}/{prefix}{part_name(i, count)}"
        outputs[DOCUMENTS_DIR].append(_write(dest, relative, documents_table(document_rows)))
    errors = [row_to_error(r) for r in read_errors(source, manifest).to_pylist()]
    relative = f"{ERRORS_DIR}/{prefix}{part_name(0, 1)}"
    outputs[ERRORS_DIR].append(_write(dest, relative, errors_table(errors)))
    return outputs


def compact_output(output: str) -> int:
    """Commit the latest snapshot's live rows, rewritten, as the next snapshot; returns its
    number. The caller holds the output's claim (kebab_chunk/beam/claim.py)."""
    path, manifest = open_output(output, "OUTPUT")
    n = snapshot_of(manifest) + 1
    if not snapshot_ids(path):  # a plain output: keep it readable as snapshot 1
        commit_snapshot(path, {**manifest, "snapshot": _section(1, None, None)})
    prefix = snapshot_prefix(n)
    outputs = rewrite_tables(path, manifest, path, prefix)
    for entries in outputs.values():
        for entry in entries:
            entry["snapshot"] = n
    feed = _write(path, f"{CHANGES_DIR}/s{n:08d}.parquet", changes_table([]))
    compacted = {
        **manifest,
        "outputs": outputs,
        "snapshot": _section(n, snapshot_of(manifest), {**feed, "snapshot": n, "complete": True}),
    }
    commit_snapshot(path, compacted)
    _write_manifest(path, compacted)
    return n


def export_output(output: str, dest: str, snapshot: int | None = None) -> str:
    """Write ``output``'s snapshot (latest by default) to the new directory ``dest`` as a
    plain output; returns ``dest`` normalised. ``dest`` must not exist or be empty."""
    path, manifest = open_output(output, "OUTPUT", snapshot=snapshot)
    target = normalise_path(dest)
    fs, inner = _filesystem(target)
    info = fs.get_file_info(inner)
    if info.type == pafs.FileType.File or (
        info.type == pafs.FileType.Directory
        and fs.get_file_info(pafs.FileSelector(inner, allow_not_found=True))
    ):
        raise OutputDirError(
            f"DEST {dest!r} exists and is not an empty directory; give a new directory to "
            "export into."
        )
    outputs = rewrite_tables(path, manifest, target, "")
    plain = {k: v for k, v in manifest.items() if k not in ("snapshot", "incremental")}
    plain["outputs"] = outputs
    plain["exported_from"] = {"output": path, "snapshot": snapshot_of(manifest)}
    _write_manifest(target, plain)
    return target


def _section(n: int, parent: int | None, changes: Any) -> dict[str, Any]:
    return {"id": n, "parent": parent, "deletes": [], "changes": changes}


def _write_manifest(root: str, manifest: Mapping[str, Any]) -> None:
    """``manifest.json``, whole or not at all (a temporary name, then a rename)."""
    import json

    fs, inner = _filesystem(root)
    data = (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode()
    temp = f"{inner}/_tmp-{os.getpid()}-{MANIFEST_NAME}"
    with fs.open_output_stream(temp) as f:
        f.write(data)
    fs.move(temp, f"{inner}/{MANIFEST_NAME}")
