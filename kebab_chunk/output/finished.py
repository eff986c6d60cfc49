"""The one check every reader of an output makes first: is this a finished, whole output?

:func:`open_output` is called by every reader (``kebab_chunk.results``, ``diff``, ``inspect``,
``report``, ``view --from-output``, ``rechunk``) and by ``--previous``. A finished output
(docs/guide/limits.md, "Completeness of an output") has a ``manifest.json`` (written last) that
is a JSON object of the shape :func:`_check_shape` describes, the schema version this
package reads, a ``chunks/`` directory, and exactly the part files its manifest lists, each
a Parquet file with its table's columns and the number of rows listed (read from the
file's footer, never its data).
Anything else is refused with one :class:`~kebab_chunk.errors.OutputDirError` sentence that
names the argument (``what``), so no reader ever hands a damaged output's pieces on as data.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from kebab_chunk.errors import OutputDirError
from kebab_chunk.output.layout import CHUNKS_DIR, DOCUMENTS_DIR, ERRORS_DIR, MANIFEST_NAME
from kebab_chunk.output.schema import (
    CHUNK_FILE_SCHEMA,
    DOCUMENT_SCHEMA,
    ERROR_SCHEMA,
    SCHEMA_VERSION,
)
from kebab_chunk.output.snapshots import live_deletes, snapshot_ids, snapshot_name

__all__ = ["normalise_path", "open_output", "output_filesystem"]

#: Documents columns added within SCHEMA_VERSION: files written before them lack them and
#: stay valid (readers fill them in empty; kebab_chunk/output/reader.py, read_documents).
_LATER_DOCUMENT_COLUMNS = frozenset({"chunk_index"})
#: The directories whose part files the manifest's ``outputs`` section lists, and the
#: columns each part file must have (unchanged since SCHEMA_VERSION was introduced: the
#: documents table's later columns are not required).
_LISTED_KINDS = {
    CHUNKS_DIR: frozenset(CHUNK_FILE_SCHEMA.names),
    DOCUMENTS_DIR: frozenset(DOCUMENT_SCHEMA.names) - _LATER_DOCUMENT_COLUMNS,
    ERRORS_DIR: frozenset(ERROR_SCHEMA.names),
}


def normalise_path(path: str) -> str:
    """Local paths made absolute (no trailing ``/``); URIs (``gs://``, ``s3://``) as given."""
    if "://" in path:
        return path.rstrip("/")
    return os.path.abspath(os.path.expanduser(path)).rstrip("/") or "/"


def output_filesystem(path: str, what: str) -> tuple[pafs.FileSystem, str]:
    """pyarrow's file system for ``path`` and the path inside it; OutputDirError if none."""
    try:
        fs, inner = pafs.FileSystem.from_uri(path)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
        raise OutputDirError(
            f"{what} {path!r} is not a path pyarrow can open ({exc}); give a local directory "
            "or a gs:// or s3:// URI."
        ) from None
    return fs, inner


def open_output(
    path: str, what: str, *, remedy: str = "run the job again", snapshot: int | None = None
) -> tuple[str, dict[str, Any]]:
    """Check that ``path`` holds a finished, whole kebab-chunk output; returns (normalised
    path, manifest). ``what`` names the argument in the one-sentence error (e.g.
    ``OLD_OUTPUT``, ``--previous``); ``remedy`` ends the sentence about a damaged output.

    An updated output (kebab_chunk/output/snapshots.py) is read as its latest committed
    snapshot, or as snapshot ``snapshot`` when given ("the chunks as of run N"); its
    ``manifest.json`` is only a copy of the latest one for other tools."""
    if not path.strip():
        raise OutputDirError(f"{what} is empty; give the --output directory of a finished run.")
    path = normalise_path(path)
    fs, inner = output_filesystem(path, what)
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
    ids = snapshot_ids(path)
    if snapshot is not None and snapshot not in (ids or [1]):
        have = ", ".join(map(str, ids)) if ids else "1 (it was never updated)"
        raise OutputDirError(
            f"{what} {path!r} has no snapshot {snapshot}; its snapshots are {have}."
        )
    manifest_path = (
        f"{inner}/{snapshot_name(snapshot or ids[-1])}" if ids else (f"{inner}/{MANIFEST_NAME}")
    )
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
            f"damaged, so {remedy}."
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
    if problem := _check_shape(manifest):
        raise OutputDirError(
            f"{what} {path!r} has a {MANIFEST_NAME} without {problem}; the output is damaged, "
            f"so {remedy}."
        )
    if fs.get_file_info(f"{inner}/{CHUNKS_DIR}").type != pafs.FileType.Directory:
        raise OutputDirError(
            f"{what} {path!r} has no {CHUNKS_DIR}/ directory; the output is incomplete, so "
            f"{remedy}."
        )
    if problem := _check_listed(fs, inner, manifest):
        raise OutputDirError(f"{what} {path!r} {problem}; the output is damaged, so {remedy}.")
    return path, manifest


def _check_shape(manifest: Mapping[str, Any]) -> str | None:
    """What a manifest lacks that readers rely on (as "a ... 'key'"), or None."""
    for key in ("chunkers", "counts", "accounting", "outputs", "options"):
        if not isinstance(manifest.get(key), dict):
            return f"a {key!r} object"
    labels = manifest["chunkers"].get("labels")
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        return "a list of label names in 'chunkers.labels'"
    if type(manifest["counts"].get("chunks_total")) is not int:
        return "a number in 'counts.chunks_total'"
    for kind in _LISTED_KINDS:  # a kind may be absent (no documents table before v0.6)
        files = manifest["outputs"].get(kind, [])
        for entry in files if isinstance(files, list) else [None]:
            if (
                not isinstance(entry, dict)
                or not isinstance(entry.get("path"), str)
                or not entry["path"].startswith(f"{kind}/")
                or type(entry.get("rows")) is not int
            ):
                return f"a list of {kind}/ part files in 'outputs.{kind}'"
    return None


def _check_listed(fs: pafs.FileSystem, inner: str, manifest: Mapping[str, Any]) -> str | None:
    """Whether the part files are exactly those the manifest lists, each with its table's
    columns and listed row count (as a phrase saying what is wrong), or None.

    One recursive listing per directory and one footer read per file. Files whose name or
    folder starts with ``.`` or ``_`` are not compared: pyarrow's dataset readers skip them.
    A snapshot of an updated output shares its directories with its other snapshots, so
    there only the listed files (and its delete files) must be present; others may be.
    """
    outputs = manifest["outputs"]
    shared = "snapshot" in manifest
    for entry in live_deletes(manifest):
        if fs.get_file_info(f"{inner}/{entry['path']}").type != pafs.FileType.File:
            return f"lacks {entry['path']} although its snapshot lists it"
    for kind, columns in _LISTED_KINDS.items():
        entries = {str(entry["path"]): entry for entry in outputs.get(kind, [])}
        listed = {name: int(entry["rows"]) for name, entry in entries.items()}
        selector = pafs.FileSelector(f"{inner}/{kind}", recursive=True, allow_not_found=True)
        sizes = {
            f"{kind}/{info.path[len(inner) + len(kind) + 2 :]}": info.size
            for info in fs.get_file_info(selector)
            if info.type == pafs.FileType.File
        }
        present = set(sizes)
        read = {p for p in present if not any(n.startswith((".", "_")) for n in p.split("/"))}
        if missing := sorted(set(listed) - present):
            return f"lacks {missing[0]} although its {MANIFEST_NAME} lists it"
        if not shared and (extra := sorted(read - set(listed))):
            return f"holds {extra[0]}, which its {MANIFEST_NAME} does not list"
        for name, rows in sorted(listed.items()):
            try:
                with fs.open_input_file(f"{inner}/{name}") as f:
                    footer = pq.read_metadata(f)
                names = set(footer.schema.to_arrow_schema().names)
            except (pa.ArrowException, OSError):
                return f"holds {name}, which is not a readable Parquet file"
            if lacking := sorted(columns - names):
                return f"holds {name}, which lacks the {kind} column {lacking[0]!r}"
            if footer.num_rows != rows:
                return f"holds {name} with {footer.num_rows} rows, not the {rows} listed"
            size = entries[name].get("bytes")  # listed since manifests record digests
            if size is not None and sizes[name] != size:
                return f"has {name} of {sizes[name]} bytes where its {MANIFEST_NAME} lists {size}"
    return None
