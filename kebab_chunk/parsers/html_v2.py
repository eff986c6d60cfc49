"""HTML → CanonicalDocument (parser version ``html-v2``): html-v1 without navigation.

html-v1 already drops ``<nav>``, navigation/banner/contentinfo roles and the
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

Spans follow html-v1's exact-slice rule unchanged (:mod:`._html`): on valid markup a
kept block has exactly the span html-v1 gives it (malformed markup, such as a navigation
element never closed, can move it around what was left out). What was left out is counted
in one document warning and in ``metadata`` (``navigation_elements_dropped``,
``link_only_blocks_dropped``, ``permalink_marks_dropped``). The rules run on html-v1's own
tokenizer rather than on a content extractor (trafilatura, justext, readability), because
those rebuild a tree and return text without source offsets, so their output could not be
cited exactly. Its refusal of a malformed ``<![`` section gives the tokenizer's message
without html-v1's ``AssertionError`` (html-v2 was never built on ``html.parser``).

Everything else is html-v1's: it, and the rules above, are :mod:`kebab_chunk.parsers._html`'s
(the navigation rules: :mod:`kebab_chunk.parsers._html_nav`); this version is that engine
with :data:`RULES`.
"""

from __future__ import annotations

from kebab_chunk.parsers._html import MEDIA_TYPE, HtmlEngine, HtmlRules

__all__ = ["MEDIA_TYPE", "PARSER_VERSION", "RULES", "HtmlV2Parser"]

PARSER_VERSION = "html-v2"

#: html-v2's row: navigation left out, the tokenizer's own refusal wording.
RULES = HtmlRules(version=PARSER_VERSION, drop_navigation=True, refusal_names_assertion_error=False)


class HtmlV2Parser(HtmlEngine):
    """Parser ``html-v2``: html-v1's blocks and spans, navigation left out and counted."""

    version = PARSER_VERSION

    def __init__(self) -> None:
        super().__init__(RULES)
