# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""The chunking job: corpus directory -> versioned chunks in Parquet, errors, manifest.

Run it as ``kebab-chunk run ...`` or ``python -m pipelines.chunk_corpus ...``. Options of
our own are parsed here; every other argument is a standard Beam pipeline option
(``--runner``, ``--direct_running_mode``, ``--job_endpoint``, ``--project``, ...), passed
through unchanged, so the same command runs on the DirectRunner, Flink or Dataflow.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import threading
import traceback
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, NoReturn

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.runners.runner import PipelineResult, PipelineState

from kebab_chunk.beam import (
    ParseAndChunk,
    ReadCorpus,
    WriteChunks,
    WriteErrors,
    WriteManifest,
    manifest_header,
    run_labels,
)
from kebab_chunk.beam.chunk import DEFAULT_CHUNK_TIMEOUT_S
from kebab_chunk.beam.claim import claim_output
from kebab_chunk.beam.incremental import (
    PreviousRun,
    incremental_summary,
    load_previous,
    reuse_previous,
)
from kebab_chunk.beam.locations import CorpusLocation, prepare_output, resolve_corpus
from kebab_chunk.beam.manifest import MANIFEST_NAME, run_info
from kebab_chunk.beam.parse import DEFAULT_MAX_MEMORY_MB, DEFAULT_PARSE_TIMEOUT_S
from kebab_chunk.beam.progress import ReportProgress
from kebab_chunk.beam.read import DEFAULT_MAX_FILE_BYTES
from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.errors import KebabError
from kebab_chunk.model import ChunkPolicy, make_policy
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits
from kebab_chunk.parsers.registry import ParserChoice
from kebab_chunk.report.progress import Progress
from kebab_chunk.tokenizers import canonical_tokenizer_name, get_tokenizer

__all__ = ["RunConfig", "build_pipeline", "main", "parse_args", "run"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_PARSERS = ParserChoice()


class UsageError(Exception):
    """A command-line problem; the message is the one sentence printed to the user."""


@dataclass(frozen=True)
class RunConfig:
    """Everything that shapes a run, validated on the launching machine."""

    input: str
    output: str
    corpus: CorpusLocation
    labels: tuple[str, ...] | None  # None: the defaults per media type
    policy: ChunkPolicy
    max_file_bytes: int
    parse_timeout_s: float
    overwrite: bool
    previous: PreviousRun | None = None  # --previous: reuse what did not change
    # Isolation and limits (see docs/limits.md); defaults keep older callers working.
    limits: ParseLimits = DEFAULT_LIMITS
    chunk_timeout_s: float = DEFAULT_CHUNK_TIMEOUT_S
    max_memory_mb: int = DEFAULT_MAX_MEMORY_MB
    parsers: ParserChoice = DEFAULT_PARSERS  # --parsers: versions other than the defaults


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message}; run with --help for the options.")


def _arg_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="kebab-chunk run",
        allow_abbrev=False,
        description="Chunk a corpus into versioned, content-addressed Parquet records. "
        "Any other --option is a standard Apache Beam pipeline option (e.g. --runner, "
        "--direct_running_mode, --direct_num_workers, --job_endpoint, --project).",
    )
    p.add_argument(
        "--input", required=True, help="corpus directory, glob or file (local, gs:// or s3://)"
    )
    p.add_argument(
        "--output",
        required=True,
        help="output directory: chunks/, errors/ and manifest.json are written there",
    )
    p.add_argument(
        "--chunkers",
        default=None,
        help="comma-separated chunker labels "
        "(default: md-heading-v1 for Markdown/text, pdf-page-v1 for PDF)",
    )
    p.add_argument(
        "--parsers",
        default=None,
        help="comma-separated parser versions to use instead of the defaults for the media "
        "types they read (e.g. md-mistune-v1; default: md-pyromark-v1 for Markdown)",
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
        help="token counter: bytes-3 (default), hf:<name or tokenizer.json>, tiktoken:<encoding>",
    )
    p.add_argument(
        "--max-file-bytes",
        type=int,
        default=DEFAULT_MAX_FILE_BYTES,
        help="larger files become error rows without being read (default %(default)s)",
    )
    p.add_argument(
        "--parse-timeout-s",
        type=float,
        default=DEFAULT_PARSE_TIMEOUT_S,
        help="per-document parse time budget in seconds (default %(default)s)",
    )
    p.add_argument(
        "--overwrite", action="store_true", help="replace a previous output in --output (all of it)"
    )
    p.add_argument(
        "--previous",
        default=None,
        metavar="PREV_OUTPUT",
        help="an earlier run's output: documents whose bytes, parser, chunker label and "
        "policy are unchanged are not parsed again, their records are carried forward",
    )
    _add_limit_arguments(p)
    return p


