"""The exit statuses of every ``kebab-chunk`` command, in one table.

======  ============  ==================================================================
status  name          meaning
======  ============  ==================================================================
0       EXIT_OK       done; for ``run``, the job finished and its accounting closed
1       EXIT_FAILED   the job failed or its accounting did not close; ``parse`` and
                      ``chunk``: some files could not be parsed (the others were);
                      ``diff --fail-if-changed``: the outputs differ
2       EXIT_USAGE    a wrong option, argument or location, said in one sentence
75      EXIT_BUSY     ``rechunk``: another rechunk holds the runs folder; ``expire``:
                      a run holds the output (EX_TEMPFAIL)
130     EXIT_SIGINT   stopped by Ctrl-C
143     EXIT_SIGTERM  stopped by SIGTERM
======  ============  ==================================================================
"""

from __future__ import annotations

__all__ = [
    "EXIT_BUSY",
    "EXIT_CHANGED",
    "EXIT_DATA",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_SIGINT",
    "EXIT_SIGTERM",
    "EXIT_USAGE",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_DATA = EXIT_FAILED  # parse/chunk: some input files could not be parsed
EXIT_CHANGED = EXIT_FAILED  # diff --fail-if-changed: the outputs differ
EXIT_USAGE = 2
EXIT_BUSY = 75
EXIT_SIGINT = 130
EXIT_SIGTERM = 143
