"""The engine of the plain-text parser versions (``text-plain-v1``, ``text-plain-v2``).

Every version is a row of the registry with one
:class:`~kebab_chunk.parsers.rules.PlainTextRules` value; what each changed, and why:
docs/internals/parser-changes.md.

A paragraph is a maximal run of lines that contain a non-whitespace character; lines that
are empty or whitespace only separate paragraphs. Each paragraph is one ParagraphBlock
whose ``text`` is exactly its source slice (whole lines, trailing whitespace dropped).

With ``headings`` (text-plain-v2), section titles written the AsciiDoc or setext way are
headings and split their paragraph: the title line is the heading (its text the exact
slice of that line; an underline belongs to no block), the lines before and after it are
paragraphs. Inside an AsciiDoc delimited block (a line of four or more ``-``, ``.``, ``=``,
``+``, ``*`` or ``_`` that is not an underline, up to the same line again; a fence line
that never recurs opens nothing) nothing is a title, so a listing's ``----`` fence is never
read as an underline, and a lone separator line does not hide the titles after it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.blocks import ParagraphBlock
from kebab_chunk.model.spans import LineSpan
from kebab_chunk.parsers._assemble import Assembler, check_block_count
from kebab_chunk.parsers._source import LineCounter, newline_view
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits, ParserVersion, VersionedParser
from kebab_chunk.parsers.decode import decode_text
from kebab_chunk.parsers.rules import PlainTextRules

__all__ = ["MEDIA_TYPE", "PlainTextParser"]

MEDIA_TYPE = "text/plain"

# One or more consecutive lines that each hold a non-whitespace character (newline view).
_PARAGRAPH = re.compile(r"(?:^[^\S\n]*\S[^\n]*(?:\n|\Z))+", re.MULTILINE)
_LINE = re.compile(r"[^\n]*(?:\n|\Z)")
# An underline and its level (AsciiDoc's two-line titles; setext uses = and -).
_UNDERLINE = re.compile(r"(=|-|~|\^|\+)\1{2,}")
_LEVELS = {"=": 1, "-": 2, "~": 3, "^": 4, "+": 5}
_UNDERLINE_SLACK = 2  # how much longer or shorter than its title an underline may be
# The opening of AsciiDoc's one-line title: "== Title" (optionally closed by the same "==").
_ONE_LINE = re.compile(r"(={1,6})[ \t]+(?=\S)")
# A title starts with a letter, digit or opening quote/bracket and holds a letter.
_TITLE = re.compile(r"[^\W_]|[\"'(\[]")
_LETTER = re.compile(r"[^\W\d_]")
_MAX_TITLE = 120
# An AsciiDoc delimited block's fence (listing, literal, example, passthrough, sidebar, quote).
_FENCE = re.compile(r"(-|\.|=|\+|\*|_)\1{3,}")
_FENCE_LINE = re.compile(r"^((-|\.|=|\+|\*|_)\2{3,})[^\S\n]*$", re.MULTILINE)


@dataclass
class _Line:
    start: int
    end: int  # trailing whitespace and the line break excluded
    text: str  # the stripped-of-trailing-whitespace line (newline view)


class PlainTextParser(VersionedParser):
    """Plain text by one version row's rules (see the module docstring)."""

    media_types = (MEDIA_TYPE,)

    def __init__(self, row: ParserVersion) -> None:
        super().__init__(row)
        self.rules = row.rules_as(PlainTextRules)

    def parse(
        self, raw: bytes, source_uri: str, limits: ParseLimits = DEFAULT_LIMITS
    ) -> CanonicalDocument:
        text, warnings = decode_text(raw, source_uri)
        view = newline_view(text)
        assembler = Assembler(raw, source_uri, MEDIA_TYPE, self.version, limits)
        lines = LineCounter(view)
        emitter = _Emitter(text, assembler, lines, limits, source_uri)
        fence: str | None = None  # the open delimited block's fence line
        # Where each fence line occurs last: a fence opens a block only if it recurs.
        last = (
            {m.group(1): m.start() for m in _FENCE_LINE.finditer(view)}
            if self.rules.headings
            else {}
        )
        for match in _PARAGRAPH.finditer(view):
            if not self.rules.headings:
                emitter.paragraph(match.start(), match.end())
                continue
            fence = _split(view, match.start(), match.end(), fence, emitter, last)
        return assembler.finish(warnings)


