"""Where a block or chunk came from in its source (docs/internals/contract.md, "Data model")."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, TypeAdapter, model_validator

from kebab_chunk.model._base import Frozen, trusted

__all__ = ["SPAN_ADAPTER", "ElementSpan", "LineSpan", "PageSpan", "SourceSpan", "line_span"]


class LineSpan(Frozen):
    """A range of the decoded source text (Markdown, text, HTML, CSV).

    Lines are 1-based and inclusive; characters are 0-based, half-open code-point offsets
    into ``raw.decode("utf-8-sig", errors="replace")`` with no newline translation.
    """

    kind: Literal["lines"] = "lines"
    line_start: int = Field(ge=1)
    line_end: int = Field(ge=1)
    char_start: int = Field(ge=0)
    char_end: int = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> LineSpan:
        if self.line_end < self.line_start or self.char_end < self.char_start:
            raise ValueError("a span must not end before it starts")
        return self


class PageSpan(Frozen):
    """A range of one PDF page's extracted text (1-based page, 0-based half-open chars)."""

    kind: Literal["page"] = "page"
    page: int = Field(ge=1)
    char_start: int = Field(ge=0)
    char_end: int = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> PageSpan:
        if self.char_end < self.char_start:
            raise ValueError("a span must not end before it starts")
        return self


class ElementSpan(Frozen):
    """A range of one element's text in a structured source that has no text to slice.

    For formats whose bytes are not the text (DOCX, docling JSON), ``ref`` names the
    element so it can be found again: for DOCX the XPath of the element inside
    ``word/document.xml`` (e.g. ``/w:document/w:body/w:p[3]``, with the namespace
    prefixes declared on that file's root element), for docling JSON the item's JSON
    pointer (``self_ref``, e.g. ``#/texts/7``). ``page`` is the 1-based page when the
    source records one (docling provenance), else ``None``. Characters are 0-based,
    half-open code-point offsets into that element's text as the parser renders it (a
    paragraph's text, a table's or picture's block text).
    """

    kind: Literal["element"] = "element"
    ref: str = Field(min_length=1)
    page: int | None = Field(default=None, ge=1)
    char_start: int = Field(ge=0)
    char_end: int = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> ElementSpan:
        if self.char_end < self.char_start:
            raise ValueError("a span must not end before it starts")
        return self


SourceSpan = Annotated[LineSpan | PageSpan | ElementSpan, Field(discriminator="kind")]
SPAN_ADAPTER: TypeAdapter[LineSpan | PageSpan | ElementSpan] = TypeAdapter(SourceSpan)


def line_span(line_start: int, line_end: int, char_start: int, char_end: int) -> LineSpan:
    """``LineSpan(...)`` for ints computed by our own parsers and chunkers, built fast.

    Values that satisfy the model's constraints skip validation (see
    :func:`kebab_chunk.model._base.trusted`); anything else goes through the validating
    constructor, so a bad span still fails with the model's own error.
    """
    if 1 <= line_start <= line_end and 0 <= char_start <= char_end:
        return trusted(
            LineSpan,
            {
                "kind": "lines",
                "line_start": line_start,
                "line_end": line_end,
                "char_start": char_start,
                "char_end": char_end,
            },
            {"line_start", "line_end", "char_start", "char_end"},
        )
    return LineSpan(
        line_start=line_start, line_end=line_end, char_start=char_start, char_end=char_end
    )
