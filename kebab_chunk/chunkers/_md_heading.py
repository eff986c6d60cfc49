"""The engine of the md-heading labels from ``md-heading-v2`` on: heading-aware chunking
that keeps headings with their content, cuts at word or sentence boundaries, counts with
the policy's tokenizer and keeps ids local.

Every label it serves is a row of the registry with one
:class:`~kebab_chunk.chunkers.rules.MdHeadingRules` value (every rule in which it differs
from the others); the rest is this module's, the same for every label. A new label is a new
row, never a copied module or an overridden step. ``md-heading-v1`` has its own code
(docs/internals/decisions.md, "Issue 32: the md-heading labels are rows of one engine"). Why each
behaviour, against ``md-heading-v1``: docs/internals/label-changes.md.

What every label does:

- **Sections.** A section is a run of consecutive headings plus the blocks below them up
  to the next heading. Its headings are glued to its first content: no cut falls between
  the first heading and the first word of the content (unless the two together exceed the
  budget), so a heading whose own body is empty travels into the first chunk of its
  subsection. A chunk's ``heading_path`` is that of its first non-heading block (else its
  last block's).
- **Cuts.** A run is one exact source slice (its blocks joined by the line breaks their
  spans pin down) cut by :func:`kebab_chunk.chunkers._token_split.split_pieces`: whole
  blocks first, then blank lines, sentence ends, line breaks, whitespace. Every piece is
  measured whole, overlap included, with the policy's tokenizer; ``token_estimate`` is that
  count. Packing restarts at every section; a chunk that is a slice of its block(s) takes
  the id policy ``policy_hash#c<offset of its start inside its first block>``.
- **Exactness.** A chunk's text is ``source[first_span.char_start:last_span.char_end]``.
  Blocks whose text is not the source slice of their span (rendered HTML), image/audio
  references, and blocks separated by a gap their spans cannot pin down (a thematic break,
  link definitions, mixed line breaks) end the run: such a block stands alone whole (an
  image or audio reference's text is its alt text and caption), and a run that holds only
  headings before such a break is one case where headings form a chunk of their own; the
  other is a heading so long that it and the first word below it exceed the budget.
- ``merge_peers`` (default True) packs the blocks of a section together up to the budget;
  with ``merge_peers=False`` every block is its own chunk (the headings above it glued to
  it, a block over the budget cut as above).
- **Budget.** ``target_tokens``, lowered to ``max_tokens`` and to the tokenizer's own input
  limit when those are smaller (:func:`kebab_chunk.chunkers._budget.budget_of`).
"""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

from kebab_chunk._core import core
from kebab_chunk.chunkers._budget import budget_of
from kebab_chunk.chunkers._context import LineBound
from kebab_chunk.chunkers._separators import (
    TOKEN_LEVELS,
    BlockSlices,
    is_exact,
    join_gap,
    newline_style,
    separator_starts,
)
from kebab_chunk.chunkers._standalone import standalone_text
from kebab_chunk.chunkers._token_aware import warn
from kebab_chunk.chunkers._token_split import split_pieces
from kebab_chunk.chunkers.base import Label, LabelledChunker, make_chunk
from kebab_chunk.chunkers.embedding import HeadingRule
from kebab_chunk.chunkers.rules import MdHeadingRules
from kebab_chunk.errors import UnsupportedDocumentError
from kebab_chunk.model import (
    AudioRefBlock,
    Block,
    CanonicalDocument,
    Chunk,
    ChunkPolicy,
    ImageRefBlock,
    SourceSpan,
)
from kebab_chunk.tokenizers import get_tokenizer
from kebab_chunk.tokenizers.base import Counter, CounterCache

__all__ = ["MdHeadingChunker"]

_log = logging.getLogger(__name__)
_FIRST_WORD = re.compile(r"\s*\S+")
_MEDIA = (ImageRefBlock, AudioRefBlock)
#: Tokenizers whose count of any slice of a text is at most the count of the whole text
#: (``ceil(utf8 bytes / 3)`` and characters), so a run that fits is one piece.
_MONOTONE = frozenset({"bytes-3", "chars"})
_SPACE = re.compile(r"\s+")
#: Tokenizers the compiled core counts itself (any other is counted by calling back).
_NATIVE = frozenset({"bytes-3", "chars"})


