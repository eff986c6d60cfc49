"""The chunk index of the documents table: per written chunk, its id and two digests.

Each row of ``OUTPUT/documents`` lists the chunk records written for its file
(:data:`~kebab_chunk.output.schema.DOCUMENT_SCHEMA`, column ``chunk_index``), one
:class:`IndexEntry` per record, so a later run can tell which chunks of a document were
added, removed, modified (re-embed) or relocated (metadata only) from the documents table
alone, without reading a chunk record (docs/internals/contract.md, "Documents table"):

* ``content_digest`` — ``h([text, heading_path, captions, token_estimate])[:16]``: the
  fields whose change means the chunk must be embedded again (:data:`CONTENT_FIELDS`, the
  same set ``kebab-chunk diff`` compares to call an id ``modified``);
* ``record_digest`` — ``h([every CHUNK_SCHEMA column, in order])[:16]``, spans as lists in
  ``SPAN_TYPE`` field order (null for the fields a kind lacks): any change to the record
  (position, spans, metadata, the text to embed) changes it.

``h`` is blake3 of RFC 8785 canonical JSON (:func:`kebab_chunk.model.ids.h`), so a digest
depends on the values alone. A record holding what RFC 8785 refuses (a lone surrogate, an
integer beyond 2**53) has no digest: the functions raise, as Parquet refuses such text too.

Pure functions of plain values (no Beam): the shard writer calls :func:`entry_of_row` once
per written chunk with the decoded row tuple it already holds, and :func:`entry_of_chunk`
gives the same entry for the same record as a :class:`~kebab_chunk.model.Chunk`.
:class:`IndexEntry` itself is defined beside :class:`~kebab_chunk.output.records.DocumentRow`,
which holds it (the schema module reads it back, and this module needs the schema), and is
exported here with the functions that make it.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from blake3 import blake3 as _blake3

from kebab_chunk.model import Chunk
from kebab_chunk.model.ids import canon
from kebab_chunk.output.records import IndexEntry
from kebab_chunk.output.schema import CHUNK_SCHEMA, SPAN_TYPE, chunk_to_row

__all__ = [
    "CONTENT_FIELDS",
    "DIGEST_CHARS",
    "RECORD_FIELDS",
    "IndexEntry",
    "content_digest",
    "entry_of_chunk",
    "entry_of_row",
    "index_column",
    "line_of_row",
    "merge_packed",
    "pack",
    "packed_line",
    "record_digest",
    "row_of_chunk",
    "unpack",
]

#: The chunk fields whose change means re-embedding, in digest order (``diff`` compares
#: the same set: an id whose content differs is ``modified`` there).
CONTENT_FIELDS: tuple[str, ...] = ("text", "heading_path", "captions", "token_estimate")
#: Every chunk column in CHUNK_SCHEMA order (partition column included): the order of a
#: row tuple and of the list ``record_digest`` hashes.
RECORD_FIELDS: tuple[str, ...] = tuple(CHUNK_SCHEMA.names)
#: Hex characters kept of each blake3 digest (64 bits: collisions between the versions
#: of one chunk id are what matters, and those are few).
DIGEST_CHARS = 16

_TEXT, _HEADINGS, _CAPTIONS, _TOKENS = (RECORD_FIELDS.index(n) for n in CONTENT_FIELDS)
_ID = RECORD_FIELDS.index("chunk_id")
_LABEL = RECORD_FIELDS.index("chunker_version")
_SPANS = RECORD_FIELDS.index("source_spans")
_SPAN_FIELDS: tuple[str, ...] = tuple(f.name for f in SPAN_TYPE)
_INTS = tuple(i for i, f in enumerate(CHUNK_SCHEMA) if pa.types.is_integer(f.type))
_SAFE_INT = 2**53  # RFC 8785 writes integers exactly only within IEEE-754 precision


def _refuse(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not a record value")


#: Compact JSON with non-ASCII kept, which for strings, sequences, nulls and safe integers
#: is the text RFC 8785 gives (the escaper kebab_chunk.model.ids.canon relies on too).
#: CPython's C encoder is made once: json.dumps and JSONEncoder.encode build one per call,
#: which cost about as much as encoding a record's short fields.
_C_ENCODER = getattr(json.encoder, "c_make_encoder", None)
_C_ENCODE = (
    None
    if _C_ENCODER is None  # pragma: no cover - Python without the C accelerator
    else _C_ENCODER(
        None, _refuse, json.encoder.encode_basestring, None, ":", ",", False, False, False
    )
)
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), check_circular=False, allow_nan=False
)


def _json(value: Sequence[Any]) -> str:
    if _C_ENCODE is not None:
        return "".join(_C_ENCODE(value, 0))
    return _ENCODER.encode(value)  # pragma: no cover - the same text, more slowly


Row = Sequence[Any]


def _digest(data: bytes) -> str:
    return _blake3(data).hexdigest()[:DIGEST_CHARS]


def _safe(value: Any) -> bool:
    return type(value) is int and -_SAFE_INT < value < _SAFE_INT


def _record_ints_safe(row: Row) -> bool:
    """Whether every integer of a record is an int RFC 8785 writes exactly (and the
    spans hold nothing but strings, such ints and nulls)."""
    for i in _INTS:
        value = row[i]
        if type(value) is not int or not -_SAFE_INT < value < _SAFE_INT:
            return False
    for span in row[_SPANS]:
        for value in span:
            if type(value) is int:
                if not -_SAFE_INT < value < _SAFE_INT:
                    return False
            elif value is not None and type(value) is not str:
                return False
    return True


def _canonical(value: Sequence[Any], ints_safe: bool) -> bytes:
    """RFC 8785 bytes of ``value`` (strings, safe ints, nulls and nested sequences of
    them): compact JSON when every integer is safe and the text is valid UTF-8, else
    :func:`~kebab_chunk.model.ids.canon`, which writes or refuses what that cannot."""
    if ints_safe:
        try:
            return _json(value).encode("utf-8")
        except (UnicodeEncodeError, TypeError, ValueError):
            pass
    return canon(value)


def content_digest(row: Row) -> str:
    """``h([text, heading_path, captions, token_estimate])[:16]`` of a row tuple in
    :data:`RECORD_FIELDS` order."""
    value = (row[_TEXT], row[_HEADINGS], row[_CAPTIONS], row[_TOKENS])
    return _digest(_canonical(value, _safe(row[_TOKENS])))


def record_digest(row: Row) -> str:
    """``h(row)[:16]`` of a row tuple in :data:`RECORD_FIELDS` order, every column (the
    label too), spans as sequences in SPAN_TYPE field order."""
    return _digest(_canonical(row, _record_ints_safe(row)))


def entry_of_row(row: Row, label: str | None = None) -> IndexEntry:
    """The entry of a row tuple in :data:`RECORD_FIELDS` order (as the shard writer holds
    it: kebab_chunk/beam/coders.py, ``ROW_FIELDS``). ``label``, when given, is the row's
    ``chunker_version`` (the writer's shared string, to keep one copy per shard)."""
    return IndexEntry(
        row[_LABEL] if label is None else label,
        row[_ID],
        content_digest(row),
        record_digest(row),
    )


def line_of_row(row: Row) -> str:
    """The :data:`Packed` line of a row tuple (as :func:`entry_of_row` gives the entry)."""
    return f"{row[_ID]}\t{content_digest(row)}\t{record_digest(row)}"


def row_of_chunk(chunk: Chunk) -> tuple[Any, ...]:
    """The row tuple of a written chunk: :data:`RECORD_FIELDS` order, lists as tuples,
    spans as tuples in SPAN_TYPE field order (what the shard writer decodes; ValueError for
    a chunk without ``embed_text``, which is never written)."""
    row = chunk_to_row(chunk)
    row["source_spans"] = [tuple(s[f] for f in _SPAN_FIELDS) for s in row["source_spans"]]
    return tuple(tuple(v) if isinstance(v, list) else v for v in map(row.get, RECORD_FIELDS))


def entry_of_chunk(chunk: Chunk) -> IndexEntry:
    """The entry of a chunk record: the same as :func:`entry_of_row` of its row."""
    return entry_of_row(row_of_chunk(chunk))


#: A label's entries of one document as they travel through a run: one text of lines
#: ``chunk_id<TAB>content_digest<TAB>record_digest``, sorted by chunk_id. One string per
#: (document, label) instead of one tuple of four strings per record keeps the manifest's
#: join and the documents writer small (an in-memory runner holds what they group).
Packed = tuple[str, str]  # (label, lines)


def packed_line(entry: IndexEntry) -> str:
    """One entry's line in a :data:`Packed` text (its label is the text's)."""
    return f"{entry.chunk_id}\t{entry.content_digest}\t{entry.record_digest}"


def pack(label: str, lines: Iterable[str]) -> Packed:
    """A label's lines (any order) as one :data:`Packed` text."""
    return label, "\n".join(sorted(lines))


def merge_packed(parts: Iterable[Packed]) -> tuple[Packed, ...]:
    """Several shards' texts of one document -> one per label, sorted by label."""
    lines: dict[str, list[str]] = {}
    for label, text in parts:
        if text:
            lines.setdefault(label, []).extend(text.split("\n"))
    return tuple(pack(label, lines[label]) for label in sorted(lines))


def unpack(packed: Iterable[Packed]) -> tuple[IndexEntry, ...]:
    """The entries of packed texts, sorted by (label, chunk_id)."""
    entries = []
    for label, text in sorted(packed):
        for line in text.split("\n") if text else ():
            chunk_id, content, record = line.split("\t")
            entries.append(IndexEntry(label, chunk_id, content, record))
    return tuple(entries)


def index_column(packed_rows: Sequence[Sequence[Packed]], entry_type: pa.DataType) -> pa.Array:
    """The documents table's ``chunk_index`` column from each row's packed texts, built
    with Arrow's string kernels: the writer of a documents part file never holds one Python
    object per record (a list of dicts made the in-memory runner's peak grow by about
    1.3 KB per chunk). ``entry_type`` is the column's struct type; the values equal
    :func:`unpack`'s entries."""
    labels: list[str] = []
    texts: list[str] = []
    pairs_per_row: list[int] = []
    for packed in packed_rows:
        pairs_per_row.append(len(packed))
        for label, text in packed:
            labels.append(label)
            texts.append(text)
    lines = pc.split_pattern(pa.array(texts, pa.string()), "\n")
    fields = pc.split_pattern(lines.flatten(), "\t")
    label_of_line = pa.array(labels, pa.string()).take(pc.list_parent_indices(lines))
    values = pa.StructArray.from_arrays(
        [label_of_line, *(pc.list_element(fields, i) for i in range(3))],
        fields=list(entry_type),
    )
    per_pair = pc.list_value_length(lines).to_pylist()
    offsets = [0]
    pair = 0
    for n in pairs_per_row:
        offsets.append(offsets[-1] + sum(per_pair[pair : pair + n]))
        pair += n
    return pa.ListArray.from_arrays(
        pa.array(offsets, pa.int32()), values, type=pa.list_(entry_type)
    )
