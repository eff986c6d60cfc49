# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""``kebab-chunk run``: options, the run summary, exit codes and signals of the job.

Run it as ``kebab-chunk run ...`` or ``python -m pipelines.chunk_corpus ...``. Options of
our own are parsed here into a ``RunConfig``; every other argument is a standard Beam
pipeline option (``--runner``, ``--direct_running_mode``, ``--job_endpoint``,
``--project``, ...), passed through unchanged, so the same command runs on the
DirectRunner, Flink, Spark or Dataflow. The Beam graph itself is
``kebab_chunk/beam/graph.py``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any, NoReturn

from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.runners.runner import PipelineState

from kebab_chunk.beam.chunk import DEFAULT_CHUNK_TIMEOUT_S
from kebab_chunk.beam.claim import claim_output
from kebab_chunk.beam.graph import (
    RunConfig,
    check_update_options,
    execute,
    load_previous_run,
    prepare,
)
from kebab_chunk.beam.incremental import (
    incremental_summary,
)
from kebab_chunk.beam.locations import resolve_corpora
from kebab_chunk.beam.manifest import MANIFEST_NAME
from kebab_chunk.beam.parse import DEFAULT_MAX_MEMORY_MB
from kebab_chunk.beam.progress import count_selected_files
from kebab_chunk.beam.read import DEFAULT_MAX_FILE_BYTES
from kebab_chunk.chunkers.registry import get_chunker, registered_labels
from kebab_chunk.cli._io import print_debug
from kebab_chunk.cli._options import (
    DefaultsHelpFormatter,
    add_limit_arguments,
    add_merge_arguments,
    add_old_spelling,
    check_filesystems,
    check_tokenizer_use,
    configure_logging,
    default_labels_help,
    default_parsers_help,
    limits_from_args,
    unknown_option,
    unknown_option_sentence,
)
from kebab_chunk.cli._signals import StopSignals
from kebab_chunk.cli.exits import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from kebab_chunk.corpus import SKIPPED_FOLDERS, CorpusFilter
from kebab_chunk.errors import KebabError, RunSetupError, UsageError
from kebab_chunk.model import ChunkPolicy, make_policy
from kebab_chunk.parsers.registry import MediaTypeMap, ParserChoice
from kebab_chunk.tokenizers import canonical_tokenizer_name, get_tokenizer

__all__ = ["UNKNOWN_ELSE", "known_options", "main", "parse_args"]


def _no_download_notice(record: logging.LogRecord) -> bool:
    """Drop Beam's six-line warning before it downloads a job server jar from Maven Central,
    unless --verbose: when the download fails, the run's one sentence names the jar and
    what to do (kebab_chunk/beam/job_service.py); when it works, the jar is cached."""
    return (
        "downloading dependencies from a public repository" not in record.getMessage()
        or logging.getLogger().getEffectiveLevel() <= logging.INFO
    )


logging.getLogger("apache_beam.utils.subprocess_server").addFilter(_no_download_notice)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message}; run with --help for the options.")


