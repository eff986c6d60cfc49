"""The ``kebab-chunk`` command line.

Sub-commands: ``chunkers`` (list labels), ``parse FILE`` (CanonicalDocument JSON),
``chunk FILE... --chunker LABEL`` (JSON Lines of chunk records) and ``run`` (the Beam
pipeline, options parsed by :mod:`pipelines.chunk_corpus`), ``rechunk`` (a scheduled run into
a runs folder, :mod:`kebab_chunk.rechunk`). Every user error is one
sentence on stderr and exit status 2. ``parse`` and ``chunk`` take the parse limits of
``run`` (``--max-pages``, ``--max-blocks``, ``--max-nesting``, ``--parse-timeout-s``), so a
document that ``run`` accepts with a raised limit can also be looked at on its own.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from kebab_chunk._cli_io import UsageError, read_input, source_uri_for
from kebab_chunk.chunkers.registry import get_chunker, registered_labels
from kebab_chunk.errors import KebabError, LimitExceededError, ParseError
from kebab_chunk.model import ChunkPolicy, make_policy
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits
from kebab_chunk.parsers.registry import ParserChoice
from kebab_chunk.report.progress import Progress
from kebab_chunk.tokenizers import canonical_tokenizer_name, get_tokenizer

__all__ = ["main"]

EXIT_USAGE = 2
EXIT_DATA = 1  # some input files could not be parsed; the others were processed
EXIT_BUSY = 75  # EX_TEMPFAIL: another ``rechunk`` holds the runs folder; retry later


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad option in one sentence instead of a usage block."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"kebab-chunk: {message}; see '{self.prog} --help'.\n")
        raise SystemExit(EXIT_USAGE)


def add_policy_arguments(parser: argparse.ArgumentParser) -> None:
    """The chunk policy flags, shared by ``chunk`` and (by name) the pipeline."""
    defaults = ChunkPolicy()
    parser.add_argument("--target-tokens", type=int, default=defaults.target_tokens)
    parser.add_argument("--overlap-tokens", type=int, default=defaults.overlap_tokens)
    parser.add_argument("--max-tokens", type=int, default=defaults.max_tokens)
    parser.add_argument(
        "--tokenizer",
        default=defaults.tokenizer,
        help="bytes-3 (default), chars, hf:all-MiniLM-L6-v2, hf:PATH, tiktoken:cl100k_base, "
        "tiktoken:o200k_base (short forms cl100k_base, o200k_base, all-MiniLM-L6-v2)",
    )
    parser.add_argument("--no-merge-peers", dest="merge_peers", action="store_false")
    parser.add_argument("--no-merge-list-items", dest="merge_list_items", action="store_false")


def policy_from_args(args: argparse.Namespace) -> ChunkPolicy:
    """The validated policy; the tokenizer name is canonicalised and loaded once up front,
    so a bad name fails here in one sentence rather than once per document."""
    policy = make_policy(
        target_tokens=args.target_tokens,
        overlap_tokens=args.overlap_tokens,
        max_tokens=args.max_tokens,
        tokenizer=canonical_tokenizer_name(args.tokenizer),
        merge_peers=args.merge_peers,
        merge_list_items=args.merge_list_items,
    )
    get_tokenizer(policy.tokenizer)
    return policy


def add_parsers_argument(parser: argparse.ArgumentParser) -> None:
    """``--parsers``: parser versions to use instead of the media types' defaults."""
    parser.add_argument(
        "--parsers",
        default=None,
        metavar="VERSIONS",
        help="comma-separated parser versions replacing the defaults for the media types "
        "they read (e.g. md-mistune-v1)",
    )


