"""The md-header-chars engine: header sections cut to a character budget, one code path for
every ``md-header-chars-*`` label.

This is the LangChain-style "split on Markdown headers, then split long sections
recursively by characters" strategy, built on our parser's blocks so every piece keeps an
exact source location. A label is a row of the registry with one
:class:`~kebab_chunk.chunkers.rules.HeaderCharsRules` value; everything else is here (what
each label changed and why: docs/internals/label-changes.md). What the rules leave alone is the same
for every label:

- **Sections.** Every heading (levels 1–6) opens a new section; the blocks before the first
  heading form a headerless section. ``headers`` of a section is the stack of enclosing
  headings ``(level, title)``, outermost first, ending with its own heading; the heading's
  own source line is the first text of its section.
- **Runs.** A section's blocks are joined into *runs*, each one text: two consecutive blocks
  are in one run when the rules give the text between them (``exact_slices``), else the
  second starts a new run, and the text between them is in no chunk.
- **Budget.** ``max_chars`` / ``overlap_chars`` come from the policy (:func:`char_budget`).
  A run that fits is one chunk. A longer run is split between blocks, and any piece still
  too long at the next level: ``_separators.CHAR_LEVELS`` (blank lines, line breaks,
  whitespace), and finally hard every ``max_chars`` characters. Consecutive pieces of one
  level merge greedily up to ``max_chars``, and a new chunk repeats the trailing pieces of
  the previous one that fit in ``overlap_chars`` (hard cuts overlap by exactly
  ``overlap_chars``). Overlap never crosses a heading or a run. Every chunk of a section
  that gives more than one chunk has ``recursive_chunk`` set.
- **Records.** A chunk lists one span per block it touches (the exact piece of that block),
  the ids of those blocks in order, and uses the slice guard in its id when any piece is
  less than its whole block.

Offsets are computed from the block spans while cutting, never found by searching.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from kebab_chunk.chunkers._separators import (
    CHAR_LEVELS,
    is_exact,
    join_gap,
    line_break_ends,
    newline_style,
    separator_spans,
    sub_line_span,
)
from kebab_chunk.chunkers.base import Label, LabelledChunker, make_chunk
from kebab_chunk.chunkers.rules import HeaderCharsRules
from kebab_chunk.errors import UnsupportedDocumentError
from kebab_chunk.model import (
    AudioRefBlock,
    Block,
    CanonicalDocument,
    Chunk,
    ChunkPolicy,
    HeadingBlock,
    ImageRefBlock,
    LineSpan,
)
from kebab_chunk.tokenizers import BYTES_PER_TOKEN

__all__ = [
    "CHARS_TOKENIZER",
    "BlockPart",
    "Header",
    "HeaderCharsChunker",
    "PlannedChunk",
    "char_budget",
]

#: Policy ``tokenizer`` value that makes one policy token one character (exact budgets).
CHARS_TOKENIZER = "chars"

_ACCEPTED_MEDIA_TYPES = ("text/markdown", "text/plain")

#: Split levels: between blocks, then inside one block ``_separators.CHAR_LEVELS`` (blank
#: lines, line breaks, whitespace, coarsest first), then a final hard cut.
_BETWEEN_BLOCKS = 0
_HARD = len(CHAR_LEVELS) + 1


@dataclass(frozen=True)
class Header:
    """One enclosing heading of a chunk (``{"level", "text"}`` in ``MarkdownChunker``'s
    metadata)."""

    level: int
    text: str


@dataclass(frozen=True)
class BlockPart:
    """The exact part of one block that a chunk contains."""

    block_id: str
    span: LineSpan
    whole_block: bool


@dataclass(frozen=True)
class PlannedChunk:
    """One chunk before it becomes a record: its text, block parts and section headers."""

    text: str
    parts: tuple[BlockPart, ...]
    headers: tuple[Header, ...]
    recursive_chunk: bool
    captions: tuple[str, ...]


def char_budget(policy: ChunkPolicy) -> tuple[int, int]:
    """``(max_chars, overlap_chars)`` for a policy.

    With ``tokenizer="chars"`` one policy token is one character, so any ``MarkdownChunker`` budget
    is expressible exactly; for every other tokenizer a token is ``BYTES_PER_TOKEN`` (3)
    characters, the byte proxy's ratio (as ``pdf-page-v1`` budgets).
    """
    per_token = 1 if policy.tokenizer == CHARS_TOKENIZER else BYTES_PER_TOKEN
    return policy.target_tokens * per_token, policy.overlap_tokens * per_token


#: The text between two consecutive blocks' spans, or None where it starts a new run.
_GapOf = Callable[[LineSpan, LineSpan], str | None]


def _newline_gap(a: LineSpan, b: LineSpan) -> str:
    """One ``"\\n"`` per line break between ``a`` and ``b`` (at least one, at most the
    characters between them), whatever the source holds there (``exact_slices=False``)."""
    line_gap = b.line_start - a.line_end
    room = b.char_start - a.char_end
    return "\n" * max(0, min(max(line_gap, 1), room))


@dataclass(frozen=True)
class _Unit:
    """A block placed in its run's text: ``[start, end)`` of the run text."""

    block: Block
    span: LineSpan
    start: int
    end: int
    #: End offsets (within ``block.text``) of the block's line breaks, for line numbers.
    breaks: tuple[int, ...]


