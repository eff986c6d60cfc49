"""Chunk records as Arrow tables, without one Python object per chunk.

:func:`chunk_tables` returns the rows a pipeline run writes for documents under one label
(every :data:`~kebab_chunk.output.schema.CHUNK_SCHEMA` column, ``embed_text`` and
``embed_tokens`` filled in), document after document, each in document order;
:func:`chunk_table` does it for one document. For UTF-8 Markdown parsed by
``md-pyromark-v1`` and chunked by an md-heading engine label (``md-heading-v2``,
``md-heading-v3``) under the ``bytes-3`` or ``chars`` tokenizer, the compiled core
(:mod:`kebab_chunk._core`) builds the rows of a whole batch in one call: blocks and chunks
never become Python objects. Every other document, and any the core declines, takes the
Python path: parse, chunk, :func:`~kebab_chunk.chunkers.embedding.with_embedding`. The two
give the same table (the differential tests in ``tests/core/`` compare them).

:func:`chunk_document_with_core` is the job's helper path (kebab_chunk/runtime/tasks.py):
one Markdown document under several labels, its rows as the spill entries the core writes
and the facts of its documents-table row, or None for the Python path.

A document that fails (undecodable, over a parse limit, refused by the chunker) raises as
:func:`~kebab_chunk.parsers.registry.parse_document` and the chunker raise; the time budget
of ``limits`` holds per document on both paths.
"""

from __future__ import annotations

import codecs
import dataclasses
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

import pyarrow as pa

from kebab_chunk._core import core
from kebab_chunk.chunkers._budget import budget_of, resolve_max_tokens
from kebab_chunk.chunkers._hybrid import warn_core
from kebab_chunk.chunkers.embedding import with_embedding
from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE, get_chunker, label
from kebab_chunk.chunkers.rules import HybridRules, MdHeadingRules
from kebab_chunk.errors import LimitExceededError
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.model.document import make_document
from kebab_chunk.model.ids import content_hash, doc_id
from kebab_chunk.output.records import DocumentFacts
from kebab_chunk.output.schema import CHUNK_SCHEMA, SPAN_TYPE, chunk_to_row
from kebab_chunk.parsers._front_matter import front_matter_end, read_front_matter
from kebab_chunk.parsers._source import newline_view
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits
from kebab_chunk.parsers.md_pyromark_v1 import nesting_warning
from kebab_chunk.parsers.registry import DEFAULT_PARSER_VERSIONS, detect_media_type, parse_document
from kebab_chunk.tokenizers import get_tokenizer

__all__ = ["CoreDocument", "chunk_document_with_core", "chunk_table", "chunk_tables"]

