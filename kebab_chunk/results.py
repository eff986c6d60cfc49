"""Reading a finished output back as records: the public way back from Parquet.

``read_chunks(OUT)`` gives :class:`~kebab_chunk.model.Chunk` records (what every adapter
in :mod:`kebab_chunk.integrations` accepts), ``read_documents(OUT)`` one row per matched
file, ``read_errors(OUT)`` the dead-letter rows and ``read_manifest(OUT)`` the run's
``manifest.json``. Each refuses, in one sentence (OutputDirError), a directory that is not
a finished, whole output: no manifest (the run did not finish: the manifest is written
last), a manifest that is not JSON or not of the manifest's shape, a part file it lists
missing or one it does not list present (kebab_chunk/output/finished.py), or a part file
that cannot be read. Paths are local or any URI pyarrow's
filesystems read (``gs://``, ``s3://``); no Beam is imported. For columnar work read the
same files with pandas, pyarrow or DuckDB directly (the README shows how); these
functions are for code that wants the records with their exact spans.
"""

from __future__ import annotations

import os
from typing import Any, cast

import pyarrow as pa

from kebab_chunk.errors import OutputDirError
from kebab_chunk.model import Chunk
from kebab_chunk.output.finished import open_output
from kebab_chunk.output.manifest import Manifest
from kebab_chunk.output.reader import read_chunks as _chunks_table
from kebab_chunk.output.reader import read_documents as _documents_table
from kebab_chunk.output.reader import read_errors as _errors_table
from kebab_chunk.output.records import DocumentRow, ErrorRecord
from kebab_chunk.output.schema import row_to_chunk, row_to_document, row_to_error

__all__ = ["read_chunks", "read_documents", "read_errors", "read_manifest", "read_table"]

#: The tables :func:`read_table` reads.
TABLES = ("chunks", "documents", "errors")


def _open(
    output: str | os.PathLike[str], snapshot: int | None = None
) -> tuple[str, dict[str, Any]]:
    """(normalised path, manifest) of a finished output; OutputDirError otherwise."""
    return open_output(os.fspath(output), "output", snapshot=snapshot)


def read_manifest(output: str | os.PathLike[str], snapshot: int | None = None) -> Manifest:
    """The manifest of a finished output (of its snapshot ``snapshot``, for an output
    updated with ``run --update``; default the latest): the parsed JSON, typed by
    :class:`~kebab_chunk.output.manifest.Manifest`; OutputDirError when the output is not
    finished."""
    return cast(Manifest, _open(output, snapshot)[1])


def read_table(
    output: str | os.PathLike[str], table: str = "chunks", snapshot: int | None = None
) -> pa.Table:
    """One table of a finished output as a pyarrow Table: ``chunks`` (with the
    ``chunker_version`` column), ``documents`` or ``errors``, as of snapshot ``snapshot``
    (default the latest). The live rows only: an updated output's folders also hold files
    of other snapshots and rows later snapshots deleted, so a glob over them is wrong; this
    is what DuckDB (``duckdb.sql("... FROM tbl")``) or pandas (``tbl.to_pandas()``) should
    read, or ``kebab-chunk export`` writes a plain copy."""
    if table not in TABLES:
        raise OutputDirError(
            f"table must be one of {', '.join(TABLES)}, got {table!r}; pick one of them."
        )
    root, manifest = _open(output, snapshot)
    reader = {"chunks": _chunks_table, "documents": _documents_table}.get(table)
    if reader is None:
        return _errors_table(root, manifest)
    return reader(root, manifest=manifest)


def read_chunks(
    output: str | os.PathLike[str], label: str | None = None, snapshot: int | None = None
) -> list[Chunk]:
    """Every chunk record of a finished output, or only those of chunker ``label``.

    Ordered by label, then ``source_uri``, then ``position`` (document order), so the same
    output always reads back as the same list.
    """
    root, manifest = _open(output, snapshot)
    labels = sorted(manifest["chunkers"]["labels"])
    if label is not None and label not in labels:
        raise OutputDirError(
            f"{os.fspath(output)!r} was not chunked with label {label!r}; its labels are "
            f"{', '.join(labels)} (pass one of them, or label=None for all)."
        )
    if not manifest["counts"]["chunks_total"]:
        return []
    rows = _chunks_table(root, manifest=manifest).to_pylist()
    chunks = [row_to_chunk(row) for row in rows if label is None or row["chunker_version"] == label]
    chunks.sort(key=lambda c: (c.chunker_version, c.source_uri, c.position))
    return chunks


def read_documents(
    output: str | os.PathLike[str], snapshot: int | None = None
) -> list[DocumentRow]:
    """One row per matched file of a finished output, ordered by ``source_uri``.

    Each row says what became of the file (``chunked``, ``zero_chunks`` or ``error``),
    with its title, front matter, warnings, chunk counts per label and chunk index (each
    chunk record written for it: label, chunk_id and two digests; empty for an output
    written before the documents table had one).
    """
    root, manifest = _open(output, snapshot)
    try:
        rows = _documents_table(root, manifest=manifest).to_pylist()
    except FileNotFoundError:
        raise OutputDirError(
            f"{os.fspath(output)!r} has no documents table (it was written by an older "
            "kebab-chunk); run the job again with this version to get one."
        ) from None
    return sorted((row_to_document(row) for row in rows), key=lambda d: d.source_uri)


def read_errors(
    output: str | os.PathLike[str], snapshot: int | None = None
) -> list[ErrorRecord]:
    """The dead-letter rows of a finished output, in their file's (deterministic) order."""
    root, manifest = _open(output, snapshot)
    return [row_to_error(row) for row in _errors_table(root, manifest).to_pylist()]
