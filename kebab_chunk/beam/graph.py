# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""The Beam graph of a chunking run, and running it: corpus -> versioned chunks, errors, manifest.

``RunConfig`` is everything that shapes a run (validated on the launching machine by
``kebab_chunk/cli/run.py``); ``build_pipeline`` wires the transforms of this package
into a pipeline; ``run`` claims and prepares the output and runs the job to the end.
Every other argument is a standard Beam pipeline option, so the same job runs on the
DirectRunner, Flink, Spark, Prism or Dataflow (docs/guide/runners.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.runners.runner import PipelineResult

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
    load_previous,
    reuse_previous,
)
from kebab_chunk.beam.job_service import check_job_endpoint, job_server_jar_error
from kebab_chunk.beam.locations import CorpusLocation, check_output_location, prepare_output
from kebab_chunk.beam.manifest import run_info
from kebab_chunk.beam.parse import DEFAULT_MAX_MEMORY_MB
from kebab_chunk.beam.progress import (
    ReportProgress,
    count_selected_files,
    launch_progress,
    worker_log_args,
)
from kebab_chunk.beam.read import ReadAgain
from kebab_chunk.beam.update import (
    BaseSnapshot,
    PlanUpdate,
    commit_step,
    first_snapshot,
    load_base,
)
from kebab_chunk.corpus import CorpusFilter
from kebab_chunk.errors import UsageError
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.output.snapshots import snapshot_prefix
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits
from kebab_chunk.parsers.registry import MediaTypeMap, ParserChoice
from kebab_chunk.runtime.gc_freeze import frozen_while_running

__all__ = [
    "DEFAULT_CORPUS_FILTER",
    "DEFAULT_MEDIA_TYPES",
    "DEFAULT_PARSERS",
    "RunConfig",
    "build_pipeline",
    "check_update_options",
    "corpus_options",
    "execute",
    "limit_options",
    "load_previous_run",
    "prepare",
    "run",
]

DEFAULT_PARSERS = ParserChoice()
#: Every file except hidden entries and tool folders (kebab_chunk/corpus.py).
DEFAULT_CORPUS_FILTER = CorpusFilter()
#: No extension mapped by the user: the built-in extensions only.
DEFAULT_MEDIA_TYPES = MediaTypeMap()


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
    # Isolation and limits (see docs/guide/limits.md); defaults keep older callers working.
    limits: ParseLimits = DEFAULT_LIMITS
    chunk_timeout_s: float = DEFAULT_CHUNK_TIMEOUT_S
    max_memory_mb: int = DEFAULT_MAX_MEMORY_MB
    parsers: ParserChoice = DEFAULT_PARSERS  # --parsers: versions other than the defaults
    # Which files: every --input (``input`` is the first; empty: ``input`` alone) and the
    # --include/--exclude/--include-hidden filter (docs/guide/corpus-selection.md).
    inputs: tuple[str, ...] = ()
    corpus_filter: CorpusFilter = DEFAULT_CORPUS_FILTER
    # Which parser reads what: extensions mapped to media types (--media-type), and
    # whether a file no parser reads is skipped (counted apart) instead of an error row.
    media_types: MediaTypeMap = DEFAULT_MEDIA_TYPES
    skip_unsupported: bool = False
    # --update: commit a new snapshot of --output, reusing what did not change
    # (kebab_chunk/beam/update.py). ``base`` is its latest snapshot, read under the claim.
    update: bool = False
    base: BaseSnapshot | None = None


def limit_options(config: RunConfig) -> dict[str, Any]:
    """The manifest's record of the isolation budgets and parse limits of a run."""
    return {
        "chunk_timeout_s": config.chunk_timeout_s,
        "max_memory_mb": config.max_memory_mb,
        "max_pages": config.limits.max_pages,
        "max_blocks": config.limits.max_blocks,
        "max_nesting": config.limits.max_nesting,
    }


def corpus_options(config: RunConfig) -> dict[str, Any]:
    """The manifest's record of which files a run reads: each input's pattern relative to
    the corpus root (``**`` for a directory; the same wherever the corpus lies) and the
    filter. Runs over the same corpus with different selections differ here; ``--previous``
    needs nothing more, since a file a filter change drops counts as deleted and one it
    adds as new."""
    return {
        "inputs": config.corpus.relative_patterns(),
        **config.corpus_filter.to_manifest(),
        "media_types": config.media_types.to_manifest(),
        "skip_unsupported": config.skip_unsupported,
    }


