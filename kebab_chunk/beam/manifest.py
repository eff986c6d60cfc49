# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""``WriteManifest``: per-file accounting, counts, versions and options in ``manifest.json``.

Every matched file ends in exactly one bucket: ``errors`` (it has at least one error row,
at any stage), ``chunked`` (no error, at least one chunk written) or ``zero_chunks`` (no
error, parsed and chunked, nothing to write: an empty file, a page-less PDF). A file with
no outcome at all would be ``unaccounted`` and makes ``accounting.closes`` false, so a
silently dropped document cannot go unnoticed. Buckets come from the data itself, joined
by ``source_uri``; ``files_matched`` is counted independently from the match step.

Everything outside ``run_info`` is a function of the corpus bytes, their relative paths,
the options that shape output and the package version; ``run_info`` holds the where and
when (paths, runner options, timestamps, library versions).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import apache_beam as beam
from apache_beam.pvalue import AsList, AsSingleton, PCollection
from apache_beam.transforms import combiners

from kebab_chunk import __version__
from kebab_chunk.beam import metrics
from kebab_chunk.beam.durable import write_whole
from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE
from kebab_chunk.model import Chunk, ChunkPolicy
from kebab_chunk.output.layout import MANIFEST_NAME
from kebab_chunk.output.records import DocumentOutcome, ErrorRecord, SourceFile, WrittenFile
from kebab_chunk.output.schema import SCHEMA_VERSION

__all__ = ["MANIFEST_NAME", "MANIFEST_VERSION", "FileAccount", "WriteManifest", "manifest_header"]

MANIFEST_VERSION = 1
#: Longest list of file names the manifest spells out for unaccounted/unexpected files.
_MAX_LISTED = 100

CHUNKED, ZERO_CHUNKS, ERROR = "chunked", "zero_chunks", "errors"
UNACCOUNTED, UNEXPECTED = "unaccounted", "unexpected"


@dataclass(frozen=True)
class FileAccount:
    """The bucket one input ended in, with what the manifest counts about it."""

    source_uri: str
    bucket: str
    media_type: str
    size_bytes: int
    matched: bool
    parsed: bool
    warnings: int
    parser_version: str | None
    chunks_by_label: tuple[tuple[str, int], ...]
    errors: tuple[tuple[str, str], ...]  # (stage, error_type) per error row


def manifest_header(
    *,
    labels: Sequence[str],
    requested: Sequence[str] | None,
    policy: ChunkPolicy,
    max_file_bytes: int,
    parse_timeout_s: float,
) -> dict[str, Any]:
    """The deterministic head of the manifest, built on the launching machine."""
    return {
        "manifest_version": MANIFEST_VERSION,
        "package": {"name": "kebab-chunk", "version": __version__},
        "schema_version": SCHEMA_VERSION,
        "options": {
            "chunkers": list(requested) if requested else None,
            "max_file_bytes": max_file_bytes,
            "parse_timeout_s": parse_timeout_s,
        },
        "chunkers": {
            "labels": list(labels),
            "defaults_by_media_type": {
                k: list(v) for k, v in sorted(DEFAULT_LABELS_BY_MEDIA_TYPE.items())
            },
        },
        "policy": policy.as_json(),
        "policy_hash": policy.policy_hash,
    }


def run_info(
    *, input_path: str, output: str, pipeline_options: Mapping[str, Any]
) -> dict[str, Any]:
    """The non-deterministic tail: where and how this run happened."""
    import apache_beam
    import pyarrow

    return {
        "input": input_path,
        "output": output,
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "python_version": sys.version.split()[0],
        "beam_version": apache_beam.__version__,
        "pyarrow_version": pyarrow.__version__,
        "pipeline_options": dict(sorted(pipeline_options.items())),
    }


class _ClassifyFn(beam.DoFn):
    """One FileAccount per source_uri from everything the run produced for it."""

    def process(self, element: tuple[str, Mapping[str, Iterable[Any]]]) -> Iterator[FileAccount]:
        uri, grouped = element
        files: list[SourceFile] = list(grouped["files"])
        outcomes: list[DocumentOutcome] = list(grouped["outcomes"])
        errors: list[ErrorRecord] = sorted(grouped["errors"], key=ErrorRecord.sort_key)
        chunk_counts: Counter[str] = Counter()
        for label, n in grouped["chunks"]:
            chunk_counts[label] += n
        outcome = outcomes[0] if outcomes else None
        if not files:
            bucket = UNEXPECTED
        elif errors:
            bucket = ERROR
        elif outcome is not None:
            bucket = CHUNKED if sum(chunk_counts.values()) else ZERO_CHUNKS
        else:
            bucket = UNACCOUNTED
        media_type = (
            outcome.media_type if outcome else (files[0].media_type if files else None)
        ) or "unknown"
        account = FileAccount(
            source_uri=uri,
            bucket=bucket,
            media_type=media_type,
            size_bytes=files[0].size_bytes if files else 0,
            matched=bool(files),
            parsed=outcome is not None,
            warnings=outcome.warnings if outcome else 0,
            parser_version=outcome.parser_version if outcome else None,
            chunks_by_label=tuple(sorted(chunk_counts.items())),
            errors=tuple((e.stage, e.error_type) for e in errors),
        )
        if account.matched:
            metrics.inc("files_matched")
            metrics.inc(metrics.keyed("files", media_type))
        metrics.inc(_BUCKET_COUNTERS[bucket])
        yield account


