"""A run killed half way never leaves an output that looks complete (issue 7, item 6).

The contract (docs/guide/limits.md): ``manifest.json`` is the commit mark of an output. It is
written last, after every part file, and only by a run that got that far; ``--overwrite``
deletes the previous output (its manifest included) before anything new is written. So a
killed run leaves either nothing or part files without a manifest, which every reader
(``kebab-chunk diff``, ``--previous``) treats as incomplete, and a rerun with
``--overwrite`` replaces it with the same bytes a clean run writes.

To kill at the worst moment, every data file written but no manifest yet, the run goes
through a small launcher that holds the manifest step: it writes a marker file and sleeps.
The test waits for the marker and kills the launcher's whole process group with SIGKILL.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.beam.helpers import CORPUS, QUIET, REPO, part_files, subprocess_env
from tests.reliability.held import HOLD_TIMEOUT_S, kill, start_held_run

pytestmark = pytest.mark.slow


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pipelines.chunk_corpus", *args, *QUIET],
        cwd=REPO,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=HOLD_TIMEOUT_S,
        check=False,
    )


def _run_and_kill_before_the_manifest(tmp_path: Path, *args: str) -> str:
    """Start a run that stops at the manifest step, SIGKILL it there; returns its log."""
    proc, log = start_held_run(tmp_path, *args)
    kill(proc)
    assert proc.returncode == -signal.SIGKILL
    return log.read_text()


def test_a_run_killed_before_its_manifest_is_visibly_incomplete(tmp_path: Path) -> None:
    output = tmp_path / "out"
    clean = tmp_path / "clean"
    assert _cli("--input", str(CORPUS), "--output", str(clean)).returncode == 0
    expected = part_files(clean)
    # a complete previous output sits in --output; the new run replaces it and dies
    first = _cli("--input", str(CORPUS / "guides"), "--output", str(output))
    assert first.returncode == 0 and (output / "manifest.json").exists()
    _run_and_kill_before_the_manifest(
        tmp_path, "--input", str(CORPUS), "--output", str(output), "--overwrite"
    )
    written = part_files(output)
    assert written, "the killed run had written its data files"
    assert not (output / "manifest.json").exists(), "no manifest: the output is incomplete"
    assert written == expected, "what it wrote is this run's data, no old part files"
    # readers refuse it: an incremental run will not take it as --previous
    refused = _cli(
        "--input", str(CORPUS), "--output", str(tmp_path / "next"), "--previous", str(output)
    )
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "manifest.json" in refused.stderr
    # a rerun replaces the incomplete output with exactly what a clean run writes
    rerun = _cli("--input", str(CORPUS), "--output", str(output), "--overwrite")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert (output / "manifest.json").exists()
    assert part_files(output) == expected