def load_previous_run(previous: str | None, output: str) -> PreviousRun | None:
    """``--previous`` checked on the launching machine (OutputDirError: one sentence)."""
    return load_previous(previous, output=output) if previous is not None else None


def _header(config: RunConfig, labels: Sequence[str]) -> dict[str, Any]:
    header = manifest_header(
        labels=labels,
        requested=config.labels,
        policy=config.policy,
        max_file_bytes=config.max_file_bytes,
        parse_timeout_s=config.parse_timeout_s,
    )
    header["options"].update(limit_options(config))
    header["options"].update(corpus_options(config))
    header["options"]["parsers"] = [v for _, v in config.parsers.overrides] or None
    header["parsers"] = config.parsers.effective()
    return header


def _read_corpus(config: RunConfig) -> ReadCorpus:
    return ReadCorpus(
        config.corpus,
        max_file_bytes=config.max_file_bytes,
        corpus_filter=config.corpus_filter,
        media_types=config.media_types,
        skip_unsupported=config.skip_unsupported,
    )


def _parse_and_chunk(config: RunConfig) -> ParseAndChunk:
    return ParseAndChunk(
        config.labels,
        config.policy,
        parse_fn=config.parsers,
        parse_timeout_s=config.parse_timeout_s,
        chunk_timeout_s=config.chunk_timeout_s,
        limits=config.limits,
        max_memory_mb=config.max_memory_mb,
        encode=True,  # chunks reach WriteChunks as spill entries made in the helper
    )


def _errors_and_files(
    output: str,
    read_errors: tuple[Any, ...],
    chunked: Any,
    stored: Any,
    *,
    prefix: str = "",
) -> tuple[Any, Any]:
    """Every error row (read, parse, chunk, validate) and every written part file, the
    error file included (written here)."""
    errors = (
        *read_errors,
        chunked["parse_errors"],
        chunked["chunk_errors"],
        stored["errors"],
    ) | "Collect errors" >> beam.Flatten()
    written = (
        stored["written"],
        errors | "Write errors" >> WriteErrors(output, prefix=prefix),
    ) | "Collect written files" >> beam.Flatten()
    return errors, written


def _report_progress(read: Any, chunked: Any, stored: Any, reused: Any | None) -> None:
    """Feed the progress bar. Unmerged inputs: on the in-memory DirectRunner a Flatten runs
    only after every stage feeding it has finished, so merged errors would reach the bar
    only at the end. ``reused``: one element with a ``source_uri`` per reused file."""
    _ = {
        "outcomes": chunked["outcomes"],
        **({"reused_outcomes": reused} if reused is not None else {}),
        "read_errors": read["errors"],
        "skipped": read["skipped"],
        "parse_errors": chunked["parse_errors"],
        "chunk_errors": chunked["chunk_errors"],
        "write_errors": stored["errors"],
    } | "Report progress" >> ReportProgress()


def _run_info(p: beam.Pipeline, config: RunConfig, output: str) -> dict[str, Any]:
    info = run_info(
        input_path=config.input,
        output=output,
        pipeline_options=p.options.get_all_options(drop_default=True),
    )
    if len(config.inputs) > 1:
        info["inputs"] = list(config.inputs)
    return info


def build_update_pipeline(p: beam.Pipeline, config: RunConfig, base: BaseSnapshot) -> None:
    """``run --update``: the snapshot ``base.next`` of ``base.output``, reading and writing
    only what changed (kebab_chunk/beam/update.py)."""
    output = base.output
    labels = run_labels(config.labels)
    header = _header(config, labels)
    prefix = snapshot_prefix(base.next)
    reader = _read_corpus(config)
    read = p | "Read corpus" >> reader
    plan = read | "Plan update" >> PlanUpdate(
        base, config.labels, config.policy, config.parsers, options=header["options"]
    )
    again = plan["to_read"] | "Read changed files" >> ReadAgain(reader)
    chunked = again["documents"] | "Parse and chunk documents" >> _parse_and_chunk(config)
    stored = chunked["chunks"] | "Write chunks" >> WriteChunks(output, labels, prefix=prefix)
    errors, written = _errors_and_files(
        output, (read["errors"], again["errors"]), chunked, stored, prefix=prefix
    )
    skipped = (read["skipped"], again["skipped"]) | "All skipped" >> beam.Flatten()
    _report_progress(read, chunked, stored, plan["accounts"])  # FileAccounts: done
    info = _run_info(p, config, output)

    def commit(summary: Any, files: Any) -> Any:
        return commit_step(
            summary, base, labels, header, info, written=files, deleted=plan["deleted"]
        )

    _ = {
        "files": plan["files"],  # those not reused: a reused document's account is ready
        "accounts": plan["accounts"],
        "skipped": skipped,
        "outcomes": chunked["outcomes"],
        "chunk_counts": stored["chunk_counts"],
        "errors": errors,
        "written": written,
        "incremental": plan["counts"],
    } | "Write manifest" >> WriteManifest(output, header, info, prefix=prefix, commit=commit)


