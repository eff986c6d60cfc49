"""The runnable job: ``python -m pipelines.chunk_corpus ARGS`` is ``kebab-chunk run ARGS``.

The job lives in the library (kebab_chunk/beam/job.py, options in kebab_chunk/cli/run.py);
this module only makes it runnable where a console script is not installed, such as a
Dataflow launcher. The library never imports ``pipelines``.
"""

from kebab_chunk.cli.run import main

if __name__ == "__main__":
    raise SystemExit(main())
