"""Spill entries: one chunk record as the external sort of ``WriteChunks`` stores it.

An entry is ``chunk_id``, NUL, the record's chunk index line (ASCII, no NUL:
:mod:`kebab_chunk.output.chunk_index`), NUL, the encoded row (:mod:`kebab_chunk.beam.coders`
reads every form). The line is made where the chunk is, so the shard writer, whose step
holds the most memory, does not hash.

No Beam here: the helper process that chunks a document makes its entries itself
(:func:`row_entry`), so a chunk crosses from the helper to the worker as a few bytes in one
batch per document and label, never as a pickled :class:`~kebab_chunk.model.Chunk` and
never as one Beam element of its own. Rows are written with :mod:`marshal` format 2: C
speed both ways, lone surrogates and integers of any size kept, and (unlike format 3 and
later, which write back-references by reference count) the same bytes for equal rows, so
identical duplicates of an id still collapse in the writer.
"""

from __future__ import annotations

import marshal
from typing import Any

from kebab_chunk.model import Chunk
from kebab_chunk.output.chunk_index import line_of_row
from kebab_chunk.output.schema import CHUNK_SCHEMA, SPAN_TYPE

__all__ = [
    "MARSHAL",
    "ROW_FIELDS",
    "SEP",
    "entry_id",
    "entry_record",
    "make_entry",
    "row_entry",
    "row_of",
]

SEP = b"\x00"
#: Flag byte of a row encoded by :func:`row_entry` (marshal format 2 of the row tuple).
MARSHAL = b"M"
_MARSHAL_VERSION = 2
#: Field order of an encoded row: the Parquet columns, partition column included.
ROW_FIELDS: tuple[str, ...] = tuple(CHUNK_SCHEMA.names)
_SPAN_FIELDS: tuple[str, ...] = tuple(f.name for f in SPAN_TYPE)
_SPANS = ROW_FIELDS.index("source_spans")
_ID = ROW_FIELDS.index("chunk_id")
_checked_span_types: set[type] = set()

Row = tuple[Any, ...]


def make_entry(chunk_id: str, data: bytes, line: str = "") -> bytes:
    """One spill entry (module docstring) of an encoded row and its index line."""
    return chunk_id.encode() + SEP + line.encode("ascii") + SEP + data


def entry_record(record: bytes) -> tuple[str, bytes]:
    """(index line, encoded row) of what follows an entry's ``chunk_id`` and NUL."""
    cut = record.index(SEP)
    return record[:cut].decode("ascii"), record[cut + 1 :]


def entry_id(entry: bytes) -> bytes:
    """The ``chunk_id`` (UTF-8 bytes) of an entry."""
    return entry[: entry.index(SEP)]


def row_entry(row: Row) -> bytes:
    """The spill entry of a row tuple in :data:`ROW_FIELDS` order."""
    data = MARSHAL + marshal.dumps(row, _MARSHAL_VERSION)
    return make_entry(row[_ID], data, line_of_row(row))


def decode_marshal(data: bytes) -> Row:
    """The row of :func:`row_entry`'s encoded part (flag byte included)."""
    row: Row = marshal.loads(memoryview(data)[1:])
    return row


def _span_tuple(span: Any) -> tuple[Any, ...]:
    kind = type(span)
    if kind not in _checked_span_types:
        extra = set(kind.model_fields) - set(_SPAN_FIELDS)
        if extra:
            raise ValueError(
                f"span kind {span.kind!r} has fields {sorted(extra)} that SPAN_TYPE lacks; "
                "add them to kebab_chunk/output/schema.py with a new SCHEMA_VERSION."
            )
        _checked_span_types.add(kind)
    values = span.__dict__  # a missing field via getattr takes pydantic's slow error path
    return tuple(map(values.get, _SPAN_FIELDS))


def row_of(chunk: Chunk) -> Row:
    """The chunk as a row tuple in :data:`ROW_FIELDS` order (spans as SPAN_TYPE tuples)."""
    row = list(map(chunk.__dict__.__getitem__, ROW_FIELDS))
    row[_SPANS] = tuple(map(_span_tuple, chunk.source_spans))
    return tuple(row)

