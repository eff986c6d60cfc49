"""Docling JSON → CanonicalDocument (parser version ``docling-json-v1``).

The first docling JSON version: every item of the body tree is mapped, the texts docling
found inside pictures included (each a paragraph), and a table's captions are paragraphs
after its table block.

The schema, the walk, the mapping, errors, limits and spans every docling JSON version
shares are in :mod:`kebab_chunk.parsers._docling_json`; this version is that engine with
:data:`RULES`.
"""

from __future__ import annotations

from kebab_chunk.parsers._docling_json import MEDIA_TYPE, DoclingJsonEngine, DoclingRules

__all__ = ["MEDIA_TYPE", "PARSER_VERSION", "RULES", "DoclingJsonParser"]

PARSER_VERSION = "docling-json-v1"

#: docling-json-v1's row: picture text walked, captions as paragraphs after the table.
RULES = DoclingRules(version=PARSER_VERSION, skip_picture_text=False, captions_in_tables=False)


class DoclingJsonParser(DoclingJsonEngine):
    """Parser ``docling-json-v1``: the docling JSON engine with :data:`RULES`."""

    version = PARSER_VERSION

    def __init__(self) -> None:
        super().__init__(RULES)