def _skip_space(text: str, pos: int) -> int:
    """``pos`` moved past any whitespace (the cut search's start of a piece)."""
    match = _SPACE.match(text, pos)
    return match.end() if match else pos


class MdHeadingChunker(LabelledChunker):
    """Heading-aware chunker for documents with ``lines`` spans, sized by any tokenizer,
    built from one label row (its :class:`~kebab_chunk.chunkers.rules.MdHeadingRules`)."""

    def __init__(self, label: Label) -> None:
        super().__init__(label)
        self.rules = label.rules_as(MdHeadingRules)
        #: Read by :func:`kebab_chunk.chunkers.embedding.with_embedding`.
        self.embed_headings: HeadingRule = self.rules.embed_headings
        self._counters = CounterCache()

    def accepts(self, doc: CanonicalDocument) -> bool:
        """True when every span of every block is a ``lines`` span."""
        return all(span.kind == "lines" for block in doc.blocks for span in block.spans)

    def policy_hash(self, policy: ChunkPolicy) -> str:
        """The plain policy hash stored in every chunk (the same for every chunker)."""
        return policy.policy_hash

    def chunk(
        self, doc: CanonicalDocument, policy: ChunkPolicy, warnings: list[str] | None = None
    ) -> list[Chunk]:
        """All chunks of ``doc`` in document order, positions ``0..n-1``.

        A heading line cut by the rule ``bound_context_lines`` is logged and, when given,
        added to ``warnings`` (once per line and document).
        """
        if not self.accepts(doc):
            kind = next(
                span.kind for block in doc.blocks for span in block.spans if span.kind != "lines"
            )
            raise UnsupportedDocumentError(
                f"{self.label} needs blocks with line spans (Markdown, text, HTML, CSV) but "
                f"{doc.source_uri!r} has {kind} spans; use pdf-page-v3 for PDF documents or a "
                "chunker that accepts any document (such as hybrid-v4) for the others."
            )
        tokenizer = get_tokenizer(policy.tokenizer)
        count = self._counters.get(tokenizer)
        budget = budget_of(policy, tokenizer)
        bound = None
        if self.rules.bound_context_lines:
            bound = LineBound(
                count,
                budget,
                doc.source_uri,
                "a heading line",
                lambda message: warn(warnings, message, _log),
            )
        return _Run(doc, policy, count, budget, self.label, bound).run()


@dataclass(frozen=True, slots=True)
class _Member:
    """One block of a run and where its text starts in the run's joined text."""

    index: int
    offset: int


