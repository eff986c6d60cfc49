"""The paragraph and line separators are searched from their line break (see ``_split``).

Their definitions are the patterns below; the search that starts at the line break and
moves the start back over spaces and tabs must find exactly the same matches, wherever
the search window starts and ends.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.chunkers._split import LINE, PARAGRAPH, separator_spans

_NEWLINE = r"(?:\r\n|\r|\n)"
DEFINITIONS = {
    PARAGRAPH: re.compile(rf"(?:[ \t]*{_NEWLINE}){{2,}}[ \t]*"),
    LINE: re.compile(rf"[ \t]*{_NEWLINE}\s*"),
}

_PIECES = st.sampled_from([" ", "\t", "  ", "\r", "\n", "\r\n", "a", "b.", "\f", "\u2028", "\x0b"])


@given(st.lists(_PIECES, max_size=24), st.data())
def test_separator_search_equals_the_defining_patterns(
    pieces: list[str], data: st.DataObject
) -> None:
    text = "".join(pieces)
    lo = data.draw(st.integers(min_value=0, max_value=len(text)))
    hi = data.draw(st.integers(min_value=lo, max_value=len(text)))
    for level, pattern in DEFINITIONS.items():
        expected = [m.span() for m in pattern.finditer(text, lo, hi)]
        assert separator_spans(level, text, lo, hi) == expected


def test_separator_spans_examples() -> None:
    text = "a  \n \t\n  b \n c"
    assert separator_spans(PARAGRAPH, text, 0, len(text)) == [(1, 9)]
    assert separator_spans(LINE, text, 0, len(text)) == [(1, 9), (10, 13)]
    # the start never moves before where the search began
    assert separator_spans(PARAGRAPH, text, 2, len(text)) == [(2, 9)]
