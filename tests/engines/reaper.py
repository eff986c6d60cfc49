"""Run a command under a subreaper: ``python reaper.py CMD ARGS...``.

A Flink TaskManager starts SDK workers, which start a forkserver, which forks the
parse/chunk helpers. When an SDK worker exits first, its forkserver is orphaned and Linux
hands it to ``init``: its CPU time (and that of every helper it reaped) leaves the
TaskManager's process tree unrecorded. Under a subreaper (``PR_SET_CHILD_SUBREAPER``)
orphans are handed to this process instead, which reaps them, so the kernel adds their
final CPU time to its ``cutime``/``cstime``: the tree's CPU then adds up exactly
(benchmarks/scale.py ``TreeSampler``), and no zombie outlives its parent. Exits with the
command's status once the command has exited; forwards SIGTERM and SIGINT to it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

PR_SET_CHILD_SUBREAPER = 36


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: reaper.py CMD [ARGS...]", file=sys.stderr)
        return 2
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(err)}")
    child = os.fork()
    if child == 0:  # pragma: no cover - replaced by exec
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    while True:
        pid, status = os.wait()  # the command, or an orphan handed to this process
        if pid == child:
            return os.waitstatus_to_exitcode(status) & 0xFF


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