_BUCKET_COUNTERS = {
    CHUNKED: "documents_chunked",
    ZERO_CHUNKS: "documents_with_zero_chunks",
    ERROR: "documents_with_errors",
    UNACCOUNTED: "documents_unaccounted",
    UNEXPECTED: "documents_unexpected",
}


class _SummariseFn(beam.CombineFn):
    """Adds FileAccounts into the manifest's counts (order-independent, so deterministic)."""

    def create_accumulator(self) -> tuple[Counter[tuple[str, ...]], list[tuple[str, str]]]:
        return Counter(), []

    def add_input(
        self, acc: tuple[Counter[tuple[str, ...]], list[tuple[str, str]]], a: FileAccount
    ) -> tuple[Counter[tuple[str, ...]], list[tuple[str, str]]]:
        counts, odd = acc
        if a.matched:
            counts["files_matched",] += 1
            counts["bytes_matched",] += a.size_bytes
            counts["media", a.media_type, "files"] += 1
        counts["bucket", a.bucket] += 1
        counts["media", a.media_type, a.bucket] += 1
        counts["documents_parsed",] += int(a.parsed)
        counts["documents_with_warnings",] += int(a.warnings > 0)
        if a.parser_version is not None:
            counts["parser", a.parser_version] += 1
        for label, n in a.chunks_by_label:
            counts["chunks", label] += n
        for stage, error_type in a.errors:
            counts["errors", stage, error_type] += 1
        if a.bucket in (UNACCOUNTED, UNEXPECTED, ZERO_CHUNKS):
            odd.append((a.bucket, a.source_uri))
        return counts, odd

    def merge_accumulators(
        self, accs: Iterable[tuple[Counter[tuple[str, ...]], list[tuple[str, str]]]]
    ) -> tuple[Counter[tuple[str, ...]], list[tuple[str, str]]]:
        total: Counter[tuple[str, ...]] = Counter()
        odd: list[tuple[str, str]] = []
        for counts, more in accs:
            total.update(counts)
            odd.extend(more)
        return total, odd

    def extract_output(
        self, acc: tuple[Counter[tuple[str, ...]], list[tuple[str, str]]]
    ) -> dict[str, Any]:
        counts, odd = acc
        return summarise(counts, odd)


def summarise(counts: Counter[tuple[str, ...]], odd: list[tuple[str, str]]) -> dict[str, Any]:
    """The ``counts`` and ``accounting`` sections from the combined counters."""
    media: dict[str, dict[str, int]] = {}
    chunks: dict[str, int] = {}
    parsers: dict[str, int] = {}
    errors: dict[str, dict[str, int]] = {}
    for key, n in sorted(counts.items()):
        if key[0] == "media":
            media.setdefault(key[1], {"files": 0, CHUNKED: 0, ZERO_CHUNKS: 0, ERROR: 0})
            media[key[1]][key[2]] = n
        elif key[0] == "chunks":
            chunks[key[1]] = n
        elif key[0] == "parser":
            parsers[key[1]] = n
        elif key[0] == "errors":
            errors.setdefault(key[1], {})[key[2]] = n
    bucket = {b: counts["bucket", b] for b in _BUCKET_COUNTERS}
    files_matched = counts["files_matched",]
    accounted = bucket[CHUNKED] + bucket[ZERO_CHUNKS] + bucket[ERROR]
    zero = sorted(u for b, u in odd if b == ZERO_CHUNKS)
    odd = [(b, u) for b, u in odd if b != ZERO_CHUNKS]
    return {
        "counts": {
            "files_matched": files_matched,
            "bytes_matched": counts["bytes_matched",],
            "documents_parsed": counts["documents_parsed",],
            "documents_with_warnings": counts["documents_with_warnings",],
            "documents_by_parser_version": parsers,
            "documents_chunked": bucket[CHUNKED],
            "documents_with_zero_chunks": bucket[ZERO_CHUNKS],
            "documents_with_errors": bucket[ERROR],
            "chunks_total": sum(chunks.values()),
            "chunks_by_label": chunks,
            "by_media_type": media,
            "error_rows": sum(sum(v.values()) for v in errors.values()),
            "errors_by_stage": errors,
        },
        "accounting": {
            "equation": "files_matched = documents_chunked + documents_with_zero_chunks + errors",
            "files_matched": files_matched,
            "documents_chunked": bucket[CHUNKED],
            "documents_with_zero_chunks": bucket[ZERO_CHUNKS],
            "errors": bucket[ERROR],
            "closes": files_matched == accounted and not odd,
            "unaccounted_files": sorted(u for b, u in odd if b == UNACCOUNTED)[:_MAX_LISTED],
            "unexpected_files": sorted(u for b, u in odd if b == UNEXPECTED)[:_MAX_LISTED],
            # Every one, not a sample: with chunks' and errors' source_uri it names each
            # matched file exactly once, so the accounting can be reconciled file by file.
            "zero_chunk_files": zero,
        },
    }