_MARKDOWN = "text/markdown"
_PARSER = "md-pyromark-v1"
_NATIVE_TOKENIZERS = ("bytes-3", "chars")
_ENGINE = "kebab_chunk.chunkers._md_heading:MdHeadingChunker"
_HYBRID = "kebab_chunk.chunkers._hybrid:HybridChunker"
#: Byte order marks of the encodings ``decode_text`` reads besides UTF-8.
_WIDE_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_SNIFF_BYTES = 8192
#: Arrow types of the core's columns, made once.
_STRING_LIST = pa.list_(pa.string())
_SPAN_LIST = pa.list_(SPAN_TYPE)
_SPAN_FIELDS = list(SPAN_TYPE)
#: ``doc_rows`` of a document the core panicked on (a bug in the core).
_PANICKED = -2
_log = logging.getLogger(__name__)


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
    media type's default parser reads the document.
    """
    return chunk_tables(
        [(raw, source_uri)], label_name, policy, media_type=media_type, limits=limits
    )


def chunk_tables(
    documents: Iterable[tuple[bytes, str]],
    label_name: str | None = None,
    policy: ChunkPolicy | None = None,
    *,
    media_type: str | None = None,
    limits: ParseLimits = DEFAULT_LIMITS,
) -> pa.Table:
    """The chunk rows of ``(raw, source_uri)`` documents, one after another (see
    :func:`chunk_table` for the defaults)."""
    policy = policy or ChunkPolicy()
    docs = list(documents)
    name = _core_label(label_name, policy) if docs else None
    fast = [None if name is None else _fast_input(raw, uri, name, media_type) for raw, uri in docs]
    taken = [(i, item) for i, item in enumerate(fast) if item is not None]
    compiled = core() if taken else None
    parts: list[pa.Table | None] = [None] * len(docs)
    if compiled is not None:
        whole, found = _core_rows(compiled, [item for _, item in taken], policy, limits)
        counts = list(found["doc_rows"])
        if any(found["warnings"]):
            for index, ((_, item), count) in enumerate(zip(taken, counts, strict=True)):
                if count >= 0:
                    _warn_core(item.source_uri, found, index)
        if len(taken) == len(docs) and min(counts, default=0) >= 0:
            return whole  # every document by the core: its rows are already in order
        start = 0
        for (index, item), count in zip(taken, counts, strict=True):
            if count >= 0:
                parts[index] = whole.slice(start, count)
                start += count
            elif count == _PANICKED:
                _log.warning(
                    "the compiled core failed on %s (a bug, please report it); the Python "
                    "path chunked it instead",
                    item.source_uri,
                )
    for index, (raw, uri) in enumerate(docs):
        if parts[index] is None:
            parts[index] = _python_table(raw, uri, label_name, policy, media_type, limits)
    tables = [table for table in parts if table is not None]
    return pa.concat_tables(tables) if tables else CHUNK_SCHEMA.empty_table()


class _Fast(NamedTuple):
    """A document the core may chunk: its bytes, where its body starts (code points into
    the decoded text, after any front matter) and what the rows name. (A named tuple: one
    is made per document of a batch, and a frozen dataclass costs several times more.)"""

    raw: bytes
    source_uri: str
    label: str
    body_start: int


def _core_label(label_name: str | None, policy: ChunkPolicy) -> str | None:
    """The label the core would chunk Markdown with, or None when the Python path must:
    Markdown's default parser is not md-pyromark-v1, the label is outside the engines the
    core runs, or the policy's tokenizer is one the core does not count."""
    if DEFAULT_PARSER_VERSIONS[_MARKDOWN] != _PARSER or policy.tokenizer not in _NATIVE_TOKENIZERS:
        return None
    name = label_name or DEFAULT_LABELS_BY_MEDIA_TYPE[_MARKDOWN][0]
    return name if _in_core(name) else None


def _fast_input(raw: bytes, source_uri: str, name: str, media_type: str | None) -> _Fast | None:
    """What the core needs for ``raw`` under label ``name`` (:func:`_core_label`'s), or None
    when the Python path must read it: not Markdown, or bytes ``decode_text`` would not
    read as plain UTF-8 (it warns or refuses; invalid UTF-8 past the front matter is the
    core's to decline)."""
    media = media_type or detect_media_type(source_uri, raw[:8])
    if media != _MARKDOWN:
        return None
    if raw.startswith(_WIDE_BOMS) or raw.find(b"\x00", 0, _SNIFF_BYTES) != -1:
        return None
    if not source_uri.isascii():
        try:
            source_uri.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: its id takes the general recipe
            return None
    body_start = 0
    # Front matter opens with "---" at the first byte (after a BOM); only then is the
    # text decoded here. The core decodes the rest itself and declines invalid UTF-8.
    if raw.startswith(b"---", 3 if raw.startswith(codecs.BOM_UTF8) else 0):
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            return None
        body_start = front_matter_end(text, newline_view(text))
    return _Fast(raw, source_uri, name, body_start)


@cache
def _in_core(name: str) -> bool:
    """Whether the core runs label ``name``: the md-heading engine's labels, and the hybrid
    engine's from hybrid-v2 on (hybrid-v1 records trimmed contexts and counts slice ids
    from the document's start, which the core does not do)."""
    row = label(name)
    if row.engine == _ENGINE:
        return True
    if row.engine != _HYBRID:
        return False
    rules = row.rules_as(HybridRules)
    return rules.record_whole_context and rules.ids_local_to_section


