"""What the sync tests share: a counting embedder, store factories, the output's truth."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from blake3 import blake3

from kebab_chunk.integrations._common import flat_metadata
from kebab_chunk.output.finished import open_output
from kebab_chunk.output.reader import read_chunks
from kebab_chunk.output.schema import row_to_chunk
from kebab_chunk.sync import Embedder, callable_embedder
from kebab_chunk.sync.store import VectorStore
from kebab_chunk.sync.stores.lance import LanceStore
from tests.beam.helpers import QUIET

RUNNER = ["--direct_running_mode=in_memory", *QUIET]
DIMENSIONS = 8
STORES = ("lancedb", "pgvector", "chroma")
_tables = itertools.count()


def vector_of(text: str) -> list[float]:
    """A deterministic stand-in vector: the text's blake3 bytes scaled to [0, 1]."""
    return [b / 255 for b in blake3(text.encode("utf-8")).digest()[:DIMENSIONS]]


class CountingEmbedder:
    """Counts every text it is asked to embed (the tests' 'embedded exactly once')."""

    def __init__(self, id: str = "fake@1") -> None:
        self.calls: Counter[str] = Counter()
        self.embedder: Embedder = callable_embedder(self._embed, id=id, dimensions=DIMENSIONS)

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.update(texts)
        return [vector_of(t) for t in texts]


def make_store(kind: str, request: pytest.FixtureRequest, tmp: Path) -> Callable[[], VectorStore]:
    """A factory of handles on one fresh store of ``kind`` (every call: the same store)."""
    table = f"t{next(_tables)}_{kind}"
    if kind == "lancedb":
        return lambda: LanceStore(tmp / "lance", table=table)
    if kind == "chroma":
        from kebab_chunk.sync.stores.chroma import ChromaStore

        return lambda: ChromaStore(tmp / "chroma", table=table)
    dsn = request.getfixturevalue("pg_dsn")
    from kebab_chunk.sync.stores.pgvector import PgVectorStore

    return lambda: PgVectorStore(dsn, table=table)


def expected_rows(output: Path, labels: Sequence[str] | None = None,
                  snapshot: int | None = None) -> dict[str, dict[str, Any]]:
    """chunk_id -> what a store must hold for it, from the output's chunk records."""
    root, manifest = open_output(str(output), "output", snapshot=snapshot)
    chunks = [row_to_chunk(r) for r in read_chunks(root, manifest=manifest).to_pylist()]
    return {
        c.chunk_id: {"text": c.embed_text, "label": c.chunker_version, "chunk": c}
        for c in chunks
        if labels is None or c.chunker_version in labels
    }


def assert_store_equals(store: VectorStore, want: dict[str, dict[str, Any]]) -> None:
    """The store holds exactly ``want``'s ids, each with its text, label, metadata in the
    store's convention and the vector of its text."""
    rows = store.rows()
    assert [r.chunk_id for r in rows] == sorted(want)
    for row in rows:
        expected = want[row.chunk_id]
        chunk = expected["chunk"]
        assert row.text == expected["text"]
        assert row.label == expected["label"]
        if store.kind == "pgvector":
            assert dict(row.metadata) == chunk.model_dump(mode="json", exclude={"text"})
        else:
            assert dict(row.metadata) == flat_metadata(chunk)
        assert row.vector == pytest.approx(vector_of(row.text), abs=1e-6)
