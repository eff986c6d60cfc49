"""Where chunkers may cut text, and how they read line breaks: the one place for both.

**Line breaks.** ``"\\r\\n"``, ``"\\n"`` and a lone ``"\\r"`` are one line break each, as in
the parsers' newline view: nothing is translated, so offsets index the source as read
(docs/internals/decisions.md, "Line numbers by incremental counting"). :data:`LINE_BREAK`
finds them; :func:`line_break_ends` and :func:`sub_line_span` turn offsets inside a block's
text into the lines of its source.

**Line-break style.** A document's blocks carry their own text but not the text between
them. Between two exact ``lines`` spans the source is known only when the geometry pins
it down: nothing (same line, adjacent) or ``k`` line breaks of the document's one style
(:func:`newline_style`), ``k`` times as long as one break (:func:`join_gap`). Anything else
(spaces on a blank line, a thematic break or link definition the parser dropped, mixed
styles) is unknown, and chunkers keep such blocks apart rather than invent text.
``md-heading-v1`` and ``hybrid-v1`` both join blocks by this rule (docs/internals/decisions.md,
"md-heading-v1 rebuilds chunk text from block texts and span geometry").

**Separators.** A :class:`Separator` is one kind of boundary; :func:`separator_spans` finds
its occurrences. Each label's splitter reads them in its own frozen way, and the table
below says which separators each one uses, cleanest first:

================== ===================== ==============================================
label              splitter              levels
================== ===================== ==============================================
md-heading-v1      ``_split`` (bytes)    :data:`BYTE_LEVELS`: blocks, then inside a
                                         block PARAGRAPH_BREAK, SENTENCE_SPACE,
                                         LINE_BREAK_RUN (lists only), WHITESPACE, hard;
                                         a separator is left out of the atoms on
                                         either side of it
hybrid-v1          ``_token_split``      :data:`TOKEN_LEVELS` per element style: list
                   (tokens)              items or table rows, PARAGRAPH_BREAK,
                                         SENTENCE_STOP, LINE_END, WHITESPACE, any
                                         character; a piece may end where a separator
                                         starts
md-header-chars-v1 its ``_Splitter``     :data:`CHAR_LEVELS`: blocks, BLANK_LINES,
                   (characters)          LINE_BREAKS, WHITESPACE, hard; pieces lie
                                         between separators and keep their own blanks
pdf-page-v1        its ``_cores``        :data:`PDF_SEGMENT_END`: a segment ends where
                   (bytes)               the separator ends
================== ===================== ==============================================

The separators differ where the labels' outputs differ (which closing quotes follow a full
stop, whether the blanks around a blank line belong to it, whether a lone ``"\\r"`` ends a
pdf-page-v1 segment); those outputs are frozen (docs/internals/versioning.md), so each difference
stays, named here, instead of being smoothed over.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from kebab_chunk.model import Block, LineSpan, PageSpan, SourceSpan
from kebab_chunk.model.spans import line_span

__all__ = [
    "BLANK_LINES",
    "BLOCK",
    "BYTE_LEVELS",
    "BYTE_LEVELS_WRAPPED",
    "CHAR_LEVELS",
    "HARD",
    "LINE",
    "LINE_BREAK",
    "LINE_BREAKS",
    "LINE_BREAK_RUN",
    "LINE_END",
    "PARAGRAPH",
    "PARAGRAPH_BREAK",
    "PDF_SEGMENT_END",
    "SENTENCE",
    "SENTENCE_SPACE",
    "SENTENCE_STOP",
    "TOKEN_LEVELS",
    "WHITESPACE",
    "WORD",
    "BlockSlices",
    "Separator",
    "is_exact",
    "join_gap",
    "line_break_ends",
    "line_starts",
    "match_span",
    "newline_style",
    "separator_spans",
    "separator_starts",
    "sub_line_span",
]

# -- line breaks ---------------------------------------------------------------------

_NL = r"(?:\r\n|\r|\n)"
#: One line break: CRLF, LF or a lone CR.
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def line_break_ends(text: str) -> list[int]:
    """The offset just after each line break of ``text``, in order."""
    return [m.end() for m in LINE_BREAK.finditer(text)]


def line_starts(text: str) -> list[int]:
    """The offset where each line of ``text`` starts (0 first)."""
    return [0, *line_break_ends(text)]


def sub_line_span(base: LineSpan, ends: Sequence[int], start: int, end: int) -> LineSpan:
    """The span of ``text[start:end]``, for a ``text`` that is the source slice of ``base``.

    ``ends`` is :func:`line_break_ends` of ``text``: a character's line is ``base``'s first
    line plus the line breaks that end at or before it.
    """
    first = base.line_start
    return line_span(
        first + bisect.bisect_right(ends, start),
        first + bisect.bisect_right(ends, max(start, end - 1)),
        base.char_start + start,
        base.char_start + end,
    )


class BlockSlices:
    """Spans of slices of a document's blocks whose one span is a ``lines`` span; each
    block's line breaks are found once, not once per slice (a block cut into n pieces
    would otherwise cost O(n²))."""

    def __init__(self, blocks: Sequence[Block]) -> None:
        self._blocks = blocks
        self._ends: dict[int, list[int]] = {}  # block index -> its line_break_ends

    def span(self, index: int, start: int, end: int) -> SourceSpan:
        """The span of ``text[start:end]`` of block ``index`` (its own span when whole)."""
        block = self._blocks[index]
        span = block.spans[0]
        if start == 0 and end == len(block.text):
            return span
        assert isinstance(span, LineSpan)
        ends = self._ends.get(index)
        if ends is None:
            ends = self._ends[index] = line_break_ends(block.text)
        return sub_line_span(span, ends, start, end)


# -- line-break style ----------------------------------------------------------------


def is_exact(text: str, spans: Sequence[SourceSpan]) -> bool:
    """Whether ``text`` is the source slice of its single span."""
    return len(spans) == 1 and spans[0].char_end - spans[0].char_start == len(text)


def newline_style(blocks: Sequence[Block]) -> str | None:
    """The one line-break sequence used inside the document's exact blocks.

    ``"\\n"`` when no exact block shows a line break (the common case assumed for gaps);
    None when the blocks mix styles, so no gap can be rebuilt.
    """
    seen: set[str] = set()
    for block in blocks:
        text = block.text
        if "\r" not in text:  # the common case: one fast scan
            if "\n" in text and is_exact(text, block.spans):
                seen.add("\n")
        elif is_exact(text, block.spans):
            pairs = text.count("\r\n")
            if pairs:
                seen.add("\r\n")
            if text.count("\n") > pairs:
                seen.add("\n")
            if text.count("\r") > pairs:
                seen.add("\r")
        if len(seen) > 1:
            return None
    return seen.pop() if seen else "\n"


def join_gap(a: SourceSpan, b: SourceSpan, style: str | None) -> str | None:
    """The source text between exact spans ``a`` and ``b`` if provably known, else None.

    ``style`` is the document's :func:`newline_style`.
    """
    gap = b.char_start - a.char_end
    if gap < 0:
        return None
    if isinstance(a, PageSpan) and isinstance(b, PageSpan):
        return "" if a.page == b.page and gap == 0 else None
    if isinstance(a, LineSpan) and isinstance(b, LineSpan):
        breaks = b.line_start - a.line_end
        if breaks == 0:
            return "" if gap == 0 else None
        if style is None or breaks < 0:
            return None
        return style * breaks if gap == breaks * len(style) else None
    return None


# -- separators ----------------------------------------------------------------------

#: How clean a boundary is, cleanest first (md-heading-v1 tags each atom with the level of
#: the boundary before it; the other splitters only use the order).
BLOCK, PARAGRAPH, SENTENCE, LINE, WORD, HARD = range(6)


@dataclass(frozen=True, slots=True)
class Separator:
    """One kind of boundary: what a match of ``pattern`` covers (see :func:`match_span`).

    With ``leading_blanks`` the separator also covers the spaces and tabs just before the
    match. Such a pattern could start with ``[ \\t]*`` instead, but a regex that starts that
    way is tried at every space of the text; searching from the line break and moving the
    start back finds exactly the same separators several times faster (a property test,
    ``tests/chunkers/test_split_separators.py``, compares them with the defining patterns).
    """

    pattern: re.Pattern[str]
    leading_blanks: bool = False
    #: The defining pattern: ``[ \t]*`` then ``pattern`` with leading blanks, else ``pattern``.
    defining: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        defining = self.pattern
        if self.leading_blanks:
            defining = re.compile(rf"[ \t]*(?:{self.pattern.pattern})")
        object.__setattr__(self, "defining", defining)


def match_span(match: re.Match[str]) -> tuple[int, int]:
    """The separator a match covers: group 0, or the group that matched when the pattern
    has groups (so a sentence keeps its full stop and closing quotes)."""
    if match.lastindex is None:
        return match.span()
    return match.span(match.lastindex)


def separator_spans(
    sep: Separator, text: str, lo: int = 0, hi: int | None = None
) -> list[tuple[int, int]]:
    """``(start, end)`` of every ``sep`` in ``text[lo:hi]``, in order.

    A start moved back over blanks never moves before where the search resumed (``lo``,
    then the end of the previous separator).
    """
    spans = []
    floor = lo
    for match in sep.pattern.finditer(text, lo, len(text) if hi is None else hi):
        start, end = match_span(match)
        if sep.leading_blanks:
            while start > floor and text[start - 1] in " \t":
                start -= 1
        spans.append((start, end))
        floor = end
    return spans


def separator_starts(sep: Separator, text: str) -> list[int]:
    """Where each ``sep`` in ``text`` starts: the starts of :func:`separator_spans`.

    Found with the defining pattern, whose scan runs in C: faster where separators are
    dense (every line end of a long table), slower only where blanks are.
    """
    if sep.pattern.groups:
        return [start for start, _ in separator_spans(sep, text)]
    return [m.start() for m in sep.defining.finditer(text)]


#: Blank lines and the spaces and tabs around them: ``(?:[ \t]*NL){2,}[ \t]*`` by definition.
#: (As written, backtracking lets one CRLF match as two breaks, CR then LF, so in CRLF text
#: every line break is also a blank-line separator, here and in BLANK_LINES; the labels'
#: outputs are frozen with that reading.)
PARAGRAPH_BREAK = Separator(re.compile(rf"{_NL}(?:[ \t]*{_NL})+[ \t]*"), leading_blanks=True)
#: Blank lines alone: the spaces and tabs around them stay with the text on either side.
BLANK_LINES = Separator(re.compile(rf"{_NL}(?:[ \t]*{_NL})+"))
#: A line break with all the whitespace around it: ``[ \t]*NL\s*`` by definition.
LINE_BREAK_RUN = Separator(re.compile(rf"{_NL}\s*"), leading_blanks=True)
#: Each line break with the spaces and tabs before it: ``[ \t]*NL`` by definition.
LINE_END = Separator(LINE_BREAK, leading_blanks=True)
#: Each line break alone.
LINE_BREAKS = Separator(LINE_BREAK)
#: Any run of whitespace.
WHITESPACE = Separator(re.compile(r"\s+"))
#: The whitespace after a sentence: after ``. ! ? …`` and any closing quotes or brackets,
#: or after ``。！？`` and any CJK closing marks (there possibly empty).
SENTENCE_SPACE = Separator(re.compile(r"[.!?…][\"'”’»)\]]*(\s+)|[。！？][」』”’）]*(\s*)"))
#: Where a sentence may be cut: just after ``. ! ? … 。！？`` when only closing quotes or
#: brackets and then whitespace follow (the cut falls before the quotes), or just after
#: ``。！？`` followed by anything but whitespace.
SENTENCE_STOP = Separator(re.compile(r"(?<=[.!?…。！？])[\"'”’»)\]]*(?=\s)|(?<=[。！？])(?=\S)"))
#: pdf-page-v1: a run of ``"\n"`` blank lines, or ``. ! ? 。！？`` and the whitespace after.
PDF_SEGMENT_END = Separator(re.compile(r"\n{2,}|[.!?。！？]\s+"))

#: md-heading-v1's levels inside a block; :data:`BYTE_LEVELS_WRAPPED` is for running text
#: whose line breaks are mere wrapping (paragraphs): no LINE level.
BYTE_LEVELS: tuple[tuple[int, Separator], ...] = (
    (PARAGRAPH, PARAGRAPH_BREAK),
    (SENTENCE, SENTENCE_SPACE),
    (LINE, LINE_BREAK_RUN),
    (WORD, WHITESPACE),
)
BYTE_LEVELS_WRAPPED = tuple(level for level in BYTE_LEVELS if level[0] != LINE)

#: hybrid-v1's levels per element style (after the element's structural cuts, if any).
TOKEN_LEVELS: dict[str, tuple[Separator, ...]] = {
    "prose": (PARAGRAPH_BREAK, SENTENCE_STOP, LINE_END, WHITESPACE),
    "list": (PARAGRAPH_BREAK, SENTENCE_STOP, LINE_END, WHITESPACE),
    "code": (PARAGRAPH_BREAK, LINE_END, WHITESPACE),
    "table": (LINE_END, WHITESPACE),
}

#: md-header-chars-v1's levels inside a block (after the blocks, before the hard cut).
CHAR_LEVELS: tuple[Separator, ...] = (BLANK_LINES, LINE_BREAKS, WHITESPACE)