def _python_table(
    raw: bytes,
    source_uri: str,
    label_name: str | None,
    policy: ChunkPolicy,
    media_type: str | None,
    limits: ParseLimits,
) -> pa.Table:
    doc = parse_document(raw, source_uri, media_type, limits=limits)
    chunker = get_chunker(label_name or DEFAULT_LABELS_BY_MEDIA_TYPE[doc.media_type][0])
    rows = [chunk_to_row(c) for c in with_embedding(chunker.chunk(doc, policy), chunker, policy)]
    return pa.Table.from_pylist(rows, schema=CHUNK_SCHEMA)


def _core_rows(
    compiled: Any, items: Sequence[_Fast], policy: ChunkPolicy, limits: ParseLimits
) -> tuple[pa.Table, dict[str, Any]]:
    """The rows of ``items`` by the compiled core (all of one label: the caller's, else
    Markdown's default), and what the core says per item: ``doc_rows`` (the row count, -1
    where the core declined it, -2 where it panicked: both then take the Python path),
    ``deepest``, ``blocks`` and ``first_h1``."""
    found = _core_call(compiled, items, policy, limits, entries=False)
    return _rows_table(compiled, found, items[0].label, policy), found


def _core_call(
    compiled: Any, items: Sequence[_Fast], policy: ChunkPolicy, limits: ParseLimits, entries: bool
) -> dict[str, Any]:
    """``chunk_markdown`` of ``items``; LimitExceededError for one over the time budget."""
    name = items[0].label
    row = label(name)
    tokenizer = get_tokenizer(policy.tokenizer)
    if row.engine == _HYBRID:
        hybrid = row.rules_as(HybridRules)
        budget = resolve_max_tokens(policy, tokenizer)
        overlap = min(policy.overlap_tokens, budget // 2)  # ``_hybrid.Run``
        bound, leading, engine = hybrid.bound_context_lines, False, "hybrid"
        cut_list_markers = hybrid.cut_lists_before_markers
    else:
        rules = row.rules_as(MdHeadingRules)
        budget = budget_of(policy, tokenizer)
        overlap = min(policy.overlap_tokens, max(0, budget - 1))
        bound, leading, engine = (
            rules.bound_context_lines,
            rules.embed_headings == "leading",
            "md-heading",
        )
        cut_list_markers = False
    found: dict[str, Any] = compiled.chunk_markdown(
        [(f.raw, f.body_start, f.source_uri) for f in items],
        name,
        policy.policy_hash,
        budget,
        overlap,
        policy.merge_peers,
        policy.tokenizer,
        bound,
        leading,
        limits.max_blocks,
        entries,
        engine,
        cut_list_markers,
        policy.merge_list_items,
    )
    for f, seconds in zip(items, found["seconds"], strict=True):
        if seconds > limits.time_budget_s:
            raise LimitExceededError(
                f"{f.source_uri} took {seconds:.1f}s to parse, over time_budget_s="
                f"{limits.time_budget_s}; split the file or raise the budget."
            )
    found["budget"] = budget
    return found


def _warn_core(source_uri: str, found: dict[str, Any], index: int) -> None:
    """Log the hybrid engine's warnings for the document ``index`` of a core call, worded
    and logged as the Python engine does (for a document whose rows are kept)."""
    for warning in found["warnings"][index]:
        warn_core(None, source_uri, found["budget"], warning)


def _rows_table(compiled: Any, found: dict[str, Any], name: str, policy: ChunkPolicy) -> pa.Table:
    """The rows of one core call as a CHUNK_SCHEMA table, from the buffers it returned."""
    count = len(found["position"]) // 8
    flat = len(found["line_start"]) // 8  # int64 values: one per span

    def ints(column: str, length: int = count) -> pa.Array:
        return pa.Array.from_buffers(pa.int64(), length, [None, pa.py_buffer(found[column])])

    def repeated(value: str, length: int = count) -> pa.Array:
        offsets, data = compiled.repeat_string(value, length)
        return pa.Array.from_buffers(
            pa.string(), length, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
        )

    def strings(column: str) -> pa.Array:
        offsets, data = found[column]
        return pa.Array.from_buffers(
            pa.string(), count, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
        )

    def string_lists(column: str) -> pa.Array:
        lists, offsets, data = found[column]
        items = (len(offsets) - 4) // 4
        child = pa.Array.from_buffers(
            pa.string(), items, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
        )
        return pa.ListArray.from_buffers(
            _STRING_LIST, count, [None, pa.py_buffer(lists)], children=[child]
        )

    span_items = pa.StructArray.from_arrays(
        [
            repeated("lines", flat),
            ints("line_start", flat),
            ints("line_end", flat),
            pa.nulls(flat, pa.int64()),
            pa.nulls(flat, pa.string()),
            ints("char_start", flat),
            ints("char_end", flat),
        ],
        fields=_SPAN_FIELDS,
    )
    columns = [
        strings("chunk_id"),
        strings("doc_id"),
        strings("source_uri"),
        repeated(name),
        repeated(policy.policy_hash),
        repeated(_PARSER),
        ints("position"),
        strings("text"),
        string_lists("heading_path"),
        string_lists("captions"),
        string_lists("block_ids"),
        pa.ListArray.from_buffers(
            _SPAN_LIST,
            count,
            [None, pa.py_buffer(found["span_offsets"])],
            children=[span_items],
        ),
        ints("token_estimate"),
        strings("content_hash"),
        strings("embed_text"),
        ints("embed_tokens"),
    ]
    return pa.Table.from_arrays(columns, schema=CHUNK_SCHEMA)


@dataclass(frozen=True)
class CoreDocument:
    """One Markdown document chunked by the compiled core under each of its labels: the
    rows per label (in the order asked) as spill entries
    (:func:`~kebab_chunk.output.spill_entry.row_entry`'s bytes), and the facts parsing
    would have recorded."""

    entries: tuple[tuple[str, tuple[bytes, ...]], ...]
    facts: DocumentFacts


def chunk_document_with_core(
    raw: bytes,
    source_uri: str,
    labels: Sequence[str],
    policy: ChunkPolicy,
    limits: ParseLimits = DEFAULT_LIMITS,
) -> CoreDocument | None:
    """The spill entries and facts of a Markdown document read by the default parser, from
    the core alone; None when the core is not used or does not take it under every label
    (the caller then parses and chunks in Python, which gives the same entries and facts).

    The facts come out as :meth:`DocumentFacts.of` gives them for the parsed document:
    the title is the front matter's ``title`` when it is a string, else the first level-1
    heading's; the warnings are the front matter's, then the nesting warning; the document
    record is validated as the parser's would be (with no blocks, then their count set).
    """
    compiled = core()
    if compiled is None or not labels:
        return None
    made: list[tuple[str, tuple[bytes, ...]]] = []
    calls: list[dict[str, Any]] = []
    found: dict[str, Any] = {}
    item: _Fast | None = None
    for name in labels:
        core_label = _core_label(name, policy)
        item = None if core_label is None else _fast_input(raw, source_uri, core_label, _MARKDOWN)
        if item is None:
            return None
        try:
            found = _core_call(compiled, [item], policy, limits, entries=True)
        except LimitExceededError:  # over the time budget: the Python path words the error
            return None
        if found["doc_rows"][0] < 0:
            if found["doc_rows"][0] == _PANICKED:
                _log.warning(
                    "the compiled core failed on %s (a bug, please report it); the Python "
                    "path chunked it instead",
                    source_uri,
                )
            return None
        made.append((name, tuple(found["entries"][0])))
        calls.append(found)
    assert item is not None
    for call in calls:  # every label taken: their warnings, in label order
        _warn_core(source_uri, call, 0)
    metadata: dict[str, Any] = {}
    warnings: list[str] = []
    if item.body_start:
        text = raw.decode("utf-8-sig")
        front = read_front_matter(text, newline_view(text))
        if front is not None:
            metadata, warnings = front.metadata, list(front.warnings)
    nested = nesting_warning(found["deepest"][0], limits.max_nesting)
    if nested is not None:
        warnings.append(nested)
    title = metadata.get("title")
    if not isinstance(title, str):
        title = found["first_h1"][0]
    doc = make_document(
        doc_id=doc_id(source_uri),
        source_uri=source_uri,
        media_type=_MARKDOWN,
        content_hash=content_hash(raw),
        parser_version=_PARSER,
        title=title,
        metadata=metadata,
        blocks=(),
        warnings=tuple(warnings),
    )
    facts = dataclasses.replace(DocumentFacts.of(doc), blocks=found["blocks"][0])
    return CoreDocument(tuple(made), facts)
