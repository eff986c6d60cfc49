"""Tokenizer names -> loaded tokenizers, cached per process.

Canonical names (the only values a ``ChunkPolicy.tokenizer`` may hold, because the name is
part of ``policy_hash``): ``bytes-3``; ``chars`` (one token per code point, the budget unit
of character-sized chunkers such as ``md-header-chars-v1``); ``hf:all-MiniLM-L6-v2`` or
``hf:<path to tokenizer.json>``; ``tiktoken:cl100k_base`` and ``tiktoken:o200k_base``.
The CLI may accept the short aliases in :data:`ALIASES` and must pass them through
:func:`canonical_tokenizer_name` before building a policy, so two spellings of one
tokenizer never give two policy hashes. Loading is lazy (heavy packages are imported only
when their tokenizer is asked for) and happens once per process and name.
"""

from __future__ import annotations

import functools

from kebab_chunk.errors import TokenizerError
from kebab_chunk.tokenizers.base import Tokenizer
from kebab_chunk.tokenizers.bytes_proxy import ByteProxyTokenizer

__all__ = ["ALIASES", "DEFAULT_TOKENIZER", "canonical_tokenizer_name", "get_tokenizer"]

DEFAULT_TOKENIZER = "bytes-3"

#: Short spellings accepted at the CLI layer only.
ALIASES: dict[str, str] = {
    "cl100k_base": "tiktoken:cl100k_base",
    "o200k_base": "tiktoken:o200k_base",
    "all-MiniLM-L6-v2": "hf:all-MiniLM-L6-v2",
    "sentence-transformers/all-MiniLM-L6-v2": "hf:all-MiniLM-L6-v2",
}

_EXAMPLES = (
    "'bytes-3', 'chars', 'hf:all-MiniLM-L6-v2', 'hf:/path/to/tokenizer.json', "
    "'tiktoken:cl100k_base'"
)


class CharTokenizer:
    """One token per code point: lets a policy express a character budget."""

    name = "chars"
    max_tokens: int | None = None

    def count_tokens(self, text: str) -> int:
        return len(text)

    def adds_up(self, left: str, right: str) -> bool:
        """Lengths always add up."""
        return True


def canonical_tokenizer_name(name: str) -> str:
    """Map a CLI spelling (``cl100k_base``) to the canonical policy value; others unchanged."""
    stripped = name.strip()
    return ALIASES.get(stripped, stripped)


@functools.cache
def get_tokenizer(name: str) -> Tokenizer:
    """The tokenizer for a canonical name; unknown or unloadable names get one sentence."""
    if name == DEFAULT_TOKENIZER:
        return ByteProxyTokenizer()
    if name == "chars":
        return CharTokenizer()
    if name.startswith("hf:") and len(name) > 3:
        from kebab_chunk.tokenizers.hf import load_hf_tokenizer

        return load_hf_tokenizer(name)
    if name.startswith("tiktoken:"):
        from kebab_chunk.tokenizers.tiktoken_ import load_tiktoken_tokenizer

        return load_tiktoken_tokenizer(name)
    hint = f" (did you mean {ALIASES[name]!r}?)" if name in ALIASES else ""
    raise TokenizerError(f"unknown tokenizer {name!r}{hint}; use one of {_EXAMPLES}.")