def _add_limit_arguments(p: argparse.ArgumentParser) -> None:
    """Per-document isolation budgets and parse limits (docs/limits.md), and --debug."""
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
    p.add_argument(
        "--max-pages",
        type=int,
        default=DEFAULT_LIMITS.max_pages,
        help="PDFs with more pages become error rows (default %(default)s)",
    )
    p.add_argument(
        "--max-blocks",
        type=int,
        default=DEFAULT_LIMITS.max_blocks,
        help="documents with more blocks (rows, paragraphs) become error rows "
        "(default %(default)s)",
    )
    p.add_argument(
        "--max-nesting",
        type=int,
        default=DEFAULT_LIMITS.max_nesting,
        help="deepest nesting of lists/quotes parsed as structure (default %(default)s)",
    )
    p.add_argument(
        "--debug", action="store_true", help="print the traceback of an error, not one sentence"
    )


def _limit_fields(known: argparse.Namespace) -> dict[str, Any]:
    """The validated RunConfig fields of ``_add_limit_arguments``; UsageError if out of range."""
    if not known.chunk_timeout_s > 0:
        raise UsageError(f"--chunk-timeout-s must be > 0, got {known.chunk_timeout_s}.")
    for option, value in (
        ("--max-memory-mb", known.max_memory_mb),
        ("--max-pages", known.max_pages),
        ("--max-blocks", known.max_blocks),
        ("--max-nesting", known.max_nesting),
    ):
        if value <= 0:
            raise UsageError(f"{option} must be > 0, got {value}.")
    return {
        "limits": ParseLimits(
            max_pages=known.max_pages,
            max_blocks=known.max_blocks,
            max_nesting=known.max_nesting,
            time_budget_s=known.parse_timeout_s,
        ),
        "chunk_timeout_s": known.chunk_timeout_s,
        "max_memory_mb": known.max_memory_mb,
    }


def limit_options(config: RunConfig) -> dict[str, Any]:
    """The manifest's record of the isolation budgets and parse limits of a run."""
    return {
        "chunk_timeout_s": config.chunk_timeout_s,
        "max_memory_mb": config.max_memory_mb,
        "max_pages": config.limits.max_pages,
        "max_blocks": config.limits.max_blocks,
        "max_nesting": config.limits.max_nesting,
    }


def _check_beam_args(beam_args: Sequence[str]) -> None:
    """Refuse arguments no Beam option knows, instead of Beam's silent discard."""
    try:
        from apache_beam.options.pipeline_options import _BeamArgumentParser
    except ImportError:  # pragma: no cover - a future Beam without the private parser
        return

    class _Strict(_BeamArgumentParser):
        def error(self, message: str) -> NoReturn:
            raise UsageError(f"{message} (an Apache Beam option); run with --help for usage.")

    parser = _Strict(allow_abbrev=False)
    seen: dict[str, type] = {}
    for cls in PipelineOptions.__subclasses__():
        seen.setdefault(str(cls), cls)
    for cls in seen.values():
        cls._add_argparse_args(parser)
    _, unknown = parser.parse_known_args(list(beam_args))
    if unknown:
        raise UsageError(
            f"unknown option {unknown[0]!r} (neither a kebab-chunk nor an Apache Beam "
            "option); run with --help for the options."
        )