#: ParseLimits field -> the option that sets it, to name the option in a limit error.
_LIMIT_OPTIONS = {
    "max_pages": "--max-pages",
    "max_blocks": "--max-blocks",
    "max_nesting": "--max-nesting",
    "time_budget_s": "--parse-timeout-s",
}


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """The parse limits, as ``run`` names them; defaults are :data:`DEFAULT_LIMITS`."""
    parser.add_argument(
        "--max-pages",
        type=int,
        metavar="N",
        default=DEFAULT_LIMITS.max_pages,
        help="a PDF with more pages is refused (default %(default)s)",
    )
    parser.add_argument(
        "--max-blocks",
        type=int,
        metavar="N",
        default=DEFAULT_LIMITS.max_blocks,
        help="a document with more blocks (rows, paragraphs) is refused (default %(default)s)",
    )
    parser.add_argument(
        "--max-nesting",
        type=int,
        metavar="N",
        default=DEFAULT_LIMITS.max_nesting,
        help="deepest nesting of lists/quotes parsed as structure (default %(default)s)",
    )
    parser.add_argument(
        "--parse-timeout-s",
        type=float,
        metavar="SECONDS",
        default=DEFAULT_LIMITS.time_budget_s,
        help="parse time budget per document in seconds, checked by the Markdown and PDF "
        "parsers between steps (default %(default)s)",
    )


def limits_from_args(args: argparse.Namespace) -> ParseLimits:
    """The validated limits; a value that is not > 0 is a one-sentence UsageError."""
    for option, value in (
        ("--max-pages", args.max_pages),
        ("--max-blocks", args.max_blocks),
        ("--max-nesting", args.max_nesting),
        ("--parse-timeout-s", args.parse_timeout_s),
    ):
        if not value > 0:  # also refuses NaN
            raise UsageError(f"{option} must be > 0, got {value}")
    return ParseLimits(
        max_pages=args.max_pages,
        max_blocks=args.max_blocks,
        max_nesting=args.max_nesting,
        time_budget_s=args.parse_timeout_s,
    )


def _parse_error_sentence(exc: ParseError) -> str:
    """The error's sentence, naming the option that raises the limit it hit."""
    message = str(exc).rstrip().rstrip(".")
    if isinstance(exc, LimitExceededError):
        options = [opt for field, opt in _LIMIT_OPTIONS.items() if field in message]
        if options:
            message += f" (the option is {' or '.join(options)})"
    return message


