"""``kebab-chunk chunk FILE... --label LABEL`` (chunk records as JSON Lines) and
``kebab-chunk labels`` (the registered labels, what each accepts, which are defaults)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kebab_chunk.chunkers.embedding import with_embedding
from kebab_chunk.chunkers.registry import (
    DEFAULT_LABELS_BY_MEDIA_TYPE,
    get_chunker,
    registered_labels,
)
from kebab_chunk.cli._io import read_input, source_uri_for
from kebab_chunk.cli._options import (
    add_limit_arguments,
    add_old_spelling,
    add_parsers_argument,
    add_policy_arguments,
    check_tokenizer_use,
    limits_from_args,
    parse_error_sentence,
    policy_from_args,
)
from kebab_chunk.cli.exits import EXIT_DATA
from kebab_chunk.errors import ParseError
from kebab_chunk.parsers.registry import ParserChoice
from kebab_chunk.report.progress import Progress

__all__ = ["add_chunk_parsers", "cmd_chunk", "cmd_labels"]


def add_chunk_parsers(subparsers: Any) -> None:
    subparsers.add_parser("labels", help="list the registered chunker labels and what they accept")
    p = subparsers.add_parser("chunk", help="print chunk records of files as JSON Lines")
    p.add_argument("files", nargs="+", metavar="FILE", help="the documents to chunk")
    # Required either way: as --label, or as its old spelling --chunker (hidden).
    label = p.add_mutually_exclusive_group(required=True)
    add_old_spelling(
        label,
        "--chunker",
        label.add_argument(
            "--label", metavar="LABEL", help="the chunker label to apply ('kebab-chunk labels')"
        ),
    )
    p.add_argument(
        "--root",
        help="make source_uri relative to this directory (default: the path as given)",
    )
    add_parsers_argument(p)
    add_policy_arguments(p)
    add_limit_arguments(p)


def cmd_labels() -> int:
    """One line per registered label: the label, a tab, what it accepts, and for a label a
    run applies when none is named, the media types it is the default for."""
    for label in registered_labels():
        media = [m for m, labels in DEFAULT_LABELS_BY_MEDIA_TYPE.items() if label in labels]
        default = f" (default for {', '.join(media)})" if media else ""
        print(f"{label}\t{get_chunker(label).accepts_description}{default}")
    return 0


def cmd_chunk(args: argparse.Namespace) -> int:
    """Chunk every file; a file that fails to parse is reported and skipped (exit 1).

    A ``--tokenizer`` the chunker does not use is refused (exit 2): it would change every
    chunk id and nothing else."""
    chunker = get_chunker(args.label)
    policy = policy_from_args(args)
    check_tokenizer_use([args.label], policy.tokenizer)  # one label: refused or fine
    limits = limits_from_args(args)
    parse = ParserChoice.from_option(args.parsers)
    inputs = [(read_input(path), source_uri_for(path, args.root)) for path in args.files]
    status = 0
    with Progress(total=len(inputs)) as progress:
        for raw, uri in inputs:
            try:
                doc = parse(raw, uri, limits=limits)
            except ParseError as exc:
                sys.stderr.write(f"kebab-chunk: {parse_error_sentence(exc)}.\n")  # names the file
                status = EXIT_DATA
                progress.advance(error=True)
                continue
            for record in with_embedding(chunker.chunk(doc, policy), chunker, policy):
                sys.stdout.write(record.model_dump_json() + "\n")
            progress.advance()
    return status
