"""The engine of the pdf-page labels from ``pdf-page-v2`` on: page-bounded chunks with exact
page citations, cut at clean boundaries, counted with the policy's tokenizer, never over
the budget.

Every label it serves is a row of the registry with one
:class:`~kebab_chunk.chunkers.rules.PageRules` value (every rule in which it differs from
the others); the rest is this module's, the same for every label. A new label is a new row,
never a copied module or an overridden step. ``pdf-page-v1`` has its own code
(docs/internals/decisions.md, "Issue 32: pdf-page labels as data").

What every label does (why, against ``pdf-page-v1``: docs/internals/label-changes.md):

Input: every block a paragraph or a heading whose text is the exact slice of its one
``page`` span (``pdf-text-v1`` gives one paragraph per page; a parser that also emits
headings found on the page is accepted as well). Consecutive blocks on the same page whose
spans touch (one ends where the next starts) form one *run*, cut as one text; anything
else starts a new run, so a chunk never crosses a page or a gap of unknown text. Headings
at the front of a run, or in its middle, are glued to the first word of the content below
them (no cut between), unless the two together exceed the budget. A chunk's
``heading_path`` is that of its first non-heading block (else its last block's).

Cuts: :func:`kebab_chunk.chunkers._token_split.split_pieces` over the levels of
``cut_levels(text, "prose", block starts)``, minus the cuts a glued range holds (headings,
and list markers under ``glue_list_markers``); every piece measured whole, overlap
included, with the policy's tokenizer; ``token_estimate`` is that count. A chunk that is
one of several pieces of a run takes the id policy ``policy_hash#c<offset of its start
inside its first block>``.

Exactness: each chunk has one ``PageSpan`` and ``page_text[char_start:char_end] ==
chunk.text``.

Budget: ``target_tokens``, lowered to ``max_tokens`` and to the tokenizer's own input limit
when those are smaller (:func:`kebab_chunk.chunkers._budget.budget_of`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from kebab_chunk.chunkers._budget import budget_of
from kebab_chunk.chunkers._separators import is_exact
from kebab_chunk.chunkers._token_split import cut_levels, split_pieces
from kebab_chunk.chunkers.base import Label, LabelledChunker, make_chunk
from kebab_chunk.chunkers.rules import PageRules
from kebab_chunk.errors import UnsupportedDocumentError
from kebab_chunk.model import (
    Block,
    CanonicalDocument,
    Chunk,
    ChunkPolicy,
    HeadingBlock,
    PageSpan,
    ParagraphBlock,
)
from kebab_chunk.tokenizers import get_tokenizer
from kebab_chunk.tokenizers.base import Counter, CounterCache

__all__ = ["PageChunker"]

_PDF_MEDIA_TYPE = "application/pdf"
_FIRST_WORD = re.compile(r"\s*\S+")
#: A list marker at a line start and the blanks after it, followed by the item's text:
#: a number, a single letter or a short roman numeral closed by ``.`` or ``)``, a
#: parenthesised one, or a bullet (``PageRules.glue_list_markers``).
_MARKER = re.compile(
    r"^[ \t]*(?:(?:\d{1,3}|[A-Za-z]|[ivxlcdm]{2,4}|[IVXLCDM]{2,4})[.)]|\(\w{1,3}\)"
    r"|[\u2022\u25e6\u25aa\u2023\u2043\u00b7*\-\u2013])[ \t]+(?=\S)",
    re.MULTILINE,
)


class _Glued:
    """Ranges ``(lo, hi]`` where no cut may fall, merged, so that a cut is checked by one
    bisection (a page of thousands of list lines has thousands of ranges)."""

    def __init__(self, ranges: Sequence[tuple[int, int]]) -> None:
        merged: list[list[int]] = []
        for lo, hi in sorted(ranges):
            if merged and lo < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], hi)
            else:
                merged.append([lo, hi])
        self._los = [lo for lo, _ in merged]
        self._his = [hi for _, hi in merged]

    def __bool__(self) -> bool:
        return bool(self._los)

    def holds(self, cut: int) -> bool:
        """Whether ``cut`` falls inside a range (``lo < cut <= hi``)."""
        i = bisect.bisect_left(self._los, cut) - 1
        return i >= 0 and cut <= self._his[i]


def _page_span(block: Block) -> PageSpan | None:
    """The block's page span if it is a paragraph or heading with exactly one span that
    covers its text."""
    if not isinstance(block, ParagraphBlock | HeadingBlock):
        return None
    if not is_exact(block.text, block.spans):
        return None
    span = block.spans[0]
    return span if isinstance(span, PageSpan) else None


@dataclass(frozen=True, slots=True)
class _Member:
    """One block of a run, its page span and where its text starts in the run's text."""

    block: Block
    span: PageSpan
    offset: int


