"""Property: for any sequence of corpus changes (edits, renames, deletions, additions, a
label bump), each followed by ``run --update``, replaying the change feeds on snapshot 1's
records gives exactly the last snapshot, and the last snapshot reads as a full run.

Each example runs the pipeline several times, so the example budget is a tenth of the
profile's (6 in CI, 30 with ``KEBAB_HYPOTHESIS_PROFILE=local``).
"""

from __future__ import annotations

import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kebab_chunk.output.changes import REMOVED
from kebab_chunk.output.finished import open_output
from kebab_chunk.output.reader import read_chunks
from kebab_chunk.pipeline import run
from tests.beam.helpers import QUIET, quiet_beam
from tests.beam.runners import CONFIGS
from tests.incremental.corpus import apply_op, write_corpus

pytestmark = pytest.mark.slow
quiet_beam()

RUNNER = [*CONFIGS["in_memory"], *QUIET]
LABELS = (None, ["md-heading-v3", "hybrid-v4"])
_OPS = st.sampled_from(["edit", "rename", "delete", "add", "relabel", "nothing"])


def _records(output: Path, n: int | None) -> dict[tuple[str, str], dict[str, Any]]:
    path, manifest = open_output(str(output), "output", snapshot=n)
    rows = read_chunks(path, manifest=manifest).to_pylist()
    return {(r["chunker_version"], r["chunk_id"]): r for r in rows}


@settings(max_examples=max(2, settings().max_examples // 10))
@given(ops=st.lists(_OPS, min_size=1, max_size=4), seed=st.integers(0, 2**16))
def test_replaying_the_change_feeds_gives_the_last_snapshot(ops: list[str], seed: int) -> None:
    rng = random.Random(seed)
    root = Path(tempfile.mkdtemp(prefix="kebab-update-prop-"))
    try:
        corpus = write_corpus(root / "corpus", 4, seed=seed)
        table = root / "table"
        labels = 0
        run(str(corpus), str(table), update=True, beam_args=RUNNER)
        state = _records(table, 1)
        for step, op in enumerate(ops, start=2):
            if op == "relabel":
                labels = 1 - labels
            apply_op(op, corpus, rng, step)
            manifest = run(
                str(corpus), str(table), labels=LABELS[labels], update=True, beam_args=RUNNER
            ).manifest
            assert manifest["snapshot"]["id"] == step
            records = _records(table, step)
            changes = manifest["snapshot"]["changes"]
            assert changes["complete"] is True
            for row in pq.read_table(table / changes["path"]).to_pylist():
                key = (row["chunker_version"], row["chunk_id"])
                if row["change"] == REMOVED:
                    del state[key]
                else:
                    state[key] = records[key]
            assert state == records, (ops, step)
        full = root / "full"
        run(str(corpus), str(full), labels=LABELS[labels], beam_args=RUNNER)
        assert _records(table, None) == _records(full, None)
    finally:
        shutil.rmtree(root, ignore_errors=True)
