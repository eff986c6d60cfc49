# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""Incremental runs (``--previous PREV_OUTPUT``): carry forward what did not change.

Every file is still read (its ``content_hash`` is the blake3 of its bytes, so the bytes
must be seen), but a document is parsed and chunked again only when its records in
PREV_OUTPUT could differ from a fresh run's. ``ReusePrevious`` sits between
``ReadCorpus`` and ``ParseDocuments``: it reads PREV_OUTPUT's chunk partitions and error
rows with Beam's Parquet IO, joins them with this run's files and bytes by ``doc_id``
(``CoGroupByKey``) and decides per document:

* ``reused`` — the previous records of every label this run applies to the document are
  emitted as they are; the document never reaches the parser. Conditions: PREV_OUTPUT
  has no error row for it; it has at least one record under those labels; every previous
  record of the document (any label) has this file's ``content_hash``, the
  ``parser_version`` of the parser registered for its media type (a class attribute, known
  without parsing) and this run's ``policy_hash``; and the previous run applied each of
  those labels to the media type (from its manifest), so a label without records there
  produced none or did not accept the document, exactly as it would now.
* ``rechunked`` — known to PREV_OUTPUT but not reusable (changed bytes, a new parser or
  chunker label, another policy, a previous error): parsed and chunked as in a full run.
* ``new`` — no record and no error row in PREV_OUTPUT: parsed and chunked. (A document
  that gave zero chunks and no error leaves no trace in an output, so it counts as new.)
* ``deleted`` — in PREV_OUTPUT but no longer matched: its records are simply not carried.

Because chunk records are pure functions of (bytes, path, parser, label, policy), the
output is byte-identical to a full run's. The manifest gains an ``incremental`` section
with the four counts; counters ``incremental[<decision>]`` mirror it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.io.filesystems import FileSystems
from apache_beam.io.parquetio import ReadFromParquet
from apache_beam.pvalue import PCollection

from kebab_chunk.beam import metrics
from kebab_chunk.beam.chunk import run_labels
from kebab_chunk.beam.records import DocumentOutcome, RawDocument, SourceFile
from kebab_chunk.beam.schema import PARTITION_COLUMN, row_to_chunk
from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE
from kebab_chunk.diff import OutputDirError, normalise_path, open_output
from kebab_chunk.model import Chunk, ChunkPolicy
from kebab_chunk.model.ids import doc_id
from kebab_chunk.parsers.registry import ParserChoice

__all__ = [
    "DECISIONS",
    "DELETED",
    "NEW",
    "RECHUNKED",
    "REUSED",
    "PreviousRun",
    "Reuse",
    "ReusePrevious",
    "incremental_summary",
    "load_previous",
    "reuse_previous",
]

REUSED, RECHUNKED, NEW, DELETED = "reused", "rechunked", "new", "deleted"
DECISIONS = (REUSED, RECHUNKED, NEW, DELETED)
#: The manifest key of the incremental section (absent from full runs).
MANIFEST_KEY = "incremental"

_Fingerprint = tuple[str, str, str]  # (content_hash, parser_version, policy_hash)
_FINGERPRINT_COLUMNS = ["doc_id", "content_hash", "parser_version", "policy_hash"]
_FILES, _RAW, _CHUNKS, _PRINTS, _ERRORS = "files", "raw", "chunks", "prints", "errors"
_OUTCOMES, _DECISIONS = "outcomes", "decisions"


@dataclass(frozen=True)
class PreviousRun:
    """What the launching machine learned from PREV_OUTPUT's manifest."""

    output: str
    policy_hash: str
    labels: tuple[str, ...]  # the partitions it wrote
    requested: tuple[str, ...] | None  # its --chunkers, None for the defaults
    defaults_by_media_type: tuple[tuple[str, tuple[str, ...]], ...]

    def labels_for(self, media_type: str) -> tuple[str, ...]:
        """The labels the previous run applied to documents of ``media_type``."""
        if self.requested:
            return self.requested
        return dict(self.defaults_by_media_type).get(media_type, ())

    def chunk_pattern(self, label: str) -> str:
        return f"{self.output}/chunks/{PARTITION_COLUMN}={label}/part-*.parquet"

    @property
    def errors_pattern(self) -> str:
        return f"{self.output}/errors/part-*.parquet"


