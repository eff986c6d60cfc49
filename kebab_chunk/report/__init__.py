"""Seeing the chunks: progress on long runs, ``inspect``, the HTML report and the viewer.

* :mod:`~kebab_chunk.report.progress` — a one-line progress display (TTY only, quiet in CI);
* :mod:`~kebab_chunk.report.inspect` — summary of a pipeline output (terminal / JSON);
* :mod:`~kebab_chunk.report.report` — a self-contained HTML report with inline SVG charts;
* :mod:`~kebab_chunk.report.view` — a document drawn with its chunk spans highlighted;
* :mod:`~kebab_chunk.cli.report` — the ``inspect``, ``report`` and ``view`` sub-commands.

Submodules are imported on use; importing this package loads nothing heavy.
"""
