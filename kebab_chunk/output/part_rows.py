"""A chunk part file's table from its sorted spill segments, by the compiled core.

The shard writer (``_WritePartFn`` in ``kebab_chunk/beam/write.py``) merges a shard's
segments, collapses identical entries of one ``chunk_id``, decodes the rows and builds the
Arrow table: per row a few Python calls, a third of a job's worker CPU on small documents.
The core's ``shard_rows`` (``native/src/shard.rs``) does the same in one call and hands the
columns over as Arrow buffers. The table is equal to :func:`~kebab_chunk.output.schema.
rows_table`'s, so the part file has the same bytes (``tests/core/test_part_rows.py``).

The core declines (None here, and the Python path writes the shard) what it does not read
exactly as the Python path: conflicting records under one id, rows in another encoding,
text that is not UTF-8, a truncated file. Segments must be local files.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from kebab_chunk._core import core
from kebab_chunk.output.schema import CHUNK_FILE_SCHEMA, SPAN_TYPE

__all__ = ["PartRows", "core_part_rows"]

#: One shard's segments: chains of ``(path, offset, length)``, each chain sorted.
Chains = Sequence[Sequence[tuple[str, int, int]]]
#: The table, and per source ``(source_uri, rows, chunk index lines joined by "\\n")``
#: sorted by ``source_uri``.
PartRows = tuple[pa.Table, list[tuple[str, int, str]]]


def core_part_rows(chains: Chains) -> PartRows | None:
    """The part file's table and per-source counts of local ``chains``, or None when the
    core is not used or declines them (module docstring)."""
    compiled = core()
    if compiled is None:
        return None
    found = compiled.shard_rows([[tuple(s) for s in chain] for chain in chains])
    if found is None:
        return None
    return _table(found), list(found["counts"])


def _table(found: dict[str, Any]) -> pa.Table:
    rows, spans = found["rows"], found["spans"]

    def strings(name: str, length: int = rows) -> pa.Array:
        offsets, data = found[name]
        return pa.Array.from_buffers(
            pa.string(), length, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
        )

    def ints(name: str, length: int = rows) -> pa.Array:
        return pa.Array.from_buffers(pa.int64(), length, [None, pa.py_buffer(found[name])])

    def nullable_ints(name: str) -> pa.Array:
        bits, values, nulls = found[name]
        validity = None if bits is None else pa.py_buffer(bits)
        return pa.Array.from_buffers(
            pa.int64(), spans, [validity, pa.py_buffer(values)], null_count=nulls
        )

    def string_lists(name: str) -> pa.Array:
        lists, offsets, data = found[name]
        items = len(offsets) // 4 - 1
        child = pa.Array.from_buffers(
            pa.string(), items, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
        )
        return pa.ListArray.from_buffers(
            pa.list_(pa.string()), rows, [None, pa.py_buffer(lists)], children=[child]
        )

    bits, (ref_offsets, ref_data), ref_nulls = found["ref"]
    reference = pa.Array.from_buffers(
        pa.string(),
        spans,
        [
            None if bits is None else pa.py_buffer(bits),
            pa.py_buffer(ref_offsets),
            pa.py_buffer(ref_data),
        ],
        null_count=ref_nulls,
    )
    span_items = pa.StructArray.from_arrays(
        [
            strings("kind", spans),
            nullable_ints("line_start"),
            nullable_ints("line_end"),
            nullable_ints("page"),
            reference,
            ints("char_start", spans),
            ints("char_end", spans),
        ],
        fields=list(SPAN_TYPE),
    )
    columns = {
        "chunk_id": strings("chunk_id"),
        "doc_id": strings("doc_id"),
        "source_uri": strings("source_uri"),
        "policy_hash": strings("policy_hash"),
        "parser_version": strings("parser_version"),
        "position": ints("position"),
        "text": strings("text"),
        "heading_path": string_lists("heading_path"),
        "captions": string_lists("captions"),
        "block_ids": string_lists("block_ids"),
        "source_spans": pa.ListArray.from_buffers(
            pa.list_(SPAN_TYPE),
            rows,
            [None, pa.py_buffer(found["span_offsets"])],
            children=[span_items],
        ),
        "token_estimate": ints("token_estimate"),
        "content_hash": strings("content_hash"),
        "embed_text": strings("embed_text"),
        "embed_tokens": ints("embed_tokens"),
    }
    return pa.Table.from_arrays(
        [columns[name] for name in CHUNK_FILE_SCHEMA.names], schema=CHUNK_FILE_SCHEMA
    )
