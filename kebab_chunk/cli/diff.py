"""``kebab-chunk diff OLD NEW``: what changed between two outputs, per chunker label.

The comparison itself is :func:`kebab_chunk.output.diff.diff_outputs`; this module only
parses the command line, prints the report and picks the exit status.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kebab_chunk._quote import terminal_json
from kebab_chunk.cli.exits import EXIT_CHANGED, EXIT_OK, EXIT_USAGE
from kebab_chunk.errors import OutputDirError
from kebab_chunk.output.diff import diff_outputs, format_diff

__all__ = ["add_diff_parser", "cmd_diff"]


def add_diff_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``diff`` on the ``kebab-chunk`` sub-command parser; returns its parser."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "diff",
        help="compare two pipeline outputs: chunk ids added/removed/unchanged per label",
        description="Compare the chunks of two kebab-chunk outputs per chunker label: ids "
        "added, removed, unchanged and modified, documents affected, and the token volume "
        "to re-embed.",
    )
    p.add_argument("old", metavar="OLD_OUTPUT", help="the earlier run's --output directory")
    p.add_argument("new", metavar="NEW_OUTPUT", help="the later run's --output directory")
    p.add_argument(
        "--old-snapshot",
        type=int,
        metavar="N",
        help="read OLD_OUTPUT as its snapshot N (an output updated with run --update; "
        "default: its latest)",
    )
    p.add_argument(
        "--new-snapshot",
        type=int,
        metavar="N",
        help="read NEW_OUTPUT as its snapshot N (default: its latest); OLD_OUTPUT and "
        "NEW_OUTPUT may be the same output",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--fail-if-changed",
        action="store_true",
        help=f"exit with status {EXIT_CHANGED} when anything differs (for CI gates)",
    )
    return p


def cmd_diff(args: argparse.Namespace) -> int:
    """Run ``kebab-chunk diff``; returns the exit status (2 on a bad output directory)."""
    try:
        diff = diff_outputs(
            args.old, args.new, old_snapshot=args.old_snapshot, new_snapshot=args.new_snapshot
        )
    except OutputDirError as exc:
        print(f"kebab-chunk diff: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(terminal_json(diff.to_json(), indent=2))
    else:
        print(format_diff(diff))
    return EXIT_CHANGED if args.fail_if_changed and diff.changed else EXIT_OK
