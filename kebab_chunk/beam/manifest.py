# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""``WriteManifest``: per-file accounting, counts, versions and options in ``manifest.json``.

Every matched file ends in exactly one bucket: ``errors`` (it has at least one error row,
at any stage), ``chunked`` (no error, at least one chunk written), ``zero_chunks`` (no
error, parsed and chunked, nothing to write: an empty file, a page-less PDF) or
``skipped`` (``--skip-unsupported``: no parser reads its media type). Two buckets make
``accounting.closes`` false, so a silently dropped or doubled document cannot go
unnoticed: ``unaccounted``, a file with no outcome at all, and ``inconsistent``, a file
whose records no single processing of one file gives: listed twice, processed twice, or
a ``read``/``parse`` error row (after which nothing else happens to a file) beside a
chunk, an outcome, a skip or another error row. Chunks of one label beside a ``chunk``
error of another are consistent (docs/guide/limits.md, Isolation): that file is in ``errors``.
Buckets come from the records joined by ``source_uri``: the chunk counts WriteChunks
wrote, the error rows WriteErrors writes, the documents' outcomes; ``files_matched``
counts the listing's entries. The chunk index entries WriteChunks sends with its counts
become the documents row's ``chunk_index``.

The same join gives the documents table (``OUTPUT/documents/part-*.parquet``, written by
``WriteDocuments``): one :class:`~kebab_chunk.output.records.DocumentRow` per matched file,
its ``status`` the bucket above (``error`` for ``errors``), so the table and the manifest
cannot disagree. The manifest waits for the documents files like it waits for every other
part file.

Everything outside ``run_info`` is a function of the corpus bytes, their relative paths,
the options that shape output and the package version (and, for the part files' ``bytes``
and ``blake3``, the Parquet writer, whose version string each file holds); ``run_info``
holds the where and when (paths, runner options, timestamps, library versions).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import apache_beam as beam
import pyarrow as pa
from apache_beam.io.filesystems import FileSystems
from apache_beam.pvalue import AsList, AsSingleton, PCollection
from apache_beam.transforms import combiners

from kebab_chunk import __version__
from kebab_chunk.beam import metrics
from kebab_chunk.beam.batches import Pack, PackPerBucket, pack_records, unpack_records
from kebab_chunk.beam.durable import write_whole
from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE
from kebab_chunk.elements import DocumentOutcome, SourceFile, WrittenFile
from kebab_chunk.model import Chunk, ChunkPolicy
from kebab_chunk.output.chunk_index import (
    Packed,
    entry_of_chunk,
    index_column,
    merge_packed,
    packed_line,
    unpack,
)
from kebab_chunk.output.digest import DigestSink
from kebab_chunk.output.layout import (
    CHUNKS_DIR,
    DOCUMENT_ROWS_PER_FILE,
    DOCUMENTS_DIR,
    ERRORS_DIR,
    MANIFEST_NAME,
    document_shard,
    part_name,
    shard_count,
)
from kebab_chunk.output.records import DocumentFacts, DocumentRow, ErrorRecord, Status
from kebab_chunk.output.schema import SCHEMA_VERSION, documents_table, write_parquet

__all__ = [
    "DEFAULT_DOCUMENT_ROWS_PER_FILE",
    "MANIFEST_NAME",
    "MANIFEST_VERSION",
    "FileAccount",
    "WriteDocuments",
    "WriteManifest",
    "count_account",
    "manifest_header",
]

MANIFEST_VERSION = 1
#: Longest list of file names the manifest spells out for unaccounted, unexpected,
#: inconsistent and skipped files.
_MAX_LISTED = 100
#: The accounting equation, as the manifest states it.
EQUATION = "files_matched = documents_chunked + documents_with_zero_chunks + errors + skipped"

