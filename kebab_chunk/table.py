"""One document's chunk records as an Arrow table, without one Python object per chunk.

:func:`chunk_table` returns the rows a pipeline run writes for a document under one label
(every :data:`~kebab_chunk.output.schema.CHUNK_SCHEMA` column, ``embed_text`` and
``embed_tokens`` filled in), in document order. For Markdown parsed by ``md-pyromark-v1``
and chunked by an md-heading engine label (``md-heading-v2``, ``md-heading-v3``) under the
``bytes-3`` or ``chars`` tokenizer, the compiled core (:mod:`kebab_chunk._core`) builds
the rows from the decoded text in one pass: blocks and chunks never become Python
objects. Every other case, and any document the core declines, takes the Python path:
parse, chunk, :func:`~kebab_chunk.chunkers.embedding.with_embedding`. The two give the
same table (the differential tests in ``tests/core/`` compare them).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from kebab_chunk._core import core
from kebab_chunk.chunkers._budget import budget_of
from kebab_chunk.chunkers.embedding import with_embedding
from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE, get_chunker, label
from kebab_chunk.chunkers.rules import MdHeadingRules
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.model.ids import content_hash
from kebab_chunk.output.schema import CHUNK_SCHEMA, SPAN_TYPE, chunk_to_row
from kebab_chunk.parsers._assemble import Assembler
from kebab_chunk.parsers._front_matter import read_front_matter
from kebab_chunk.parsers._source import newline_view
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits
from kebab_chunk.parsers.decode import decode_text
from kebab_chunk.parsers.registry import (
    DEFAULT_PARSER_VERSIONS,
    detect_media_type,
    parse_document,
)
from kebab_chunk.tokenizers import get_tokenizer

__all__ = ["chunk_table"]

_MARKDOWN = "text/markdown"
_PARSER = "md-pyromark-v1"
_NATIVE_TOKENIZERS = ("bytes-3", "chars")
_ENGINE = "kebab_chunk.chunkers._md_heading:MdHeadingChunker"


def chunk_table(
    raw: bytes,
    source_uri: str,
    label_name: str | None = None,
    policy: ChunkPolicy | None = None,
    *,
    media_type: str | None = None,
    limits: ParseLimits = DEFAULT_LIMITS,
) -> pa.Table:
    """The chunk rows of one document under one label, in document order.

    ``label_name`` defaults to the media type's default label, ``policy`` to the default
    policy; ``media_type`` is detected from the name and bytes when not given, and the
    media type's default parser reads the document. Errors are those of
    :func:`~kebab_chunk.parsers.registry.parse_document` and of the label's chunker.
    """
    policy = policy or ChunkPolicy()
    media = media_type or detect_media_type(source_uri, raw[:8])
    name = label_name
    if name is None and media in DEFAULT_LABELS_BY_MEDIA_TYPE:
        name = DEFAULT_LABELS_BY_MEDIA_TYPE[media][0]
    if (
        name is not None
        and media == _MARKDOWN
        and DEFAULT_PARSER_VERSIONS[_MARKDOWN] == _PARSER
        and label(name).engine == _ENGINE
        and policy.tokenizer in _NATIVE_TOKENIZERS
    ):
        compiled = core()
        if compiled is not None:
            table = _core_table(compiled, raw, source_uri, name, policy, limits)
            if table is not None:
                return table
    doc = parse_document(raw, source_uri, media, limits=limits)
    chunker = get_chunker(name or DEFAULT_LABELS_BY_MEDIA_TYPE[doc.media_type][0])
    rows = [chunk_to_row(c) for c in with_embedding(chunker.chunk(doc, policy), chunker, policy)]
    return pa.Table.from_pylist(rows, schema=CHUNK_SCHEMA)


def _core_table(
    compiled: Any,
    raw: bytes,
    source_uri: str,
    name: str,
    policy: ChunkPolicy,
    limits: ParseLimits,
) -> pa.Table | None:
    """The rows by the compiled core, or None when it declines the document."""
    assembler = Assembler(raw, source_uri, _MARKDOWN, _PARSER, limits)  # the time budget
    text, _ = decode_text(raw, source_uri)
    front = read_front_matter(text, newline_view(text))
    rules = label(name).rules_as(MdHeadingRules)
    budget = budget_of(policy, get_tokenizer(policy.tokenizer))
    found = compiled.chunk_markdown(
        text,
        0 if front is None else front.end,
        assembler.doc_id,
        name,
        policy.policy_hash,
        budget,
        min(policy.overlap_tokens, max(0, budget - 1)),
        policy.merge_peers,
        policy.tokenizer,
        rules.bound_context_lines,
        rules.embed_headings == "leading",
        limits.max_blocks,
    )
    if found is None:
        return None
    assembler.check_time()
    count: int = found["rows"]
    spans = found["span_offsets"]
    flat = len(found["line_start"]) // 8  # int64 values: one per span

    def ints(name: str, length: int = count) -> pa.Array:
        return pa.Array.from_buffers(pa.int64(), length, [None, pa.py_buffer(found[name])])

    def strings(name: str) -> pa.Array:
        offsets, data = found[name]
        return pa.Array.from_buffers(
            pa.string(), count, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
        )

    def string_lists(name: str) -> pa.Array:
        lists, offsets, data = found[name]
        items = (len(offsets) - 4) // 4
        child = pa.Array.from_buffers(
            pa.string(), items, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
        )
        return pa.ListArray.from_buffers(
            pa.list_(pa.string()), count, [None, pa.py_buffer(lists)], children=[child]
        )

    def repeated(value: str) -> pa.Array:
        return pa.repeat(value, count).cast(pa.string())

    span_items = pa.StructArray.from_arrays(
        [
            repeated_n("lines", flat),
            ints("line_start", flat),
            ints("line_end", flat),
            pa.nulls(flat, pa.int64()),
            pa.nulls(flat, pa.string()),
            ints("char_start", flat),
            ints("char_end", flat),
        ],
        fields=list(SPAN_TYPE),
    )
    columns = [
        strings("chunk_id"),
        repeated(assembler.doc_id),
        repeated(source_uri),
        repeated(name),
        repeated(policy.policy_hash),
        repeated(_PARSER),
        pa.array(range(count), pa.int64()),
        strings("text"),
        string_lists("heading_path"),
        string_lists("captions"),
        string_lists("block_ids"),
        pa.ListArray.from_buffers(
            pa.list_(SPAN_TYPE), count, [None, pa.py_buffer(spans)], children=[span_items]
        ),
        ints("token_estimate"),
        repeated(content_hash(raw)),
        strings("embed_text"),
        ints("embed_tokens"),
    ]
    return pa.Table.from_arrays(columns, schema=CHUNK_SCHEMA)


def repeated_n(value: str, count: int) -> pa.Array:
    """``value`` ``count`` times, as a plain (not run-end encoded) string array."""
    return pa.repeat(value, count).cast(pa.string())
