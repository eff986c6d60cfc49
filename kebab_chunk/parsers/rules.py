"""The rules of each parser engine with more than one version: every behavioural difference
between the versions one engine makes, as a frozen value (everything else is the engine's,
the same for every version).

A parser version is a row of the registry (:mod:`kebab_chunk.parsers.registry`): a name,
the engine per media type and one of these values. A new version is a new row, usually
``replace(older.rules, ...)`` with the field it changes; a new behaviour is a new field
here, defaulting nowhere, and one branch in the engine. This module holds data only, so
listing parser versions imports no engine.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DoclingRules", "HtmlRules", "PdfRules", "Rules"]


@dataclass(frozen=True, slots=True)
class PdfRules:
    """What distinguishes the ``pdf-text-*`` versions (:mod:`kebab_chunk.parsers._pdf`)."""

    #: Every page is one paragraph block citing the page's whole text, blank pages and
    #: whitespace at the page's ends included (pdf-text-v1); off, a page's kept text is
    #: trimmed, a blank page gives no block, and headings cut a page into blocks whose spans
    #: touch (pdf-text-v2).
    whole_pages: bool
    #: Outline entries become headings (``_pdf._outline``), the first outline title is the
    #: fallback title, and ``metadata`` counts the outline headings and those cited
    #: (pdf-text-v2).
    outline_headings: bool
    #: Running headers and footers are left out of the text (``_pdf._running``) and
    #: ``metadata["running_lines_dropped"]`` counts them (pdf-text-v2).
    drop_running_lines: bool
    #: A document whose outline gives no heading takes its headings from its type
    #: (``_pdf_fonts``: short lines set larger than the running text, or bold where it is
    #: not); ``metadata["font_headings"]`` counts them. Needs ``outline_headings``
    #: (pdf-text-v3).
    font_headings: bool


@dataclass(frozen=True, slots=True)
class DoclingRules:
    """What distinguishes the ``docling-json-*`` versions
    (:mod:`kebab_chunk.parsers._docling_json`)."""

    #: No child of a picture is walked except its footnotes (texts labelled ``footnote``);
    #: the non-empty items left out are counted in one warning,
    #: ``_docling_json.PICTURE_ITEMS_LEFT_OUT`` (docling-json-v2; v1 made each a paragraph).
    skip_picture_text: bool
    #: A table's captions (whitespace collapsed, joined by a space) are the first line of its
    #: block's text, their spans before the table's; a table without cell text has no block
    #: and its captions stay paragraphs (docling-json-v2; v1 made them paragraphs after the
    #: table).
    captions_in_tables: bool


@dataclass(frozen=True, slots=True)
class HtmlRules:
    """What distinguishes the ``html-*`` versions (:mod:`kebab_chunk.parsers._html`)."""

    #: Navigation markup, link-only blocks and permalink marks are left out, counted in one
    #: warning and in ``metadata`` (``_html_nav.NavBuilder``, html-v2).
    drop_navigation: bool
    #: The refusal of a malformed ``<![`` section names ``AssertionError``, the exception the
    #: standard library's ``html.parser`` raised for it when html-v1 was built on that
    #: tokenizer (html-v1's refusal stays that sentence); off, it gives the tokenizer's
    #: message alone (html-v2).
    refusal_names_assertion_error: bool
    #: An element whose ``id`` or a ``class`` is ``footer``, ``site-footer`` or
    #: ``page-footer``, outside ``article``/``section``/``main``/``aside``, is left out as a
    #: page-level footer ("Last updated ...", copyright lines), like ``<footer>``; needs
    #: ``drop_navigation`` (html-v3).
    page_footer_names: bool
    #: The term(s) of a ``<dt>`` run start the first paragraph of the ``<dd>`` after them,
    #: one block (a term alone in a chunk means nothing); terms with no paragraph after them
    #: are one block. Needs ``drop_navigation`` (html-v3).
    terms_with_definitions: bool
    #: A link-only block that is its section's only block (a "SEE ALSO" list between a
    #: heading and the next) and links out of the page at least once (a table of contents
    #: links only into it) is content, not navigation. Needs ``drop_navigation`` (html-v3).
    lone_section_links: bool
    #: ``\r\n`` and ``\r`` in a block's text (``<pre>`` keeps them as written) become
    #: ``\n``, as HTML's own input preprocessing does: one line-ending convention (html-v3).
    unix_line_endings: bool
    #: A ``<pre>`` inside a list item keeps its lines (indented under the item in the
    #: list's text, line by line in its ``items`` entry) instead of being collapsed onto the
    #: item's one line. Needs ``drop_navigation`` (html-v3).
    code_in_lists: bool


@dataclass(frozen=True, slots=True)
class PlainTextRules:
    """What distinguishes the ``text-plain-*`` versions (:mod:`kebab_chunk.parsers._plain_text`)."""

    #: Section titles are headings: a line underlined by a line of one of ``= - ~ ^ +``
    #: (levels 1 to 5, as AsciiDoc and Markdown's setext write them; the underline at most
    #: two characters longer or shorter than the title), or a paragraph's first line
    #: ``= Title`` to ``====== Title`` (AsciiDoc's one-line titles); not inside AsciiDoc's
    #: delimited blocks (``----``, ``....``, ``====``, ``++++``, ``****``, ``____``)
    #: (text-plain-v2).
    headings: bool


#: The rules of any engine; ``None`` in a registry row is an engine with one version only.
Rules = PdfRules | DoclingRules | HtmlRules | PlainTextRules