class _Run:
    """Blocks of one section joined by the gaps the rules give: one text."""

    def __init__(self) -> None:
        self.units: list[_Unit] = []
        self._parts: list[str] = []
        self._length = 0

    def add(self, block: Block, span: LineSpan, gap: str) -> None:
        """Append ``block`` after ``gap`` (the text written since the last block)."""
        if gap:
            self._parts.append(gap)
            self._length += len(gap)
        breaks = tuple(line_break_ends(block.text))
        self.units.append(_Unit(block, span, self._length, self._length + len(block.text), breaks))
        self._parts.append(block.text)
        self._length += len(block.text)

    @property
    def text(self) -> str:
        if len(self._parts) != 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0]


class _Section:
    """One header section: its headers and its runs of blocks, in document order."""

    def __init__(self, headers: tuple[Header, ...]) -> None:
        self.headers = headers
        self.runs: list[_Run] = []

    def add(self, block: Block, span: LineSpan, gap_of: _GapOf) -> None:
        """Extend the last run when the gap before ``block`` is given, else start a run."""
        gap = None
        if self.runs:
            gap = gap_of(self.runs[-1].units[-1].span, span)
        if gap is None:
            self.runs.append(_Run())
            gap = ""
        self.runs[-1].add(block, span, gap)


def _line_span(block: Block) -> LineSpan | None:
    """The block's single ``lines`` span if it locates exactly ``block.text``."""
    span = block.spans[0] if is_exact(block.text, block.spans) else None
    return span if isinstance(span, LineSpan) else None


def _sections(doc: CanonicalDocument, label: str, rules: HeaderCharsRules) -> list[_Section]:
    gap_of: _GapOf = _newline_gap
    if rules.exact_slices:
        gap_of = partial(join_gap, style=newline_style(doc.blocks))
    headers: tuple[Header, ...] = ()
    if rules.title_root and doc.title:
        headers = (Header(1, doc.title),)  # a level-1 heading replaces it (rules.py)
    sections: list[_Section] = []
    for block in doc.blocks:
        span = _line_span(block)
        if span is None:
            raise UnsupportedDocumentError(
                f"{label} needs every block to carry one lines span covering its text, "
                f"but block {block.block_id} of {doc.source_uri!r} does not; "
                "parse the file with a text parser such as md-pyromark-v1."
            )
        if isinstance(block, HeadingBlock):
            kept = tuple(h for h in headers if h.level < block.level)
            headers = (*kept, Header(block.level, block.title))
            sections.append(_Section(headers))
        elif not sections:
            sections.append(_Section(headers))
        if block.text:
            sections[-1].add(block, span, gap_of)
    return [s for s in sections if s.runs]


