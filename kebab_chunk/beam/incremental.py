# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""Incremental runs (``--previous PREV_OUTPUT``): carry forward what did not change.

Every file is still read (its ``content_hash`` is the blake3 of its bytes, so the bytes
must be seen), but a document is parsed and chunked again only when its records in
PREV_OUTPUT could differ from a fresh run's. ``ReusePrevious`` sits between
``ReadCorpus`` and ``ParseDocuments``: it reads PREV_OUTPUT's chunk partitions and error
rows with Beam's Parquet IO, folds each document's previous records into one small
summary (its fingerprints and, per label, how many records up to which ``position``),
joins that with this run's files and bytes by ``doc_id`` (``CoGroupByKey``) and decides
per document:

* ``reused`` — the previous records of every label this run applies to the document are
  emitted as they are; the document never reaches the parser. Conditions: the two runs'
  parse limits are equal and no budget shrank (``options_allow_reuse``; else nothing is
  reused); PREV_OUTPUT has no error row for it; it has at least one record under those
  labels; every previous record of the document (any label) has this file's
  ``content_hash``, the ``parser_version`` of the parser registered for its media type (a
  class attribute, known without parsing) and this run's ``policy_hash``; and the
  previous run applied each of those labels to the media type (from its manifest), so a
  label without records there produced none or did not accept the document, exactly as
  it would now.
* ``rechunked`` — known to PREV_OUTPUT but not reusable (changed bytes, a new parser or
  chunker label, another policy or parse limits, a previous error): parsed and chunked as
  in a full run.
* ``new`` — no record and no error row in PREV_OUTPUT: parsed and chunked. (A document
  that gave zero chunks and no error has no chunk record to reuse, so it counts as new.)
* ``deleted`` — in PREV_OUTPUT but no longer matched: its records are simply not carried.

A reused document's row of the documents table is rebuilt from PREV_OUTPUT's documents
table (read by the first join): the parse facts (title, front matter, warnings, pages,
blocks) of the same bytes under the same parser version, so it equals a full run's row;
its ``chunk_index``, as in a full run, comes from the records WriteChunks writes, the
carried ones included.
A PREV_OUTPUT without a documents table (written by an older version) reuses nothing:
every document is parsed again, and the next run can reuse from this one.

