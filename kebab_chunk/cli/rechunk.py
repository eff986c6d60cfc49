# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: FileSystems is untyped.)
"""``kebab-chunk rechunk --corpus IN --runs DIR [--keep-last N] [--newer-than DATE] [run
options]``: one scheduled re-chunk, an update of one table (docs/guide/scheduling.md).

1. Claim ``DIR`` for this rechunk: an exclusive ``flock`` on ``DIR/_rechunk.lock``
   (kebab_chunk/beam/claim.py ``claim_directory``, created with ``DIR`` if needed). Another
   rechunk holding it is refused in one sentence with exit status ``EXIT_BUSY`` (75).
   Remote ``DIR`` (``gs://``, ``s3://``) cannot be locked: the claim is local-only, so the
   scheduler must not overlap runs there (``max_active_runs=1``, ``concurrencyPolicy:
   Forbid``).
2. The job is exactly ``kebab-chunk run --input CORPUS... --output DIR/table --update
   [rest]`` (kebab_chunk/cli/run.py ``main``, in this process): the first one is a full run
   (snapshot 1), every later one commits the next snapshot of ``DIR/table`` with its change
   feed, or nothing when it fails. ``--input``, ``--output``, ``--previous``, ``--update``
   and ``--overwrite`` are chosen here and refused on the command line.
3. Only after a successful run, with ``--keep-last`` / ``--newer-than``: the older
   snapshots are expired (kebab_chunk/cli/expire.py) under the table's own claim too, so
   no ``kebab-chunk run --update`` writes files into it that expiry would take for orphans.

A runs folder written by earlier versions (a ``latest`` pointer, one directory per run) is
not read: one note line says so, and the table starts with a full run.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from apache_beam.io.filesystems import FileSystems

from kebab_chunk.beam.claim import ClaimBusyError, claim_directory
from kebab_chunk.cli._io import UsageError
from kebab_chunk.cli._options import unknown_option, unknown_option_sentence
from kebab_chunk.cli._signals import StopSignals
from kebab_chunk.cli.exits import (
    EXIT_BUSY,
    EXIT_FAILED,
    EXIT_SIGINT,
    EXIT_SIGTERM,
    EXIT_USAGE,
)
from kebab_chunk.cli.expire import Expiry, expire_claimed, expiry_options
from kebab_chunk.errors import KebabError
from kebab_chunk.output.finished import normalise_path, open_output
from kebab_chunk.output.layout import MANIFEST_NAME
from kebab_chunk.output.snapshots import snapshot_ids, snapshot_of

__all__ = ["LOCK_NAME", "TABLE_NAME", "main"]

#: The rechunk lock and the one table, both in the runs folder.
LOCK_NAME = "_rechunk.lock"
TABLE_NAME = "table"
#: Options of ``kebab-chunk run`` that rechunk sets itself.
_CHOSEN = {
    "--input": "--corpus",
    "--output": f"--runs/{TABLE_NAME}",
    "--update": "every rechunk updates the table",
    "--previous": "each update builds on the table's latest snapshot",
    "--overwrite": "the table is updated, never replaced",
}
#: What earlier versions wrote into the runs folder: a pointer, run directories, diffs.
_OLD_LAYOUT = re.compile(r"^(latest|\d{8}T\d{6}Z(\.diff\.json)?)$")
_PROG = "kebab-chunk rechunk"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message}; see '{_PROG} --help'")


def _arg_parser() -> _Parser:
    p = _Parser(
        prog=_PROG,
        allow_abbrev=False,
        description=f"Update the table RUNS/{TABLE_NAME} from a corpus: exactly 'kebab-chunk "
        f"run --input CORPUS --output RUNS/{TABLE_NAME} --update', so the first rechunk is a "
        "full run (snapshot 1) and each later one commits the next snapshot with a change "
        "feed; then, with --keep-last or --newer-than, expire older snapshots. Every other "
        "option is handed to 'kebab-chunk run' unchanged (see 'kebab-chunk run --help'). "
        f"Exit status: 0 done, 1 the run failed, 2 usage, {EXIT_BUSY} another rechunk holds "
        "RUNS, 130/143 interrupted.",
    )
    p.add_argument(
        "--corpus",
        required=True,
        action="append",
        help="the corpus, as 'kebab-chunk run --input' (repeat for several; narrow it with "
        "run's --include, --exclude and --include-hidden)",
    )
    p.add_argument(
        "--runs",
        required=True,
        metavar="DIR",
        help=f"the runs folder: the table {TABLE_NAME}/ and the rechunk lock (local, gs:// "
        "or s3://)",
    )
    p.add_argument(
        "--keep-last",
        metavar="N",
        help="after a successful run, expire all snapshots but the last N, N >= 1, as "
        "'kebab-chunk expire' does (default: none, nothing is expired)",
    )
    p.add_argument(
        "--newer-than",
        metavar="DATE",
        help="after a successful run, expire the snapshots written before DATE (ISO date or "
        "date-time, UTC when it names no zone; the latest is always kept; default: none, "
        "nothing is expired)",
    )
    p.add_argument("--debug", action="store_true", help="print tracebacks (also given to run)")
    return p


def _refuse_chosen_options(rest: Sequence[str]) -> None:
    for arg in rest:
        if arg == "--":
            return
        option = arg.split("=", 1)[0]
        if option in _CHOSEN:
            raise UsageError(
                f"{option} is set by rechunk ({_CHOSEN[option]}), so leave it out; see "
                f"'{_PROG} --help'"
            )


def _refuse_unknown_options(args: Sequence[str]) -> None:
    """A typo (``--rnus``) is named with the option meant, before "--runs is required";
    run's and Beam's options are known too, those rechunk sets itself are not."""
    from kebab_chunk.cli.run import UNKNOWN_ELSE, known_options

    known = {k: v for k, v in known_options().items() if k not in _CHOSEN}
    known.update(_arg_parser()._option_string_actions)
    if typo := unknown_option(args, known):
        raise UsageError(unknown_option_sentence(*typo, UNKNOWN_ELSE))


def _say(message: str) -> None:
    text = message.rstrip()
    end = "" if text.endswith("?") else "."
    sys.stderr.write(f"{_PROG}: error: {text.rstrip('.')}{end}\n")


def main(argv: Sequence[str]) -> int:
    """Run ``kebab-chunk rechunk``; returns the exit status (module docstring).

    SIGTERM and SIGINT at any moment: one line, exit status 143 / 130, no snapshot
    committed by this rechunk (kebab_chunk/cli/_signals.py; the run itself stops as
    ``kebab-chunk run`` does).
    """
    with StopSignals() as stop:
        try:
            return _claimed(list(argv))
        except KeyboardInterrupt as exc:
            stop.note_interrupt(exc)
        _say(f"{stop.describe()}; the table keeps its last committed snapshot")
        return stop.status or EXIT_SIGINT


def _claimed(args: list[str]) -> int:
    """Parse, claim ``--runs``, rechunk under the claim."""
    debug = "--debug" in args
    try:
        _refuse_chosen_options(args)
        _refuse_unknown_options(args)
        known, rest = _arg_parser().parse_known_args(args)
        if not known.runs.strip():
            raise UsageError("--runs is empty; give a directory (local, gs:// or s3://)")
        runs = normalise_path(known.runs)
        expiry = expiry_options(known.keep_last, known.newer_than)
        if debug:
            rest.append("--debug")  # kebab-chunk run's own option
        claim = claim_directory(runs, LOCK_NAME, what=f"--runs {known.runs!r}", by=_PROG)
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except ClaimBusyError as exc:
        _say(str(exc))
        return EXIT_BUSY
    except KebabError as exc:
        _print_debug(debug)
        _say(str(exc))
        return EXIT_USAGE
    with claim:
        return _rechunk(known.corpus, runs, rest, expiry, debug)


def _rechunk(
    corpus: Sequence[str], runs: str, rest: list[str], expiry: Expiry | None, debug: bool
) -> int:
    """The claimed part: run the update, report the snapshot, expire."""
    from kebab_chunk.cli.run import main as run_main

    table = f"{runs}/{TABLE_NAME}"
    _note_old_layout(runs, table)
    inputs = [arg for path in corpus for arg in ("--input", path)]
    status: int = run_main([*inputs, "--output", table, "--update", *rest], say_stopped=False)
    if status in (EXIT_SIGINT, EXIT_SIGTERM):
        how = "terminated by SIGTERM" if status == EXIT_SIGTERM else "interrupted (SIGINT)"
        _say(f"{how}; the update of {table!r} did not finish, so {_reads_as(table)}")
        return status
    if status != 0:
        if status != EXIT_USAGE:  # a usage error was already said in one sentence
            _say(f"the update of {table!r} failed (exit status {status}), so {_reads_as(table)}")
        return status
    try:
        _, manifest = open_output(table, "the table")
    except KebabError as exc:  # the run said it committed; a reader must see it too
        _print_debug(debug)
        _say(f"the update of {table!r} finished but the table cannot be read ({exc})")
        return EXIT_FAILED
    n = snapshot_of(manifest)
    changes = (manifest.get("snapshot") or {}).get("changes")
    feed = f"change feed: {table}/{changes['path']}" if changes else "full run"
    done, status = _expire(table, expiry, debug)
    print(f"{_PROG}: {table} is at snapshot {n} ({feed}){done}")
    return status


def _expire(table: str, expiry: Expiry | None, debug: bool) -> tuple[str, int]:
    """After a successful run: (what expiry did, for the success line; exit status)."""
    if expiry is None:
        return "", 0
    try:
        return f"; {expire_claimed(table, expiry, what='the table', check=False)}", 0
    except ClaimBusyError as exc:
        _say(f"old snapshots were not expired: {exc}")
        return "", EXIT_BUSY
    except (KebabError, OSError) as exc:
        _print_debug(debug)
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        _say(f"old snapshots of {table!r} were not all expired ({first}); the next one will")
        return "", EXIT_FAILED


def _committed(table: str) -> int | None:
    """The table's latest committed snapshot, from its names only (None: none yet)."""
    ids = snapshot_ids(table)
    if ids:
        return ids[-1]
    return 1 if FileSystems.exists(f"{table}/{MANIFEST_NAME}") else None


def _reads_as(table: str) -> str:
    """What readers of the table see now, for messages."""
    n = _committed(table)
    return "it holds no finished snapshot yet" if n is None else f"it still reads as snapshot {n}"


def _note_old_layout(runs: str, table: str) -> None:
    """One note line when ``runs`` holds what earlier versions wrote there."""
    if "://" in runs:
        old = ["latest"] if FileSystems.exists(f"{runs}/latest") else []
    else:
        old = sorted(name for name in os.listdir(runs) if _OLD_LAYOUT.match(name))
    if not old:
        return
    started = _committed(table) is not None
    what = f"{', '.join(old[:3])}{', ...' * (len(old) > 3)}"
    sys.stderr.write(
        f"{_PROG}: note: {runs} holds {what} of the old runs-folder layout, which rechunk "
        f"ignores: {'it updates the table' if started else 'the table'} {table}"
        f"{'' if started else ' starts with a full run'} (delete them when no longer needed)\n"
    )


def _print_debug(debug: bool) -> None:
    if debug:
        traceback.print_exc()
