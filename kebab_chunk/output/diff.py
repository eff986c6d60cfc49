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
  volume a re-embedding job has to pay for (``added_tokens`` is the added part alone).

This module reads Parquet with pyarrow only (no pipeline runs); :func:`open_output` is also
how the incremental pipeline checks its ``--previous`` directory on the launching machine.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.fs as pafs

from kebab_chunk.errors import OutputDirError
from kebab_chunk.output.layout import MANIFEST_NAME
from kebab_chunk.output.schema import CHUNK_FILE_SCHEMA, PARTITION_COLUMN, SCHEMA_VERSION

__all__ = [
    "LabelDiff",
    "OutputDiff",
    "OutputDirError",
    "diff_outputs",
    "format_diff",
    "label_partitions",
    "normalise_path",
    "open_output",
]

_CONTENT = ("text", "heading_path", "captions", "token_estimate")
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


def normalise_path(path: str) -> str:
    """Local paths made absolute (no trailing ``/``); URIs (``gs://``, ``s3://``) as given."""
    if "://" in path:
        return path.rstrip("/")
    return os.path.abspath(os.path.expanduser(path)).rstrip("/") or "/"


def _filesystem(path: str, what: str) -> tuple[pafs.FileSystem, str]:
    try:
        fs, inner = pafs.FileSystem.from_uri(path)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
        raise OutputDirError(
            f"{what} {path!r} is not a path pyarrow can open ({exc}); give a local directory "
            "or a gs:// or s3:// URI."
        ) from None
    return fs, inner


def open_output(path: str, what: str) -> tuple[str, dict[str, Any]]:
    """Check that ``path`` holds a finished kebab-chunk output; returns (path, manifest).

    A finished output has ``manifest.json`` (the pipeline writes it last), a ``chunks/``
    directory and the schema version this package reads. ``what`` names the argument in
    the one-sentence error (e.g. ``OLD_OUTPUT``, ``--previous``).
    """
    if not path.strip():
        raise OutputDirError(f"{what} is empty; give the --output directory of a finished run.")
    path = normalise_path(path)
    fs, inner = _filesystem(path, what)
    info = fs.get_file_info(inner)
    if info.type == pafs.FileType.NotFound:
        raise OutputDirError(
            f"{what} {path!r} does not exist; give the --output directory of a finished "
            "kebab-chunk run."
        )
    if info.type == pafs.FileType.File:
        raise OutputDirError(
            f"{what} {path!r} is a file; give the output directory that holds manifest.json."
        )
    manifest_path = f"{inner}/{MANIFEST_NAME}"
    if fs.get_file_info(manifest_path).type != pafs.FileType.File:
        raise OutputDirError(
            f"{what} {path!r} has no {MANIFEST_NAME}, so it is not a finished kebab-chunk "
            "output (a run writes it last); point at the --output of a completed run."
        )
    try:
        with fs.open_input_stream(manifest_path) as f:
            manifest = json.loads(f.read().decode("utf-8"))
    except (ValueError, OSError) as exc:
        raise OutputDirError(
            f"{what} {path!r} has an unreadable {MANIFEST_NAME} ({exc}); the output is "
            "damaged, so run the job again."
        ) from None
    if not isinstance(manifest, dict) or "policy_hash" not in manifest:
        raise OutputDirError(
            f"{what} {path!r} has a {MANIFEST_NAME} that is not a kebab-chunk manifest; "
            "point at the --output of a kebab-chunk run."
        )
    found = manifest.get("schema_version")
    if found != SCHEMA_VERSION:
        raise OutputDirError(
            f"{what} {path!r} was written with output schema {found!r} but this kebab-chunk "
            f"reads {SCHEMA_VERSION!r}; run the job again with this version first."
        )
    if fs.get_file_info(f"{inner}/chunks").type != pafs.FileType.Directory:
        raise OutputDirError(
            f"{what} {path!r} has no chunks/ directory; the output is incomplete, so run "
            "the job again."
        )
    return path, manifest


def label_partitions(path: str) -> list[str]:
    """The labels that have a ``chunks/chunker_version=<label>/`` partition, sorted."""
    fs, inner = _filesystem(path, "output")
    selector = pafs.FileSelector(f"{inner}/chunks", allow_not_found=True)
    prefix = f"{PARTITION_COLUMN}="
    return sorted(
        info.base_name[len(prefix) :]
        for info in fs.get_file_info(selector)
        if info.type == pafs.FileType.Directory and info.base_name.startswith(prefix)
    )


