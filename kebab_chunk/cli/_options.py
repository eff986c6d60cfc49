"""Options shared by several commands: the chunk policy, parser versions, parse limits.

``run`` and ``rechunk`` take the same parse limits as ``parse`` and ``chunk``, so a document
that a run accepts with a raised limit can also be looked at on its own.
"""

from __future__ import annotations

import argparse

from kebab_chunk.errors import LimitExceededError, ParseError, UsageError
from kebab_chunk.model import ChunkPolicy, make_policy
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits
from kebab_chunk.tokenizers import canonical_tokenizer_name, get_tokenizer

__all__ = [
    "add_limit_arguments",
    "add_parsers_argument",
    "add_policy_arguments",
    "limits_from_args",
    "parse_error_sentence",
    "policy_from_args",
]


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


#: ParseLimits field -> (type, metavar, help) of its option (named in _LIMIT_OPTIONS).
_LIMIT_HELP: dict[str, tuple[type, str, str]] = {
    "max_pages": (int, "N", "a PDF with more pages is refused"),
    "max_blocks": (int, "N", "a document with more blocks (rows, paragraphs) is refused"),
    "max_nesting": (int, "N", "deepest nesting of lists/quotes parsed as structure"),
    "time_budget_s": (
        float,
        "SECONDS",
        "parse time budget per document in seconds, checked by the Markdown and PDF parsers "
        "between steps",
    ),
}


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """The parse limits, as ``run`` names them; defaults are :data:`DEFAULT_LIMITS`."""
    for field, (kind, metavar, text) in _LIMIT_HELP.items():
        parser.add_argument(
            _LIMIT_OPTIONS[field],
            dest=field,
            type=kind,
            metavar=metavar,
            default=getattr(DEFAULT_LIMITS, field),
            help=f"{text} (default %(default)s)",
        )


def limits_from_args(args: argparse.Namespace) -> ParseLimits:
    """The validated limits; a value that is not > 0 is a one-sentence UsageError."""
    values = {field: getattr(args, field) for field in _LIMIT_OPTIONS}
    for field, value in values.items():
        if not value > 0:  # also refuses NaN
            raise UsageError(f"{_LIMIT_OPTIONS[field]} must be > 0, got {value}.")
    return ParseLimits(**values)


def parse_error_sentence(exc: ParseError) -> str:
    """The error's sentence, naming the option that raises the limit it hit."""
    message = str(exc).rstrip().rstrip(".")
    if isinstance(exc, LimitExceededError):
        options = [opt for field, opt in _LIMIT_OPTIONS.items() if field in message]
        if options:
            message += f" (the option is {' or '.join(options)})"
    return message
