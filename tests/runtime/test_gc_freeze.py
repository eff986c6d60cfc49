"""The cycle collector skips what a pipeline process holds for the whole run.

kebab_chunk/runtime/gc_freeze.py: the helper freezes what its set-up loaded, and a job
freezes its launching process while it runs (the in-memory DirectRunner works there), then
gives every object back to the collector, so the user's process is left as it was.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from kebab_chunk.pipeline import run
from kebab_chunk.runtime.gc_freeze import frozen_while_running
from kebab_chunk.runtime.supervisor import IsolatedRunner
from tests.beam.helpers import QUIET
from tests.beam.runners import CONFIGS
from tests.runtime.supervisor_tasks import ScriptedTask

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "corpus"


def test_the_helper_works_with_its_set_up_frozen() -> None:
    runner = IsolatedRunner(ScriptedTask(), budgets_s=(30.0,), max_memory_mb=None)
    runner.start()
    try:
        done = runner.submit(("a", "frozen")) + runner.drain()
    finally:
        runner.close()
    assert [d.result[0] for d in done] == ["a"]
    assert done[0].result[1] > 1000  # the modules the helper imported, at least


def test_the_launcher_is_frozen_only_while_the_job_runs(tmp_path: Path) -> None:
    gc.unfreeze()
    seen: list[int] = []
    with frozen_while_running():
        seen.append(gc.get_freeze_count())
    assert seen[0] > 1000 and gc.get_freeze_count() == 0
    with pytest.raises(ValueError), frozen_while_running():
        raise ValueError("a job that fails")
    assert gc.get_freeze_count() == 0
    run(str(CORPUS), str(tmp_path / "out"), beam_args=[*CONFIGS["in_memory"], *QUIET])
    assert gc.get_freeze_count() == 0  # the user's process is given back unfrozen
