# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""The chunking job as one Beam pipeline: corpus -> versioned chunks, errors, manifest.

``RunConfig`` is everything that shapes a run (validated on the launching machine by
``kebab_chunk/cli/run.py``); ``build_pipeline`` wires the transforms of this package
into a pipeline; ``run`` claims and prepares the output and runs the job to the end.
Every other argument is a standard Beam pipeline option, so the same job runs on the
DirectRunner, Flink, Spark, Prism or Dataflow (docs/runners.md).
"""

from __future__ import annotations

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
from kebab_chunk.beam.locations import CorpusLocation, prepare_output
from kebab_chunk.beam.manifest import run_info
from kebab_chunk.beam.parse import DEFAULT_MAX_MEMORY_MB
from kebab_chunk.beam.progress import (
    ReportProgress,
    count_selected_files,
    launch_progress,
    worker_log_args,
)
from kebab_chunk.corpus import CorpusFilter
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits
from kebab_chunk.parsers.registry import MediaTypeMap, ParserChoice

__all__ = [
    "DEFAULT_CORPUS_FILTER",
    "DEFAULT_MEDIA_TYPES",
    "DEFAULT_PARSERS",
    "RunConfig",
    "build_pipeline",
    "corpus_options",
    "execute",
    "limit_options",
    "load_previous_run",
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
    # Isolation and limits (see docs/limits.md); defaults keep older callers working.
    limits: ParseLimits = DEFAULT_LIMITS
    chunk_timeout_s: float = DEFAULT_CHUNK_TIMEOUT_S
    max_memory_mb: int = DEFAULT_MAX_MEMORY_MB
    parsers: ParserChoice = DEFAULT_PARSERS  # --parsers: versions other than the defaults
    # Which files: every --input (``input`` is the first; empty: ``input`` alone) and the
    # --include/--exclude/--include-hidden filter (docs/corpus-selection.md).
    inputs: tuple[str, ...] = ()
    corpus_filter: CorpusFilter = DEFAULT_CORPUS_FILTER
    # Which parser reads what: extensions mapped to media types (--media-type), and
    # whether a file no parser reads is skipped (counted apart) instead of an error row.
    media_types: MediaTypeMap = DEFAULT_MEDIA_TYPES
    skip_unsupported: bool = False


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


def build_pipeline(p: beam.Pipeline, config: RunConfig, output: str) -> None:
    """Wire the transforms; ``output`` is the prepared (normalised) output path."""
    labels = run_labels(config.labels)
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
    read = p | "Read corpus" >> ReadCorpus(
        config.corpus,
        max_file_bytes=config.max_file_bytes,
        corpus_filter=config.corpus_filter,
        media_types=config.media_types,
        skip_unsupported=config.skip_unsupported,
    )
    # The reuse rule compares this run's recorded options with the previous manifest's.
    reuse = reuse_previous(
        config.previous,
        read,
        config.labels,
        config.policy,
        config.parsers,
        options=header["options"],
    )
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
    info = run_info(
        input_path=config.input,
        output=output,
        pipeline_options=p.options.get_all_options(drop_default=True),
    )
    if len(config.inputs) > 1:
        info["inputs"] = list(config.inputs)
    outcomes = reuse.with_outcomes(chunked["outcomes"])
    # Unmerged inputs: on the in-memory DirectRunner a Flatten runs only after every stage
    # feeding it has finished, so merged errors would reach the bar only at the end.
    _ = {
        "outcomes": chunked["outcomes"],
        **({"reused_outcomes": reuse.outcomes} if reuse.outcomes is not None else {}),
        "read_errors": read["errors"],
        "skipped": read["skipped"],
        "parse_errors": chunked["parse_errors"],
        "chunk_errors": chunked["chunk_errors"],
        "write_errors": stored["errors"],
    } | "Report progress" >> ReportProgress()
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
        output = prepare_output(config.output, overwrite=config.overwrite, corpus=config.corpus)
        return execute(config, beam_args, output), output


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

    with launch_progress(options, count) as progress, progress.activate():
        try:
            result = p.run()
        except (RuntimeError, ValueError) as exc:
            if (error := job_server_jar_error(exc, options)) is not None:
                raise error from exc
            raise
        result.wait_until_finish()
    return result
