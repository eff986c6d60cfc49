"""The byte proxy tokenizer: ``ceil(utf8_bytes / 3)``.

Three bytes per token errs toward over-estimating real subword tokenizers on English and
code, so a chunk sized by the proxy fits a real model's budget. It needs no files, which
makes it the deterministic default and the tokenizer tests rely on.
"""

from __future__ import annotations

__all__ = ["BYTES_PER_TOKEN", "ByteProxyTokenizer", "estimate_tokens"]

BYTES_PER_TOKEN = 3


def estimate_tokens(text: str) -> int:
    """``ceil(len(text.encode("utf-8")) / 3)``; 0 for the empty string."""
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)


class ByteProxyTokenizer:
    """Tokenizer protocol implementation for the ``bytes-3`` proxy."""

    name = "bytes-3"
    max_tokens: int | None = None

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)
