"""``hybrid-v1``: hierarchical chunks refined to a hard token budget (seed 003, HybridChunker).

Budget: ``policy.max_tokens`` if set (the user's value wins, above or below the model's),
else the tokenizer's ``max_tokens`` (MiniLM: 256), else ``policy.target_tokens``. Tokens
are counted with ``policy.tokenizer`` on the *contextualised* form (``contextualize``:
heading path, captions, text), and every chunk satisfies
``count_tokens(contextualize(chunk)) <= budget``; ``token_estimate`` is exactly that count.

1. Start from the ``hierarchical-v1`` elements (same ``merge_list_items``).
2. Split every element whose contextualised form exceeds the budget into pieces that are
   exact slices of it (``is_slice``; exact sub-spans when the element's text is the source
   slice of its span), cutting at list items or table rows first, then blank lines,
   sentences/lines, whitespace, and as a last resort anywhere. A table is cut between rows,
   and the pieces after the first carry the table's header line(s) in ``captions``, so the
   header is repeated in their contextualised form. ``overlap_tokens`` (capped at half the
   budget; not for tables) makes each piece start with the tail of the previous one.
   When an element must be split but its headings and captions take more than half the
   budget, the outermost lines are dropped until they fit in half, and a warning is
   recorded: the content itself is never dropped.
3. With ``merge_peers`` (default true), merge consecutive pieces of different elements
   that share ``heading_path`` and ``captions`` while the merged contextualised form fits
   (decided on an estimate from the parts' counts, then counted exactly). Pieces of source
   slices (Markdown, text, CSV, PDF pages) join only when the source between them is known
   from the spans (see ``_slices.join_gap``), so the merged text is one exact source slice;
   otherwise they stay apart. Structured sources (DOCX, docling JSON) and rendered text
   (HTML) have no source text between elements: their pieces are joined with ``"\\n"`` and
   keep one span per element. A source slice is never merged with anything else.

The only way a chunk can exceed the budget is a single character that alone does not fit
(a budget of a few tokens); it is emitted with a warning rather than dropped.
``iter_chunks`` streams: one element and one group of peers are held at a time.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field

from kebab_chunk.chunkers._slices import join_gap, joined_spans, newline_style
from kebab_chunk.chunkers._token_split import cut_levels, split_pieces
from kebab_chunk.chunkers.contextualize import context_prefix
from kebab_chunk.chunkers.hierarchical_v1 import Element, TokenAwareChunker, iter_elements, record
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy, SourceSpan
from kebab_chunk.tokenizers import Tokenizer, get_tokenizer

__all__ = ["HybridV1Chunker", "resolve_max_tokens"]

_log = logging.getLogger(__name__)


def resolve_max_tokens(policy: ChunkPolicy, tokenizer: Tokenizer) -> int:
    """The budget: the user's ``max_tokens``, else the model's limit, else ``target_tokens``."""
    if policy.max_tokens is not None:
        return policy.max_tokens
    if tokenizer.max_tokens is not None:
        return tokenizer.max_tokens
    return policy.target_tokens


@dataclass(frozen=True)
class _Context:
    """Heading path and captions a piece is contextualised with, and their prefix string."""

    heading_path: tuple[str, ...]
    captions: tuple[str, ...]
    prefix: str


@dataclass
class _Piece:
    """A piece of one element, or a group of merged pieces, with its contextualised count."""

    text: str
    spans: list[SourceSpan]
    kind: str  # the element's anchor kind: "slice", "element" or "rendered"
    block_ids: list[str]
    context: _Context
    is_slice: bool
    tokens: int
    tokens_known: bool
    element: int
    slice_start: int  # offset that names this slice in its chunk id (see record)
    members: list[_Piece] = field(default_factory=list)


class _Run:
    """One pass over one document: tokenizer, budget, caches and the warnings sink."""

    def __init__(
        self,
        chunker: HybridV1Chunker,
        doc: CanonicalDocument,
        policy: ChunkPolicy,
        warnings: list[str] | None,
    ) -> None:
        self.version = chunker.version
        self.doc = doc
        self.policy = policy
        self.tokenizer = get_tokenizer(policy.tokenizer)
        self.count = chunker.counter(self.tokenizer)
        self.budget = resolve_max_tokens(policy, self.tokenizer)
        self.overlap_tokens = min(policy.overlap_tokens, self.budget // 2)
        self._style: tuple[str | None] | None = None  # (newline_style(doc.blocks),) once used
        self._empty = self.count("")  # what an empty text costs (special tokens)
        self.warnings = warnings
        self._prefix_tokens: dict[str, int] = {}
        self._contexts: dict[tuple[tuple[str, ...], tuple[str, ...]], _Context] = {}
        self._gap_tokens: dict[str, int] = {}

    # -- context -------------------------------------------------------------------
    def _context(self, heading_path: tuple[str, ...], captions: tuple[str, ...]) -> _Context:
        key = (heading_path, captions)
        context = self._contexts.get(key)
        if context is None:  # one per section: equal contexts are then usually identical
            context = _Context(heading_path, captions, context_prefix(heading_path, captions))
            self._contexts[key] = context
        return context

    def _trimmed(self, el: Element, extra: tuple[str, ...] = ()) -> _Context:
        """The context for pieces of a split element: at most half the budget."""
        lines = [*el.heading_path, *el.captions, *extra]
        dropped = 0
        while dropped < len(lines) and self.count("\n".join(lines[dropped:])) > self.budget // 2:
            dropped += 1
        if dropped:
            self._warn(
                f"{self.doc.source_uri}: block {el.block_ids[0]}: its headings/captions "
                f"take more than half of max_tokens={self.budget}, so the outer "
                f"{dropped} line(s) {lines[:dropped]!r} are left out of its chunks' context"
            )
        n_head = len(el.heading_path)
        return self._context(
            tuple(el.heading_path[min(dropped, n_head) :]),
            tuple([*el.captions, *extra][max(dropped - n_head, 0) :]),
        )

    def _warn(self, message: str) -> None:
        _log.warning(message)
        if self.warnings is not None:
            self.warnings.append(message)

    def _measure(self, context: _Context, text: str) -> int:
        return self.count(f"{context.prefix}\n{text}" if context.prefix else text)

    def _prefix_cost(self, context: _Context) -> int:
        """Tokens the context lines add to a text (0 without context)."""
        if not context.prefix:
            return 0
        cost = self._prefix_tokens.get(context.prefix)
        if cost is None:
            cost = self.count(context.prefix + "\n") - self._empty
            self._prefix_tokens[context.prefix] = cost
        return cost

    def _newline_style(self) -> str | None:
        if self._style is None:  # scanned only when a document first needs a line gap
            self._style = (newline_style(self.doc.blocks),)
        return self._style[0]

    # -- step 2: split ---------------------------------------------------------------
    def pieces(self, index: int, el: Element) -> Iterator[_Piece]:
        whole = self._context(el.heading_path, el.captions)
        tokens = self._measure(whole, el.text)
        if tokens <= self.budget:
            yield self._piece(el, index, 0, len(el.text), whole, tokens)
            return
        first = self._trimmed(el)
        if not el.text.strip():  # a media reference with a huge caption: keep it, trimmed
            yield self._piece(el, index, 0, len(el.text), first, self._measure(first, el.text))
            return
        rest = self._trimmed(el, (el.table_header,)) if el.table_header else first
        start0 = len(el.text) - len(el.text.lstrip())
        text_tokens = max(1, tokens - self._prefix_cost(whole))

        def measure(start: int, end: int) -> int:
            return self._measure(first if start == start0 else rest, el.text[start:end])

        def bare(start: int, end: int) -> int:
            return self.count(el.text[start:end])

        use_overlap = el.style != "table" and self.overlap_tokens > 0
        for piece in split_pieces(
            el.text,
            cut_levels(el.text, el.style, el.cuts),
            measure,
            self.budget,
            chars_per_token=len(el.text) / text_tokens,
            overlap=bare if use_overlap else None,
            overlap_tokens=self.overlap_tokens,
        ):
            if piece.over:
                self._warn(
                    f"{self.doc.source_uri}: block {el.block_ids[0]}: one character costs "
                    f"{piece.tokens} tokens, more than max_tokens={self.budget}; it is kept "
                    "as a chunk of its own"
                )
            context = first if piece.start == start0 else rest
            yield self._piece(el, index, piece.start, piece.end, context, piece.tokens)

    def _piece(
        self, el: Element, index: int, start: int, end: int, context: _Context, tokens: int
    ) -> _Piece:
        whole = start == 0 and end == len(el.text)
        return _Piece(
            text=el.text[start:end],
            spans=list(el.anchor.locate(start, end)),
            kind=el.anchor.kind,
            block_ids=list(el.block_ids),
            context=context,
            is_slice=el.is_slice or not whole,
            tokens=tokens,
            tokens_known=True,
            element=index,
            slice_start=el.origin + start,
        )

    # -- step 3: merge peers -------------------------------------------------------------
    def _joiner(self, a: _Piece, b: _Piece) -> str | None:
        """Text between ``a`` and ``b`` in a merged chunk, or None when they must stay apart.

        Source slices join only over a gap the spans pin down. Structured (element) and
        rendered texts have no source text between elements: they join with ``"\\n"``.
        A slice never joins a non-slice, so an exact chunk never becomes inexact.
        """
        if a.element == b.element or a.context != b.context:
            return None
        if a.kind == "slice" and b.kind == "slice":
            return join_gap(a.spans[-1], b.spans[0], self._newline_style())
        if a.kind != "slice" and b.kind != "slice":
            return "\n"
        return None

    def _gap_cost(self, gap: str) -> int:
        cost = self._gap_tokens.get(gap)
        if cost is None:
            cost = self._gap_tokens[gap] = self.count(gap) - self._empty
        return cost

    def _estimate(self, a: _Piece, b: _Piece, gap: str) -> int:
        """Contextualised tokens of ``a`` + ``gap`` + ``b``, from the parts' counts.

        Exact for tokenizers that cut at whitespace (BERT word pieces), within a token or
        two at the seams for BPE; ``_verified`` counts every merged chunk exactly.
        """
        return (
            a.tokens + b.tokens - self._empty - self._prefix_cost(a.context) + (self._gap_cost(gap))
        )

    def _join(self, a: _Piece, b: _Piece, gap: str) -> _Piece:
        if a.kind == "slice":
            spans = [*a.spans[:-1], *joined_spans(a.spans[-1], b.spans[0]), *b.spans[1:]]
        else:
            spans = [*a.spans, *(s for s in b.spans if s not in a.spans[-1:])]
        ids = [*a.block_ids, *(i for i in b.block_ids if i not in a.block_ids)]
        return _Piece(
            text=a.text + gap + b.text,
            spans=spans,
            kind=a.kind if a.kind == b.kind else "rendered",
            block_ids=ids,
            context=a.context,
            is_slice=a.is_slice or b.is_slice,
            tokens=self._estimate(a, b, gap),
            tokens_known=False,
            element=b.element,
            slice_start=a.slice_start,
            members=[*(a.members or [a]), b],
        )

    def merged(self, pieces: Iterator[_Piece]) -> Iterator[_Piece]:
        """Greedy peer merging; every group yielded has a verified contextualised count.

        The estimate decides whether a peer joins (no count is spent on a merge it puts
        over the budget); the merged group is then counted exactly once, and if the
        estimate was optimistic the group is rebuilt counting every step.
        """
        group: _Piece | None = None
        for piece in pieces:
            if group is not None and self.policy.merge_peers:
                gap = self._joiner(group, piece)
                if gap is not None and self._estimate(group, piece, gap) <= self.budget:
                    group = self._join(group, piece, gap)
                    continue
            if group is not None:
                yield from self._verified(group)
            group = piece
        if group is not None:
            yield from self._verified(group)

    def _verified(self, group: _Piece) -> Iterator[_Piece]:
        if group.tokens_known:
            yield group
            return
        group.tokens = self._measure(group.context, group.text)
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
            joined.tokens = self._measure(joined.context, joined.text)
            joined.tokens_known = True
            if joined.tokens <= self.budget:
                current = joined
            else:
                yield current
                current = member
        yield current

    # -- records -------------------------------------------------------------------
    def record(self, position: int, piece: _Piece) -> Chunk:
        return record(
            self.doc,
            chunker_version=self.version,
            policy=self.policy,
            position=position,
            text=piece.text,
            block_ids=piece.block_ids,
            spans=piece.spans,
            heading_path=piece.context.heading_path,
            captions=piece.context.captions,
            is_slice=piece.is_slice,
            slice_start=piece.slice_start,
            token_estimate=piece.tokens,
        )


class HybridV1Chunker(TokenAwareChunker):
    """Chunker protocol implementation for ``hybrid-v1``."""

    version = "hybrid-v1"
    accepts_description = (
        "any document: hierarchical chunks split and merged so that the contextualised "
        "text fits max_tokens of the policy's tokenizer"
    )

    def iter_chunks(
        self, doc: CanonicalDocument, policy: ChunkPolicy, warnings: list[str] | None = None
    ) -> Iterator[Chunk]:
        """Chunks of ``doc`` in document order, streamed (lazy)."""
        run = _Run(self, doc, policy, warnings)
        elements = iter_elements(doc, merge_list_items=policy.merge_list_items, warnings=warnings)
        pieces = (p for i, el in enumerate(elements) for p in run.pieces(i, el))
        for position, piece in enumerate(run.merged(pieces)):
            yield run.record(position, piece)
