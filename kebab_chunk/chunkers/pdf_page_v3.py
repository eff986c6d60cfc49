"""``pdf-page-v3``: ``pdf-page-v2``, never cutting between a list marker and its item.

Everything is ``pdf-page-v2``'s (whose output stays frozen): the same engine
(:mod:`kebab_chunk.chunkers._pages`, whose docstring has the details) with one more rule on
where a cut may fall (:attr:`~kebab_chunk.chunkers._pages.PageRules.glue_list_markers`).
PDF text extraction keeps a numbered item on its line (``4. MODIFICATIONS``), and v2 took
the space after ``4.`` for a sentence end: the chunk ended with a dangling ``4.`` and the
item's text began the next one. On the GNU manuals of the development machine 4 to 13% of
v2's chunks of ``libtasn1.pdf`` ended that way (the numbered sections of the GNU Free
Documentation License, printed in many manuals).

Here no cut falls after a line's leading list marker and before the first word after it:
a number or a single letter or a short roman numeral closed by ``.`` or ``)`` (``4.``,
``b)``, ``iv.``), a parenthesised one (``(2)``), or a bullet (``•``, ``-``, ``*`` ...). A
cut before the marker (at the line break) is as clean as v2's. Budgets, exact counts,
overlap, citations and ids follow v2's rules.
"""

from __future__ import annotations

from kebab_chunk.chunkers._pages import PageChunker, PageRules

__all__ = ["RULES", "PdfPageV3Chunker"]

#: pdf-page-v3's row: pdf-page-v2's with list markers glued to their item.
RULES = PageRules(version="pdf-page-v3", glue_list_markers=True)


class PdfPageV3Chunker(PageChunker):
    """The pdf-page engine with :data:`RULES` (no other difference)."""

    accepts_description = (
        "PDF documents (every block a paragraph or heading with one page span, as "
        "pdf-text-v1 and pdf-text-v2 make); as pdf-page-v2, never cut after a list marker"
    )

    def __init__(self) -> None:
        super().__init__(RULES)