def _arg_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="kebab-chunk run",
        allow_abbrev=False,
        formatter_class=DefaultsHelpFormatter,
        description="Chunk a corpus into versioned, content-addressed Parquet records. "
        "Any other --option is a standard Apache Beam pipeline option (e.g. --runner, "
        "--direct_running_mode, --direct_num_workers, --job_endpoint, --project).",
    )
    p.add_argument(
        "--input",
        required=True,
        action="append",
        help="corpus directory, glob or file (local, gs:// or s3://); repeat for several, "
        "all in one file system or bucket: source_uri is then relative to their common "
        "parent folder",
    )
    p.add_argument(
        "--output",
        required=True,
        help="output directory: chunks/, errors/ and manifest.json are written there",
    )
    add_old_spelling(
        p,
        "--chunkers",
        p.add_argument(
            "--labels",
            default=None,
            help=f"comma-separated chunker labels (default: {default_labels_help()})",
        ),
    )
    p.add_argument(
        "--parsers",
        default=None,
        help="comma-separated parser versions to use instead of the defaults for the media "
        f"types they read (e.g. md-mistune-v1; default: {default_parsers_help()})",
    )
    defaults = ChunkPolicy()
    p.add_argument(
        "--target-tokens",
        type=int,
        default=None,
        help=f"chunk size target in tokens (default {defaults.target_tokens})",
    )
    p.add_argument(
        "--overlap-tokens",
        type=int,
        default=None,
        help=f"tokens shared by neighbouring chunks (default {defaults.overlap_tokens})",
    )
    p.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        help="hard cap of token-aware chunkers (default: the tokenizer's limit)",
    )
    p.add_argument(
        "--tokenizer",
        default=None,
        help="token counter of the chunkers that count tokens: bytes-3 (default), chars, "
        "hf:<name or tokenizer.json>, tiktoken:<encoding>; refused when no chosen chunker "
        "uses it (md-heading-v1 and pdf-page-v1 count bytes-3 only, md-header-chars-v1/v2 "
        "bytes-3 or chars)",
    )
    add_merge_arguments(p)
    p.add_argument(
        "--max-file-bytes",
        type=int,
        default=DEFAULT_MAX_FILE_BYTES,
        help="larger files become error rows without being read (default %(default)s)",
    )
    p.add_argument(
        "--overwrite", action="store_true", help="replace a previous output in --output (all of it)"
    )
    p.add_argument(
        "--update",
        action="store_true",
        help="commit a new snapshot of the output already in --output: only new and "
        "changed documents are read again, parsed and written, unchanged ones stay in "
        "place, and the snapshot's change feed lists the chunk ids added, removed and "
        "changed (no output there yet: a full run; docs/guide/scheduling.md)",
    )
    p.add_argument(
        "--previous",
        default=None,
        metavar="PREV_OUTPUT",
        help="an earlier run's output: documents whose bytes, parser, chunker label and "
        "policy are unchanged are not parsed again, their records are carried forward "
        "(default: none, every document is parsed)",
    )
    _add_selection_arguments(p)
    _add_budget_arguments(p)
    return p


def _add_selection_arguments(p: argparse.ArgumentParser) -> None:
    """Which files of the corpus are read.

    kebab_chunk/corpus.py decides; docs/guide/corpus-selection.md explains.
    """
    p.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="GLOB",
        help="read only files matching this glob, relative to the corpus root; repeatable "
        "('*.md' matches at any depth, 'docs/**' everything in docs; default: every file)",
    )
    p.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip files and folders matching this glob; repeatable, wins over --include "
        "(default: none)",
    )
    p.add_argument(
        "--include-hidden",
        action="store_true",
        help="also read hidden files and folders (names starting with '.', such as .git) and "
        f"the folders {', '.join(SKIPPED_FOLDERS)}, which are skipped by default",
    )
    p.add_argument(
        "--media-type",
        action="append",
        default=[],
        metavar="EXT=MEDIA_TYPE",
        help="read files with this extension as this media type; repeatable (e.g. "
        "--media-type .rst=text/plain; default: by extension, see docs/guide/corpus-selection.md)",
    )
    p.add_argument(
        "--skip-unsupported",
        action="store_true",
        help="count files no parser reads (unknown extension, e.g. .gz) as skipped, apart "
        "from errors (default: each is an error row)",
    )


def _corpus_fields(known: argparse.Namespace) -> dict[str, Any]:
    """The RunConfig fields that say which files are read; UsageError for a bad pattern,
    RunSetupError for inputs that cannot be used together."""
    corpus_filter = CorpusFilter.from_options(known.include, known.exclude, known.include_hidden)
    inputs = tuple(known.input)
    corpus = resolve_corpora(inputs)
    # Refused before the output is touched: with --overwrite an empty run would replace a
    # good output. Local corpora only (a remote one is not listed at launch).
    if count_selected_files(corpus, corpus_filter) == 0:
        raise UsageError(_nothing_selected(corpus_filter))
    return {
        "input": inputs[0],
        "inputs": inputs,
        "corpus": corpus,
        "corpus_filter": corpus_filter,
        "media_types": MediaTypeMap.from_option(known.media_type),
        "skip_unsupported": known.skip_unsupported,
    }


def _nothing_selected(corpus_filter: CorpusFilter) -> str:
    if corpus_filter.include or corpus_filter.exclude:
        return (
            "--include/--exclude leave none of the files under --input to read; the globs "
            "match paths relative to the input folder (e.g. --include '**/*.md'), so check "
            "them."
        )
    return (
        "every file under --input is hidden or in a skipped folder "
        f"({', '.join(SKIPPED_FOLDERS)}); add --include-hidden to read them."
    )


