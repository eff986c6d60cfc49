"""``kebab-chunk diff OLD NEW``: what changed between two pipeline outputs, per chunker label.

Chunk ids are content-addressed, so comparing two outputs is a join on
``(chunker_version, chunk_id)``. Per label it reports:

* ``added`` / ``removed`` — ids only in NEW / only in OLD;
* ``unchanged`` — ids in both whose embedded content (``text``, ``heading_path``,
  ``captions``, ``token_estimate``) is the same;
* ``modified`` — ids in both whose embedded content differs (possible for chunkers whose
  id does not cover the heading context, e.g. a renamed heading above a ``hybrid-v1``
  chunk): these must be re-embedded too;
* ``relocated`` — unchanged ids whose other fields moved (``position``, ``source_spans``,
  ``content_hash``, ...): a metadata update in the vector store, no new embedding;
* ``documents_affected`` — documents with an added, removed or modified chunk;
* ``reembed_tokens`` — the ``token_estimate`` sum of added and modified chunks, i.e. the
  volume a re-embedding job has to pay for (``added_tokens`` is the added part alone);
  ``reembed_chunks`` is their number;
* ``ideal_reembed_chunks`` / ``ideal_reembed_tokens`` — what an ideal chunker would have
  re-embedded: only the NEW chunks that overlap the edited characters of each changed
  document or sit under a heading path it did not have (:func:`ideal_reembed`), every
  chunk of a document only in NEW, nothing for a document only in OLD. A changed document
  whose chunks are not exact slices of its source (so its edited characters cannot be
  found) counts all its chunks to re-embed, and ``ideal_note`` says so; when no changed
  document can be located the ideal is ``None``.

This module reads Parquet with pyarrow only (no pipeline runs); both outputs are first
checked by :func:`kebab_chunk.output.finished.open_output`, as every reader's are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow.compute as pc

from kebab_chunk._quote import safe_text
from kebab_chunk.errors import OutputDirError
from kebab_chunk.output.chunk_index import CONTENT_FIELDS
from kebab_chunk.output.finished import open_output
from kebab_chunk.output.layout import CHUNKS_DIR
from kebab_chunk.output.reader import latest_manifest, read_chunks
from kebab_chunk.output.schema import PARTITION_COLUMN
from kebab_chunk.output.snapshots import snapshot_of

__all__ = [
    "DIFF_FORMAT",
    "IdealReembed",
    "LabelDiff",
    "OutputDiff",
    "OutputDirError",
    "diff_outputs",
    "format_diff",
    "ideal_reembed",
    "label_partitions",
]

#: The version of the ``diff --json`` document (docs/guide/diff-json.md); a new field keeps it,
#: a renamed, removed or re-typed one bumps it.
DIFF_FORMAT = "kebab-chunk-diff-v1"

#: The embedded content: the fields the documents table's ``content_digest`` covers.
_CONTENT = CONTENT_FIELDS
_METADATA = (
    "doc_id",
    "source_uri",
    "position",
    "source_spans",
    "content_hash",
    "parser_version",
    "policy_hash",
)
_COLUMNS = ("chunk_id", *_CONTENT, *_METADATA)
#: How many affected documents the text report names before "and N more".
_LISTED = 10


def label_partitions(path: str, manifest: Mapping[str, Any] | None = None) -> list[str]:
    """The labels with a ``chunks/chunker_version=<label>/`` partition, sorted: those whose
    files ``manifest`` lists (None: the output's latest snapshot)."""
    listing = manifest if manifest is not None else (latest_manifest(path) or {"outputs": {}})
    prefix = f"{CHUNKS_DIR}/{PARTITION_COLUMN}="
    return sorted(
        {
            str(entry["path"])[len(prefix) :].split("/", 1)[0]
            for entry in listing["outputs"].get(CHUNKS_DIR) or ()
            if str(entry["path"]).startswith(prefix)
        }
    )


def _read_label(path: str, manifest: Mapping[str, Any], label: str) -> dict[str, dict[str, Any]]:
    """chunk_id -> row (the compared columns) of one label partition."""
    table = read_chunks(path, columns=[*_COLUMNS, PARTITION_COLUMN], manifest=manifest)
    table = table.filter(pc.field(PARTITION_COLUMN) == label).select(list(_COLUMNS))
    return {str(row["chunk_id"]): row for row in table.to_pylist()}


@dataclass(frozen=True)
class LabelDiff:
    """The comparison of one label's partition in OLD and NEW."""

    label: str
    status: str  # "both", "only_old" or "only_new"
    added: int
    removed: int
    unchanged: int
    modified: int
    relocated: int
    documents_affected: int
    added_tokens: int
    reembed_tokens: int
    reembed_chunks: int = 0
    ideal_reembed_chunks: int | None = None
    ideal_reembed_tokens: int | None = None
    ideal_note: str = ""
    affected_sources: list[str] = field(default_factory=list)
    added_ids: list[str] = field(default_factory=list)
    removed_ids: list[str] = field(default_factory=list)
    modified_ids: list[str] = field(default_factory=list)
    relocated_ids: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed or self.modified or self.relocated)


