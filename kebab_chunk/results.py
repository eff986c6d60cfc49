"""Reading a finished output back as records: the public way back from Parquet.

``read_chunks(OUT)`` gives :class:`~kebab_chunk.model.Chunk` records (what every adapter
in :mod:`kebab_chunk.integrations` accepts), ``read_documents(OUT)`` one row per matched
file, ``read_errors(OUT)`` the dead-letter rows and ``read_manifest(OUT)`` the run's
``manifest.json``. Each refuses, in one sentence, a directory whose run did not finish
(no manifest: the manifest is written last). Paths are local or any URI pyarrow's
filesystems read (``gs://``, ``s3://``); no Beam is imported. For columnar work read the
same files with pandas, pyarrow or DuckDB directly (the README shows how); these
functions are for code that wants the records with their exact spans.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pyarrow.fs as pafs

from kebab_chunk.errors import OutputDirError
from kebab_chunk.model import Chunk
from kebab_chunk.output.layout import MANIFEST_NAME, join
from kebab_chunk.output.reader import read_chunks as _chunks_table
from kebab_chunk.output.reader import read_documents as _documents_table
from kebab_chunk.output.reader import read_errors as _errors_table
from kebab_chunk.output.records import DocumentRow, ErrorRecord
from kebab_chunk.output.schema import row_to_chunk, row_to_document, row_to_error

__all__ = ["read_chunks", "read_documents", "read_errors", "read_manifest"]


def _root(output: str | os.PathLike[str]) -> str:
    path = os.fspath(output)
    return path if "://" in path else os.path.abspath(path)


def read_manifest(output: str | os.PathLike[str]) -> dict[str, Any]:
    """``OUTPUT/manifest.json`` as a dict; OutputDirError when the run did not finish."""
    filesystem, root = pafs.FileSystem.from_uri(_root(output))
    path = join(root, MANIFEST_NAME)
    if filesystem.get_file_info(path).type != pafs.FileType.File:
        raise OutputDirError(
            f"{os.fspath(output)!r} has no {MANIFEST_NAME}, so it is not a finished "
            "kebab-chunk output (the run is still going, was stopped, or this is another "
            "directory); point at the --output of a run that completed."
        )
    with filesystem.open_input_stream(path) as handle:
        manifest: dict[str, Any] = json.loads(handle.read().decode("utf-8"))
    return manifest


def read_chunks(output: str | os.PathLike[str], label: str | None = None) -> list[Chunk]:
    """Every chunk record of a finished output, or only those of chunker ``label``.

    Ordered by label, then ``source_uri``, then ``position`` (document order), so the same
    output always reads back as the same list.
    """
    manifest = read_manifest(output)
    labels = sorted(manifest["chunkers"]["labels"])
    if label is not None and label not in labels:
        raise OutputDirError(
            f"{os.fspath(output)!r} was not chunked with label {label!r}; its labels are "
            f"{', '.join(labels)} (pass one of them, or label=None for all)."
        )
    if not manifest["counts"]["chunks_total"]:
        return []
    rows = _chunks_table(_root(output)).to_pylist()
    chunks = [row_to_chunk(row) for row in rows if label is None or row["chunker_version"] == label]
    chunks.sort(key=lambda c: (c.chunker_version, c.source_uri, c.position))
    return chunks


def read_documents(output: str | os.PathLike[str]) -> list[DocumentRow]:
    """One row per matched file of a finished output, ordered by ``source_uri``.

    Each row says what became of the file (``chunked``, ``zero_chunks`` or ``error``),
    with its title, front matter, warnings and chunk counts per label.
    """
    read_manifest(output)
    rows = _documents_table(_root(output)).to_pylist()
    return sorted((row_to_document(row) for row in rows), key=lambda d: d.source_uri)


def read_errors(output: str | os.PathLike[str]) -> list[ErrorRecord]:
    """The dead-letter rows of a finished output, in their file's (deterministic) order."""
    read_manifest(output)
    return [row_to_error(row) for row in _errors_table(_root(output)).to_pylist()]
