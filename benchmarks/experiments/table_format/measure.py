"""Issue 30, first step: measure Iceberg (pyiceberg), Delta (deltalake) and plain Parquet
plus a versioned file list as the snapshot format of a kebab-chunk output.

Runs in an experiment venv, not the project's (README.md, "Method"):

    PYTHONPATH=/work/wt/h8 /tmp/h8-venv/bin/python measure.py --docs 10000 --repeats 3

Only ``kebab_chunk.output.schema`` is imported from the project (its Arrow schemas and its
Parquet writer settings), with the package ``__init__`` bypassed so Beam and the parsers
need not be installed. Everything else (data, layouts, commits) is defined here.

Variants (each: a full write = snapshot 1, then an incremental commit = snapshot 2 where
1% of the documents changed, i.e. their old rows are deleted and new rows added):

* ``iceberg-native``: pyiceberg, SQL catalog on SQLite; ``append`` then
  ``overwrite(new_rows, In(doc_id, changed))`` (pyiceberg writes the files).
* ``iceberg-files``: pyiceberg as a commit layer over data files *we* write (bucketed by
  doc, deterministic names); one ``overwrite`` snapshot: ``delete_data_file`` for the
  touched buckets' old files, ``append_data_file`` for their rewritten files.
* ``delta-native``: deltalake ``write_deltalake`` then ``mode="overwrite",
  predicate="doc_id IN (...)"`` (one commit).
* ``delta-files``: deltalake as a commit layer over our files: ``create_write_transaction``
  with ``AddAction``/``RemoveAction`` (one commit).
* ``plain-B<n>``: our files + ``_snapshots/<n>.json`` listing them (created by ``link``,
  which fails if it exists); a new snapshot = old list minus the touched buckets' files
  plus their rewritten files.
* ``plain-mor``: the same list; run 2 adds files of the changed documents' new rows and a
  delete file of their doc_ids (merge-on-read: nothing is rewritten).

Metrics per operation: wall time, bytes/files created on disk (a directory walk before
and after), bytes read and written through system calls (``rchar``/``wchar`` of
/proc/self/io: includes every file the process reads, page cache or not), data files the
new snapshot adds, removes and keeps from the previous one.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import math
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import time
import types
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq


def _import_schema() -> types.ModuleType:
    """kebab_chunk.output.schema without kebab_chunk/__init__ (which imports Beam)."""
    root = os.environ.get("KEBAB_ROOT", str(Path(__file__).resolve().parents[3]))
    if "kebab_chunk" not in sys.modules:
        pkg = types.ModuleType("kebab_chunk")
        pkg.__path__ = [os.path.join(root, "kebab_chunk")]  # type: ignore[attr-defined]
        sys.modules["kebab_chunk"] = pkg
    import kebab_chunk.output.schema as schema

    return schema


S = _import_schema()
LABEL = "md-heading-v3"
PART = S.PARTITION_COLUMN
CHUNKS_PER_DOC = 10
CHANGED_FRACTION = 0.01

# --------------------------------------------------------------------------- data


def _vocab() -> list[str]:
    r = random.Random(7)
    letters = "etaoinshrdlcumwfgypbvkxjqz"
    weights = [12, 9, 8, 8, 7, 7, 6, 6, 6, 4, 4, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1]
    return ["".join(r.choices(letters, weights, k=r.randint(2, 9))) for _ in range(4000)]


VOCAB = _vocab()


def _hex(*parts: object) -> str:
    return hashlib.blake2b("\x00".join(map(str, parts)).encode(), digest_size=16).hexdigest()


def doc_id(i: int) -> str:
    return _hex("doc", i)


def bucket_of(did: str, buckets: int) -> int:
    return int(did[:8], 16) % buckets


def chunk_rows(i: int, revision: int) -> list[tuple[Any, ...]]:
    """The CHUNK_SCHEMA row tuples of document i at a revision (0 = original)."""
    did = doc_id(i)
    uri = f"corpus/dir{i % 97:02d}/doc{i:06d}.md"
    content = _hex("bytes", i, revision)
    r = random.Random(f"{i}/{revision}")
    rows = []
    offset = 0
    for pos in range(CHUNKS_PER_DOC):
        words = r.choices(VOCAB, k=150)
        text = " ".join(words)[:800]
        heads = [f"Title {i}", f"Section {pos // 3} {words[0]}"]
        embed = f"{heads[0]} > {heads[1]}\n\n{text}"
        span = ("line", offset, offset + 12, None, None, 0, len(text))
        offset += 13
        rows.append(
            (
                _hex("chunk", did, LABEL, pos, content),  # chunk_id
                did,
                uri,
                LABEL,
                "pol-" + _hex("policy")[:12],
                "md-parse-v2",
                pos,
                text,
                heads,
                [],
                [f"b{pos * 2}", f"b{pos * 2 + 1}"],
                [span],
                len(words),
                content,
                embed,
                len(words) + 6,
            )
        )
    return rows


def rows_to_table(rows: list[tuple[Any, ...]], with_partition: bool) -> pa.Table:
    rows = sorted(rows, key=lambda r: r[0])
    schema = S.CHUNK_SCHEMA if with_partition else S.CHUNK_FILE_SCHEMA
    cols = [
        pa.array([r[j] for r in rows], type=S.CHUNK_SCHEMA.field(j).type)
        for j, name in enumerate(S.CHUNK_SCHEMA.names)
        if with_partition or name != PART
    ]
    return pa.Table.from_arrays(cols, schema=schema)


class Corpus:
    def __init__(self, docs: int) -> None:
        self.docs = docs
        r = random.Random(30)
        self.changed = sorted(r.sample(range(docs), max(1, int(docs * CHANGED_FRACTION))))
        self.changed_ids = sorted(doc_id(i) for i in self.changed)
        t = time.perf_counter()
        base = [row for i in range(docs) for row in chunk_rows(i, 0)]
        self.full = rows_to_table(base, with_partition=True)
        del base
        self.new = rows_to_table(
            [row for i in self.changed for row in chunk_rows(i, 1)], with_partition=True
        )
        changed_set = pa.array(self.changed_ids)
        keep = self.full.filter(pc.invert(pc.is_in(self.full["doc_id"], value_set=changed_set)))
        self.after = pa.concat_tables([keep, self.new]).sort_by("chunk_id")
        self.gen_seconds = time.perf_counter() - t
        self.digest_full = table_digest(self.full)
        self.digest_after = table_digest(self.after)


def table_digest(t: pa.Table) -> str:
    """blake2b over the rows' chunk_id, doc_id and text, in chunk_id order (any reader's
    string type)."""
    t = t.select(["chunk_id", "doc_id", "text"]).cast(
        pa.schema([("chunk_id", pa.string()), ("doc_id", pa.string()), ("text", pa.string())])
    )
    t = t.sort_by("chunk_id")
    h = hashlib.blake2b(digest_size=16)
    h.update(str(t.num_rows).encode())
    for name in t.column_names:
        col = pa.concat_arrays(t[name].chunks) if t[name].num_chunks else pa.array([], pa.string())
        for buf in col.buffers()[1:]:
            if buf is not None:
                h.update(memoryview(buf))
    return h.hexdigest()


# --------------------------------------------------------------------------- measuring


def _io() -> tuple[int, int]:
    vals = {}
    with open("/proc/self/io") as f:
        for line in f:
            k, v = line.split(":")
            vals[k] = int(v)
    return vals["rchar"], vals["wchar"]


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = os.path.join(dirpath, n)
            st = os.stat(p)
            out[os.path.relpath(p, root)] = (st.st_size, st.st_mtime_ns)
    return out


def measured(root: Path, fn: Callable[[], Any]) -> tuple[Any, dict[str, Any]]:
    before = _tree(root) if root.exists() else {}
    r0, w0 = _io()
    t0 = time.perf_counter()
    result = fn()
    secs = time.perf_counter() - t0
    r1, w1 = _io()
    after = _tree(root)
    created = {p: s for p, s in after.items() if before.get(p) != s}
    removed = [p for p in before if p not in after]
    data = [p for p in created if p.endswith(".parquet")]
    return result, {
        "seconds": secs,
        "files_created": len(created),
        "bytes_created": sum(s[0] for s in created.values()),
        "data_files_created": len(data),
        "data_bytes_created": sum(created[p][0] for p in data),
        "meta_bytes_created": sum(s[0] for p, s in created.items() if p not in data),
        "files_deleted": len(removed),
        "rchar": r1 - r0,
        "wchar": w1 - w0,
        "disk_bytes_total": sum(s[0] for s in after.values()),
        "disk_files_total": len(after),
    }


# --------------------------------------------------------------------------- our data files


def write_bucket_files(
    table: pa.Table, directory: Path, buckets: int, with_partition: bool
) -> dict[str, dict[str, Any]]:
    """One file per (label, doc bucket), rows sorted by chunk_id, named by content."""
    out = {}
    bucket = pa.array([bucket_of(d, buckets) for d in table["doc_id"].to_pylist()])
    for b in sorted(set(bucket.to_pylist())):
        part = table.filter(pc.equal(bucket, b))
        out.update(_write_bucket(part, directory, b, with_partition))
    return out


def _write_bucket(part: pa.Table, directory: Path, b: int, with_partition: bool) -> dict:
    part = part.sort_by("chunk_id")
    if not with_partition and PART in part.column_names:
        part = part.drop_columns([PART])
    sink = pa.BufferOutputStream()
    S.write_parquet(part.replace_schema_metadata(S.CHUNK_FILE_SCHEMA.metadata), sink)
    data = sink.getvalue().to_pybytes()
    digest = hashlib.blake2b(data, digest_size=8).hexdigest()
    rel = f"{PART}={LABEL}/b{b:05d}-{digest}.parquet"
    path = directory / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_bytes(data)
    return {rel: {"rows": part.num_rows, "bytes": len(data), "bucket": b, "digest": digest}}


def rewrite_touched(
    live: dict[str, dict[str, Any]],
    directory: Path,
    changed_ids: list[str],
    new: pa.Table,
    buckets: int,
    with_partition: bool,
) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """Copy-on-write per bucket: returns (files removed, files added)."""
    touched = {bucket_of(d, buckets) for d in changed_ids}
    changed = pa.array(changed_ids)
    new_bucket = pa.array([bucket_of(d, buckets) for d in new["doc_id"].to_pylist()])
    removed, added = [], {}
    for rel, info in sorted(live.items()):
        b = info["bucket"]
        if b not in touched:
            continue
        old = pq.read_table(directory / rel)
        if PART in old.column_names:
            old = old.drop_columns([PART])
        kept = old.filter(pc.invert(pc.is_in(old["doc_id"], value_set=changed)))
        fresh = new.filter(pc.equal(new_bucket, b))
        if with_partition:
            kept = kept.append_column(PART, pa.array([LABEL] * kept.num_rows))
            kept = kept.select(S.CHUNK_SCHEMA.names).cast(S.CHUNK_SCHEMA)
        else:
            fresh = fresh.drop_columns([PART])
        merged = pa.concat_tables([kept.cast(fresh.schema), fresh])
        removed.append(rel)
        added.update(_write_bucket(merged, directory, b, with_partition))
    return removed, added


# --------------------------------------------------------------------------- variants


class Variant:
    name = ""

    def __init__(self, root: Path, corpus: Corpus, buckets: int) -> None:
        self.root, self.c, self.buckets = root, corpus, buckets

    def full(self) -> None: ...
    def incremental(self) -> None: ...
    def live_files(self, snapshot: int | None = None) -> set[str]: ...
    def read(self, snapshot: int | None = None) -> pa.Table: ...
    def duckdb_read(self, snapshot: int | None = None) -> tuple[str, int | None]: ...
    def expire_keep_last(self) -> dict[str, Any]: ...


class Plain(Variant):
    """Our files + _snapshots/NNNNNNNN.json (the versioned file list)."""

    def __init__(self, root: Path, corpus: Corpus, buckets: int) -> None:
        super().__init__(root, corpus, buckets)
        self.name = f"plain-B{buckets}"
        self.data = root / "chunks"
        self.snaps = root / "_snapshots"

    def _commit(self, n: int, files: dict[str, dict[str, Any]], parent: int | None) -> None:
        self.snaps.mkdir(parents=True, exist_ok=True)
        body = {
            "snapshot": n,
            "parent": parent,
            "files": {k: files[k] for k in sorted(files)},
        }
        tmp = self.snaps / f".{n:08d}.json.tmp-{os.getpid()}"
        tmp.write_text(json.dumps(body, sort_keys=True, indent=0))
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        # os.link fails if the target exists: the second of two committers loses.
        os.link(tmp, self.snaps / f"{n:08d}.json")
        tmp.unlink()

    def latest(self) -> int:
        names = [p.name for p in self.snaps.glob("[0-9]*.json")]
        return max(int(n[:8]) for n in names)

    def snapshot(self, n: int | None = None) -> dict[str, Any]:
        n = self.latest() if n is None else n
        return json.loads((self.snaps / f"{n:08d}.json").read_text())

    def full(self) -> None:
        files = write_bucket_files(self.c.full, self.data, self.buckets, with_partition=False)
        self._commit(1, files, None)

    def incremental(self, base: int | None = None) -> None:
        snap = self.snapshot(base)
        live = snap["files"]
        removed, added = rewrite_touched(
            live, self.data, self.c.changed_ids, self.c.new, self.buckets, with_partition=False
        )
        files = {k: v for k, v in live.items() if k not in removed} | added
        self._commit(snap["snapshot"] + 1, files, snap["snapshot"])

    def live_files(self, snapshot: int | None = None) -> set[str]:
        return set(self.snapshot(snapshot)["files"])

    def read(self, snapshot: int | None = None) -> pa.Table:
        paths = [str(self.data / p) for p in sorted(self.live_files(snapshot))]
        return ds.dataset(
            paths, format="parquet", partitioning="hive", partition_base_dir=str(self.data)
        ).to_table()

    def duckdb_read(self, snapshot: int | None = None) -> tuple[str, int | None]:
        import duckdb

        paths = [str(self.data / p) for p in sorted(self.live_files(snapshot))]
        n = (
            duckdb.connect()
            .execute(
                "select count(*) from read_parquet($p, hive_partitioning = true)",
                {"p": paths},
            )
            .fetchone()[0]
        )
        return "read_parquet(listed files)", n

    def expire_keep_last(self) -> dict[str, Any]:
        latest = self.latest()
        keep = self.live_files(latest)
        gone_snaps = [p for p in self.snaps.glob("[0-9]*.json") if int(p.name[:8]) < latest]
        for p in gone_snaps:
            p.unlink()
        deleted = 0
        for p in self.data.rglob("*.parquet"):
            if str(p.relative_to(self.data)) not in keep:
                p.unlink()
                deleted += 1
        return {"available": "own code (10 lines)", "data_files_deleted": deleted}


class PlainMergeOnRead(Plain):
    """Our files + versioned list, deletes without rewriting: snapshot n lists a delete
    file of (doc_id) rows that removes those documents' rows from every data file added
    before n (Iceberg's equality-delete rule with sequence numbers). New rows go to new
    files. A reader must apply the deletes (pyarrow filter / one DuckDB anti-join)."""

    def __init__(self, root: Path, corpus: Corpus, buckets: int) -> None:
        super().__init__(root, corpus, buckets)
        self.name = "plain-mor"

    def full(self) -> None:
        files = write_bucket_files(self.c.full, self.data, self.buckets, with_partition=False)
        for info in files.values():
            info["added_in"] = 1
        self._commit(1, files, None)

    def _commit(self, n: int, files: dict, parent: int | None, deletes: dict | None = None) -> None:
        self.snaps.mkdir(parents=True, exist_ok=True)
        body = {
            "snapshot": n,
            "parent": parent,
            "files": {k: files[k] for k in sorted(files)},
            "deletes": deletes or {},
        }
        tmp = self.snaps / f".{n:08d}.json.tmp-{os.getpid()}"
        tmp.write_text(json.dumps(body, sort_keys=True, indent=0))
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.link(tmp, self.snaps / f"{n:08d}.json")
        tmp.unlink()

    def incremental(self, base: int | None = None) -> None:
        snap = self.snapshot(base)
        n = snap["snapshot"] + 1
        new_buckets = max(1, math.ceil(self.c.new.num_rows / 5_000))
        added = write_bucket_files(self.c.new, self.data / f"s{n}", new_buckets, False)
        added = {f"s{n}/{k}": dict(v, added_in=n) for k, v in added.items()}
        dels = pa.table({"doc_id": pa.array(self.c.changed_ids, pa.string())})
        sink = pa.BufferOutputStream()
        pq.write_table(dels, sink, compression="zstd")
        data = sink.getvalue().to_pybytes()
        rel = f"_deletes/d{n:08d}-{hashlib.blake2b(data, digest_size=8).hexdigest()}.parquet"
        (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (self.root / rel).write_bytes(data)
        self._commit(n, snap["files"] | added, snap["snapshot"], snap["deletes"] | {rel: n})

    def read(self, snapshot: int | None = None) -> pa.Table:
        snap = self.snapshot(snapshot)
        deleted: dict[str, int] = {}
        for rel, seq in snap["deletes"].items():
            for d in pq.read_table(self.root / rel)["doc_id"].to_pylist():
                deleted[d] = max(seq, deleted.get(d, 0))
        parts = []
        for rel, info in sorted(snap["files"].items()):
            t = pq.read_table(self.data / rel)
            gone = [d for d, seq in deleted.items() if seq > info["added_in"]]
            if gone:
                t = t.filter(pc.invert(pc.is_in(t["doc_id"], value_set=pa.array(gone))))
            parts.append(t)
        return pa.concat_tables(parts)

    def duckdb_read(self, snapshot: int | None = None) -> tuple[str, int | None]:
        import duckdb

        snap = self.snapshot(snapshot)
        con = duckdb.connect()
        files = pa.table(
            {
                "filename": [str(self.data / r) for r in sorted(snap["files"])],
                "added_in": [snap["files"][r]["added_in"] for r in sorted(snap["files"])],
            }
        )
        dels = pa.table(
            {
                "path": [str(self.root / r) for r in sorted(snap["deletes"])],
                "seq": [snap["deletes"][r] for r in sorted(snap["deletes"])],
            }
        )
        con.register("files", files)
        con.register("dels", dels)
        if snap["deletes"]:
            con.execute(
                "create table d as select x.doc_id, dels.seq"
                " from read_parquet($p, filename = true) x join dels on x.filename = dels.path",
                {"p": list(dels["path"].to_pylist())},
            )
        else:
            con.execute("create table d (doc_id varchar, seq bigint)")
        n = con.execute(
            "select count(*) from read_parquet($p, filename = true) r join files f using (filename)"
            " where not exists (select 1 from d where d.doc_id = r.doc_id and d.seq > f.added_in)",
            {"p": files["filename"].to_pylist()},
        ).fetchone()[0]
        return "read_parquet + anti-join on the delete files", n

    def expire_keep_last(self) -> dict[str, Any]:
        out = super().expire_keep_last()
        out["note"] = "deleted rows stay in data files until a compaction rewrites them"
        return out


class IcebergBase(Variant):
    def _catalog(self) -> Any:
        from pyiceberg.catalog.sql import SqlCatalog

        self.root.mkdir(parents=True, exist_ok=True)
        return SqlCatalog(
            "bench",
            uri=f"sqlite:///{self.root}/catalog.db",
            warehouse=f"file://{self.root}/warehouse",
        )

    def table(self) -> Any:
        return self._catalog().load_table("k.chunks")

    def _create(self) -> Any:
        cat = self._catalog()
        cat.create_namespace_if_not_exists("k")
        tbl = cat.create_table("k.chunks", schema=S.CHUNK_SCHEMA.remove_metadata())
        with tbl.update_spec() as spec:
            spec.add_identity(PART)
        return cat.load_table("k.chunks")

    def _snap_id(self, snapshot: int | None) -> int | None:
        if snapshot is None:
            return None
        return self.table().metadata.refs[f"run-{snapshot}"].snapshot_id

    def _tag(self, n: int) -> None:
        tbl = self.table()
        tbl.manage_snapshots().create_tag(tbl.current_snapshot().snapshot_id, f"run-{n}").commit()

    def live_files(self, snapshot: int | None = None) -> set[str]:
        tbl = self.table()
        return {
            t.file.file_path for t in tbl.scan(snapshot_id=self._snap_id(snapshot)).plan_files()
        }

    def read(self, snapshot: int | None = None) -> pa.Table:
        return self.table().scan(snapshot_id=self._snap_id(snapshot)).to_arrow()

    def duckdb_read(self, snapshot: int | None = None) -> tuple[str, int | None]:
        import duckdb

        tbl = self.table()
        tasks = list(tbl.scan(snapshot_id=self._snap_id(snapshot)).plan_files())
        if any(t.delete_files for t in tasks):
            return "data files carry delete files: needs the iceberg extension", None
        paths = [t.file.file_path.removeprefix("file://") for t in tasks]
        n = (
            duckdb.connect()
            .execute("select count(*) from read_parquet($p)", {"p": paths})
            .fetchone()[0]
        )
        return "read_parquet(pyiceberg plan_files paths)", n

    def expire_keep_last(self) -> dict[str, Any]:
        tbl = self.table()
        current = tbl.current_snapshot().snapshot_id
        for ref in list(tbl.metadata.refs):
            if ref != "main":
                tbl.manage_snapshots().remove_tag(ref).commit()
        tbl = self.table()
        old = [s.snapshot_id for s in tbl.metadata.snapshots if s.snapshot_id != current]
        before = sum(1 for _ in self.root.rglob("*.parquet"))
        tbl.maintenance.expire_snapshots().by_ids(old).commit()
        after = sum(1 for _ in self.root.rglob("*.parquet"))
        return {
            "available": "maintenance.expire_snapshots() (metadata only)",
            "snapshots_expired": len(old),
            "data_files_deleted": before - after,
        }


class IcebergNative(IcebergBase):
    name = "iceberg-native"

    def full(self) -> None:
        tbl = self._create()
        tbl.append(self.c.full.replace_schema_metadata(None))
        self._tag(1)

    def incremental(self) -> None:
        from pyiceberg.expressions import In

        tbl = self.table()
        tbl.overwrite(
            self.c.new.replace_schema_metadata(None),
            overwrite_filter=In("doc_id", self.c.changed_ids),
        )
        self._tag(2)


class IcebergFiles(IcebergBase):
    """pyiceberg commits files we wrote (they hold the partition column: Iceberg derives
    the partition value of an added file from its column statistics)."""

    name = "iceberg-files"

    def _data_dir(self) -> Path:
        return self.root / "warehouse" / "k.db" / "chunks" / "data"

    def _datafiles(self, tx: Any, paths: list[str]) -> list[Any]:
        from pyiceberg.io.pyarrow import parquet_file_to_data_file

        return [parquet_file_to_data_file(tx._table.io, tx.table_metadata, p) for p in paths]

    def full(self) -> None:
        tbl = self._create()
        files = write_bucket_files(self.c.full, self._data_dir(), self.buckets, with_partition=True)
        tbl.add_files([f"file://{self._data_dir() / p}" for p in sorted(files)])
        self._tag(1)

    def incremental(self) -> None:
        from pyiceberg.table import TableProperties

        tbl = self.table()
        tasks = {t.file.file_path: t.file for t in tbl.scan().plan_files()}
        prefix = f"file://{self._data_dir()}/"
        live = {}
        for path in tasks:
            rel = path.removeprefix(prefix)
            b = int(rel.split("/b", 1)[1][:5])
            live[rel] = {"bucket": b}
        removed, added = rewrite_touched(
            live, self._data_dir(), self.c.changed_ids, self.c.new, self.buckets, True
        )
        tx = tbl.transaction()
        if tx.table_metadata.name_mapping() is None:
            mapping = tx.table_metadata.schema().name_mapping.model_dump_json()
            tx.set_properties(**{TableProperties.DEFAULT_NAME_MAPPING: mapping})
        with tx.update_snapshot().overwrite() as ow:
            for rel in removed:
                ow.delete_data_file(tasks[prefix + rel])
            for df in self._datafiles(tx, [prefix + rel for rel in sorted(added)]):
                ow.append_data_file(df)
        tx.commit_transaction()
        self._tag(2)


class DeltaBase(Variant):
    def dt(self, snapshot: int | None = None) -> Any:
        from deltalake import DeltaTable

        if snapshot is None:
            return DeltaTable(str(self.root))
        # "The chunks as of run N": the commit whose custom metadata names run N.
        for h in DeltaTable(str(self.root)).history():
            if h.get("kebab.run") == str(snapshot):
                return DeltaTable(str(self.root), version=h["version"])
        raise LookupError(f"no commit of run {snapshot}")

    @staticmethod
    def run_props(n: int) -> Any:
        from deltalake import CommitProperties

        return CommitProperties(custom_metadata={"kebab.run": str(n)})

    def live_files(self, snapshot: int | None = None) -> set[str]:
        return set(self.dt(snapshot).get_add_actions(flatten=True)["path"].to_pylist())

    def read(self, snapshot: int | None = None) -> pa.Table:
        return pa.table(self.dt(snapshot).to_pyarrow_table())

    def duckdb_read(self, snapshot: int | None = None) -> tuple[str, int | None]:
        import duckdb

        paths = [str(self.root / p) for p in sorted(self.live_files(snapshot))]
        n = (
            duckdb.connect()
            .execute(
                "select count(*) from read_parquet($p, hive_partitioning = true)",
                {"p": paths},
            )
            .fetchone()[0]
        )
        return "read_parquet(deltalake files(); no deletion vectors)", n

    def expire_keep_last(self) -> dict[str, Any]:
        dt = self.dt()
        deleted = dt.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
        dt.cleanup_metadata()
        try:
            self.dt(1).to_pyarrow_table()
            old = "still readable"
        except Exception as e:
            old = f"unreadable ({type(e).__name__})"
        return {
            "available": "vacuum(retention_hours=0, enforce_retention_duration=False)",
            "data_files_deleted": len(deleted),
            "snapshot_1_after": old,
        }


def ZSTD() -> Any:
    """delta-rs's own Parquet writer defaults to snappy; zstd like ours and pyiceberg's."""
    from deltalake import WriterProperties

    return WriterProperties(compression="ZSTD")


class DeltaNative(DeltaBase):
    name = "delta-native"

    def full(self) -> None:
        from deltalake import write_deltalake

        write_deltalake(
            str(self.root),
            self.c.full,
            partition_by=[PART],
            commit_properties=self.run_props(1),
            writer_properties=ZSTD(),
        )

    def incremental(self) -> None:
        from deltalake import write_deltalake

        ids = ", ".join(f"'{d}'" for d in self.c.changed_ids)
        write_deltalake(
            self.dt(),
            self.c.new,
            mode="overwrite",
            predicate=f"doc_id IN ({ids})",
            commit_properties=self.run_props(2),
            writer_properties=ZSTD(),
        )


class DeltaFiles(DeltaBase):
    name = "delta-files"

    def _adds(self, files: dict[str, dict[str, Any]]) -> list[Any]:
        from deltalake.transaction import AddAction

        return [
            AddAction(
                path=rel,
                size=info["bytes"],
                partition_values={PART: LABEL},
                modification_time=0,
                data_change=True,
                stats=json.dumps({"numRecords": info["rows"]}),
            )
            for rel, info in sorted(files.items())
        ]

    def full(self) -> None:
        from deltalake import DeltaTable

        self.root.mkdir(parents=True, exist_ok=True)
        files = write_bucket_files(self.c.full, self.root, self.buckets, with_partition=False)
        schema = S.CHUNK_SCHEMA.remove_metadata()
        DeltaTable.create(str(self.root), schema=schema, partition_by=[PART])
        self.dt().create_write_transaction(
            self._adds(files),
            mode="append",
            schema=schema,
            partition_by=[PART],
            commit_properties=self.run_props(1),
        )

    def incremental(self) -> None:
        from deltalake.transaction import RemoveAction

        dt = self.dt()
        live = {}
        for rel in dt.get_add_actions(flatten=True)["path"].to_pylist():
            live[rel] = {"bucket": int(rel.split("/b", 1)[1][:5])}
        removed, added = rewrite_touched(
            live, self.root, self.c.changed_ids, self.c.new, self.buckets, with_partition=False
        )
        now = int(time.time() * 1000)
        actions = self._adds(added) + [
            RemoveAction(
                path=rel, data_change=True, deletion_timestamp=now, partition_values={PART: LABEL}
            )
            for rel in removed
        ]
        dt.create_write_transaction(
            actions,
            mode="append",
            schema=S.CHUNK_SCHEMA.remove_metadata(),
            partition_by=[PART],
            commit_properties=self.run_props(2),
        )


def make(name: str, root: Path, corpus: Corpus, buckets: int) -> Variant:
    if name == "plain-mor":
        return PlainMergeOnRead(root, corpus, buckets)
    if name.startswith("plain-B"):
        return Plain(root, corpus, int(name.removeprefix("plain-B")))
    cls = {
        "iceberg-native": IcebergNative,
        "iceberg-files": IcebergFiles,
        "delta-native": DeltaNative,
        "delta-files": DeltaFiles,
    }[name]
    return cls(root, corpus, buckets)


# --------------------------------------------------------------------------- experiments


def file_hashes(root: Path) -> tuple[list[str], list[str], list[str]]:
    """(data file content hashes, data file names, metadata file content hashes)."""
    data, names, meta = [], [], []
    for p in sorted(root.rglob("*")):
        if not p.is_file():
            continue
        h = hashlib.blake2b(p.read_bytes(), digest_size=8).hexdigest()
        if p.suffix == ".parquet":
            data.append(h)
            names.append(str(p.relative_to(root)))
        else:
            meta.append(h)
    return sorted(data), sorted(names), sorted(meta)


def run_variant(name: str, corpus: Corpus, work: Path, buckets: int, repeats: int) -> dict:
    reps = []
    roots = []
    for k in range(repeats):
        root = work / f"{name}-{k}"
        shutil.rmtree(root, ignore_errors=True)
        v = make(name, root, corpus, buckets)
        _, full = measured(root, v.full)
        files1 = v.live_files(1)
        _, incr = measured(root, v.incremental)
        files2 = v.live_files(2)
        incr["snapshot_files_kept"] = len(files1 & files2)
        incr["snapshot_files_removed"] = len(files1 - files2)
        incr["snapshot_files_added"] = len(files2 - files1)
        full["snapshot_files_added"] = len(files1)
        latest, rl = measured(root, v.read)
        older, ro = measured(root, functools.partial(v.read, 1))
        rl["correct"] = table_digest(latest) == corpus.digest_after
        ro["correct"] = table_digest(older) == corpus.digest_full
        (how, n_latest), dl = measured(root, v.duckdb_read)
        (_, n_old), do = measured(root, functools.partial(v.duckdb_read, 1))
        dl.update(how=how, correct=n_latest == corpus.after.num_rows)
        do.update(how=how, correct=n_old == corpus.full.num_rows)
        reps.append(
            {
                "full": full,
                "incremental": incr,
                "read_latest": rl,
                "read_snapshot_1": ro,
                "duckdb_latest": dl,
                "duckdb_snapshot_1": do,
            }
        )
        roots.append(root)
        print(
            f"  {name} rep {k}: full {full['seconds']:.2f}s incr {incr['seconds']:.2f}s "
            f"incr data bytes {incr['data_bytes_created']:,}",
            flush=True,
        )
    result: dict[str, Any] = {"repeats": reps}
    # Determinism: two independent builds of the same two snapshots.
    if len(roots) >= 2:
        a, b = file_hashes(roots[0]), file_hashes(roots[1])
        result["determinism"] = {
            "data_file_bytes_identical": a[0] == b[0],
            "data_file_names_identical": a[1] == b[1],
            "metadata_files_identical": a[2] == b[2],
            "data_files": len(a[0]),
            "metadata_files": len(a[2]),
        }
    # Expiry on the last build (keep the latest snapshot only).
    v = make(name, roots[-1], corpus, buckets)
    try:
        exp = v.expire_keep_last()
        exp["latest_still_correct"] = table_digest(v.read()) == corpus.digest_after
    except Exception as e:
        exp = {"error": f"{type(e).__name__}: {e}"[:300]}
    result["expire"] = exp
    for r in roots[:-1]:
        shutil.rmtree(r, ignore_errors=True)
    return result


def concurrency(name: str, corpus: Corpus, work: Path, buckets: int) -> dict:
    """Two writers, both starting from snapshot 1, commit incremental changes; the second
    commits after the first. Overlapping: the same change set (so the same files)."""
    root = work / f"{name}-conc"
    shutil.rmtree(root, ignore_errors=True)
    v1 = make(name, root, corpus, buckets)
    v1.full()
    out: dict[str, Any] = {}
    # Stale handles: load both writers' view before either commits.
    if isinstance(v1, Plain):
        base = v1.latest()
        v1.incremental(base)
        try:
            v1.incremental(base)
            out["second_writer"] = "committed"
        except FileExistsError:
            out["second_writer"] = "refused: FileExistsError (snapshot n+1 exists; rebase)"
    elif isinstance(v1, IcebergBase):
        t1, t2 = v1.table(), v1.table()
        v1.table = lambda t=t1: t  # type: ignore[method-assign]
        v1.incremental()
        v1.table = lambda t=t2: t  # type: ignore[method-assign]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                v1.incremental()
            out["second_writer"] = "committed"
        except Exception as e:
            out["second_writer"] = f"refused: {type(e).__name__}: {str(e)[:160]}"
        v1 = make(name, root, corpus, buckets)
    else:
        d1, d2 = v1.dt(), v1.dt()
        v1.dt = lambda snapshot=None, d=d1: d  # type: ignore[method-assign]
        v1.incremental()
        v1.dt = lambda snapshot=None, d=d2: d  # type: ignore[method-assign]
        try:
            v1.incremental()
            out["second_writer"] = "committed"
        except Exception as e:
            out["second_writer"] = f"refused: {type(e).__name__}: {str(e)[:160]}"
        v1 = make(name, root, corpus, buckets)
    t = v1.read()
    out["final_rows"] = t.num_rows
    out["final_correct"] = table_digest(t) == corpus.digest_after
    shutil.rmtree(root, ignore_errors=True)
    return out


def kill_child(name: str, root: str, docs: int, buckets: int) -> None:
    corpus = Corpus(docs)
    v = make(name, Path(root), corpus, buckets)
    v.full()
    print("READY", flush=True)
    v.incremental()
    print("DONE", flush=True)


def kill_test(name: str, corpus: Corpus, work: Path, buckets: int, delays: list[float]) -> list:
    out = []
    for delay in delays:
        root = work / f"{name}-kill"
        shutil.rmtree(root, ignore_errors=True)
        p = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--kill-child",
                name,
                str(root),
                str(corpus.docs),
                str(buckets),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert p.stdout is not None
        line = p.stdout.readline()
        assert line.strip() == "READY", line
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        rest = p.stdout.read()
        p.wait()
        v = make(name, root, corpus, buckets)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                d = table_digest(v.read())
            state = (
                "new" if d == corpus.digest_after else "old" if d == corpus.digest_full else "OTHER"
            )
        except Exception as e:
            state = f"unreadable: {type(e).__name__}: {str(e)[:120]}"
        out.append({"delay_s": delay, "finished": "DONE" in rest, "reads_as": state})
        shutil.rmtree(root, ignore_errors=True)
    return out


def probes(work: Path, corpus: Corpus) -> dict:
    """What the libraries do when asked for merge-on-read deletes; DuckDB extensions."""
    out: dict[str, Any] = {}
    import duckdb

    for ext in ("iceberg", "delta"):
        try:
            duckdb.connect().execute(f"INSTALL {ext}; LOAD {ext};")
            out[f"duckdb_{ext}_extension"] = "installed"
        except Exception as e:
            out[f"duckdb_{ext}_extension"] = f"{type(e).__name__}: {str(e)[:200]}"
    small = Corpus.__new__(Corpus)
    small.__dict__.update(corpus.__dict__)
    # Iceberg: merge-on-read delete mode.
    root = work / "probe-iceberg"
    shutil.rmtree(root, ignore_errors=True)
    v = IcebergNative(root, small, 1)
    v.full()
    tbl = v.table()
    with tbl.transaction() as tx:
        tx.set_properties(**{"write.delete.mode": "merge-on-read"})
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        from pyiceberg.expressions import In

        v.table().delete(In("doc_id", corpus.changed_ids))
    out["iceberg_merge_on_read_delete"] = [str(x.message) for x in w][:3] or "no warning"
    out["iceberg_delete_files_after"] = sum(
        len(t.delete_files) for t in v.table().scan().plan_files()
    )
    shutil.rmtree(root, ignore_errors=True)
    # Delta: deletion vectors.
    root = work / "probe-delta"
    shutil.rmtree(root, ignore_errors=True)
    from deltalake import DeltaTable, write_deltalake

    try:
        write_deltalake(
            str(root),
            corpus.full,
            partition_by=[PART],
            configuration={"delta.enableDeletionVectors": "true"},
        )
        dt = DeltaTable(str(root))
        ids = ", ".join(f"'{d}'" for d in corpus.changed_ids)
        metrics = dt.delete(f"doc_id IN ({ids})")
        out["delta_delete_with_dv_enabled"] = {
            "metrics": metrics,
            "protocol": str(DeltaTable(str(root)).protocol()),
            "deletion_vector_rows": DeltaTable(str(root)).deletion_vectors().read_all().num_rows,
        }
    except Exception as e:
        out["delta_delete_with_dv_enabled"] = f"{type(e).__name__}: {str(e)[:300]}"
    shutil.rmtree(root, ignore_errors=True)
    return out


def summarize(results: dict) -> str:
    lines = [
        "| variant | step | seconds (median) | data files written | data MB written | "
        "metadata KB written | MB read (rchar) | snapshot files kept / removed / added |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results["variants"].items():
        for step in ("full", "incremental", "read_latest", "read_snapshot_1", "duckdb_latest"):
            reps = [x[step] for x in r["repeats"]]

            def med(k: str, reps: list = reps) -> float:
                return statistics.median(x[k] for x in reps)

            snap = ""
            if step == "incremental":
                kept, gone = med("snapshot_files_kept"), med("snapshot_files_removed")
                snap = f"{kept:.0f} / {gone:.0f} / {med('snapshot_files_added'):.0f}"
            elif step == "full":
                snap = f"- / - / {med('snapshot_files_added'):.0f}"
            ok = all(x.get("correct", True) for x in reps)
            lines.append(
                f"| {name} | {step}{'' if ok else ' WRONG'} | {med('seconds'):.2f} | "
                f"{med('data_files_created'):.0f} | {med('data_bytes_created') / 1e6:.2f} | "
                f"{med('meta_bytes_created') / 1e3:.1f} | {med('rchar') / 1e6:.1f} | {snap} |"
            )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--work", default="/tmp/h8-tf")
    ap.add_argument("--out", default=None)
    ap.add_argument(
        "--variants",
        default="plain,plain-mor,iceberg-native,iceberg-files,delta-native,delta-files",
    )
    ap.add_argument("--rows-per-file", type=int, default=5_000)
    ap.add_argument("--no-extras", action="store_true", help="skip kill/concurrency/probes")
    ap.add_argument("--kill-child", nargs=4)
    args = ap.parse_args()
    if args.kill_child:
        name, root, docs, buckets = args.kill_child
        warnings.simplefilter("ignore")
        kill_child(name, root, int(docs), int(buckets))
        return
    warnings.simplefilter("ignore")
    work = Path(args.work) / str(args.docs)
    work.mkdir(parents=True, exist_ok=True)
    corpus = Corpus(args.docs)
    rows = corpus.full.num_rows
    buckets = max(1, math.ceil(rows / args.rows_per_file))
    names = []
    for n in args.variants.split(","):
        if n == "plain":
            today = max(1, math.ceil(rows / 50_000))
            fine = max(1, math.ceil(rows / 500))
            names += sorted(
                {f"plain-B{today}", f"plain-B{buckets}", f"plain-B{fine}"}, key=lambda s: int(s[7:])
            )
        else:
            names.append(n)
    import deltalake
    import duckdb
    import pyiceberg

    results: dict[str, Any] = {
        "docs": args.docs,
        "rows": rows,
        "changed_docs": len(corpus.changed),
        "buckets_for_files_variants": buckets,
        "generate_seconds": corpus.gen_seconds,
        "uncompressed_arrow_bytes": corpus.full.nbytes,
        "versions": {
            "python": sys.version.split()[0],
            "pyarrow": pa.__version__,
            "pyiceberg": pyiceberg.__version__,
            "deltalake": deltalake.__version__,
            "duckdb": duckdb.__version__,
        },
        "loadavg_start": os.getloadavg(),
        "variants": {},
    }
    print(json.dumps({k: v for k, v in results.items() if k != "variants"}), flush=True)
    for n in names:
        results["variants"][n] = run_variant(n, corpus, work, buckets, args.repeats)
    if not args.no_extras:
        results["concurrency"] = {}
        results["kill"] = {}
        for n in names:
            if (n.startswith("plain-B") and n != f"plain-B{buckets}") or n == "plain-mor":
                continue
            results["concurrency"][n] = concurrency(n, corpus, work, buckets)
            print("  concurrency", n, results["concurrency"][n], flush=True)
            incr = statistics.median(
                x["incremental"]["seconds"] for x in results["variants"][n]["repeats"]
            )
            delays = [round(incr * f, 3) for f in (0.05, 0.3, 0.6, 0.9)]
            results["kill"][n] = kill_test(n, corpus, work, buckets, delays)
            print("  kill", n, results["kill"][n], flush=True)
        results["probes"] = probes(work, corpus)
        print("  probes", results["probes"], flush=True)
    results["loadavg_end"] = os.getloadavg()
    table = summarize(results)
    print(table)
    out = Path(args.out or Path(__file__).with_name(f"results-{args.docs}.json"))
    out.write_text(json.dumps(results, indent=1, sort_keys=True, default=str) + "\n")
    out.with_suffix(".md").write_text(table + "\n")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
