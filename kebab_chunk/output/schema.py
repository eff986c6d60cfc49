"""The explicit Arrow schemas of the output datasets, and record <-> row conversion.

This is the one place the on-disk layout of docs/internals/contract.md, "Output layout" is defined:

* ``chunks/chunker_version=<label>/part-*.parquet`` holds :data:`CHUNK_FILE_SCHEMA`: every
  :class:`~kebab_chunk.model.Chunk` field except ``chunker_version``, which is the hive
  partition column and lives in the directory name only (Spark rejects data files that
  repeat a partition column; pyarrow and DuckDB restore it from the path).
* ``errors/part-*.parquet`` holds :data:`ERROR_SCHEMA`, one row per dead letter.
* ``documents/part-*.parquet`` holds :data:`DOCUMENT_SCHEMA`, one row per matched file
  (:class:`~kebab_chunk.output.records.DocumentRow`), sorted by ``source_uri``.

Spans are a list of structs with every field any span kind has; fields a kind does not use
are null (``page`` and ``ref`` for line spans, ``line_start``/``line_end`` for page spans,
the line fields for element spans).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from kebab_chunk.model import SPAN_ADAPTER, Chunk, SourceSpan
from kebab_chunk.output.records import DocumentRow, ErrorRecord, IndexEntry

__all__ = [
    "BATCH_ROWS",
    "CHUNK_FILE_SCHEMA",
    "CHUNK_SCHEMA",
    "DOCUMENT_SCHEMA",
    "ERROR_SCHEMA",
    "INDEX_ENTRY_TYPE",
    "PARTITION_COLUMN",
    "SCHEMA_VERSION",
    "SPAN_TYPE",
    "WRITE_BATCH_ROWS",
    "chunk_to_row",
    "chunks_table",
    "document_to_row",
    "documents_table",
    "error_to_row",
    "errors_table",
    "parquet_bytes",
    "row_to_chunk",
    "row_to_document",
    "row_to_error",
    "rows_table",
    "write_parquet",
]

#: Bumped whenever a column is removed or retyped, or added where readers need it in
#: every output. v2 added ``embed_text`` and ``embed_tokens`` to chunk rows
#: (docs/internals/contract.md); the documents table's ``chunk_index`` came within v2, because an
#: output without it stays readable (see DOCUMENT_SCHEMA).
SCHEMA_VERSION = "kebab-chunk-parquet-v2"
PARTITION_COLUMN = "chunker_version"
#: Rows the Parquet writer encodes at a time (pyarrow's default, pinned: see parquet_bytes).
WRITE_BATCH_ROWS = 1024
#: Rows per Arrow chunk of rows_table: a multiple of WRITE_BATCH_ROWS (one, to keep the
#: decoded Python rows alive beside the Arrow data small; see rows_table).
BATCH_ROWS = WRITE_BATCH_ROWS
#: The allocator of part-file Arrow data: malloc, not pyarrow's default mimalloc, which kept
#: about twice the table resident while a shard was built (measured, docs/internals/decisions.md).
_POOL = pa.system_memory_pool()
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
        pa.field("embed_text", pa.string(), nullable=False),
        pa.field("embed_tokens", pa.int64(), nullable=False),
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

#: One entry of a documents row's ``chunk_index`` (kebab_chunk/output/chunk_index.py).
INDEX_ENTRY_TYPE = pa.struct(
    [pa.field(name, pa.string(), nullable=False) for name in IndexEntry._fields]
)

#: One row per matched file (kebab_chunk.output.records.DocumentRow, field for field).
#: ``chunk_index``, the last column, came later within SCHEMA_VERSION v2: an output
#: written before it has documents files without it, which readers still accept
#: (kebab_chunk/output/finished.py; read back as an empty index).
DOCUMENT_SCHEMA = pa.schema(
    [
        pa.field("source_uri", pa.string(), nullable=False),
        pa.field("doc_id", pa.string()),
        pa.field("media_type", pa.string()),
        pa.field("parser_version", pa.string()),
        pa.field("content_hash", pa.string()),
        pa.field("size_bytes", pa.int64(), nullable=False),
        pa.field("title", pa.string()),
        pa.field("front_matter", pa.string()),
        pa.field("warnings", _STRINGS, nullable=False),
        pa.field("pages", pa.int64()),
        pa.field("blocks", pa.int64()),
        pa.field(
            "chunks_by_label",
            pa.list_(
                pa.struct(
                    [
                        pa.field("label", pa.string(), nullable=False),
                        pa.field("count", pa.int64(), nullable=False),
                    ]
                )
            ),
            nullable=False,
        ),
        pa.field("status", pa.string(), nullable=False),
        pa.field(
            "errors",
            pa.list_(
                pa.struct(
                    [
                        pa.field("stage", pa.string(), nullable=False),
                        pa.field("error_type", pa.string(), nullable=False),
                    ]
                )
            ),
            nullable=False,
        ),
        pa.field("chunk_index", pa.list_(INDEX_ENTRY_TYPE), nullable=False),
    ],
    metadata=_METADATA,
)

if set(CHUNK_SCHEMA.names) != set(Chunk.model_fields):  # pragma: no cover - import-time guard
    raise RuntimeError("CHUNK_SCHEMA is out of step with the Chunk model; update both together")
if DOCUMENT_SCHEMA.names != [f.name for f in dataclasses.fields(DocumentRow)]:  # pragma: no cover
    raise RuntimeError("DOCUMENT_SCHEMA is out of step with DocumentRow; update both together")


def _span_to_row(span: SourceSpan) -> dict[str, Any]:
    data = span.model_dump()
    extra = set(data) - set(_SPAN_FIELDS)
    if extra:
        raise ValueError(
            f"span kind {data.get('kind')!r} has fields {sorted(extra)} that SPAN_TYPE lacks; "
            "add them to kebab_chunk/output/schema.py with a new SCHEMA_VERSION."
        )
    return {name: data.get(name) for name in _SPAN_FIELDS}


def chunk_to_row(chunk: Chunk) -> dict[str, Any]:
    """The Parquet row of a chunk (all CHUNK_SCHEMA columns, partition column included)."""
    if chunk.embed_text is None or chunk.embed_tokens is None:
        raise ValueError(
            f"chunk {chunk.chunk_id} has no embed_text; records are written only after "
            "kebab_chunk.chunkers.embedding.with_embedding filled it in."
        )
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


def document_to_row(document: DocumentRow) -> dict[str, Any]:
    """The Parquet row of a documents-table record (pairs become structs)."""
    row = {name: getattr(document, name) for name in DOCUMENT_SCHEMA.names}
    row["warnings"] = list(document.warnings)
    row["chunks_by_label"] = [{"label": k, "count": n} for k, n in document.chunks_by_label]
    row["errors"] = [{"stage": s, "error_type": t} for s, t in document.errors]
    row["chunk_index"] = [e._asdict() for e in document.chunk_index]
    return row


def row_to_document(row: Mapping[str, Any]) -> DocumentRow:
    """Inverse of :func:`document_to_row` (rows as pyarrow's ``to_pylist`` or Beam's
    Parquet reader give them). A row without ``chunk_index`` (or with a null one), from an
    output written before the column existed, has an empty index."""
    values = {name: row[name] for name in DOCUMENT_SCHEMA.names if name != "chunk_index"}
    values["warnings"] = tuple(row["warnings"])
    values["chunks_by_label"] = tuple((c["label"], c["count"]) for c in row["chunks_by_label"])
    values["errors"] = tuple((e["stage"], e["error_type"]) for e in row["errors"])
    entries = row.get("chunk_index") or ()
    values["chunk_index"] = tuple(
        IndexEntry(e["label"], e["chunk_id"], e["content_digest"], e["record_digest"])
        for e in entries
    )
    return DocumentRow(**values)


def documents_table(documents: Iterable[DocumentRow]) -> pa.Table:
    """A documents part-file table, rows sorted by ``source_uri`` (one row per file).

    The table of :func:`document_to_row`'s rows, built a column at a time: pairs and index
    entries are tuples, which Arrow reads as structs by position, so no dict is made per
    row (the writer of the manifest's documents makes one row per file of the corpus).
    """
    rows = sorted(documents, key=lambda d: d.source_uri)
    arrays = [
        pa.array([getattr(d, field.name) for d in rows], type=field.type, memory_pool=_POOL)
        for field in DOCUMENT_SCHEMA
    ]
    return pa.Table.from_arrays(arrays, schema=DOCUMENT_SCHEMA)


def chunks_table(chunks: Iterable[Chunk]) -> pa.Table:
    """A part-file table: rows sorted by chunk_id, without the partition column."""
    rows = sorted((chunk_to_row(c) for c in chunks), key=lambda r: str(r["chunk_id"]))
    for row in rows:
        del row[PARTITION_COLUMN]
    return pa.Table.from_pylist(rows, schema=CHUNK_FILE_SCHEMA)


def rows_table(rows: Iterable[Sequence[Any]]) -> pa.Table:
    """A part-file table from row tuples in CHUNK_SCHEMA column order, already sorted.

    The same Parquet bytes as :func:`chunks_table` for the Chunks of those rows, built
    from plain values (no Chunk objects, no per-row dicts) and :data:`BATCH_ROWS` rows at a
    time, so only one batch of Python values is alive beside the Arrow data: this is what
    bounds the shard writer's memory. Spans are tuples in SPAN_TYPE field order.

    Chunking and bytes (see :func:`parquet_bytes`): the writer cuts a flat column into
    batches of :data:`WRITE_BATCH_ROWS` rows, so ``BATCH_ROWS``-row chunks write what one
    piece writes; a list column is cut by leaf values, so chunk edges move its page and
    dictionary-fallback points once its dictionary overflows (seen at 27,000 rows). List
    columns (the small ones) are therefore combined into one piece; the flat ones (the
    text) stay in chunks, so no second copy of them is made.
    """
    batches, remaining = [], iter(rows)
    while batch := list(itertools.islice(remaining, BATCH_ROWS)):
        batches.append(_batch_table(batch))
        batch.clear()  # before the next batch is decoded, not after
    if not batches:
        return CHUNK_FILE_SCHEMA.empty_table()
    table = pa.concat_tables(batches)
    del batches
    for i, column in enumerate(table.columns):
        if pa.types.is_nested(column.type) and column.num_chunks > 1:
            whole = pa.chunked_array([pa.concat_arrays(column.chunks, memory_pool=_POOL)])
            table = table.set_column(i, table.field(i), whole)
    return table


def _batch_table(rows: Sequence[Sequence[Any]]) -> pa.Table:
    arrays = [
        pa.array([row[i] for row in rows], type=CHUNK_SCHEMA.field(i).type, memory_pool=_POOL)
        for i, name in enumerate(CHUNK_SCHEMA.names)
        if name != PARTITION_COLUMN
    ]
    return pa.Table.from_arrays(arrays, schema=CHUNK_FILE_SCHEMA)


def errors_table(errors: Iterable[ErrorRecord]) -> pa.Table:
    """The errors table, rows in :meth:`ErrorRecord.sort_key` order."""
    rows = [error_to_row(e) for e in sorted(errors, key=ErrorRecord.sort_key)]
    return pa.Table.from_pylist(rows, schema=ERROR_SCHEMA)


def parquet_bytes(table: pa.Table) -> bytes:
    """Serialise a table to Parquet bytes (same table and pyarrow version -> same bytes).

    The writer encodes a flat column :data:`WRITE_BATCH_ROWS` rows at a time, restarting
    at each chunk, so a flat column made of chunks of a multiple of that many rows gives
    the bytes of the same column in one piece (list columns do not: see
    :func:`rows_table`); the batch size is set here, not left to the library's default,
    to keep that true.
    """
    sink = pa.BufferOutputStream()
    write_parquet(table, sink)
    return bytes(sink.getvalue().to_pybytes())


def write_parquet(table: pa.Table, sink: Any) -> None:
    """Write :func:`parquet_bytes`'s bytes to ``sink`` (a writable file object or stream).

    Lets the shard writer stream a file to its destination instead of holding the
    serialised copy in memory beside the table; the writer settings live here only.
    """
    pq.write_table(
        table, sink, compression="zstd", write_batch_size=WRITE_BATCH_ROWS, memory_pool=_POOL
    )
