"""SIGTERM and SIGINT stop ``run`` and ``rechunk`` cleanly while a helper is busy (issue 29.9).

The usual moment of a signal on a real corpus: a document is in a parse helper and the
main thread waits for it inside a Beam step. Beam wraps whatever interrupts a step in its
own error, so the command used to exit 1 with Beam's traceback instead of one line and
143 / 130. Ctrl-C reaches the whole process group (the helpers too), Kubernetes sends
SIGTERM to the main process only, Airflow to the group: each case is one line, the
signal's exit status, no manifest, no claim left, no process left behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.beam.helpers import QUIET, REPO, subprocess_env
from tests.reliability.test_orphans import _kill_all, _session_members, _wait_gone

pytestmark = pytest.mark.slow

#: The command line, with every parse going through tests/reliability/hostile.py
#: ``SlowParsers``: a document ``SLOW <marker>`` creates the marker and sleeps 10 minutes.
_DRIVER = """
import sys
from kebab_chunk.parsers.registry import ParserChoice
from tests.reliability.hostile import SlowParsers
ParserChoice.from_option = classmethod(lambda cls, value: SlowParsers())
from kebab_chunk.cli import main
sys.exit(main())
"""


#: The multi-processing DirectRunner of docs/guide/scheduling.md's examples: Beam's worker
#: processes die of a group-wide SIGTERM too, and Beam's thread watching them raises.
_PROCESSES = ["--direct_running_mode=multi_processing", "--direct_num_workers=2"]


@pytest.mark.parametrize(
    ("command", "signum", "to_group", "extra"),
    [
        ("run", signal.SIGTERM, False, []),  # Kubernetes, systemd, timeout
        ("run", signal.SIGINT, True, []),  # Ctrl-C in a terminal
        ("rechunk", signal.SIGTERM, True, []),  # Airflow's on_kill
        ("rechunk", signal.SIGINT, False, []),  # kill -INT
        ("rechunk", signal.SIGTERM, True, _PROCESSES),
    ],
)
def test_a_signal_while_a_helper_parses_is_one_line_and_its_exit_status(
    tmp_path: Path, command: str, signum: signal.Signals, to_group: bool, extra: list[str]
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(3):
        (corpus / f"doc-{i}.md").write_text(f"# Document {i}\n\nSome text {i}.\n")
    marker = tmp_path / "busy"
    (corpus / "slow.md").write_text(f"SLOW {marker}\n")
    out = tmp_path / "out"
    where = (
        ["--input", str(corpus), "--output", str(out)]
        if command == "run"
        else ["--corpus", str(corpus), "--runs", str(out)]
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", _DRIVER, command, *where, *QUIET, *extra],
        cwd=REPO,
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        assert marker.exists(), "no helper ever started on the slow document"
        (os.killpg if to_group else os.kill)(proc.pid, signum)
        _, stderr = proc.communicate(timeout=60)
        expected = 143 if signum == signal.SIGTERM else 130
        assert proc.returncode == expected, stderr[-3000:]
        lines = stderr.strip().splitlines()
        assert "Traceback" not in stderr and "Exception in thread" not in stderr, stderr[-3000:]
        if extra:  # Beam's worker processes log their own start-up warnings: only ours here
            lines = [line for line in lines if line.startswith("kebab-chunk")]
        assert len(lines) == 1, stderr[-3000:]
        assert lines[0].startswith(f"kebab-chunk {command}: error: ")
        assert ("SIGTERM" if signum == signal.SIGTERM else "SIGINT") in lines[0]
        left = [p.relative_to(out).as_posix() for p in out.rglob("*")] if out.exists() else []
        assert not [p for p in left if p.endswith(("manifest.json", ".lock", "latest"))], left
        assert not _wait_gone(_session_members(proc.pid), 15), "processes left behind"
    finally:
        if proc.poll() is None:
            proc.kill()
        _kill_all(_session_members(proc.pid))
