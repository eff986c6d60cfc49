"""The embedded default store: a LanceDB table in a local folder (no server).

Why LanceDB (docs/internals/decisions.md, "Issue 31: LanceDB is the embedded store"): its tables
are Arrow (what the output already is), merge-insert by key updates some columns of
existing rows (metadata without re-embedding), deletes take a predicate, each write is a
new table version, and the install is one wheel beside pyarrow; any tool that reads Lance
(lancedb, DuckDB's lance extension, pylance) reads the store.

Layout: table ``<table>`` with ``chunk_id`` (key), ``label``, ``content_digest``,
``record_digest``, ``text`` (the embedded text), ``vector`` (float32 x dimensions) and the
record's flat metadata as columns (kebab_chunk.integrations._common, ``FLAT_KEYS``:
scalars only, so a ``where`` clause filters on any of them). The embedder id is in the
table's schema metadata (``kebab.embedder``); the sync state is the one row of the table
``<table>__kebab_sync``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pyarrow as pa

from kebab_chunk.errors import MissingDependencyError, UsageError
from kebab_chunk.integrations._common import FLAT_KEYS, as_record, flat_metadata
from kebab_chunk.sync.store import StoredRow, StoreRow, SyncState

__all__ = ["LanceStore"]

_INSTALL = "pip install 'kebab-chunk[sync]'"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_INT_KEYS = frozenset(
    {"position", "token_estimate", "span_count", "page", "page_end", "line_start", "line_end",
     "char_start", "char_end"}
)
_META_KEYS = tuple(k for k in FLAT_KEYS if k != "chunk_id")
_EMBEDDER_KEY = b"kebab.embedder"
_STATE_SCHEMA = pa.schema(
    [("output", pa.string()), ("snapshot", pa.int64()), ("labels", pa.string()),
     ("embedder", pa.string())]
)


def _schema(dimensions: int, embedder: str) -> pa.Schema:
    fields = [
        pa.field("chunk_id", pa.string(), nullable=False),
        pa.field("label", pa.string()),
        pa.field("content_digest", pa.string()),
        pa.field("record_digest", pa.string()),
        pa.field("text", pa.string()),
        pa.field("vector", pa.list_(pa.float32(), dimensions)),
        *(pa.field(k, pa.int64() if k in _INT_KEYS else pa.string()) for k in _META_KEYS),
    ]
    return pa.schema(fields, metadata={_EMBEDDER_KEY: embedder.encode("utf-8")})


class LanceStore:
    """Chunks in the LanceDB table ``table`` of the folder ``path``."""

    kind = "lancedb"

    def __init__(self, path: str | os.PathLike[str], table: str = "kebab_chunks") -> None:
        if not _NAME.match(table):
            raise UsageError(
                f"store table name {table!r} is not a plain identifier; use letters, digits "
                "and underscores, starting with a letter."
            )
        try:
            import lancedb
        except ImportError as exc:
            raise MissingDependencyError(
                f"the LanceDB store needs the sync extra; install it with {_INSTALL}."
            ) from exc
        self.path = os.fspath(path)
        self.table_name = table
        # Interval 0: every read sees the latest version, even one another handle wrote.
        self._db = lancedb.connect(self.path, read_consistency_interval=timedelta(0))
        self._table: Any = None
        self._schema: pa.Schema | None = None

    def _names(self) -> set[str]:
        listed = self._db.list_tables()
        names = getattr(listed, "tables", listed)
        return set(names)

    def open(self, dimensions: int, embedder: str) -> None:
        want = _schema(dimensions, embedder)
        if self.table_name not in self._names():
            self._table = self._db.create_table(self.table_name, schema=want)
        else:
            self._table = self._db.open_table(self.table_name)
            have = self._table.schema
            size = have.field("vector").type.list_size
            theirs = (have.metadata or {}).get(_EMBEDDER_KEY, b"").decode("utf-8")
            if size != dimensions or theirs != embedder:
                raise UsageError(
                    f"the store table {self.table_name!r} in {self.path} holds {size}-float "
                    f"vectors of {theirs or 'an unknown embedder'}, not {dimensions}-float "
                    f"vectors of {embedder}; sync into another table or use that embedder."
                )
        self._schema = want

    def _opened(self) -> Any:
        if self._table is None:
            raise UsageError("the store is not open; call open(dimensions, embedder) first.")
        return self._table

    def state(self) -> SyncState | None:
        name = f"{self.table_name}__kebab_sync"
        if name not in self._names():
            return None
        rows = self._db.open_table(name).to_arrow().to_pylist()
        if not rows:
            return None
        row = rows[0]
        return SyncState(
            row["output"], int(row["snapshot"]), tuple(json.loads(row["labels"])), row["embedder"]
        )

    def set_state(self, state: SyncState) -> None:
        row = pa.table(
            {"output": [state.output], "snapshot": [state.snapshot],
             "labels": [json.dumps(list(state.labels))], "embedder": [state.embedder]},
            schema=_STATE_SCHEMA,
        )
        name = f"{self.table_name}__kebab_sync"
        mode = "overwrite" if name in self._names() else "create"
        self._db.create_table(name, data=row, mode=mode)

    def digests(self) -> dict[str, tuple[str, str]]:
        table = self._opened().to_arrow().select(["chunk_id", "content_digest", "record_digest"])
        return {
            r["chunk_id"]: (r["content_digest"], r["record_digest"]) for r in table.to_pylist()
        }

    def _arrow(self, rows: Sequence[StoreRow], with_vector: bool) -> pa.Table:
        assert self._schema is not None
        columns: dict[str, list[Any]] = {
            name: [] for name in self._schema.names if with_vector or name != "vector"
        }
        for row in rows:
            meta = flat_metadata(as_record(row.record))
            columns["chunk_id"].append(row.chunk_id)
            columns["label"].append(row.label)
            columns["content_digest"].append(row.content_digest)
            columns["record_digest"].append(row.record_digest)
            columns["text"].append(row.text)
            if with_vector:
                if row.vector is None:
                    raise ValueError(f"upsert of {row.chunk_id} has no vector")
                columns["vector"].append(list(row.vector))
            for key in _META_KEYS:
                columns[key].append(meta[key])
        schema = self._schema if with_vector else pa.schema(
            [f for f in self._schema if f.name != "vector"]
        )
        return pa.table(columns, schema=schema)

    def upsert(self, rows: Sequence[StoreRow]) -> None:
        if rows:
            data = self._arrow(rows, with_vector=True)
            (self._opened().merge_insert("chunk_id").when_matched_update_all()
             .when_not_matched_insert_all().execute(data))

    def update_metadata(self, rows: Sequence[StoreRow]) -> None:
        if rows:
            data = self._arrow(rows, with_vector=False)
            self._opened().merge_insert("chunk_id").when_matched_update_all().execute(data)

    def delete(self, chunk_ids: Sequence[str]) -> None:
        if chunk_ids:
            quoted = ", ".join("'" + i.replace("'", "''") + "'" for i in chunk_ids)
            self._opened().delete(f"chunk_id IN ({quoted})")

    def rows(self) -> list[StoredRow]:
        table = self._opened().to_arrow().sort_by("chunk_id")
        return [
            StoredRow(
                r["chunk_id"], r["label"], r["content_digest"], r["record_digest"], r["text"],
                {"chunk_id": r["chunk_id"], **{k: r[k] for k in _META_KEYS}},
                tuple(float(x) for x in r["vector"]),
            )
            for r in table.to_pylist()
        ]

    def close(self) -> None:
        self._table = None
