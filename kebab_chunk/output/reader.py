"""Reading an output back: the chunks, documents and error tables, as pyarrow tables.

The public way back from Parquet for code that does not want to know the layout
(kebab_chunk/output/layout.py) or the hive partitioning of ``chunks/``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.dataset as pads

from kebab_chunk.output.layout import CHUNKS_DIR, DOCUMENTS_DIR, ERRORS_DIR, join
from kebab_chunk.output.schema import (
    CHUNK_FILE_SCHEMA,
    CHUNK_SCHEMA,
    DOCUMENT_SCHEMA,
    ERROR_SCHEMA,
    PARTITION_COLUMN,
)

__all__ = ["read_chunks", "read_documents", "read_errors"]


def read_chunks(output: str, columns: Sequence[str] | None = None) -> pa.Table:
    """Read ``OUTPUT/chunks`` as one table with the ``chunker_version`` column restored."""
    partitioning = pads.partitioning(
        pa.schema([pa.field(PARTITION_COLUMN, pa.string())]), flavor="hive"
    )
    dataset = pads.dataset(
        join(output, CHUNKS_DIR),
        format="parquet",
        partitioning=partitioning,
        schema=CHUNK_FILE_SCHEMA.append(pa.field(PARTITION_COLUMN, pa.string())),
    )
    table = dataset.to_table(columns=list(columns) if columns else None)
    if columns:
        return table
    return table.select(CHUNK_SCHEMA.names)


def read_errors(output: str) -> pa.Table:
    """Read ``OUTPUT/errors`` as one table."""
    return pads.dataset(join(output, ERRORS_DIR), format="parquet", schema=ERROR_SCHEMA).to_table()


def read_documents(output: str, columns: Sequence[str] | None = None) -> pa.Table:
    """Read ``OUTPUT/documents`` as one table (all columns, or ``columns``), rows sorted by
    ``source_uri``.

    One row per matched file (kebab_chunk/output/records.py, ``DocumentRow``). Raises
    FileNotFoundError for an output written before the documents table existed.
    """
    wanted = list(dict.fromkeys(["source_uri", *columns])) if columns else None
    table = pads.dataset(
        join(output, DOCUMENTS_DIR), format="parquet", schema=DOCUMENT_SCHEMA
    ).to_table(columns=wanted)
    if table.num_rows > 1:  # several part files are each sorted: restore the one order
        table = table.sort_by("source_uri")
    return table.select(list(columns)) if columns else table
