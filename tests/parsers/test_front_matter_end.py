"""``front_matter_end`` finds the body where ``read_front_matter`` does, parsing the YAML
only when its first line leaves open whether the block is front matter at all."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kebab_chunk.parsers import _front_matter
from kebab_chunk.parsers._front_matter import front_matter_end, read_front_matter
from kebab_chunk.parsers._source import newline_view

_LINES = st.sampled_from(
    [
        "title: A title",
        "title:",
        "key:\tvalue",
        "key: [1, 2",
        "key: value: more",
        "- a list item",
        "just a scalar",
        "'quoted': key",
        "# a comment",
        "",
        "   ",
        "nested:\n  inner: 1",
        "--- second document",
        "? complex",
        "http://example.com: x",
        "null: ~",
        "a: *undefined",
        "\tkey: tab first",
        "date: 2024-01-01",
    ]
)
_OPENERS = st.sampled_from(["---\n", "---\r\n", "--- \n", "---\n\n", "", "text\n---\n"])
_CLOSERS = st.sampled_from(["---\n", "...\n", "---", "--- x\n", "\r\n---\r\n", ""])


@settings(max_examples=400)
@given(_OPENERS, st.lists(_LINES, max_size=4), _CLOSERS, st.sampled_from(["# Body\n", ""]))
def test_the_body_starts_where_read_front_matter_says(
    opener: str, lines: list[str], closer: str, body: str
) -> None:
    text = opener + "".join(line + "\n" for line in lines) + closer + body
    view = newline_view(text)
    front = read_front_matter(text, view)
    assert front_matter_end(text, view) == (0 if front is None else front.end)


def test_a_mapping_first_line_skips_the_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    original = _front_matter.read_front_matter

    def spy(text: str, view: str) -> _front_matter.FrontMatter | None:
        calls.append(text)
        return original(text, view)

    monkeypatch.setattr(_front_matter, "read_front_matter", spy)
    text = "---\ntitle: T\nbroken: [\n---\n# Body\n"
    assert front_matter_end(text, text) == text.index("# Body")
    assert calls == []
    text = "---\n- a list\n---\n# Body\n"
    assert front_matter_end(text, text) == 0  # a list is not front matter
    assert calls == [text]
