"""``sync`` brings a store to exactly an output's chunks, embedding each new text once.

Every test runs on both stores: LanceDB in a folder and PostgreSQL + pgvector on a server
the suite starts (tests/sync/conftest.py). The outputs are real ``run --update`` tables of
generated Markdown; the embedder is a counting stand-in (a text's vector is its blake3).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kebab_chunk.errors import UsageError
from kebab_chunk.pipeline import run
from kebab_chunk.sync import EmbeddingCache, sync
from kebab_chunk.sync.store import VectorStore
from tests.beam.helpers import quiet_beam
from tests.incremental.corpus import edit_one_paragraph, write_corpus
from tests.sync.helpers import (
    RUNNER,
    STORES,
    CountingEmbedder,
    Recording,
    assert_store_equals,
    expected_rows,
    make_store,
)

pytestmark = pytest.mark.slow
quiet_beam()


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], VectorStore]:
    return make_store(request.param, request, tmp_path)


def _update(corpus: Path, table: Path, labels: list[str] | None = None) -> None:
    run(str(corpus), str(table), labels=labels, update=True, beam_args=RUNNER)


def test_sync_fills_an_empty_store_and_a_second_sync_does_nothing(
    store: Callable[[], VectorStore], tmp_path: Path
) -> None:
    corpus = write_corpus(tmp_path / "corpus", 4, seed=3)
    _update(corpus, tmp_path / "table")
    counting, cache = CountingEmbedder(), EmbeddingCache(tmp_path / "cache.sqlite3")
    report = sync(tmp_path / "table", store(), embedder=counting.embedder, cache=cache)
    want = expected_rows(tmp_path / "table")
    target = store()
    target.open(8, "fake@1")
    assert_store_equals(target, want)
    assert report.chunks == report.upserted == len(want) > 0
    # Each distinct text embedded once; texts shared by two chunks once in all.
    assert set(counting.calls) == {w["text"] for w in want.values()}
    assert max(counting.calls.values()) == 1
    assert report.embedded == len(counting.calls)
    state = target.state()
    assert state is not None and state.snapshot == 1 and state.labels == ("md-heading-v3",)

    before = target.rows()
    recording = Recording(store())
    again = sync(tmp_path / "table", recording, embedder=counting.embedder, cache=cache)
    assert (again.embedded, again.upserted, again.metadata_updated, again.deleted) == (0, 0, 0, 0)
    assert again.wrote is False and again.unchanged == len(want)
    assert recording.writes == []  # not even the state
    assert target.rows() == before


def test_edits_moves_and_deletions_write_only_the_change(
    store: Callable[[], VectorStore], tmp_path: Path
) -> None:
    corpus = write_corpus(tmp_path / "corpus", 5, seed=4)
    table = tmp_path / "table"
    _update(corpus, table)
    counting, cache = CountingEmbedder(), EmbeddingCache(tmp_path / "cache.sqlite3")
    sync(table, store(), embedder=counting.embedder, cache=cache)
    first = set(counting.calls)

    docs = sorted(corpus.glob("*.md"))
    # A new first section moves every later chunk of the document (same ids, new position).
    docs[0].write_text("# Fresh top\n\nA new opening paragraph.\n\n" + docs[0].read_text())
    edit_one_paragraph(docs[1])
    docs[2].unlink()
    _update(corpus, table)
    report = sync(table, store(), embedder=counting.embedder, cache=cache)
    want = expected_rows(table)
    target = store()
    target.open(8, "fake@1")
    assert_store_equals(target, want)
    assert report.metadata_updated > 0  # the moved chunks: no new vector
    assert report.deleted > 0
    new_texts = {w["text"] for w in want.values()} - first
    assert report.embedded == len(new_texts) > 0
    assert max(counting.calls.values()) == 1  # nothing embedded twice across runs


def test_a_missed_run_and_a_rollback_converge(
    store: Callable[[], VectorStore], tmp_path: Path
) -> None:
    corpus = write_corpus(tmp_path / "corpus", 4, seed=5)
    table = tmp_path / "table"
    _update(corpus, table)
    counting, cache = CountingEmbedder(), EmbeddingCache(tmp_path / "cache.sqlite3")
    sync(table, store(), embedder=counting.embedder, cache=cache)
    for doc in sorted(corpus.glob("*.md"))[:2]:
        edit_one_paragraph(doc)
        _update(corpus, table)  # snapshots 2 and 3; the store never saw 2
    sync(table, store(), embedder=counting.embedder, cache=cache)
    target = store()
    target.open(8, "fake@1")
    assert_store_equals(target, expected_rows(table))
    # Back to snapshot 1: every vector comes from the cache, none is embedded again.
    report = sync(table, store(), embedder=counting.embedder, cache=cache, snapshot=1)
    assert_store_equals(target, expected_rows(table, snapshot=1))
    assert report.embedded == 0 and report.cached == report.upserted > 0
    state = target.state()
    assert state is not None and state.snapshot == 1


def test_a_half_written_store_is_completed(
    store: Callable[[], VectorStore], tmp_path: Path
) -> None:
    corpus = write_corpus(tmp_path / "corpus", 4, seed=6)
    table = tmp_path / "table"
    _update(corpus, table)
    counting = CountingEmbedder()
    sync(table, store(), embedder=counting.embedder, cache=EmbeddingCache())
    target = store()
    target.open(8, "fake@1")
    rows = target.rows()
    target.delete([r.chunk_id for r in rows[: len(rows) // 2]])  # as if a sync died
    report = sync(table, store(), embedder=counting.embedder, cache=EmbeddingCache())
    assert_store_equals(target, expected_rows(table))
    assert report.upserted == len(rows) // 2


def test_labels_are_chosen_or_refused(store: Callable[[], VectorStore], tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus", 3, seed=7)
    table = tmp_path / "table"
    _update(corpus, table, labels=["md-heading-v3", "hybrid-v4"])
    counting = CountingEmbedder()
    # Markdown's default label is md-heading-v3: hybrid-v4's chunks stay out.
    report = sync(table, store(), embedder=counting.embedder, cache=EmbeddingCache())
    target = store()
    target.open(8, "fake@1")
    assert report.labels == ("md-heading-v3",)
    assert_store_equals(target, expected_rows(table, labels=["md-heading-v3"]))
    # Switching the store to the other label swaps every chunk.
    sync(table, store(), labels=["hybrid-v4"], embedder=counting.embedder, cache=EmbeddingCache())
    assert_store_equals(target, expected_rows(table, labels=["hybrid-v4"]))
    with pytest.raises(UsageError, match=r"not chunked with pdf-page-v3; its labels are"):
        sync(table, store(), labels=["pdf-page-v3"], embedder=counting.embedder)


def test_a_store_of_another_embedder_is_refused(
    store: Callable[[], VectorStore], tmp_path: Path
) -> None:
    corpus = write_corpus(tmp_path / "corpus", 2, seed=8)
    table = tmp_path / "table"
    _update(corpus, table)
    sync(table, store(), embedder=CountingEmbedder().embedder, cache=EmbeddingCache())
    other = CountingEmbedder(id="other-model@2")
    with pytest.raises(UsageError, match="other-model@2"):
        sync(table, store(), embedder=other.embedder, cache=EmbeddingCache())
    assert not other.calls


def test_an_output_written_before_the_chunk_index_syncs_from_its_records(
    tmp_path: Path,
) -> None:
    """Documents files without ``chunk_index`` (older outputs): the index is rebuilt from
    the chunk records, so nothing is left out of the store."""
    import json

    import pyarrow.parquet as pq
    from blake3 import blake3

    from kebab_chunk.output.schema import parquet_bytes
    from kebab_chunk.sync.stores.lance import LanceStore

    corpus = write_corpus(tmp_path / "corpus", 3, seed=9)
    out = tmp_path / "plain"
    run(str(corpus), str(out), beam_args=RUNNER)
    manifest = json.loads((out / "manifest.json").read_text())
    for entry in manifest["outputs"]["documents"]:
        part = out / entry["path"]
        data = parquet_bytes(pq.read_table(part).drop_columns(["chunk_index"]))
        part.write_bytes(data)
        entry.update(bytes=len(data), blake3=blake3(data).hexdigest())
    (out / "manifest.json").write_text(json.dumps(manifest))
    report = sync(out, LanceStore(tmp_path / "lance"), embedder=CountingEmbedder().embedder,
                  cache=EmbeddingCache())
    target = LanceStore(tmp_path / "lance")
    target.open(8, "fake@1")
    assert_store_equals(target, expected_rows(out))
    assert report.upserted == len(expected_rows(out)) > 0
