"""Linear-time HTML tokenizer with exact offsets: html-v1's token stream, without its blow-ups.

html-v1 was first built on the standard library's ``html.parser`` (CPython 3.11.7). That
tokenizer is quadratic on unterminated constructs: at end of input, a ``<!--``, ``</``,
``<?``, ``<!``, ``<![CDATA[`` or ``<a href="`` without its terminator makes it search to
the end of the text, give up, emit a little text and search again from the next ``<``, so
200 KB of ``<!--`` took 26 s. Its output also moved with the interpreter: CPython releases
from mid-2025 (the fix of that same blow-up) close unterminated comments at end of input,
which changes html-v1's blocks.

:class:`HtmlTokenizer` emits exactly the token stream html-v1 got from CPython 3.11.7's
``HTMLParser`` fed the whole text and closed (with ``convert_charrefs=True``): the same
tags, attributes, text pieces and offsets, for every input, on every interpreter. The
tests compare it with a frozen copy of that tokenizer on generated markup. It follows the
same algorithm and regular expressions (PSF License, Copyright (c) 2001-2023 Python
Software Foundation), with three changes that make it linear without changing a token:

* every forward search for a terminator (``>``, ``-->``, ``]]>``...) remembers its last
  answer, so "no terminator after here" is found once, not once per ``<``;
* the start-tag scanner (``locatestarttagend_tolerant``, which decides whether a start tag
  is complete) is decomposed into its pieces (tag name, attribute, value, whitespace
  runs), each a pure function of a position, and the attribute chain reached from a
  position is remembered when the tag turns out to be incomplete, so the next ``<`` that
  lands on the same attributes does not scan them again;
* character runs (names, whitespace, bare values) longer than a small window are looked
  up in a table of long runs built once, so many scans starting inside one long run cost
  one pass.

Each piece documents which part of the original regular expression it reproduces. The
tokenizer counts the characters it examines in :attr:`HtmlTokenizer.work`, which the
tests use to prove linear growth without timing anything.
"""

from __future__ import annotations

import bisect
import re
from html import unescape
from typing import Protocol

__all__ = ["HtmlTokenizer", "TokenSink"]  # MarkupError is internal to the HTML parser

Attrs = list[tuple[str, str | None]]

# The regular expressions of CPython 3.11.7's html.parser and _markupbase, as used there.
_STARTTAGOPEN = re.compile("<[a-zA-Z]")
_COMMENTCLOSE = re.compile(r"--\s*>")
_MARKEDSECTIONCLOSE = re.compile(r"]\s*]\s*>")
_MSMARKEDSECTIONCLOSE = re.compile(r"]\s*>")
_DECLNAME = re.compile(r"[a-zA-Z][-_.a-zA-Z0-9]*\s*")
_TAGFIND = re.compile(r"([a-zA-Z][^\t\n\r\f />\x00]*)(?:\s|/(?!>))*")
_ATTRFIND = re.compile(
    r'((?<=[\'"\s/])[^\s/>][^\s/=>]*)(\s*=+\s*'
    r'(\'[^\']*\'|"[^"]*"|(?![\'"])[^>\s]*))?(?:\s|/(?!>))*'
)
_ENDTAGFIND = re.compile(r"</\s*([a-zA-Z][-.a-zA-Z0-9:_]*)\s*>")
_CDATA_END = {
    "script": re.compile(r"</\s*script\s*>", re.I),
    "style": re.compile(r"</\s*style\s*>", re.I),
}
# The first character of an attribute, with the look-behind that allows it to start there.
_ATTR_START = re.compile(r"""(?<=['"\s/])[^\s/>]""")
# A start tag scanned up to one of these is incomplete ("end of input in an attribute").
_INCOMPLETE_AFTER = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ=/")
_QUOTES = ("'", '"')

# Character classes of the start-tag scanner's runs (one character each).
_TAG_NAME = r"[^\t\n\r\f />\x00]"
_ATTR_NAME = r"[^\s/=>]"
_SPACE = r"\s"
_SPACE_OR_SLASH = r"[\s/]"
_SPACE_OR_LONE_SLASH = r"(?:\s|/(?!>))"  # "/" not followed by ">"
_EQUALS = "="
_BARE_VALUE = r"[^>\s]"

