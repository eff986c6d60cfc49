"""The engine of the hybrid labels: hierarchical elements split and merged to a token
budget (docling's HybridChunker), one code path for every ``hybrid-*`` label.

Every label is a row of the registry with one
:class:`~kebab_chunk.chunkers.rules.HybridRules` value (every rule in which the labels
differ); the rest is this module's, the same for every label. A new label is a new row,
never a copied module or an overridden step. What each label changed and why is in
docs/internals/label-changes.md.

What every label does: the ``hierarchical-v1`` elements (``_token_aware.iter_elements``),
each split at list items, table rows, blank lines, sentences, whitespace (in that order of
preference) until its contextualised form (heading path, captions, text, one per line) fits
the budget, a split table's later pieces carrying its header line(s) in ``captions``; then,
with ``merge_peers``, consecutive pieces of different elements with the same headings and
captions merged while they fit: source slices only over a gap their spans pin down, other
pieces joined by ``"\n"``. Budget: ``policy.max_tokens`` if set, else the tokenizer's
``max_tokens``, else ``policy.target_tokens``
(:func:`~kebab_chunk.chunkers._budget.resolve_max_tokens`). Which pieces merge, what a piece
cites, how a context too long for the budget is shortened, what a slice's id counts from and
where a list may be cut: :class:`HybridRules`.

``token_estimate`` is the exact count of :meth:`HybridChunker.embed_text` under the
policy's tokenizer, and never exceeds the budget (a single character that alone does not
fit is kept as a chunk with a warning). ``iter_chunks`` streams: one element and one group
of peers are held at a time.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kebab_chunk._quote import quote_all
from kebab_chunk.chunkers._budget import resolve_max_tokens
from kebab_chunk.chunkers._context import (
    Count,
    LineBound,
    bound_line,
    cut_line_warning,
    fitting_prefix,
)
from kebab_chunk.chunkers._separators import join_gap, newline_style
from kebab_chunk.chunkers._slices import joined_spans, list_items_from_spans
from kebab_chunk.chunkers._token_aware import Element, TokenAwareChunker, warn
from kebab_chunk.chunkers._token_split import cut_levels, split_pieces
from kebab_chunk.chunkers.base import Label, make_chunk
from kebab_chunk.chunkers.contextualize import context_prefix, contextualize_parts
from kebab_chunk.chunkers.rules import HybridRules
from kebab_chunk.errors import UsageError
from kebab_chunk.model import Block, CanonicalDocument, Chunk, ChunkPolicy, ListBlock, SourceSpan
from kebab_chunk.model.spans import ElementSpan
from kebab_chunk.tokenizers import get_tokenizer
from kebab_chunk.tokenizers.base import CutRule

__all__ = [
    "Draft",
    "HybridChunker",
    "Run",
    "bound_line",
    "embedded_text",
    "part_ranges",
    "trim_context",
    "warn_core",
    "warn_trimmed",
]

_log = logging.getLogger(__name__)

#: What precedes an item's text on a list line: indentation, a marker, the space after it.
_LIST_LEAD = re.compile(r"[ \t]*(?:[-*+\u2022]|\d{1,9}[.)])[ \t]+")
#: A list line up to a cut that would leave only the marker before it.
_MARKER_ONLY = re.compile(r"[ \t]*(?:[-*+\u2022]|\d{1,9}[.)])[ \t]*")
#: Between two parts of a list: the next line's lead, or one space (an item whose text is
#: several source elements joined, as docling's inline groups are).
_LIST_GAP = re.compile(r"(?:\r\n|\r|\n)[ \t]*(?:[-*+\u2022]|\d{1,9}[.)])[ \t]+| ")
#: Between two parts of any other block: one whitespace character.
_PLAIN_GAP = re.compile(r"\s")


# -- the text that is counted and embedded -------------------------------------------------


def trim_context(lines: Sequence[str], count: Count, limit: int) -> tuple[str, ...]:
    """The context lines kept in the counted/embedded text when they must cost <= ``limit``.

    Outermost lines are left out until the rest (``"\\n"``-joined) costs at most ``limit``;
    when even the innermost line alone costs more, its longest prefix that fits is kept (cut
    at a word end when one fits, else at a character), or nothing when no character fits.
    """
    lines = tuple(lines)
    for dropped in range(len(lines)):
        if count("\n".join(lines[dropped:])) <= limit:
            return lines[dropped:]
    if not lines:
        return ()
    prefix = fitting_prefix(lines[-1], count, limit)
    return (prefix,) if prefix else ()


#: What the warning for a context line cut by ``bound_context_lines`` calls the line.
CONTEXT_LINE = "a heading, caption or table header line"


def warn_core(
    warnings: list[str] | None, source_uri: str, budget: int, found: tuple[Any, ...]
) -> None:
    """Word and log one warning the compiled core reports for this engine: ``("trimmed",
    block_id, counted, lines)`` or ``("bound", line, kept)``."""
    if found[0] == "trimmed":
        warn_trimmed(warnings, source_uri, found[1], budget, found[2], found[3])
    else:
        warn(warnings, cut_line_warning(source_uri, CONTEXT_LINE, found[1], found[2], budget), _log)


def warn_trimmed(
    warnings: list[str] | None,
    source_uri: str,
    block_id: str,
    budget: int,
    counted: Sequence[str],
    lines: Sequence[str],
) -> None:
    """Warn that a split element's counted context lines were trimmed (the compiled core
    reports the same facts and has them worded and logged here)."""
    message = (
        f"{source_uri}: block {block_id}: its headings/captions take more than half of "
        f"max_tokens={budget}, so the text counted and embedded for its chunks keeps only "
        f"{quote_all(counted)} of {quote_all(lines)}; heading_path and captions keep them whole"
    )
    warn(warnings, message, _log)


def embedded_text(
    heading_path: Sequence[str], captions: Sequence[str], text: str, count: Count, budget: int
) -> str:
    """The text the engine's labels count and mean to be embedded for a chunk with these fields.

    The heading path, captions and text, one per line, when that fits ``budget``; else the
    context lines :func:`trim_context` keeps within half the budget, then the text.
    """
    full = contextualize_parts(heading_path, captions, text)
    if count(full) <= budget:
        return full
    kept = trim_context((*heading_path, *captions), count, budget // 2)
    return contextualize_parts(kept, (), text)


# -- locating the parts of a block assembled from several source elements ---------------------


def part_ranges(block: Block) -> tuple[tuple[int, int], ...] | None:
    """``(start, end)`` in ``block.text`` of the text of each of its spans, or None.

    Only for blocks with element spans (DOCX, docling JSON): a list with one line
    per item ending with the item (``_slices.list_items_from_spans``), else the spans'
    lengths tiling the text in order, consecutive parts of one element (same ref, adjacent
    characters) with nothing between them, other parts with one whitespace character between
    them (in a list: a line break and the next line's marker, or one space). None when
    neither layout holds exactly.
    """
    spans = block.spans
    if not all(isinstance(s, ElementSpan) for s in spans):
        return None
    text = block.text
    is_list = isinstance(block, ListBlock)
    if is_list:
        assert isinstance(block, ListBlock)
        by_line = list_items_from_spans(text, block.items, spans)
        if by_line is not None:
            return tuple(by_line)
    cursor = 0
    if is_list:
        lead = _LIST_LEAD.match(text)
        if lead is None:
            return None
        cursor = lead.end()
    gap = _LIST_GAP if is_list else _PLAIN_GAP
    ranges: list[tuple[int, int]] = []
    previous: ElementSpan | None = None
    for span in spans:
        assert isinstance(span, ElementSpan)
        adjacent = (
            previous is not None
            and previous.ref == span.ref
            and previous.char_end == span.char_start
        )
        if previous is not None and not adjacent:
            found = gap.match(text, cursor)
            if found is None:
                return None
            cursor = found.end()
        end = cursor + span.char_end - span.char_start
        if end > len(text):
            return None
        ranges.append((cursor, end))
        cursor, previous = end, span
    return tuple(ranges) if cursor == len(text) else None


def _cite_parts(
    ranges: Sequence[tuple[int, int]], spans: Sequence[SourceSpan], start: int, end: int
) -> tuple[SourceSpan, ...]:
    """The spans of the parts that ``text[start:end]`` of the block overlaps, each cut to the
    overlap; a piece that holds only markers or separators cites the empty point where the
    next part starts (or the end of the last)."""
    cited: list[SourceSpan] = []
    # ranges are in order and disjoint: none ending before ``start`` can overlap, and the
    # scan stops at the first starting at or after ``end`` (per piece, not per part, so a
    # list of n items cut into pieces is not O(n²))
    first = bisect.bisect_left(ranges, start, key=lambda r: r[1])
    for index in range(first, len(ranges)):
        lo, hi = ranges[index]
        span = spans[index]
        assert isinstance(span, ElementSpan)
        if lo >= end:
            return tuple(cited) if cited else (_sub(span, 0, 0),)
        a, b = max(start, lo), min(end, hi)
        if a < b or (lo == hi and start <= lo):
            cited.append(_sub(span, a - lo, b - lo))
    if cited:
        return tuple(cited)
    last = spans[-1]
    assert isinstance(last, ElementSpan)
    length = last.char_end - last.char_start
    return (_sub(last, length, length),)


def _sub(span: ElementSpan, start: int, end: int) -> ElementSpan:
    if start == 0 and end == span.char_end - span.char_start:
        return span
    return ElementSpan(
        ref=span.ref,
        page=span.page,
        char_start=span.char_start + start,
        char_end=span.char_start + end,
    )


def _line_start(text: str, offset: int) -> int:
    newline = text.rfind("\n", 0, offset)
    # a CR only matters after the last LF; searching before it would scan the whole text
    return max(newline, text.rfind("\r", newline + 1, offset)) + 1


def _item_line_start(text: str, cut: int) -> int:
    """The start of the line of an item cut when only the item's marker (and indentation)
    lies between them, else the cut itself."""
    line = _line_start(text, cut)
    return line if _LIST_LEAD.fullmatch(text, line, cut) else cut


def _after_marker(text: str, cut: int) -> bool:
    """Whether a cut candidate lies between a list line's marker and the item's text."""
    return _MARKER_ONLY.fullmatch(text, _line_start(text, cut), cut) is not None


def _sections(doc: CanonicalDocument) -> dict[str, int]:
    """Block id -> the index of the heading block that opens the section the block's element
    belongs to (-1 before any heading).

    A content block belongs to the last heading whose own path is the block's path; a
    heading that becomes an element of its own (an empty section) belongs to its parent's
    section, as its ``heading_path`` is the parent's.
    """
    opened: dict[tuple[str, ...], int] = {}
    out: dict[str, int] = {}
    for index, block in enumerate(doc.blocks):
        if block.kind == "heading":
            out[block.block_id] = opened.get(block.heading_path[:-1], -1)
            opened[block.heading_path] = index
        else:
            out[block.block_id] = opened.get(block.heading_path, -1)
    return out


# -- one pass over one document -----------------------------------------------------------------


@dataclass(frozen=True)
class _Context:
    """Heading path and captions of a piece (whole, as recorded), and the context lines its
    counted text carries (``counted``: the same lines, or fewer/shorter when trimmed)."""

    heading_path: tuple[str, ...]
    captions: tuple[str, ...]
    counted: tuple[str, ...]
    prefix: str

    @property
    def trimmed(self) -> bool:
        return self.counted != (*self.heading_path, *self.captions)


@dataclass(frozen=True, slots=True)
class _Where:
    """Where an element sits: its offset in its block's text, the offset its slices' ids
    count from, its section, and the ranges of its block's parts when pieces must be cited
    part by part (None otherwise)."""

    offset: int
    id_origin: int
    section: int
    parts: tuple[tuple[int, int], ...] | None
    block_spans: tuple[SourceSpan, ...]


@dataclass(slots=True)
class Draft:
    """A chunk in the making: a piece of one element, or a group of merged pieces, with its
    counted tokens."""

    text: str
    spans: Sequence[SourceSpan]
    kind: str  # the element's anchor kind: "slice", "element" or "rendered"
    block_ids: Sequence[str]
    context: _Context
    is_slice: bool
    tokens: int
    tokens_known: bool
    element: int
    section: int
    slice_start: int  # offset of the start inside the first block's text (the id guard)
    members: Sequence[Draft] = ()
    exact: int | None = None  # a merged group's exact count, when the cuts prove it


class Run:
    """One pass over one document: tokenizer, budget, caches and the warnings sink."""

    def __init__(
        self,
        chunker: HybridChunker,
        doc: CanonicalDocument,
        policy: ChunkPolicy,
        warnings: list[str] | None,
    ) -> None:
        self.doc = doc
        self.policy = policy
        self.label = chunker.label
        self.rules = chunker.rules
        self.tokenizer = get_tokenizer(policy.tokenizer)
        self.count = chunker.counter(self.tokenizer)
        self.adds_up = chunker.cut_rule(self.tokenizer)
        self.budget = resolve_max_tokens(policy, self.tokenizer)
        self.overlap_tokens = min(policy.overlap_tokens, self.budget // 2)
        self._style: tuple[str | None] | None = None  # (newline_style(doc.blocks),) once used
        self._empty = self.count("")  # what an empty text costs (special tokens)
        self.warnings = warnings
        self._blocks = {block.block_id: block for block in doc.blocks}
        #: Section of each block, when pieces must not merge across a heading.
        self._sections = _sections(doc) if self.rules.ids_local_to_section else None
        self._parts: dict[str, tuple[tuple[int, int], ...] | None] = {}
        self._prefix_tokens: dict[str, int] = {}
        self._line_tokens: dict[str, int] = {}
        self._tail_tokens: dict[str, int] = {}
        self._contexts: dict[tuple[tuple[str, ...], ...], _Context] = {}
        self._trims: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._gap_tokens: dict[str, int] = {}
        #: Context lines as recorded (rule ``bound_context_lines``), one warning per cut.
        self._bound_line = LineBound(
            self.count, self.budget, doc.source_uri, CONTEXT_LINE, self._warn
        )

    # -- context -------------------------------------------------------------------
    def _context(
        self,
        heading_path: tuple[str, ...],
        captions: tuple[str, ...],
        counted: tuple[str, ...] | None = None,
    ) -> _Context:
        lines = (*heading_path, *captions) if counted is None else counted
        key = (heading_path, captions, lines)
        context = self._contexts.get(key)
        if context is None:  # interned: equal contexts are one object (``_joiner`` relies on it)
            context = _Context(heading_path, captions, lines, context_prefix(lines, ()))
            self._contexts[key] = context
        return context

    def _trimmed(self, el: Element, extra: tuple[str, ...] = ()) -> _Context:
        """The context for pieces of a split element: counted lines cost at most half."""
        captions = (*el.captions, *extra)
        lines = (*el.heading_path, *captions)
        if not self.rules.record_whole_context:
            return self._dropped(el, captions)
        counted = self._trims.get(lines)
        if counted is None:
            counted = self._trims[lines] = trim_context(lines, self.count, self.budget // 2)
        if counted != lines:
            warn_trimmed(
                self.warnings, self.doc.source_uri, el.block_ids[0], self.budget, counted, lines
            )
        return self._context(el.heading_path, captions, counted)

    def _dropped(self, el: Element, captions: tuple[str, ...]) -> _Context:
        """The context of a split element's pieces, recorded with its outermost lines left
        out until the rest costs at most half the budget (rule ``record_whole_context``
        off)."""
        lines = (*el.heading_path, *captions)
        dropped = 0
        while dropped < len(lines) and self.count("\n".join(lines[dropped:])) > self.budget // 2:
            dropped += 1
        if dropped:
            self._warn(
                f"{self.doc.source_uri}: block {el.block_ids[0]}: its headings/captions "
                f"take more than half of max_tokens={self.budget}, so the outer "
                f"{dropped} line(s) {quote_all(lines[:dropped])} are left out of its chunks' "
                "context"
            )
        n_head = len(el.heading_path)
        return self._context(
            el.heading_path[min(dropped, n_head) :], captions[max(dropped - n_head, 0) :]
        )

    def _bound(self, el: Element) -> Element:
        """``el`` with its context lines cut by :func:`bound_line` (rule
        ``bound_context_lines``); ``el`` itself when every line is within the bound."""
        heading_path = tuple(map(self._bound_line, el.heading_path))
        captions = tuple(map(self._bound_line, el.captions))
        header = el.table_header
        table_header = None if header is None else self._bound_line(header)
        if (heading_path, captions, table_header) == (el.heading_path, el.captions, header):
            return el
        return replace(el, heading_path=heading_path, captions=captions, table_header=table_header)

    def _warn(self, message: str) -> None:
        warn(self.warnings, message, _log)

    def _measure(self, context: _Context, text: str) -> int:
        if not context.prefix:
            return self.count(text)
        if self.adds_up is not None and text and self.adds_up("\n", text[0]):
            return self._prefix_cost(context) + self.count(text)  # prefix counted once
        return self.count(f"{context.prefix}\n{text}")

    def _prefix_cost(self, context: _Context) -> int:
        """Tokens the counted context lines add to a text (0 without context)."""
        if not context.prefix:
            return 0
        cost = self._prefix_tokens.get(context.prefix)
        if cost is None:
            lines = context.counted
            rule = self.adds_up
            if rule is not None and all(line and rule("\n", line[0]) for line in lines[1:]):
                cost = sum(map(self._line_cost, lines))  # sections share their outer lines
            else:
                cost = self.count(context.prefix + "\n") - self._empty
            self._prefix_tokens[context.prefix] = cost
        return cost

    def _line_cost(self, line: str) -> int:
        """Tokens one context line adds, with its line break (counted once per document)."""
        cost = self._line_tokens.get(line)
        if cost is None:
            cost = self._line_tokens[line] = self.count(line + "\n") - self._empty
        return cost

    def _newline_style(self) -> str | None:
        if self._style is None:  # scanned only when a document first needs a line gap
            self._style = (newline_style(self.doc.blocks),)
        return self._style[0]

    # -- where an element sits ------------------------------------------------------------
    def _where(self, el: Element) -> _Where:
        block = self._blocks[el.block_ids[0]]
        parts = None
        cite_parts = self.rules.cite_held_parts
        if cite_parts and el.anchor.kind == "rendered" and isinstance(el.spans[0], ElementSpan):
            if block.block_id not in self._parts:
                self._parts[block.block_id] = part_ranges(block)
            parts = self._parts[block.block_id]
        offset = el.origin - block.spans[0].char_start  # the element's origin is in the document
        sections = self._sections
        return _Where(
            offset=offset,
            id_origin=el.origin if sections is None else offset,
            section=-1 if sections is None else sections[block.block_id],
            parts=parts,
            block_spans=block.spans,
        )

    # -- step 2: split ---------------------------------------------------------------
    def stream(self, elements: Iterator[Element]) -> Iterator[Draft]:
        """The pieces of every element in order (most elements fit whole: one piece)."""
        bound = self.rules.bound_context_lines
        for index, el in enumerate(elements):
            if bound:
                el = self._bound(el)
            where = self._where(el)
            whole = self._context(el.heading_path, el.captions)
            tokens = self._measure(whole, el.text)
            if tokens <= self.budget:
                yield self._piece(el, where, index, 0, len(el.text), whole, tokens)
            else:
                yield from self._split(index, el, where, whole, tokens)

    def _split(
        self, index: int, el: Element, where: _Where, whole: _Context, tokens: int
    ) -> Iterator[Draft]:
        """Pieces of an element whose contextualised form (``tokens``) is over budget."""
        first = self._trimmed(el)
        if not el.text.strip():  # a media reference with a huge caption: keep it, trimmed
            tokens = self._measure(first, el.text)
            yield self._piece(el, where, index, 0, len(el.text), first, tokens)
            return
        rest = self._trimmed(el, (el.table_header,)) if el.table_header else first
        start0 = len(el.text) - len(el.text.lstrip())
        text_tokens = max(1, tokens - self._prefix_cost(whole))

        def measure(start: int, end: int) -> int:
            return self._measure(first if start == start0 else rest, el.text[start:end])

        def bare(start: int, end: int) -> int:
            return self.count(el.text[start:end])

        use_overlap = el.style != "table" and self.overlap_tokens > 0
        if el.style == "list" and self.rules.cut_lists_before_markers:
            cuts = tuple(_item_line_start(el.text, cut) for cut in el.cuts)
            levels = [
                [c for c in level if not _after_marker(el.text, c)]
                for level in cut_levels(el.text, el.style, cuts)
            ]
        else:
            levels = cut_levels(el.text, el.style, el.cuts)
        for start, end, piece_tokens in split_pieces(
            el.text,
            levels,
            measure,
            self.budget,
            chars_per_token=len(el.text) / text_tokens,
            overlap=bare if use_overlap else None,
            overlap_tokens=self.overlap_tokens,
        ):
            if piece_tokens > self.budget:  # only a single character can be
                self._warn(
                    f"{self.doc.source_uri}: block {el.block_ids[0]}: one character costs "
                    f"{piece_tokens} tokens, more than max_tokens={self.budget}; it is kept "
                    "as a chunk of its own"
                )
            context = first if start == start0 else rest
            yield self._piece(el, where, index, start, end, context, piece_tokens)

    def _piece(
        self,
        el: Element,
        where: _Where,
        index: int,
        start: int,
        end: int,
        context: _Context,
        tokens: int,
    ) -> Draft:
        text = el.text
        whole = start == 0 and end == len(text)
        if where.parts is not None:
            offset = where.offset
            spans: Sequence[SourceSpan] = _cite_parts(
                where.parts, where.block_spans, offset + start, offset + end
            )
        elif whole:
            spans = el.spans
        else:
            spans = el.anchor.locate(start, end)
        return Draft(
            text if whole else text[start:end], spans, el.anchor.kind, el.block_ids, context,
            el.is_slice or not whole, tokens, True, index, where.section, where.id_origin + start,
        )  # fmt: skip

    # -- step 3: merge peers -------------------------------------------------------------
    def _joiner(self, a: Draft, b: Draft) -> str | None:
        """Text between ``a`` and ``b`` in a merged chunk, or None when they must stay apart.

        Pieces of one section only, with the same context. Source slices join only over a
        gap the spans pin down. Structured (element) and rendered texts have no source text
        between elements: they join with ``"\\n"``. A slice joins a non-slice (with
        ``"\\n"``) only under the rule ``merge_mixed_kinds``.
        """
        if a.element == b.element or a.context is not b.context or a.section != b.section:
            return None
        if a.kind == "slice" and b.kind == "slice":
            return join_gap(a.spans[-1], b.spans[0], self._newline_style())
        if self.rules.merge_mixed_kinds or (a.kind != "slice" and b.kind != "slice"):
            return "\n"
        return None

    def _gap_cost(self, gap: str) -> int:
        cost = self._gap_tokens.get(gap)
        if cost is None:
            cost = self._gap_tokens[gap] = self.count(gap) - self._empty
        return cost

    def _estimate(self, a: Draft, b: Draft, gap: str) -> int:
        """Counted tokens of ``a`` + ``gap`` + ``b``, from the parts' counts (exact for
        tokenizers that cut at whitespace, within a token or two at the seams for BPE; every
        merged chunk's exact count is then derived by ``_exact`` or counted)."""
        return (
            a.tokens + b.tokens - self._empty - self._prefix_cost(a.context) + self._gap_cost(gap)
        )

    def _exact(self, a: Draft, b: Draft, gap: str) -> int | None:
        """Exact counted tokens of ``a`` + ``gap`` + ``b`` from proven cuts, or None.

        With ``P`` the shared prefix line(s) and ``e`` the empty text's count, a cut between
        two characters where counts add up gives ``count(l + r) = count(l) + count(r) - e``.
        Cuts used: after ``P`` and its line break (``b``'s count without the prefix),
        ``gap | b``, and either ``a | gap`` or, when that one is not proven, the last proven
        cut in ``a`` (``_last_cut``), whose tail is counted with and without the gap.
        """
        rule = self.adds_up
        a_count = a.tokens if a.tokens_known else a.exact
        if rule is None or a_count is None or not gap or not a.text or not b.text:
            return None
        first = b.text[0]
        if not rule(gap[-1], first):
            return None
        b_count = b.tokens
        if a.context.prefix:
            if not rule("\n", first):
                return None
            b_count -= self._prefix_cost(a.context)
        if rule(a.text[-1], gap[0]):
            return a_count + self._gap_cost(gap) + b_count - self._empty
        cut = _last_cut(a.text, rule)
        if cut <= 0:
            return None
        return a_count + self._tail_cost(a.text[cut:], gap) + b_count - self._empty

    def _tail_cost(self, tail: str, gap: str) -> int:
        """``count(tail + gap) - count(tail)``; tails repeat (".", a closing fence ...)."""
        key = tail + gap
        cost = self._tail_tokens.get(key)
        if cost is None:
            cost = self._tail_tokens[key] = self.count(key) - self.count(tail)
        return cost

    def _join(self, a: Draft, b: Draft, gap: str) -> Draft:
        if a.kind == "slice" and b.kind == "slice":
            spans = [*a.spans[:-1], *joined_spans(a.spans[-1], b.spans[0]), *b.spans[1:]]
        else:
            spans = [*a.spans, *(s for s in b.spans if s not in a.spans[-1:])]
        ids = [*a.block_ids, *(i for i in b.block_ids if i not in a.block_ids)]
        return Draft(
            text=a.text + gap + b.text,
            spans=spans,
            kind=a.kind if a.kind == b.kind else "rendered",
            block_ids=ids,
            context=a.context,
            is_slice=a.is_slice or b.is_slice,
            tokens=self._estimate(a, b, gap),
            tokens_known=False,
            element=b.element,
            section=a.section,
            slice_start=a.slice_start,
            members=[*(a.members or [a]), b],
            exact=self._exact(a, b, gap),
        )

    def merged(self, pieces: Iterator[Draft]) -> Iterator[Draft]:
        """Greedy peer merging within a section; every group yielded has a verified count."""
        group: Draft | None = None
        for piece in pieces:
            if group is not None and self.policy.merge_peers:
                gap = self._joiner(group, piece)
                if gap is not None and self._estimate(group, piece, gap) <= self.budget:
                    group = self._join(group, piece, gap)
                    continue
            if group is not None:
                if group.tokens_known:  # a single piece: counted already
                    yield group
                else:
                    yield from self._verified(group)
            group = piece
        if group is not None:
            yield from self._verified(group)

    def _verified(self, group: Draft) -> Iterator[Draft]:
        if group.tokens_known:
            yield group
            return
        exact = group.exact
        group.tokens = self._measure(group.context, group.text) if exact is None else exact
        group.tokens_known = True
        if group.tokens <= self.budget:
            yield group
            return
        # The estimate was optimistic: redo this group counting every step exactly.
        current = group.members[0]
        for member in group.members[1:]:
            gap = self._joiner(current, member)
            assert gap is not None
            joined = self._join(current, member, gap)
            exact = joined.exact
            joined.tokens = self._measure(joined.context, joined.text) if exact is None else exact
            joined.tokens_known = True
            if joined.tokens <= self.budget:
                current = joined
            else:
                yield current
                current = member
        yield current

    # -- records -------------------------------------------------------------------
    def record(self, position: int, piece: Draft) -> Chunk:
        context = piece.context
        tokens = piece.tokens
        if context.trimmed:  # counted with fewer context lines: the full ones may fit this piece
            full = self._measure(self._context(context.heading_path, context.captions), piece.text)
            if full <= self.budget:
                tokens = full
        return make_chunk(
            self.doc,
            chunker_version=self.label,
            policy=self.policy,
            position=position,
            text=piece.text,
            block_ids=piece.block_ids,
            spans=piece.spans,
            heading_path=context.heading_path,
            captions=context.captions,
            is_slice=piece.is_slice,
            slice_start=piece.slice_start,
            token_estimate=tokens,
        )


def _last_cut(text: str, rule: CutRule) -> int:
    """The last offset ``0 < i < len(text)`` where ``rule`` proves a cut, or 0 if none is found.

    The last 16 characters are tried one by one, then the last few spaces.
    """
    n = len(text)
    for i in range(n - 1, max(n - 16, 0), -1):
        if rule(text[i - 1], text[i]):
            return i
    cut = text.rfind(" ", 0, max(n - 15, 0))
    for _ in range(8):  # a few tries: whitespace runs rarely need more
        if cut <= 0 or rule(text[cut - 1], " "):
            break
        cut = text.rfind(" ", 0, cut)
    return cut if cut > 0 and rule(text[cut - 1], " ") else 0


class HybridChunker(TokenAwareChunker):
    """The engine as a chunker, built from one label row (its :class:`HybridRules`)."""

    def __init__(self, label: Label) -> None:
        super().__init__(label)
        #: What this label does differently from the engine's other labels.
        self.rules = label.rules_as(HybridRules)
        #: The policies this chunker has chunked with, by hash, for :meth:`embed_text`.
        self._policies: dict[str, ChunkPolicy] = {}

    def iter_chunks(
        self, doc: CanonicalDocument, policy: ChunkPolicy, warnings: list[str] | None = None
    ) -> Iterator[Chunk]:
        """Chunks of ``doc`` in document order, built lazily (see the module docstring)."""
        self._policies.setdefault(policy.policy_hash, policy)
        return super().iter_chunks(doc, policy, warnings)

    def chunks_of(
        self,
        doc: CanonicalDocument,
        policy: ChunkPolicy,
        elements: Iterator[Element],
        warnings: list[str] | None,
    ) -> Iterator[Chunk]:
        """The elements split and merged to the budget, streamed (lazy)."""
        run = Run(self, doc, policy, warnings)
        for position, piece in enumerate(run.merged(run.stream(elements))):
            yield run.record(position, piece)

    def embed_text(self, chunk: Chunk, policy: ChunkPolicy | None = None) -> str:
        """The text this label means to be embedded for ``chunk`` (:func:`embedded_text`).

        Its count under the policy's tokenizer is ``chunk.token_estimate``. Whether context
        lines are shortened depends on the budget, so the chunk's policy is needed: pass it,
        or call this on the chunker that made the chunk (it remembers its policies). Without
        the rule ``record_whole_context`` the record holds the counted lines: the text is
        ``contextualize(chunk)``, whatever the policy.
        """
        if not self.rules.record_whole_context:
            return contextualize_parts(chunk.heading_path, chunk.captions, chunk.text)
        if policy is None:
            policy = self._policies.get(chunk.policy_hash)
            if policy is None:
                raise UsageError(
                    f"{self.label} needs the policy a chunk was made with to build its text to "
                    f"embed, and this chunker has not chunked with policy {chunk.policy_hash}; "
                    "pass that policy as embed_text(chunk, policy)"
                )
        elif policy.policy_hash != chunk.policy_hash:
            raise UsageError(
                f"the chunk was made with policy {chunk.policy_hash}, not with the given "
                f"policy {policy.policy_hash}; pass the policy the chunk was made with"
            )
        tokenizer = get_tokenizer(policy.tokenizer)
        count = self.counter(tokenizer)
        budget = resolve_max_tokens(policy, tokenizer)
        return embedded_text(chunk.heading_path, chunk.captions, chunk.text, count, budget)