class _Splitter:
    """Recursive character splitting of one run's text into ``[start, end)`` ranges."""

    def __init__(self, run: _Run, max_chars: int, overlap_chars: int) -> None:
        self.run = run
        self.text = run.text
        self.max_chars = max_chars
        self.overlap_chars = overlap_chars

    def split(self) -> list[tuple[int, int]]:
        units = self.run.units
        return self._split(units[0].start, units[-1].end, _BETWEEN_BLOCKS)

    def _pieces(self, start: int, end: int, level: int) -> list[tuple[int, int]]:
        if level == _BETWEEN_BLOCKS:
            return [(u.start, u.end) for u in self.run.units if start <= u.start < end]
        pieces: list[tuple[int, int]] = []
        cursor = start
        for sep_start, sep_end in separator_spans(CHAR_LEVELS[level - 1], self.text, start, end):
            pieces.append((cursor, sep_start))
            cursor = sep_end
        pieces.append((cursor, end))
        return [(s, e) for s, e in pieces if self.text[s:e].strip()]

    def _split(self, start: int, end: int, level: int) -> list[tuple[int, int]]:
        if end - start <= self.max_chars:
            return [(start, end)]
        if level == _HARD:
            return self._hard(start, end)
        out: list[tuple[int, int]] = []
        fitting: list[tuple[int, int]] = []
        for piece_start, piece_end in self._pieces(start, end, level):
            if piece_end - piece_start <= self.max_chars:
                fitting.append((piece_start, piece_end))
                continue
            out.extend(self._merge(fitting))
            fitting = []
            out.extend(self._split(piece_start, piece_end, level + 1))
        out.extend(self._merge(fitting))
        return out

    def _merge(self, pieces: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
        """Greedy merge of consecutive pieces, repeating a tail within the overlap."""
        out: list[tuple[int, int]] = []
        window: deque[tuple[int, int]] = deque()
        for piece in pieces:
            if window and piece[1] - window[0][0] > self.max_chars:
                out.append((window[0][0], window[-1][1]))
                # Keep the trailing pieces that fit in the overlap and leave room for the
                # new piece; at least one piece goes, so chunk starts strictly increase.
                while window and (
                    window[-1][1] - window[0][0] > self.overlap_chars
                    or piece[1] - window[0][0] > self.max_chars
                ):
                    window.popleft()
            window.append(piece)
        if window:
            out.append((window[0][0], window[-1][1]))
        return out

    def _hard(self, start: int, end: int) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        cursor = start
        while True:
            stop = min(cursor + self.max_chars, end)
            out.append((cursor, stop))
            if stop == end:
                return out
            cursor = stop - self.overlap_chars


def _caption(block: Block) -> str:
    if isinstance(block, ImageRefBlock):
        return block.caption or block.alt
    if isinstance(block, AudioRefBlock):
        return block.caption or ""
    return ""


def _plan_run(
    run: _Run, ranges: Sequence[tuple[int, int]], section: _Section, recursive: bool
) -> list[PlannedChunk]:
    text = run.text
    units = run.units
    unit_ends = [u.end for u in units]
    planned: list[PlannedChunk] = []
    for start, end in ranges:
        parts: list[BlockPart] = []
        captions: list[str] = []
        # Units overlapping [start, end): from the first one ending after ``start``.
        for index in range(bisect_right(unit_ends, start), len(units)):
            unit = units[index]
            if unit.start >= end:
                break
            lo, hi = max(start, unit.start), min(end, unit.end)
            a, b = lo - unit.start, hi - unit.start
            span = sub_line_span(unit.span, unit.breaks, a, b)
            whole = a == 0 and b == len(unit.block.text)
            parts.append(BlockPart(unit.block.block_id, span, whole))
            if caption := _caption(unit.block):
                captions.append(caption)
        planned.append(
            PlannedChunk(
                text=text[start:end],
                parts=tuple(parts),
                headers=section.headers,
                recursive_chunk=recursive,
                captions=tuple(captions),
            )
        )
    return planned


def _plan_section(section: _Section, max_chars: int, overlap_chars: int) -> list[PlannedChunk]:
    splits = [(run, _Splitter(run, max_chars, overlap_chars).split()) for run in section.runs]
    recursive = sum(len(ranges) for _, ranges in splits) > 1
    planned: list[PlannedChunk] = []
    for run, ranges in splits:
        planned.extend(_plan_run(run, ranges, section, recursive))
    return planned


def _plan_chunks(
    doc: CanonicalDocument,
    max_chars: int,
    overlap_chars: int,
    label: str,
    rules: HeaderCharsRules,
) -> list[PlannedChunk]:
    """The chunks of ``doc`` in document order under ``rules``, before they become records
    (``label`` is named in errors)."""
    if max_chars <= 0 or not 0 <= overlap_chars < max_chars:
        raise ValueError(
            f"need max_chars > 0 and 0 <= overlap_chars < max_chars, "
            f"got max_chars={max_chars}, overlap_chars={overlap_chars}."
        )
    planned: list[PlannedChunk] = []
    for section in _sections(doc, label, rules):
        planned.extend(_plan_section(section, max_chars, overlap_chars))
    return planned


def _records_from_plan(
    doc: CanonicalDocument, policy: ChunkPolicy, planned: Sequence[PlannedChunk], label: str
) -> list[Chunk]:
    """Planned chunks as records of ``label`` (ids, token estimates)."""
    return [
        make_chunk(
            doc,
            chunker_version=label,
            policy=policy,
            position=position,
            text=plan.text,
            block_ids=[p.block_id for p in plan.parts],
            spans=[p.span for p in plan.parts],
            heading_path=[h.text for h in plan.headers],
            captions=plan.captions,
            is_slice=not all(p.whole_block for p in plan.parts),
        )
        for position, plan in enumerate(planned)
    ]


class HeaderCharsChunker(LabelledChunker):
    """The engine as a chunker, built from one label row (its
    :class:`~kebab_chunk.chunkers.rules.HeaderCharsRules`). ``chars`` makes a token one
    character; every other tokenizer counts as ``bytes-3``."""

    def __init__(self, label: Label) -> None:
        super().__init__(label)
        self.rules = label.rules_as(HeaderCharsRules)

    def plan_chunks(
        self, doc: CanonicalDocument, max_chars: int, overlap_chars: int
    ) -> list[PlannedChunk]:
        """The chunks of ``doc`` in document order, before they become records
        (``MarkdownChunker`` reads them)."""
        return _plan_chunks(doc, max_chars, overlap_chars, self.label, self.rules)

    def records_from_plan(
        self, doc: CanonicalDocument, policy: ChunkPolicy, planned: Sequence[PlannedChunk]
    ) -> list[Chunk]:
        """Turn planned chunks into this label's records (ids, token estimates)."""
        return _records_from_plan(doc, policy, planned, self.label)

    def accepts(self, doc: CanonicalDocument) -> bool:
        """Markdown / plain text whose blocks each carry one exact ``lines`` span."""
        return doc.media_type in _ACCEPTED_MEDIA_TYPES and all(
            _line_span(block) is not None for block in doc.blocks
        )

    def chunk(self, doc: CanonicalDocument, policy: ChunkPolicy) -> list[Chunk]:
        """All chunks of ``doc`` in document order (``position`` 0, 1, ...)."""
        if doc.media_type not in _ACCEPTED_MEDIA_TYPES:
            raise UnsupportedDocumentError(
                f"{self.label} chunks Markdown and plain text, not {doc.media_type!r} "
                f"({doc.source_uri!r}); pick a label that accepts it (`kebab-chunk labels` "
                "lists each with the media types it is the default for)."
            )
        max_chars, overlap_chars = char_budget(policy)
        return self.records_from_plan(doc, policy, self.plan_chunks(doc, max_chars, overlap_chars))
