"""Content-addressed identity recipes (DESIGN §3).

``canon(x)`` is RFC 8785 canonical JSON and ``h(x)`` its blake3 hex digest, so an id
depends only on the values in the recipe, never on dict order, float formatting, the
machine, or ``PYTHONHASHSEED``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import blake3
import rfc8785

__all__ = [
    "block_id",
    "canon",
    "chunk_id",
    "content_hash",
    "doc_id",
    "h",
    "policy_hash_of",
    "slice_id_policy",
]


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # built once, reused
_SAFE_INT = 2**53  # RFC 8785 serialises integers exactly only within IEEE-754 precision


def _flat_str_int_list(value: Any) -> bool:
    """True for the shape of every id recipe: a list of str, safe ints and str lists."""
    if not isinstance(value, list):
        return False
    for item in value:
        if isinstance(item, str):
            continue
        if type(item) is int and -_SAFE_INT < item < _SAFE_INT:
            continue
        if isinstance(item, list) and all(isinstance(x, str) for x in item):
            continue
        return False
    return True


def canon(value: Any) -> bytes:
    """RFC 8785 canonical JSON bytes of a JSON-compatible value.

    The id recipes hash lists of strings and small integers millions of times per corpus;
    for exactly that shape, compact ``json.dumps(ensure_ascii=False)`` produces the same
    bytes as RFC 8785 (same escapes, lowercase ``\\u00xx`` for other control characters,
    raw UTF-8 otherwise) at a fraction of the cost of the pure-Python ``rfc8785`` package.
    Every other shape (objects, floats, big ints) goes through ``rfc8785``. A property test
    checks the two agree.
    """
    if _flat_str_int_list(value):
        try:
            return _ENCODER.encode(value).encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: let rfc8785 decide
            pass
    return rfc8785.dumps(value)


def h(value: Any) -> str:
    """blake3 hex digest (64 chars) of the canonical JSON of ``value``."""
    return blake3.blake3(canon(value)).hexdigest()


def content_hash(raw: bytes) -> str:
    """blake3 hex digest of raw document bytes."""
    return blake3.blake3(raw).hexdigest()


def doc_id(source_uri: str) -> str:
    """``h(["doc", source_uri])[:32]``: stable across machines and corpus roots."""
    return h(["doc", source_uri])[:32]


def block_id(doc: str, kind: str, text: str, occurrence: int) -> str:
    """``h(["block", doc_id, kind, text, occurrence])[:32]``.

    ``occurrence`` counts earlier blocks of the same kind and text in the document, so
    editing one paragraph leaves every other block's id unchanged.
    """
    return h(["block", doc, kind, text, occurrence])[:32]


def policy_hash_of(policy_json: dict[str, Any]) -> str:
    """``h(policy as JSON)[:16]``; identical for every chunker given the same policy."""
    return h(policy_json)[:16]


def slice_id_policy(policy_hash: str, char_start: int) -> str:
    """The ``id_policy`` of a chunk that is one slice of its block(s)."""
    return f"{policy_hash}#c{char_start}"


def chunk_id(doc: str, chunker_version: str, block_ids: Sequence[str], id_policy: str) -> str:
    """``h(["chunk", doc_id, chunker_version, block_ids, id_policy])[:32]``."""
    return h(["chunk", doc, chunker_version, list(block_ids), id_policy])[:32]
