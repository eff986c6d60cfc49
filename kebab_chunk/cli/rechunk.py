# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: FileSystems is untyped.)
"""``kebab-chunk rechunk --corpus IN --runs DIR [run options]``: one scheduled re-chunk.

What docs/scheduling.md used to ask users to script, as one command:

1. Claim ``DIR`` for this rechunk: an exclusive ``flock`` on ``DIR/_rechunk.lock``
   (kebab_chunk/beam/claim.py ``claim_directory``, created with ``DIR`` if needed). Another
   rechunk holding it is refused in one sentence with exit status ``EXIT_BUSY`` (75).
   Remote ``DIR`` (``gs://``, ``s3://``) cannot be locked: the claim is local-only, so the
   scheduler must not overlap runs there (``max_active_runs=1``, ``concurrencyPolicy:
   Forbid``).
2. ``--previous`` = the run named by ``DIR/latest`` (a one-line text file holding the run's
   path, a bare name taken relative to ``DIR``; or a local symlink to the run directory).
   No pointer: a full run. A pointer to something that is not a finished run (a dangling
   link included) is refused (exit 2), never silently ignored.
3. The new run goes to ``DIR/<UTC stamp>`` (``20261124T213000Z``). If that name exists
   already (a run started in the same second, or the clock went back), the command
   refuses (exit 2) and changes nothing; retrying a second later gets a fresh stamp.
4. The job is ``kebab-chunk run`` itself (kebab_chunk/cli/run.py ``main``), in this
   process, with every other option passed through unchanged; ``--input``, ``--output``
   and ``--previous`` are chosen here and refused on the command line.
5. Only when the run exits 0 and its manifest says the accounting closes: the diff
   against the previous run (kebab_chunk/output/diff.py, JSON as ``kebab-chunk diff --json``
   prints it) is written to ``DIR/<stamp>.diff.json``, and then ``DIR/latest`` is
   replaced. Both writes are whole-or-nothing (kebab_chunk/beam/durable.py, as for the
   manifest): a temporary name beside the target, then a rename through ``FileSystems``.
   A failed run, or a diff that cannot be written, leaves ``latest`` as it was and exits
   non-zero, so the next rechunk starts again from the last good run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import NoReturn

from apache_beam.io.filesystems import FileSystems

from kebab_chunk.beam.claim import ClaimBusyError, claim_directory
from kebab_chunk.beam.durable import write_whole
from kebab_chunk.cli._io import UsageError
from kebab_chunk.cli._options import unknown_option, unknown_option_sentence
from kebab_chunk.cli._signals import StopSignals
from kebab_chunk.cli.exits import EXIT_BUSY, EXIT_DATA, EXIT_SIGINT, EXIT_SIGTERM, EXIT_USAGE
from kebab_chunk.errors import KebabError, OutputDirError
from kebab_chunk.output.diff import diff_outputs
from kebab_chunk.output.finished import open_output

__all__ = [
    "DIFF_SUFFIX",
    "LATEST_NAME",
    "LOCK_NAME",
    "STAMP_FORMAT",
    "main",
    "read_latest",
]

#: The pointer to the last good run, the rechunk lock, and the diff beside each run.
LATEST_NAME = "latest"
LOCK_NAME = "_rechunk.lock"
DIFF_SUFFIX = ".diff.json"
STAMP_FORMAT = "%Y%m%dT%H%M%SZ"
#: Options of ``kebab-chunk run`` that rechunk sets itself.
_CHOSEN = {
    "--input": "--corpus",
    "--output": "a new directory under --runs",
    "--previous": f"the run --runs/{LATEST_NAME} names",
}
_PROG = "kebab-chunk rechunk"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message}; see '{_PROG} --help'")


def _arg_parser() -> _Parser:
    p = _Parser(
        prog=_PROG,
        allow_abbrev=False,
        description="Re-chunk a corpus into a new run directory RUNS/<UTC stamp>, with the "
        f"run that RUNS/{LATEST_NAME} names as --previous; on success write "
        f"RUNS/<stamp>{DIFF_SUFFIX} and move RUNS/{LATEST_NAME} to the new run. Every other "
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
        help=f"the runs folder: one directory per run, the {LATEST_NAME} pointer, the diffs "
        "(local, gs:// or s3://)",
    )
    p.add_argument("--debug", action="store_true", help="print tracebacks (also given to run)")
    return p


def _is_local(path: str) -> bool:
    return FileSystems.get_scheme(path) is None


def _normalise(path: str) -> str:
    if not path.strip():
        raise UsageError("--runs is empty; give a directory (local, gs:// or s3://)")
    if _is_local(path):
        return os.path.abspath(os.path.expanduser(path)).rstrip("/") or "/"
    return path.rstrip("/")


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

    known = (known_options() - set(_CHOSEN)) | set(_arg_parser()._option_string_actions)
    if typo := unknown_option(args, known):
        raise UsageError(unknown_option_sentence(*typo, UNKNOWN_ELSE))


def read_latest(runs: str) -> str | None:
    """The run ``runs/latest`` names (normalised), or None when there is no pointer.

    ``latest`` is the one-line file rechunk writes, or a symlink to a run directory
    (``ln -sfn RUN RUNS/latest``: the run is the link's target, read relative to ``runs``
    when relative). Anything else there (a dangling link, a directory, a file that cannot be
    read or holds no single path) is refused (UsageError), never taken for "no pointer":
    docs/decisions.md, "Issue 29.10".
    """
    pointer = f"{runs}/{LATEST_NAME}"
    if _is_local(pointer) and os.path.islink(pointer) and os.path.isdir(pointer):
        return _normalise(os.path.join(runs, os.readlink(pointer)))
    fix = "point it at the last good run, or delete it to start with a full run"
    if not FileSystems.exists(pointer):  # follows a local link
        if _is_local(pointer) and os.path.islink(pointer):
            target = os.readlink(pointer)
            raise UsageError(f"{pointer!r} is a link to {target!r}, which does not exist; {fix}")
        if _exists(pointer):  # a folder of objects on gs:// or s3://
            raise UsageError(f"{pointer!r} is a folder, not a file naming a run; {fix}")
        return None
    if _is_local(pointer) and os.path.isdir(pointer):
        raise UsageError(f"{pointer!r} is a folder, not a file naming a run; {fix}")
    try:
        with FileSystems.open(pointer) as f:
            text = f.read().decode("utf-8", errors="replace").strip()
    except OSError as exc:
        raise UsageError(f"cannot read {pointer!r} ({exc.strerror or exc}); {fix}") from None
    if not text or "\n" in text:
        raise UsageError(
            f"{pointer!r} does not hold one run path; put the path of the last good run in "
            "it, or delete it to start with a full run"
        )
    if "://" not in text and not text.startswith("/"):
        text = f"{runs}/{text}"  # a bare name: relative to the runs folder
    return _normalise(text)


def _exists(path: str) -> bool:
    if _is_local(path):
        return os.path.lexists(path)
    found = FileSystems.match([f"{path}/**"], limits=[1])[0].metadata_list
    return bool(found) or FileSystems.exists(path)


def _say(message: str) -> None:
    text = message.rstrip()
    end = "" if text.endswith("?") else "."
    sys.stderr.write(f"{_PROG}: error: {text.rstrip('.')}{end}\n")


def main(argv: Sequence[str], *, now: Callable[[], datetime] | None = None) -> int:
    """Run ``kebab-chunk rechunk``; returns the exit status (module docstring).

    SIGTERM and SIGINT at any moment: one line, exit status 143 / 130, ``latest`` unchanged
    (kebab_chunk/cli/_signals.py; the run itself stops as ``kebab-chunk run`` does).
    """
    with StopSignals() as stop:
        try:
            return _claimed(list(argv), now or (lambda: datetime.now(UTC)))
        except KeyboardInterrupt as exc:
            stop.note_interrupt(exc)
        _say(f"{stop.describe()}; nothing was published")
        return stop.status or EXIT_SIGINT


def _claimed(args: list[str], now: Callable[[], datetime]) -> int:
    """Parse, claim ``--runs``, rechunk under the claim."""
    debug = "--debug" in args
    try:
        _refuse_chosen_options(args)
        _refuse_unknown_options(args)
        known, rest = _arg_parser().parse_known_args(args)
        runs = _normalise(known.runs)
        if debug:
            rest.append("--debug")  # kebab-chunk run's own option
        claim = claim_directory(runs, LOCK_NAME, what=f"--runs {known.runs!r}", by=_PROG)
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except ClaimBusyError as exc:
        _say(str(exc))
        return EXIT_BUSY
    except (UsageError, KebabError) as exc:
        _print_debug(debug)
        _say(str(exc))
        return EXIT_USAGE
    with claim:
        return _rechunk(known.corpus, runs, rest, now, debug)


def _rechunk(
    corpus: Sequence[str], runs: str, rest: list[str], now: Callable[[], datetime], debug: bool
) -> int:
    """The claimed part: pick the names, run the job, publish on success."""
    try:
        previous = read_latest(runs)
        if previous is not None:
            open_output(
                previous,
                f"{runs}/{LATEST_NAME} names a run, but",
                remedy=f"restore it or point {LATEST_NAME} at an earlier finished run",
            )
        stamp = now().astimezone(UTC).strftime(STAMP_FORMAT)
        run_dir = f"{runs}/{stamp}"
        if _exists(run_dir):
            raise UsageError(
                f"the run directory {run_dir!r} exists already (a run started in the same "
                "second, or the clock went back), so nothing was started; retry in a second"
            )
    except (UsageError, KebabError) as exc:
        _print_debug(debug)
        _say(str(exc))
        return EXIT_USAGE

    from kebab_chunk.cli.run import main as run_main

    inputs = [arg for path in corpus for arg in ("--input", path)]
    run_argv = [*inputs, "--output", run_dir, *rest]
    if previous is not None:
        run_argv += ["--previous", previous]
    status: int = run_main(run_argv, say_stopped=False)
    kept = (
        f"{runs}/{LATEST_NAME} still names {previous!r}" if previous else "no pointer was written"
    )
    if status != 0 and _is_local(run_dir):
        with contextlib.suppress(OSError):
            os.rmdir(run_dir)  # only when the run left it empty
    if status in (EXIT_SIGINT, EXIT_SIGTERM):
        how = "terminated by SIGTERM" if status == EXIT_SIGTERM else "interrupted (SIGINT)"
        _say(f"{how}; the run into {run_dir!r} did not finish (no manifest) and {kept}")
        return status
    if status != 0:
        if status != EXIT_USAGE:  # a usage error was already said in one sentence
            _say(f"the run into {run_dir!r} failed (exit status {status}); {kept}")
        return status
    try:
        _, manifest = open_output(run_dir, "the new run")
        if manifest.get("accounting", {}).get("closes") is not True:
            raise OutputDirError(f"the manifest of {run_dir!r} says its accounting does not close")
        diff_path = None
        if previous is not None:
            diff = diff_outputs(previous, run_dir)
            diff_path = f"{run_dir}{DIFF_SUFFIX}"
            text = json.dumps(diff.to_json(), indent=2, ensure_ascii=False) + "\n"
            write_whole(diff_path, text.encode("utf-8"), temp_prefix=".")
        write_whole(f"{runs}/{LATEST_NAME}", f"{run_dir}\n".encode(), temp_prefix=".")
    except Exception as exc:  # the run is there, but it is not published
        _print_debug(debug)
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        _say(f"the run into {run_dir!r} finished but was not published ({first}); {kept}")
        return EXIT_DATA
    print(
        f"{_PROG}: {runs}/{LATEST_NAME} -> {run_dir}"
        + (f" (diff against {previous}: {diff_path})" if diff_path else " (full run)")
    )
    return 0


def _print_debug(debug: bool) -> None:
    if debug:
        traceback.print_exc()
