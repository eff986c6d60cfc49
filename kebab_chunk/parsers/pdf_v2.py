"""PDF parser ``pdf-text-v2``: headings from the outline, running headers and footers dropped.

Text comes from pypdf's ``extract_text()`` of each page, exactly as in ``pdf-text-v1``, and
every span is a ``PageSpan`` into that page text, so ``page_text[char_start:char_end] ==
block.text`` for every block. What v2 changes:

* **Title**: the metadata ``/Title`` when present and not blank, else the title of the first
  outline (bookmark) entry, else ``None``.
* **Headings from the outline**: every outline entry whose destination resolves to a page
  becomes a heading of level = its nesting depth (1 for top-level entries, capped at 6).
  Entries are placed on their target page in outline order (a stable sort by page). On that
  page the entry's title is searched for in the kept text, after the previous heading of
  the page: the words of the title, separated by any whitespace, case-insensitively, at the
  start of a line, optionally after a section number (``2.1``, ``A``, ``IV.``) and/or a
  word ``Chapter``/``Section``/``Appendix``/``Part``; a match that fills the rest of its
  line wins over one that does not. A found title becomes a :class:`HeadingBlock` whose
  ``text`` and span are that exact slice of the page (section number included) and whose
  ``title`` is the outline entry's title. A title that is not found is *not* invented as
  page text: its section is opened where the page's remaining text starts (so the text
  after it carries it in ``heading_path``), no block cites it, and a warning counts such
  entries. Text between headings becomes one :class:`ParagraphBlock` per run. A page's
  blocks tile its kept text (whitespace at its two ends excepted): a heading block runs
  through the whitespace after its title, a paragraph up to the next heading, so the spans
  of consecutive blocks touch and a page chunker can cut across them exactly.
* **Running headers and footers**: a page's *edge lines* are its first and last
  ``EDGE_LINES`` non-blank lines. Lines are compared after collapsing whitespace and
  replacing every run of digits with ``#`` (so page numbers do not matter). An edge line
  is dropped when its normalised text is at an edge of at least ``RUNNING_SHARE`` of the
  pages (and of at least ``RUNNING_MIN_PAGES`` pages), or when it contains a number and is
  at the same edge zone of ``RUNNING_MIN_PAGES`` or more consecutive pages with varying
  numbers (chapter-specific headers such as ``Chapter 4: Reference 13``), or when it is a
  bare page number (``7``, ``- 7 -``, ``Page 7 of 9``, ``7 / 9``) and such bare numbers
  are at an edge of at least ``RUNNING_MIN_PAGES`` pages. Only lines contiguous with the
  page's top or bottom are dropped (a kept line stops the walk), so body text is never cut
  out of the middle of a page. The count is in ``metadata["running_lines_dropped"]`` and
  in one document warning.

Empty pages produce no block (their warning stays, as in v1); ``metadata["page_count"]``
keeps the page count. Why: v1's one block per page gave a chunker no section to follow
and repeated the running header and footer of every page in its chunks.

Errors, limits, encryption and pypdf log capture are v1's: they, and the rules above, are
:mod:`kebab_chunk.parsers._pdf`'s (``EDGE_LINES``, ``RUNNING_SHARE``, ``RUNNING_MIN_PAGES``
are its constants); this version is that engine with :data:`RULES`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from kebab_chunk.parsers._pdf import PdfRules, PdfTextParser

__all__ = ["PARSER_VERSION", "RULES", "PdfV2Parser"]

PARSER_VERSION = "pdf-text-v2"

#: pdf-text-v2's row: trimmed pages cut at outline headings, running lines dropped.
RULES = PdfRules(
    version=PARSER_VERSION, whole_pages=False, outline_headings=True, drop_running_lines=True
)


class PdfV2Parser(PdfTextParser):
    """``pdf-text-v2``: the PDF engine with :data:`RULES` (no other difference)."""

    version = PARSER_VERSION

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(RULES, clock)