def parse_args(argv: Sequence[str]) -> tuple[RunConfig, list[str]]:
    """Our options -> a validated RunConfig; the rest -> Beam arguments.

    Raises UsageError (or a KebabError) with one sentence on any bad value; does not
    touch the output directory.
    """
    known, beam_args = _arg_parser().parse_known_args(list(argv))
    _check_beam_args(beam_args)
    labels: tuple[str, ...] | None = None
    if known.chunkers is not None:
        labels = tuple(dict.fromkeys(s.strip() for s in known.chunkers.split(",") if s.strip()))
        if not labels:
            raise UsageError("--chunkers is empty; name at least one chunker label.")
        for label in labels:
            get_chunker(label)
    parsers = ParserChoice.from_option(known.parsers)
    tokenizer = None
    if known.tokenizer is not None:
        tokenizer = canonical_tokenizer_name(known.tokenizer)
        get_tokenizer(tokenizer)  # TokenizerError: one sentence naming the valid spellings
    fields = {
        name: value
        for name, value in (
            ("target_tokens", known.target_tokens),
            ("overlap_tokens", known.overlap_tokens),
            ("max_tokens", known.max_tokens),
            ("tokenizer", tokenizer),
        )
        if value is not None
    }
    policy = make_policy(**fields)
    if known.max_file_bytes <= 0:
        raise UsageError(f"--max-file-bytes must be > 0, got {known.max_file_bytes}.")
    if not known.parse_timeout_s > 0:
        raise UsageError(f"--parse-timeout-s must be > 0, got {known.parse_timeout_s}.")
    config = RunConfig(
        input=known.input,
        output=known.output,
        corpus=resolve_corpus(known.input),
        labels=labels,
        policy=policy,
        max_file_bytes=known.max_file_bytes,
        parse_timeout_s=known.parse_timeout_s,
        overwrite=known.overwrite,
        previous=_previous_run(known.previous, known.output),
        parsers=parsers,
        **_limit_fields(known),
    )
    return config, list(beam_args)


def _previous_run(previous: str | None, output: str) -> PreviousRun | None:
    """``--previous`` checked on the launching machine (OutputDirError: one sentence)."""
    return load_previous(previous, output=output) if previous is not None else None


def build_pipeline(p: beam.Pipeline, config: RunConfig, output: str) -> None:
    """Wire the transforms; ``output`` is the prepared (normalised) output path."""
    labels = run_labels(config.labels)
    read = p | "Read corpus" >> ReadCorpus(config.corpus, max_file_bytes=config.max_file_bytes)
    reuse = reuse_previous(config.previous, read, config.labels, config.policy, config.parsers)
    chunked = reuse.documents | "Parse and chunk documents" >> ParseAndChunk(
        config.labels,
        config.policy,
        parse_fn=config.parsers,
        parse_timeout_s=config.parse_timeout_s,
        chunk_timeout_s=config.chunk_timeout_s,
        limits=config.limits,
        max_memory_mb=config.max_memory_mb,
    )
    # WriteChunks also enforces one record per (label, chunk_id): chunks are grouped once.
    stored = reuse.with_chunks(chunked["chunks"]) | "Write chunks" >> WriteChunks(output, labels)
    errors = (
        read["errors"],
        chunked["parse_errors"],
        chunked["chunk_errors"],
        stored["errors"],
    ) | "Collect errors" >> beam.Flatten()
    written = (
        stored["written"],
        errors | "Write errors" >> WriteErrors(output),
    ) | "Collect written files" >> beam.Flatten()
    header = manifest_header(
        labels=labels,
        requested=config.labels,
        policy=config.policy,
        max_file_bytes=config.max_file_bytes,
        parse_timeout_s=config.parse_timeout_s,
    )
    header["options"].update(limit_options(config))
    header["options"]["parsers"] = [v for _, v in config.parsers.overrides] or None
    header["parsers"] = config.parsers.effective()
    info = run_info(
        input_path=config.input,
        output=output,
        pipeline_options=p.options.get_all_options(drop_default=True),
    )
    outcomes = reuse.with_outcomes(chunked["outcomes"])
    _ = {
        "files": read["files"],
        "outcomes": outcomes,
        "file_errors": (read["errors"], chunked["parse_errors"])
        | "Collect file errors" >> beam.Flatten(),
    } | "Report progress" >> ReportProgress()
    _ = {
        "files": read["files"],
        "outcomes": outcomes,
        "chunk_counts": stored["chunk_counts"],
        "errors": errors,
        "written": written,
        **reuse.manifest_inputs(),
    } | "Write manifest" >> WriteManifest(output, header, info)


