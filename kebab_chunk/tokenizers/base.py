"""The tokenizer protocol: the one question a token-aware chunker asks.

A tokenizer says how many tokens a text costs and what its model's limit is; nothing
else. Keeping the interface this small (text-splitter's ``ChunkSizer``, docling-core's
``BaseTokenizer``) lets the byte proxy, HuggingFace ``tokenizer.json`` files and tiktoken
encodings stand in for each other, and keeps sizing separate from where a chunker may cut.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["Tokenizer"]


@runtime_checkable
class Tokenizer(Protocol):
    """Counts tokens for one model; ``name`` is the canonical policy value that loads it."""

    #: Canonical name, exactly as stored in ``ChunkPolicy.tokenizer`` (part of policy_hash).
    name: str
    #: The model's input limit in this tokenizer's tokens, or ``None`` when it has none.
    max_tokens: int | None

    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` costs when embedded as-is (0 or a constant for the empty text)."""
        ...
