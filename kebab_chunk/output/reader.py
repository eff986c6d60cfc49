"""Reading an output back: the chunks, documents and error tables, as pyarrow tables.

The public way back from Parquet for code that does not want to know the layout
(kebab_chunk/output/layout.py) or the hive partitioning of ``chunks/``. Callers check the
output with :func:`kebab_chunk.output.finished.open_output` first and pass its manifest
(a snapshot, for an updated output): only the files it lists are read, minus the rows its
delete files remove (kebab_chunk/output/snapshots.py), so an updated output's older files
never leak in. A part file that is still unreadable here is one OutputDirError sentence,
never a raw pyarrow error. A table the manifest does not list at all stays
FileNotFoundError (an output without a documents table).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.fs as pafs

from kebab_chunk.errors import OutputDirError
from kebab_chunk.output.layout import CHUNKS_DIR, DOCUMENTS_DIR, ERRORS_DIR, MANIFEST_NAME, join
from kebab_chunk.output.schema import (
    CHUNK_FILE_SCHEMA,
    CHUNK_SCHEMA,
    DOCUMENT_SCHEMA,
    ERROR_SCHEMA,
    PARTITION_COLUMN,
)
from kebab_chunk.output.snapshots import load_snapshot, read_live, snapshot_ids

__all__ = ["read_checked", "read_chunks", "read_documents", "read_errors"]


def read_checked(directory: str, read: Callable[[], pa.Table]) -> pa.Table:
    """``read()`` (a table of the part files in ``directory``), refused in one sentence when
    a file cannot be read; a missing directory stays FileNotFoundError."""
    try:
        return read()
    except FileNotFoundError:
        raise
    except (pa.ArrowException, OSError) as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        raise OutputDirError(
            f"cannot read the part files in {directory!r} ({first}); the output is damaged, "
            "so run the job again."
        ) from None


def latest_manifest(output: str) -> dict[str, Any] | None:
    """The manifest readers follow: the latest snapshot, else ``manifest.json``, else None
    (a directory no run finished: its part files are read as they are, as tests of single
    transforms write them). Unchecked: ``open_output`` is the check."""
    ids = snapshot_ids(output)
    if ids:
        return load_snapshot(output, ids[-1])
    fs, inner = (
        pafs.FileSystem.from_uri(output) if "://" in output else (pafs.LocalFileSystem(), output)
    )
    try:
        with fs.open_input_stream(f"{inner}/{MANIFEST_NAME}") as f:
            manifest: dict[str, Any] = json.loads(f.read().decode("utf-8"))
    except FileNotFoundError:
        return None
    return manifest


def _read_table(
    output: str,
    manifest: Mapping[str, Any] | None,
    kind: str,
    dataset: Callable[[Any], pads.Dataset],
    columns: Sequence[str] | None,
    rows: pc.Expression | None = None,
) -> pa.Table:
    listing = manifest if manifest is not None else latest_manifest(output)
    directory = join(output, kind)
    if listing is None:  # no finished run: the directory's part files
        return read_checked(
            directory,
            lambda: dataset(directory).to_table(
                columns=list(columns) if columns else None, filter=rows
            ),
        )
    if kind not in listing.get("outputs", {}):
        raise FileNotFoundError(directory)
    return read_checked(
        directory, lambda: read_live(output, listing, kind, dataset, columns, rows)
    )


def read_chunks(
    output: str,
    columns: Sequence[str] | None = None,
    manifest: Mapping[str, Any] | None = None,
    rows: pc.Expression | None = None,
) -> pa.Table:
    """Read the chunks table as one table with the ``chunker_version`` column restored
    (the files ``manifest`` lists; None: the latest snapshot's); ``rows`` keeps only the
    rows it matches (e.g. ``pc.field("chunk_id").isin(ids)``)."""
    partitioning = pads.partitioning(
        pa.schema([pa.field(PARTITION_COLUMN, pa.string())]), flavor="hive"
    )
    schema = CHUNK_FILE_SCHEMA.append(pa.field(PARTITION_COLUMN, pa.string()))
    directory = join(output, CHUNKS_DIR)

    def dataset(paths: list[str] | str) -> pads.Dataset:
        return pads.dataset(
            paths,
            format="parquet",
            partitioning=partitioning,
            partition_base_dir=directory,
            schema=schema,
        )

    table = _read_table(output, manifest, CHUNKS_DIR, dataset, columns, rows)
    if columns:
        return table
    return table.select(CHUNK_SCHEMA.names)


def read_errors(output: str, manifest: Mapping[str, Any] | None = None) -> pa.Table:
    """Read the errors table as one table."""

    def dataset(paths: list[str] | str) -> pads.Dataset:
        return pads.dataset(paths, format="parquet", schema=ERROR_SCHEMA)

    return _read_table(output, manifest, ERRORS_DIR, dataset, None)


def read_documents(
    output: str,
    columns: Sequence[str] | None = None,
    manifest: Mapping[str, Any] | None = None,
) -> pa.Table:
    """Read the documents table as one table (all columns, or ``columns``), rows sorted by
    ``source_uri``.

    One row per matched file (kebab_chunk/output/records.py, ``DocumentRow``). Raises
    FileNotFoundError for an output written before the documents table existed. Files
    written before the ``chunk_index`` column existed give an empty list there, not null.
    """
    wanted = list(dict.fromkeys(["source_uri", *columns])) if columns else None

    def dataset(paths: list[str] | str) -> pads.Dataset:
        return pads.dataset(paths, format="parquet", schema=DOCUMENT_SCHEMA)

    table = _read_table(output, manifest, DOCUMENTS_DIR, dataset, wanted)
    if "chunk_index" in table.column_names and table.column("chunk_index").null_count:
        i = table.schema.get_field_index("chunk_index")
        column = table.column(i)
        filled = pc.coalesce(column, pa.scalar([], type=column.type))
        table = table.set_column(i, table.field(i), filled)
    if table.num_rows > 1:  # several part files are each sorted: restore the one order
        table = table.sort_by("source_uri")
    return table.select(list(columns)) if columns else table
