"""``hierarchical-v1``: one chunk per document element, headings and captions as metadata.

Docling's HierarchicalChunker over our CanonicalDocument (seed 003). Each paragraph,
code block, table, list and image/audio reference becomes one chunk whose text is the
block's text and whose spans are the block's; ``heading_path`` is the block's, and an
image or audio reference carries its caption in ``captions``.

``merge_list_items`` (default true) keeps a list as one chunk; when false each item is a
chunk of its own (``is_slice``) located by arithmetic, never by searching the text: by
walking the item strings in order through a list that is a source slice (Markdown), by the
one-span-per-item layout of structured sources (DOCX, docling JSON), or by the list
markers of a rendered list (HTML, whose item chunks can only cite the list's span). A list
whose items cannot be located that way stays whole, with a warning.

Heading blocks produce no chunk: their titles live in the ``heading_path`` of the chunks
below them. The one exception keeps content from vanishing: a heading whose section has no
content at all (it is followed directly by a heading of the same or a higher level, or by
the end) becomes a chunk of its own, with its enclosing headings as ``heading_path``.
Blocks whose text is blank (and that have no caption) produce nothing.

``token_estimate`` is the token count of ``contextualize(chunk)`` under the policy's
tokenizer. ``iter_chunks`` is lazy; ``chunk`` is ``list(iter_chunks(...))``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from kebab_chunk._quote import cap
from kebab_chunk.chunkers._slices import (
    Anchor,
    list_item_ranges,
    list_items_from_spans,
    make_anchor,
    table_row_starts,
    table_rows_from_spans,
)
from kebab_chunk.chunkers.base import make_chunk
from kebab_chunk.chunkers.contextualize import contextualize_parts
from kebab_chunk.model import (
    AudioRefBlock,
    Block,
    CanonicalDocument,
    Chunk,
    ChunkPolicy,
    HeadingBlock,
    ImageRefBlock,
    ListBlock,
    SourceSpan,
    TableBlock,
)
from kebab_chunk.tokenizers import Tokenizer, get_tokenizer
from kebab_chunk.tokenizers.base import Counter, CounterCache, CutRule, cut_rule

__all__ = ["Element", "HierarchicalV1Chunker", "iter_elements", "record"]

_log = logging.getLogger(__name__)


@dataclass(slots=True)
class Element:
    """One document element as the token-aware chunkers see it (not changed once yielded).

    ``anchor`` locates pieces of ``text``; ``origin`` is the block's first ``char_start``
    plus the offset of ``text`` inside the block's text, so ``origin + i`` names position
    ``i`` uniquely within the block (the slice guard of chunk ids). ``cuts``: offsets in
    ``text`` where a structural unit begins (the 2nd, 3rd, ... list item or table row), the
    preferred places to split. ``table_header``: a table's header line(s), repeated in the
    context of continuation pieces. ``style`` picks split levels (prose, code, list, table).
    (A plain slotted dataclass: a frozen one costs twice as much to build, per element.)
    """

    text: str
    spans: tuple[SourceSpan, ...]
    anchor: Anchor
    origin: int
    block_ids: tuple[str, ...]
    heading_path: tuple[str, ...]
    captions: tuple[str, ...] = ()
    is_slice: bool = False
    cuts: tuple[int, ...] = ()
    table_header: str | None = None
    style: str = "prose"


def iter_elements(
    doc: CanonicalDocument, *, merge_list_items: bool, warnings: list[str] | None = None
) -> Iterator[Element]:
    """The elements of ``doc`` in document order (lazy)."""
    pending: list[HeadingBlock] = []  # headings whose section has shown no content yet
    for block in doc.blocks:
        # Dispatch on ``kind``: isinstance misses on pydantic models go through ABCMeta.
        if block.kind == "heading":
            assert isinstance(block, HeadingBlock)
            if pending and pending[-1].level >= block.level:
                yield _heading_element(pending[-1])
                pending.clear()  # the emitted path covers every enclosing pending heading
            pending.append(block)
            continue
        elements = _block_elements(doc, block, merge_list_items, warnings)
        if elements:
            yield from elements
            pending.clear()
    if pending:
        yield _heading_element(pending[-1])


def _heading_element(block: HeadingBlock) -> Element:
    return Element(
        text=block.text,
        spans=block.spans,
        anchor=make_anchor(block.text, block.spans),
        origin=block.spans[0].char_start,
        block_ids=(block.block_id,),
        heading_path=block.heading_path[:-1],  # its own title is the text
    )


def _block_elements(
    doc: CanonicalDocument, block: Block, merge_list_items: bool, warnings: list[str] | None
) -> list[Element]:
    kind = block.kind
    captions: tuple[str, ...] = ()
    if kind == "image_ref" or kind == "audio_ref":
        assert isinstance(block, ImageRefBlock | AudioRefBlock)
        if block.caption:
            captions = (block.caption,)
    text = block.text
    if not captions and (not text or text.isspace()):  # blank: nothing to chunk
        return []
    anchor = make_anchor(text, block.spans)
    whole = Element(
        text=text,
        spans=block.spans,
        anchor=anchor,
        origin=block.spans[0].char_start,
        block_ids=(block.block_id,),
        heading_path=block.heading_path,
        captions=captions,
        style="code" if kind == "code" else "prose",
    )
    if kind == "list":
        assert isinstance(block, ListBlock)
        return list(_list_elements(doc, block, whole, merge_list_items, warnings))
    if kind == "table":
        assert isinstance(block, TableBlock)
        has_header = bool(block.header)
        rows = table_rows_from_spans(anchor, has_header, len(block.rows))
        rows = rows or table_row_starts(text, has_header, len(block.rows))
        if rows is None:
            whole.style = "code"  # unknown row layout: split at lines
            return [whole]
        header_end, row_starts = rows
        header = text[:header_end].strip() if header_end else ""
        whole.cuts, whole.table_header, whole.style = tuple(row_starts[1:]), header or None, "table"
    return [whole]


def _list_elements(
    doc: CanonicalDocument,
    block: ListBlock,
    whole: Element,
    merge_list_items: bool,
    warnings: list[str] | None,
) -> Iterator[Element]:
    spans_per_item = list_items_from_spans(block.text, block.items, block.spans)
    ranges = spans_per_item or list_item_ranges(block.text, block.items)
    if merge_list_items or ranges is None:
        if not merge_list_items and block.items:
            _warn(
                warnings,
                f"{doc.source_uri}: the items of list {block.block_id} cannot be located "
                "exactly in its text, so the list is kept as one chunk",
            )
        cuts = tuple(start for start, _ in (ranges or [])[1:])
        whole.cuts, whole.style = cuts, "list"
        yield whole
        return
    for index, (start, end) in enumerate(ranges):
        text = block.text[start:end]
        if spans_per_item is not None:
            spans: tuple[SourceSpan, ...] = (block.spans[index],)
        else:
            spans = whole.anchor.locate(start, end)
        yield Element(
            text=text,
            spans=spans,
            anchor=make_anchor(text, spans),
            origin=whole.origin + start,
            block_ids=whole.block_ids,
            heading_path=whole.heading_path,
            is_slice=True,
        )


def _warn(warnings: list[str] | None, message: str) -> None:
    message = cap(message)  # a bound for any quoted document text, as in hybrid-v1
    _log.warning(message)
    if warnings is not None:
        warnings.append(message)


def record(
    doc: CanonicalDocument,
    *,
    chunker_version: str,
    policy: ChunkPolicy,
    position: int,
    text: str,
    block_ids: Sequence[str],
    spans: Sequence[SourceSpan],
    heading_path: Sequence[str],
    captions: Sequence[str],
    is_slice: bool,
    slice_start: int,
    token_estimate: int,
) -> Chunk:
    """``make_chunk``, with the slice guard taken from ``slice_start``.

    DESIGN §3 names a slice by the ``char_start`` of its first span. For a slice of a
    ``slice``-anchored element that is ``slice_start``; pieces of rendered text all cite
    their block's span and item spans of a DOCX list each start at 0 of their own
    paragraph, so there the offset in the block's text keeps sibling ids apart.
    """
    return make_chunk(
        doc,
        chunker_version=chunker_version,
        policy=policy,
        position=position,
        text=text,
        block_ids=block_ids,
        spans=spans,
        heading_path=heading_path,
        captions=captions,
        is_slice=is_slice,
        slice_start=slice_start,
        token_estimate=token_estimate,
    )


class TokenAwareChunker:
    """What ``hierarchical-v1`` and ``hybrid-v1`` share: any document is accepted, token
    counting is memoised per chunker (``tokenizers.base.token_counter``) and kept for the
    chunker's life, and ``chunk()`` is the list form of the lazy ``iter_chunks()``."""

    def __init__(self) -> None:
        self._counters = CounterCache()
        # Where the tokenizer's counts add up (``tokenizers.base.cut_rule``); tests swap in
        # a function returning None to check that the rule changes speed only.
        self._cut_rule: Callable[[Tokenizer], CutRule | None] = cut_rule

    def accepts(self, doc: CanonicalDocument) -> bool:
        return True

    def counter(self, tokenizer: Tokenizer) -> Counter:
        """This chunker's exact counting function for ``tokenizer``."""
        return self._counters.get(tokenizer)

    def cut_rule(self, tokenizer: Tokenizer) -> CutRule | None:
        """Where ``tokenizer``'s counts provably add up, or None."""
        return self._cut_rule(tokenizer)

    def iter_chunks(
        self, doc: CanonicalDocument, policy: ChunkPolicy, warnings: list[str] | None = None
    ) -> Iterator[Chunk]:
        raise NotImplementedError

    def chunk(self, doc: CanonicalDocument, policy: ChunkPolicy) -> list[Chunk]:
        """All chunks of ``doc`` (``list(iter_chunks(doc, policy))``)."""
        return list(self.iter_chunks(doc, policy))


class HierarchicalV1Chunker(TokenAwareChunker):
    """Chunker protocol implementation for ``hierarchical-v1``."""

    version = "hierarchical-v1"
    accepts_description = (
        "any document: one chunk per element (paragraph, list or list item, table, code, "
        "media reference) with headings and captions as metadata"
    )

    def iter_chunks(
        self, doc: CanonicalDocument, policy: ChunkPolicy, warnings: list[str] | None = None
    ) -> Iterator[Chunk]:
        """Chunks of ``doc`` in document order, built one at a time."""
        count = self.counter(get_tokenizer(policy.tokenizer))
        elements = iter_elements(doc, merge_list_items=policy.merge_list_items, warnings=warnings)
        for position, el in enumerate(elements):
            yield record(
                doc,
                chunker_version=self.version,
                policy=policy,
                position=position,
                text=el.text,
                block_ids=el.block_ids,
                spans=el.spans,
                heading_path=el.heading_path,
                captions=el.captions,
                is_slice=el.is_slice,
                slice_start=el.origin,
                token_estimate=count(contextualize_parts(el.heading_path, el.captions, el.text)),
            )
