"""Where a block or chunk came from in its source (DESIGN §2)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, TypeAdapter, model_validator

from kebab_chunk.model._base import Frozen

__all__ = ["SPAN_ADAPTER", "LineSpan", "PageSpan", "SourceSpan"]


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


SourceSpan = Annotated[LineSpan | PageSpan, Field(discriminator="kind")]
SPAN_ADAPTER: TypeAdapter[LineSpan | PageSpan] = TypeAdapter(SourceSpan)
