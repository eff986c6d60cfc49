"""html-v1's tokenizer is linear (issue 14) and emits exactly the tokens it always did.

The original tokenizer (CPython 3.11.7's ``html.parser``, frozen in
``_html_v1_reference.py``) re-scanned to the end of the text for every unterminated
``<!--``, ``</``, ``<?``, ``<!``, ``<![CDATA[`` or start tag, so 200 KB of ``<!--`` took
26 s. The replacement must change no output: the differential tests compare its token
stream (tags, attributes, text, offsets, errors) and whole documents with the reference on
generated markup. Linearity is shown by counting the characters the tokenizer examines,
never by timing: the count may grow at most a little faster than the input.
"""

from __future__ import annotations

import contextlib
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kebab_chunk.parsers.html_tokenizer as tokenizer_module
from kebab_chunk.errors import ParseError
from kebab_chunk.parsers.html_tokenizer import HtmlTokenizer, MarkupError
from kebab_chunk.parsers.registry import get_parser_by_version
from tests.parsers._html_v1_reference import (
    IS_ORACLE,
    HTMLParser,
    Recorder,
    reference_events,
    reference_parse,
)

# The linearity tests need no oracle; the differential ones compare with this interpreter's
# html.parser, which is html-v1's original tokenizer only on CPython 3.11.7.
differential = pytest.mark.skipif(
    not IS_ORACLE, reason="the oracle is CPython 3.11.7's html.parser (the goldens still run)"
)
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "html"
#: Many cheap examples: each is a short string tokenized twice.
MANY = settings(max_examples=settings.default.max_examples * 10)

# Pieces of markup that reach every branch of the tokenizer: terminators with and without
# their ends, CDATA content, marked sections, quotes, entities, odd whitespace, NUL.
FRAGMENTS = [
    *("<!--", "-->", "--", "-- >", "--!>", "<!", "<!>", "<?", "?>", ">", "<", "</", "</>"),
    *("<![CDATA[", "]]>", "] ]>", "]>", "<![if ", "<![endif]>", "<![ ", "<![x", "<![cdata"),
    *("<!DOCTYPE html>", "<!doctype", "<!DocType x", "&amp;", "&", "&#", "&#x41;", "&lt"),
    *("<script>", "</script>", "</script >", "</SCRIPT>", "</ſcript>", "<style>", "</style>"),
    *("<textarea>", "</textarea>", "<title>", "</title>", '<a href="', "<a href='", "<a"),
    *('"', "'", "=", "==", "= '", "/", "/>", " /", "<b ", "<X", "</ a>", "</a b>", "</p\n>"),
    *(" ", "\n", "\r\n", "\r", "\t", "\v", "\x0c", "\x1c", "\xa0", "\u2003", "\x00"),
    *('<div class="x">', "</div>", "<br/>", '<img alt="x" src=y>', "<img alt=''>", "<p>"),
    *("</p>", "<h1>", "</h1>", "<li>", "<ul>", "</ul>", "<table><tr><td>", "<pre>", "</pre>"),
    *("<figure>", "<figcaption>", "<nav>", "text", "x", "a b", "é", "a=b", 'c="d"', "e='f'"),
]
#: Single characters for the start-tag scanner, whose rules are per character.
TAG_CHARS = "<<aab\"'===// \t\n\x0b\x1c\xa0\u2003\x00>x-!?[]&"


def new_events(text: str) -> list[tuple[Any, ...]]:
    recorder = Recorder()
    try:
        HtmlTokenizer(text, recorder).run()
    except MarkupError as exc:  # the reference raised AssertionError with the same text
        recorder.events.append(("error", f"AssertionError: {exc}"))
    return recorder.events


def document(parse: Any, raw: bytes) -> Any:
    """The whole document as JSON, or the error a caller would see."""
    try:
        return parse(raw, "t.html").model_dump(mode="json")
    except ParseError as exc:
        return (type(exc).__name__, str(exc))


# --- the same output --------------------------------------------------------------------


@differential
@MANY
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40))
def test_token_stream_equals_the_original_tokenizer(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert new_events(text) == reference_events(text)


@differential
@MANY
@given(st.text(alphabet=TAG_CHARS, max_size=80))
def test_token_stream_equals_the_original_on_raw_characters(text: str) -> None:
    assert new_events(text) == reference_events(text)


@differential
@settings(max_examples=settings.default.max_examples * 4)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40))
def test_documents_equal_the_original_parser(pieces: list[str]) -> None:
    """Blocks, spans, title, warnings and error messages: the full model, byte for byte."""
    raw = "".join(pieces).encode()
    assert document(get_parser_by_version("html-v1").parse, raw) == document(reference_parse, raw)


