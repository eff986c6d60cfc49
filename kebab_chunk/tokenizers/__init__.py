"""Token counters. ``bytes-3`` is the dependency-free default proxy."""

from kebab_chunk.tokenizers.bytes_proxy import BYTES_PER_TOKEN, ByteProxyTokenizer, estimate_tokens

__all__ = ["BYTES_PER_TOKEN", "ByteProxyTokenizer", "estimate_tokens"]
