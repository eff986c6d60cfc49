# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its coders are untyped callables.)
"""A compact, deterministic Beam coder for :class:`~kebab_chunk.model.Chunk`.

Why: a PCollection element that crosses a fusion break is encoded, and the in-memory
DirectRunner keeps every encoded element of such a PCollection until the next stage has
read it. Beam's fallback for a pydantic model is pickle (about 1.7 KB per typical chunk,
class references and field names included). Here a chunk is its Parquet row as a tuple of
plain values (:data:`~kebab_chunk.output.schema.CHUNK_SCHEMA` column order, each span a tuple
in :data:`~kebab_chunk.output.schema.SPAN_TYPE` field order), written with Beam's own
primitive encoding and compressed with zstd level 1 (pyarrow's codec: faster than zlib
here at the same size): about 0.64 KB for the same chunk, and the shard writer builds its
Arrow columns straight from these tuples without making Chunk objects.

Format: one flag byte, then the payload. ``S`` — the uncompressed length (4 bytes, little
endian), then zstd of the FastPrimitivesCoder bytes of the row tuple (every normal chunk).
``M`` — marshal format 2 of the row tuple: the spill entries of WriteChunks
(:mod:`kebab_chunk.output.spill_entry`, Beam-free, so the helper process makes them).
``J`` — the row as ASCII JSON, for what the primitive encoding refuses (a string with a
lone surrogate), so any valid Chunk round-trips (integers beyond 64 bits Beam's encoding
carries itself, pickled). Equal chunks give equal bytes with the same pyarrow build (the
encoding is a function of the field values alone; there is no memo as in pickle).
"""

from __future__ import annotations

import json
import struct
from typing import Any

import pyarrow as pa
from apache_beam import coders
from apache_beam.coders.typecoders import registry

from kebab_chunk.model import SPAN_ADAPTER, Chunk
from kebab_chunk.output.schema import SPAN_TYPE
from kebab_chunk.output.spill_entry import MARSHAL, ROW_FIELDS, decode_marshal, row_of

__all__ = [
    "ROW_FIELDS",
    "ChunkCoder",
    "chunk_of",
    "decode_chunk",
    "decode_row",
    "encode_chunk",
    "row_of",
]

_SPAN_FIELDS: tuple[str, ...] = tuple(f.name for f in SPAN_TYPE)
_SPANS = ROW_FIELDS.index("source_spans")
_STRING_LISTS = tuple(ROW_FIELDS.index(n) for n in ("heading_path", "captions", "block_ids"))
_PRIMITIVES = coders.FastPrimitivesCoder().get_impl()
_ZSTD, _JSON = b"S", b"J"
_CODEC = pa.Codec("zstd", compression_level=1)
_LENGTH = struct.Struct("<I")

Row = tuple[Any, ...]


def encode_chunk(chunk: Chunk) -> bytes:
    """The chunk's bytes in the format of the module docstring."""
    row = row_of(chunk)
    try:
        raw: bytes = _PRIMITIVES.encode(row)
        packed: bytes = _CODEC.compress(raw, asbytes=True)
        return _ZSTD + _LENGTH.pack(len(raw)) + packed
    except UnicodeEncodeError:
        return _JSON + json.dumps(row, ensure_ascii=True, separators=(",", ":")).encode()


def decode_row(data: bytes) -> Row:
    """The row tuple of :func:`encode_chunk`'s bytes, without building a Chunk."""
    flag = data[:1]
    if flag == MARSHAL:
        return decode_marshal(data)
    if flag == _ZSTD:
        (size,) = _LENGTH.unpack_from(data, 1)
        raw = _CODEC.decompress(memoryview(data)[5:], decompressed_size=size, asbytes=True)
        row: Row = _PRIMITIVES.decode(raw)
        return row
    if flag == _JSON:
        values = json.loads(data[1:])
        values[_SPANS] = tuple(tuple(s) for s in values[_SPANS])
        for i in _STRING_LISTS:
            values[i] = tuple(values[i])
        return tuple(values)
    raise ValueError(f"not an encoded chunk (flag byte {flag!r}); it was not made by encode_chunk")


def chunk_of(row: Row) -> Chunk:
    """The Chunk of a row tuple (validated, so a damaged row cannot pass unnoticed)."""
    fields = dict(zip(ROW_FIELDS, row, strict=True))
    fields["source_spans"] = tuple(
        SPAN_ADAPTER.validate_python(
            {k: v for k, v in zip(_SPAN_FIELDS, span, strict=True) if v is not None}
        )
        for span in row[_SPANS]
    )
    return Chunk(**fields)


def decode_chunk(data: bytes) -> Chunk:
    """Inverse of :func:`encode_chunk`."""
    return chunk_of(decode_row(data))


class ChunkCoder(coders.Coder):
    """Beam coder for Chunk elements (registered for the Chunk type hint at import)."""

    def encode(self, value: Chunk) -> bytes:
        return encode_chunk(value)

    def decode(self, encoded: bytes) -> Chunk:
        return decode_chunk(encoded)

    def is_deterministic(self) -> bool:
        return True

    def to_type_hint(self) -> type[Chunk]:
        return Chunk


registry.register_coder(Chunk, ChunkCoder)
