"""The names of an output directory, in one place (docs/internals/contract.md, "Output layout").

::

    OUTPUT/
      chunks/chunker_version=<label>/part-<i>-of-<n>.parquet
      errors/part-<i>-of-<n>.parquet
      documents/part-<i>-of-<n>.parquet   one row per matched file
      manifest.json          written last; its absence means an unfinished run
      _snapshots/<n>.json    an updated output's snapshots (kebab_chunk/output/snapshots.py)
      _deletes/s<n>.parquet  source_uris whose earlier rows snapshot n removed
      changes/s<n>.parquet   snapshot n's change feed (kebab_chunk/output/changes.py)
      _kebab.lock            a running job's claim (local outputs only)
      _tmp-*                 a running (or killed) job's spill files and temporary manifest
"""

from __future__ import annotations

import math

from kebab_chunk.model.ids import doc_id

__all__ = [
    "CHUNKS_DIR",
    "CHUNK_ROWS_PER_FILE",
    "CONTENT",
    "DOCUMENTS_DIR",
    "DOCUMENT_ROWS_PER_FILE",
    "ERRORS_DIR",
    "LOCK_NAME",
    "MANIFEST_NAME",
    "TEMP_PREFIX",
    "chunk_shard",
    "document_shard",
    "join",
    "part_name",
    "shard_count",
]

CHUNKS_DIR = "chunks"
ERRORS_DIR = "errors"
DOCUMENTS_DIR = "documents"
MANIFEST_NAME = "manifest.json"
#: A running job's claim on a local output; neither content nor deleted by ``--overwrite``.
LOCK_NAME = "_kebab.lock"
#: Top-level name prefix of a run's temporary entries (spill directories, the manifest
#: before its rename); readers and ``--overwrite`` treat anything under it as disposable.
TEMP_PREFIX = "_tmp-"
#: The top-level entries a finished output consists of.
CONTENT = frozenset(
    {CHUNKS_DIR, DOCUMENTS_DIR, ERRORS_DIR, MANIFEST_NAME, "_snapshots", "_deletes", "changes"}
)


def join(root: str, *parts: str) -> str:
    """``root/part/...`` for local paths and URIs alike (no trailing-slash doubling)."""
    return "/".join([root.rstrip("/"), *parts])


#: Chunk rows per part file of a label (``n = shard_count(rows, CHUNK_ROWS_PER_FILE)``).
CHUNK_ROWS_PER_FILE = 50_000
#: Documents-table rows per part file. A part is written from one GroupByKey group, which
#: Beam's Flink runner serialises as one element in the TaskManager's heap: with the chunk
#: index a row is ~1-2 KB, and 100,000 rows per group ran a 2 GB TaskManager out of heap
#: (docs/internals/decisions.md, "Documents part files hold 10,000 rows").
DOCUMENT_ROWS_PER_FILE = 10_000


def part_name(index: int, count: int) -> str:
    return f"part-{index:05d}-of-{count:05d}.parquet"


def shard_count(rows: int, rows_per_file: int) -> int:
    """How many part files ``rows`` rows take (at least one, so every table exists)."""
    return max(1, math.ceil(rows / rows_per_file))


def chunk_shard(chunk_id: str | bytes, count: int) -> int:
    """The part file of a chunk record: ``int(chunk_id[:12], 16) % count`` (stable)."""
    return 0 if count == 1 else int(chunk_id[:12], 16) % count


def document_shard(source_uri: str, count: int) -> int:
    """The documents part file of a row: ``int(doc_id[:12], 16) % count`` (stable)."""
    return 0 if count == 1 else int(doc_id(source_uri)[:12], 16) % count
