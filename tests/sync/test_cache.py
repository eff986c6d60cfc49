"""The embedding cache: vectors by (embedder, text), kept across instances of one file."""

from __future__ import annotations

from pathlib import Path

import pytest

from kebab_chunk.sync.cache import EmbeddingCache, default_cache_path, text_key


def test_vectors_round_trip_as_float32_and_persist(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    cache = EmbeddingCache(path)
    cache.put_many("m@1", {text_key("a"): [0.5, -1.25, 3.0], text_key("b"): [1, 2, 3]})
    cache.close()
    again = EmbeddingCache(path)
    found = again.get_many("m@1", [text_key("a"), text_key("b"), text_key("c")])
    assert found == {text_key("a"): (0.5, -1.25, 3.0), text_key("b"): (1.0, 2.0, 3.0)}
    assert again.get_many("m@2", [text_key("a")]) == {}  # another embedder's vectors differ
    assert len(again) == 2


def test_an_existing_vector_is_kept_and_many_keys_are_read_in_batches(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "c.sqlite3")
    cache.put_many("m", {"k": [1.0]})
    cache.put_many("m", {"k": [2.0]})
    assert cache.get_many("m", ["k"]) == {"k": (1.0,)}
    many = {text_key(str(i)): [float(i)] for i in range(2000)}
    cache.put_many("m", many)
    assert cache.get_many("m", list(many)) == {k: tuple(v) for k, v in many.items()}


def test_the_default_file_follows_the_environment(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    monkeypatch.setenv("KEBAB_CHUNK_CACHE_DIR", str(tmp_path / "own"))
    assert default_cache_path() == tmp_path / "own" / "embeddings.sqlite3"
    monkeypatch.delenv("KEBAB_CHUNK_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_path() == tmp_path / "xdg" / "kebab-chunk" / "embeddings.sqlite3"
