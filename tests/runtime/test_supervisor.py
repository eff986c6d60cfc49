"""The supervisor of helper processes (kebab_chunk.runtime.supervisor): several elements in
flight, one blamed.

The runner sends elements ahead of the helper, in batches; a hang, a crash or running out
of memory must still fail exactly the element the helper was working on, every other
element of its batch and of the queue behind it must be done (again, where its outcome had
not been sent) by a fresh helper, and each element keeps its own budget. Budgets are per
stage. (The Beam DoFn that wires it is tested in
tests/beam/test_isolated_dofn.py.)
"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import pytest

from kebab_chunk.runtime import supervisor
from kebab_chunk.runtime.supervisor import (
    CRASH,
    RAISED,
    TIMEOUT,
    Failure,
    Finished,
    InlineRunner,
    IsolatedRunner,
)
from tests.beam.helpers import subprocess_env
from tests.runtime.supervisor_tasks import ScriptedTask


def _runner(
    budgets: tuple[float, ...] = (30.0,), max_in_flight: int = 16, batch: int = 16
) -> IsolatedRunner:
    runner = IsolatedRunner(
        ScriptedTask(),
        budgets_s=budgets,
        max_memory_mb=None,
        max_in_flight=max_in_flight,
        batch=batch,
    )
    runner.start()
    return runner


def _run_all(runner: IsolatedRunner, elements: list[tuple[Any, ...]]) -> list[Finished]:
    done: list[Finished] = []
    for i, element in enumerate(elements):
        done += runner.submit(element, context=i)
    done += runner.drain()
    return done


def test_every_element_comes_back_once_with_its_context() -> None:
    runner = _runner(max_in_flight=4)
    try:
        elements = [(f"e{i}", "ok") for i in range(50)]
        done = _run_all(runner, elements)
    finally:
        runner.close()
    assert sorted(d.context for d in done) == list(range(50))
    assert all(d.failure is None and d.result[0] == d.element[0] for d in done)
    assert len({d.result[1] for d in done}) == 1  # one long-lived helper did them all


@pytest.mark.parametrize(("action", "kind"), [("hang", TIMEOUT), ("crash", CRASH)])
def test_a_hang_or_crash_fails_only_its_element_and_the_queue_behind_it_is_redone(
    action: str, kind: str
) -> None:
    # The slow first element keeps the others queued (in flight) behind the bad one.
    elements = [("slow", "sleep", 0.5), ("bad", action), *[(f"e{i}", "ok") for i in range(6)]]
    runner = _runner(budgets=(2.0,))
    try:
        done = {d.element[0]: d for d in _run_all(runner, elements)}
    finally:
        runner.close()
    assert set(done) == {e[0] for e in elements}
    failure = done["bad"].failure
    assert failure is not None and (failure.kind, failure.stage, failure.note) == (kind, 0, None)
    if kind == CRASH:
        assert failure.detail == "helper exit code 9"  # what the scripted crash exits with
    others = [d for name, d in done.items() if name != "bad"]
    assert all(d.failure is None for d in others)
    before, after = done["slow"].result[1], {done[f"e{i}"].result[1] for i in range(6)}
    assert len(after) == 1 and before not in after  # one fresh helper did the rest


def test_budgets_are_per_stage_and_a_failure_names_its_stage_and_note() -> None:
    # Stage 0 may take longer than the stage-1 budget; a hang in stage 1 is stopped at its
    # own budget and carries the note the task gave when it entered stage 1.
    elements = [("slow", "sleep", 1.5), ("later", "hang-later"), ("after", "ok")]
    runner = _runner(budgets=(60.0, 1.0))
    started = time.monotonic()
    try:
        done = {d.element[0]: d for d in _run_all(runner, elements)}
    finally:
        runner.close()
    # stopped by the stage-1 budget, not the stage-0 budget (the margin is for a loaded machine)
    assert time.monotonic() - started < 30.0
    assert done["slow"].failure is None and done["after"].failure is None
    assert done["later"].failure == Failure(TIMEOUT, 1, "parsed later")


@pytest.mark.parametrize(
    ("action", "kind", "exc_type"),
    [
        ("hang-later", TIMEOUT, ""),
        ("crash-later", CRASH, ""),
        ("oom-later", RAISED, "MemoryError"),
    ],
)
def test_a_failure_inside_a_batch_names_its_element_stage_and_note(
    action: str, kind: str, exc_type: str
) -> None:
    # One batch: elements done before the bad one (their outcomes not sent yet: they were
    # quick) and after it. Each comes back once; only the bad one fails, in stage 1 with
    # the note it gave there.
    elements = [
        *[(f"a{i}", "ok") for i in range(5)],
        ("bad", action),
        *[(f"b{i}", "ok") for i in range(5)],
    ]
    runner = _runner(budgets=(30.0, 1.0))
    try:
        done = _run_all(runner, elements)
    finally:
        runner.close()
    assert sorted(d.context for d in done) == list(range(len(elements)))
    by_name = {d.element[0]: d for d in done}
    failure = by_name["bad"].failure
    assert failure is not None
    assert (failure.kind, failure.stage, failure.note, failure.exc_type) == (
        kind,
        1,
        "parsed bad",
        exc_type,
    )
    others = [d for name, d in by_name.items() if name != "bad"]
    assert all(d.failure is None and d.result[0] == d.element[0] for d in others)
    assert len({d.result[1] for d in others}) == 1  # all by the fresh helper


def test_each_element_of_a_batch_has_its_own_budget() -> None:
    # Sixteen elements of 0.25 s in one batch take 4 s, four times one element's budget:
    # none of them overran it, so none fails.
    elements = [(f"e{i}", "sleep", 0.25) for i in range(16)]
    runner = _runner(budgets=(1.0,))
    try:
        done = _run_all(runner, elements)
    finally:
        runner.close()
    assert [d.failure for d in done] == [None] * 16
    assert len({d.result[1] for d in done}) == 1  # no helper was replaced


def test_elements_travel_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[int] = []
    real = supervisor.encode_batch

    def counting(seqs: Any, payloads: Any) -> bytes:
        sent.append(len(seqs))
        return real(seqs, payloads)

    monkeypatch.setattr(supervisor, "encode_batch", counting)
    runner = _runner(max_in_flight=32, batch=16)
    try:
        done = _run_all(runner, [(f"e{i}", "ok") for i in range(40)])
    finally:
        runner.close()
    assert len(done) == 40 and all(d.failure is None for d in done)
    assert sent == [16, 16, 8]  # the last one when the caller drains


@pytest.mark.parametrize("action", ["unpicklable", "unreadable"])
def test_a_result_that_cannot_cross_fails_alone_and_its_batch_goes_on(action: str) -> None:
    # The helper's replies share one pickle stream per reply; a result that cannot be
    # pickled (in the helper) or rebuilt (in the worker) must not take the others with it.
    elements = [("a", "ok"), ("bad", action), ("b", "ok"), ("c", "ok")]
    runner = _runner()
    try:
        done = _run_all(runner, elements)
    finally:
        runner.close()
    assert sorted(d.context for d in done) == [0, 1, 2, 3]
    by_name = {d.element[0]: d for d in done}
    failure = by_name["bad"].failure
    assert failure is not None and failure.kind == RAISED
    assert all(by_name[n].failure is None and by_name[n].result[0] == n for n in "abc")
    assert len({by_name[n].result[1] for n in "abc"}) == 1  # the helper was not replaced


def test_an_exception_escaping_the_task_is_reported_and_the_helper_goes_on() -> None:
    runner = _runner()
    try:
        done = {d.element[0]: d for d in _run_all(runner, [("x", "raise"), ("y", "ok")])}
    finally:
        runner.close()
    failure = done["x"].failure
    assert failure is not None and (failure.kind, failure.exc_type) == (RAISED, "ValueError")
    assert "scripted failure of x" in failure.detail
    assert done["y"].failure is None


def test_running_out_of_memory_outside_the_task_s_own_handling_replaces_the_helper() -> None:
    runner = _runner()
    try:
        (before,) = _run_all(runner, [("x", "ok")])
        done = {d.element[0]: d for d in _run_all(runner, [("a", "oom"), ("b", "ok")])}
    finally:
        runner.close()
    failure = done["a"].failure
    assert failure is not None and (failure.kind, failure.exc_type) == (RAISED, "MemoryError")
    assert done["b"].failure is None and done["b"].result[1] != before.result[1]


def test_an_element_that_cannot_be_pickled_fails_alone() -> None:
    runner = _runner()
    try:
        done = _run_all(runner, [("x", "ok", lambda: None), ("y", "ok")])
    finally:
        runner.close()
    by_name = {d.element[0]: d for d in done}
    assert by_name["x"].failure is not None and by_name["x"].failure.kind == RAISED
    assert by_name["y"].failure is None


def test_the_inline_runner_reports_the_same_failures() -> None:
    runner = InlineRunner(ScriptedTask())
    runner.start()
    done = {d.element[0]: d for d in _run_all(runner, [("x", "raise"), ("y", "ok")])}  # type: ignore[arg-type]
    assert done["x"].failure is not None and done["x"].failure.exc_type == "ValueError"
    assert done["y"].result[0] == "y"


def test_helper_processes_never_import_apache_beam() -> None:
    """What a helper loads (the helper module, the tasks) must stay Beam-free: Beam's import
    costs seconds and ~150 MB in every helper otherwise."""
    code = (
        "import pickle, sys\n"
        "import kebab_chunk.runtime.helper, kebab_chunk.runtime.tasks\n"
        "from kebab_chunk.runtime.tasks import ChunkTask, ParseChunkTask, ParseTask\n"
        "from kebab_chunk.chunkers.registry import get_chunker\n"
        "from kebab_chunk.model import ChunkPolicy\n"
        "from kebab_chunk.parsers.base import ParseLimits\n"
        "task = ParseChunkTask(ParseTask(None, ParseLimits()),\n"
        "    ChunkTask(None, ChunkPolicy(), {'md-heading-v1': get_chunker('md-heading-v1')}))\n"
        "pickle.loads(pickle.dumps(task)).setup()\n"
        "print('apache_beam' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=subprocess_env(), capture_output=True, text=True
    )
    assert done.stdout.strip() == "False", done.stderr
