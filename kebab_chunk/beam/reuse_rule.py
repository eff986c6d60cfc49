"""The reuse rule of incremental runs (``--previous``, ``--update``), as pure functions.

A document's records in a previous output are folded into a :class:`Summary` (its
fingerprints, and per label how many records up to which ``position``);
:meth:`ReuseRule.decide` then says, from that summary, this run's bytes and options,
whether the document is ``reused``, ``rechunked``, ``new`` or ``deleted``
(docs/internals/versioning.md, "Incremental runs"). A reused document's records are carried in
groups keyed by :func:`carry_key` (at most ``CARRY_BUCKET`` records of one label each), so
no grouping grows with a document's chunk count; its documents-table facts (title, front
matter, warnings, pages, blocks) come from the previous documents table, so a reused
document needs its row there: without one (an output written before that table existed)
it is parsed again. Options outside labels, policy and parser versions that can change a
document's records (:data:`SHAPING_OPTIONS`, :data:`BUDGET_OPTIONS`) are compared from the
two manifests' ``options`` by :func:`options_allow_reuse`; when they do not allow reuse,
nothing is reused. ``kebab_chunk/beam/incremental.py`` (``--previous``) and
``kebab_chunk/beam/update.py`` (``--update``) wire this into the pipeline; this module
itself imports no Beam.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE
from kebab_chunk.elements import DocumentOutcome, RawDocument
from kebab_chunk.model import Chunk
from kebab_chunk.output.layout import CHUNKS_DIR, DOCUMENTS_DIR, ERRORS_DIR
from kebab_chunk.output.records import DocumentFacts
from kebab_chunk.output.schema import PARTITION_COLUMN
from kebab_chunk.parsers.registry import ParserChoice

__all__ = [
    "BUDGET_OPTIONS",
    "CARRY_BUCKET",
    "DECISIONS",
    "DELETED",
    "NEW",
    "RECHUNKED",
    "REUSED",
    "REUSE_OPTIONS",
    "SHAPING_OPTIONS",
    "BaseRow",
    "CarryKey",
    "Decision",
    "Fingerprint",
    "PreviousRun",
    "ReuseRule",
    "Seen",
    "Summary",
    "carry_key",
    "carry_keys",
    "options_allow_reuse",
    "options_block_reuse",
    "reuse_blocked",
]

REUSED, RECHUNKED, NEW, DELETED = "reused", "rechunked", "new", "deleted"
DECISIONS = (REUSED, RECHUNKED, NEW, DELETED)

Fingerprint = tuple[str, str, str]  # (content_hash, parser_version, policy_hash)
#: Most records of one label that one carry group holds.
CARRY_BUCKET = 1000
#: A carry group's key: (doc_id, label, position // CARRY_BUCKET).
CarryKey = tuple[str, str, int]
#: One previous record as the summary sees it: (label or None, fingerprint, position).
#: The label is None for records of labels this run does not apply (never carried).
Seen = tuple[str | None, Fingerprint, int]

#: Manifest ``options`` that shape a document's records beyond its bytes, labels, policy
#: and parser version: the parse limits refuse a document (blocks, pages) or flatten its
#: structure with a warning (nesting). Reuse needs the same values.
SHAPING_OPTIONS = ("max_blocks", "max_nesting", "max_pages")
#: Manifest ``options`` that only decide whether a document finishes on the machine at
#: hand (None: no limit). A record made within a budget is what a larger budget gives
#: too, so reuse needs each to be at least the previous run's (docs/internals/decisions.md,
#: "Issue 29.3"). ``max_file_bytes`` is neither: every run applies it while reading.
BUDGET_OPTIONS = ("chunk_timeout_s", "max_memory_mb", "parse_timeout_s")
REUSE_OPTIONS = SHAPING_OPTIONS + BUDGET_OPTIONS


def options_allow_reuse(previous: Mapping[str, Any], current: Mapping[str, Any]) -> bool:
    """Whether records made under the ``previous`` manifest options are what ``current``
    ones give: the same :data:`SHAPING_OPTIONS`, no smaller :data:`BUDGET_OPTIONS`. An
    option a manifest does not record (an older version) allows nothing."""
    return options_block_reuse(previous, current) is None


def options_block_reuse(previous: Mapping[str, Any], current: Mapping[str, Any]) -> str | None:
    """Why records made under the ``previous`` options cannot be reused under ``current``
    ones (a phrase for the run summary), or None when they can (:func:`options_allow_reuse`)."""
    for name in REUSE_OPTIONS:
        if name not in previous or name not in current:
            return f"the previous manifest records no {name} (an older version wrote it)"
    for name in SHAPING_OPTIONS:
        if previous[name] != current[name]:
            return f"{name} changed from {previous[name]} to {current[name]}"
    for name in BUDGET_OPTIONS:
        before, now = previous[name], current[name]
        if now is not None and (before is None or now < before):
            return f"{name} shrank from {before} to {now}"
    return None


@dataclass(frozen=True)
class Summary:
    """A document's previous records, folded: what the reuse rule needs, nothing more."""

    fingerprints: frozenset[Fingerprint]
    counts: tuple[tuple[str, int], ...]  # label -> records (run labels only)
    last_position: tuple[tuple[str, int], ...]  # label -> highest position

    @staticmethod
    def of(seen: Iterable[Seen]) -> Summary:
        fingerprints: set[Fingerprint] = set()
        counts: Counter[str] = Counter()
        last: dict[str, int] = {}
        for label, fingerprint, position in seen:
            fingerprints.add(fingerprint)
            if label is not None:
                counts[label] += 1
                last[label] = max(last.get(label, position), position)
        return Summary(
            frozenset(fingerprints), tuple(sorted(counts.items())), tuple(sorted(last.items()))
        )

    @staticmethod
    def merge(parts: Iterable[Summary]) -> Summary:
        fingerprints: set[Fingerprint] = set()
        counts: Counter[str] = Counter()
        last: dict[str, int] = {}
        for part in parts:
            fingerprints |= part.fingerprints
            counts.update(dict(part.counts))
            for label, position in part.last_position:
                last[label] = max(last.get(label, position), position)
        return Summary(
            frozenset(fingerprints), tuple(sorted(counts.items())), tuple(sorted(last.items()))
        )