def build_pipeline(p: beam.Pipeline, config: RunConfig, output: str) -> None:
    """Wire the transforms; ``output`` is the prepared (normalised) output path."""
    if config.base is not None:
        build_update_pipeline(p, config, config.base)
        return
    labels = run_labels(config.labels)
    header = _header(config, labels)
    read = p | "Read corpus" >> _read_corpus(config)
    # The reuse rule compares this run's recorded options with the previous manifest's.
    reuse = reuse_previous(
        config.previous,
        read,
        config.labels,
        config.policy,
        config.parsers,
        options=header["options"],
    )
    chunked = reuse.documents | "Parse and chunk documents" >> _parse_and_chunk(config)
    # WriteChunks also enforces one record per (label, chunk_id): chunks are grouped once.
    stored = reuse.with_chunks(chunked["chunks"]) | "Write chunks" >> WriteChunks(output, labels)
    errors, written = _errors_and_files(output, (read["errors"],), chunked, stored)
    info = _run_info(p, config, output)
    outcomes = reuse.with_outcomes(chunked["outcomes"])
    _report_progress(read, chunked, stored, reuse.outcomes)
    _ = {
        "files": read["files"],
        "skipped": read["skipped"],
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
        config, output = prepare(config)
        return execute(config, beam_args, output), output


def check_update_options(update: bool, *, overwrite: bool, previous: object) -> None:
    """Refuse, in one sentence, ``update`` beside an option that contradicts it."""
    if update and overwrite:
        raise UsageError(
            "--update adds a snapshot to the output in --output and --overwrite replaces it; "
            "pass only one of them."
        )
    if update and previous is not None:
        raise UsageError(
            "--update builds on the output in --output itself, so --previous (which copies "
            "into a new output) cannot go with it; drop one of them."
        )


def prepare(config: RunConfig) -> tuple[RunConfig, str]:
    """Under the output's claim: what the run writes into. With ``update`` and a finished
    output there, its latest snapshot becomes the base (read now, so no other run can
    commit before this one starts); with ``update`` and none, the leftovers of a killed
    first run are cleared for a full run; otherwise the output is prepared for a full run
    (``prepare_output``: empty, or emptied with ``overwrite``)."""
    if config.update:
        check_output_location(config.output, corpus=config.corpus)
        base = load_base(config.output)
        if base is not None:
            first_snapshot(base)
            return dataclasses.replace(config, base=base), base.output
        # No finished output there: what a killed first run left is disposable, as with
        # --overwrite (which still refuses anything that is not kebab-chunk's layout).
        return config, prepare_output(config.output, overwrite=True, corpus=config.corpus)
    return config, prepare_output(config.output, overwrite=config.overwrite, corpus=config.corpus)


def execute(config: RunConfig, beam_args: Sequence[str], output: str) -> PipelineResult:
    """Build and run the pipeline into a prepared ``output``; waits until it finishes.

    On a terminal (not in CI) a progress bar shows files done of the files the run will
    read, the rate, the ETA and failed files; on runners whose workers run elsewhere, the
    elapsed time (kebab_chunk/beam/progress.py). The DirectRunner's worker processes log
    at the launcher's level unless ``--default_sdk_harness_log_level`` is given. A job
    service that cannot be reached or started is a RunSetupError in one sentence
    (kebab_chunk/beam/job_service.py).
    """
    options = PipelineOptions(list(beam_args))
    if quiet := worker_log_args(options):
        options = PipelineOptions([*beam_args, *quiet])
    p = beam.Pipeline(options=options)
    build_pipeline(p, config, output)
    check_job_endpoint(p.runner, options)  # RunSetupError: nothing answers there

    def count() -> int | None:
        return count_selected_files(config.corpus, config.corpus_filter)

    with (
        launch_progress(options, count) as progress,
        progress.activate(),
        frozen_while_running(),  # the in-memory DirectRunner works in this process
    ):
        try:
            result = p.run()
        except (RuntimeError, ValueError) as exc:
            if (error := job_server_jar_error(exc, options)) is not None:
                raise error from exc
            raise
        result.wait_until_finish()
    return result
