"""The token budget of the chunkers that count with the policy's tokenizer.

Shared by the md-heading, pdf-page and hybrid engines (and read by their tests), so that no
label's module imports another label's for it.
"""

from __future__ import annotations

from kebab_chunk.model import ChunkPolicy
from kebab_chunk.tokenizers.base import Tokenizer

__all__ = ["budget_of", "resolve_max_tokens"]


def budget_of(policy: ChunkPolicy, tokenizer: Tokenizer) -> int:
    """The most tokens a chunk may hold: ``target_tokens`` capped by ``max_tokens`` and by
    the tokenizer's input limit (whichever are set)."""
    limits = [policy.target_tokens, policy.max_tokens, tokenizer.max_tokens]
    return max(1, min(limit for limit in limits if limit is not None))


def resolve_max_tokens(policy: ChunkPolicy, tokenizer: Tokenizer) -> int:
    """The hybrid labels' budget: the user's ``max_tokens``, else the model's limit, else
    ``target_tokens``."""
    if policy.max_tokens is not None:
        return policy.max_tokens
    if tokenizer.max_tokens is not None:
        return tokenizer.max_tokens
    return policy.target_tokens
