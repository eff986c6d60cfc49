"""The scale and Flink benches count a process tree's CPU exactly, however short-lived its
processes (benchmarks/scale.py ``TreeSampler``, tests/engines/reaper.py).

A Flink TaskManager's SDK workers, forkservers and helpers come and go within a job; a
sampler that only reads each process's own CPU loses what a process spends after its last
sample, and an orphan's whole CPU once ``init`` reaps it. Here every burner ends between
two samples and is orphaned first, so only the reaped-children accounting can see it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from benchmarks.scale import TreeSampler

BURNERS = 6
BURN_S = 0.15
#: Each burner's parent exits at once, so each burner is an orphan while it burns; the
#: script reads the pipe every burner holds open until the last one has ended.
_SCRIPT = f"""
import os, sys, time
done_r, done_w = os.pipe()
for _ in range({BURNERS}):
    if os.fork() == 0:
        if os.fork() == 0:
            start = time.process_time()
            while time.process_time() - start < {BURN_S}:
                pass
        os._exit(0)
    os.wait()
os.close(done_w)
os.read(done_r, 1)
print("burnt", flush=True)
time.sleep(60)
"""
REAPER = Path(__file__).parent / "engines" / "reaper.py"


def test_orphans_cpu_is_counted_under_the_reaper() -> None:
    proc = subprocess.Popen(
        [sys.executable, str(REAPER), sys.executable, "-c", _SCRIPT],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        sampler = TreeSampler({"tree": proc.pid}, fresh=set(), interval=3600)
        sampler.start()  # the baseline; the next sample is only the one at stop()
        assert proc.stdout is not None and proc.stdout.readline().strip() == "burnt"
        time.sleep(0.3)  # the last burner has been reaped
        sampler.stop()
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) != 0  # the reaper passes the command's signal on
    burnt = BURNERS * BURN_S
    roles = sampler.cpu_s_by_role("tree")
    assert burnt * 0.9 <= sampler.cpu_s("tree") <= burnt + 2.0
    assert roles["exited"] >= burnt * 0.9  # no burner was ever sampled alive
    assert sum(roles.values()) == sampler.cpu_s("tree")


def test_reaper_exits_with_the_commands_status() -> None:
    done = subprocess.run([sys.executable, str(REAPER), "sh", "-c", "exit 7"], check=False)
    assert done.returncode == 7
