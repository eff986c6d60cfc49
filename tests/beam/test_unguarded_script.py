"""A pipeline started from a script without a ``__main__`` guard, or from stdin.

Helper processes must not re-run the launching script (multiprocessing's start-up
imports ``__main__`` again from its file): unguarded, the script's top level would run
once per helper; from ``python -`` there is no file and helpers could not start at all.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SCRIPT = """
import sys
print("TOP-LEVEL RAN", file=sys.stderr, flush=True)
from kebab_chunk.pipeline import run
result = run("corpus", "out", overwrite=True)
print("CHUNKS", len(result.chunks()))
"""


def _corpus(root: Path) -> None:
    (root / "corpus").mkdir()
    (root / "corpus" / "a.md").write_text("# A\n\nalpha text.\n")
    (root / "corpus" / "b.md").write_text("# B\n\nbeta text.\n")


def test_an_unguarded_script_runs_its_top_level_once(tmp_path: Path) -> None:
    _corpus(tmp_path)
    (tmp_path / "job.py").write_text(SCRIPT)
    proc = subprocess.run(
        [sys.executable, "job.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr.count("TOP-LEVEL RAN") == 1
    assert "CHUNKS 2" in proc.stdout


def test_a_pipeline_started_from_stdin_starts_its_helpers(tmp_path: Path) -> None:
    _corpus(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-"],
        input=SCRIPT,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "CHUNKS 2" in proc.stdout
