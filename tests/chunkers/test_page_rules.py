"""The pdf-page labels as data (issue 32): every label a row of one engine, every rule a
real behaviour difference, every golden accounted for, no label importing another.

pdf-page-v2 and v3 are :class:`kebab_chunk.chunkers._pages.PageChunker` with one
:class:`~kebab_chunk.chunkers._pages.PageRules` row each; pdf-page-v1 keeps its own engine
(docs/internals/decisions.md, "Issue 32: pdf-page labels as data"). The inputs of every
golden of the engine's labels are listed here, so a golden no input makes (an orphan)
fails, and so does a rule whose flip leaves every golden as it is (a field that is not a behaviour).

The import rule is checked here for the pdf-page and hybrid families (the hybrid engine's
own rules test is ``test_hybrid_rules.py``): a family joins ``MIGRATED`` when it is moved
to an engine module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, replace
from functools import cache
from pathlib import Path

import pytest

from kebab_chunk.chunkers._pages import PageChunker, PageRules
from kebab_chunk.chunkers.registry import _REGISTRY, get_chunker, registered_labels
from kebab_chunk.model import CanonicalDocument, ChunkPolicy
from kebab_chunk.parsers.pdf import PdfParser
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
from tests.imports import package_imports

CHUNKERS = Path(__file__).resolve().parents[2] / "kebab_chunk" / "chunkers"
FAMILY = "pdf-page-"
#: Label prefixes of the families whose modules import no other label's module.
MIGRATED = (FAMILY, "hybrid-")
#: Modules of those families that are no label: they may import no label module either.
FAMILY_SHARED = ("_pages", "_budget", "_hybrid")


@cache
def _pdf(name: str) -> CanonicalDocument:
    return PdfParser().parse((FIXTURES / "pdf" / f"{name}.pdf").read_bytes(), f"pdf/{name}.pdf")


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
    for label in registered_labels():
        chunker = get_chunker(label)
        if isinstance(chunker, PageChunker):
            assert chunker.version == chunker.rules.version == label
            rows[label] = chunker.rules
    return rows


ROWS = _rows()


def _goldens(label: str) -> list[str]:
    return sorted(path.stem for path in (GOLDEN_DIR / label).glob("*.json"))


def _output(rules: PageRules, name: str) -> str:
    make_doc, policy = INPUTS[name]
    chunks = PageChunker(rules).chunk(make_doc(), policy)
    return rendered_golden([c.model_dump(mode="json") for c in chunks])


def _stored(label: str, name: str) -> str:
    return (GOLDEN_DIR / label / f"{name}.json").read_text(encoding="utf-8")


def _flipped(value: object) -> object:
    """Another value of a rule's type (a new field's type needs a line here)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, str):
        return f"{value}-flipped"
    raise AssertionError(f"no flip for a rule of type {type(value).__name__}; add one")


def test_the_engine_makes_every_pdf_page_label_but_v1() -> None:
    family = [label for label in registered_labels() if label.startswith(FAMILY)]
    assert sorted(ROWS) == [label for label in family if label != "pdf-page-v1"]
    assert len(set(ROWS.values())) == len(ROWS)


def test_every_label_of_the_family_has_goldens_and_no_golden_folder_is_orphaned() -> None:
    family = {label for label in registered_labels() if label.startswith(FAMILY)}
    folders = {path.name for path in GOLDEN_DIR.glob(f"{FAMILY}*") if path.is_dir()}
    assert folders == family
    assert all(_goldens(label) for label in family)


@pytest.mark.parametrize("label", sorted(ROWS))
def test_every_golden_of_an_engine_label_is_its_row_on_a_known_input(label: str) -> None:
    orphans = [name for name in _goldens(label) if name not in INPUTS]
    assert not orphans, f"goldens of {label} that no listed input makes: {orphans}"
    for name in _goldens(label):
        assert _output(ROWS[label], name) == _stored(label, name), (label, name)


@pytest.mark.parametrize("field", [f.name for f in fields(PageRules)])
def test_flipping_each_rule_changes_a_golden_of_the_family(field: str) -> None:
    changed = [
        (label, name)
        for label, rules in ROWS.items()
        for name in _goldens(label)
        if _output(replace(rules, **{field: _flipped(getattr(rules, field))}), name)
        != _stored(label, name)
    ]
    assert changed, f"PageRules.{field} changes no golden of {sorted(ROWS)}: not a behaviour"


def _label_modules() -> dict[str, str]:
    """Module name (inside ``kebab_chunk.chunkers``) of every registered label, to label."""
    modules = {}
    for label, target in _REGISTRY.items():
        module = target.partition(":")[0]
        assert module.startswith("kebab_chunk.chunkers.")
        modules[module.removeprefix("kebab_chunk.chunkers.")] = label
    return modules


def label_imports(source: str, labels: set[str]) -> set[str]:
    """The label modules among ``labels`` (names inside ``kebab_chunk.chunkers``) that
    ``source`` imports (tests/imports.py)."""
    return package_imports(source, "kebab_chunk.chunkers", labels)


def test_the_import_check_sees_every_form_of_import() -> None:
    labels = {"pdf_page_v2", "pdf_page_v3"}
    for source in (
        "from kebab_chunk.chunkers.pdf_page_v2 import RULES",
        "from kebab_chunk.chunkers import pdf_page_v2",
        "import kebab_chunk.chunkers.pdf_page_v2",
        "def f():\n    from .pdf_page_v2 import RULES",
        "from . import pdf_page_v2",
    ):
        assert label_imports(source, labels) == {"pdf_page_v2"}, source
    assert not label_imports("from kebab_chunk.chunkers._pages import PageRules", labels)


def test_no_module_of_a_migrated_family_imports_another_labels_module() -> None:
    modules = _label_modules()
    checked = [m for m, label in modules.items() if label.startswith(MIGRATED)]
    assert {"pdf_page_v1", "pdf_page_v2", "pdf_page_v3"} <= set(checked)
    assert {"hybrid_v1", "hybrid_v2", "hybrid_v3", "hybrid_v4"} <= set(checked)
    violations = []
    for module in [*checked, *FAMILY_SHARED]:
        source = (CHUNKERS / f"{module}.py").read_text(encoding="utf-8")
        for imported in sorted(label_imports(source, set(modules) - {module})):
            violations.append(f"{module} imports {imported}")
    assert not violations, "a label's code imports another label's:\n" + "\n".join(violations)
