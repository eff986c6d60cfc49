"""Property: after any sequence of corpus changes (edits, renames, deletions, additions, a
label change), each followed by ``run --update`` and a sync, the store holds exactly the
output's chunks, and no text is ever embedded twice (counted by the embedder).

Runs on LanceDB and on PostgreSQL + pgvector (the issue's two stores; Chroma runs the
fixed scenarios of test_sync.py). Each example runs the pipeline several times,
so the example budget is a tenth of the profile's (as tests/incremental's property).
"""

from __future__ import annotations

import random
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kebab_chunk.pipeline import run
from kebab_chunk.sync import EmbeddingCache, sync
from tests.beam.helpers import quiet_beam
from tests.incremental.corpus import apply_op, write_corpus
from tests.sync.helpers import (
    RUNNER,
    CountingEmbedder,
    assert_store_equals,
    expected_rows,
    make_store,
)

pytestmark = pytest.mark.slow
quiet_beam()

LABELS = (None, ["hybrid-v4"])
_OPS = st.sampled_from(["edit", "rename", "delete", "add", "relabel", "nothing"])


@pytest.mark.parametrize("kind", ["lancedb", "pgvector"])  # Chroma: tests/sync/test_sync.py
def test_the_store_follows_any_sequence_of_runs(
    kind: str, request: pytest.FixtureRequest
) -> None:
    @settings(
        max_examples=max(2, settings().max_examples // 10),
        suppress_health_check=[HealthCheck.function_scoped_fixture],
        deadline=None,
    )
    @given(ops=st.lists(_OPS, min_size=1, max_size=4), seed=st.integers(0, 2**16))
    def check(ops: list[str], seed: int) -> None:
        rng = random.Random(seed)
        root = Path(tempfile.mkdtemp(prefix="kebab-sync-prop-"))
        try:
            corpus = write_corpus(root / "corpus", 3, seed=seed)
            table = root / "table"
            store = make_store(kind, request, root)
            counting, cache = CountingEmbedder(), EmbeddingCache(root / "cache.sqlite3")
            labels = 0
            run(str(corpus), str(table), update=True, beam_args=RUNNER)
            sync(table, store(), embedder=counting.embedder, cache=cache)
            for step, op in enumerate(ops, start=2):
                if op == "relabel":
                    labels = 1 - labels
                apply_op(op, corpus, rng, step)
                run(str(corpus), str(table), labels=LABELS[labels], update=True,
                    beam_args=RUNNER)
                report = sync(table, store(), embedder=counting.embedder, cache=cache)
                target = store()
                target.open(8, "fake@1")
                assert_store_equals(target, expected_rows(table))
                assert report.snapshot == step
                if op == "nothing":
                    assert not report.wrote and report.embedded == 0
            assert counting.calls and max(counting.calls.values()) == 1
        finally:
            shutil.rmtree(root, ignore_errors=True)

    check()
