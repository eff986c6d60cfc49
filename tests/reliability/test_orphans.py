"""Helper processes never outlive the job (issue 14, item 3).

A worker killed outright (SIGKILL: the OOM killer, ``kill -9``) cannot clean up, yet its
isolation helper, busy on a slow document, must not go on burning a core for minutes, and
the forkserver that started it must go too. SIGTERM (what ``timeout``, systemd, Airflow
and Kubernetes send) must stop ``kebab-chunk run`` as cleanly as Ctrl-C: a non-zero exit,
no manifest, no process left behind.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.beam.helpers import QUIET, REPO, subprocess_env

pytestmark = pytest.mark.slow

_WORKER = """
import multiprocessing.forkserver as fs, sys, time
from kebab_chunk.runtime.supervisor import IsolatedRunner
from tests.runtime.supervisor_tasks import ScriptedTask

if __name__ == "__main__":
    runner = IsolatedRunner(ScriptedTask(), budgets_s=[600.0], max_memory_mb=None, batch=1)
    runner.start()
    runner.submit(("slow", "hang"))
    print(runner._helper.process.pid, fs._forkserver._forkserver_pid, flush=True)
    time.sleep(600)
"""


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting to be reaped has stopped running)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def _session_members(sid: int) -> list[int]:
    """Running processes of session ``sid`` (field 6 of /proc/PID/stat)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] not in ("Z", "X"):
            found.append(int(entry))
    return found


def _wait_gone(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [p for p in pids if _alive(p)]
        if not left:
            return []
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


def _kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_a_killed_worker_takes_its_busy_helper_and_forkserver_with_it() -> None:
    worker = subprocess.Popen(
        [sys.executable, "-c", _WORKER],
        cwd=REPO,
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    helper = forkserver = 0
    try:
        assert worker.stdout is not None
        helper, forkserver = (int(x) for x in worker.stdout.readline().split())
        time.sleep(0.5)
        assert _alive(helper) and _alive(forkserver)  # the helper is busy in its loop
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
        left = _wait_gone([helper, forkserver], 15)
        assert not left, f"still running after their worker died: {left}"
    finally:
        _kill_all([p for p in (worker.pid, helper, forkserver) if p])


def test_sigterm_stops_a_run_with_no_manifest_and_no_process_left(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(400):
        body = "\n\n".join(f"Paragraph {j} of document {i}. " * 20 for j in range(40))
        (corpus / f"doc-{i:03}.md").write_text(f"# Document {i}\n\n{body}\n")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "kebab_chunk.cli", "run", "--input", str(corpus)]
    run = subprocess.Popen(
        [*command, "--output", str(out), *QUIET],
        cwd=REPO,
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        # Wait until the run has started its helper processes (the job is under way).
        deadline = time.monotonic() + 120
        while len(_session_members(run.pid)) < 3 and time.monotonic() < deadline:
            assert run.poll() is None, run.communicate()
            time.sleep(0.2)
        assert len(_session_members(run.pid)) >= 3, "the run never started its helpers"
        run.send_signal(signal.SIGTERM)
        _, stderr = run.communicate(timeout=60)
        assert run.returncode != 0
        assert "terminated" in stderr.lower(), stderr[-2000:]
        assert not (out / "manifest.json").exists()
        left = _wait_gone(_session_members(run.pid), 15)
        assert not left, f"processes left behind after SIGTERM: {left}"
    finally:
        if run.poll() is None:
            run.kill()
        _kill_all(_session_members(run.pid))
