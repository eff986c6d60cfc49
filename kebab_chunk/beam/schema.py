"""The explicit Arrow schemas of the output datasets, and record <-> row conversion.

This is the one place the on-disk layout of DESIGN §5 is defined:

* ``chunks/chunker_version=<label>/part-*.parquet`` holds :data:`CHUNK_FILE_SCHEMA`: every
  :class:`~kebab_chunk.model.Chunk` field except ``chunker_version``, which is the hive
  partition column and lives in the directory name only (Spark rejects data files that
  repeat a partition column; pyarrow and DuckDB restore it from the path).
* ``errors/part-*.parquet`` holds :data:`ERROR_SCHEMA`, one row per dead letter.

Spans are a list of structs with every field any span kind has; fields a kind does not use
are null (``page`` and ``ref`` for line spans, ``line_start``/``line_end`` for page spans,
the line fields for element spans).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from kebab_chunk.beam.records import ErrorRecord
from kebab_chunk.model import SPAN_ADAPTER, Chunk, SourceSpan

__all__ = [
    "CHUNK_FILE_SCHEMA",
    "CHUNK_SCHEMA",
    "ERROR_SCHEMA",
    "PARTITION_COLUMN",
    "SCHEMA_VERSION",
    "SPAN_TYPE",
    "chunk_to_row",
    "chunks_table",
    "error_to_row",
    "errors_table",
    "parquet_bytes",
    "read_chunks",
    "read_errors",
    "row_to_chunk",
    "row_to_error",
]

#: Bumped whenever a column is added, removed or retyped.
SCHEMA_VERSION = "kebab-chunk-parquet-v1"
PARTITION_COLUMN = "chunker_version"
_METADATA = {b"kebab_chunk.schema": SCHEMA_VERSION.encode()}

SPAN_TYPE = pa.struct(
    [
        pa.field("kind", pa.string(), nullable=False),
        pa.field("line_start", pa.int64()),
        pa.field("line_end", pa.int64()),
        pa.field("page", pa.int64()),
        pa.field("ref", pa.string()),
        pa.field("char_start", pa.int64(), nullable=False),
        pa.field("char_end", pa.int64(), nullable=False),
    ]
)
_SPAN_FIELDS = tuple(f.name for f in SPAN_TYPE)
_STRINGS = pa.list_(pa.string())

#: Every Chunk field, in model order: what a reader sees with hive partitioning.
CHUNK_SCHEMA = pa.schema(
    [
        pa.field("chunk_id", pa.string(), nullable=False),
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("source_uri", pa.string(), nullable=False),
        pa.field(PARTITION_COLUMN, pa.string(), nullable=False),
        pa.field("policy_hash", pa.string(), nullable=False),
        pa.field("parser_version", pa.string(), nullable=False),
        pa.field("position", pa.int64(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field("heading_path", _STRINGS, nullable=False),
        pa.field("captions", _STRINGS, nullable=False),
        pa.field("block_ids", _STRINGS, nullable=False),
        pa.field("source_spans", pa.list_(SPAN_TYPE), nullable=False),
        pa.field("token_estimate", pa.int64(), nullable=False),
        pa.field("content_hash", pa.string(), nullable=False),
    ],
    metadata=_METADATA,
)
#: What a part file holds: CHUNK_SCHEMA minus the partition column.
CHUNK_FILE_SCHEMA = CHUNK_SCHEMA.remove(CHUNK_SCHEMA.get_field_index(PARTITION_COLUMN))

ERROR_SCHEMA = pa.schema(
    [
        pa.field("source_uri", pa.string(), nullable=False),
        pa.field("stage", pa.string(), nullable=False),
        pa.field("error_type", pa.string(), nullable=False),
        pa.field("message", pa.string(), nullable=False),
        pa.field("content_hash", pa.string()),
        pa.field("media_type", pa.string()),
        pa.field("chunker_version", pa.string()),
    ],
    metadata=_METADATA,
)

if set(CHUNK_SCHEMA.names) != set(Chunk.model_fields):  # pragma: no cover - import-time guard
    raise RuntimeError("CHUNK_SCHEMA is out of step with the Chunk model; update both together")


def _span_to_row(span: SourceSpan) -> dict[str, Any]:
    data = span.model_dump()
    extra = set(data) - set(_SPAN_FIELDS)
    if extra:
        raise ValueError(
            f"span kind {data.get('kind')!r} has fields {sorted(extra)} that SPAN_TYPE lacks; "
            "add them to kebab_chunk/beam/schema.py with a new SCHEMA_VERSION."
        )
    return {name: data.get(name) for name in _SPAN_FIELDS}


def chunk_to_row(chunk: Chunk) -> dict[str, Any]:
    """The Parquet row of a chunk (all CHUNK_SCHEMA columns, partition column included)."""
    row = chunk.model_dump(mode="json")
    row["source_spans"] = [_span_to_row(s) for s in chunk.source_spans]
    return row


def row_to_chunk(row: Mapping[str, Any]) -> Chunk:
    """Inverse of :func:`chunk_to_row`; accepts rows read back with the partition column."""
    spans = [
        SPAN_ADAPTER.validate_python({k: v for k, v in s.items() if v is not None})
        for s in row["source_spans"]
    ]
    fields = {name: row[name] for name in Chunk.model_fields if name != "source_spans"}
    return Chunk(**fields, source_spans=tuple(spans))


def error_to_row(error: ErrorRecord) -> dict[str, Any]:
    return {name: getattr(error, name) for name in ERROR_SCHEMA.names}


def row_to_error(row: Mapping[str, Any]) -> ErrorRecord:
    return ErrorRecord(**{name: row[name] for name in ERROR_SCHEMA.names})


def chunks_table(chunks: Iterable[Chunk]) -> pa.Table:
    """A part-file table: rows sorted by chunk_id, without the partition column."""
    rows = sorted((chunk_to_row(c) for c in chunks), key=lambda r: str(r["chunk_id"]))
    for row in rows:
        del row[PARTITION_COLUMN]
    return pa.Table.from_pylist(rows, schema=CHUNK_FILE_SCHEMA)


def errors_table(errors: Iterable[ErrorRecord]) -> pa.Table:
    """The errors table, rows in :meth:`ErrorRecord.sort_key` order."""
    rows = [error_to_row(e) for e in sorted(errors, key=ErrorRecord.sort_key)]
    return pa.Table.from_pylist(rows, schema=ERROR_SCHEMA)


def parquet_bytes(table: pa.Table) -> bytes:
    """Serialise a table to Parquet bytes (same table and pyarrow version -> same bytes)."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return bytes(sink.getvalue().to_pybytes())


def _join(root: str, *parts: str) -> str:
    return "/".join([root.rstrip("/"), *parts])


def read_chunks(output: str, columns: Sequence[str] | None = None) -> pa.Table:
    """Read ``OUTPUT/chunks`` as one table with the ``chunker_version`` column restored."""
    partitioning = pads.partitioning(
        pa.schema([pa.field(PARTITION_COLUMN, pa.string())]), flavor="hive"
    )
    dataset = pads.dataset(
        _join(output, "chunks"),
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
    return pads.dataset(_join(output, "errors"), format="parquet", schema=ERROR_SCHEMA).to_table()
