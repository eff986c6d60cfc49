"""The ``MarkdownChunker(...).chunk_document(text, source)`` API (docs/internals/decisions.md).

A drop-in for code written against a LangChain-style header-splitting, character-budget
Markdown chunker, built on our own parser and the ``md-header-chars-v1`` chunker instead
of LangChain::

    from kebab_chunk.integrations.markdown_chunker import Chunk, MarkdownChunker

    chunks = MarkdownChunker(max_chunk_size=1024, overlap=100).chunk_document(md, "a.md")
    chunks[0].metadata["headers"]   # [{"level": 1, "text": "Title"}, ...]

``version="md-header-chars-v2"`` chunks with that label instead: every chunk text is then
the exact slice of ``text`` its offsets cite, and a text that starts with a byte order mark
(U+FEFF) is parsed without it, so its first heading is found. The default stays
``md-header-chars-v1``, whose output never changes (there a leading U+FEFF is kept in
front of the first line, which then is no heading).

``Chunk`` here is that API's ``Chunk(text, metadata)`` dataclass (also importable as
:class:`TextChunk`); ``kebab_chunk.Chunk`` stays the pipeline's chunk *record*, which
:meth:`MarkdownChunker.chunk_records` returns for the integrations.

The character budget is exact: the chunker runs with the policy
``target_tokens=max_chunk_size, overlap_tokens=overlap, tokenizer="chars"``, so the
``chunk_id`` in the metadata is the id the pipeline gives the same chunk of the same file
under the chosen label with that policy (and ``source`` as the corpus-relative path). For
``md-header-chars-v2`` "the same file" is ``text.encode("utf-8")``, a leading byte order
mark included: the pipeline decodes that file without the mark, so the offsets of its
records are one less than this API's, which index ``text`` itself; text, blocks and ids
are the same.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field, replace
from typing import Any

from kebab_chunk.chunkers._header_chars import CHARS_TOKENIZER, HeaderCharsChunker, PlannedChunk
from kebab_chunk.chunkers._separators import LINE_BREAK
from kebab_chunk.chunkers.registry import label
from kebab_chunk.errors import PolicyError, WrongTypeError
from kebab_chunk.model import CanonicalDocument, ChunkPolicy, LineSpan, ParagraphBlock
from kebab_chunk.model import Chunk as ChunkRecord
from kebab_chunk.model.ids import block_id, content_hash, doc_id
from kebab_chunk.parsers.registry import get_parser

__all__ = ["FALLBACK_PARSER_VERSION", "VERSIONS", "Chunk", "MarkdownChunker", "TextChunk"]

#: ``parser_version`` of the one-block document used when Markdown parsing fails.
FALLBACK_PARSER_VERSION = "text-fallback-v1"

_STRATEGY = "headers"
V1 = "md-header-chars-v1"
_V2 = "md-header-chars-v2"
#: The chunker labels ``MarkdownChunker(version=...)`` accepts; the first is the default.
VERSIONS = (V1, _V2)
_BOM = "\ufeff"
_MARKDOWN = "text/markdown"
_SURROGATE = re.compile(r"[\ud800-\udfff]")


@dataclass
class TextChunk:
    """One chunk of ``MarkdownChunker``: its text and a metadata dict.

    ``metadata`` always has ``headers`` (``[{"level": int, "text": str}]``, outermost
    first), ``position`` (0, 1, ... in document order), ``source`` (the argument or
    ``""``), ``recursive_chunk`` (its section was split below the header level),
    ``chunk_id``, ``char_start``/``char_end`` (0-based, half-open, code points of the
    given text) and ``line_start``/``line_end`` (1-based, inclusive) of the source region
    the chunk was cut from, ``spans`` (the exact region of each block piece in the chunk),
    and ``parser_version`` (``text-fallback-v1`` when the Markdown could not be parsed and
    the text was split by characters alone).
    """

    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


#: The seed API's name for :class:`TextChunk`, kept in this module only (everywhere else,
#: ``Chunk`` is the record, :class:`kebab_chunk.model.Chunk`).
Chunk = TextChunk


def _check_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PolicyError(f"{name} must be an integer, got {value!r}.")
    return value


class MarkdownChunker:
    """Header-aware Markdown chunker with a character budget (see the module docstring).

    ``max_chunk_size`` is the maximum number of characters of any chunk (> 0),
    ``overlap`` the characters repeated between consecutive chunks of one section
    (``0 <= overlap < max_chunk_size``); ``strategy`` must be ``"headers"``; ``version`` is
    the chunker label, one of :data:`VERSIONS` (``md-header-chars-v1`` by default,
    ``md-header-chars-v2`` for exact-slice text and byte-order-mark handling). A violated
    constraint raises :class:`ValueError` (a :class:`~kebab_chunk.errors.PolicyError`)
    naming it.
    """

    def __init__(
        self,
        max_chunk_size: int = 1024,
        overlap: int = 100,
        strategy: str = "headers",
        version: str = V1,
    ):
        self.max_chunk_size = _check_int("max_chunk_size", max_chunk_size)
        self.overlap = _check_int("overlap", overlap)
        if self.max_chunk_size <= 0:
            raise PolicyError(f"max_chunk_size must be > 0, got {max_chunk_size}.")
        if self.overlap < 0:
            raise PolicyError(f"overlap must be >= 0, got {overlap}.")
        if self.overlap >= self.max_chunk_size:
            raise PolicyError(
                f"overlap must be < max_chunk_size ({max_chunk_size}), got {overlap}; "
                "lower the overlap or raise max_chunk_size."
            )
        if strategy != _STRATEGY:
            raise PolicyError(f"strategy must be 'headers' (the only strategy), got {strategy!r}.")
        self.strategy = strategy
        if version not in VERSIONS:
            raise PolicyError(
                f"version must be one of {', '.join(map(repr, VERSIONS))}, got {version!r}."
            )
        #: The chunker label the chunks are made (and their ids computed) with.
        self.version = version
        #: The policy the chunks are made (and their ids computed) with.
        self.policy = ChunkPolicy(
            target_tokens=self.max_chunk_size,
            overlap_tokens=self.overlap,
            tokenizer=CHARS_TOKENIZER,
        )

    def __repr__(self) -> str:
        version = "" if self.version == V1 else f", version={self.version!r}"
        return (
            f"MarkdownChunker(max_chunk_size={self.max_chunk_size}, overlap={self.overlap}, "
            f"strategy={self.strategy!r}{version})"
        )

    def chunk_document(self, text: str, source: str | None = None) -> list[TextChunk]:
        """Chunk Markdown ``text``; ``source`` names it (metadata ``source``, and the id).

        Empty text gives ``[]``; text without headers gives one chunk if it fits, else
        character-split chunks (under ``md-header-chars-v2`` also where a thematic break,
        link definitions or trailing spaces separate two blocks: such text is in no
        chunk); text the Markdown parser cannot handle is split by characters alone
        (metadata ``parser_version`` says so). Never raises on content.
        """
        doc, planned, records = self._chunk(text, source)
        return [
            TextChunk(text=rec.text, metadata=_metadata(plan, rec, source, doc))
            for plan, rec in zip(planned, records, strict=True)
        ]

    def chunk_records(self, text: str, source: str | None = None) -> list[ChunkRecord]:
        """The same chunks as full records (``kebab_chunk.Chunk``), for the integrations."""
        return self._chunk(text, source)[2]

    def _chunk(
        self, text: str, source: str | None
    ) -> tuple[CanonicalDocument, list[PlannedChunk], list[ChunkRecord]]:
        """The parsed document, the planned chunks and their records, offsets into ``text``."""
        if not isinstance(text, str):
            raise WrongTypeError(f"text must be a str, got {type(text).__name__}.")
        engine = HeaderCharsChunker(label(self.version))
        if self.version == V1:
            doc = _document(text, source or "")
            planned = engine.plan_chunks(doc, self.max_chunk_size, self.overlap)
            return doc, planned, engine.records_from_plan(doc, self.policy, planned)
        doc, shift = _document_v2(text, source or "")
        planned = engine.plan_chunks(doc, self.max_chunk_size, self.overlap)
        # Ids come from the unshifted document, the one the pipeline makes of the file.
        records = engine.records_from_plan(doc, self.policy, planned)
        if shift:
            planned = [_shift_plan(plan, shift) for plan in planned]
            records = [_shift_record(record, shift) for record in records]
        return doc, planned, records


def _metadata(
    plan: PlannedChunk, record: ChunkRecord, source: str | None, doc: CanonicalDocument
) -> dict[str, Any]:
    first, last = plan.parts[0].span, plan.parts[-1].span
    return {
        "headers": [{"level": h.level, "text": h.text} for h in plan.headers],
        "position": record.position,
        "source": source or "",
        "recursive_chunk": plan.recursive_chunk,
        "chunk_id": record.chunk_id,
        "char_start": first.char_start,
        "char_end": last.char_end,
        "line_start": first.line_start,
        "line_end": last.line_end,
        "spans": [
            {
                "char_start": p.span.char_start,
                "char_end": p.span.char_end,
                "line_start": p.span.line_start,
                "line_end": p.span.line_end,
            }
            for p in plan.parts
        ],
        "parser_version": doc.parser_version,
    }


def _document(text: str, source_uri: str) -> CanonicalDocument:
    """Parse ``text`` as Markdown; on any failure, a one-block plain document instead.

    Offsets must index ``text`` itself, so the bytes handed to the parser decode back to
    exactly ``text``: a leading U+FEFF (which UTF-8-with-BOM decoding would strip) gets a
    second one in front, and lone surrogates (not encodable) become U+FFFD, one for one.
    """
    text = _SURROGATE.sub("\ufffd", text)
    raw = text.encode("utf-8")
    if text.startswith("\ufeff"):
        raw = codecs.BOM_UTF8 + raw
    try:
        doc = get_parser(_MARKDOWN).parse(raw, source_uri)
    except Exception as exc:  # the API's contract: any parser failure degrades, never raises
        return _fallback(text, raw, source_uri, f"{type(exc).__name__}: {exc}")
    problem = _inexact_block(doc, text)
    if problem is not None:
        return _fallback(text, raw, source_uri, problem)
    return doc


def _document_v2(text: str, source_uri: str) -> tuple[CanonicalDocument, int]:
    """Parse ``text`` as the file ``text.encode("utf-8")``; offsets need a shift to index it.

    The parser decodes that file as the pipeline does, dropping one leading byte order
    mark, so the document's offsets index ``text`` without it and the returned shift (1
    when ``text`` starts with U+FEFF, else 0) is what to add to them. Lone surrogates
    become U+FFFD, one for one; on any parser failure, a one-block plain document instead.
    """
    text = _SURROGATE.sub("\ufffd", text)
    raw = text.encode("utf-8")
    shift = 1 if text.startswith(_BOM) else 0
    body = text[shift:]
    try:
        doc = get_parser(_MARKDOWN).parse(raw, source_uri)
    except Exception as exc:  # the API's contract: any parser failure degrades, never raises
        return _fallback(body, raw, source_uri, f"{type(exc).__name__}: {exc}"), shift
    problem = _inexact_block(doc, body)
    if problem is not None:
        return _fallback(body, raw, source_uri, problem), shift
    return doc, shift


def _shift_span(span: LineSpan, shift: int) -> LineSpan:
    """``span`` moved ``shift`` characters right (same lines: the shift is a leading BOM)."""
    return span.model_copy(
        update={"char_start": span.char_start + shift, "char_end": span.char_end + shift}
    )


def _shift_plan(plan: PlannedChunk, shift: int) -> PlannedChunk:
    parts = tuple(replace(p, span=_shift_span(p.span, shift)) for p in plan.parts)
    return replace(plan, parts=parts)


def _shift_record(record: ChunkRecord, shift: int) -> ChunkRecord:
    spans = tuple(
        _shift_span(span, shift) if isinstance(span, LineSpan) else span
        for span in record.source_spans
    )
    return record.model_copy(update={"source_spans": spans})


def _inexact_block(doc: CanonicalDocument, text: str) -> str | None:
    """Why the parse cannot be trusted for exact offsets, or ``None`` if it can."""
    previous_end = 0
    for block in doc.blocks:
        if len(block.spans) != 1 or not isinstance(block.spans[0], LineSpan):
            return f"block {block.block_id} has no single lines span"
        span = block.spans[0]
        if text[span.char_start : span.char_end] != block.text or span.char_start < previous_end:
            return f"block {block.block_id} is not located exactly"
        previous_end = span.char_end
    return None


def _fallback(text: str, raw: bytes, source_uri: str, reason: str) -> CanonicalDocument:
    """The whole text (minus surrounding whitespace) as one paragraph: character splitting."""
    the_doc_id = doc_id(source_uri)
    start = len(text) - len(text.lstrip())
    end = len(text.rstrip())
    blocks: tuple[ParagraphBlock, ...] = ()
    if start < end:
        first_line = 1 + len(LINE_BREAK.findall(text, 0, start))
        span = LineSpan(
            line_start=first_line,
            line_end=first_line + len(LINE_BREAK.findall(text, start, end - 1)),
            char_start=start,
            char_end=end,
        )
        body = text[start:end]
        blocks = (
            ParagraphBlock(
                block_id=block_id(the_doc_id, "paragraph", body, 0), text=body, spans=(span,)
            ),
        )
    return CanonicalDocument(
        doc_id=the_doc_id,
        source_uri=source_uri,
        media_type="text/plain",
        content_hash=content_hash(raw),
        parser_version=FALLBACK_PARSER_VERSION,
        blocks=blocks,
        warnings=(f"Markdown parsing failed ({reason}); split by characters alone",),
    )
