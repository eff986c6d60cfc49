"""``contextualize(chunk)``: the text users embed for a chunk.

The chunk's heading path (outermost first), then its captions, then its text, one per
line (``"\\n"``-joined). A chunk with no headings and no captions contextualises to its
text unchanged. ``hierarchical-v1`` and ``hybrid-v1`` state ``token_estimate`` as the
token count of exactly this string under the policy's tokenizer, and ``hybrid-v1``
guarantees that count never exceeds the chunk budget.
"""

from __future__ import annotations

from collections.abc import Sequence

from kebab_chunk.model import Chunk

__all__ = ["context_prefix", "contextualize", "contextualize_parts"]


def context_prefix(heading_path: Sequence[str], captions: Sequence[str]) -> str:
    """The metadata lines that precede the text (``""`` when there are none)."""
    return "\n".join((*heading_path, *captions))


def contextualize_parts(heading_path: Sequence[str], captions: Sequence[str], text: str) -> str:
    """``contextualize`` for parts that are not (yet) a Chunk record."""
    prefix = context_prefix(heading_path, captions)
    return f"{prefix}\n{text}" if prefix else text


def contextualize(chunk: Chunk) -> str:
    """Heading path lines + caption lines + text, ``"\\n"``-joined."""
    return contextualize_parts(chunk.heading_path, chunk.captions, chunk.text)