def carry_keys(doc: str, summary: Summary, labels: Iterable[str]) -> list[CarryKey]:
    """Every carry group of ``labels`` that holds a record of document ``doc``."""
    last = dict(summary.last_position)
    return [
        (doc, label, b)
        for label in sorted(labels)
        if label in last
        for b in range(last[label] // CARRY_BUCKET + 1)
    ]


def carry_key(chunk: Chunk) -> CarryKey:
    return chunk.doc_id, chunk.chunker_version, chunk.position // CARRY_BUCKET


@dataclass(frozen=True)
class PreviousRun:
    """What the launching machine learned from PREV_OUTPUT's manifest."""

    output: str
    policy_hash: str
    labels: tuple[str, ...]  # the partitions it wrote
    requested: tuple[str, ...] | None  # its --labels, None for the defaults
    defaults_by_media_type: tuple[tuple[str, tuple[str, ...]], ...]
    #: False for an output written before the documents table existed: nothing is reused.
    has_documents: bool = True
    #: Its manifest's ``options`` that :func:`options_allow_reuse` compares (those recorded).
    options: tuple[tuple[str, Any], ...] = ()
    #: False for an output whose manifest records no digest of its part files (written by
    #: an older version): its records cannot be checked, so nothing is reused.
    verified: bool = True

    def labels_for(self, media_type: str) -> tuple[str, ...]:
        """The labels the previous run applied to documents of ``media_type``."""
        if self.requested:
            return self.requested
        return dict(self.defaults_by_media_type).get(media_type, ())

    def chunk_pattern(self, label: str) -> str:
        return f"{self.output}/{CHUNKS_DIR}/{PARTITION_COLUMN}={label}/part-*.parquet"

    @property
    def errors_pattern(self) -> str:
        return f"{self.output}/{ERRORS_DIR}/part-*.parquet"

    @property
    def documents_pattern(self) -> str:
        return f"{self.output}/{DOCUMENTS_DIR}/part-*.parquet"


@dataclass(frozen=True)
class BaseRow:
    """What an update needs of a base snapshot's documents row: the reuse rule's facts and
    the manifest's counts of a reused document (its rows stay where they are)."""

    media_type: str | None
    parser_version: str | None
    content_hash: str | None
    status: str
    errors: tuple[tuple[str, str], ...]
    chunks_by_label: tuple[tuple[str, int], ...]
    warnings: int  # how many

    #: The documents-table columns it is read from.
    COLUMNS = (
        "source_uri",
        "media_type",
        "parser_version",
        "content_hash",
        "status",
        "errors",
        "chunks_by_label",
        "warnings",
    )

    def values(self) -> tuple[Any, ...]:
        """Its fields as a plain tuple (``BaseRow(*values)`` rebuilds it): how it travels
        to the update's join, where a pickled dataclass costs its class path and field
        names per document (kebab_chunk/beam/update.py)."""
        return (
            self.media_type,
            self.parser_version,
            self.content_hash,
            self.status,
            self.errors,
            self.chunks_by_label,
            self.warnings,
        )

    @staticmethod
    def of(row: Mapping[str, Any]) -> BaseRow:
        """From a documents row as pyarrow's ``to_pylist`` gives it (those columns)."""
        return BaseRow(
            media_type=row["media_type"],
            parser_version=row["parser_version"],
            content_hash=row["content_hash"],
            status=str(row["status"]),
            errors=tuple((e["stage"], e["error_type"]) for e in row["errors"]),
            chunks_by_label=tuple((c["label"], c["count"]) for c in row["chunks_by_label"]),
            warnings=len(row["warnings"]),
        )


@dataclass(frozen=True)
class Decision:
    """What happens to one document: ``name`` is one of DECISIONS (None: no decision, a
    matched file that could not be read and already has its read error row);
    ``carried`` is, for a reused document, how many records it carries per label."""

    name: str | None
    carried: tuple[tuple[str, int], ...] = ()


def reuse_blocked(
    previous: PreviousRun, options: Mapping[str, Any], policy_hash: str
) -> str | None:
    """Why no document of ``previous`` can be reused by a run with these manifest
    ``options`` and chunk policy (a phrase the manifest and the run summary give), or None."""
    if not previous.verified:
        return "the previous output lists no part-file digests (an older version wrote it)"
    if previous.policy_hash != policy_hash:
        return "the chunk policy changed (another policy_hash)"
    return options_block_reuse(dict(previous.options), options)


class ReuseRule:
    """The reuse rule of an incremental run, as a pure function of what the join gathers."""

    def __init__(
        self,
        previous: PreviousRun,
        labels: tuple[str, ...] | None,
        policy_hash: str,
        parsers: ParserChoice,
        options: Mapping[str, Any],
    ) -> None:
        """``options``: this run's manifest ``options`` (at least :data:`REUSE_OPTIONS`)."""
        self._previous = previous
        self._labels = labels
        self._policy_hash = policy_hash
        self._parsers = parsers
        #: Why nothing at all can be reused (None: decided document by document).
        self.blocked = reuse_blocked(previous, options, policy_hash)
        self._any = self.blocked is None

    def parser_version(self, media_type: str) -> str | None:
        """The parser version this run uses for ``media_type`` (None: no parser reads it)."""
        return self._parsers.version_for(media_type)

    def _wanted(self, media_type: str) -> tuple[str, ...]:
        return self._labels or DEFAULT_LABELS_BY_MEDIA_TYPE.get(media_type, ())

    def _reusable(
        self,
        raw: RawDocument,
        summary: Summary | None,
        errored: bool,
        facts: DocumentFacts | None,
    ) -> dict[str, int] | None:
        """Records to carry per label, or None when the document must be processed."""
        media_type = raw.media_type
        if summary is None or errored or media_type is None or not self._any:
            return None  # (not _any: other parse limits, smaller budgets, unverified files)
        if self._previous.policy_hash != self._policy_hash:
            return None
        version = self.parser_version(media_type)
        wanted = self._wanted(media_type)
        if version is None or not wanted:
            return None
        if facts is None or (facts.content_hash, facts.parser_version) != (
            raw.content_hash,
            version,
        ):
            return None  # no documents row to carry (or one of other bytes): parse again
        if not set(wanted) <= set(self._previous.labels_for(media_type)):
            return None  # a label the previous run did not apply: chunk under it now
        if summary.fingerprints != {(raw.content_hash, version, self._policy_hash)}:
            return None  # some previous record (of any label) came from other bytes or rules
        carried = {label: n for label, n in summary.counts if label in wanted}
        if not carried:
            return None  # zero records cannot show that a chunker accepted the document
        return carried

    def decide(
        self,
        matched: bool,
        raw: RawDocument | None,
        summary: Summary | None,
        errored: bool,
        facts: DocumentFacts | None = None,
    ) -> Decision:
        """The decision for one document: ``matched`` by this run's input, read as ``raw``
        (None when reading failed), with its previous records folded into ``summary``
        (None: it had none), whether the previous run has an error row for it, and its
        facts from the previous documents table (None: no row there, so not reusable)."""
        known = bool(summary or errored)
        if not matched:
            return Decision(DELETED if known else None)
        if raw is None:
            return Decision(None)  # matched but not read: its read error row counts
        carried = self._reusable(raw, summary, errored, facts) if known else None
        if carried is None:
            return Decision(RECHUNKED if known else NEW)
        return Decision(REUSED, tuple(sorted(carried.items())))

    def decide_row(
        self, matched: bool, seen: tuple[str | None, str] | None, row: BaseRow | None
    ) -> Decision:
        """The decision for one document of an update (``run --update``), taken from the
        base snapshot's documents row alone (no chunk record is read): ``matched`` by this
        run's input, ``seen`` = (media type, content hash) when its bytes were read (None:
        reading failed or it was skipped), ``row`` its live documents row (None: new).

        A row is reused when it says the same bytes went through this run's parser for
        the media type into chunks of exactly the labels this run applies (a label the
        row has that this run does not would leave stale records behind), with no error,
        and nothing run-wide blocks reuse (:func:`reuse_blocked`). Every other row is
        deleted from the new snapshot by its ``source_uri`` (the caller's job)."""
        if not matched:
            return Decision(DELETED if row is not None else None)
        if seen is None:
            return Decision(None)  # its read error row or skip record counts
        if row is None:
            return Decision(NEW)
        carried = self._reusable_row(seen, row)
        if carried is None:
            return Decision(RECHUNKED)
        return Decision(REUSED, tuple(sorted(carried.items())))

    def _reusable_row(self, seen: tuple[str | None, str], row: BaseRow) -> dict[str, int] | None:
        media_type, content_hash = seen
        if not self._any or media_type is None or row.status != "chunked" or row.errors:
            return None
        version = self.parser_version(media_type)
        wanted = self._wanted(media_type)
        if version is None or not wanted:
            return None
        if (row.media_type, row.parser_version, row.content_hash) != (
            media_type,
            version,
            content_hash,
        ):
            return None
        if not set(wanted) <= set(self._previous.labels_for(media_type)):
            return None  # a label the base did not apply: chunk under it now
        carried = {label: n for label, n in row.chunks_by_label if n}
        if not carried or not set(carried) <= set(wanted):
            return None
        return carried

    @staticmethod
    def outcome(
        raw: RawDocument, carried: tuple[tuple[str, int], ...], facts: DocumentFacts
    ) -> DocumentOutcome:
        """What the manifest and the documents table learn about a reused document: the
        facts its previous documents row holds (the same a parse gives, warnings included,
        since :meth:`decide` checked bytes and parser version) and the carried counts."""
        return DocumentOutcome(raw.source_uri, facts, carried)
