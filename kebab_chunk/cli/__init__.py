"""The ``kebab-chunk`` command line.

Sub-commands: ``labels`` (list labels), ``parse FILE`` (CanonicalDocument JSON),
``chunk FILE... --label LABEL`` (JSON Lines of chunk records) and ``run`` (the Beam
pipeline, options parsed by :mod:`kebab_chunk.cli.run`), ``rechunk`` (a scheduled update of
one table, :mod:`kebab_chunk.cli.rechunk`), ``expire`` (drop an updated output's old
snapshots, :mod:`kebab_chunk.cli.expire`), ``compact`` and ``export`` (an updated output
rewritten, :mod:`kebab_chunk.cli.tables`), ``eval`` (retrieval quality of chunker
settings, :mod:`kebab_chunk.cli.eval`), ``sync`` (a vector store made equal to an output,
:mod:`kebab_chunk.cli.sync`). Every user error is one
sentence on stderr and exit status 2. ``parse`` and ``chunk`` take the parse limits of
``run`` (``--max-pages``, ``--max-blocks``, ``--max-nesting``, ``--parse-timeout-s``), so a
document that ``run`` accepts with a raised limit can also be looked at on its own.
``--debug`` (tracebacks) and ``--verbose`` (INFO log records, Apache Beam's included) may
be given anywhere before ``--``; every ``--help`` shows each option's default.
``run``, ``rechunk``, ``expire``, ``compact`` and ``export`` need the ``pipeline`` extra
(Apache Beam), ``inspect`` and ``report`` the ``report`` extra, ``eval`` the ``eval`` extra;
where it is not installed the command says so in one sentence (exit status 2).
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from kebab_chunk.cli._io import UsageError, print_debug
from kebab_chunk.cli._options import (
    DefaultsHelpFormatter,
    configure_logging,
    unknown_option,
    unknown_option_sentence,
)
from kebab_chunk.cli.chunk import add_chunk_parsers, cmd_chunk, cmd_labels
from kebab_chunk.cli.diff import add_diff_parser, cmd_diff
from kebab_chunk.cli.eval import add_eval_parser, cmd_eval
from kebab_chunk.cli.exits import EXIT_DATA, EXIT_USAGE
from kebab_chunk.cli.expire import add_expire_parser, cmd_expire
from kebab_chunk.cli.parse import add_parse_parser, cmd_parse
from kebab_chunk.cli.report import (
    add_inspect_parser,
    add_report_parser,
    add_view_parser,
    cmd_inspect,
    cmd_report,
    cmd_view,
)
from kebab_chunk.cli.sync import add_sync_parser, cmd_sync
from kebab_chunk.cli.tables import add_table_parsers, cmd_compact, cmd_export
from kebab_chunk.errors import KebabError, MissingDependencyError

__all__ = ["main"]

_PIPELINE = ("pipeline", {"apache_beam": "Apache Beam"})
_REPORT = ("report", {"numpy": "numpy"})
#: The commands that need more than the library install: the extra each needs and the
#: packages of that extra it imports (top-level module -> name in the sentence).
_EXTRA_OF_COMMAND: dict[str, tuple[str, dict[str, str]]] = {
    "run": _PIPELINE,
    "rechunk": _PIPELINE,
    "expire": _PIPELINE,
    "compact": _PIPELINE,
    "export": _PIPELINE,
    "inspect": _REPORT,
    "report": _REPORT,
    "eval": ("eval", {"numpy": "numpy"}),
}
#: Old names of commands, still run but shown nowhere (help, usage, errors): old name ->
#: the command's name.
_OLD_COMMAND_NAMES = {"chunkers": "labels"}


def _check_extra(command: str) -> None:
    """Raise MissingDependencyError (one sentence) when a package of the extra ``command``
    needs is not installed, before the command imports it."""
    extra, packages = _EXTRA_OF_COMMAND.get(command, ("", {}))
    for module, package in packages.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise MissingDependencyError.for_extra(f"the {command} command", package, extra)


def _not_apitools_notice(record: logging.LogRecord) -> bool:
    # Beam logs this on import whenever the optional GCP client libraries are absent; it is
    # noise for local and non-GCP runs, and it would break the CLI's one-line error output.
    return "apitools not found" not in record.getMessage()


# Installed before any command imports Beam (``run`` and ``rechunk`` do, lazily).
logging.getLogger().addFilter(_not_apitools_notice)


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad option in one sentence instead of a usage block, and
    shows every option's default in ``--help``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", DefaultsHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"kebab-chunk: {message}; see '{self.prog} --help'.\n")
        raise SystemExit(EXIT_USAGE)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """A sub-command's unknown option is named first, with the option it is close to
        (``--ouput``: did you mean ``--output``?), not as a missing required option."""
        if args is not None and self._subparsers is None:
            typo = unknown_option(args, self._option_string_actions, abbrev=self.allow_abbrev)
            if typo is not None and typo[1] is not None:
                sys.stderr.write(f"kebab-chunk: {unknown_option_sentence(*typo, '')}\n")
                raise SystemExit(EXIT_USAGE)
            if typo is not None:
                self.error(f"unknown option {typo[0]!r}")
        return super().parse_known_args(args, namespace)


def _build_parser() -> _Parser:
    parser = _Parser(prog="kebab-chunk", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--debug",
        action="store_true",
        help="on an error print the traceback, not one sentence (any position)",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="also log INFO records, Apache Beam's included, to stderr (any position)",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    add_chunk_parsers(sub)
    add_parse_parser(sub)
    add_inspect_parser(sub)
    add_report_parser(sub)
    add_view_parser(sub)
    add_diff_parser(sub)
    add_table_parsers(sub)
    add_expire_parser(sub)
    add_sync_parser(sub)
    add_eval_parser(sub)

    sub.add_parser(
        "run",
        help="run the Beam pipeline over a corpus (see 'kebab-chunk run --help')",
        add_help=False,
    )
    sub.add_parser(
        "rechunk",
        help="update the table RUNS/table from a corpus (run --update), then optionally "
        "expire old snapshots (see 'kebab-chunk rechunk --help')",
        add_help=False,
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    argv, debug = _take_flag(list(sys.argv[1:] if argv is None else argv), "--debug")
    argv, verbose = _take_flag(argv, "--verbose")
    configure_logging(verbose)
    if argv and argv[0] in _OLD_COMMAND_NAMES:
        argv[0] = _OLD_COMMAND_NAMES[argv[0]]
    if argv and argv[0] in ("run", "rechunk"):
        # The pipeline's own options (run also takes them from python -m pipelines...).
        argv += ["--debug"] * debug + ["--verbose"] * verbose
        try:  # before Apache Beam is imported, which their --help needs too
            _check_extra(argv[0])
        except MissingDependencyError as exc:
            sys.stderr.write(f"kebab-chunk: {exc}.\n")
            return EXIT_USAGE
        if argv[0] == "rechunk":
            from kebab_chunk.cli.rechunk import main as command_main
        else:
            from kebab_chunk.cli.run import main as command_main
        status: int = command_main(argv[1:])
        return status
    args = _build_parser().parse_args(argv)
    try:
        _check_extra(args.command)
        if args.command == "labels":
            return cmd_labels()
        commands = {
            "parse": cmd_parse,
            "chunk": cmd_chunk,
            "diff": cmd_diff,
            "compact": cmd_compact,
            "export": cmd_export,
            "expire": cmd_expire,
            "sync": cmd_sync,
            "eval": cmd_eval,
            "inspect": cmd_inspect,
            "report": cmd_report,
            "view": cmd_view,
        }
        return commands[args.command](args)
    except (UsageError, KebabError) as exc:
        print_debug(debug)
        message = str(exc).rstrip(".")
        sys.stderr.write(f"kebab-chunk: {message}.\n")
        return EXIT_USAGE
    except BrokenPipeError:  # e.g. piped into head
        return 0
    except Exception as exc:  # unforeseen: still one sentence, the traceback on request
        print_debug(debug)
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        sys.stderr.write(
            f"kebab-chunk: unexpected {type(exc).__name__}: {first}; rerun with --debug for "
            "the traceback.\n"
        )
        return EXIT_DATA


def _take_flag(argv: list[str], flag: str) -> tuple[list[str], bool]:
    """Remove ``flag`` from anywhere before the first ``--``; report whether it was there."""
    end = argv.index("--") if "--" in argv else len(argv)
    given = flag in argv[:end]
    return [a for i, a in enumerate(argv) if i >= end or a != flag], given
