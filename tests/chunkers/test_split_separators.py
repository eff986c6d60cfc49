"""Separators with leading blanks are searched from their line break (see ``_separators``).

Their definitions are the patterns below; the search that starts at the line break and
moves the start back over spaces and tabs must find exactly the same matches, wherever
the search window starts and ends. hybrid-v1 cuts where a separator starts: its blank-line
and line-end cuts are defined as the match starts of patterns of their own, which the
shared separators must reproduce.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.chunkers._separators import (
    LINE_BREAK_RUN,
    LINE_END,
    PARAGRAPH_BREAK,
    SENTENCE_SPACE,
    Separator,
    separator_spans,
    separator_starts,
)

_NEWLINE = r"(?:\r\n|\r|\n)"
DEFINITIONS: list[tuple[Separator, re.Pattern[str]]] = [
    (PARAGRAPH_BREAK, re.compile(rf"(?:[ \t]*{_NEWLINE}){{2,}}[ \t]*")),
    (LINE_BREAK_RUN, re.compile(rf"[ \t]*{_NEWLINE}\s*")),
    (LINE_END, re.compile(rf"[ \t]*{_NEWLINE}")),
]
#: hybrid-v1's cut positions: the starts of these matches over the whole text.
CUT_DEFINITIONS: list[tuple[Separator, re.Pattern[str]]] = [
    (PARAGRAPH_BREAK, re.compile(r"[ \t]*(?:\r\n|\r|\n)(?:[ \t]*(?:\r\n|\r|\n))+")),
    (LINE_END, re.compile(r"[ \t]*(?:\r\n|\r|\n)")),
]

_PIECES = st.sampled_from([" ", "\t", "  ", "\r", "\n", "\r\n", "a", "b.", "\f", "\u2028", "\x0b"])


@given(st.lists(_PIECES, max_size=24), st.data())
def test_separator_search_equals_the_defining_patterns(
    pieces: list[str], data: st.DataObject
) -> None:
    text = "".join(pieces)
    lo = data.draw(st.integers(min_value=0, max_value=len(text)))
    hi = data.draw(st.integers(min_value=lo, max_value=len(text)))
    for sep, pattern in DEFINITIONS:
        expected = [m.span() for m in pattern.finditer(text, lo, hi)]
        assert separator_spans(sep, text, lo, hi) == expected


@given(st.lists(_PIECES, max_size=24))
def test_cut_starts_equal_the_defining_patterns(pieces: list[str]) -> None:
    text = "".join(pieces)
    for sep, pattern in CUT_DEFINITIONS:
        expected = [m.start() for m in pattern.finditer(text)]
        assert [start for start, _ in separator_spans(sep, text)] == expected
        assert separator_starts(sep, text) == expected
    spaces = separator_spans(SENTENCE_SPACE, text)  # a pattern with groups
    assert separator_starts(SENTENCE_SPACE, text) == [start for start, _ in spaces]


def test_separator_spans_examples() -> None:
    text = "a  \n \t\n  b \n c"
    assert separator_spans(PARAGRAPH_BREAK, text, 0, len(text)) == [(1, 9)]
    assert separator_spans(LINE_BREAK_RUN, text, 0, len(text)) == [(1, 9), (10, 13)]
    assert separator_spans(LINE_END, text) == [(1, 4), (4, 7), (10, 12)]
    # the start never moves before where the search began
    assert separator_spans(PARAGRAPH_BREAK, text, 2, len(text)) == [(2, 9)]