class _WriteManifestFn(beam.DoFn):
    def __init__(self, output: str, header: Mapping[str, Any], info: Mapping[str, Any]) -> None:
        self._output = output
        self._header = dict(header)
        self._info = dict(info)

    def process(self, summary: Mapping[str, Any], written: Sequence[WrittenFile]) -> Iterator[str]:
        files = sorted(written, key=lambda w: w.path)
        manifest = {
            **self._header,
            "outputs": {
                kind: [
                    {"path": w.path, "rows": w.rows} for w in files if w.path.startswith(kind + "/")
                ]
                for kind in ("chunks", "errors")
            },
            **summary,
            "run_info": {
                **self._info,
                "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
            },
        }
        path = f"{self._output}/{MANIFEST_NAME}"
        write_whole(path, (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode())
        yield path


class WriteManifest(beam.PTransform[Mapping[str, PCollection[Any]], PCollection[str]]):
    """Write ``OUTPUT/manifest.json`` once every part file is written.

    Input: a dict of PCollections ``files`` (SourceFile), ``outcomes`` (DocumentOutcome),
    ``chunk_counts`` (``(source_uri, (label, rows written))``, as WriteChunks emits them;
    several per source add up) or else ``chunks`` (the validated Chunks, counted here),
    ``errors`` (every ErrorRecord) and ``written``
    (WrittenFile of every part file; the manifest waits for them, so a manifest present
    means the output is complete); optionally ``incremental`` (one dict, the counts of an
    incremental run, written as the manifest's ``incremental`` section). Output: the
    manifest path.
    """

    def __init__(self, output: str, header: Mapping[str, Any], info: Mapping[str, Any]) -> None:
        super().__init__()
        self._output = output.rstrip("/")
        self._header = dict(header)
        self._info = dict(info)

    def expand(self, inputs: Mapping[str, PCollection[Any]]) -> PCollection[str]:
        files = inputs["files"] | "Key files" >> beam.Map(lambda f: (f.source_uri, f))
        outcomes = inputs["outcomes"] | "Key outcomes" >> beam.Map(lambda o: (o.source_uri, o))
        errors = inputs["errors"] | "Key errors" >> beam.Map(lambda e: (e.source_uri, e))
        if "chunk_counts" in inputs:  # WriteChunks' per-shard counts: small, never chunks
            chunks = inputs["chunk_counts"]
        else:
            chunks = (
                inputs["chunks"]
                | "Source and label" >> beam.Map(_source_and_label)
                | "Count chunks per source" >> combiners.Count.PerElement()
                | "Key chunk counts" >> beam.Map(lambda kv: (kv[0][0], (kv[0][1], kv[1])))
            )
        summary = (
            {"files": files, "outcomes": outcomes, "errors": errors, "chunks": chunks}
            | "Join per file" >> beam.CoGroupByKey()
            | "Classify files" >> beam.ParDo(_ClassifyFn())
            | "Summarise" >> beam.CombineGlobally(_SummariseFn())
        )
        if "incremental" in inputs:  # --previous runs: see kebab_chunk/beam/incremental.py
            summary = summary | "Add incremental counts" >> beam.Map(
                _with_incremental, AsSingleton(inputs["incremental"])
            )
        path: PCollection[str] = summary | "Write manifest" >> beam.ParDo(
            _WriteManifestFn(self._output, self._header, self._info),
            AsList(inputs["written"]),
        )
        return path


def _with_incremental(summary: Mapping[str, Any], incremental: Any) -> dict[str, Any]:
    """The summary with the ``incremental`` section (reused/rechunked/new/deleted counts)."""
    return {**summary, "incremental": incremental}


def _source_and_label(chunk: Chunk) -> tuple[str, str]:
    return chunk.source_uri, chunk.chunker_version