@differential
def test_seeded_corpus_equals_the_original() -> None:
    """A fixed corpus (reproducible without hypothesis), also with a tiny run window."""
    rng = random.Random(14)
    texts = []
    for index in range(1500):
        if index % 2:
            texts.append("".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 50))))
        else:
            texts.append("".join(rng.choice(TAG_CHARS) for _ in range(rng.randint(0, 90))))
    expected = [reference_events(text) for text in texts]
    assert [new_events(text) for text in texts] == expected
    with pytest.MonkeyPatch.context() as patch:  # every run of 2+ characters is "long"
        patch.setattr(tokenizer_module, "_WINDOW", 2)
        assert [new_events(text) for text in texts] == expected


@differential
@MANY
@given(st.text(alphabet=TAG_CHARS, max_size=120), st.sampled_from([2, 3, 64]))
def test_start_tag_completeness_equals_the_original(text: str, window: int) -> None:
    """At every ``<`` + letter, in order (so remembered scans are reused), the same verdict."""
    reference = HTMLParser()
    reference.rawdata = text
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tokenizer_module, "_WINDOW", window)
        tokenizer = HtmlTokenizer(text, Recorder())
        for match in re.finditer("<[a-zA-Z]", text):
            i = match.start()
            assert tokenizer._whole_start_tag(i) == reference.check_for_whole_start_tag(i)


@differential
@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.html")))
def test_fixtures_equal_the_original(name: str) -> None:
    raw = (FIXTURES / name).read_bytes()
    assert document(get_parser_by_version("html-v1").parse, raw) == document(reference_parse, raw)


# --- linear work ------------------------------------------------------------------------

#: Repeated units that made the original tokenizer quadratic (measured: 4x the input cost
#: 14-16x the time), plus floods of the constructs that were already linear.
FLOODS = {
    "comment": "<!--",
    "comment-text": "<!--x",
    "comment-unclosed-dashes": "<!-- a --",
    "bang": "<!",
    "end-tag": "</",
    "processing-instruction": "<?",
    "cdata": "<![CDATA[",
    "conditional": "<![if ",
    "doctype": "<!DOCTYPE",
    "textarea-end-tags": "</",  # after one <textarea>, see flood()
    "script-end-tags": "</",  # after one <script>
    "attribute-double-quote": '<a href="',
    "attribute-single-quote": "<a href='",
    "tag-open": "<a",
    "tag-open-space": "<a ",
    "tag-name-quote-nul": '<a"\x00',
    "attribute-equals": "<a b=",
    "attribute-double-equals": "<a b==",
    "attribute-names": "<a b",
    "quote-in-name": '<a x"y',
    "lone-lt": "<",
    "ampersand": "&",
    "entity": "&amp",
}


def flood(kind: str, size: int) -> str:
    unit = FLOODS[kind]
    prefix = {"textarea-end-tags": "<textarea>", "script-end-tags": "<script>"}.get(kind, "")
    return prefix + unit * ((size - len(prefix)) // len(unit))


class _Null:
    def start_tag(self, *_: Any, **__: Any) -> None:
        pass

    def end_tag(self, *_: Any) -> None:
        pass

    def data(self, *_: Any) -> None:
        pass

    def other(self, *_: Any) -> None:
        pass


def work(text: str) -> int:
    tokenizer = HtmlTokenizer(text, _Null())
    # A malformed <![ ends the text early: the work up to it counts.
    with contextlib.suppress(MarkupError):
        tokenizer.run()
    return tokenizer.work


@pytest.mark.parametrize("kind", sorted(FLOODS))
def test_work_grows_linearly_on_floods(kind: str) -> None:
    small, large = work(flood(kind, 20_000)), work(flood(kind, 80_000))
    assert large <= 4.4 * small, (kind, small, large)  # quadratic would be 16x
    assert large <= 16 * 80_000, (kind, large)


@pytest.mark.parametrize("kind", ["comment", "attribute-double-quote", "tag-open"])
def test_a_megabyte_flood_is_examined_a_bounded_number_of_times(kind: str) -> None:
    assert work(flood(kind, 1_000_000)) <= 16 * 1_000_000


@settings(max_examples=settings.default.max_examples * 2)
@given(
    st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=5),
    st.lists(st.sampled_from(FRAGMENTS), max_size=3),
)
def test_work_grows_linearly_on_any_repeated_unit(unit: list[str], prefix: list[str]) -> None:
    """Floods of generated units (after a generated prefix) cost at most ~linear work."""
    piece, head = "".join(unit), "".join(prefix)
    copies = max(1, 2_000 // len(piece))
    small, large = work(head + piece * copies), work(head + piece * 4 * copies)
    assert large <= 4.4 * small + 1_000, (head, piece, small, large)
