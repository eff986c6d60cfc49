"""Exact-offset helpers shared by the text-format parsers (Markdown, plain text, HTML).

Spans index the decoded text as returned by :func:`decode_text`, with no newline
translation. Parsers that want to reason about lines work on a *newline view*: a copy of
the same length in which every line ends in ``"\\n"`` (``"\\r\\n"`` becomes ``" \\n"``, a
lone ``"\\r"`` becomes ``"\\n"``), so an offset found in the view is the same offset in the
source and a line break in the view is one line break in the source.
"""

from __future__ import annotations

import re

__all__ = ["BLANK_CHARS", "LineCounter", "newline_view", "trim_region"]

#: Characters that make a line blank for the Markdown block grammar (CommonMark's
#: whitespace plus the carriage return of CRLF line ends).
BLANK_CHARS = " \t\r\n\f\v"

_NON_BLANK = re.compile(r"[^ \t\r\n\f\v]")


def newline_view(text: str) -> str:
    """A same-length copy of ``text`` whose only line terminator is ``"\\n"``."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", " \n").replace("\r", "\n")


def trim_region(text: str, view: str, start: int, end: int) -> tuple[int, int] | None:
    """Shrink ``[start, end)`` to whole lines without leading blank lines or trailing blanks.

    The start moves forward only over complete blank lines (indentation of the first
    non-blank line is kept: it is part of the source as written); the end drops trailing
    whitespace including the final line break. Returns ``None`` when nothing but
    whitespace is left.
    """
    first = _NON_BLANK.search(text, start, end)
    if first is None:
        return None
    new_start = max(start, view.rfind("\n", start, first.start()) + 1)
    stripped = text[new_start:end].rstrip(BLANK_CHARS)
    return new_start, new_start + len(stripped)


class LineCounter:
    """1-based line numbers of offsets, counted incrementally with ``str.count``.

    ``view`` is a newline view (see :func:`newline_view`). Each query counts only the line
    breaks between it and the previous query, forwards or backwards, so offsets asked for
    roughly in document order cost linear time overall, with no per-character Python loop.
    """

    def __init__(self, view: str) -> None:
        self._view = view
        self._pos = 0
        self._line = 1

    def line_of(self, pos: int) -> int:
        """The 1-based line that contains the character at offset ``pos``."""
        if pos < self._pos:
            self._line -= self._view.count("\n", pos, self._pos)
        else:
            self._line += self._view.count("\n", self._pos, pos)
        self._pos = pos
        return self._line