The records of a reused document are then carried by a second join, keyed by
(``doc_id``, label, ``position // CARRY_BUCKET``): no grouping ever holds more than
``CARRY_BUCKET`` records of one label, so a document with 100,000 chunks does not become
one element that a runner must hold in memory (Flink materialises each group in its
JVM heap; docs/internals/decisions.md, "Incremental joins carry reused records in groups").

Before any of this, ``load_previous`` checks on the launching machine that PREV_OUTPUT's
part files are exactly those its manifest lists, each of the listed size and blake3
digest (an interrupted copy or an edited record is refused in one sentence), so carried
records are the ones that run wrote. A manifest without digests (an older version)
reuses nothing. Because chunk records are pure functions of (bytes, path, parser, label,
policy, parse limits), the output is byte-identical to a full run's. The manifest gains
an ``incremental`` section with the four counts; counters ``incremental[<decision>]``
mirror it.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.io.parquetio import ReadFromParquet
from apache_beam.pvalue import PCollection

from kebab_chunk.beam import metrics
from kebab_chunk.beam.chunk import run_labels
from kebab_chunk.beam.locations import locations_overlap
from kebab_chunk.beam.reuse_rule import (
    CARRY_BUCKET,
    DECISIONS,
    DELETED,
    NEW,
    RECHUNKED,
    REUSE_OPTIONS,
    REUSED,
    CarryKey,
    PreviousRun,
    ReuseRule,
    Seen,
    Summary,
    carry_key,
    carry_keys,
)
from kebab_chunk.elements import DocumentOutcome, RawDocument
from kebab_chunk.errors import OutputDirError
from kebab_chunk.model import Chunk, ChunkPolicy
from kebab_chunk.model.ids import doc_id
from kebab_chunk.output.digest import digest_stream
from kebab_chunk.output.finished import open_output
from kebab_chunk.output.layout import CHUNKS_DIR, DOCUMENTS_DIR, ERRORS_DIR
from kebab_chunk.output.records import DocumentFacts
from kebab_chunk.output.schema import PARTITION_COLUMN, row_to_chunk, row_to_document
from kebab_chunk.output.snapshots import snapshot_of
from kebab_chunk.parsers.registry import ParserChoice

__all__ = [
    "CARRY_BUCKET",
    "DECISIONS",
    "DELETED",
    "NEW",
    "RECHUNKED",
    "REUSED",
    "PreviousRun",
    "Reuse",
    "ReusePrevious",
    "Summary",
    "carry_key",
    "carry_keys",
    "incremental_summary",
    "load_previous",
    "reuse_previous",
]

#: The manifest key of the incremental section (absent from full runs).
MANIFEST_KEY = "incremental"
#: Key of the incremental section saying why nothing could be reused (absent otherwise).
NOTHING_REUSED = "nothing_reused_because"
_FINGERPRINT_COLUMNS = ["doc_id", "content_hash", "parser_version", "policy_hash", "position"]
_FILES, _RAW, _SUMMARY, _ERRORS, _DOCS = "files", "raw", "summary", "errors", "documents"
_CHUNKS, _CARRY, _OUTCOMES, _DECISIONS = "chunks", "carry", "outcomes", "decisions"


class _SummariseFn(beam.CombineFn):
    """Per ``doc_id``: previous records (as ``Seen``) -> one ``Summary`` (combiner-lifted,
    so each worker folds its share before the shuffle)."""

    def create_accumulator(self) -> Summary:
        return Summary.of(())

    def add_input(self, acc: Summary, seen: Seen) -> Summary:
        return Summary.merge((acc, Summary.of((seen,))))

    def add_inputs(self, acc: Summary, elements: Iterable[Seen]) -> Summary:
        return Summary.merge((acc, Summary.of(elements)))

    def merge_accumulators(self, accs: Iterable[Summary]) -> Summary:
        return Summary.merge(accs)

    def extract_output(self, acc: Summary) -> Summary:
        return acc


def load_previous(previous: str, *, output: str) -> PreviousRun:
    """Check ``--previous`` on the launching machine; one-sentence OutputDirError if unusable.

    It must be a finished output (manifest present, same schema version) whose part files
    are exactly those its manifest lists, each of the listed size and blake3 digest (so
    no carried record was changed after its run wrote it), and must not overlap
    ``--output``, which a run may delete. Every part file is read once here to hash it.
    """
    path, manifest = open_output(previous, "--previous", remedy="run without --previous")
    if snapshot_of(manifest) > 1:  # its folders hold other snapshots' files and deleted rows
        raise OutputDirError(
            f"--previous {previous!r} is an updated output (snapshot {snapshot_of(manifest)}), "
            "whose folders this mode cannot read; update it in place with run --update "
            "--output, or pass a plain copy made by kebab-chunk export as --previous."
        )
    if locations_overlap(path, output):  # symlinks resolved: a link must not hide it
        raise OutputDirError(
            f"--previous {previous!r} and --output {output!r} overlap; write each run to its "
            "own directory (e.g. runs/<date>/) and pass the last one as --previous."
        )
    try:
        chunkers = manifest["chunkers"]
        options = manifest["options"]
        run = PreviousRun(
            output=path,
            policy_hash=str(manifest["policy_hash"]),
            labels=tuple(str(label) for label in chunkers["labels"]),
            requested=tuple(options["chunkers"]) if options["chunkers"] else None,
            defaults_by_media_type=tuple(
                (str(k), tuple(v)) for k, v in sorted(chunkers["defaults_by_media_type"].items())
            ),
            options=tuple((k, options[k]) for k in REUSE_OPTIONS if k in options),
        )
        listed = {
            str(entry["path"]): entry
            for kind in (CHUNKS_DIR, DOCUMENTS_DIR, ERRORS_DIR)
            for entry in manifest.get("outputs", {}).get(kind) or ()
        }
    except (KeyError, TypeError, AttributeError) as exc:
        raise OutputDirError(
            f"--previous {previous!r} has a manifest.json without {exc}; point at the output "
            "of a kebab-chunk run of this version."
        ) from None
    # Outputs of older versions have no documents table or no digests: nothing is reused.
    has_documents = any(p.startswith(DOCUMENTS_DIR + "/") for p in listed)
    verified = bool(listed) and all("bytes" in e and "blake3" in e for e in listed.values())
    run = dataclasses.replace(run, has_documents=has_documents, verified=verified)
    # open_output checked that the part files are exactly the listed ones, of the listed
    # sizes and row counts; what it cannot see cheaply is a changed byte.
    if verified:
        _check_digests(previous, path, listed)
    return run


def _damaged(previous: str, what: str) -> OutputDirError:
    return OutputDirError(
        f"--previous {previous!r} {what}; the output is damaged or was changed after its run "
        "wrote it, so run without --previous."
    )


def _check_digests(previous: str, path: str, listed: Mapping[str, Mapping[str, Any]]) -> None:
    """Every listed file's bytes hash to the blake3 digest its manifest lists."""
    for relative, entry in sorted(listed.items()):
        with FileSystems.open(
            f"{path}/{relative}", compression_type=CompressionTypes.UNCOMPRESSED
        ) as f:
            _, digest = digest_stream(f)
        if digest != entry["blake3"]:
            raise _damaged(
                previous,
                f"has {relative} whose bytes differ from the blake3 digest its manifest lists",
            )


def _seen(row: dict[str, Any], label: str | None) -> tuple[str, Seen]:
    fingerprint = (str(row["content_hash"]), str(row["parser_version"]), str(row["policy_hash"]))
    return str(row["doc_id"]), (label, fingerprint, int(row["position"]))


def _keyed_facts(row: dict[str, Any]) -> Iterator[tuple[str, DocumentFacts]]:
    """A previous documents row as (doc_id, facts), for the rows of parsed documents."""
    facts = row_to_document(row).facts()
    if facts is not None:
        yield facts.doc_id, facts


def _keyed_chunk(row: dict[str, Any], label: str) -> tuple[CarryKey, Chunk]:
    chunk = row_to_chunk({**row, PARTITION_COLUMN: label})
    return carry_key(chunk), chunk


class _CarryFn(beam.DoFn):
    """One carry group: its records leave when the document was reused."""

    def process(self, element: tuple[CarryKey, Mapping[str, Iterable[Any]]]) -> Iterator[Chunk]:
        _, grouped = element
        if any(True for _ in grouped[_CARRY]):
            yield from grouped[_CHUNKS]


class _DecideFn(beam.DoFn):
    """One decision per document (``ReuseRule``); carry keys of reused documents, their
    outcomes and the documents to parse leave separately."""

    def __init__(self, rule: ReuseRule) -> None:
        self._rule = rule

    def process(self, element: tuple[str, Mapping[str, Iterable[Any]]]) -> Iterator[Any]:
        doc, grouped = element
        raws: list[RawDocument] = list(grouped[_RAW])
        summaries: list[Summary] = list(grouped[_SUMMARY])
        summary = Summary.merge(summaries) if summaries else None
        facts: list[DocumentFacts] = list(grouped[_DOCS])
        decision = self._rule.decide(
            matched=any(True for _ in grouped[_FILES]),
            raw=raws[0] if raws else None,
            summary=summary,
            errored=any(True for _ in grouped[_ERRORS]),
            facts=facts[0] if len(facts) == 1 else None,
        )
        if decision.name is None:
            return
        metrics.inc(metrics.keyed("incremental", decision.name))
        yield pvalue.TaggedOutput(_DECISIONS, decision.name)
        if decision.name in (RECHUNKED, NEW):
            yield raws[0]
        elif decision.name == REUSED and summary is not None:
            for key in carry_keys(doc, summary, dict(decision.carried)):
                yield pvalue.TaggedOutput(_CARRY, (key, True))
            outcome = self._rule.outcome(raws[0], decision.carried, facts[0])
            yield pvalue.TaggedOutput(_OUTCOMES, outcome)


class _CountDecisionsFn(beam.CombineFn):
    """Decision names -> the manifest's incremental counts (every decision, zeros included)."""

    def __init__(self, previous_output: str, blocked: str | None) -> None:
        self._previous_output = previous_output
        self._blocked = blocked

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
        counts: dict[str, Any] = {
            "previous_output": self._previous_output,
            "documents": {decision: acc[decision] for decision in DECISIONS},
        }
        if self._blocked is not None:
            counts[NOTHING_REUSED] = self._blocked
        return counts


class ReusePrevious(beam.PTransform[Mapping[str, PCollection[Any]], dict[str, PCollection[Any]]]):
    """Split this run's documents into those to parse and records carried from PREV_OUTPUT.

    Input: a dict with ``documents`` (RawDocument) and ``files`` (SourceFile), as
    ``ReadCorpus`` gives them. Outputs (a dict): ``documents`` (RawDocuments to parse),
    ``chunks`` (carried Chunk records), ``outcomes`` (a DocumentOutcome per reused
    document, for the manifest) and ``counts`` (one dict: the manifest's ``incremental``
    section). ``labels``/``policy`` are this run's, as given to ``ChunkDocuments``;
    ``options`` this run's manifest ``options`` (the parse limits and budgets the reuse
    rule compares with the previous run's).
    """

    def __init__(
        self,
        previous: PreviousRun,
        labels: Sequence[str] | None,
        policy: ChunkPolicy,
        parsers: ParserChoice | None = None,
        *,
        options: Mapping[str, Any],
    ) -> None:
        super().__init__()
        self._previous = previous
        self._options = dict(options)
        self._parsers = parsers or ParserChoice()
        self._labels = run_labels(labels) if labels else None
        self._run_labels = run_labels(labels)
        self._policy_hash = policy.policy_hash

    def _read_previous(
        self, p: beam.Pipeline
    ) -> tuple[PCollection[Any], PCollection[Any], PCollection[Any], PCollection[Any]]:
        """(carry key, Chunk) of this run's labels, (doc_id, Summary) of every previous
        document, (doc_id, True) per previous error row and (doc_id, DocumentFacts) per
        previous documents row of a parsed document."""
        chunks, seen = [], []
        for label in self._previous.labels:
            pattern = self._previous.chunk_pattern(label)
            run_label = label if label in self._run_labels else None
            seen.append(
                p
                | f"Read previous {label} fingerprints"
                >> ReadFromParquet(pattern, columns=_FINGERPRINT_COLUMNS)
                | f"Fingerprint previous {label}" >> beam.Map(_seen, run_label)
            )
            if run_label is not None:
                chunks.append(
                    p
                    | f"Read previous {label} chunks" >> ReadFromParquet(pattern)
                    | f"Key previous {label} chunks" >> beam.Map(_keyed_chunk, label)
                )
        summaries = _flatten(p, seen, "previous fingerprints") | (
            "Summarise previous documents" >> beam.CombinePerKey(_SummariseFn())
        )
        errors = (
            p
            | "Read previous errors"
            >> ReadFromParquet(self._previous.errors_pattern, columns=["source_uri"])
            | "Key previous errors" >> beam.Map(lambda row: (doc_id(row["source_uri"]), True))
        )
        documents = []
        if self._previous.has_documents:
            documents.append(
                p
                | "Read previous documents" >> ReadFromParquet(self._previous.documents_pattern)
                | "Key previous documents" >> beam.FlatMap(_keyed_facts)
            )
        facts = _flatten(p, documents, "previous documents")
        return _flatten(p, chunks, "previous chunks"), summaries, errors, facts

    def expand(self, inputs: Mapping[str, PCollection[Any]]) -> dict[str, PCollection[Any]]:
        p = inputs["files"].pipeline
        chunks, summaries, errors, facts = self._read_previous(p)
        files = inputs["files"] | "Key files by doc_id" >> beam.Map(
            lambda f: (doc_id(f.source_uri), f)
        )
        raw = inputs["documents"] | "Key documents by doc_id" >> beam.Map(
            lambda d: (doc_id(d.source_uri), d)
        )
        rule = ReuseRule(
            self._previous, self._labels, self._policy_hash, self._parsers, self._options
        )
        decided = (
            {_FILES: files, _RAW: raw, _SUMMARY: summaries, _ERRORS: errors, _DOCS: facts}
            | "Join with previous output" >> beam.CoGroupByKey()
            | "Decide what to reuse"
            >> beam.ParDo(_DecideFn(rule)).with_outputs(
                _CARRY, _OUTCOMES, _DECISIONS, main="documents"
            )
        )
        carried = (
            {_CARRY: decided[_CARRY], _CHUNKS: chunks}
            | "Join reused documents with their records" >> beam.CoGroupByKey()
            | "Carry reused records" >> beam.ParDo(_CarryFn())
        )
        counts = decided[_DECISIONS] | "Count decisions" >> beam.CombineGlobally(
            _CountDecisionsFn(self._previous.output, rule.blocked)
        )
        return {
            "documents": decided.documents,
            "chunks": carried,
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

    def with_chunks(self, chunks: PCollection[Chunk]) -> tuple[PCollection[Chunk], ...]:
        """Freshly made chunks and the carried ones, as separate PCollections for
        ``WriteChunks`` (which spills each where it is made, rather than merging them first:
        an in-memory runner would hold every chunk of such a merge at once)."""
        if self.chunks is None:
            return (chunks,)
        return (chunks, self.chunks)

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
    *,
    options: Mapping[str, Any],
) -> Reuse:
    """Insert ``ReusePrevious`` after ``ReadCorpus`` when a previous output is given;
    ``options`` is this run's manifest ``options``."""
    if previous is None:
        return Reuse(read["documents"])
    out = {"documents": read["documents"], "files": read["files"]} | (
        "Reuse previous output" >> ReusePrevious(previous, labels, policy, parsers, options=options)
    )
    return Reuse(out["documents"], out["chunks"], out["outcomes"], out["counts"])


def incremental_summary(manifest: Mapping[str, Any]) -> str | None:
    """One line for the run summary, or None for a full run."""
    section = manifest.get(MANIFEST_KEY)
    if not section:
        return None
    docs = section["documents"]
    line = (
        f"  incremental (previous {section['previous_output']}): reused {docs[REUSED]}, "
        f"rechunked {docs[RECHUNKED]}, new {docs[NEW]}, deleted {docs[DELETED]}"
    )
    if reason := section.get(NOTHING_REUSED):
        line += f"; nothing could be reused: {reason}"
    return line
