"""The canonical block model every parser produces and every chunker consumes."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field, TypeAdapter

from kebab_chunk.model._base import Frozen, trusted
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
    "make_block",
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


_B = TypeVar("_B", bound=_BlockBase)

#: Per block class: its ``kind`` and its own fields after the common ones, in field order.
_DETAILS: dict[type[_BlockBase], tuple[str, tuple[str, ...]]] = {
    cls: (
        cls.model_fields["kind"].default,
        tuple(name for name in cls.model_fields if name not in _BlockBase.model_fields)[1:],
    )
    for cls in (
        HeadingBlock,
        ParagraphBlock,
        ListBlock,
        CodeBlock,
        TableBlock,
        ImageRefBlock,
        AudioRefBlock,
    )
}
_COMMON = ("block_id", "text", "heading_path", "spans")


def make_block(
    cls: type[_B],
    block_id: str,
    text: str,
    heading_path: tuple[str, ...],
    spans: tuple[SourceSpan, ...],
    **details: Any,
) -> _B:
    """A block built by a parser from values of exactly the schema's types, without validation.

    For the hot path of a parser that produces millions of blocks: ``heading_path`` is a
    tuple of ``str``, ``spans`` a non-empty tuple of span models, and ``details`` gives
    *every* field of the block class beyond the common ones (a heading's ``level`` 1-6 and
    ``title``, a list's ``ordered`` and ``items`` tuple, ...), each of its exact type. The
    result equals ``cls(block_id=..., text=..., heading_path=..., spans=..., **details)``
    (same fields, field order and fields-set; tests compare them). A call that names the
    wrong detail fields or passes no span is sent to the validating constructor instead.
    """
    kind, names = _DETAILS[cls]
    if not spans or len(details) != len(names):
        return cls(block_id=block_id, text=text, heading_path=heading_path, spans=spans, **details)
    values: dict[str, Any] = {
        "block_id": block_id,
        "text": text,
        "heading_path": heading_path,
        "spans": spans,
        "kind": kind,
    }
    for name in names:
        if name not in details:
            return cls(
                block_id=block_id, text=text, heading_path=heading_path, spans=spans, **details
            )
        values[name] = details[name]
    return trusted(cls, values, {*_COMMON, *names})
