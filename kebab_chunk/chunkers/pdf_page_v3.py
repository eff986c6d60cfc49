"""``pdf-page-v3``: ``pdf-page-v2``, never cutting between a list marker and its item.

Everything is ``pdf-page-v2``'s (whose output stays frozen; its docstring has the details)
but one rule on where a cut may fall. PDF text extraction keeps a numbered item on its line
(``4. MODIFICATIONS``), and v2 took the space after ``4.`` for a sentence end: the chunk
ended with a dangling ``4.`` and the item's text began the next one. On the GNU manuals of
the development machine 4 to 13% of v2's chunks of ``libtasn1.pdf`` ended that way (the
numbered sections of the GNU Free Documentation License, printed in many manuals).

Here no cut falls after a line's leading list marker and before the first word after it:
a number or a single letter or a short roman numeral closed by ``.`` or ``)`` (``4.``,
``b)``, ``iv.``), a parenthesised one (``(2)``), or a bullet (``•``, ``-``, ``*`` ...). A
cut before the marker (at the line break) is as clean as v2's. Budgets, exact counts,
overlap, citations and ids follow v2's rules.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kebab_chunk.chunkers.pdf_page_v2 import Member, PdfPageV2Chunker, Run

__all__ = ["PdfPageV3Chunker"]

VERSION = "pdf-page-v3"

#: A list marker at a line start and the blanks after it, followed by the item's text.
_MARKER = re.compile(
    r"^[ \t]*(?:(?:\d{1,3}|[A-Za-z]|[ivxlcdm]{2,4}|[IVXLCDM]{2,4})[.)]|\(\w{1,3}\)"
    r"|[\u2022\u25e6\u25aa\u2023\u2043\u00b7*\-\u2013])[ \t]+(?=\S)",
    re.MULTILINE,
)


class _MarkerRun(Run):
    """``pdf-page-v2``'s pass with list markers glued to their item's first word."""

    def _glued(self, text: str, members: Sequence[Member]) -> list[tuple[int, int]]:
        """v2's glued ranges plus ``(line start, end of the blanks after its marker)``."""
        markers = [(m.start(), m.end()) for m in _MARKER.finditer(text)]
        return [*super()._glued(text, members), *markers]


class PdfPageV3Chunker(PdfPageV2Chunker):
    """Chunker protocol implementation for ``pdf-page-v3``."""

    version = VERSION
    accepts_description = (
        "PDF documents (every block a paragraph or heading with one page span, as "
        "pdf-text-v1 and pdf-text-v2 make); as pdf-page-v2, never cut after a list marker"
    )
    run_class = _MarkerRun
