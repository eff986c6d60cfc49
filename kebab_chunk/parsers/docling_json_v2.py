"""Docling JSON → CanonicalDocument (parser version ``docling-json-v2``).

Reads the same ``DoclingDocument`` exports as ``docling-json-v1``
(:mod:`kebab_chunk.parsers.docling_json`, unchanged and still registered) and maps them the
same way, with two differences, each of which changes the blocks of a typical converted PDF:

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

Everything else (schema, errors, limits, spans, lists, headings, warnings) is v1's; the
walk is v1's walker with the two steps above replaced.
"""

from __future__ import annotations

from typing import Any

from kebab_chunk.errors import LimitExceededError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.spans import ElementSpan
from kebab_chunk.parsers._assemble import Assembler
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits
from kebab_chunk.parsers.docling_json import (
    MEDIA_TYPE,
    Item,
    _Draft,
    _load,
    _PictureItem,
    _spans,
    _TableItem,
    _TextItem,
    _Walker,
)

__all__ = ["MEDIA_TYPE", "PARSER_VERSION", "DoclingJsonV2Parser"]

PARSER_VERSION = "docling-json-v2"

#: The warning that counts the items of pictures left out (``{count}`` is filled in).
PICTURE_ITEMS_LEFT_OUT = (
    "item(s) inside pictures left out (text drawn in a figure, such as axis labels)"
)


class DoclingJsonV2Parser:
    """Parser ``docling-json-v2``: v1 without the text inside pictures, captions on tables."""

    version = PARSER_VERSION
    media_types = (MEDIA_TYPE,)

    def parse(
        self, raw: bytes, source_uri: str, limits: ParseLimits = DEFAULT_LIMITS
    ) -> CanonicalDocument:
        document = _load(raw, source_uri)
        walker = _WalkerV2(document, source_uri, limits)
        walker.run()
        origin = document.origin or {}
        metadata: dict[str, Any] = {"docling_schema_version": document.version}
        for key in ("mimetype", "filename"):
            if isinstance(origin.get(key), str):
                metadata[f"origin_{key}"] = origin[key]
        assembler = Assembler(raw, source_uri, MEDIA_TYPE, PARSER_VERSION, limits)
        for draft in walker.drafts:
            if draft.kind != "list" or draft.items:  # a list group without items: no block
                assembler.add_draft(draft, draft.text, tuple(draft.spans))
        return assembler.finish(walker.warnings, title=walker.title, metadata=metadata)


class _WalkerV2(_Walker):
    """v1's walk, except that a picture's children (footnotes aside) are not visited and a
    table's captions go into its block."""

    def _children(self, item: Item, visited: set[str]) -> list[str]:
        """v1's children, except a picture's: only its footnotes are walked."""
        children = super()._children(item, visited)
        if isinstance(item, _PictureItem):
            return self._picture_children(children, visited)
        return children

    def _picture_children(self, children: list[str], visited: set[str]) -> list[str]:
        """The picture's children to walk (its footnotes); the rest is marked visited and
        its non-empty items (captions aside, they are attached already) are counted."""
        kept: list[str] = []
        left_out = 0
        pending = list(reversed(children))
        top = set(children)
        while pending:
            ref = pending.pop()
            if ref in visited:
                continue
            item = self._resolve(ref)
            if ref in top and isinstance(item, _TextItem) and item.label == "footnote":
                kept.append(ref)
                continue
            visited.add(ref)
            if item is None or item.content_layer != "body" or ref in self._consumed:
                continue
            if not ref.startswith("#/groups/") and (
                not isinstance(item, _TextItem) or item.text.strip()
            ):
                left_out += 1
            pending.extend(reversed([c.cref for c in item.children]))
        if left_out:
            self._problems[PICTURE_ITEMS_LEFT_OUT] = (
                self._problems.get(PICTURE_ITEMS_LEFT_OUT, 0) + left_out
            )
        return kept

    def _table(self, table: _TableItem) -> None:
        """v1's table block, with the captions as its first line instead of paragraphs."""
        self._end_orphan_list()
        data = table.data
        rows = max([data.num_rows, *(c.start_row_offset_idx + 1 for c in data.table_cells)])
        cols = max([data.num_cols, *(c.start_col_offset_idx + 1 for c in data.table_cells)])
        if rows * cols > 10 * max(len(data.table_cells), 1) + 10_000:
            raise LimitExceededError(
                f"{self.source_uri} declares a {rows}x{cols} table with only "
                f"{len(data.table_cells)} cells; the table data is malformed."
            )
        grid = [[""] * cols for _ in range(rows)]
        header_row = False
        for cell in data.table_cells:
            grid[cell.start_row_offset_idx][cell.start_col_offset_idx] = " ".join(cell.text.split())
            header_row |= cell.column_header and cell.start_row_offset_idx == 0
        captions = self._captions(table)
        if not any(any(row) for row in grid):  # no table block to attach the captions to
            for caption, spans in captions:
                self._add(_Draft("paragraph", caption, spans=spans))
            return
        grid_text = "\n".join(" | ".join(row) for row in grid)
        caption_line = " ".join(" ".join(caption.split()) for caption, _ in captions)
        text = f"{caption_line}\n{grid_text}" if caption_line else grid_text
        caption_spans: list[ElementSpan] = [span for _, spans in captions for span in spans]
        table_spans = _spans(table.self_ref, table.prov, grid_text, whole=True)
        header = tuple(grid[0]) if header_row else ()
        body = tuple(tuple(row) for row in (grid[1:] if header_row else grid))
        self._add(
            _Draft("table", text, spans=[*caption_spans, *table_spans], header=header, rows=body)
        )
