"""An on-disk cache of embeddings, so no text is embedded twice by one embedder.

Keyed by (embedder id, blake3 of the embedded text): a vector depends on nothing else, so
the cache is right by construction. A chunk id whose text changed (``modified``) misses;
the same text under a new label, a new chunk id after a rename, another output or another
store hits (docs/internals/decisions.md, "The embedding cache is keyed by text, not chunk id").
One SQLite file (stdlib ``sqlite3``, WAL, one writer at a time): the default lives in
``$KEBAB_CHUNK_CACHE_DIR``, else ``$XDG_CACHE_HOME/kebab-chunk`` (``~/.cache`` without it),
and is shared by every sync of the user. Vectors are stored as little-endian float32,
whatever the embedder returned.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from array import array
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import blake3

__all__ = ["EmbeddingCache", "default_cache_path", "text_key"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors ("
    " embedder TEXT NOT NULL, text_key TEXT NOT NULL, vector BLOB NOT NULL,"
    " PRIMARY KEY (embedder, text_key)) WITHOUT ROWID"
)
_BATCH = 500  # SQLite's default limit on host parameters is 32766; stay far below


def default_cache_path() -> Path:
    """``$KEBAB_CHUNK_CACHE_DIR/embeddings.sqlite3``, else
    ``$XDG_CACHE_HOME/kebab-chunk/embeddings.sqlite3`` (``~/.cache`` without it)."""
    if own := os.environ.get("KEBAB_CHUNK_CACHE_DIR"):
        return Path(own) / "embeddings.sqlite3"
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "kebab-chunk" / "embeddings.sqlite3"


def text_key(text: str) -> str:
    """The cache key of an embedded text."""
    return blake3.blake3(text.encode("utf-8")).hexdigest()[:32]


def _pack(vector: Iterable[float]) -> bytes:
    values = array("f", (float(v) for v in vector))
    if sys.byteorder == "big":  # pragma: no cover - no big-endian CI machine
        values.byteswap()
    return values.tobytes()


def _unpack(blob: bytes) -> tuple[float, ...]:
    values = array("f")
    values.frombytes(blob)
    if sys.byteorder == "big":  # pragma: no cover
        values.byteswap()
    return tuple(values)


class EmbeddingCache:
    """Vectors by (embedder id, text key); ``path=None`` keeps them in memory only."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        target = ":memory:"
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            target = os.fspath(path)
        self.path = None if path is None else Path(path)
        self._db = sqlite3.connect(target)
        if path is not None:
            self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        self._db.commit()

    def get_many(self, embedder: str, keys: Sequence[str]) -> dict[str, tuple[float, ...]]:
        """The cached vectors among ``keys`` (text keys), by key."""
        found: dict[str, tuple[float, ...]] = {}
        unique = sorted(set(keys))
        for start in range(0, len(unique), _BATCH):
            part = unique[start : start + _BATCH]
            marks = ",".join("?" * len(part))
            rows = self._db.execute(
                "SELECT text_key, vector FROM vectors"
                f" WHERE embedder = ? AND text_key IN ({marks})",
                (embedder, *part),
            )
            found.update((key, _unpack(blob)) for key, blob in rows)
        return found

    def put_many(self, embedder: str, vectors: Mapping[str, Iterable[float]]) -> None:
        """Store vectors by text key (one transaction; an existing key is kept)."""
        with self._db:
            self._db.executemany(
                "INSERT OR IGNORE INTO vectors (embedder, text_key, vector) VALUES (?, ?, ?)",
                ((embedder, key, _pack(vector)) for key, vector in vectors.items()),
            )

    def __len__(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM vectors").fetchone()[0])

    def close(self) -> None:
        self._db.close()
