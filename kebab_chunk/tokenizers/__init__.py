"""Token counters. ``bytes-3`` is the dependency-free default proxy; the HuggingFace and
tiktoken tokenizers load offline from installed files (see :mod:`.registry`)."""

from kebab_chunk.tokenizers.base import Tokenizer
from kebab_chunk.tokenizers.bytes_proxy import BYTES_PER_TOKEN, ByteProxyTokenizer, estimate_tokens
from kebab_chunk.tokenizers.registry import (
    ALIASES,
    DEFAULT_TOKENIZER,
    canonical_tokenizer_name,
    get_tokenizer,
)

__all__ = [
    "ALIASES",
    "BYTES_PER_TOKEN",
    "DEFAULT_TOKENIZER",
    "ByteProxyTokenizer",
    "Tokenizer",
    "canonical_tokenizer_name",
    "estimate_tokens",
    "get_tokenizer",
]
