"""Content-addressed identity recipes (docs/internals/contract.md, "Identities").

``canon(x)`` is RFC 8785 canonical JSON and ``h(x)`` its blake3 hex digest, so an id
depends only on the values in the recipe, never on dict order, float formatting, the
machine, or ``PYTHONHASHSEED``.
"""

from __future__ import annotations

from collections.abc import Sequence
from json.encoder import encode_basestring as _json_str  # C-accelerated
from typing import Any

import rfc8785
from blake3 import blake3 as _blake3

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


def _flat_json(value: list[Any]) -> str:
    """Compact JSON of a list that passed :func:`_flat_str_int_list`.

    Strings go through the C string escaper that ``json.dumps(ensure_ascii=False)`` uses
    itself, integers through ``int.__repr__`` (as ``json`` does), so the result is the same
    text as ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` without building
    an encoder object per call (that setup cost more than the escaping of a typical block).
    """
    parts = []
    for item in value:
        if isinstance(item, str):
            parts.append(_json_str(item))
        elif isinstance(item, list):
            parts.append("[" + ",".join(map(_json_str, item)) + "]")
        else:
            parts.append(int.__repr__(item))
    return "[" + ",".join(parts) + "]"


def _utf8(json_text: str) -> bytes | None:
    """UTF-8 bytes of ``json_text``, or None when it holds a lone surrogate (see ``canon``)."""
    try:
        return json_text.encode("utf-8")
    except UnicodeEncodeError:
        return None


def canon(value: Any) -> bytes:
    """RFC 8785 canonical JSON bytes of a JSON-compatible value.

    The id recipes hash lists of strings and small integers millions of times per corpus;
    for exactly that shape, compact ``json.dumps(ensure_ascii=False)`` produces the same
    bytes as RFC 8785 (same escapes, lowercase ``\\u00xx`` for other control characters,
    raw UTF-8 otherwise) at a fraction of the cost of the pure-Python ``rfc8785`` package.
    Every other shape (objects, floats, big ints) and text with lone surrogates go through
    ``rfc8785``. A property test checks the two agree.
    """
    if _flat_str_int_list(value):
        data = _utf8(_flat_json(value))
        if data is not None:
            return data
    return rfc8785.dumps(value)


def h(value: Any) -> str:
    """blake3 hex digest (64 chars) of the canonical JSON of ``value``."""
    return _blake3(canon(value)).hexdigest()


def content_hash(raw: bytes) -> str:
    """blake3 hex digest of raw document bytes."""
    return _blake3(raw).hexdigest()


def doc_id(source_uri: str) -> str:
    """``h(["doc", source_uri])[:32]``: stable across machines and corpus roots."""
    return h(["doc", source_uri])[:32]


def block_id(doc: str, kind: str, text: str, occurrence: int) -> str:
    """``h(["block", doc_id, kind, text, occurrence])[:32]``.

    ``occurrence`` counts earlier blocks of the same kind and text in the document, so
    editing one paragraph leaves every other block's id unchanged. The recipe's JSON is
    written directly, with the escaper :func:`canon` uses for the same shape, so the bytes
    are the same; arguments of other types take the general path.
    """
    if type(occurrence) is int and -_SAFE_INT < occurrence < _SAFE_INT:
        try:
            json_text = f"{_block_prefix(doc, kind)}{_json_str(text)},{occurrence}]"
        except TypeError:  # not a str: canon() decides
            pass
        else:
            data = _utf8(json_text)
            if data is not None:
                return _blake3(data).hexdigest()[:32]
    return h(["block", doc, kind, text, occurrence])[:32]


_PREFIXES: dict[tuple[str, str], str] = {}
_MAX_PREFIXES = 64


def _block_prefix(doc: str, kind: str) -> str:
    """``'["block",<doc>,<kind>,'``: the JSON every block id of one document and kind starts
    with, escaped once per (document, kind) instead of once per block (a few documents'
    worth are kept; the cache is emptied when full). Raises TypeError for non-strings."""
    key = (doc, kind)
    prefix = _PREFIXES.get(key)
    if prefix is None:
        if len(_PREFIXES) >= _MAX_PREFIXES:
            _PREFIXES.clear()
        prefix = _PREFIXES[key] = f'["block",{_json_str(doc)},{_json_str(kind)},'
    return prefix


def policy_hash_of(policy_json: dict[str, Any]) -> str:
    """``h(policy as JSON)[:16]``; identical for every chunker given the same policy."""
    return h(policy_json)[:16]


def slice_id_policy(policy_hash: str, char_start: int) -> str:
    """The ``id_policy`` of a chunk that is one slice of its block(s)."""
    return f"{policy_hash}#c{char_start}"


def chunk_id(doc: str, chunker_version: str, block_ids: Sequence[str], id_policy: str) -> str:
    """``h(["chunk", doc_id, chunker_version, block_ids, id_policy])[:32]``.

    Written directly like :func:`block_id`; arguments of other types take the general path.
    """
    try:
        json_text = (
            f'["chunk",{_json_str(doc)},{_json_str(chunker_version)},'
            f"[{','.join(map(_json_str, block_ids))}],{_json_str(id_policy)}]"
        )
    except TypeError:  # not a str: canon() decides
        pass
    else:
        data = _utf8(json_text)
        if data is not None:
            return _blake3(data).hexdigest()[:32]
    return h(["chunk", doc, chunker_version, list(block_ids), id_policy])[:32]
