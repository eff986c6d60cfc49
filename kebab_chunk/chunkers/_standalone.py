"""What a block that cannot join a run of exact slices becomes as a chunk of its own.

An image or audio reference has no source text to slice: its chunk text is the alt text and
caption (the one documented exception to the exact-slice rule), its caption also in
``captions``. Any other such block (rendered text that is not a source slice) is kept whole,
as given. The md-heading engines share this rule.
"""

from __future__ import annotations

from kebab_chunk.model import AudioRefBlock, Block, ImageRefBlock

__all__ = ["standalone_text"]


def standalone_text(block: Block) -> tuple[str, tuple[str, ...]]:
    """``(text, captions)`` of ``block`` as a chunk on its own."""
    if isinstance(block, ImageRefBlock):
        captions = (block.caption,) if block.caption else ()
        return "\n".join(part for part in (block.alt, block.caption) if part), captions
    if isinstance(block, AudioRefBlock):
        return block.caption or "", (block.caption,) if block.caption else ()
    return block.text, ()
