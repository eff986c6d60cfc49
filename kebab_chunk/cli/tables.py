"""``kebab-chunk compact OUTPUT`` and ``kebab-chunk export OUTPUT DEST``: an updated output
rewritten as a full run lays it out (kebab_chunk/output/compact.py).

``compact`` commits the latest snapshot's live rows as the next snapshot, in a full run's
files; ``export`` writes one snapshot to a new directory as a plain output that tools
without kebab-chunk read by globbing its folders. Both hold the output's claim (as a run
does), so no ``run --update`` commits meanwhile.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kebab_chunk.cli.exits import EXIT_OK

__all__ = ["add_table_parsers", "cmd_compact", "cmd_export"]


def add_table_parsers(subparsers: Any) -> None:
    """Register ``compact`` and ``export`` on the ``kebab-chunk`` sub-command parser."""
    p = subparsers.add_parser(
        "compact",
        help="rewrite an updated output's live rows as a full run writes them (a new snapshot)",
        description="Commit the latest snapshot of OUTPUT again, its live rows rewritten in "
        "the files a full run over the same corpus writes (no delete file; an empty change "
        "feed). Expire older snapshots afterwards to free their files.",
    )
    p.add_argument("output", metavar="OUTPUT", help="the --output of kebab-chunk run")
    p = subparsers.add_parser(
        "export",
        help="write one snapshot of an output to a new directory as plain Parquet",
        description="Write a snapshot of OUTPUT (the latest by default) to DEST as a plain "
        "output: part files a full run would write and a manifest.json, readable by globbing "
        "its folders (DuckDB, Spark, BigQuery, Trino, pandas) without kebab-chunk.",
    )
    p.add_argument("output", metavar="OUTPUT", help="the --output of kebab-chunk run")
    p.add_argument("dest", metavar="DEST", help="a new (or empty) directory")
    p.add_argument(
        "--snapshot", type=int, metavar="N", help="the snapshot to export (default: the latest)"
    )


def _claimed(output: str) -> Any:
    from kebab_chunk.beam.claim import claim_directory
    from kebab_chunk.output.finished import normalise_path
    from kebab_chunk.output.layout import LOCK_NAME

    path = normalise_path(output)
    return claim_directory(path, LOCK_NAME, what=f"OUTPUT {output!r}", by="kebab-chunk")


def cmd_compact(args: argparse.Namespace) -> int:
    from kebab_chunk.output.compact import compact_output

    with _claimed(args.output):
        n = compact_output(args.output)
    print(f"kebab-chunk compact: {args.output} is at snapshot {n}, in a full run's files.")
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    from kebab_chunk.output.compact import export_output

    with _claimed(args.output):
        dest = export_output(args.output, args.dest, snapshot=args.snapshot)
    print(f"kebab-chunk export: wrote {dest} (a plain output).", file=sys.stdout)
    return EXIT_OK