@dataclass(frozen=True)
class OutputDiff:
    """Every label of either output, sorted by label."""

    old: str
    new: str
    labels: list[LabelDiff]
    old_snapshot: int = 1
    new_snapshot: int = 1

    @property
    def changed(self) -> bool:
        return any(d.changed for d in self.labels)

    def to_json(self) -> dict[str, Any]:
        totals = {
            key: sum(getattr(d, key) for d in self.labels)
            for key in (
                "added",
                "removed",
                "unchanged",
                "modified",
                "relocated",
                "documents_affected",
                "added_tokens",
                "reembed_tokens",
                "reembed_chunks",
            )
        }
        return {
            "format": DIFF_FORMAT,
            "old": self.old,
            "new": self.new,
            "old_snapshot": self.old_snapshot,
            "new_snapshot": self.new_snapshot,
            "changed": self.changed,
            "totals": totals,
            "labels": {
                d.label: {k: v for k, v in asdict(d).items() if k != "label"} for d in self.labels
            },
        }


def compare_label(
    label: str,
    old: Mapping[str, Mapping[str, Any]],
    new: Mapping[str, Mapping[str, Any]],
    status: str = "both",
) -> LabelDiff:
    """Compare one label's rows (chunk_id -> row) of two outputs; pure."""
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    modified: list[str] = []
    relocated: list[str] = []
    for chunk_id in sorted(set(old) & set(new)):
        before, after = old[chunk_id], new[chunk_id]
        if any(before[c] != after[c] for c in _CONTENT):
            modified.append(chunk_id)
        elif any(before[c] != after[c] for c in _METADATA):
            relocated.append(chunk_id)
    affected = _sources(new, [*added, *modified]) | _sources(old, removed)
    added_tokens = sum(int(new[i]["token_estimate"]) for i in added)
    ideal = ideal_reembed(old, new, {*added, *modified})
    return LabelDiff(
        label=label,
        status=status,
        added=len(added),
        removed=len(removed),
        unchanged=len(set(old) & set(new)) - len(modified),
        modified=len(modified),
        relocated=len(relocated),
        documents_affected=len(affected),
        added_tokens=added_tokens,
        reembed_tokens=added_tokens + sum(int(new[i]["token_estimate"]) for i in modified),
        reembed_chunks=len(added) + len(modified),
        ideal_reembed_chunks=ideal.chunks,
        ideal_reembed_tokens=ideal.tokens,
        ideal_note=ideal.note,
        affected_sources=sorted(affected),
        added_ids=added,
        removed_ids=removed,
        modified_ids=modified,
        relocated_ids=relocated,
    )


def _reembed_lines(d: LabelDiff) -> list[str]:
    """Chunks to re-embed against the ideal (or why there is no ideal), indented."""
    actual = f"    re-embed {d.reembed_chunks} chunks ({d.reembed_tokens} tokens)"
    if d.ideal_reembed_chunks is None:
        return [f"{actual}; ideal not computed: {d.ideal_note}"]
    lines = [
        f"{actual}; ideal {d.ideal_reembed_chunks} chunks ({d.ideal_reembed_tokens} tokens), "
        "re-embedding only chunks that overlap the edited text"
    ]
    if d.ideal_note:
        lines.append(f"    note: {d.ideal_note}")
    return lines


def _sources(rows: Mapping[str, Mapping[str, Any]], ids: Iterable[str]) -> set[str]:
    return {str(rows[i]["source_uri"]) for i in ids}