def _add_budget_arguments(p: argparse.ArgumentParser) -> None:
    """Per-document isolation budgets and parse limits (docs/guide/limits.md), and --debug."""
    p.add_argument(
        "--chunk-timeout-s",
        type=float,
        default=DEFAULT_CHUNK_TIMEOUT_S,
        help="per-document chunking time budget in seconds, all labels together "
        "(default %(default)s)",
    )
    p.add_argument(
        "--max-memory-mb",
        type=int,
        default=DEFAULT_MAX_MEMORY_MB,
        help="memory a parse or chunk helper process may add per document before the "
        "document becomes an error row (default %(default)s; Linux)",
    )
    add_limit_arguments(p)
    p.add_argument(
        "--debug", action="store_true", help="print the traceback of an error, not one sentence"
    )
    p.add_argument(
        "--verbose",
        action="store_true",
        help="also log INFO records to stderr, Apache Beam's included (without it: warnings "
        "and errors only, and a progress bar on a terminal)",
    )


def _limit_fields(known: argparse.Namespace) -> dict[str, Any]:
    """The validated RunConfig fields of ``_add_budget_arguments``; UsageError if out of range."""
    if not known.chunk_timeout_s > 0:
        raise UsageError(f"--chunk-timeout-s must be > 0, got {known.chunk_timeout_s}.")
    if known.max_memory_mb <= 0:
        raise UsageError(f"--max-memory-mb must be > 0, got {known.max_memory_mb}.")
    return {
        "limits": limits_from_args(known),
        "chunk_timeout_s": known.chunk_timeout_s,
        "max_memory_mb": known.max_memory_mb,
    }


def _beam_parser() -> argparse.ArgumentParser:
    """A parser of every registered Beam pipeline option that refuses what it does not
    know (one sentence), instead of Beam's silent discard."""
    from apache_beam.options.pipeline_options import _BeamArgumentParser

    class _Strict(_BeamArgumentParser):
        def error(self, message: str) -> NoReturn:
            raise UsageError(f"{message} (an Apache Beam option); run with --help for usage.")

    parser = _Strict(allow_abbrev=False)
    seen: dict[str, type] = {}
    for cls in PipelineOptions.__subclasses__():
        seen.setdefault(str(cls), cls)
    for cls in seen.values():
        cls._add_argparse_args(parser)
    return parser


def known_options() -> dict[str, argparse.Action]:
    """Every option ``run`` takes, its own and Apache Beam's, with what parses it."""
    return {
        **_beam_parser()._option_string_actions,
        **_arg_parser()._option_string_actions,
    }


#: How an unknown option without a close known one is reported.
UNKNOWN_ELSE = (
    " (neither a kebab-chunk nor an Apache Beam option); run with --help for the options."
)


def _check_beam_args(beam_args: Sequence[str]) -> None:
    """Refuse arguments no Beam option knows, bad values of Beam options, and a chunker
    label given to Beam's ``--label``."""
    known, unknown = _beam_parser().parse_known_args(list(beam_args))
    if unknown:
        raise UsageError(f"unknown option {unknown[0]!r}{UNKNOWN_ELSE}")
    for value in getattr(known, "labels", None) or ():
        # Beam's --label sets Dataflow job labels (key=value): a run given a chunker label
        # there would go on with the default labels.
        if {name.strip() for name in value.split(",")} & set(registered_labels()):
            raise UsageError(
                f"--label {value} sets an Apache Beam (Dataflow) job label; name chunker "
                f"labels with --labels {value}."
            )


def _chunker_labels(option: str) -> tuple[str, ...]:
    """The labels of ``--labels``, each registered; a Dataflow job label given there (Beam's
    --labels before ours had that name) is named as one."""
    labels = tuple(dict.fromkeys(s.strip() for s in option.split(",") if s.strip()))
    if not labels:
        raise UsageError("--labels is empty; name at least one chunker label.")
    for label in labels:
        if "=" in label or label.startswith("{"):
            raise UsageError(
                f"--labels names chunker labels, and {label!r} looks like a job label; give Apache "
                "Beam (Dataflow) job labels as --label KEY=VALUE, once per label."
            )
        get_chunker(label)
    return labels


