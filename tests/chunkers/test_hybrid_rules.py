"""The hybrid labels as data (issue 32): every label a row of one engine, every rule a real
behaviour difference, every golden accounted for.

hybrid-v1 to v4 are :class:`kebab_chunk.chunkers._hybrid.HybridChunker` with one
:class:`~kebab_chunk.chunkers.rules.HybridRules` value each, in their registry rows. The
inputs of every golden of the family are listed here (the fixtures and policies each
label's golden test runs), so a golden no input makes (an orphan) fails, and so does a
rule whose flip leaves every golden of the family as it is (a field that is not a
behaviour). What holds for every row of the table is ``tests/chunkers/test_label_table.py``.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

import pytest

from kebab_chunk.chunkers._hybrid import HybridChunker
from kebab_chunk.chunkers.registry import get_chunker, label, registered_labels
from kebab_chunk.chunkers.rules import HybridRules
from kebab_chunk.model import CanonicalDocument, ChunkPolicy
from tests.chunkers import test_hybrid_v2, test_hybrid_v3, test_hybrid_v4, test_token_goldens
from tests.golden import GOLDEN_DIR, parse_for_golden, rendered_golden

FAMILY_PREFIX = "hybrid-"
FAMILY = sorted(name for name in registered_labels() if name.startswith(FAMILY_PREFIX))
FIELDS = [f.name for f in dataclasses.fields(HybridRules)]


@dataclasses.dataclass(frozen=True)
class Goldens:
    """What a label's golden test writes: one file per fixture, holding the records (and,
    with ``embed``, each record's ``embed_text``) under each named policy."""

    fixtures: tuple[str, ...]
    policies: dict[str, ChunkPolicy]
    embed: bool


#: Each label's golden test, as data (a new label adds its row here with its golden test).
GOLDENS = {
    "hybrid-v1": Goldens(
        tuple(test_token_goldens._fixtures()), test_token_goldens.HYBRID_POLICIES, False
    ),
    "hybrid-v2": Goldens(
        tuple(test_hybrid_v2.GOLDEN_FIXTURES), test_hybrid_v2.GOLDEN_POLICIES, True
    ),
    "hybrid-v3": Goldens(
        (*test_hybrid_v2.GOLDEN_FIXTURES, test_hybrid_v3.CHANGELOG),
        test_hybrid_v2.GOLDEN_POLICIES,
        True,
    ),
    "hybrid-v4": Goldens(
        (*test_hybrid_v2.GOLDEN_FIXTURES, test_hybrid_v4.CHANGELOG),
        test_hybrid_v2.GOLDEN_POLICIES,
        True,
    ),
}


@cache
def _doc(uri: str) -> CanonicalDocument:
    return parse_for_golden((test_hybrid_v2.FIXTURES / uri).read_bytes(), uri)


def _name(uri: str) -> str:
    return uri.replace("/", "__")


def _output(chunker: HybridChunker, name: str, uri: str) -> str:
    """What label ``name``'s golden test would write for ``uri`` with ``chunker``."""
    goldens = GOLDENS[name]
    data: dict[str, list[dict[str, Any]]] = {}
    for name, policy in goldens.policies.items():
        chunks = chunker.chunk(_doc(uri), policy)
        dumps = [c.model_dump(mode="json") for c in chunks]
        if goldens.embed:
            dumps = [
                {**d, "embed_text": chunker.embed_text(c)}
                for d, c in zip(dumps, chunks, strict=True)
            ]
        data[name] = dumps
    return rendered_golden(data)


def _stored(name: str, uri: str) -> str:
    return (GOLDEN_DIR / name / f"{_name(uri)}.json").read_text(encoding="utf-8")


def _flipped(value: object) -> object:
    """Another value of a rule's type (a new field's type needs a line here)."""
    if isinstance(value, bool):
        return not value
    raise AssertionError(f"no flip for a rule of type {type(value).__name__}; add one")


def _with_rules(chunker: HybridChunker, rules: HybridRules) -> HybridChunker:
    return HybridChunker(dataclasses.replace(label(chunker.label), rules=rules))


def test_the_engine_makes_every_hybrid_label() -> None:
    assert {"hybrid-v1", "hybrid-v2", "hybrid-v3", "hybrid-v4"} <= set(FAMILY)
    assert sorted(GOLDENS) == FAMILY, "a hybrid label without its golden test listed here"
    rows = set()
    for name in FAMILY:
        chunker = get_chunker(name)
        assert isinstance(chunker, HybridChunker) and chunker.label == name
        assert isinstance(label(name).rules, HybridRules) and chunker.rules is label(name).rules
        rows.add(chunker.rules)
    assert len(rows) == len(FAMILY), "two labels share a row"


def test_every_label_has_goldens_and_no_golden_is_orphaned() -> None:
    folders = {path.name for path in GOLDEN_DIR.glob(f"{FAMILY_PREFIX}*") if path.is_dir()}
    assert folders == set(FAMILY)
    for name in FAMILY:
        expected = {f"{_name(uri)}.json" for uri in GOLDENS[name].fixtures}
        stored = {path.name for path in (GOLDEN_DIR / name).iterdir()}
        assert stored == expected, (
            f"{name}: missing {sorted(expected - stored)}; orphaned {sorted(stored - expected)}"
        )


@pytest.mark.parametrize("field", FIELDS)
def test_flipping_each_rule_changes_a_golden_of_the_family(field: str) -> None:
    """The first golden of the family (label by label, fixture by fixture) that a label's
    chunker with this one field flipped does not reproduce, and its own row does."""
    for name in FAMILY:
        chunker = get_chunker(name)
        assert isinstance(chunker, HybridChunker)
        rules = chunker.rules
        flipped = _with_rules(
            chunker, dataclasses.replace(rules, **{field: _flipped(getattr(rules, field))})
        )
        for uri in GOLDENS[name].fixtures:
            if _output(flipped, name, uri) != _stored(name, uri):
                assert _output(chunker, name, uri) == _stored(name, uri), (name, uri)
                return
    pytest.fail(f"HybridRules.{field} changes no golden of {FAMILY}: not a behaviour")