#: A run is first scanned this far; longer runs are looked up in the table of long runs.
_WINDOW = 64


class TokenSink(Protocol):
    """Receives the tokens in document order, each with the offset where it starts."""

    def start_tag(self, tag: str, attrs: Attrs, start: int, end: int, self_closing: bool) -> None:
        """A complete start tag ``text[start:end]`` (``self_closing`` for ``<x/>``)."""

    def end_tag(self, tag: str, start: int, end: int) -> None:
        """An end tag ``text[start:end]``."""

    def data(self, data: str, start: int) -> None:
        """Text starting at ``start`` (entities decoded outside ``script``/``style``)."""

    def other(self, start: int) -> None:
        """A comment, declaration, processing instruction or marked section."""


class MarkupError(Exception):
    """A ``<![`` marked section the original tokenizer refused (it raised AssertionError)."""


class _Work:
    """Characters examined so far (a deterministic stand-in for running time)."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0


class _CharFinder:
    """``text.find(char, pos)`` that remembers its last answer.

    Invariant: ``char`` does not occur in ``text[lo:found]`` (``found == -1``: nowhere in
    ``text[lo:]``). A query inside that range is answered without scanning; a query a few
    characters before ``lo`` scans only up to ``lo``.
    """

    def __init__(self, text: str, char: str, work: _Work) -> None:
        self._text = text
        self._char = char
        self._work = work
        self._lo = len(text) + 1  # nothing known yet
        self._found = -1

    def find(self, pos: int) -> int:
        lo, found = self._lo, self._found
        if lo <= pos and (found < 0 or pos <= found):
            return found
        if pos < lo <= (found if found >= 0 else len(self._text)):
            hit = self._text.find(self._char, pos, lo)
            self._work.count += (hit if hit >= 0 else lo) - pos + 1
            self._lo = pos
            if hit >= 0:
                self._found = hit
            return self._found
        found = self._text.find(self._char, pos)
        self._work.count += (found if found >= 0 else len(self._text)) - pos + 1
        self._lo, self._found = pos, found
        return found


class _PatternFinder:
    """``pattern.search(text, pos)`` that remembers its last answer.

    Valid for patterns without look-behind or anchors (a match at a position does not
    depend on where the search started): after a search from ``lo`` found its first match
    at ``m`` (or none), any search from ``lo..m`` finds the same.
    """

    def __init__(self, text: str, pattern: re.Pattern[str], work: _Work) -> None:
        self._text = text
        self._pattern = pattern
        self._work = work
        self._lo = len(text) + 1
        self._match: re.Match[str] | None = None

    def search(self, pos: int) -> re.Match[str] | None:
        match = self._match
        if self._lo <= pos and (match is None or pos <= match.start()):
            return match
        match = self._pattern.search(self._text, pos)
        self._work.count += (match.end() if match else len(self._text)) - pos + 1
        self._lo, self._match = pos, match
        return match


class _Runs:
    """Where the run of one character class that contains a position ends.

    A run is scanned up to ``_WINDOW`` characters; a longer one is looked up in a table of
    all runs of at least ``_WINDOW`` characters, built on first need in one pass. So a run
    costs at most ``_WINDOW`` characters per question however many questions start in it.
    """

    def __init__(self, text: str, member: str, work: _Work) -> None:
        self._text = text
        self._member = member
        self._short = re.compile(f"{member}{{0,{_WINDOW}}}")
        self._work = work
        self._starts: list[int] | None = None
        self._ends: list[int] = []
        self._last = (0, 0)  # the long run found last: floods ask about it again and again

    def end(self, pos: int) -> int:
        start, end = self._last
        if start <= pos < end:
            self._work.count += 1
            return end
        end = self._short.match(self._text, pos).end()  # type: ignore[union-attr]
        self._work.count += end - pos + 1
        if end - pos < _WINDOW:
            return end
        if self._starts is None:
            self._starts = []
            for run in re.finditer(f"{self._member}+", self._text):
                if run.end() - run.start() >= _WINDOW:
                    self._starts.append(run.start())
                    self._ends.append(run.end())
            self._work.count += len(self._text)
        # pos is inside a maximal run of at least _WINDOW characters: the table has it
        index = bisect.bisect_right(self._starts, pos) - 1
        self._last = (self._starts[index], self._ends[index])
        return self._ends[index]


class HtmlTokenizer:
    """Tokenizes a whole text into a :class:`TokenSink`, in time linear in its length.

    Call :meth:`run` once. Offsets are indexes into ``text``. Raises :class:`MarkupError`
    where html-v1's original tokenizer raised (a ``<![`` not followed by a name, or by an
    unknown keyword), after emitting the same tokens before it.
    """

    def __init__(self, text: str, sink: TokenSink) -> None:
        self.text = text
        self.sink = sink
        self._work = _Work()
        self._cdata_elem: str | None = None
        self._gt = _CharFinder(text, ">", self._work)
        self._comment_close = _PatternFinder(text, _COMMENTCLOSE, self._work)
        self._section_close = _PatternFinder(text, _MARKEDSECTIONCLOSE, self._work)
        self._ms_section_close = _PatternFinder(text, _MSMARKEDSECTIONCLOSE, self._work)
        self._tag_name = _Runs(text, _TAG_NAME, self._work)
        self._attr_name = _Runs(text, _ATTR_NAME, self._work)
        self._space = _Runs(text, _SPACE, self._work)
        self._space_or_slash = _Runs(text, _SPACE_OR_SLASH, self._work)
        self._space_or_lone_slash = _Runs(text, _SPACE_OR_LONE_SLASH, self._work)
        self._equals = _Runs(text, _EQUALS, self._work)
        self._bare_value = _Runs(text, _BARE_VALUE, self._work)
        # What scans of incomplete start tags learnt, for the later scans that overlap them
        # (a complete tag is never scanned again: the tokenizer moves past it).
        self._quote_close: dict[int, int] = {}  # opening quote -> closing quote (or -1)
        self._attr_tail: dict[int, int] = {}  # attribute name end -> attribute end
        self._chain_end: dict[int, int] = {}  # attribute start -> end of its attribute list
        # What the scan of the current start tag learnt, kept if the tag is incomplete.
        self._new_quotes: list[tuple[int, int]] = []
        self._new_tails: list[tuple[int, int]] = []
        self._new_chain: list[int] = []
        self._new_chain_end = 0

    @property
    def work(self) -> int:
        """Characters examined so far, counting re-examinations."""
        return self._work.count

    # -- the main loop (HTMLParser.goahead with end=1 after one feed of the whole text)

    def run(self) -> None:
        text, sink = self.text, self.sink
        n = len(text)
        i = 0
        while i < n:
            if self._cdata_elem is None:
                j = text.find("<", i)
                if j < 0:
                    j = n
            else:
                match = _CDATA_END[self._cdata_elem].search(text, i)
                if match is None:
                    self._work.count += n - i
                    break  # an unclosed script/style: its content is never emitted
                j = match.start()
            self._work.count += j - i + 1
            if i < j:
                sink.data(unescape(text[i:j]) if self._cdata_elem is None else text[i:j], i)
            i = j
            if i == n:
                break
            if _STARTTAGOPEN.match(text, i):
                k = self._parse_starttag(i)
            elif text.startswith("</", i):
                k = self._parse_endtag(i)
            elif text.startswith("<!--", i):
                k = self._parse_comment(i)
            elif text.startswith("<?", i):
                k = self._parse_pi(i)
            elif text.startswith("<!", i):
                k = self._parse_html_declaration(i)
            elif i + 1 < n:
                sink.data("<", i)
                k = i + 1
            else:
                break
            if k < 0:  # unterminated: its first characters become text
                k = self._gt.find(i + 1)
                if k < 0:
                    k = text.find("<", i + 1)
                    self._work.count += (k if k >= 0 else n) - i
                    if k < 0:
                        k = i + 1
                else:
                    k += 1
                piece = text[i:k]
                sink.data(unescape(piece) if self._cdata_elem is None else piece, i)
            i = k
        if i < n and self._cdata_elem is None:
            sink.data(unescape(text[i:n]), i)
        self._work.count += n - i

    # -- constructs (each returns where the next token starts, or -1 if unterminated)

    def _parse_starttag(self, i: int) -> int:
        endpos = self._whole_start_tag(i)
        if endpos < 0:
            return endpos
        text = self.text
        match = _TAGFIND.match(text, i + 1)
        assert match is not None  # "<" + letter was checked
        k = match.end()
        tag = match.group(1).lower()
        attrs: Attrs = []
        while k < endpos:
            found = _ATTRFIND.match(text, k)
            if not found:
                break
            name, rest, value = found.group(1, 2, 3)
            if not rest:
                value = None
            elif value[:1] == "'" == value[-1:] or value[:1] == '"' == value[-1:]:
                value = value[1:-1]
            if value:
                value = unescape(value)
            attrs.append((name.lower(), value))
            k = found.end()
        self._work.count += endpos - i
        end = text[k:endpos].strip()
        if end not in (">", "/>"):
            self.sink.data(text[i:endpos], i)
            return endpos
        if end.endswith("/>"):
            self.sink.start_tag(tag, attrs, i, endpos, self_closing=True)
        else:
            self.sink.start_tag(tag, attrs, i, endpos, self_closing=False)
            if tag in _CDATA_END:
                self._cdata_elem = tag
        return endpos

    def _parse_endtag(self, i: int) -> int:
        text = self.text
        gt = self._gt.find(i + 1)
        if gt < 0:
            return -1
        gtpos = gt + 1
        match = _ENDTAGFIND.match(text, i)
        self._work.count += gtpos - i
        if not match:
            if self._cdata_elem is not None:
                self.sink.data(text[i:gtpos], i)
                return gtpos
            namematch = _TAGFIND.match(text, i + 2)
            if not namematch:
                if text.startswith("</>", i):
                    return i + 3
                return self._parse_bogus_comment(i)
            tag = namematch.group(1).lower()
            # the first ">" after the name is the first after "</": the one found above
            self.sink.end_tag(tag, i, gtpos)
            return gtpos
        elem = match.group(1).lower()
        if self._cdata_elem is not None and elem != self._cdata_elem:
            self.sink.data(text[i:gtpos], i)
            return gtpos
        self.sink.end_tag(elem, i, gtpos)
        self._cdata_elem = None
        return gtpos

    def _parse_comment(self, i: int) -> int:
        match = self._comment_close.search(i + 4)
        if match is None:
            return -1
        self.sink.other(i)
        return match.end()

    def _parse_pi(self, i: int) -> int:
        gt = self._gt.find(i + 2)
        if gt < 0:
            return -1
        self.sink.other(i)
        return gt + 1

    def _parse_bogus_comment(self, i: int) -> int:
        gt = self._gt.find(i + 2)
        if gt < 0:
            return -1
        self.sink.other(i)
        return gt + 1

    def _parse_html_declaration(self, i: int) -> int:
        text = self.text
        if text.startswith("<![", i):
            return self._parse_marked_section(i)
        if text[i : i + 9].lower() == "<!doctype":
            gt = self._gt.find(i + 9)
            if gt < 0:
                return -1
            self.sink.other(i)
            return gt + 1
        return self._parse_bogus_comment(i)

    def _parse_marked_section(self, i: int) -> int:
        text = self.text
        name, j = self._scan_name(i + 3, i)
        if j < 0:
            return j
        if name in ("temp", "cdata", "ignore", "include", "rcdata"):
            match = self._section_close.search(i + 3)
        elif name in ("if", "else", "endif"):
            match = self._ms_section_close.search(i + 3)
        else:
            raise MarkupError(f"unknown status keyword {text[i + 3 : j]!r} in marked section")
        if match is None:
            return -1
        self.sink.other(i)
        return match.end()

    def _scan_name(self, i: int, declstartpos: int) -> tuple[str, int]:
        text = self.text
        n = len(text)
        if i == n:
            return "", -1
        match = _DECLNAME.match(text, i)
        if match is None:
            raise MarkupError(
                f"expected name token at {text[declstartpos : declstartpos + 20]!r}"
            )
        self._work.count += match.end() - i
        if match.end() == n:
            return "", -1  # end of input inside the name
        return match.group().strip().lower(), match.end()

    # -- is the start tag complete? (check_for_whole_start_tag)

    def _whole_start_tag(self, i: int) -> int:
        j = self._scan_start_tag(i)
        following = self.text[j : j + 1]
        if following == ">":
            return j + 1
        if following == "/" and self.text.startswith("/>", j):
            return j + 2
        if following == "" or following in _INCOMPLETE_AFTER:  # includes a lone "/"
            self._remember_scan()  # later "<"s inside this tag may scan the same attributes
            return -1
        return j

    def _scan_start_tag(self, i: int) -> int:
        """End of ``locatestarttagend_tolerant.match(text, i)``.

        The expression is ``<`` letter, a tag name, then optionally ``[\\s/]*`` and any
        number of attributes, then ``\\s*``. After the tag name every part is optional, so
        the regex engine never backtracks across parts: each attribute is the first way the
        attribute pattern matches at its position, and the list ends where none does.
        """
        self._new_quotes, self._new_tails = [], []
        name_end = self._tag_name.end(i + 2)
        chain_start = self._space_or_slash.end(name_end)
        return self._space.end(self._attributes_end(chain_start))

    def _attributes_end(self, start: int) -> int:
        """End of ``(?:attribute)*`` from ``start`` (the list reached from a position is
        the same whichever tag reached it, so one remembered end serves every visited start).
        """
        visited: list[int] = []
        pos = start
        while True:
            known = self._chain_end.get(pos)
            if known is not None:
                end = known
                break
            following = self._attribute_end(pos)
            if following is None:
                end = pos
                break
            visited.append(pos)
            pos = following
        self._new_chain, self._new_chain_end = visited, end
        return end

    def _remember_scan(self) -> None:
        for pos in self._new_chain:
            self._chain_end[pos] = self._new_chain_end
        self._attr_tail.update(self._new_tails)
        self._quote_close.update(self._new_quotes)

    def _attribute_end(self, pos: int) -> int | None:
        """End of one attribute at ``pos``, or None where none starts.

        ``(?<=['"\\s/])[^\\s/>][^\\s/=>]*`` (the name) then the value part and
        ``(?:\\s|/(?!>))*``; everything after the name depends only on where the name
        ends, so it is computed once per name end.
        """
        if not _ATTR_START.match(self.text, pos):
            return None
        name_end = self._attr_name.end(pos + 1)
        tail = self._attr_tail.get(name_end)
        if tail is None:
            tail = self._space_or_lone_slash.end(self._value_end(name_end))
            self._new_tails.append((name_end, tail))
        return tail

    def _value_end(self, pos: int) -> int:
        """End of the optional ``(?:\\s*=+\\s*VALUE\\s*)`` at ``pos`` (``pos`` if it fails).

        VALUE is ``'[^']*'``, ``"[^"]*"`` or a bare ``(?!['"])[^>\\s]*``. Only an
        unclosed quote makes VALUE fail, and then the engine backtracks: to the last space
        before the quote (an empty bare value), else to one ``=`` fewer (a bare value
        starting with the last ``=``), else the whole value part is skipped.
        """
        text = self.text
        equals = self._space.end(pos)
        if not text.startswith("=", equals):
            return pos
        after_equals = self._equals.end(equals)
        value = self._space.end(after_equals)
        quote = text[value : value + 1]
        if quote in _QUOTES:
            close = self._closing_quote(value, quote)
            if close >= 0:
                value_end = close + 1
            elif value > after_equals:
                value_end = value
            elif after_equals - equals >= 2:
                value_end = self._bare_value.end(after_equals - 1)
            else:
                return pos
        else:
            value_end = self._bare_value.end(value)
        return self._space.end(value_end)

    def _closing_quote(self, opening: int, quote: str) -> int:
        """The quote that closes the one at ``opening`` (-1: none).

        Two openings of the same quote character never scan the same characters (the
        scan from the first stops at or before the second), so one search per opening
        is linear overall.
        """
        close = self._quote_close.get(opening)
        if close is None:
            close = self.text.find(quote, opening + 1)
            self._work.count += (close if close >= 0 else len(self.text)) - opening
            self._new_quotes.append((opening, close))
        return close
