"""The md-header-chars labels are rows of one engine (issue 32, "labels as data").

Every ``md-header-chars-*`` label is a :class:`HeaderCharsRules` value run by the engine in
``kebab_chunk/chunkers/_header_chars.py``. Here: each label is such a row and has goldens
for exactly the fixtures and policies its golden test runs; each rules field is a real
behaviour difference (flipping it changes at least one golden of every label). What holds
for every row of the table is ``tests/chunkers/test_label_table.py``.
"""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path
from typing import Any

import pytest

from kebab_chunk.chunkers import get_chunker, registered_labels
from kebab_chunk.chunkers._header_chars import HeaderCharsChunker
from kebab_chunk.chunkers.registry import label
from kebab_chunk.chunkers.rules import HeaderCharsRules
from kebab_chunk.errors import ParseError
from tests.chunkers.test_md_header_chars_v1 import FIXTURES, GOLDEN_POLICIES, ROOT
from tests.golden import GOLDEN_DIR, assert_golden, parse_for_golden

FAMILY = sorted(name for name in registered_labels() if name.startswith("md-header-chars-"))
FIELDS = [f.name for f in dataclasses.fields(HeaderCharsRules)]


def _golden_name(path: Path, policy_name: str) -> str:
    uri = path.relative_to(ROOT / "fixtures").as_posix()
    return f"{uri.replace('/', '__').removesuffix('.md')}.{policy_name}"


def _flips(rules: HeaderCharsRules, name: str) -> list[Any]:
    """Every other value the field ``name`` can take (a bool's negation, a Literal's other
    choices); a field of another type needs its flips written here."""
    value = getattr(rules, name)
    hint = typing.get_type_hints(HeaderCharsRules)[name]
    if hint is bool:
        return [not value]
    if typing.get_origin(hint) is typing.Literal:
        return [choice for choice in typing.get_args(hint) if choice != value]
    raise AssertionError(f"HeaderCharsRules.{name}: no flips known for {hint!r}; add them")


def _output(chunker: HeaderCharsChunker, path: Path, policy_name: str) -> list[Any] | None:
    """The chunker's records on a golden fixture (None where the fixture does not parse)."""
    uri = path.relative_to(ROOT / "fixtures").as_posix()
    try:
        doc = parse_for_golden(path.read_bytes(), uri)
    except ParseError:
        return None
    return [r.model_dump(mode="json") for r in chunker.chunk(doc, GOLDEN_POLICIES[policy_name])]


def test_the_family_has_two_labels_at_least() -> None:
    assert {"md-header-chars-v1", "md-header-chars-v2"} <= set(FAMILY)
    assert FIELDS, "HeaderCharsRules names no difference"


@pytest.mark.parametrize("name", FAMILY)
def test_each_label_is_a_rules_row(name: str) -> None:
    chunker = get_chunker(name)
    assert isinstance(chunker, HeaderCharsChunker) and chunker.label == name
    assert isinstance(label(name).rules, HeaderCharsRules)
    assert chunker.rules is label(name).rules


def test_no_two_labels_share_a_row() -> None:
    chunkers = [get_chunker(name) for name in FAMILY]
    rows = {c.rules for c in chunkers if isinstance(c, HeaderCharsChunker)}
    assert len(rows) == len(FAMILY)


@pytest.mark.parametrize("label_name", FAMILY)
def test_every_label_has_goldens_and_none_is_orphaned(label_name: str) -> None:
    expected = {_golden_name(p, name) + ".json" for p in FIXTURES for name in GOLDEN_POLICIES}
    stored = {p.name for p in (GOLDEN_DIR / label_name).glob("*")}
    assert stored == expected, (
        f"missing: {sorted(expected - stored)}; orphaned: {sorted(stored - expected)}"
    )


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("label_name", FAMILY)
def test_flipping_a_rules_field_changes_a_golden(label_name: str, field: str) -> None:
    """For each other value of ``field``, the label's chunker with that one field changed
    gives other records than the label's golden on at least one fixture and policy."""
    chunker = get_chunker(label_name)
    assert isinstance(chunker, HeaderCharsChunker)
    for value in _flips(chunker.rules, field):
        rules = dataclasses.replace(chunker.rules, **{field: value})
        flipped = HeaderCharsChunker(dataclasses.replace(label(label_name), rules=rules))
        changed = None
        for path in FIXTURES:
            for policy_name in sorted(GOLDEN_POLICIES):
                base = _output(chunker, path, policy_name)
                if base != _output(flipped, path, policy_name):
                    changed = _golden_name(path, policy_name)
                    # What changed is the golden itself (never written with the flip).
                    assert_golden(label_name, changed, base)
                    break
            if changed:
                break
        assert changed, f"{label_name}: {field}={value!r} changes no golden; it names no difference"