def run(config: RunConfig, beam_args: Sequence[str]) -> tuple[PipelineResult, str]:
    """Claim and prepare the output, run the job to completion; returns the result and
    output path. The claim (kebab_chunk/beam/claim.py) keeps other runs out until the end."""
    with claim_output(config.output, corpus=config.corpus):
        output = prepare_output(config.output, overwrite=config.overwrite, corpus=config.corpus)
        return _execute(config, beam_args, output), output


def _execute(config: RunConfig, beam_args: Sequence[str], output: str) -> PipelineResult:
    p = beam.Pipeline(options=PipelineOptions(list(beam_args)))
    build_pipeline(p, config, output)
    # On a TTY (and not in CI) a local run shows files done / matched and errors so far.
    with Progress() as progress, progress.activate():
        result = p.run()
        result.wait_until_finish()
    return result


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
    return "\n".join(
        [
            f"kebab-chunk: wrote {counts['chunks_total']} chunks to {output}",
            f"  files matched {acc['files_matched']} = chunked {acc['documents_chunked']}"
            f" + zero chunks {acc['documents_with_zero_chunks']} + errors {acc['errors']}"
            f" ({'closes' if acc['closes'] else 'DOES NOT CLOSE'})",
            f"  chunks by label: {labels}",
            f"  errors: {errors}",
            "  query (DuckDB SQL): SELECT chunker_version, count(*) FROM read_parquet("
            f"'{output}/chunks/*/*.parquet', hive_partitioning = true) GROUP BY 1;",
        ]
    )


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


def _print_debug(debug: bool) -> None:
    """With --debug, print the traceback of the exception being handled."""
    if debug:
        traceback.print_exc()


def _unexpected(exc: BaseException) -> str:
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return (
        f"unexpected {type(exc).__name__}: {first}; rerun with --debug for the traceback "
        "and report it if the message does not explain it."
    )


#: Exit statuses of a run stopped by a signal (the shell's 128 + signal number).
EXIT_SIGINT, EXIT_SIGTERM = 130, 143


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that it stops the run exactly as Ctrl-C does."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise _Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``kebab-chunk run``; returns the process exit code.

    SIGTERM (sent by ``timeout``, systemd, Airflow, Kubernetes) and Ctrl-C stop the run the
    same way: one line on stderr, exit status 143 or 130, no manifest (so the output reads
    as incomplete), the output's claim released; isolation helpers end with their worker
    (kebab_chunk/beam/helper.py ``die_with``).
    """
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_terminated) if in_main_thread else None
    try:
        with ExitStack() as held:  # the output claim, released once the exit code is known
            return _main(argv, held)
    except KeyboardInterrupt as exc:
        how = "terminated by SIGTERM" if isinstance(exc, _Terminated) else "interrupted (Ctrl-C)"
        print(
            f"kebab-chunk run: error: {how}; no manifest was written, so the output is "
            "incomplete: rerun with --overwrite.",
            file=sys.stderr,
        )
        return EXIT_SIGTERM if isinstance(exc, _Terminated) else EXIT_SIGINT
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main(argv: Sequence[str] | None, held: ExitStack) -> int:
    """``main``, with the claim on the output (kebab_chunk/beam/claim.py) kept in ``held``."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    try:
        config, beam_args = parse_args(args)
        held.enter_context(claim_output(config.output, corpus=config.corpus))
        output = prepare_output(config.output, overwrite=config.overwrite, corpus=config.corpus)
        check_output_writable(output, config.output)
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except (UsageError, KebabError) as exc:
        _print_debug(debug)
        print(f"kebab-chunk run: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # an unforeseen setup failure: still one sentence
        _print_debug(debug)
        print(f"kebab-chunk run: error: {_unexpected(exc)}", file=sys.stderr)
        return EXIT_FAILED
    try:
        result = _execute(config, beam_args, output)
    except Exception as exc:  # the runner's failure, reported in one line, not a traceback
        _print_debug(debug)
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
