"""``kebab-chunk parse FILE``: print a file's CanonicalDocument as JSON."""

from __future__ import annotations

import argparse
from typing import Any

from kebab_chunk.cli._io import read_input, source_uri_for
from kebab_chunk.cli._options import (
    add_limit_arguments,
    add_parsers_argument,
    limits_from_args,
    parse_error_sentence,
)
from kebab_chunk.errors import LimitExceededError
from kebab_chunk.parsers.registry import ParserChoice

__all__ = ["add_parse_parser", "cmd_parse"]


def add_parse_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("parse", help="print a file's CanonicalDocument as JSON")
    p.add_argument("file", help="the document to parse")
    p.add_argument(
        "--root",
        help="make source_uri relative to this directory (default: the path as given)",
    )
    add_parsers_argument(p)
    add_limit_arguments(p)


def cmd_parse(args: argparse.Namespace) -> int:
    limits = limits_from_args(args)
    parse = ParserChoice.from_option(args.parsers)
    raw = read_input(args.file)
    try:
        doc = parse(raw, source_uri_for(args.file, args.root), limits=limits)
    except LimitExceededError as exc:
        raise LimitExceededError(parse_error_sentence(exc)) from exc
    print(doc.model_dump_json(indent=2))
    return 0
