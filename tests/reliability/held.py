"""A run held at its manifest step (every part file written, no manifest yet).

The run goes through a small launcher that replaces the manifest step with "write a
marker file, then sleep", so a test can act at the worst moment: kill it (atomicity) or
start a second run into the same output (the claim).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.beam.helpers import QUIET, REPO, subprocess_env

HOLD_TIMEOUT_S = 180

_LAUNCHER = """
import sys, time
from pathlib import Path
from kebab_chunk.beam import manifest

marker = Path(sys.argv[1])

def hold(self, summary, written):
    marker.write_text(str(len(written)))
    time.sleep(3600)
    yield from ()

if __name__ == "__main__":  # helper processes import the main module (forkserver)
    manifest._WriteManifestFn.process = hold
    from kebab_chunk.cli.run import main

    sys.exit(main(sys.argv[2:]))
"""


def start_held_run(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
    """Start ``kebab-chunk run ARGS`` and wait until it holds at its manifest step; returns
    the process (its own process group) and its log. AssertionError if it never gets there."""
    marker = tmp_path / "manifest-step-reached"
    launcher = tmp_path / "launcher.py"
    launcher.write_text(_LAUNCHER)
    log = tmp_path / "held-run.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, str(launcher), str(marker), *args, *QUIET],
            cwd=REPO,
            env=subprocess_env(),
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: helpers die with it
        )
    deadline = time.monotonic() + HOLD_TIMEOUT_S
    try:
        while not marker.exists():
            assert proc.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, "the held run never reached its manifest step"
            time.sleep(0.2)
    except AssertionError:
        kill(proc)
        raise
    return proc, log


def kill(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the run's whole process group (no-op once it has ended)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
