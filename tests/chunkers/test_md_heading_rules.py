"""The md-heading labels as data (issue 32): every label a row of one engine, every rule a
real behaviour difference, every golden accounted for.

md-heading-v2 and v3 are :class:`kebab_chunk.chunkers._md_heading.MdHeadingChunker` with
one :class:`~kebab_chunk.chunkers.rules.MdHeadingRules` value each; md-heading-v1 keeps
its own engine (docs/internals/decisions.md, "Issue 32: the md-heading labels are rows of one
engine"). The inputs of every golden of the family are listed here, so a golden no input
makes (an orphan) fails, and so does a rule whose flip leaves every golden of the engine's
labels as it is (a field that is not a behaviour).

A golden that holds ``embed_text`` (md-heading-v3's: the field its rule changes) is
compared with the records :func:`~kebab_chunk.chunkers.embedding.with_embedding` makes, the
others with the chunker's own output, as each label's golden test writes them.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import fields, replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from kebab_chunk.chunkers._md_heading import MdHeadingChunker
from kebab_chunk.chunkers.embedding import with_embedding
from kebab_chunk.chunkers.registry import get_chunker, label, registered_labels
from kebab_chunk.chunkers.rules import MdHeadingRules
from kebab_chunk.model import CanonicalDocument, ChunkPolicy
from kebab_chunk.parsers.registry import get_parser_by_version
from tests.chunkers.test_md_heading_v2 import (
    FIXTURES,
    GOLDEN_POLICIES,
    _markdown_fixtures,
    long_heading_doc,
)
from tests.chunkers.test_page_rules import _goldens, _stored
from tests.golden import GOLDEN_DIR, rendered_golden

FAMILY = "md-heading-"
FIELDS = [f.name for f in fields(MdHeadingRules)]


@cache
def _parsed(path: Path) -> CanonicalDocument:
    return get_parser_by_version("md-mistune-v1").parse(
        path.read_bytes(), path.relative_to(FIXTURES).as_posix()
    )


def _golden_name(path: Path, policy_name: str) -> str:
    relative = path.relative_to(FIXTURES).with_suffix("").as_posix()
    return f"{relative.replace('/', '__')}.{policy_name}"


def _inputs() -> dict[str, tuple[Callable[[], CanonicalDocument], ChunkPolicy]]:
    """Every golden name of the engine's labels, with the document and policy it pins."""
    inputs: dict[str, tuple[Callable[[], CanonicalDocument], ChunkPolicy]] = {
        _golden_name(path, name): (lambda path=path: _parsed(path), policy)
        for path in _markdown_fixtures()
        for name, policy in GOLDEN_POLICIES.items()
    }
    inputs["long-heading.t120-o24"] = (cache(long_heading_doc), GOLDEN_POLICIES["t120-o24"])
    return inputs


INPUTS = _inputs()


#: The rules of every registered label the engine makes, by label.
ROWS = {
    name: chunker.rules
    for name in registered_labels()
    if isinstance(chunker := get_chunker(name), MdHeadingChunker)
}


def _output(label_name: str, rules: MdHeadingRules, name: str, embedded: bool) -> str:
    """The golden ``name`` as the engine with label ``label_name``'s row but ``rules`` writes
    it (``embedded``: as records with ``embed_text``, which the chunker leaves None)."""
    make_doc, policy = INPUTS[name]
    chunker = MdHeadingChunker(replace(label(label_name), rules=rules))
    chunks = chunker.chunk(make_doc(), policy)
    if embedded:
        chunks = with_embedding(chunks, chunker, policy)
    return rendered_golden([c.model_dump(mode="json") for c in chunks])


def _matches(label_name: str, rules: MdHeadingRules, name: str) -> bool:
    stored = _stored(label_name, name)
    return _output(label_name, rules, name, '"embed_text":' in stored) == stored


def _flips(value: object, name: str) -> list[Any]:
    """Every other value of a rule (a bool's negation, a Literal's other choices); a field
    of another type needs its flips written here."""
    hint = typing.get_type_hints(MdHeadingRules)[name]
    if hint is bool:
        return [not value]
    if typing.get_origin(hint) is typing.Literal:
        return [choice for choice in typing.get_args(hint) if choice != value]
    raise AssertionError(f"MdHeadingRules.{name}: no flips known for {hint!r}; add them")


def test_the_engine_makes_every_md_heading_label_but_v1() -> None:
    family = [name for name in registered_labels() if name.startswith(FAMILY)]
    assert {"md-heading-v2", "md-heading-v3"} <= set(ROWS)
    assert sorted(ROWS) == [name for name in family if name != "md-heading-v1"]
    assert len(set(ROWS.values())) == len(ROWS), "two labels share a row"
    for name, rules in ROWS.items():
        assert get_chunker(name).label == name and rules is label(name).rules


def test_every_label_of_the_family_has_goldens_and_no_golden_folder_is_orphaned() -> None:
    family = {row for row in registered_labels() if row.startswith(FAMILY)}
    folders = {path.name for path in GOLDEN_DIR.glob(f"{FAMILY}*") if path.is_dir()}
    assert folders == family
    assert all(_goldens(row) for row in family)
    expected = {_golden_name(p, name) for p in _markdown_fixtures() for name in GOLDEN_POLICIES}
    for row in family:  # md-heading-v1 included: every fixture at both golden policies
        missing = expected - set(_goldens(row))
        assert not missing, f"{row} has no golden for {sorted(missing)}"


@pytest.mark.parametrize("label", sorted(ROWS))
def test_every_golden_of_an_engine_label_is_its_row_on_a_known_input(label: str) -> None:
    orphans = [name for name in _goldens(label) if name not in INPUTS]
    assert not orphans, f"goldens of {label} that no listed input makes: {orphans}"
    for name in _goldens(label):
        assert _matches(label, ROWS[label], name), (label, name)


def test_no_golden_of_md_heading_v1_is_orphaned() -> None:
    orphans = [name for name in _goldens("md-heading-v1") if name not in INPUTS]
    assert not orphans, f"goldens of md-heading-v1 that no listed input makes: {orphans}"


@pytest.mark.parametrize("field", FIELDS)
def test_flipping_each_rule_changes_a_golden_of_the_family(field: str) -> None:
    changed = [
        (label, name, value)
        for label, rules in ROWS.items()
        for value in _flips(getattr(rules, field), field)
        for name in _goldens(label)
        if not _matches(label, replace(rules, **{field: value}), name)
    ]
    assert changed, f"MdHeadingRules.{field} changes no golden of {sorted(ROWS)}: not a behaviour"