@dataclass(frozen=True)
class IdealReembed:
    """What re-embedding only the chunks that overlap the edited characters would cost;
    ``chunks`` and ``tokens`` are None, with ``note`` saying why, when it cannot be told."""

    chunks: int | None
    tokens: int | None
    note: str = ""


def _hull(row: Mapping[str, Any]) -> tuple[int, int] | None:
    """The source characters a chunk covers (first span start to last span end), or None
    when a span is not a ``lines`` span (PDF pages, DOCX elements: no one source text)."""
    spans = row["source_spans"]
    if not spans or any(span["kind"] != "lines" for span in spans):
        return None
    return (
        min(int(span["char_start"]) for span in spans),
        max(int(span["char_end"]) for span in spans),
    )


@dataclass(frozen=True)
class _Located:
    """One document's characters as its chunks pin them down (see :func:`_locate`)."""

    chars: list[object]
    opaque: int  # chunks located as whole units (their text is not their source slice)


def _locate(rows: Iterable[Mapping[str, Any]]) -> _Located | None:
    """The characters of one document that its chunks pin down, or None when they cannot.

    A chunk whose text is as long as the range its spans cover is an exact slice: its
    characters are laid there. A chunk whose text is not (an image reference's alt text,
    rendered HTML) is laid over the positions no exact chunk holds as ``(text, offset)``
    markers, so it compares equal only to the same text at the same place. Positions no
    chunk covers hold None. None is returned when a span is not a ``lines`` span, when no
    chunk is an exact slice, or when two exact chunks disagree on a character.
    """
    exact: list[tuple[int, str]] = []
    opaque: list[tuple[int, int, str]] = []
    for row in rows:
        hull = _hull(row)
        if hull is None:
            return None
        text = str(row["text"])
        if len(text) == hull[1] - hull[0]:
            exact.append((hull[0], text))
        else:
            opaque.append((hull[0], hull[1], text))
    if not exact:
        return None
    size = max([lo + len(t) for lo, t in exact] + [hi for _, hi, _ in opaque])
    chars: list[object] = [None] * size
    for lo, text in exact:
        known = chars[lo : lo + len(text)]
        if any(c is not None and c != t for c, t in zip(known, text, strict=True)):
            return None
        chars[lo : lo + len(text)] = text
    for lo, hi, text in opaque:
        for at in range(lo, hi):
            if chars[at] is None:
                chars[at] = (text, at - lo)
    return _Located(chars, len(opaque))


def _edited_range(old: list[object], new: list[object]) -> tuple[int, int]:
    """The characters of NEW that differ from OLD, as one range: everything between their
    common prefix and common suffix (empty when the edit only removed characters)."""
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    return prefix, len(new) - suffix


def _overlaps(hull: tuple[int, int], start: int, end: int) -> bool:
    """Whether a chunk covering ``hull`` overlaps ``[start, end)``; an empty range (a
    removal) overlaps the chunks it falls strictly inside."""
    lo, hi = hull
    if start == end:
        return lo < start < hi
    return lo < end and start < hi


