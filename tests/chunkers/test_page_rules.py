"""The pdf-page labels as data (issue 32): every label a row of one engine, every rule a
real behaviour difference, every golden accounted for.

pdf-page-v2 and v3 are :class:`kebab_chunk.chunkers._pages.PageChunker` with one
:class:`~kebab_chunk.chunkers.rules.PageRules` value each; pdf-page-v1 keeps its own engine
(docs/internals/decisions.md, "Issue 32: pdf-page labels as data"). The inputs of every
golden of the engine's labels are listed here, so a golden no input makes (an orphan)
fails, and so does a rule whose flip leaves every golden as it is (a field that is not a
behaviour).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, replace
from functools import cache

import pytest

from kebab_chunk.chunkers._pages import PageChunker
from kebab_chunk.chunkers.registry import get_chunker, label, registered_labels
from kebab_chunk.chunkers.rules import PageRules
from kebab_chunk.model import CanonicalDocument, ChunkPolicy
from kebab_chunk.parsers.registry import get_parser_by_version
from tests.chunkers.test_pdf_page_v2 import (
    FIXTURES,
    GOLDEN_FIXTURES,
    GOLDEN_POLICIES,
    POLICIES,
    SMALL,
    heading_page,
)
from tests.chunkers.test_pdf_page_v3 import POLICY_SET, numbered_pages, page_doc
from tests.golden import GOLDEN_DIR, rendered_golden

FAMILY = "pdf-page-"


@cache
def _pdf(name: str) -> CanonicalDocument:
    return get_parser_by_version("pdf-text-v1").parse(
        (FIXTURES / "pdf" / f"{name}.pdf").read_bytes(), f"pdf/{name}.pdf"
    )


def _inputs() -> dict[str, tuple[Callable[[], CanonicalDocument], ChunkPolicy]]:
    """Every golden name of the engine's labels, with the document and policy it pins."""
    inputs: dict[str, tuple[Callable[[], CanonicalDocument], ChunkPolicy]] = {
        f"{name}.{policy}": (lambda name=name: _pdf(name), POLICIES[policy])
        for name in GOLDEN_FIXTURES
        for policy in GOLDEN_POLICIES
    }
    inputs["page-with-heading.t128-o16"] = (heading_page, SMALL)
    for policy in ("t48-o0", "t64-o8"):
        inputs[f"numbered.{policy}"] = (lambda: page_doc(numbered_pages()), POLICY_SET[policy])
    return inputs


INPUTS = _inputs()


def _rows() -> dict[str, PageRules]:
    """The rules of every registered label the engine makes, by label."""
    rows = {}
    for name in registered_labels():
        chunker = get_chunker(name)
        if isinstance(chunker, PageChunker):
            assert chunker.label == name and chunker.rules is label(name).rules
            rows[name] = chunker.rules
    return rows


ROWS = _rows()


def _goldens(label_name: str) -> list[str]:
    return sorted(path.stem for path in (GOLDEN_DIR / label_name).glob("*.json"))


def _output(label_name: str, rules: PageRules, name: str) -> str:
    make_doc, policy = INPUTS[name]
    chunks = PageChunker(replace(label(label_name), rules=rules)).chunk(make_doc(), policy)
    return rendered_golden([c.model_dump(mode="json") for c in chunks])


def _stored(label_name: str, name: str) -> str:
    return (GOLDEN_DIR / label_name / f"{name}.json").read_text(encoding="utf-8")


def _flipped(value: object) -> object:
    """Another value of a rule's type (a new field's type needs a line here)."""
    if isinstance(value, bool):
        return not value
    raise AssertionError(f"no flip for a rule of type {type(value).__name__}; add one")


def test_the_engine_makes_every_pdf_page_label_but_v1() -> None:
    family = [name for name in registered_labels() if name.startswith(FAMILY)]
    assert sorted(ROWS) == [name for name in family if name != "pdf-page-v1"]
    assert len(set(ROWS.values())) == len(ROWS)


def test_every_label_of_the_family_has_goldens_and_no_golden_folder_is_orphaned() -> None:
    family = {name for name in registered_labels() if name.startswith(FAMILY)}
    folders = {path.name for path in GOLDEN_DIR.glob(f"{FAMILY}*") if path.is_dir()}
    assert folders == family
    assert all(_goldens(name) for name in family)


@pytest.mark.parametrize("label_name", sorted(ROWS))
def test_every_golden_of_an_engine_label_is_its_row_on_a_known_input(label_name: str) -> None:
    orphans = [name for name in _goldens(label_name) if name not in INPUTS]
    assert not orphans, f"goldens of {label_name} that no listed input makes: {orphans}"
    for name in _goldens(label_name):
        assert _output(label_name, ROWS[label_name], name) == _stored(label_name, name), name


@pytest.mark.parametrize("field", [f.name for f in fields(PageRules)])
def test_flipping_each_rule_changes_a_golden_of_the_family(field: str) -> None:
    changed = [
        (label_name, name)
        for label_name, rules in ROWS.items()
        for name in _goldens(label_name)
        if _output(label_name, replace(rules, **{field: _flipped(getattr(rules, field))}), name)
        != _stored(label_name, name)
    ]
    assert changed, f"PageRules.{field} changes no golden of {sorted(ROWS)}: not a behaviour"
