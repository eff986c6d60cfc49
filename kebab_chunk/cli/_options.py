"""Options and checks shared by several commands.

The chunk policy, parser versions and parse limits (``run`` and ``rechunk`` take the same
parse limits as ``parse`` and ``chunk``, so a document that a run accepts with a raised
limit can also be looked at on its own); the help formatter that shows every default; the
checks that turn a missing file-system extra or a tokenizer no chunker uses into one
sentence before anything runs; and where log records go (``--verbose``).
"""

from __future__ import annotations

import argparse
import difflib
import logging
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE, check_tokenizer_use
from kebab_chunk.errors import LimitExceededError, ParseError, UsageError
from kebab_chunk.model import ChunkPolicy, make_policy
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits
from kebab_chunk.parsers.registry import (
    DEFAULT_PARSER_VERSIONS,
    MEDIA_TYPE_NAMES,
    media_type_names,
    parser_versions,
)
from kebab_chunk.report.progress import write_above
from kebab_chunk.tokenizers import canonical_tokenizer_name, get_tokenizer

__all__ = [
    "DefaultsHelpFormatter",
    "add_limit_arguments",
    "add_merge_arguments",
    "add_old_spelling",
    "add_parsers_argument",
    "add_policy_arguments",
    "check_filesystems",
    "check_tokenizer_use",
    "configure_logging",
    "default_labels_help",
    "default_parsers_help",
    "limits_from_args",
    "parse_error_sentence",
    "policy_from_args",
    "unknown_option",
    "unknown_option_sentence",
]


#: How help texts name a media type.
def default_labels_help() -> str:
    """The default labels per media type as help text, from the registry itself (so a
    change of default cannot leave the help behind): ``md-heading-v3 for Markdown and
    plain text, ...``."""
    grouped: dict[str, list[str]] = {}
    for media_type, labels in DEFAULT_LABELS_BY_MEDIA_TYPE.items():
        grouped.setdefault(" + ".join(labels), []).append(media_type)
    return ", ".join(f"{labels} for {media_type_names(types)}" for labels, types in grouped.items())


def default_parsers_help() -> str:
    """The default parser of every media type that has more than one version, as help
    text (the others have only the one)."""
    readers = [t for types in parser_versions().values() for t in types]
    choices = [
        f"{version} for {MEDIA_TYPE_NAMES.get(media_type, media_type)}"
        for media_type, version in DEFAULT_PARSER_VERSIONS.items()
        if readers.count(media_type) > 1
    ]
    return ", ".join(choices) + "; the only version of every other media type"


class DefaultsHelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` shows each option's default: ``(default: X)`` is added to its help unless
    the help already speaks of its default, or there is none to show (a flag, no value)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if (
            "default" in text
            or not action.option_strings
            or action.nargs == 0
            or action.default in (None, argparse.SUPPRESS)
        ):
            return text
        return f"{text} (default: %(default)s)".lstrip()


def add_policy_arguments(parser: argparse.ArgumentParser) -> None:
    """The chunk policy flags, shared by ``chunk`` and (by name) the pipeline."""
    defaults = ChunkPolicy()
    parser.add_argument(
        "--target-tokens",
        type=int,
        metavar="N",
        default=defaults.target_tokens,
        help="chunk size target in tokens",
    )
    parser.add_argument(
        "--overlap-tokens",
        type=int,
        metavar="N",
        default=defaults.overlap_tokens,
        help="tokens shared by neighbouring chunks",
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        metavar="N",
        default=defaults.max_tokens,
        help="hard cap of token-aware chunkers (default: the tokenizer's limit, else "
        "--target-tokens)",
    )
    parser.add_argument(
        "--tokenizer",
        default=defaults.tokenizer,
        help="token counter of token-aware chunkers: bytes-3 (default), chars, "
        "hf:all-MiniLM-L6-v2, hf:PATH, tiktoken:cl100k_base, tiktoken:o200k_base (short "
        "forms cl100k_base, o200k_base, all-MiniLM-L6-v2)",
    )
    add_merge_arguments(parser)


def add_merge_arguments(parser: argparse.ArgumentParser) -> None:
    """The policy's two switches (``merge_peers``, ``merge_list_items``), shared by
    ``chunk``, ``view``, ``run`` and (through ``run``) ``rechunk``; both enter the policy
    hash, so ``--previous`` reuses nothing chunked with the other setting."""
    parser.add_argument(
        "--no-merge-peers",
        dest="merge_peers",
        action="store_false",
        help="md-heading-v2 and hybrid-v1 to v3: keep neighbouring pieces apart "
        "instead of merging them while they fit (the stable-id setting, "
        "docs/guide/scheduling.md)",
    )
    parser.add_argument(
        "--no-merge-list-items",
        dest="merge_list_items",
        action="store_false",
        help="hierarchical-v1 and hybrid-v1 to v3: one chunk per list item instead of "
        "per list",
    )


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
        f"they read (e.g. md-mistune-v1; default: {default_parsers_help()})",
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


def check_filesystems(paths: dict[str, Any]) -> None:
    """:func:`kebab_chunk.beam.locations.check_filesystems`, importing Apache Beam only when
    called: ``parse`` and ``chunk`` never need it, and importing it logs before the CLI's
    log filter is in place."""
    from kebab_chunk.beam.locations import check_filesystems as check

    check(paths)


#: The name of the handler :func:`configure_logging` installs on the root logger.
_HANDLER_NAME = "kebab-chunk"


class _StderrHandler(logging.Handler):
    """Log records on stderr, written above the progress bar when one is drawn."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            write_above(self.format(record), sys.stderr)
        except Exception:
            self.handleError(record)


def configure_logging(verbose: bool) -> None:
    """Send log records to stderr: warnings and errors only, or with ``verbose`` INFO too.

    Apache Beam and its job servers log every stage at INFO; that flood stays off the
    terminal unless ``--verbose``. The handler replaces a plain stderr handler that
    ``logging.basicConfig`` (called by Beam) may have installed, so records are not printed
    twice; calling this again only changes the level.
    """
    root = logging.getLogger()
    handler = next((h for h in root.handlers if h.get_name() == _HANDLER_NAME), None)
    if handler is None:
        for old in list(root.handlers):
            plain = type(old) is logging.StreamHandler
            if plain and getattr(old, "stream", None) in (sys.stderr, sys.__stderr__):
                root.removeHandler(old)
        handler = _StderrHandler()
        handler.set_name(_HANDLER_NAME)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    handler.setLevel(logging.NOTSET if verbose else logging.WARNING)
    if verbose and root.getEffectiveLevel() > logging.INFO:
        root.setLevel(logging.INFO)


class _OldSpelling(argparse._StoreAction):
    """An option's old spelling: stores its value where the option does; shown nowhere."""

    def __init__(self, *args: Any, new: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.new = new


def add_old_spelling(parser: Any, old: str, new: argparse.Action) -> None:
    """Accept ``old`` as a spelling of the option ``new`` that no help, usage line or
    suggestion shows: an option renamed keeps its old name for the scripts that use it.
    ``parser`` is a parser or a group of one (a required option goes in a required
    mutually exclusive group with its old spelling)."""
    parser.add_argument(
        old,
        action=_OldSpelling,
        new=new.option_strings[0],
        dest=new.dest,
        metavar=new.metavar,
        default=argparse.SUPPRESS,
        help=argparse.SUPPRESS,
    )


def unknown_option(
    args: Sequence[str], known: Mapping[str, argparse.Action], *, abbrev: bool = False
) -> tuple[str, str | None] | None:
    """The first ``--option`` in ``args`` (before ``--``) that none of ``known`` is, with
    the known option closest to it (None if none is close); None when every one is known.

    Checked before argparse parses, because argparse reports a missing required option
    first: a typo ``--ouput`` read as "--output is required". ``abbrev``: a prefix of a
    known option is argparse's to accept (or to call ambiguous), not unknown. An old
    spelling (:func:`add_old_spelling`) is known, but the option suggested for a typo close
    to it is the one help shows.
    """
    for arg in args:
        if arg == "--":
            break
        if not arg.startswith("--") or len(arg) < 3:
            continue
        name = arg.split("=", 1)[0]
        if name in known or (abbrev and any(k.startswith(name) for k in known)):
            continue
        bare = {k.lstrip("-"): k for k in known if k.startswith("--")}
        close = difflib.get_close_matches(name.lstrip("-"), bare, n=1, cutoff=0.75)
        if not close:
            return name, None
        action = known[bare[close[0]]]
        return name, action.new if isinstance(action, _OldSpelling) else bare[close[0]]
    return None


def unknown_option_sentence(name: str, close: str | None, otherwise: str) -> str:
    """``unknown option '--ouput'; did you mean '--output'?``, or ``otherwise`` after the
    name when no known option is close."""
    if close is not None:
        return f"unknown option {name!r}; did you mean {close!r}?"
    return f"unknown option {name!r}{otherwise}"