def parse_args(argv: Sequence[str]) -> tuple[RunConfig, list[str]]:
    """Our options -> a validated RunConfig; the rest -> Beam arguments.

    Raises UsageError (or a KebabError) with one sentence on any bad value; does not
    touch the output directory.
    """
    if typo := unknown_option(argv, known_options()):  # before "--output is required"
        raise UsageError(unknown_option_sentence(*typo, UNKNOWN_ELSE))
    known, beam_args = _arg_parser().parse_known_args(list(argv))
    check_filesystems(
        {"--input": known.input, "--output": known.output, "--previous": known.previous}
    )
    _check_beam_args(beam_args)
    labels = None if known.labels is None else _chunker_labels(known.labels)
    parsers = ParserChoice.from_option(known.parsers)
    tokenizer = None
    if known.tokenizer is not None:
        tokenizer = canonical_tokenizer_name(known.tokenizer)
        get_tokenizer(tokenizer)  # TokenizerError: one sentence naming the valid spellings
    policy_fields: dict[str, Any] = {
        name: value
        for name, value in (
            ("target_tokens", known.target_tokens),
            ("overlap_tokens", known.overlap_tokens),
            ("max_tokens", known.max_tokens),
            ("tokenizer", tokenizer),
        )
        if value is not None
    }
    policy_fields["merge_peers"] = known.merge_peers
    policy_fields["merge_list_items"] = known.merge_list_items
    policy = make_policy(**policy_fields)
    if warning := check_tokenizer_use(labels, policy.tokenizer):  # UsageError: none uses it
        print(f"kebab-chunk run: warning: {warning}.", file=sys.stderr)
    if known.max_file_bytes <= 0:
        raise UsageError(f"--max-file-bytes must be > 0, got {known.max_file_bytes}.")
    selection = _corpus_fields(known)  # before --previous, as the input always was
    check_update_options(known.update, overwrite=known.overwrite, previous=known.previous)
    config = RunConfig(
        output=known.output,
        labels=labels,
        policy=policy,
        max_file_bytes=known.max_file_bytes,
        parse_timeout_s=known.time_budget_s,
        overwrite=known.overwrite,
        previous=load_previous_run(known.previous, known.output),
        update=known.update,
        parsers=parsers,
        **_limit_fields(known),
        **selection,
    )
    return config, list(beam_args)


def _summary(manifest: dict[str, Any], output: str) -> str:
    counts, acc = manifest["counts"], manifest["accounting"]
    labels = ", ".join(f"{k}={v}" for k, v in counts["chunks_by_label"].items()) or "none"
    errors = (
        ", ".join(
            f"{stage}/{t}={n}"
            for stage, by_type in counts["errors_by_stage"].items()
            for t, n in by_type.items()
        )
        or "none"
    )
    # skipped only when --skip-unsupported left files out, so the usual line is unchanged
    skipped = f" + skipped {acc['skipped']}" if acc.get("skipped") else ""
    verdict = "closes" if acc["closes"] else "DOES NOT CLOSE"
    if acc.get("inconsistent"):
        verdict += f"; {acc['inconsistent']} inconsistent: accounting.inconsistent_files"
    return "\n".join(
        [
            f"kebab-chunk: wrote {counts['chunks_total']} chunks to {output}",
            f"  files matched {acc['files_matched']} = chunked {acc['documents_chunked']}"
            f" + zero chunks {acc['documents_with_zero_chunks']} + errors {acc['errors']}"
            f"{skipped} ({verdict})",
            f"  chunks by label: {labels}",
            f"  errors: {errors}",
            *_query_lines(manifest, output),
        ]
    )


def _query_lines(manifest: dict[str, Any], output: str) -> list[str]:
    """How to query the output: a glob for a plain output; the live rows of the latest
    snapshot for an updated one, whose folders also hold other snapshots' files."""
    section = manifest.get("snapshot")
    if not section:
        return [
            "  query (DuckDB SQL): SELECT chunker_version, count(*) FROM read_parquet("
            f"'{output}/chunks/*/*.parquet', hive_partitioning = true) GROUP BY 1;"
        ]
    changes = section.get("changes") or {}
    return [
        f"  snapshot {section['id']} (change feed: {output}/{changes.get('path', '-')})",
        "  query (Python + DuckDB): chunks = kebab_chunk.read_table("
        f"{output!r}); duckdb.sql('SELECT chunker_version, count(*) FROM chunks GROUP BY 1')",
    ]


