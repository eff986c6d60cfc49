"""The canonical block model every parser produces and every chunker consumes."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, TypeAdapter

from kebab_chunk.model._base import Frozen
from kebab_chunk.model.spans import SourceSpan

__all__ = [
    "BLOCK_ADAPTER",
    "AudioRefBlock",
    "Block",
    "CodeBlock",
    "HeadingBlock",
    "ImageRefBlock",
    "ListBlock",
    "ParagraphBlock",
    "TableBlock",
]


class _BlockBase(Frozen):
    """Fields every block has.

    ``text`` is the rendering used for chunking; for text formats it is the source text
    exactly as written, so a chunk can be cited back by slicing the source.
    """

    block_id: str
    text: str
    heading_path: tuple[str, ...] = ()
    spans: tuple[SourceSpan, ...] = Field(min_length=1)


class HeadingBlock(_BlockBase):
    kind: Literal["heading"] = "heading"
    level: int = Field(ge=1, le=6)
    title: str = ""  # the heading's plain text, without markers


class ParagraphBlock(_BlockBase):
    kind: Literal["paragraph"] = "paragraph"


class ListBlock(_BlockBase):
    kind: Literal["list"] = "list"
    ordered: bool = False
    items: tuple[str, ...] = ()


class CodeBlock(_BlockBase):
    kind: Literal["code"] = "code"
    language: str | None = None


class TableBlock(_BlockBase):
    kind: Literal["table"] = "table"
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()


class ImageRefBlock(_BlockBase):
    kind: Literal["image_ref"] = "image_ref"
    alt: str = ""
    src: str = ""
    caption: str | None = None


class AudioRefBlock(_BlockBase):
    kind: Literal["audio_ref"] = "audio_ref"
    src: str = ""
    caption: str | None = None


Block = Annotated[
    HeadingBlock
    | ParagraphBlock
    | ListBlock
    | CodeBlock
    | TableBlock
    | ImageRefBlock
    | AudioRefBlock,
    Field(discriminator="kind"),
]
BLOCK_ADAPTER: TypeAdapter[
    HeadingBlock
    | ParagraphBlock
    | ListBlock
    | CodeBlock
    | TableBlock
    | ImageRefBlock
    | AudioRefBlock
] = TypeAdapter(Block)
