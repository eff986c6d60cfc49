"""HTML → CanonicalDocument (parser version ``html-v2``): html-v1 without navigation.

html-v1 (:mod:`.html`) already drops ``<nav>``, navigation/banner/contentinfo roles and the
page-level ``<header>``/``<footer>``, yet navigation still reached the chunks: texinfo's
``Next: … Previous: … Up: … [Contents][Index]`` bars (a ``<p>`` in ``<div class="header">``
or ``<div class="nav-panel">``), DocBook and gtk-doc navigation tables (arrow images with
``Prev``/``Up``/``Next`` alt text), tables of contents, menus and skip links, and the
permalink marks of headings (``File system#``, ``Abstract¶``). html-v2 keeps every html-v1
rule and adds:

* **navigation markup** dropped with its content: elements with a navigation class
  (``nav``, ``navigation``, ``nav-panel``, ``navheader``, ``navfooter``, ``breadcrumb``,
  ``breadcrumbs``, ``toc``) and tables whose ``summary`` starts with "Navigation"
  (DocBook XSL and gtk-doc write ``summary="Navigation header"``);
* **link-only blocks** left out: a paragraph, list or table whose letters and digits are
  all inside links (``<a href>``), with only separators (``|``, ``•``, ``[``, ``,``...)
  and navigation words (``Next:``, ``Previous:``, ``Up:``) outside them, when it reads as
  navigation: two or more links, a navigation word, or a link into the page (a skip link).
  A block that is a single outside link (a type link such as ``<Object>``) is kept;
  headings and code are never left out. Images inside a left-out block go with it, and a
  linked image whose alt text is an arrow word (``Prev``, ``Next``, ``Up``, ``Home``...)
  is left out too;
* **permalink marks** skipped: the text of an in-page link that shows only ``#``, ``¶``,
  ``§`` or a link symbol is not part of the heading (or term) it marks.

Spans follow html-v1's exact-slice rule unchanged (:mod:`.html`): on valid markup a
kept block has exactly the span html-v1 gives it (malformed markup, such as a navigation
element never closed, can move it around what was left out). What was left out is counted
in one document warning and in ``metadata`` (``navigation_elements_dropped``,
``link_only_blocks_dropped``, ``permalink_marks_dropped``). The rules run on html-v1's own
tokenizer rather than on a content extractor (trafilatura, justext, readability), because
those rebuild a tree and return text without source offsets, so their output could not be
cited exactly.
"""

from __future__ import annotations

from kebab_chunk.errors import LimitExceededError, ParseError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.spans import LineSpan
from kebab_chunk.parsers._assemble import Assembler
from kebab_chunk.parsers._html_charset import decode_html
from kebab_chunk.parsers._html_nav import NavBuilder
from kebab_chunk.parsers._source import LineCounter, newline_view
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits
from kebab_chunk.parsers.html_tokenizer import HtmlTokenizer, MarkupError

__all__ = ["MEDIA_TYPE", "PARSER_VERSION", "HtmlV2Parser"]

PARSER_VERSION = "html-v2"
MEDIA_TYPE = "text/html"


class HtmlV2Parser:
    """Parser ``html-v2``: html-v1's blocks and spans, navigation left out and counted."""

    version = PARSER_VERSION
    media_types = (MEDIA_TYPE,)

    def parse(
        self, raw: bytes, source_uri: str, limits: ParseLimits = DEFAULT_LIMITS
    ) -> CanonicalDocument:
        text, warnings = decode_html(raw, source_uri)
        builder = NavBuilder(text, source_uri, limits)
        try:
            HtmlTokenizer(text, builder).run()
        except (LimitExceededError, ParseError):
            raise
        except Exception as exc:  # a malformed <![ section (the only refusal), or a bug
            reason = str(exc) if isinstance(exc, MarkupError) else f"{type(exc).__name__}: {exc}"
            raise ParseError(
                f"{source_uri} could not be tokenized as HTML ({reason}); "
                "check that the file is HTML or remove it from the corpus."
            ) from exc
        builder.finish()
        assembler = Assembler(raw, source_uri, MEDIA_TYPE, PARSER_VERSION, limits)
        lines = LineCounter(newline_view(text))
        for d in builder.drafts:
            span = LineSpan(
                line_start=lines.line_of(d.start),
                line_end=lines.line_of(max(d.end - 1, d.start)),
                char_start=d.start,
                char_end=d.end,
            )
            assembler.add_draft(d, d.text or d.caption or "", (span,))
        return assembler.finish(
            [*warnings, *builder.warnings], title=builder.title, metadata=builder.metadata
        )
