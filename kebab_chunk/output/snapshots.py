"""Snapshots of an output: a versioned list of live files, merge-on-read document deletes.

An output that has been updated (``kebab-chunk run --update``) holds several snapshots
(docs/internals/contract.md, "Snapshots"; the format was chosen by measurement,
docs/internals/decisions.md, "Issue 30: table format for outputs"):

::

    OUTPUT/
      _snapshots/00000001.json     snapshot 1 (the manifest of the first, full run)
      _snapshots/00000002.json     snapshot 2, created only if absent: the commit
      manifest.json                a copy of the latest snapshot, for tools that read it
      chunks/.../part-*.parquet    files snapshot 1 added
      chunks/.../s00000002-*.parquet  files snapshot 2 added (earlier files stay referenced)
      _deletes/s00000002.parquet   source_uris whose earlier rows snapshot 2 removed
      changes/s00000002.parquet    snapshot 2's change feed (kebab_chunk/output/changes.py)

A snapshot is a manifest (the JSON ``manifest.json`` always had) whose ``outputs`` list
every live data file, each with ``snapshot``: the snapshot that added it (absent: 1), and
whose ``snapshot`` section names its number, its parent, the live delete files and its
change feed. A row of a file added by snapshot ``j`` is deleted by a delete file of
snapshot ``k`` when ``j < k`` and the row's ``source_uri`` is listed there (Iceberg's
equality-delete rule with sequence numbers), so an update writes only the changed
documents' rows and one small delete file: the cost of the change, not of the table.

A plain output (one run, no ``_snapshots/``) is snapshot 1 of itself. Nothing here
imports Beam: readers use it on any machine with pyarrow.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from kebab_chunk.errors import OutputDirError, SnapshotConflictError

__all__ = [
    "DELETES_DIR",
    "DELETE_SCHEMA",
    "SNAPSHOTS_DIR",
    "SnapshotConflictError",
    "added_in",
    "commit_snapshot",
    "delete_path",
    "expire_snapshots",
    "live_filter",
    "read_deleted",
    "referenced_paths",
    "snapshot_ids",
    "snapshot_name",
    "snapshot_of",
    "snapshot_prefix",
]

SNAPSHOTS_DIR = "_snapshots"
DELETES_DIR = "_deletes"
#: The tables whose files snapshots list and deletes apply to.
DATA_KINDS = ("chunks", "documents", "errors")
#: One row per document whose earlier rows a snapshot removes.
DELETE_SCHEMA = pa.schema([pa.field("source_uri", pa.string(), nullable=False)])
_NAME = re.compile(r"^(\d{8})\.json$")


def snapshot_name(n: int) -> str:
    """``_snapshots/<n:08d>.json``, relative to the output."""
    return f"{SNAPSHOTS_DIR}/{n:08d}.json"


def snapshot_prefix(n: int) -> str:
    """The file-name prefix of the data files snapshot ``n`` (> 1) adds: ``s<n:08d>-``."""
    return f"s{n:08d}-"


def delete_path(n: int) -> str:
    return f"{DELETES_DIR}/s{n:08d}.parquet"


def snapshot_of(manifest: Mapping[str, Any]) -> int:
    """The snapshot number of a manifest (1 for an output that was never updated)."""
    section = manifest.get("snapshot")
    return int(section["id"]) if isinstance(section, Mapping) else 1


def added_in(entry: Mapping[str, Any]) -> int:
    """The snapshot that added a listed file (1 when the entry does not say)."""
    return int(entry.get("snapshot", 1))


def _filesystem(output: str) -> tuple[pafs.FileSystem, str]:
    if "://" in output:
        fs, inner = pafs.FileSystem.from_uri(output)
        return fs, str(inner)
    return pafs.LocalFileSystem(), output


def snapshot_ids(output: str) -> list[int]:
    """The committed snapshot numbers of ``output``, ascending (empty: a plain output)."""
    fs, inner = _filesystem(output)
    selector = pafs.FileSelector(f"{inner}/{SNAPSHOTS_DIR}", allow_not_found=True)
    found = []
    for info in fs.get_file_info(selector):
        match = _NAME.match(posixpath.basename(info.path))
        if match and info.type == pafs.FileType.File:
            found.append(int(match.group(1)))
    return sorted(found)


def load_snapshot(output: str, n: int) -> dict[str, Any]:
    """Snapshot ``n``'s JSON (OutputDirError when it cannot be read)."""
    fs, inner = _filesystem(output)
    try:
        with fs.open_input_stream(f"{inner}/{snapshot_name(n)}") as f:
            data = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise OutputDirError(
            f"{output!r} has an unreadable {snapshot_name(n)} ({exc}); the output is damaged, "
            "so restore that file or write the output again."
        ) from None
    if not isinstance(data, dict):
        raise OutputDirError(
            f"{output!r} has a {snapshot_name(n)} that is not a JSON object; the output is "
            "damaged, so restore that file or write the output again."
        )
    return data


