"""Reading an output back: the chunks, documents and error tables, as pyarrow tables.

The public way back from Parquet for code that does not want to know the layout
(kebab_chunk/output/layout.py) or the hive partitioning of ``chunks/``. Callers check the
output with :func:`kebab_chunk.output.finished.open_output` first; a part file that is
still unreadable here is one OutputDirError sentence, never a raw pyarrow error.
A table's missing directory stays FileNotFoundError (an output without a documents table).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyarrow as pa
import pyarrow.dataset as pads

from kebab_chunk.errors import OutputDirError
from kebab_chunk.output.layout import CHUNKS_DIR, DOCUMENTS_DIR, ERRORS_DIR, join
from kebab_chunk.output.schema import (
    CHUNK_FILE_SCHEMA,
    CHUNK_SCHEMA,
    DOCUMENT_SCHEMA,
    ERROR_SCHEMA,
    PARTITION_COLUMN,
)

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


def read_chunks(output: str, columns: Sequence[str] | None = None) -> pa.Table:
    """Read ``OUTPUT/chunks`` as one table with the ``chunker_version`` column restored."""
    partitioning = pads.partitioning(
        pa.schema([pa.field(PARTITION_COLUMN, pa.string())]), flavor="hive"
    )
    schema = CHUNK_FILE_SCHEMA.append(pa.field(PARTITION_COLUMN, pa.string()))
    directory = join(output, CHUNKS_DIR)
    table = read_checked(
        directory,
        lambda: pads.dataset(
            directory, format="parquet", partitioning=partitioning, schema=schema
        ).to_table(columns=list(columns) if columns else None),
    )
    if columns:
        return table
    return table.select(CHUNK_SCHEMA.names)


def read_errors(output: str) -> pa.Table:
    """Read ``OUTPUT/errors`` as one table."""
    directory = join(output, ERRORS_DIR)
    return read_checked(
        directory,
        lambda: pads.dataset(directory, format="parquet", schema=ERROR_SCHEMA).to_table(),
    )


def read_documents(output: str, columns: Sequence[str] | None = None) -> pa.Table:
    """Read ``OUTPUT/documents`` as one table (all columns, or ``columns``), rows sorted by
    ``source_uri``.

    One row per matched file (kebab_chunk/output/records.py, ``DocumentRow``). Raises
    FileNotFoundError for an output written before the documents table existed. Files
    written before the ``chunk_index`` column existed give an empty list there, not null.
    """
    import pyarrow.compute as pc  # here, not at the top: only this reader fills nulls

    wanted = list(dict.fromkeys(["source_uri", *columns])) if columns else None
    directory = join(output, DOCUMENTS_DIR)
    table = read_checked(
        directory,
        lambda: pads.dataset(directory, format="parquet", schema=DOCUMENT_SCHEMA).to_table(
            columns=wanted
        ),
    )
    if "chunk_index" in table.column_names and table.column("chunk_index").null_count:
        i = table.schema.get_field_index("chunk_index")
        column = table.column(i)
        filled = pc.coalesce(column, pa.scalar([], type=column.type))
        table = table.set_column(i, table.field(i), filled)
    if table.num_rows > 1:  # several part files are each sorted: restore the one order
        table = table.sort_by("source_uri")
    return table.select(list(columns)) if columns else table
