"""``kebab-chunk expire OUTPUT (--keep-last N | --newer-than DATE)``: drop old snapshots.

An updated output (``kebab-chunk run --update``, kebab_chunk/output/snapshots.py) keeps
every snapshot it ever committed. ``expire`` keeps the last ``N`` snapshots and those
written at or after ``DATE`` (both options: either is enough to be kept; the latest is
always kept), deletes the other snapshot files and then every data, delete and
change-feed file no kept snapshot references (files of killed updates included).

Expiry deletes files a running update has written but not yet committed, so it holds the
output's claim (``OUTPUT/_kebab.lock``, as ``kebab-chunk run`` does, kebab_chunk/beam/claim.py)
for the whole of it: a run holding the output makes it exit ``EXIT_BUSY`` (75) in one
sentence, touching nothing. Remote outputs (``gs://``, ``s3://``) cannot be claimed, so
never expire one while an update runs into it.

``kebab-chunk rechunk --keep-last/--newer-than`` expires with the same code
(:func:`expiry_options`, :func:`expire_claimed`), so both say the same things.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kebab_chunk.cli.exits import EXIT_BUSY, EXIT_FAILED, EXIT_OK, EXIT_USAGE
from kebab_chunk.errors import ClaimBusyError, KebabError, UsageError
from kebab_chunk.output.finished import normalise_path, open_output
from kebab_chunk.output.layout import LOCK_NAME
from kebab_chunk.output.snapshots import expire_snapshots

__all__ = [
    "Expiry",
    "add_expire_parser",
    "cmd_expire",
    "expire_claimed",
    "expiry_options",
    "keep_last_value",
    "newer_than_value",
]

_PROG = "kebab-chunk expire"


@dataclass(frozen=True)
class Expiry:
    """What to keep: the last ``keep_last`` snapshots and/or those newer than ``newer_than``."""

    keep_last: int | None
    newer_than: datetime | None


def keep_last_value(text: str) -> int:
    """``--keep-last``'s value: a whole number >= 1 (UsageError otherwise)."""
    if not text.strip().isdigit() or int(text) < 1:
        raise UsageError(f"--keep-last takes a whole number of snapshots, at least 1, not {text!r}")
    return int(text)


def newer_than_value(text: str) -> datetime:
    """``--newer-than``'s value: an ISO date or date-time; without a zone it is UTC."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(
            f"--newer-than takes an ISO date or date-time (2026-11-01, 2026-11-01T02:30:00Z), "
            f"not {text!r}"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def expiry_options(keep_last: str | None, newer_than: str | None) -> Expiry | None:
    """The checked options (None: neither given); UsageError for a bad value."""
    if keep_last is None and newer_than is None:
        return None
    return Expiry(
        keep_last_value(keep_last) if keep_last is not None else None,
        newer_than_value(newer_than) if newer_than is not None else None,
    )


def expire_claimed(output: str, expiry: Expiry, *, what: str, check: bool = True) -> str:
    """Claim ``output`` as a run does, check it is finished (``check``), expire, let go;
    returns what was done, without a period.

    Raises ClaimBusyError while a run (or another expiry) holds the output, OutputDirError
    for an output that is not finished, and whatever deleting raises (OSError); ``what``
    names the output in those sentences (``OUTPUT``, followed by its path).
    """
    from kebab_chunk.beam.claim import claim_directory  # Beam: only when expiring

    if check and "://" not in output and not os.path.isdir(output):
        open_output(output, what)  # does not exist, or a file: said before a claim creates it
    named = f"{what} {output!r}"
    with claim_directory(output, LOCK_NAME, what=named, by="kebab-chunk run or expire"):
        if check:
            open_output(output, what)
        expired, removed = expire_snapshots(
            output, keep_last=expiry.keep_last, newer_than=expiry.newer_than
        )
    files = f"removed {len(removed)} file{'s' * (len(removed) != 1)} no kept snapshot references"
    if not expired:
        return f"nothing to expire in {output}" + (f"; {files}" if removed else "")
    return f"expired snapshot{'s' * (len(expired) != 1)} {_ranges(expired)} of {output}; {files}"


def _ranges(numbers: Sequence[int]) -> str:
    """``1-3, 5`` for [1, 2, 3, 5]."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def add_expire_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``expire`` on the ``kebab-chunk`` sub-command parser; returns its parser."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "expire",
        help="drop old snapshots of an updated output and the files only they referenced",
        description="Drop the snapshots of an output (written by 'kebab-chunk run --update' "
        "or 'kebab-chunk rechunk') that are neither among the last N nor written at or after "
        "DATE, then delete every file no kept snapshot references. Holds the output's claim, "
        f"so a running update makes it exit {EXIT_BUSY}.",
    )
    p.add_argument("output", metavar="OUTPUT", help="the output directory (a table)")
    p.add_argument(
        "--keep-last",
        metavar="N",
        help="keep the last N snapshots, N >= 1; the latest is always kept (default: none)",
    )
    p.add_argument(
        "--newer-than",
        metavar="DATE",
        help="keep the snapshots written at or after DATE, an ISO date or date-time such as "
        "2026-11-01 or 2026-11-01T02:30:00+01:00, UTC when it names no zone; with both "
        "options, either one keeps a snapshot (default: none)",
    )
    return p


def cmd_expire(args: argparse.Namespace) -> int:
    """Run ``kebab-chunk expire``; returns the exit status."""
    try:
        expiry = expiry_options(args.keep_last, args.newer_than)
        if expiry is None:
            raise UsageError(
                "say which snapshots to keep with --keep-last N or --newer-than DATE; see "
                f"'{_PROG} --help'"
            )
        output = normalise_path(args.output)
        done = expire_claimed(output, expiry, what="OUTPUT")
    except ClaimBusyError as exc:
        _say(str(exc))
        return EXIT_BUSY
    except KebabError as exc:
        _say(str(exc))
        return EXIT_USAGE
    except OSError as exc:
        _say(
            f"expiry of {args.output!r} stopped ({exc.strerror or exc}); the kept snapshots "
            "are whole, run it again to remove the rest"
        )
        return EXIT_FAILED
    print(f"{_PROG}: {done}")
    return EXIT_OK


def _say(message: str) -> None:
    sys.stderr.write(f"{_PROG}: error: {message.rstrip().rstrip('.')}.\n")