CHUNKED, ZERO_CHUNKS, ERROR, SKIPPED = "chunked", "zero_chunks", "errors", "skipped"
UNACCOUNTED, UNEXPECTED, INCONSISTENT = "unaccounted", "unexpected", "inconsistent"
#: Stages after whose error row nothing else happens to a file (no outcome, no chunk).
_FINAL_STAGES = frozenset({"read", "parse"})
#: A matched file's bucket -> its documents-table status (``unexpected`` files have no row).
_STATUS: dict[str, Status] = {
    CHUNKED: "chunked",
    ZERO_CHUNKS: "zero_chunks",
    ERROR: "error",
    SKIPPED: "skipped",
    UNACCOUNTED: "unaccounted",
    INCONSISTENT: "inconsistent",
}
#: Documents-table rows per part file (a few hundred bytes each).
DEFAULT_DOCUMENT_ROWS_PER_FILE = DOCUMENT_ROWS_PER_FILE


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
    detected_media_type: str | None = None  # as the read step saw it (None: unknown)
    content_hash: str | None = None  # None: never read
    facts: DocumentFacts | None = None  # None: never parsed
    chunk_index: tuple[Packed, ...] = ()  # every record written, packed per label

    def document_row(self, *, index: bool = True) -> DocumentRow | None:
        """The documents-table row of this file (None for a file that was not matched);
        ``index=False`` leaves ``chunk_index`` empty (the writer builds that column from
        the packed texts: :func:`~kebab_chunk.output.chunk_index.index_column`)."""
        if not self.matched:
            return None
        facts = self.facts
        return DocumentRow(
            source_uri=self.source_uri,
            doc_id=facts.doc_id if facts else None,
            media_type=facts.media_type if facts else self.detected_media_type,
            parser_version=facts.parser_version if facts else None,
            content_hash=self.content_hash,
            size_bytes=self.size_bytes,
            title=facts.title if facts else None,
            front_matter=facts.front_matter if facts else None,
            warnings=facts.warnings if facts else (),
            pages=facts.pages if facts else None,
            blocks=facts.blocks if facts else None,
            chunks_by_label=self.chunks_by_label,
            status=_STATUS[self.bucket],
            errors=self.errors,
            chunk_index=unpack(self.chunk_index) if index else (),
        )


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


def _consistent(
    files: Sequence[SourceFile],
    skipped: Sequence[SourceFile],
    outcomes: Sequence[DocumentOutcome],
    errors: Sequence[ErrorRecord],
    chunks: int,
) -> bool:
    """Whether one processing of one listed file can have given these records: listed
    once, at most one outcome or skip, and a ``read``/``parse`` error row alone."""
    if len(files) > 1 or len(outcomes) > 1 or len(skipped) > 1:
        return False
    if skipped and (outcomes or errors or chunks):
        return False
    final = [e for e in errors if e.stage in _FINAL_STAGES]
    return not final or (len(errors) == 1 and not outcomes and not chunks)


def _bucket(
    files: Sequence[SourceFile],
    skipped: Sequence[SourceFile],
    outcomes: Sequence[DocumentOutcome],
    errors: Sequence[ErrorRecord],
    chunks: int,
) -> str:
    """The one bucket of a file from every record the run wrote for it."""
    if not files:
        return UNEXPECTED
    if not _consistent(files, skipped, outcomes, errors, chunks):
        return INCONSISTENT
    if errors:
        return ERROR
    if skipped:
        return SKIPPED
    if outcomes:
        return CHUNKED if chunks else ZERO_CHUNKS
    return UNACCOUNTED


class _ClassifyFn(beam.DoFn):
    """One bucket of the per-file join -> one FileAccount per source_uri in it, from
    everything the run produced for that file (the join's sides are packed per bucket:
    kebab_chunk/beam/batches.py)."""

    def process(self, element: tuple[int, Mapping[str, Iterable[Pack]]]) -> Iterator[FileAccount]:
        _, packed = element
        by_uri: dict[str, dict[str, list[Any]]] = {}
        for side, packs in packed.items():
            for uri, value in unpack_records(packs):
                by_uri.setdefault(uri, {}).setdefault(side, []).append(value)
        for uri in sorted(by_uri):
            yield classify(uri, by_uri[uri])


