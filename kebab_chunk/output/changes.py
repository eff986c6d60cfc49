"""The change feed of a snapshot: which chunk ids an update added, removed or changed.

Each snapshot an update commits (kebab_chunk/output/snapshots.py) lists one file
``changes/s<n>.parquet``, one row per chunk record that differs between the base snapshot
and snapshot ``n``, per label (docs/internals/contract.md, "Change feed"):

* ``snapshot`` — n, the snapshot that made the change;
* ``chunker_version`` — the label; ``chunk_id`` — the record's id under it;
* ``doc_id`` / ``source_uri`` — its document;
* ``change`` — ``added`` (a new id: embed it), ``removed`` (an id gone: delete it from
  the index), ``modified`` (same id, other embedded content: ``text``, ``heading_path``,
  ``captions`` or ``token_estimate``; embed again) or ``relocated`` (same id and content,
  other metadata such as ``position`` or ``source_spans``: update the stored metadata).

Computed from the documents rows' chunk index (``content_digest`` and ``record_digest``
per record) of the documents whose rows the snapshot removed and of those it wrote, so
no chunk record is read. Applying the feeds of snapshots 2..n in order to the ids of
snapshot 1 gives the ids of snapshot n, each with the record snapshot n holds. An id
unchanged in content and metadata is not listed, even when its document was re-chunked.
Rows sorted by (chunker_version, chunk_id). A base row written before the chunk index
existed has no index: its removed ids cannot be listed, which the snapshot says with
``changes.complete = false``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

__all__ = [
    "ADDED",
    "CHANGES_DIR",
    "CHANGE_SCHEMA",
    "MODIFIED",
    "RELOCATED",
    "REMOVED",
    "change_rows",
    "changes_table",
]

CHANGES_DIR = "changes"
ADDED, REMOVED, MODIFIED, RELOCATED = "added", "removed", "modified", "relocated"

CHANGE_SCHEMA = pa.schema(
    [
        pa.field("snapshot", pa.int64(), nullable=False),
        pa.field("chunker_version", pa.string(), nullable=False),
        pa.field("chunk_id", pa.string(), nullable=False),
        pa.field("doc_id", pa.string()),
        pa.field("source_uri", pa.string(), nullable=False),
        pa.field("change", pa.string(), nullable=False),
    ]
)

_Key = tuple[str, str]
_Entry = tuple[str, str | None, str, str]  # (source_uri, doc_id, content, record)


def _entries(rows: Iterable[Mapping[str, Any]]) -> dict[_Key, _Entry]:
    found: dict[_Key, _Entry] = {}
    for row in rows:
        for e in row.get("chunk_index") or ():
            found[(str(e["label"]), str(e["chunk_id"]))] = (
                str(row["source_uri"]),
                row.get("doc_id"),
                str(e["content_digest"]),
                str(e["record_digest"]),
            )
    return found


def change_rows(
    snapshot: int, old: Iterable[Mapping[str, Any]], new: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The feed rows from the documents rows (``source_uri``, ``doc_id``, ``chunk_index``)
    removed (``old``) and written (``new``) by ``snapshot``; pure."""
    before, after = _entries(old), _entries(new)
    rows = []
    for key in sorted(before.keys() | after.keys()):
        was, now = before.get(key), after.get(key)
        if now is None:
            assert was is not None
            change, entry = REMOVED, was
        elif was is None:
            change, entry = ADDED, now
        elif was[2] != now[2]:
            change, entry = MODIFIED, now
        elif was[3] != now[3]:
            change, entry = RELOCATED, now
        else:
            continue
        label, chunk_id = key
        rows.append(
            {
                "snapshot": snapshot,
                "chunker_version": label,
                "chunk_id": chunk_id,
                "doc_id": entry[1],
                "source_uri": entry[0],
                "change": change,
            }
        )
    return rows


def changes_table(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=CHANGE_SCHEMA)