def check_output_writable(output: str, given: str) -> None:
    """Create a local output directory and prove it writable, before any work is done.

    Without this an unwritable ``--output`` fails only when the first part file is written,
    deep inside the runner. The probe is an unnamed temporary file, so nothing is left
    behind. Remote outputs are not probed (their permissions show at the first write).
    """
    if FileSystems.get_scheme(output) is not None:
        return
    try:
        os.makedirs(output, exist_ok=True)
        with tempfile.TemporaryFile(dir=output):
            pass
    except OSError as exc:
        raise UsageError(
            f"cannot write to --output {given!r} ({exc.strerror or exc}); choose a "
            "directory you can create files in."
        ) from exc


def _unexpected(exc: BaseException) -> str:
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return (
        f"unexpected {type(exc).__name__}: {first}; rerun with --debug for the traceback "
        "and report it if the message does not explain it."
    )


def main(argv: Sequence[str] | None = None, *, say_stopped: bool = True) -> int:
    """Entry point of ``kebab-chunk run``; returns the process exit code.

    SIGTERM (sent by ``timeout``, systemd, Airflow, Kubernetes) and SIGINT (Ctrl-C) stop
    the run the same way at any moment (kebab_chunk/cli/_signals.py): one line on stderr
    (none with ``say_stopped=False``: ``rechunk`` says its own), exit status 143 or 130,
    no manifest (so the output reads as incomplete), the output's claim released;
    isolation helpers end with their worker (kebab_chunk/runtime/helper.py ``die_with``).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    configure_logging(verbose="--verbose" in args)
    with StopSignals() as stop:
        try:
            with ExitStack() as held:  # the output claim, released once the exit code is known
                status = _main(args, held, stop)
        except KeyboardInterrupt as exc:
            stop.note_interrupt(exc)
        if stop.status is None:
            return status
        if say_stopped:
            print(
                f"kebab-chunk run: error: {stop.describe()}; no manifest was written, so the "
                "output is incomplete: rerun with --overwrite.",
                file=sys.stderr,
            )
        return stop.status


def _main(args: list[str], held: ExitStack, stop: StopSignals) -> int:
    """``main``, with the claim on the output (kebab_chunk/beam/claim.py) kept in ``held``;
    a failure that a stop signal caused returns the signal's status, unreported."""
    debug = "--debug" in args
    try:
        config, beam_args = parse_args(args)
        held.enter_context(claim_output(config.output, corpus=config.corpus))
        config, output = prepare(config)
        check_output_writable(output, config.output)
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except (UsageError, KebabError) as exc:
        print_debug(debug)
        print(f"kebab-chunk run: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # an unforeseen setup failure: still one sentence
        if stop.status is not None:
            return stop.status
        print_debug(debug)
        print(f"kebab-chunk run: error: {_unexpected(exc)}", file=sys.stderr)
        return EXIT_FAILED
    try:
        result = execute(config, beam_args, output)
    except RunSetupError as exc:  # the runner's job service cannot be reached or started
        print_debug(debug)
        print(f"kebab-chunk run: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # the runner's failure, reported in one line, not a traceback
        if stop.status is not None:  # Beam wraps the interrupt of a step in its own error
            return stop.status
        print_debug(debug)
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        print(
            f"kebab-chunk run: error: the pipeline failed ({type(exc).__name__}: {first}); "
            "see the log above for the worker's traceback.",
            file=sys.stderr,
        )
        return EXIT_FAILED
    state = result.state
    if state != PipelineState.DONE:
        print(f"kebab-chunk run: error: the pipeline ended in state {state}.", file=sys.stderr)
        return EXIT_FAILED
    with FileSystems.open(f"{output}/{MANIFEST_NAME}") as f:
        manifest = json.loads(f.read().decode())
    print(_summary(manifest, output))
    if line := incremental_summary(manifest):
        print(line)
    return EXIT_OK if manifest["accounting"]["closes"] else EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
