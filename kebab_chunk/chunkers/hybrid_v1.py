"""``hybrid-v1``: hierarchical chunks refined to a hard token budget (docling's HybridChunker).

Budget: ``policy.max_tokens`` if set (the user's value wins, above or below the model's),
else the tokenizer's ``max_tokens`` (MiniLM: 256), else ``policy.target_tokens``. Tokens
are counted with ``policy.tokenizer`` on the *contextualised* form (``contextualize``:
heading path, captions, text), and every chunk satisfies
``count_tokens(contextualize(chunk)) <= budget``; ``token_estimate`` is exactly that count.

1. Start from the ``hierarchical-v1`` elements (``_token_aware.iter_elements``, same
   ``merge_list_items``).
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
   from the spans (see ``_separators.join_gap``), so the merged text is one exact source
   slice; otherwise they stay apart. Structured sources (DOCX, docling JSON) and rendered text
   (HTML) have no source text between elements: their pieces are joined with ``"\\n"`` and
   keep one span per element. A source slice is never merged with anything else.

The only way a chunk can exceed the budget is a single character that alone does not fit
(a budget of a few tokens); it is emitted with a warning rather than dropped.

Counting (speed only, never output): where the tokenizer proves that counts add up over a
cut (``tokenizers.base.cut_rule``), a contextualised text is counted as its section's
prefix (each line counted once) plus the text, and a merged chunk's exact count is derived
from its parts' (plus, when the cut before the gap is not proven, the short tail of the left
part after its last proven cut, counted with and without the gap) instead of counting the
whole merged text again. Merge decisions use the same estimate either way.

``iter_chunks`` streams: one element and one group of peers are held at a time.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from kebab_chunk._quote import quote_all
from kebab_chunk.chunkers._budget import resolve_max_tokens
from kebab_chunk.chunkers._separators import join_gap, newline_style
from kebab_chunk.chunkers._slices import joined_spans
from kebab_chunk.chunkers._token_aware import Element, TokenAwareChunker, warn
from kebab_chunk.chunkers._token_split import cut_levels, split_pieces
from kebab_chunk.chunkers.base import make_chunk
from kebab_chunk.chunkers.contextualize import context_prefix
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy, SourceSpan
from kebab_chunk.tokenizers import get_tokenizer
from kebab_chunk.tokenizers.base import CutRule

__all__ = ["HybridV1Chunker"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Context:
    """Heading path and captions a piece is contextualised with, and their prefix string."""

    heading_path: tuple[str, ...]
    captions: tuple[str, ...]
    prefix: str


@dataclass(slots=True)
class _Draft:
    """A chunk in the making: a piece of one element, or a group of merged pieces, with its
    contextualised count."""

    text: str
    spans: Sequence[SourceSpan]
    kind: str  # the element's anchor kind: "slice", "element" or "rendered"
    block_ids: Sequence[str]
    context: _Context
    is_slice: bool
    tokens: int
    tokens_known: bool
    element: int
    slice_start: int  # offset that names this slice in its chunk id (see make_chunk)
    members: Sequence[_Draft] = ()
    exact: int | None = None  # a merged group's exact count, when the cuts prove it


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
        self.adds_up = chunker.cut_rule(self.tokenizer)
        self.budget = resolve_max_tokens(policy, self.tokenizer)
        self.overlap_tokens = min(policy.overlap_tokens, self.budget // 2)
        self._style: tuple[str | None] | None = None  # (newline_style(doc.blocks),) once used
        self._empty = self.count("")  # what an empty text costs (special tokens)
        self.warnings = warnings
        self._prefix_tokens: dict[str, int] = {}
        self._line_tokens: dict[str, int] = {}
        self._tail_tokens: dict[str, int] = {}
        self._contexts: dict[tuple[tuple[str, ...], tuple[str, ...]], _Context] = {}
        self._gap_tokens: dict[str, int] = {}

    # -- context -------------------------------------------------------------------
    def _context(self, heading_path: tuple[str, ...], captions: tuple[str, ...]) -> _Context:
        key = (heading_path, captions)
        context = self._contexts.get(key)
        if context is None:  # interned: equal contexts are one object (``_joiner`` relies on it)
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
                f"{dropped} line(s) {quote_all(lines[:dropped])} are left out of its chunks' "
                "context"
            )
        n_head = len(el.heading_path)
        return self._context(
            tuple(el.heading_path[min(dropped, n_head) :]),
            tuple([*el.captions, *extra][max(dropped - n_head, 0) :]),
        )

    def _warn(self, message: str) -> None:
        warn(self.warnings, message, _log)

    def _measure(self, context: _Context, text: str) -> int:
        if not context.prefix:
            return self.count(text)
        if self.adds_up is not None and text and self.adds_up("\n", text[0]):
            return self._prefix_cost(context) + self.count(text)  # prefix counted once
        return self.count(f"{context.prefix}\n{text}")

    def _prefix_cost(self, context: _Context) -> int:
        """Tokens the context lines add to a text (0 without context)."""
        if not context.prefix:
            return 0
        cost = self._prefix_tokens.get(context.prefix)
        if cost is None:
            lines = (*context.heading_path, *context.captions)
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

    # -- step 2: split ---------------------------------------------------------------
    def stream(self, elements: Iterator[Element]) -> Iterator[_Draft]:
        """The pieces of every element in order (most elements fit whole: one piece)."""
        for index, el in enumerate(elements):
            whole = self._context(el.heading_path, el.captions)
            tokens = self._measure(whole, el.text)
            if tokens <= self.budget:
                yield self._piece(el, index, 0, len(el.text), whole, tokens)
            else:
                yield from self._split(index, el, whole, tokens)

    def _split(self, index: int, el: Element, whole: _Context, tokens: int) -> Iterator[_Draft]:
        """Pieces of an element whose contextualised form (``tokens``) is over budget."""
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
        for start, end, piece_tokens in split_pieces(
            el.text,
            cut_levels(el.text, el.style, el.cuts),
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
            yield self._piece(el, index, start, end, context, piece_tokens)

    def _piece(
        self, el: Element, index: int, start: int, end: int, context: _Context, tokens: int
    ) -> _Draft:
        text = el.text
        if start == 0 and end == len(text):
            return _Draft(
                text, el.spans, el.anchor.kind, el.block_ids, context, el.is_slice, tokens,
                True, index, el.origin,
            )  # fmt: skip
        return _Draft(
            text[start:end], el.anchor.locate(start, end), el.anchor.kind, el.block_ids,
            context, True, tokens, True, index, el.origin + start,
        )  # fmt: skip

    # -- step 3: merge peers -------------------------------------------------------------
    def _joiner(self, a: _Draft, b: _Draft) -> str | None:
        """Text between ``a`` and ``b`` in a merged chunk, or None when they must stay apart.

        Source slices join only over a gap the spans pin down. Structured (element) and
        rendered texts have no source text between elements: they join with ``"\\n"``.
        A slice never joins a non-slice, so an exact chunk never becomes inexact.
        """
        if a.element == b.element or a.context is not b.context:  # contexts are interned
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

    def _estimate(self, a: _Draft, b: _Draft, gap: str) -> int:
        """Contextualised tokens of ``a`` + ``gap`` + ``b``, from the parts' counts.

        Exact for tokenizers that cut at whitespace (BERT word pieces), within a token or
        two at the seams for BPE; every merged chunk's exact count is then derived
        (``_exact``) or counted (``_verified``).
        """
        return (
            a.tokens + b.tokens - self._empty - self._prefix_cost(a.context) + (self._gap_cost(gap))
        )

    def _exact(self, a: _Draft, b: _Draft, gap: str) -> int | None:
        """Exact contextualised count of ``a`` + ``gap`` + ``b`` from proven cuts, or None.

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

    def _join(self, a: _Draft, b: _Draft, gap: str) -> _Draft:
        if a.kind == "slice":
            spans = [*a.spans[:-1], *joined_spans(a.spans[-1], b.spans[0]), *b.spans[1:]]
        else:
            spans = [*a.spans, *(s for s in b.spans if s not in a.spans[-1:])]
        ids = [*a.block_ids, *(i for i in b.block_ids if i not in a.block_ids)]
        return _Draft(
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
            exact=self._exact(a, b, gap),
        )

    def merged(self, pieces: Iterator[_Draft]) -> Iterator[_Draft]:
        """Greedy peer merging; every group yielded has a verified contextualised count.

        The estimate decides whether a peer joins (no count is spent on a merge it puts
        over the budget); the merged group is then counted exactly once, and if the
        estimate was optimistic the group is rebuilt counting every step.
        """
        group: _Draft | None = None
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

    def _verified(self, group: _Draft) -> Iterator[_Draft]:
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
    def record(self, position: int, piece: _Draft) -> Chunk:
        return make_chunk(
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


class HybridV1Chunker(TokenAwareChunker):
    """Chunker protocol implementation for ``hybrid-v1``."""

    version = "hybrid-v1"
    accepts_description = (
        "any document: hierarchical chunks split and merged so that the contextualised "
        "text fits max_tokens of the policy's tokenizer"
    )
    #: Every tokenizer: chunks are split and merged by the policy's tokenizer's counts.
    uses_tokenizers: frozenset[str] | None = None

    def chunks_of(
        self,
        doc: CanonicalDocument,
        policy: ChunkPolicy,
        elements: Iterator[Element],
        warnings: list[str] | None,
    ) -> Iterator[Chunk]:
        """The elements split and merged to the budget, streamed (lazy)."""
        run = _Run(self, doc, policy, warnings)
        for position, piece in enumerate(run.merged(run.stream(elements))):
            yield run.record(position, piece)