def _split(
    view: str,
    start: int,
    end: int,
    fence: str | None,
    emitter: _Emitter,
    last: dict[str, int],
) -> str | None:
    """Emit one paragraph's headings and the paragraphs between them; returns the fence of
    the delimited block still open after it (None: none). ``last``: where each fence line
    occurs last in the document."""
    rows = [
        _Line(m.start(), m.start() + len(m.group().rstrip()), m.group().rstrip())
        for m in _LINE.finditer(view, start, end)
        if m.group()
    ]
    run = 0  # first line of the paragraph not emitted yet
    index = 0
    while index < len(rows):
        line = rows[index]
        if fence is not None:
            fence = None if line.text == fence else fence
            index += 1
            continue
        under = rows[index + 1] if index + 1 < len(rows) else None
        level = _underlined(line.text, under.text) if under is not None else None
        if level is not None:
            emitter.paragraph_lines(rows[run:index])
            emitter.heading(level, line.text.strip(), line)
            index += 2
            run = index
            continue
        titled = _one_line_title(line.text) if index == run else None
        if titled is not None:
            emitter.heading(*titled, line)
            index += 1
            run = index
            continue
        if _FENCE.fullmatch(line.text) and last.get(line.text, -1) > line.start:
            fence = line.text
        index += 1
    emitter.paragraph_lines(rows[run:])
    return fence


def _one_line_title(line: str) -> tuple[int, str] | None:
    """(level, title) of an AsciiDoc one-line title, else None (no regex backtracking: a
    hostile line costs one pass)."""
    opening = _ONE_LINE.match(line)
    if opening is None:
        return None
    marks = opening.group(1)
    title = line[opening.end() :].rstrip(" \t")
    if title.endswith(marks) and title[: -len(marks)].endswith((" ", "\t")):
        title = title[: -len(marks)].rstrip(" \t")
    if not _LETTER.search(title):
        return None
    return len(marks), title


def _underlined(title: str, underline: str) -> int | None:
    """The level of ``title`` when ``underline`` underlines it, else None."""
    mark = _UNDERLINE.fullmatch(underline)
    if mark is None or not title or len(title) > _MAX_TITLE:
        return None
    if not _TITLE.match(title) or not _LETTER.search(title):
        return None
    if abs(len(underline) - len(title)) > _UNDERLINE_SLACK:
        return None
    return _LEVELS[mark.group(1)]


@dataclass
class _Emitter:
    """Adds blocks to the document in source order, with exact spans."""

    text: str
    assembler: Assembler
    lines: LineCounter
    limits: ParseLimits
    source_uri: str
    count: int = field(default=0, init=False)  # blocks added, against max_blocks

    def _span(self, start: int, end: int) -> tuple[LineSpan]:
        self.count += 1
        check_block_count(self.count, self.limits, self.source_uri, noun="paragraphs")
        return (
            LineSpan(
                line_start=self.lines.line_of(start),
                line_end=self.lines.line_of(end - 1),
                char_start=start,
                char_end=end,
            ),
        )

    def paragraph(self, start: int, end: int) -> None:
        body = self.text[start:end].rstrip()
        end = start + len(body)
        self.assembler.add(ParagraphBlock, body, self._span(start, end))

    def paragraph_lines(self, rows: list[_Line]) -> None:
        if rows:
            self.paragraph(rows[0].start, rows[-1].end)

    def heading(self, level: int, title: str, line: _Line) -> None:
        start = line.start + len(line.text) - len(line.text.lstrip())
        body = self.text[start : line.end]
        self.assembler.add_heading(level, title, body, self._span(start, line.end))
