"""html-v1's original tokenizer, the oracle of the differential tests.

html-v1 first tokenized with the standard library's ``html.parser.HTMLParser`` as shipped
in CPython 3.11.7 (the interpreter that wrote the html-v1 goldens and that this project's
machines run), driven by a small adapter that turned ``getpos()`` into character offsets.
That tokenizer is quadratic on unterminated constructs, and later CPython releases changed
its output (their fix of the same quadratic behaviour closes unterminated comments at end
of input), so ``kebab_chunk.parsers.html_tokenizer`` replaced it with a linear
re-implementation that must emit exactly the same token stream.

This module keeps the old adapter (from ``kebab_chunk/parsers/html.py``) on top of the
running interpreter's ``html.parser``: on CPython 3.11.7 that is exactly html-v1's old
tokenizer. Elsewhere it is not, and the differential tests are skipped there (the goldens
still guard html-v1). It is test code only; nothing in the package imports it.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from typing import Any

from kebab_chunk.errors import LimitExceededError, ParseError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.parsers._html import assemble
from kebab_chunk.parsers._html_build import HtmlBuilder
from kebab_chunk.parsers._html_charset import decode_html
from kebab_chunk.parsers.base import ParseLimits
from kebab_chunk.parsers.html_tokenizer import TokenSink

#: The interpreter whose html.parser html-v1 was built on; elsewhere this oracle is not it.
IS_ORACLE = sys.version_info[:3] == (3, 11, 7)

# --- html-v1's original adapter (kebab_chunk/parsers/html.py before issue 14) ----------------


class ReferenceTokenizer(HTMLParser):
    """The old ``_Tokenizer``: html.parser callbacks → sink calls with exact offsets."""

    def __init__(self, text: str, builder: TokenSink) -> None:
        super().__init__()
        self._text = text
        self._builder = builder
        self._line_starts = [0, *(m.end() for m in re.finditer("\n", text))]

    def _offset(self) -> int:
        line, column = self.getpos()
        return self._line_starts[line - 1] + column

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        start = self._offset()
        raw = self.get_starttag_text() or ""
        self._builder.start_tag(tag, attrs, start, start + len(raw), self_closing=False)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        start = self._offset()
        raw = self.get_starttag_text() or ""
        self._builder.start_tag(tag, attrs, start, start + len(raw), self_closing=True)

    def handle_endtag(self, tag: str) -> None:
        start = self._offset()
        close = self._text.find(">", start)
        self._builder.end_tag(tag, start, close + 1 if close >= 0 else len(self._text))

    def handle_data(self, data: str) -> None:
        self._builder.data(data, self._offset())

    def handle_comment(self, data: str) -> None:
        self._builder.other(self._offset())

    def handle_decl(self, decl: str) -> None:
        self._builder.other(self._offset())

    def handle_pi(self, data: str) -> None:
        self._builder.other(self._offset())

    def unknown_decl(self, data: str) -> None:
        self._builder.other(self._offset())


def reference_events(text: str) -> list[tuple[Any, ...]]:
    """The old token stream of ``text`` as tuples; an error ends it as ``("error", message)``."""
    recorder = Recorder()
    tokenizer = ReferenceTokenizer(text, recorder)
    try:
        tokenizer.feed(text)
        tokenizer.close()
    except AssertionError as exc:
        recorder.events.append(("error", f"{type(exc).__name__}: {exc}"))
    return recorder.events


class Recorder:
    """A sink that records every call, for comparing token streams."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def start_tag(
        self,
        tag: str,
        attrs: list[tuple[str, str | None]],
        start: int,
        end: int,
        self_closing: bool,
    ) -> None:
        self.events.append(("start", tag, tuple(attrs), start, end, self_closing))

    def end_tag(self, tag: str, start: int, end: int) -> None:
        self.events.append(("end", tag, start, end))

    def data(self, data: str, start: int) -> None:
        self.events.append(("data", data, start))

    def other(self, start: int) -> None:
        self.events.append(("other", start))


def reference_parse(
    raw: bytes, source_uri: str, limits: ParseLimits | None = None
) -> CanonicalDocument:
    """``HtmlParser.parse`` as it was: the same builder, fed by the old tokenizer."""
    text, warnings = decode_html(raw, source_uri)
    builder = HtmlBuilder(text, source_uri, limits or ParseLimits())
    tokenizer = ReferenceTokenizer(text, builder)
    try:
        tokenizer.feed(text)
        tokenizer.close()
    except (LimitExceededError, ParseError):
        raise
    except Exception as exc:
        raise ParseError(
            f"{source_uri} could not be tokenized as HTML ({type(exc).__name__}: {exc}); "
            "check that the file is HTML or remove it from the corpus."
        ) from exc
    return assemble(
        raw, source_uri, text, warnings, builder, limits or ParseLimits(), version="html-v1"
    )
