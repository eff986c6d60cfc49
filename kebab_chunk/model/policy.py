"""Chunking policy: the knobs every chunker reads, hashed into ``policy_hash``."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from pydantic import ValidationError, model_validator

from kebab_chunk.errors import PolicyError
from kebab_chunk.model._base import Frozen
from kebab_chunk.model.ids import policy_hash_of

__all__ = ["ChunkPolicy", "make_policy"]


class ChunkPolicy(Frozen):
    """Validated chunking settings.

    The field set is part of the id recipe: every field is hashed into ``policy_hash``, so
    adding, removing or renaming a field changes every chunk id and needs a new policy
    schema, never a silent edit. ``tokenizer`` names the token counter (``bytes-3`` is the
    byte proxy, ``ceil(utf8_bytes / 3)``); ``max_tokens`` is the hard cap of token-aware
    chunkers (``None``: the tokenizer's own limit, else ``target_tokens``).
    """

    target_tokens: int = 512
    overlap_tokens: int = 64
    max_tokens: int | None = None
    tokenizer: str = "bytes-3"
    merge_peers: bool = True
    merge_list_items: bool = True

    def __init__(self, **data: Any) -> None:
        # Our own error, one sentence, rather than pydantic's multi-line ValidationError.
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _policy_error(exc) from None

    @model_validator(mode="after")
    def _check(self) -> ChunkPolicy:
        if self.target_tokens <= 0:
            raise ValueError(f"target_tokens must be > 0, got {self.target_tokens}")
        if not 0 <= self.overlap_tokens < self.target_tokens:
            raise ValueError(
                f"overlap_tokens must be >= 0 and < target_tokens ({self.target_tokens}), "
                f"got {self.overlap_tokens}"
            )
        if self.max_tokens is not None and self.max_tokens <= 0:
            raise ValueError(f"max_tokens must be > 0 when given, got {self.max_tokens}")
        if not self.tokenizer:
            raise ValueError("tokenizer must name a tokenizer, e.g. 'bytes-3'")
        return self

    def as_json(self) -> dict[str, Any]:
        """The policy as a plain JSON object (the input of ``policy_hash``)."""
        return self.model_dump(mode="json")

    @cached_property
    def policy_hash(self) -> str:
        """``h(policy as JSON)[:16]``, computed once per (immutable) policy."""
        return policy_hash_of(self.as_json())


def make_policy(**fields: Any) -> ChunkPolicy:
    """Build a policy (the same as ``ChunkPolicy(**fields)``: a one-sentence
    ``PolicyError`` on a bad field)."""
    return ChunkPolicy(**fields)


def _policy_error(exc: ValidationError) -> PolicyError:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ()))
    msg = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
    prefix = f"invalid chunk policy field {where!r}: " if where else "invalid chunk policy: "
    return PolicyError(prefix + msg + ".")
