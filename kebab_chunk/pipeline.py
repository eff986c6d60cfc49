# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""Run the chunking job from Python: what ``kebab-chunk run`` does, as one function.

::

    from kebab_chunk.pipeline import run

    result = run("my-docs/", "out/my-docs", overwrite=True)
    print(result.manifest["accounting"])      # files matched = chunked + zero chunks + errors
    chunks = result.chunks()                  # Chunk records, exact spans and ids

Every argument but the input and output has the command's default; ``beam_args`` takes
any standard Apache Beam pipeline option (``["--runner=FlinkRunner", ...]``), so the same
call runs on the DirectRunner, Flink, Spark or Dataflow. Bad values raise a
:class:`~kebab_chunk.errors.KebabError` with one sentence before anything is written.
:func:`configure` and the command line share their checks (``beam/locations.py``, the
chunker registry), and tests/test_python_api.py pins that both build the same run.

To wire the steps into a pipeline of one's own, use the transforms of
:mod:`kebab_chunk.beam` (``ReadCorpus``, ``ParseAndChunk``, ...); docs/guide/python-api.md shows
both ways.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kebab_chunk.errors import KebabError, MissingDependencyError, UsageError

try:  # Apache Beam is the pipeline extra: its absence is one sentence, not a traceback
    from apache_beam.runners.runner import PipelineState
except ModuleNotFoundError as exc:
    if exc.name != "apache_beam":
        raise
    raise MissingDependencyError.for_extra(
        "kebab_chunk.pipeline", "Apache Beam", "pipeline"
    ) from None

from kebab_chunk.beam.chunk import DEFAULT_CHUNK_TIMEOUT_S
from kebab_chunk.beam.graph import RunConfig, check_update_options, load_previous_run
from kebab_chunk.beam.graph import run as run_job
from kebab_chunk.beam.locations import check_filesystems, resolve_corpora
from kebab_chunk.beam.parse import DEFAULT_MAX_MEMORY_MB, DEFAULT_PARSE_TIMEOUT_S
from kebab_chunk.beam.read import DEFAULT_MAX_FILE_BYTES
from kebab_chunk.chunkers.registry import check_tokenizer_use, get_chunker
from kebab_chunk.corpus import CorpusFilter
from kebab_chunk.model import Chunk, ChunkPolicy
from kebab_chunk.output.manifest import Manifest
from kebab_chunk.output.records import DocumentRow, ErrorRecord
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits
from kebab_chunk.parsers.registry import MediaTypeMap, ParserChoice
from kebab_chunk.results import read_chunks, read_documents, read_errors, read_manifest

__all__ = ["RunResult", "configure", "run"]


@dataclass(frozen=True)
class RunResult:
    """A finished run: where it wrote, and its manifest (counts, versions, accounting)."""

    output: str
    manifest: Manifest

    @property
    def closes(self) -> bool:
        """Whether every matched file ended chunked, with zero chunks, or as an error row."""
        return bool(self.manifest["accounting"]["closes"])

    def chunks(self, label: str | None = None) -> list[Chunk]:
        """The chunk records written (all labels, or ``label``'s)."""
        return read_chunks(self.output, label)

    def documents(self) -> list[DocumentRow]:
        """One row per matched file: status, title, front matter, warnings, counts."""
        return read_documents(self.output)

    def errors(self) -> list[ErrorRecord]:
        """The dead-letter rows."""
        return read_errors(self.output)


