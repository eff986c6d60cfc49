"""What ``hierarchical-v1`` and ``hybrid-v1`` share; neither label owns this module.

- :func:`iter_elements`: the document's elements in order (one per paragraph, code block,
  table, list or list item, media reference, and the heading of an empty section), each an
  :class:`Element` with its text, spans, anchor, heading path and captions, and the places
  where it prefers to be split. ``hierarchical-v1`` makes one chunk of each;
  ``hybrid-v1`` splits and merges them to a token budget.
- :class:`TokenAwareChunker`: the chunker base both labels derive from (token counting
  memoised for the chunker's life, ``chunk()`` as the list form of ``iter_chunks()``).
- :func:`warn`: one warning to the log and to the caller's ``warnings`` list.

Both labels' outputs are frozen (docs/internals/versioning.md): a change here changes both, so a
change of behaviour belongs in a new module under a new label, not in this one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
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
from kebab_chunk.chunkers.base import Label, LabelledChunker
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
from kebab_chunk.tokenizers import Tokenizer
from kebab_chunk.tokenizers.base import Counter, CounterCache, CutRule, cut_rule

__all__ = ["Element", "TokenAwareChunker", "iter_elements", "warn"]

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
            warn(
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


def warn(warnings: list[str] | None, message: str, log: logging.Logger = _log) -> None:
    """Log ``message`` to ``log`` and add it to ``warnings`` (when given), capped first:
    it may quote document text (headings, a table header) of any length."""
    message = cap(message)
    log.warning(message)
    if warnings is not None:
        warnings.append(message)


class TokenAwareChunker(LabelledChunker):
    """What ``hierarchical-v1`` and the hybrid labels share: any document is accepted, token
    counting is memoised per chunker (``tokenizers.base.token_counter``) and kept for the
    chunker's life, and ``chunk()`` is the list form of the lazy ``iter_chunks()``."""

    def __init__(self, label: Label) -> None:
        super().__init__(label)
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
        """Chunks of ``doc`` in document order, built lazily from its elements.

        ``warnings`` collects what the element walk and the chunker report (also logged).
        """
        elements = iter_elements(doc, merge_list_items=policy.merge_list_items, warnings=warnings)
        return self.chunks_of(doc, policy, elements, warnings)

    def chunks_of(
        self,
        doc: CanonicalDocument,
        policy: ChunkPolicy,
        elements: Iterator[Element],
        warnings: list[str] | None,
    ) -> Iterator[Chunk]:
        """The label's chunks from ``doc``'s elements (a generator)."""
        raise NotImplementedError

    def chunk(self, doc: CanonicalDocument, policy: ChunkPolicy) -> list[Chunk]:
        """All chunks of ``doc`` (``list(iter_chunks(doc, policy))``)."""
        return list(self.iter_chunks(doc, policy))