class _Run:
    """One chunking pass over one document."""

    def __init__(
        self,
        doc: CanonicalDocument,
        policy: ChunkPolicy,
        count: Counter,
        budget: int,
        label: str,
        bound: LineBound | None = None,
    ) -> None:
        self.doc = doc
        self.label = label
        #: How ``heading_path`` lines are recorded (None: whole, ``bound_context_lines`` off).
        self.bound = bound
        self.policy = policy
        self.count = count
        self.budget = budget
        self.overlap = min(policy.overlap_tokens, max(0, budget - 1))
        self.monotone = policy.tokenizer in _MONOTONE
        self.style = newline_style(doc.blocks)
        self.out: list[Chunk] = []
        self._slices = BlockSlices(doc.blocks)

    def run(self) -> list[Chunk]:
        """Walk sections; inside a section, runs of exact blocks joined by known gaps."""
        blocks = self.doc.blocks
        group: list[int] = []
        for index, block in enumerate(blocks):
            opaque = isinstance(block, _MEDIA) or not is_exact(block.text, block.spans)
            new_section = block.kind == "heading" and bool(group)
            new_section = new_section and blocks[group[-1]].kind != "heading"
            if opaque or new_section or (group and self._gap(group[-1], index) is None):
                self._flush(group)
            if opaque:
                self._standalone(index)
            else:
                group.append(index)
        self._flush(group)
        return self.out

    def _gap(self, prev: int, index: int) -> str | None:
        if index != prev + 1:
            return None
        blocks = self.doc.blocks
        return join_gap(blocks[prev].spans[0], blocks[index].spans[0], self.style)

    # -- standalone blocks ------------------------------------------------------------

    def _standalone(self, index: int) -> None:
        block = self.doc.blocks[index]
        text, captions = standalone_text(block)
        self._emit(text, [block.block_id], block.spans, block.heading_path, captions=captions)

    # -- runs of exact text blocks ----------------------------------------------------

    def _flush(self, group: list[int]) -> None:
        if not group:
            return
        if self.policy.merge_peers:
            self._pack(group)
        else:  # one chunk (or more, when over budget) per block, headings glued to it
            sub: list[int] = []
            for index in group:
                sub.append(index)
                if self.doc.blocks[index].kind != "heading":
                    self._pack(sub)
                    sub = []
            if sub:
                self._pack(sub)
        group.clear()

    def _pack(self, group: Sequence[int]) -> None:
        """Cut one run of exact blocks joined by known gaps into budget-sized pieces."""
        blocks = self.doc.blocks
        members: list[_Member] = []
        parts: list[str] = []
        length = 0
        for index in group:
            if members:
                gap = self._gap(members[-1].index, index)
                assert gap is not None  # run() ends a run at an unknown gap
                parts.append(gap)
                length += len(gap)
            members.append(_Member(index, length))
            parts.append(blocks[index].text)
            length += len(blocks[index].text)
        text = "".join(parts)
        if not text.strip():  # only blank blocks: keep them (nothing may be lost), whole
            for member in members:
                block = blocks[member.index]
                self._emit(block.text, [block.block_id], block.spans, block.heading_path)
            return
        for start, end, tokens in self._pieces(text, members):
            self._emit_piece(text, members, start, end, tokens)

    def _pieces(self, text: str, members: Sequence[_Member]) -> list[tuple[int, int, int]]:
        """``(start, end, tokens)`` pieces of a run's text (see the module docstring).

        A run that fits the budget as a whole is one piece. For a tokenizer whose count of
        a slice never exceeds the count of the whole text (``_MONOTONE``), that piece is
        known without the cut search: the search would accept every candidate end and
        take the last one, the text minus its leading and trailing whitespace. This skips
        finding every separator of the run (most runs fit), with the same result.
        """
        if self.monotone:
            total = self.count(text)
            if total <= self.budget:
                start = _skip_space(text, 0)
                end = len(text.rstrip())
                if start == 0 and end == len(text):
                    return [(0, end, total)]
                return [(start, end, self.count(text[start:end]))]
        blocks = self.doc.blocks
        starts = [m.offset for m in members[1:]]
        # Glue leading headings to the first word of the content below them.
        glue: int | None = None
        glue_end = 0
        lead = 0
        while lead < len(members) and blocks[members[lead].index].kind == "heading":
            lead += 1
        if 0 < lead < len(members):
            glue_end = members[lead].offset
            word = _FIRST_WORD.match(text, glue_end)
            word_end = word.end() if word else glue_end
            # Only when the headings and the first word fit: else a lone heading beats a
            # cut inside that word.
            if self.count(text[:word_end]) <= self.budget:
                glue = glue_end
        native = self.policy.tokenizer if self.policy.tokenizer in _NATIVE else None
        return split_run(text, starts, glue, self.count, self.budget, self.overlap, native)

    def _emit_piece(
        self, text: str, members: Sequence[_Member], start: int, end: int, tokens: int
    ) -> None:
        blocks = self.doc.blocks
        block_ids: list[str] = []
        spans: list[SourceSpan] = []
        paths: list[tuple[str, ...]] = []
        local_start: int | None = None
        is_slice = False
        last: Block | None = None
        # members are in order: skip those ending before the piece, stop at the first
        # starting at or after its end (a section of n blocks in n pieces is not O(n²))
        first = bisect.bisect_left(
            members, start, key=lambda m: m.offset + len(blocks[m.index].text)
        )
        for position in range(first, len(members)):
            member = members[position]
            block = blocks[member.index]
            lo, hi = member.offset, member.offset + len(block.text)
            if lo >= end:
                break
            empty_inside = lo == hi and start <= lo  # an empty block within the piece
            if hi <= start and not empty_inside:
                continue
            a, b = max(start, lo) - lo, min(end, hi) - lo
            if local_start is None:
                local_start = a
            is_slice = is_slice or a != 0 or b != len(block.text)
            block_ids.append(block.block_id)
            spans.append(self._slices.span(member.index, a, b))
            if block.kind != "heading":
                paths.append(block.heading_path)
            last = block
        # The path of the first content block (it holds any headings glued before it).
        assert last is not None  # a piece covers at least one block
        heading_path = paths[0] if paths else last.heading_path
        self._emit(
            text[start:end],
            block_ids,
            spans,
            heading_path,
            is_slice=is_slice,
            slice_start=local_start,
            tokens=tokens,
        )

    def _emit(
        self,
        text: str,
        block_ids: Sequence[str],
        spans: Sequence[SourceSpan],
        heading_path: Sequence[str],
        *,
        captions: Sequence[str] = (),
        is_slice: bool = False,
        slice_start: int | None = None,
        tokens: int | None = None,
    ) -> None:
        if self.bound is not None:
            heading_path = tuple(map(self.bound, heading_path))
        self.out.append(
            make_chunk(
                self.doc,
                chunker_version=self.label,
                policy=self.policy,
                position=len(self.out),
                text=text,
                block_ids=block_ids,
                spans=spans,
                heading_path=heading_path,
                captions=captions,
                is_slice=is_slice,
                slice_start=slice_start if is_slice else None,
                token_estimate=self.count(text) if tokens is None else tokens,
            )
        )