def _read_label(path: str, label: str, what: str) -> dict[str, dict[str, Any]]:
    """chunk_id -> row (the compared columns) of one label partition."""
    fs, inner = _filesystem(path, what)
    try:
        dataset = pads.dataset(
            f"{inner}/chunks/{PARTITION_COLUMN}={label}",
            format="parquet",
            schema=CHUNK_FILE_SCHEMA,
            filesystem=fs,
        )
        rows = dataset.to_table(columns=list(_COLUMNS)).to_pylist()
    except (pa.ArrowException, OSError) as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        raise OutputDirError(
            f"cannot read the {label} chunks of {what} {path!r} ({first}); the output is "
            "damaged, so run the job again."
        ) from None
    return {str(row["chunk_id"]): row for row in rows}


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
    affected_sources: list[str] = field(default_factory=list)
    added_ids: list[str] = field(default_factory=list)
    removed_ids: list[str] = field(default_factory=list)
    modified_ids: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed or self.modified or self.relocated)


@dataclass(frozen=True)
class OutputDiff:
    """Every label of either output, sorted by label."""

    old: str
    new: str
    labels: list[LabelDiff]

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
            )
        }
        return {
            "old": self.old,
            "new": self.new,
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
    relocated = 0
    for chunk_id in sorted(set(old) & set(new)):
        before, after = old[chunk_id], new[chunk_id]
        if any(before[c] != after[c] for c in _CONTENT):
            modified.append(chunk_id)
        elif any(before[c] != after[c] for c in _METADATA):
            relocated += 1
    affected = _sources(new, [*added, *modified]) | _sources(old, removed)
    added_tokens = sum(int(new[i]["token_estimate"]) for i in added)
    return LabelDiff(
        label=label,
        status=status,
        added=len(added),
        removed=len(removed),
        unchanged=len(set(old) & set(new)) - len(modified),
        modified=len(modified),
        relocated=relocated,
        documents_affected=len(affected),
        added_tokens=added_tokens,
        reembed_tokens=added_tokens + sum(int(new[i]["token_estimate"]) for i in modified),
        affected_sources=sorted(affected),
        added_ids=added,
        removed_ids=removed,
        modified_ids=modified,
    )


def _sources(rows: Mapping[str, Mapping[str, Any]], ids: Iterable[str]) -> set[str]:
    return {str(rows[i]["source_uri"]) for i in ids}


def diff_outputs(old: str, new: str) -> OutputDiff:
    """Compare the chunk datasets of two finished outputs, label by label."""
    old, _ = open_output(old, "OLD_OUTPUT")
    new, _ = open_output(new, "NEW_OUTPUT")
    old_labels, new_labels = set(label_partitions(old)), set(label_partitions(new))
    diffs = []
    for label in sorted(old_labels | new_labels):
        status = (
            "both"
            if label in old_labels & new_labels
            else ("only_old" if label in old_labels else "only_new")
        )
        before = _read_label(old, label, "OLD_OUTPUT") if label in old_labels else {}
        after = _read_label(new, label, "NEW_OUTPUT") if label in new_labels else {}
        diffs.append(compare_label(label, before, after, status))
    return OutputDiff(old, new, diffs)


def format_diff(diff: OutputDiff) -> str:
    """The human-readable report: one paragraph per label, then the verdict."""
    lines = [f"kebab-chunk diff: {diff.old} -> {diff.new}"]
    for d in diff.labels:
        where = {"both": "", "only_old": " (only in OLD)", "only_new": " (only in NEW)"}[d.status]
        lines.append(
            f"  {d.label}{where}: +{d.added} added, -{d.removed} removed, {d.unchanged} "
            f"unchanged, {d.modified} modified, {d.relocated} relocated; "
            f"{d.documents_affected} documents affected; {d.reembed_tokens} tokens to re-embed"
        )
        if d.affected_sources:
            shown = ", ".join(d.affected_sources[:_LISTED])
            more = len(d.affected_sources) - _LISTED
            lines.append(f"    affected: {shown}" + (f" and {more} more" if more > 0 else ""))
    if not diff.labels:
        lines.append("  no chunk partitions in either output")
    lines.append("  result: " + ("changed" if diff.changed else "no changes"))
    return "\n".join(lines)