def configure(
    input: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    *,
    labels: Sequence[str] | None = None,
    parsers: Sequence[str] = (),
    policy: ChunkPolicy | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    include_hidden: bool = False,
    previous: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    parse_timeout_s: float = DEFAULT_PARSE_TIMEOUT_S,
    chunk_timeout_s: float = DEFAULT_CHUNK_TIMEOUT_S,
    max_memory_mb: int = DEFAULT_MAX_MEMORY_MB,
    limits: ParseLimits = DEFAULT_LIMITS,
    media_types: Mapping[str, str] | None = None,
    skip_unsupported: bool = False,
    update: bool = False,
) -> RunConfig:
    """A validated :class:`RunConfig` (the arguments of :func:`run`); nothing is written.

    ``input`` is a folder, glob or file, or a list of them (``source_uri`` is then relative
    to their longest common parent folder); ``include``/``exclude`` are globs on paths
    below it, and hidden entries and tool folders are skipped unless ``include_hidden``
    (docs/guide/corpus-selection.md). ``labels=None`` uses the default label per media type;
    ``parsers`` names parser versions to use instead of the defaults (e.g.
    ``["md-mistune-v1"]``); ``policy=None`` is ``ChunkPolicy()``. ``media_types`` maps
    extensions to a supported media type (``{".rst": "text/plain"}``); with
    ``skip_unsupported`` a file no parser reads is counted as skipped instead of becoming
    an error row (docs/guide/corpus-selection.md). ``update`` commits a new snapshot of the
    output already in ``output``, reading, parsing and writing only what changed
    (docs/guide/scheduling.md; no output there yet: a full run). Raises a KebabError with one
    sentence on any bad value.
    """
    check_update_options(update, overwrite=overwrite, previous=previous)
    for name, value in (
        ("labels", labels),
        ("parsers", parsers),
        ("include", include),
        ("exclude", exclude),
    ):
        if isinstance(value, str):
            raise UsageError(
                f"{name} must be a list, got the string {value!r}; write {name}=[{value!r}]."
            )
    chosen_labels: tuple[str, ...] | None = None
    if labels is not None:
        chosen_labels = tuple(dict.fromkeys(label.strip() for label in labels if label.strip()))
        if not chosen_labels:
            raise UsageError("labels is empty; name at least one chunker label or pass None.")
        for label in chosen_labels:
            get_chunker(label)  # UnknownChunkerError: one sentence listing the labels
    if max_file_bytes <= 0:
        raise UsageError(f"max_file_bytes must be > 0, got {max_file_bytes}.")
    if media_types is not None and not isinstance(media_types, Mapping):
        raise UsageError(
            f"media_types must be a mapping such as {{'.rst': 'text/plain'}}, got "
            f"{type(media_types).__name__}."
        )
    extension_map = MediaTypeMap.from_mapping(media_types or {}, "media_types")
    if not parse_timeout_s > 0:
        raise UsageError(f"parse_timeout_s must be > 0, got {parse_timeout_s}.")
    if not chunk_timeout_s > 0:
        raise UsageError(f"chunk_timeout_s must be > 0, got {chunk_timeout_s}.")
    if max_memory_mb <= 0:
        raise UsageError(f"max_memory_mb must be > 0, got {max_memory_mb}.")
    inputs = (
        (os.fspath(input),)
        if isinstance(input, str | os.PathLike)
        else tuple(os.fspath(i) for i in input)
    )
    if not inputs:
        raise UsageError("input is empty; give a folder, a glob or a file (or a list of them).")
    output_path = os.fspath(output)
    check_filesystems(
        {
            "input": inputs,
            "output": output_path,
            "previous": os.fspath(previous) if previous is not None else None,
        }
    )
    chosen = policy if policy is not None else ChunkPolicy()
    if warning := check_tokenizer_use(chosen_labels, chosen.tokenizer):  # UsageError: none uses it
        warnings.warn(warning + ".", UserWarning, stacklevel=2)
    corpus_filter = CorpusFilter.from_options(tuple(include), tuple(exclude), include_hidden)
    return RunConfig(
        input=inputs[0],
        inputs=inputs,
        corpus=resolve_corpora(inputs),
        corpus_filter=corpus_filter,
        output=output_path,
        labels=chosen_labels,
        policy=chosen,
        max_file_bytes=max_file_bytes,
        parse_timeout_s=parse_timeout_s,
        overwrite=overwrite,
        update=update,
        previous=load_previous_run(
            os.fspath(previous) if previous is not None else None, output_path
        ),
        limits=limits,
        chunk_timeout_s=chunk_timeout_s,
        max_memory_mb=max_memory_mb,
        parsers=ParserChoice.from_versions(tuple(parsers)),
        media_types=extension_map,
        skip_unsupported=skip_unsupported,
    )


def run(
    input: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    beam_args: Sequence[str] = (),
    **options: Any,
) -> RunResult:
    """Run the job over ``input`` into ``output`` and wait for it; see :func:`configure`
    for ``options`` (each has the command's default).

    Raises a KebabError (one sentence) for a bad option or an output that is busy or holds
    something else, and the runner's own exception when the pipeline fails.
    """
    config = configure(input, output, **options)
    result, written = run_job(config, list(beam_args))
    if result.state != PipelineState.DONE:
        raise KebabError(f"the pipeline ended in state {result.state}, not DONE.")
    return RunResult(written, read_manifest(written))