def _inside(path: str, other: str) -> bool:
    return (path + "/").startswith(other.rstrip("/") + "/")


def load_previous(previous: str, *, output: str) -> PreviousRun:
    """Check ``--previous`` on the launching machine; one-sentence OutputDirError if unusable.

    It must be a finished output (manifest present, same schema version, every partition
    and the errors file there) and must not overlap ``--output``, which a run may delete.
    """
    path, manifest = open_output(previous, "--previous")
    out = normalise_path(output)
    if _inside(out, path) or _inside(path, out):
        raise OutputDirError(
            f"--previous {previous!r} and --output {output!r} overlap; write each run to its "
            "own directory (e.g. runs/<date>/) and pass the last one as --previous."
        )
    try:
        chunkers = manifest["chunkers"]
        requested = manifest["options"]["chunkers"]
        run = PreviousRun(
            output=path,
            policy_hash=str(manifest["policy_hash"]),
            labels=tuple(str(label) for label in chunkers["labels"]),
            requested=tuple(requested) if requested else None,
            defaults_by_media_type=tuple(
                (str(k), tuple(v)) for k, v in sorted(chunkers["defaults_by_media_type"].items())
            ),
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise OutputDirError(
            f"--previous {previous!r} has a manifest.json without {exc}; point at the output "
            "of a kebab-chunk run of this version."
        ) from None
    for pattern in [*(run.chunk_pattern(label) for label in run.labels), run.errors_pattern]:
        if not FileSystems.match([pattern], limits=[1])[0].metadata_list:
            raise OutputDirError(
                f"--previous {previous!r} lacks {pattern[len(path) + 1 :]} although its "
                "manifest lists it; the output is damaged, so run without --previous."
            )
    return run


def _fingerprint(chunk: Chunk) -> _Fingerprint:
    return chunk.content_hash, chunk.parser_version, chunk.policy_hash


def _keyed_chunk(row: dict[str, Any], label: str) -> tuple[str, Chunk]:
    chunk = row_to_chunk({**row, PARTITION_COLUMN: label})
    return chunk.doc_id, chunk


def _keyed_fingerprint(row: dict[str, Any]) -> tuple[str, _Fingerprint]:
    return str(row["doc_id"]), (
        str(row["content_hash"]),
        str(row["parser_version"]),
        str(row["policy_hash"]),
    )


class _DecideFn(beam.DoFn):
    """One decision per document; reused records and documents to parse leave separately."""

    def __init__(
        self,
        previous: PreviousRun,
        labels: tuple[str, ...] | None,
        policy_hash: str,
        parsers: ParserChoice,
    ) -> None:
        self._previous = previous
        self._labels = labels
        self._policy_hash = policy_hash
        self._parsers = parsers

    def _parser_version(self, media_type: str) -> str | None:
        """The parser version this run uses for ``media_type`` (None: no parser reads it)."""
        return self._parsers.version_for(media_type)

    def _wanted(self, media_type: str) -> tuple[str, ...]:
        return self._labels or DEFAULT_LABELS_BY_MEDIA_TYPE.get(media_type, ())

    def _reusable(
        self,
        raw: RawDocument,
        chunks: Sequence[Chunk],
        prints: Sequence[_Fingerprint],
        errored: bool,
    ) -> list[Chunk] | None:
        """The records to carry forward, or None when the document must be processed."""
        media_type = raw.media_type
        if errored or media_type is None or self._previous.policy_hash != self._policy_hash:
            return None
        version = self._parser_version(media_type)
        wanted = self._wanted(media_type)
        if version is None or not wanted:
            return None
        if not set(wanted) <= set(self._previous.labels_for(media_type)):
            return None  # a label the previous run did not apply: chunk under it now
        expected = (raw.content_hash, version, self._policy_hash)
        if any(p != expected for p in prints) or any(_fingerprint(c) != expected for c in chunks):
            return None
        carried = [c for c in chunks if c.chunker_version in wanted]
        if not carried:
            return None  # zero records cannot show that a chunker accepted the document
        return sorted(carried, key=lambda c: (c.chunker_version, c.position, c.chunk_id))

    def process(self, element: tuple[str, Mapping[str, Iterable[Any]]]) -> Iterator[Any]:
        _, grouped = element
        files: list[SourceFile] = list(grouped[_FILES])
        raws: list[RawDocument] = list(grouped[_RAW])
        chunks: list[Chunk] = list(grouped[_CHUNKS])
        prints: list[_Fingerprint] = list(grouped[_PRINTS])
        errored = any(True for _ in grouped[_ERRORS])
        known = bool(chunks or prints or errored)
        if not files:
            if known:
                yield from self._decided(DELETED)
        elif raws:  # else matched but not read (size limit, I/O): its read error row counts
            raw = raws[0]
            carried = self._reusable(raw, chunks, prints, errored) if known else None
            if carried is None:
                yield from self._decided(RECHUNKED if known else NEW)
                yield raw
            else:
                yield from self._decided(REUSED)
                yield from (pvalue.TaggedOutput(_CHUNKS, c) for c in carried)
                yield pvalue.TaggedOutput(_OUTCOMES, self._outcome(raw, carried))

    def _outcome(self, raw: RawDocument, carried: Sequence[Chunk]) -> DocumentOutcome:
        """What the manifest learns about a reused document (as ChunkDocuments reports it)."""
        media_type = raw.media_type or ""
        return DocumentOutcome(
            raw.source_uri,
            media_type,
            self._parser_version(media_type) or "",
            0,  # warnings are only known by parsing; a reused document reports none
            tuple(sorted(Counter(c.chunker_version for c in carried).items())),
        )

    @staticmethod
    def _decided(decision: str) -> Iterator[Any]:
        metrics.inc(metrics.keyed("incremental", decision))
        yield pvalue.TaggedOutput(_DECISIONS, decision)


class _CountDecisionsFn(beam.CombineFn):
    """Decision names -> the manifest's incremental counts (every decision, zeros included)."""

    def __init__(self, previous_output: str) -> None:
        self._previous_output = previous_output

    def create_accumulator(self) -> Counter[str]:
        return Counter()

    def add_input(self, acc: Counter[str], decision: str) -> Counter[str]:
        acc[decision] += 1
        return acc

    def merge_accumulators(self, accs: Iterable[Counter[str]]) -> Counter[str]:
        total: Counter[str] = Counter()
        for acc in accs:
            total.update(acc)
        return total

    def extract_output(self, acc: Counter[str]) -> dict[str, Any]:
        return {
            "previous_output": self._previous_output,
            "documents": {decision: acc[decision] for decision in DECISIONS},
        }


class ReusePrevious(beam.PTransform[Mapping[str, PCollection[Any]], dict[str, PCollection[Any]]]):
    """Split this run's documents into those to parse and records carried from PREV_OUTPUT.

    Input: a dict with ``documents`` (RawDocument) and ``files`` (SourceFile), as
    ``ReadCorpus`` gives them. Outputs (a dict): ``documents`` (RawDocuments to parse),
    ``chunks`` (carried Chunk records), ``outcomes`` (a DocumentOutcome per reused
    document, for the manifest) and ``counts`` (one dict: the manifest's ``incremental``
    section). ``labels``/``policy`` are this run's, as given to ``ChunkDocuments``.
    """

    def __init__(
        self,
        previous: PreviousRun,
        labels: Sequence[str] | None,
        policy: ChunkPolicy,
        parsers: ParserChoice | None = None,
    ) -> None:
        super().__init__()
        self._previous = previous
        self._parsers = parsers or ParserChoice()
        self._labels = run_labels(labels) if labels else None
        self._run_labels = run_labels(labels)
        self._policy_hash = policy.policy_hash

    def _read_previous(
        self, p: beam.Pipeline
    ) -> tuple[PCollection[Any], PCollection[Any], PCollection[Any]]:
        """(doc_id, Chunk) of this run's labels, (doc_id, fingerprint) of the others, errors."""
        chunks, prints = [], []
        for label in self._previous.labels:
            pattern = self._previous.chunk_pattern(label)
            if label in self._run_labels:
                chunks.append(
                    p
                    | f"Read previous {label} chunks" >> ReadFromParquet(pattern)
                    | f"Key previous {label} chunks" >> beam.Map(_keyed_chunk, label)
                )
            else:
                prints.append(
                    p
                    | f"Read previous {label} ids"
                    >> ReadFromParquet(pattern, columns=_FINGERPRINT_COLUMNS)
                    | f"Key previous {label} ids" >> beam.Map(_keyed_fingerprint)
                )
        errors = (
            p
            | "Read previous errors"
            >> ReadFromParquet(self._previous.errors_pattern, columns=["source_uri"])
            | "Key previous errors" >> beam.Map(lambda row: (doc_id(row["source_uri"]), True))
        )
        return (
            _flatten(p, chunks, "previous chunks"),
            _flatten(p, prints, "previous ids"),
            errors,
        )

    def expand(self, inputs: Mapping[str, PCollection[Any]]) -> dict[str, PCollection[Any]]:
        p = inputs["files"].pipeline
        chunks, prints, errors = self._read_previous(p)
        files = inputs["files"] | "Key files by doc_id" >> beam.Map(
            lambda f: (doc_id(f.source_uri), f)
        )
        raw = inputs["documents"] | "Key documents by doc_id" >> beam.Map(
            lambda d: (doc_id(d.source_uri), d)
        )
        decided = (
            {_FILES: files, _RAW: raw, _CHUNKS: chunks, _PRINTS: prints, _ERRORS: errors}
            | "Join with previous output" >> beam.CoGroupByKey()
            | "Decide what to reuse"
            >> beam.ParDo(
                _DecideFn(self._previous, self._labels, self._policy_hash, self._parsers)
            ).with_outputs(_CHUNKS, _OUTCOMES, _DECISIONS, main="documents")
        )
        counts = decided[_DECISIONS] | "Count decisions" >> beam.CombineGlobally(
            _CountDecisionsFn(self._previous.output)
        )
        return {
            "documents": decided.documents,
            "chunks": decided[_CHUNKS],
            "outcomes": decided[_OUTCOMES],
            "counts": counts,
        }


def _flatten(p: beam.Pipeline, parts: list[PCollection[Any]], what: str) -> PCollection[Any]:
    if not parts:
        empty: PCollection[Any] = p | f"No {what}" >> beam.Create([])
        return empty
    merged: PCollection[Any] = tuple(parts) | f"Merge {what}" >> beam.Flatten()
    return merged


@dataclass(frozen=True)
class Reuse:
    """What the pipeline wiring needs from the incremental step (a pass-through without it)."""

    documents: PCollection[RawDocument]
    chunks: PCollection[Chunk] | None = None
    outcomes: PCollection[DocumentOutcome] | None = None
    counts: PCollection[dict[str, Any]] | None = None

    def with_chunks(self, chunks: PCollection[Chunk]) -> PCollection[Chunk]:
        """Freshly made chunks plus the carried ones."""
        if self.chunks is None:
            return chunks
        merged: PCollection[Chunk] = (chunks, self.chunks) | "Add reused chunks" >> beam.Flatten()
        return merged

    def with_outcomes(self, outcomes: PCollection[DocumentOutcome]) -> PCollection[DocumentOutcome]:
        """Outcomes of parsed documents plus those of reused ones."""
        if self.outcomes is None:
            return outcomes
        merged: PCollection[DocumentOutcome] = (
            outcomes,
            self.outcomes,
        ) | "Add reused outcomes" >> beam.Flatten()
        return merged

    def manifest_inputs(self) -> dict[str, PCollection[Any]]:
        """Extra inputs of ``WriteManifest``: the incremental counts, when there are any."""
        return {MANIFEST_KEY: self.counts} if self.counts is not None else {}


def reuse_previous(
    previous: PreviousRun | None,
    read: Mapping[str, PCollection[Any]],
    labels: Sequence[str] | None,
    policy: ChunkPolicy,
    parsers: ParserChoice | None = None,
) -> Reuse:
    """Insert ``ReusePrevious`` after ``ReadCorpus`` when a previous output is given."""
    if previous is None:
        return Reuse(read["documents"])
    out = {"documents": read["documents"], "files": read["files"]} | (
        "Reuse previous output" >> ReusePrevious(previous, labels, policy, parsers)
    )
    return Reuse(out["documents"], out["chunks"], out["outcomes"], out["counts"])


def incremental_summary(manifest: Mapping[str, Any]) -> str | None:
    """One line for the run summary, or None for a full run."""
    section = manifest.get(MANIFEST_KEY)
    if not section:
        return None
    docs = section["documents"]
    return (
        f"  incremental (previous {section['previous_output']}): reused {docs[REUSED]}, "
        f"rechunked {docs[RECHUNKED]}, new {docs[NEW]}, deleted {docs[DELETED]}"
    )
