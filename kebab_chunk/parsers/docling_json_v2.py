"""Docling JSON → CanonicalDocument (parser version ``docling-json-v2``).

Reads the same ``DoclingDocument`` exports as ``docling-json-v1`` (still registered) and
maps them the same way, with two differences, each of which changes the blocks of a
typical converted PDF:

- **Text inside pictures is left out.** Docling keeps the text its layout model finds
  inside a figure (axis labels, tick values, legend entries, words in a diagram) as
  children of the picture; v1 turned each into a paragraph, so a scientific paper became
  mostly one- or two-word paragraphs such as ``68-85``. v2 walks no child of a picture
  except the picture's footnotes (texts labelled ``footnote``, real document text), which
  stay paragraphs as in v1; its captions are attached to the image reference as before.
  The number of non-empty items left out is reported in one warning,
  ``"N item(s) inside pictures left out (...)"``.
- **A table's captions belong to its table block.** v1 emitted them as a paragraph after
  the table, so a retriever could return the table without the sentence that says what it
  is, or the caption without its table. The block model has no caption field for tables,
  so v2 writes the captions (whitespace collapsed, several joined by a space) as the first
  line of the table block's text, above the rows: every chunker keeps caption and table in
  one chunk, and the token-aware ones repeat that line with the header row on each piece
  of a split table. ``header`` and ``rows`` hold the grid only. The block's spans are the
  captions' spans (offsets into each caption's own text) followed by the table's (offsets
  into the grid rendering, as in v1). A table without any cell text has no block; its
  captions stay paragraphs there, as in v1.

Everything else (schema, errors, limits, spans, lists, headings, warnings) is v1's: it,
and the two rules above, are :mod:`kebab_chunk.parsers._docling_json`'s; this version is
that engine with :data:`RULES`.
"""

from __future__ import annotations

from kebab_chunk.parsers._docling_json import MEDIA_TYPE, DoclingJsonEngine, DoclingRules

__all__ = ["MEDIA_TYPE", "PARSER_VERSION", "RULES", "DoclingJsonV2Parser"]

PARSER_VERSION = "docling-json-v2"

#: docling-json-v2's row: picture text left out, captions in their table's block.
RULES = DoclingRules(version=PARSER_VERSION, skip_picture_text=True, captions_in_tables=True)


class DoclingJsonV2Parser(DoclingJsonEngine):
    """Parser ``docling-json-v2``: the docling JSON engine with :data:`RULES` (v1 without
    the text inside pictures, captions on tables)."""

    version = PARSER_VERSION

    def __init__(self) -> None:
        super().__init__(RULES)