def _encode(manifest: Mapping[str, Any]) -> bytes:
    return (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode()


def commit_snapshot(output: str, manifest: Mapping[str, Any]) -> str:
    """Create ``_snapshots/<n>.json`` (n = the manifest's snapshot number) only if absent;
    returns its path. The loser of two runs that both build snapshot n gets one
    SnapshotConflictError sentence and its data files stay unreferenced (``expire``
    removes them). Locally the file is written whole under a temporary name and
    hard-linked into place (``link`` fails on an existing name, atomically); on object
    stores, where a create-if-absent needs the store's own client, the name is checked
    first and the runs' claim must keep two runs apart (docs/guide/scheduling.md)."""
    n = snapshot_of(manifest)
    final = f"{output}/{snapshot_name(n)}"
    data = _encode(manifest)
    if "://" not in output:
        os.makedirs(f"{output}/{SNAPSHOTS_DIR}", exist_ok=True)
        temp = f"{output}/{SNAPSHOTS_DIR}/_tmp-{uuid.uuid4().hex}"
        try:
            with open(temp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.link(temp, final)
        except FileExistsError:
            raise _conflict(output, n) from None
        finally:
            if os.path.exists(temp):
                os.unlink(temp)
        return final
    fs, inner = _filesystem(output)
    if fs.get_file_info(f"{inner}/{snapshot_name(n)}").type != pafs.FileType.NotFound:
        raise _conflict(output, n)
    with fs.open_output_stream(f"{inner}/{snapshot_name(n)}") as f:
        f.write(data)
    return final


def _conflict(output: str, n: int) -> SnapshotConflictError:
    return SnapshotConflictError(
        f"another run committed snapshot {n} of {output!r} first, so this run's snapshot was "
        "not committed; run the update again to build on it."
    )


def live_deletes(manifest: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The delete files a snapshot applies (each with ``path`` and ``snapshot``)."""
    section = manifest.get("snapshot")
    if not isinstance(section, Mapping):
        return []
    return [dict(entry) for entry in section.get("deletes") or ()]


def read_deleted(output: str, manifest: Mapping[str, Any]) -> list[tuple[int, frozenset[str]]]:
    """Per live delete file: (the snapshot that wrote it, the source_uris it deletes)."""
    fs, inner = _filesystem(output)
    found = []
    for entry in live_deletes(manifest):
        with fs.open_input_file(f"{inner}/{entry['path']}") as f:
            uris = pq.read_table(f, columns=["source_uri"]).column("source_uri").to_pylist()
        found.append((added_in(entry), frozenset(uris)))
    return found


def live_filter(added: int, deleted: Sequence[tuple[int, frozenset[str]]]) -> pc.Expression | None:
    """The dataset filter that keeps a file's live rows: those of a file added by snapshot
    ``added`` whose ``source_uri`` no later delete file lists (None: keep every row)."""
    uris: set[str] = set()
    for snapshot, removed in deleted:
        if snapshot > added:
            uris |= removed
    if not uris:
        return None
    return ~pc.field("source_uri").isin(pa.array(sorted(uris), pa.string()))


def referenced_paths(manifest: Mapping[str, Any]) -> set[str]:
    """Every file a snapshot needs: its data files, its delete files and its change feed."""
    paths = {
        str(entry["path"])
        for kind in DATA_KINDS
        for entry in (manifest.get("outputs", {}).get(kind) or ())
    }
    paths |= {str(entry["path"]) for entry in live_deletes(manifest)}
    section = manifest.get("snapshot")
    if isinstance(section, Mapping) and isinstance(section.get("changes"), Mapping):
        paths.add(str(section["changes"]["path"]))
    return paths


def _written_at(manifest: Mapping[str, Any]) -> datetime | None:
    stamp = (manifest.get("run_info") or {}).get("written_at")
    try:
        return datetime.fromisoformat(str(stamp)) if stamp else None
    except ValueError:
        return None


def expire_snapshots(
    output: str, *, keep_last: int | None = None, newer_than: datetime | None = None
) -> tuple[list[int], list[str]]:
    """Drop old snapshots and then every file no kept snapshot references.

    Keeps the last ``keep_last`` snapshots and those written at or after ``newer_than``
    (the latest always). Removes the other snapshot files first, then every file under
    the data, delete and change-feed directories that no kept snapshot lists (files of
    killed runs included), so a reader of a kept snapshot never misses a file. The caller
    must hold the output's claim: a running update's new files are referenced by no
    snapshot yet. Returns (expired snapshot numbers, removed paths), both sorted.
    """
    if keep_last is not None and keep_last < 1:
        raise OutputDirError(f"keep_last must be at least 1, got {keep_last}.")
    ids = snapshot_ids(output)
    if not ids:
        return [], []
    kept = set(ids[-1:])
    if keep_last is not None:
        kept |= set(ids[-keep_last:])
    if newer_than is not None:
        for n in ids:
            stamp = _written_at(load_snapshot(output, n))
            if stamp is not None and stamp >= newer_than:
                kept.add(n)
    if keep_last is None and newer_than is None:
        kept = set(ids)
    referenced: set[str] = set()
    for n in sorted(kept):
        referenced |= referenced_paths(load_snapshot(output, n))
    fs, inner = _filesystem(output)
    expired = [n for n in ids if n not in kept]
    for n in expired:
        fs.delete_file(f"{inner}/{snapshot_name(n)}")
    removed = sorted(p for p in _data_files(fs, inner) if p not in referenced)
    for path in removed:
        fs.delete_file(f"{inner}/{path}")
    return expired, removed


def _data_files(fs: pafs.FileSystem, inner: str) -> Iterator[str]:
    """Every file under the directories snapshots reference, relative to the output."""
    for directory in (*DATA_KINDS, DELETES_DIR, "changes"):
        selector = pafs.FileSelector(f"{inner}/{directory}", recursive=True, allow_not_found=True)
        for info in fs.get_file_info(selector):
            if info.type == pafs.FileType.File:
                yield info.path[len(inner) + 1 :]


def files_by_snapshot(entries: Iterable[Mapping[str, Any]]) -> dict[int, list[str]]:
    """Listed files grouped by the snapshot that added them (paths sorted)."""
    groups: dict[int, list[str]] = {}
    for entry in entries:
        groups.setdefault(added_in(entry), []).append(str(entry["path"]))
    return {n: sorted(paths) for n, paths in sorted(groups.items())}


def read_live(
    output: str,
    manifest: Mapping[str, Any],
    kind: str,
    make_dataset: Any,
    columns: Sequence[str] | None = None,
    rows: pc.Expression | None = None,
) -> pa.Table:
    """The live rows of table ``kind`` in a snapshot: its listed files, minus the rows
    later delete files remove. ``make_dataset(paths)`` builds the pyarrow dataset of a
    group of listed files (absolute paths); ``columns`` projects (``source_uri`` is read
    for the filter whenever deletes apply); ``rows`` keeps only the rows it matches."""
    deleted = read_deleted(output, manifest)
    tables = []
    for n, paths in files_by_snapshot(manifest.get("outputs", {}).get(kind) or ()).items():
        dataset: pads.Dataset = make_dataset([f"{output}/{p}" for p in paths])
        keep = live_filter(n, deleted)
        if rows is not None:
            keep = rows if keep is None else keep & rows
        tables.append(dataset.to_table(columns=list(columns) if columns else None, filter=keep))
    if not tables:
        return make_dataset([]).to_table(columns=list(columns) if columns else None)
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]