def classify(uri: str, grouped: Mapping[str, Iterable[Any]]) -> FileAccount:
    """The FileAccount of one file from what each side of the join holds for it."""
    files: list[SourceFile] = list(grouped.get("files", ()))
    skipped: list[SourceFile] = list(grouped.get("skipped", ()))
    outcomes: list[DocumentOutcome] = list(grouped.get("outcomes", ()))
    errors: list[ErrorRecord] = sorted(grouped.get("errors", ()), key=ErrorRecord.sort_key)
    chunk_counts: Counter[str] = Counter()
    index: list[Packed] = []
    for label, n, lines in grouped.get("chunks", ()):
        chunk_counts[label] += n
        index.append((label, lines))
    outcome = outcomes[0] if outcomes else None
    bucket = _bucket(files, skipped, outcomes, errors, sum(chunk_counts.values()))
    detected = files[0].media_type if files else None
    media_type = (outcome.media_type if outcome else detected) or "unknown"
    content_hash = (
        outcome.facts.content_hash
        if outcome
        else next((e.content_hash for e in errors if e.content_hash), None)
    )
    account = FileAccount(
        source_uri=uri,
        bucket=bucket,
        media_type=media_type,
        size_bytes=files[0].size_bytes if files else 0,
        matched=bool(files),
        parsed=outcome is not None,
        warnings=len(outcome.warnings) if outcome else 0,
        parser_version=outcome.parser_version if outcome else None,
        chunks_by_label=tuple(sorted(chunk_counts.items())),
        errors=tuple((e.stage, e.error_type) for e in errors),
        detected_media_type=detected,
        content_hash=content_hash,
        facts=outcome.facts if outcome else None,
        chunk_index=merge_packed(index),
    )
    count_account(account)
    return account


def count_account(account: FileAccount) -> None:
    """The counters of one classified file (its media type, its bucket)."""
    if account.matched:
        metrics.inc("files_matched")
        metrics.inc(metrics.keyed("files", account.media_type))
    metrics.inc(_BUCKET_COUNTERS[account.bucket])


_BUCKET_COUNTERS = {
    CHUNKED: "documents_chunked",
    ZERO_CHUNKS: "documents_with_zero_chunks",
    ERROR: "documents_with_errors",
    SKIPPED: "documents_skipped",
    UNACCOUNTED: "documents_unaccounted",
    UNEXPECTED: "documents_unexpected",
    INCONSISTENT: "documents_inconsistent",
}


#: Buckets whose file names the manifest lists (zero_chunks all, the others up to _MAX_LISTED).
_LISTED_BUCKETS = (UNACCOUNTED, UNEXPECTED, INCONSISTENT, SKIPPED, ZERO_CHUNKS)


#: FileAccounts added up: the manifest's counters, and (bucket, source_uri) of the files
#: the accounting lists by name.
Tally = tuple[Counter[tuple[str, ...]], list[tuple[str, str]]]


class _SummariseFn(beam.CombineFn):
    """Adds FileAccounts (or Tallies of some) into the manifest's counts
    (order-independent, so deterministic)."""

    def create_accumulator(self) -> Tally:
        return Counter(), []

    def add_input(self, acc: Tally, a: FileAccount | Tally) -> Tally:
        if not isinstance(a, FileAccount):
            return self.merge_accumulators((acc, a))
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
        if a.bucket in _LISTED_BUCKETS:
            odd.append((a.bucket, a.source_uri))
        return counts, odd

    def merge_accumulators(self, accs: Iterable[Tally]) -> Tally:
        total: Counter[tuple[str, ...]] = Counter()
        odd: list[tuple[str, str]] = []
        for counts, more in accs:
            total.update(counts)
            odd.extend(more)
        return total, odd

    def extract_output(self, acc: Tally) -> dict[str, Any]:
        counts, odd = acc
        return summarise(counts, odd)


class _TallyFn(_SummariseFn):
    """FileAccounts -> their Tally, for ``_SummariseFn`` to add to the others'."""

    def extract_output(self, acc: Tally) -> Tally:  # type: ignore[override]
        return acc