def split_run(
    text: str,
    structural: Sequence[int],
    glue_end: int | None,
    count: Counter,
    budget: int,
    overlap: int,
    native: str | None = None,
) -> list[tuple[int, int, int]]:
    """``(start, end, tokens)`` pieces of one run's text by the cut search.

    ``structural`` are the offsets where the run's later blocks start and ``glue_end`` the
    end of the leading headings no cut may fall in (None: no glue). The compiled core
    (:mod:`kebab_chunk._core`) does the same search when it is installed, counting by
    itself when ``native`` names a tokenizer it knows (``bytes-3``, ``chars``) and calling
    ``count`` otherwise; this code is its reference.
    """
    compiled = core()
    if compiled is not None:
        found: list[tuple[int, int, int]] | None = compiled.split_run(
            text, list(structural), glue_end, budget, overlap, native or count
        )
        if found is not None:  # None: text the core cannot read (a lone surrogate)
            return found
    levels = _LazyLevels(text, structural, glue_end)

    def measure(start: int, end: int) -> int:
        return count(text[start:end])

    chars_per_token = len(text) / max(1, count(text))
    return list(
        split_pieces(
            text,
            levels,
            measure,
            budget,
            chars_per_token=chars_per_token,
            overlap=measure,
            overlap_tokens=overlap,
        )
    )


class _LazyLevels(Sequence[list[int]]):
    """``_token_split.cut_levels(text, "prose", structural)``, each level computed when
    first asked for, and merged with sets instead of ``heapq.merge`` (a Python step per
    cut and level).

    The cut search tries the levels cleanest first and stops at the first one that has a
    fitting piece, so the dense levels (every sentence end, every whitespace run) are
    rarely needed; finding their separators was most of the time of cutting a long run.
    Every level, once computed, is the list ``cut_levels`` gives (without the cuts
    in ``(0, glue_end]`` when ``glue_end`` is given, as the heading glue requires), so the
    search sees exactly the same candidates.
    """

    def __init__(self, text: str, structural: Sequence[int], glue_end: int | None) -> None:
        self._text = text
        self._raw: list[Sequence[int] | None] = [structural] if structural else []
        self._raw.extend([None] * len(TOKEN_LEVELS["prose"]))
        self._offset = len(self._raw) - len(TOKEN_LEVELS["prose"])
        self._merged: set[int] = set()
        self._levels: list[list[int]] = []
        self._glue_end = glue_end

    def __len__(self) -> int:
        return len(self._raw)

    @overload
    def __getitem__(self, index: int) -> list[int]: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[list[int]]: ...

    def __getitem__(self, index: int | slice) -> list[int] | Sequence[list[int]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        text, n = self._text, len(self._text)
        while len(self._levels) <= index:
            i = len(self._levels)
            cuts = self._raw[i]
            if cuts is None:
                cuts = separator_starts(TOKEN_LEVELS["prose"][i - self._offset], text)
            self._merged.update(cuts)  # every cut is an offset into the text: 0 <= cut <= n
            self._merged.discard(0)
            self._merged.discard(n)
            level = sorted(self._merged)
            level.append(n)
            glue = self._glue_end
            if glue is not None:
                level = [c for c in level if c <= 0 or c > glue]
            self._levels.append(level)
        return self._levels[index]