class _Run:
    """One chunking pass over one document."""

    def __init__(
        self,
        doc: CanonicalDocument,
        policy: ChunkPolicy,
        count: Counter,
        budget: int,
        rules: PageRules,
        label: str,
    ) -> None:
        self.doc = doc
        self.rules = rules
        self.label = label
        self.policy = policy
        self.count = count
        self.budget = budget
        self.overlap = min(policy.overlap_tokens, max(0, budget - 1))
        self.out: list[Chunk] = []

    def run(self) -> list[Chunk]:
        """Group touching blocks of one page into runs and cut each run."""
        group: list[_Member] = []
        length = 0
        for block in self.doc.blocks:
            span = _page_span(block)
            assert span is not None  # guaranteed by accepts()
            if group:
                last = group[-1].span
                if last.page != span.page or last.char_end != span.char_start:
                    self._cut(group)
                    group, length = [], 0
            group.append(_Member(block, span, length))
            length += len(block.text)
        self._cut(group)
        return self.out

    def _cut(self, members: Sequence[_Member]) -> None:
        if not members:
            return
        text = "".join(m.block.text for m in members)
        if not text.strip():  # nothing to retrieve: a blank page gives no chunk
            return
        pieces = self._pieces(text, members)
        for start, end, tokens in pieces:
            self._emit(text, members, start, end, tokens, is_slice=len(pieces) > 1)

    def _pieces(self, text: str, members: Sequence[_Member]) -> list[tuple[int, int, int]]:
        """``(start, end, tokens)`` pieces of one run's text (see the module docstring)."""
        levels = cut_levels(text, "prose", [m.offset for m in members[1:]])
        glued = _Glued(self._glued(text, members))
        if glued:
            levels = [[c for c in cuts if not glued.holds(c)] for cuts in levels]

        def measure(start: int, end: int) -> int:
            return self.count(text[start:end])

        chars_per_token = len(text) / max(1, self.count(text))
        return list(
            split_pieces(
                text,
                levels,
                measure,
                self.budget,
                chars_per_token=chars_per_token,
                overlap=measure,
                overlap_tokens=self.overlap,
            )
        )

    def _glued(self, text: str, members: Sequence[_Member]) -> list[tuple[int, int]]:
        """Ranges ``(lo, hi)`` of the run's text: no cut may fall after ``lo`` and up to
        ``hi``.

        A run of headings is glued to the first word of the block after it, when the two
        fit the budget together (else a lone heading beats a cut inside that word): the
        range runs from the first heading's start to that block's start. Under
        ``glue_list_markers``, each line's leading list marker is glued to its item: the
        range runs from the line start to the end of the blanks after the marker.
        """
        ranges: list[tuple[int, int]] = []
        i = 0
        while i < len(members):
            if not isinstance(members[i].block, HeadingBlock):
                i += 1
                continue
            first = i
            while i < len(members) and isinstance(members[i].block, HeadingBlock):
                i += 1
            if i == len(members):
                break
            lo, hi = members[first].offset, members[i].offset
            word = _FIRST_WORD.match(text, hi)
            if self.count(text[lo : word.end() if word else hi]) <= self.budget:
                ranges.append((lo, hi))
        if self.rules.glue_list_markers:
            ranges.extend((m.start(), m.end()) for m in _MARKER.finditer(text))
        return ranges

    def _emit(
        self,
        text: str,
        members: Sequence[_Member],
        start: int,
        end: int,
        tokens: int,
        *,
        is_slice: bool,
    ) -> None:
        covered = [m for m in members if m.offset < end and start < m.offset + len(m.block.text)]
        first = covered[0]
        local_start = start - first.offset
        content = [m for m in covered if not isinstance(m.block, HeadingBlock)]
        heading_path = (content[0] if content else covered[-1]).block.heading_path
        span = PageSpan(
            page=first.span.page,
            char_start=first.span.char_start + local_start,
            char_end=first.span.char_start + local_start + (end - start),
        )
        self.out.append(
            make_chunk(
                self.doc,
                chunker_version=self.label,
                policy=self.policy,
                position=len(self.out),
                text=text[start:end],
                block_ids=[m.block.block_id for m in covered],
                spans=(span,),
                heading_path=heading_path,
                is_slice=is_slice,
                slice_start=local_start if is_slice else None,
                token_estimate=tokens,
            )
        )


class PageChunker(LabelledChunker):
    """Page-aware chunker for PDF documents, sized by any tokenizer, built from one label
    row (its :class:`~kebab_chunk.chunkers.rules.PageRules`; see the module docstring)."""

    def __init__(self, label: Label) -> None:
        super().__init__(label)
        self.rules = label.rules_as(PageRules)
        self._counters = CounterCache()

    def accepts(self, doc: CanonicalDocument) -> bool:
        """True when every block is a page-spanned paragraph or heading (an empty document
        must be a PDF)."""
        if not doc.blocks:
            return doc.media_type == _PDF_MEDIA_TYPE
        return all(_page_span(block) is not None for block in doc.blocks)

    def chunk(self, doc: CanonicalDocument, policy: ChunkPolicy) -> list[Chunk]:
        """All chunks of ``doc`` in page order; raises UnsupportedDocumentError for others."""
        if not self.accepts(doc):
            raise UnsupportedDocumentError(
                f"{self.label} needs a PDF document whose blocks are paragraphs or headings "
                f"citing one exact page range each, but {doc.source_uri!r} is not one; parse "
                "it with a PDF parser (pdf-text-v1) or use a chunker that accepts any "
                "document (such as hierarchical-v1)."
            )
        tokenizer = get_tokenizer(policy.tokenizer)
        count = self._counters.get(tokenizer)
        budget = budget_of(policy, tokenizer)
        return _Run(doc, policy, count, budget, self.rules, self.label).run()