def _build_parser() -> _Parser:
    parser = _Parser(prog="kebab-chunk", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--debug",
        action="store_true",
        help="on an error print the traceback, not one sentence (any position)",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    sub.add_parser("chunkers", help="list the registered chunker labels and what they accept")

    p_parse = sub.add_parser("parse", help="print a file's CanonicalDocument as JSON")
    p_parse.add_argument("file")
    p_parse.add_argument("--root", help="make source_uri relative to this directory")
    add_parsers_argument(p_parse)
    add_limit_arguments(p_parse)

    p_chunk = sub.add_parser("chunk", help="print chunk records of files as JSON Lines")
    p_chunk.add_argument("files", nargs="+", metavar="FILE")
    p_chunk.add_argument("--chunker", required=True, metavar="LABEL")
    p_chunk.add_argument("--root", help="make source_uri relative to this directory")
    add_parsers_argument(p_chunk)
    add_policy_arguments(p_chunk)
    add_limit_arguments(p_chunk)

    from kebab_chunk.report.cli import add_inspect_parser, add_report_parser, add_view_parser

    add_inspect_parser(sub)
    add_report_parser(sub)
    add_view_parser(sub)

    from kebab_chunk.diff import add_diff_parser

    add_diff_parser(sub)

    sub.add_parser(
        "run",
        help="run the Beam pipeline over a corpus (see 'kebab-chunk run --help')",
        add_help=False,
    )
    sub.add_parser(
        "rechunk",
        help="run the pipeline into RUNS/<UTC stamp> with the last good run as --previous, "
        "then move RUNS/latest (see 'kebab-chunk rechunk --help')",
        add_help=False,
    )
    return parser


def _cmd_chunkers() -> int:
    for label in registered_labels():
        print(f"{label}\t{get_chunker(label).accepts_description}")
    return 0


def _cmd_parse(args: argparse.Namespace) -> int:
    limits = limits_from_args(args)
    parse = ParserChoice.from_option(args.parsers)
    raw = read_input(args.file)
    try:
        doc = parse(raw, source_uri_for(args.file, args.root), limits=limits)
    except LimitExceededError as exc:
        raise LimitExceededError(_parse_error_sentence(exc)) from exc
    print(doc.model_dump_json(indent=2))
    return 0


def _cmd_chunk(args: argparse.Namespace) -> int:
    """Chunk every file; a file that fails to parse is reported and skipped (exit 1)."""
    chunker = get_chunker(args.chunker)
    policy = policy_from_args(args)
    limits = limits_from_args(args)
    parse = ParserChoice.from_option(args.parsers)
    inputs = [(read_input(path), source_uri_for(path, args.root)) for path in args.files]
    status = 0
    with Progress(total=len(inputs)) as progress:
        for raw, uri in inputs:
            try:
                doc = parse(raw, uri, limits=limits)
            except ParseError as exc:
                sys.stderr.write(f"kebab-chunk: {_parse_error_sentence(exc)}.\n")  # names the file
                status = EXIT_DATA
                progress.advance(error=True)
                continue
            for record in chunker.chunk(doc, policy):
                sys.stdout.write(record.model_dump_json() + "\n")
            progress.advance()
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    argv, debug = _take_debug(list(sys.argv[1:] if argv is None else argv))
    if debug and argv and argv[0] in ("run", "rechunk"):
        argv.append("--debug")  # the pipeline's own option
    if argv and argv[0] == "rechunk":
        import kebab_chunk.beam  # (first: filters Beam's import-time GCP notice)
        from kebab_chunk.rechunk import main as rechunk_main

        return rechunk_main(argv[1:])
    if argv and argv[0] == "run":
        import kebab_chunk.beam  # noqa: F401  (first: filters Beam's import-time GCP notice)
        from pipelines.chunk_corpus import main as run_main

        status: int = run_main(argv[1:])
        return status
    args = _build_parser().parse_args(argv)
    try:
        if args.command == "chunkers":
            return _cmd_chunkers()
        if args.command == "parse":
            return _cmd_parse(args)
        if args.command == "diff":
            from kebab_chunk.diff import cmd_diff

            return cmd_diff(args)
        if args.command in ("inspect", "report", "view"):
            from kebab_chunk.report.cli import cmd_inspect, cmd_report, cmd_view

            commands = {"inspect": cmd_inspect, "report": cmd_report, "view": cmd_view}
            return commands[args.command](args)
        return _cmd_chunk(args)
    except (UsageError, KebabError) as exc:
        _print_debug(debug)
        message = str(exc).rstrip(".")
        sys.stderr.write(f"kebab-chunk: {message}.\n")
        return EXIT_USAGE
    except BrokenPipeError:  # e.g. piped into head
        return 0
    except Exception as exc:  # unforeseen: still one sentence, the traceback on request
        _print_debug(debug)
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        sys.stderr.write(
            f"kebab-chunk: unexpected {type(exc).__name__}: {first}; rerun with --debug for "
            "the traceback.\n"
        )
        return EXIT_DATA


def _take_debug(argv: list[str]) -> tuple[list[str], bool]:
    """Remove ``--debug`` from anywhere before the first ``--``; report whether it was there."""
    end = argv.index("--") if "--" in argv else len(argv)
    debug = "--debug" in argv[:end]
    return [a for i, a in enumerate(argv) if i >= end or a != "--debug"], debug


def _print_debug(debug: bool) -> None:
    """With --debug, print the traceback of the exception being handled."""
    if debug:
        traceback.print_exc()


if __name__ == "__main__":
    raise SystemExit(main())
