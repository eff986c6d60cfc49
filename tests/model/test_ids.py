"""Known-answer tests for the id recipes of docs/internals/contract.md, "Identities".

Some expected digests are computed here independently of the package (blake3 over JSON
canonicalised by hand for ASCII inputs, where RFC 8785 equals sorted compact JSON); others
are literal hex pinned when the recipe was written, so any recipe change fails loudly.
"""

from __future__ import annotations

import json
from typing import Any

import blake3
import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.model import ChunkPolicy, ids


def _independent_h(value: Any) -> str:
    canonical = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return blake3.blake3(canonical.encode("utf-8")).hexdigest()


def test_doc_id_matches_recipe_computed_independently() -> None:
    for uri in ["guide.md", "docs/a b/c.pdf", "x"]:
        assert ids.doc_id(uri) == _independent_h(["doc", uri])[:32]


def test_block_id_matches_recipe_and_counts_occurrences() -> None:
    d = ids.doc_id("guide.md")
    first = ids.block_id(d, "paragraph", "Hello.", 0)
    second = ids.block_id(d, "paragraph", "Hello.", 1)
    assert first == _independent_h(["block", d, "paragraph", "Hello.", 0])[:32]
    assert second == _independent_h(["block", d, "paragraph", "Hello.", 1])[:32]
    assert first != second
    assert ids.block_id(d, "heading", "Hello.", 0) != first


def test_policy_hash_matches_recipe_over_the_policy_json() -> None:
    policy = ChunkPolicy(target_tokens=256, overlap_tokens=32)
    expected = _independent_h(policy.model_dump(mode="json"))[:16]
    assert policy.policy_hash == expected
    assert len(policy.policy_hash) == 16


def test_chunk_id_matches_recipe_with_and_without_slice_guard() -> None:
    d = ids.doc_id("guide.md")
    blocks = ["a" * 32, "b" * 32]
    plain = ids.chunk_id(d, "md-heading-v1", blocks, "0123456789abcdef")
    assert plain == _independent_h(["chunk", d, "md-heading-v1", blocks, "0123456789abcdef"])[:32]
    sliced = ids.chunk_id(d, "md-heading-v1", blocks, ids.slice_id_policy("0123456789abcdef", 40))
    assert ids.slice_id_policy("0123456789abcdef", 40) == "0123456789abcdef#c40"
    assert (
        sliced == _independent_h(["chunk", d, "md-heading-v1", blocks, "0123456789abcdef#c40"])[:32]
    )
    assert sliced != plain


def test_block_order_is_significant_in_chunk_id() -> None:
    d = ids.doc_id("guide.md")
    assert ids.chunk_id(d, "v", ["a", "b"], "p") != ids.chunk_id(d, "v", ["b", "a"], "p")


def test_rfc8785_canonical_form_is_used_for_non_ascii_and_key_order() -> None:
    # RFC 8785 sorts keys by UTF-16 code units and writes non-ASCII as raw UTF-8.
    assert ids.canon({"b": 1, "a": "é"}) == '{"a":"é","b":1}'.encode()


# Literal digests pinned when the recipes were written (2026-11-21). If one of these
# fails, the id recipe changed: every stored chunk id would change with it.
PINNED = {
    "doc_id('guide.md')": (lambda: ids.doc_id("guide.md"), "60e111a8baf360c491b97765f8ac1cf2"),
    "block_id": (
        lambda: ids.block_id(ids.doc_id("guide.md"), "heading", "# Intro", 0),
        "024047220e8ea033ef3051b6313de54c",
    ),
    "default policy_hash": (lambda: ChunkPolicy().policy_hash, "4c2e35ee52c5fcac"),
    "chunk_id": (
        lambda: ids.chunk_id(
            ids.doc_id("guide.md"),
            "md-heading-v1",
            [ids.block_id(ids.doc_id("guide.md"), "heading", "# Intro", 0)],
            ChunkPolicy().policy_hash,
        ),
        "77cf849dd25811ad0f86e06377e019cc",
    ),
    "content_hash(b'')": (
        lambda: ids.content_hash(b""),
        "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262",
    ),
}


def test_pinned_digests() -> None:
    for name, (compute, expected) in PINNED.items():
        assert compute() == expected, name


_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", categories=None),
    max_size=40,
) | st.sampled_from(["\u2028", "\u2029", "\x7f", "\x1f", '"\\', "\ufffd", "😀", "\ud7ff"])
_ITEM = _TEXT | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1) | st.lists(_TEXT)


@given(st.lists(_ITEM, max_size=6))
def test_fast_canonical_path_equals_rfc8785(value: list[Any]) -> None:
    assert ids._flat_str_int_list(value)
    assert ids.canon(value) == rfc8785.dumps(value)


def test_other_shapes_use_rfc8785() -> None:
    assert not ids._flat_str_int_list([2**60])  # rfc8785 refuses it; so must we
    for value in ({"b": 1.5, "a": [1, "x"]}, [1.0, "x"], [None, True]):
        assert not ids._flat_str_int_list(value)
        assert ids.canon(value) == rfc8785.dumps(value)


#: Any text, lone surrogates included (they cannot be UTF-8: the general path must decide).
_ANY_TEXT = st.text(max_size=30) | st.sampled_from(["\ud800", "a\udfffb", '"\\\n\x00'])


def _reference_id(value: list[Any]) -> str:
    """The recipe of docs/internals/contract.md, "Identities": blake3 of RFC 8785 JSON (an error if
    it has none)."""
    try:
        return blake3.blake3(rfc8785.dumps(value)).hexdigest()[:32]
    except Exception as exc:  # rfc8785 refuses some inputs; the fast path must refuse too
        return type(exc).__name__


def _id_or_error(compute: Any) -> str:
    try:
        return str(compute())
    except Exception as exc:
        return type(exc).__name__


@given(_ANY_TEXT, _ANY_TEXT, _ANY_TEXT, st.integers(min_value=0, max_value=2**54))
def test_block_id_fast_recipe_equals_rfc8785(doc: str, kind: str, text: str, n: int) -> None:
    expected = _reference_id(["block", doc, kind, text, n])
    assert _id_or_error(lambda: ids.block_id(doc, kind, text, n)) == expected


@given(_ANY_TEXT, _ANY_TEXT, st.lists(_ANY_TEXT, max_size=4), _ANY_TEXT)
def test_chunk_id_fast_recipe_equals_rfc8785(
    doc: str, version: str, block_ids: list[str], id_policy: str
) -> None:
    expected = _reference_id(["chunk", doc, version, block_ids, id_policy])
    got = _id_or_error(lambda: ids.chunk_id(doc, version, tuple(block_ids), id_policy))
    assert got == expected


def test_ids_of_other_argument_types_take_the_general_path() -> None:
    # an int where a str belongs is still hashed by the recipe (canon), not rejected
    assert ids.block_id("d", "k", "t", True) == _reference_id(["block", "d", "k", "t", True])
    assert ids.chunk_id("d", "v", [1], "p") == _reference_id(["chunk", "d", "v", [1], "p"])  # type: ignore[list-item]
