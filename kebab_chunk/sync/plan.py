"""What a sync must do: the output's chunks (from the documents table's chunk index) against
the store's digests. Pure functions; kebab_chunk/sync/engine.py does the reading and writing.

Which chunks an output offers (:func:`select`): the labels named, or without names the
output's only label, or else each document's default label for its media type (the labels
a run applies when none are named). A selection that would leave a chunked document with
no chunk in the store is refused rather than syncing part of the corpus.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE
from kebab_chunk.errors import UsageError
from kebab_chunk.output.records import DocumentRow, IndexEntry

__all__ = ["Plan", "Wanted", "plan", "select"]


@dataclass(frozen=True)
class Wanted:
    """One chunk the store must hold, as the chunk index lists it."""

    label: str
    content_digest: str
    record_digest: str


@dataclass(frozen=True)
class Plan:
    """The writes that make the store equal to the output (ids sorted)."""

    embed: tuple[str, ...]  # new ids, or ids whose content changed: vector + row
    metadata: tuple[str, ...]  # same content, other record: row without a new vector
    delete: tuple[str, ...]  # in the store, not in the output
    unchanged: int

    @property
    def empty(self) -> bool:
        return not (self.embed or self.metadata or self.delete)


def _labels_for(doc: DocumentRow, chosen: frozenset[str] | None, only: str | None) -> set[str]:
    if chosen is not None:
        return set(chosen)
    if only is not None:
        return {only}
    return set(DEFAULT_LABELS_BY_MEDIA_TYPE.get(doc.media_type or "", ()))


def select(
    documents: Iterable[DocumentRow],
    output_labels: Sequence[str],
    labels: Sequence[str] | None,
    where: str,
) -> tuple[tuple[str, ...], dict[str, Wanted]]:
    """(labels synced, chunk_id -> Wanted) of the output's documents rows.

    ``labels``: the labels to sync (None: the output's only label, else each document's
    default label); ``where`` names the output in errors.
    """
    present = sorted(output_labels)
    chosen: frozenset[str] | None = None
    if labels:
        unknown = sorted(set(labels) - set(present))
        if unknown:
            raise UsageError(
                f"{where} was not chunked with {', '.join(unknown)}; its labels are "
                f"{', '.join(present) or 'none'}, so pass one of them with --label."
            )
        chosen = frozenset(labels)
    only = present[0] if chosen is None and len(present) == 1 else None
    wanted: dict[str, Wanted] = {}
    used: set[str] = set()
    for doc in documents:
        take = _labels_for(doc, chosen, only)
        entries: list[IndexEntry] = [e for e in doc.chunk_index if e.label in take]
        if chosen is None and doc.chunk_index and not entries:
            raise UsageError(
                f"{where} has several labels ({', '.join(present)}) and none of "
                f"{doc.source_uri}'s is the default for {doc.media_type}; name the labels "
                "to sync with --label."
            )
        for entry in entries:
            wanted[entry.chunk_id] = Wanted(entry.label, entry.content_digest, entry.record_digest)
            used.add(entry.label)
    synced = tuple(sorted(chosen if chosen is not None else used))
    return synced, wanted


def plan(wanted: Mapping[str, Wanted], stored: Mapping[str, tuple[str, str]]) -> Plan:
    """Compare the output's chunks with the store's (chunk_id -> (content, record) digests)."""
    embed: list[str] = []
    metadata: list[str] = []
    for chunk_id, want in wanted.items():
        have = stored.get(chunk_id)
        if have is None or have[0] != want.content_digest:
            embed.append(chunk_id)
        elif have[1] != want.record_digest:
            metadata.append(chunk_id)
    delete = sorted(set(stored) - set(wanted))
    unchanged = len(wanted) - len(embed) - len(metadata)
    return Plan(tuple(sorted(embed)), tuple(sorted(metadata)), tuple(delete), unchanged)
