"""The runnable job: ``python -m pipelines.chunk_corpus ARGS`` is ``kebab-chunk run ARGS``.

The job lives in the library (its Beam graph in kebab_chunk/beam/graph.py, options in
kebab_chunk/cli/run.py); this module only makes it runnable where a console script is not
installed, such as a Dataflow launcher. It enters through the command line's own entry
point, so without Apache Beam it says what to install in one sentence (exit status 2), as
``kebab-chunk run`` does. The library never imports ``pipelines``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from kebab_chunk.cli import main as cli_main


def main(argv: Sequence[str] | None = None) -> int:
    """``kebab-chunk run ARGV``; returns the exit status."""
    return cli_main(["run", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    raise SystemExit(main())