def _by_document(rows: Mapping[str, Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    docs: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows.values():
        docs.setdefault(str(row["doc_id"]), []).append(row)
    return docs


def _heading_path(row: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(row.get("heading_path") or ())


def ideal_reembed(
    old: Mapping[str, Mapping[str, Any]],
    new: Mapping[str, Mapping[str, Any]],
    reembed: set[str],
) -> IdealReembed:
    """The chunks (and tokens) an ideal chunker would re-embed, for one label.

    The outputs do not hold the source, so the edited characters of each document that has
    a chunk to re-embed (``reembed``: the added and modified ids) are reconstructed from the
    chunks themselves: every chunk's text is laid at its span's character range, giving the
    covered characters of the document before and after; the edit is what lies between
    their common prefix and common suffix (for several edits in one document, one range
    from the first to the last). The ideal re-embeds the NEW chunks to re-embed that overlap
    that range or sit under a heading path the document did not have before (a renamed or
    new heading is in the text every chunk below it embeds) — for a document only in NEW,
    all of them. This needs chunks that are exact slices of a ``lines`` source
    (:func:`_locate`): a changed document without any (rendered HTML, PDF pages, DOCX
    elements) keeps all its chunks to re-embed in the ideal, and when no changed document
    can be located there is no ideal (None); chunks that are not exact (image references)
    are located as whole units. ``note`` says which of these happened.
    """
    before, after = _by_document(old), _by_document(new)
    chunks = tokens = located = 0
    unlocated: list[str] = []
    approximate: list[str] = []
    for doc, rows in sorted(after.items()):
        todo = [row for row in rows if str(row["chunk_id"]) in reembed]
        if not todo:
            continue
        if doc in before:
            old_source, new_source = _locate(before[doc]), _locate(rows)
            if old_source is None or new_source is None:
                unlocated.append(str(rows[0]["source_uri"]))
            else:
                located += 1
                if old_source.opaque or new_source.opaque:
                    approximate.append(str(rows[0]["source_uri"]))
                start, end = _edited_range(old_source.chars, new_source.chars)
                paths = {_heading_path(row) for row in before[doc]}
                todo = [
                    row
                    for row in todo
                    if _overlaps(_hull(row) or (0, 0), start, end)
                    or _heading_path(row) not in paths
                ]
        chunks += len(todo)
        tokens += sum(int(row["token_estimate"]) for row in todo)
    notes = []
    if unlocated:
        why = (
            f"the chunks of {len(unlocated)} changed document(s) (such as {unlocated[0]}) "
            "are not exact slices of one source text (rendered text, PDF pages or document "
            "elements), so their edited characters cannot be located"
        )
        if not located:
            return IdealReembed(None, None, why)
        notes.append(f"{why}; the ideal counts all their chunks to re-embed")
    if approximate:
        notes.append(
            f"in {len(approximate)} changed document(s) (such as {approximate[0]}) some "
            "chunks are not exact source slices (image or audio references) and count as "
            "whole units where they changed"
        )
    return IdealReembed(chunks, tokens, "; ".join(notes))


def diff_outputs(
    old: str, new: str, *, old_snapshot: int | None = None, new_snapshot: int | None = None
) -> OutputDiff:
    """Compare the chunk datasets of two finished outputs, label by label (each as its
    latest snapshot, or the snapshot given: two snapshots of one updated output compare
    the same way)."""
    old, old_manifest = open_output(old, "OLD_OUTPUT", snapshot=old_snapshot)
    new, new_manifest = open_output(new, "NEW_OUTPUT", snapshot=new_snapshot)
    old_labels = set(label_partitions(old, old_manifest))
    new_labels = set(label_partitions(new, new_manifest))
    diffs = []
    for label in sorted(old_labels | new_labels):
        status = (
            "both"
            if label in old_labels & new_labels
            else ("only_old" if label in old_labels else "only_new")
        )
        before = _read_label(old, old_manifest, label) if label in old_labels else {}
        after = _read_label(new, new_manifest, label) if label in new_labels else {}
        diffs.append(compare_label(label, before, after, status))
    return OutputDiff(old, new, diffs, snapshot_of(old_manifest), snapshot_of(new_manifest))


def format_diff(diff: OutputDiff) -> str:
    """The human-readable report: one paragraph per label, then the verdict; control
    characters in names are escaped (``safe_text``)."""
    lines = [f"kebab-chunk diff: {diff.old} -> {diff.new}"]
    for d in diff.labels:
        where = {"both": "", "only_old": " (only in OLD)", "only_new": " (only in NEW)"}[d.status]
        lines.append(
            f"  {d.label}{where}: +{d.added} added, -{d.removed} removed, {d.unchanged} "
            f"unchanged, {d.modified} modified, {d.relocated} relocated; "
            f"{d.documents_affected} documents affected; {d.reembed_tokens} tokens to re-embed"
        )
        if d.changed:
            lines.extend(_reembed_lines(d))
        if d.affected_sources:
            shown = ", ".join(d.affected_sources[:_LISTED])
            more = len(d.affected_sources) - _LISTED
            lines.append(f"    affected: {shown}" + (f" and {more} more" if more > 0 else ""))
    if not diff.labels:
        lines.append("  no chunk partitions in either output")
    lines.append("  result: " + ("changed" if diff.changed else "no changes"))
    # Names come from file names and labels: control characters are escaped, as inspect does.
    return "\n".join(safe_text(line) for line in lines)
