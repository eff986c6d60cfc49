"""The names of an output directory, in one place (docs/contract.md, "Output layout").

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

__all__ = [
    "CHUNKS_DIR",
    "CONTENT",
    "DOCUMENTS_DIR",
    "ERRORS_DIR",
    "LOCK_NAME",
    "MANIFEST_NAME",
    "TEMP_PREFIX",
    "join",
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