def summarise(counts: Counter[tuple[str, ...]], odd: list[tuple[str, str]]) -> dict[str, Any]:
    """The ``counts`` and ``accounting`` sections from the combined counters."""
    media: dict[str, dict[str, int]] = {}
    chunks: dict[str, int] = {}
    parsers: dict[str, int] = {}
    errors: dict[str, dict[str, int]] = {}
    for key, n in sorted(counts.items()):
        if key[0] == "media":
            media.setdefault(key[1], {"files": 0, CHUNKED: 0, ZERO_CHUNKS: 0, ERROR: 0, SKIPPED: 0})
            media[key[1]][key[2]] = n
        elif key[0] == "chunks":
            chunks[key[1]] = n
        elif key[0] == "parser":
            parsers[key[1]] = n
        elif key[0] == "errors":
            errors.setdefault(key[1], {})[key[2]] = n
    bucket = {b: counts["bucket", b] for b in _BUCKET_COUNTERS}
    files_matched = counts["files_matched",]
    accounted = bucket[CHUNKED] + bucket[ZERO_CHUNKS] + bucket[ERROR] + bucket[SKIPPED]
    zero = sorted(u for b, u in odd if b == ZERO_CHUNKS)

    def listed(wanted: str) -> list[str]:
        return sorted(u for b, u in odd if b == wanted)[:_MAX_LISTED]

    broken = [(b, u) for b, u in odd if b in (UNACCOUNTED, UNEXPECTED, INCONSISTENT)]
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
            "documents_skipped": bucket[SKIPPED],
            "chunks_total": sum(chunks.values()),
            "chunks_by_label": chunks,
            "by_media_type": media,
            "error_rows": sum(sum(v.values()) for v in errors.values()),
            "errors_by_stage": errors,
        },
        "accounting": {
            "equation": EQUATION,
            "files_matched": files_matched,
            "documents_chunked": bucket[CHUNKED],
            "documents_with_zero_chunks": bucket[ZERO_CHUNKS],
            "errors": bucket[ERROR],
            "skipped": bucket[SKIPPED],
            "inconsistent": bucket[INCONSISTENT],
            "closes": files_matched == accounted and not broken,
            "unaccounted_files": listed(UNACCOUNTED),
            "unexpected_files": listed(UNEXPECTED),
            # Files whose records no single processing gives (listed or read twice, a
            # read/parse error beside chunks): the output cannot be trusted for them.
            "inconsistent_files": listed(INCONSISTENT),
            "skipped_files": listed(SKIPPED),
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
                kind: [w.listing() for w in files if w.path.startswith(kind + "/")]
                for kind in (CHUNKS_DIR, DOCUMENTS_DIR, ERRORS_DIR)
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
    """Write the documents table, then ``OUTPUT/manifest.json`` once every part file is
    written (the documents table's included: it comes from the same per-file join).

    Input: a dict of PCollections ``files`` (SourceFile), optionally ``skipped``
    (SourceFile of the files ``skip_unsupported`` left out), ``outcomes`` (DocumentOutcome),
    ``chunk_counts`` (``(source_uri, (label, rows written, index entries))``, as
    WriteChunks emits them; several per source add up) or else ``chunks`` (the validated
    Chunks, counted and indexed here),
    ``errors`` (every ErrorRecord) and ``written``
    (WrittenFile of every part file; the manifest waits for them, so a manifest present
    means the output is complete); optionally ``incremental`` (one dict, the counts of an
    incremental run, written as the manifest's ``incremental`` section) and ``accounts``
    (FileAccounts classified elsewhere: an update's reused documents, whose rows stay where
    they are, so they are counted but not written). Output: the manifest path (or what
    ``commit`` returns). ``document_rows_per_file`` sizes the documents part files;
    ``prefix`` starts their names.
    """

    def __init__(
        self,
        output: str,
        header: Mapping[str, Any],
        info: Mapping[str, Any],
        *,
        document_rows_per_file: int = DEFAULT_DOCUMENT_ROWS_PER_FILE,
        prefix: str = "",
        commit: Callable[[PCollection[Any], PCollection[WrittenFile]], PCollection[str]]
        | None = None,
    ) -> None:
        super().__init__()
        self._output = output.rstrip("/")
        self._header = dict(header)
        self._info = dict(info)
        self._rows_per_file = document_rows_per_file
        self._prefix = prefix
        self._commit = commit

    def expand(self, inputs: Mapping[str, PCollection[Any]]) -> PCollection[str]:
        if "chunk_counts" in inputs:  # WriteChunks' per-shard counts: small, never chunks
            chunks = inputs["chunk_counts"]
        else:
            chunks = inputs["chunks"] | "Count and index chunks" >> beam.Map(_counted)
        # (side, its records, their key): files, outcomes, errors and skipped files are keyed
        # by source_uri where they are packed (no keying step per record); chunk counts
        # come keyed.
        sides = [
            ("files", inputs["files"], _source_uri),
            ("outcomes", inputs["outcomes"], _source_uri),
            ("errors", inputs["errors"], _source_uri),
            ("chunks", chunks, None),
        ]
        if "skipped" in inputs:
            sides.append(("skipped", inputs["skipped"], _source_uri))
        accounts = (
            {
                side: pc | f"Pack {side} per bucket" >> PackPerBucket(key=key)
                for side, pc, key in sides
            }
            | "Join per file" >> beam.CoGroupByKey()
            | "Classify files" >> beam.ParDo(_ClassifyFn())
        )
        tallies = accounts
        if "accounts" in inputs:  # run --update: reused documents, classified by the plan
            # Tallied where the plan emits them (a lifted combine): one element reaches the
            # summary, not one per document (each element would be held by the runner).
            reused = inputs["accounts"] | "Tally reused documents" >> beam.CombineGlobally(
                _TallyFn()
            )
            tallies = (accounts, reused) | "All tallies" >> beam.Flatten()
        summary = tallies | "Summarise" >> beam.CombineGlobally(_SummariseFn())
        documents = (
            accounts
            | "Documents table rows" >> beam.Filter(lambda a: a.matched)
            | "Write documents"
            >> WriteDocuments(self._output, rows_per_file=self._rows_per_file, prefix=self._prefix)
        )
        written = (
            inputs["written"],
            documents,
        ) | "Every written file" >> beam.Flatten()
        if "incremental" in inputs:  # --previous runs: see kebab_chunk/beam/incremental.py
            summary = summary | "Add incremental counts" >> beam.Map(
                _with_incremental, AsSingleton(inputs["incremental"])
            )
        if self._commit is not None:  # run --update: kebab_chunk/beam/update.py
            return self._commit(summary, written)
        path: PCollection[str] = summary | "Write manifest" >> beam.ParDo(
            _WriteManifestFn(self._output, self._header, self._info),
            AsList(written),
        )
        return path


class _WriteDocumentsFn(beam.DoFn):
    """One documents part file: the shard's rows sorted by source_uri."""

    def __init__(self, output: str, prefix: str = "") -> None:
        self._output = output
        self._prefix = prefix

    def process(
        self, element: tuple[int, Iterable[Pack | None]], count: int
    ) -> Iterator[WrittenFile]:
        index, packs = element
        table = _documents_part(row for _, row in unpack_records(p for p in packs if p is not None))
        relative = f"{DOCUMENTS_DIR}/{self._prefix}{part_name(index, count)}"
        with FileSystems.create(
            f"{self._output}/{relative}", mime_type="application/octet-stream"
        ) as f:
            sink = DigestSink(f)
            write_parquet(table, sink)
        yield WrittenFile(relative, table.num_rows, sink.size, sink.digest)


def _documents_part(rows: Iterable[DocumentRow | FileAccount]) -> pa.Table:
    """A documents part file's table from DocumentRows or FileAccounts (not mixed)."""
    given = sorted(rows, key=lambda r: r.source_uri)
    if not given or isinstance(given[0], DocumentRow):
        return documents_table(r for r in given if isinstance(r, DocumentRow))
    accounts = [a for a in given if isinstance(a, FileAccount)]
    table = documents_table(a.document_row(index=False) for a in accounts)  # type: ignore[misc]
    i = table.schema.get_field_index("chunk_index")
    entry_type = table.schema.field(i).type.value_type
    column = index_column([a.chunk_index for a in accounts], entry_type)
    return table.set_column(i, table.schema.field(i), column)


class WriteDocuments(beam.PTransform[PCollection[DocumentRow], PCollection[WrittenFile]]):
    """Write the documents table under ``OUTPUT/documents/``: ``part-<i>-of-<n>.parquet``.

    Takes DocumentRows, or the FileAccounts of matched files (WriteManifest's: each becomes
    its row only while its part file is built, so the grouping holds the packed chunk
    index, not one object per record).

    ``n = ceil(rows / rows_per_file)`` (at least 1, so the table exists, empty, for an
    empty corpus); a row goes to part ``int(doc_id[:12], 16) % n``, and each part is
    sorted by ``source_uri``, so the same rows give the same files, byte for byte, on any
    runner. No step holds more than one part's rows. Output: one WrittenFile per part.
    """

    def __init__(
        self,
        output: str,
        *,
        rows_per_file: int = DEFAULT_DOCUMENT_ROWS_PER_FILE,
        prefix: str = "",
    ) -> None:
        super().__init__()
        if rows_per_file <= 0:
            raise ValueError(f"rows_per_file must be > 0, got {rows_per_file}")
        self._output = output.rstrip("/")
        self._rows_per_file = rows_per_file
        self._prefix = prefix

    def expand(self, rows: PCollection[DocumentRow]) -> PCollection[WrittenFile]:
        per_file = self._rows_per_file
        count = (
            rows
            | "Count documents" >> combiners.Count.Globally()
            | "Documents part files" >> beam.Map(shard_count, per_file)
        )
        # Rows travel packed (kebab_chunk/beam/batches.py): per bucket of source_uris from
        # where they are made, then per part once the part count is known, so no grouping
        # holds one element per document.
        keyed = (
            rows
            | "Pack documents per bucket" >> PackPerBucket(key=_source_uri)
            | "Pack documents per part" >> beam.FlatMap(_packs_per_part, AsSingleton(count))
        )
        markers = count | "Every documents part" >> beam.FlatMap(
            lambda n: [(i, None) for i in range(n)]
        )
        written: PCollection[WrittenFile] = (
            (keyed, markers)
            | "Documents and part markers" >> beam.Flatten()
            | "Documents per part" >> beam.GroupByKey()
            | "Write documents part files"
            >> beam.ParDo(_WriteDocumentsFn(self._output, self._prefix), AsSingleton(count))
        )
        return written


def _source_uri(record: Any) -> str:
    """The join key of a file's records: its source_uri."""
    uri: str = record.source_uri
    return uri


def _packs_per_part(element: tuple[int, Pack], parts: int) -> Iterator[tuple[int, Pack]]:
    """One bucket's packed rows -> (part, Pack of its rows in that part), one per part (the
    bucket's Pack itself when there is one part: the part file sorts its rows anyway)."""
    if parts == 1:
        yield 0, element[1]
        return
    by_part: dict[int, list[tuple[str, Any]]] = {}
    for uri, row in unpack_records([element[1]]):
        by_part.setdefault(document_shard(uri, parts), []).append((uri, row))
    for part, records in sorted(by_part.items()):
        yield part, pack_records(records)


def _with_incremental(summary: Mapping[str, Any], incremental: Any) -> dict[str, Any]:
    """The summary with the ``incremental`` section (reused/rechunked/new/deleted counts)."""
    return {**summary, "incremental": incremental}


def _counted(chunk: Chunk) -> tuple[str, tuple[str, int, str]]:
    """A chunk as WriteChunks' count of one row: ``(source_uri, (label, 1, line))``."""
    return chunk.source_uri, (chunk.chunker_version, 1, packed_line(entry_of_chunk(chunk)))
