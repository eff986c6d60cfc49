"""PDF parser ``pdf-text-v1``: one paragraph block per page, text from pypdf.

Each page becomes one :class:`~kebab_chunk.model.ParagraphBlock` whose ``text`` is pypdf's
``extract_text()`` of that page and whose single ``PageSpan`` covers it (``char_start=0``,
``char_end=len(text)``), so ``pdf-page-v1`` can cite any slice of a page exactly. Pages
without text keep their block (page numbering stays intact) and add a document warning.
No outline, no running-line removal: the first PDF version reads the text as pypdf gives it.

The text, title, errors, limits and pypdf log capture every PDF version shares are in
:mod:`kebab_chunk.parsers._pdf`; this version is that engine with :data:`RULES`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from kebab_chunk.parsers._pdf import PdfRules, PdfTextParser

__all__ = ["PARSER_VERSION", "RULES", "PdfParser"]

PARSER_VERSION = "pdf-text-v1"

#: pdf-text-v1's row: whole pages, no outline headings, running lines kept.
RULES = PdfRules(
    version=PARSER_VERSION, whole_pages=True, outline_headings=False, drop_running_lines=False
)


class PdfParser(PdfTextParser):
    """``pdf-text-v1``: the PDF engine with :data:`RULES` (no other difference)."""

    version = PARSER_VERSION

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(RULES, clock)
