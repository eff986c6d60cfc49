"""The parser versions as data (issue 32): every version of a migrated family a row of one
engine, every rule a real behaviour difference, every golden accounted for, no version
module importing another.

pdf-text-v1/v2 are :class:`kebab_chunk.parsers._pdf.PdfTextParser`, docling-json-v1/v2
:class:`kebab_chunk.parsers._docling_json.DoclingJsonEngine` and html-v1/v2
:class:`kebab_chunk.parsers._html.HtmlEngine`, each with one rules row per version. The
input of every golden of those versions is listed here, so a golden no input makes (an
orphan) fails, and so does a rule whose flip leaves every pinned output of its family as it
is (a field that is not a behaviour). Pinned outputs are the goldens, plus, for the one
rule that changes only a refusal (``HtmlRules.refusal_names_assertion_error``), the refusal
sentences below (html-v1's is also pinned by the differential test of
``test_html_linear.py`` against the ``html.parser`` it was built on).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from kebab_chunk.errors import ParseError
from kebab_chunk.parsers._docling_json import DoclingJsonEngine, DoclingRules
from kebab_chunk.parsers._html import HtmlEngine, HtmlRules
from kebab_chunk.parsers._pdf import PdfRules, PdfTextParser
from kebab_chunk.parsers.registry import _VERSIONS, get_parser_by_version, parser_versions
from tests.golden import GOLDEN_DIR, rendered_golden
from tests.imports import package_imports
from tests.parsers.test_docling_json_v2 import paper

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
PARSERS = REPO / "kebab_chunk" / "parsers"

Input = tuple[Callable[[], bytes], str]  # (the bytes, the source uri)


def _file(path: Path) -> Callable[[], bytes]:
    return cache(path.read_bytes)


@dataclass(frozen=True)
class Family:
    """One migrated family: its engine, its rules type and the inputs of its goldens."""

    engine: type[PdfTextParser | DoclingJsonEngine | HtmlEngine]
    rules: type
    inputs: dict[str, Input]


def _named(folder: Path, uri: str, names: list[str]) -> dict[str, Input]:
    return {name: (_file(folder / name), f"{uri}/{name}") for name in names}


FAMILIES: dict[str, Family] = {
    "pdf-text-": Family(
        PdfTextParser,
        PdfRules,
        {
            "three-page-en": (
                _file(FIXTURES / "pdf" / "three-page-en.pdf"),
                "pdf/three-page-en.pdf",
            ),
            "outlined-report": (
                _file(FIXTURES / "pdf-text-v2" / "outlined-report.pdf"),
                "pdf/outlined-report.pdf",
            ),
        },
    ),
    "docling-json-": Family(
        DoclingJsonEngine,
        DoclingRules,
        {
            **_named(
                FIXTURES / "docling",
                "docling",
                ["report.docling.json", "dangling-refs.docling.json"],
            ),
            "paper.docling.json": (cache(lambda: paper().bytes()), "paper.docling.json"),
        },
    ),
    "html-": Family(
        HtmlEngine,
        HtmlRules,
        {
            **_named(
                FIXTURES / "html", "html", ["article.html", "cp1252-meta.html", "malformed.html"]
            ),
            **_named(
                FIXTURES / "html" / "nav",
                "html/nav",
                ["docbook.html", "site.html", "texinfo6.html", "texinfo7.html"],
            ),
        },
    ),
}

#: A malformed ``<![`` section, the one markup the HTML tokenizer refuses.
MALFORMED = b"<p>a</p><![x>"
#: Each HTML version's refusal of :data:`MALFORMED` (parsed as ``t.html``).
REFUSALS = {
    "html-v1": (
        "t.html could not be tokenized as HTML (AssertionError: unknown status keyword 'x' in "
        "marked section); check that the file is HTML or remove it from the corpus."
    ),
    "html-v2": (
        "t.html could not be tokenized as HTML (unknown status keyword 'x' in marked section); "
        "check that the file is HTML or remove it from the corpus."
    ),
}


def _rows(prefix: str) -> dict[str, Any]:
    """The rules of every registered version of the family, by version."""
    family = FAMILIES[prefix]
    rows = {}
    for version in parser_versions():
        if version.startswith(prefix):
            parser: Any = get_parser_by_version(version)
            assert isinstance(parser, family.engine), version
            assert isinstance(parser.rules, family.rules)
            assert parser.version == parser.rules.version == version
            rows[version] = parser.rules
    return rows


ROWS = {prefix: _rows(prefix) for prefix in FAMILIES}
CASES = [(prefix, version) for prefix, rows in ROWS.items() for version in sorted(rows)]
FIELDS = [(prefix, f.name) for prefix, family in FAMILIES.items() for f in fields(family.rules)]


def _goldens(version: str) -> list[str]:
    return sorted(path.stem for path in (GOLDEN_DIR / version).glob("*.json"))


def _output(prefix: str, rules: Any, name: str) -> str:
    read, uri = FAMILIES[prefix].inputs[name]
    doc = FAMILIES[prefix].engine(rules).parse(read(), uri)
    return rendered_golden(doc.model_dump(mode="json"))


def _stored(version: str, name: str) -> str:
    return (GOLDEN_DIR / version / f"{name}.json").read_text(encoding="utf-8")


def _refusal(prefix: str, rules: Any) -> str | None:
    """The refusal of :data:`MALFORMED` (HTML only)."""
    if prefix != "html-":
        return None
    with pytest.raises(ParseError) as caught:
        FAMILIES[prefix].engine(rules).parse(MALFORMED, "t.html")
    return str(caught.value)


def _flipped(value: object) -> object:
    """Another value of a rule's type (a new field's type needs a line here)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, str):
        return f"{value}-flipped"
    raise AssertionError(f"no flip for a rule of type {type(value).__name__}; add one")


def test_every_version_of_a_migrated_family_is_a_distinct_row_of_its_engine() -> None:
    for prefix, rows in ROWS.items():
        assert len(rows) >= 2, prefix
        assert len(set(rows.values())) == len(rows), prefix


@pytest.mark.parametrize(("prefix", "version"), CASES)
def test_every_golden_is_its_row_on_a_known_input(prefix: str, version: str) -> None:
    names = _goldens(version)
    assert names, f"{version} has no golden"
    orphans = [name for name in names if name not in FAMILIES[prefix].inputs]
    assert not orphans, f"goldens of {version} that no listed input makes: {orphans}"
    for name in names:
        assert _output(prefix, ROWS[prefix][version], name) == _stored(version, name), name


@pytest.mark.parametrize("version", sorted(REFUSALS))
def test_the_html_refusals_are_pinned(version: str) -> None:
    assert _refusal("html-", ROWS["html-"][version]) == REFUSALS[version]


@pytest.mark.parametrize(("prefix", "field"), FIELDS)
def test_flipping_each_rule_changes_a_pinned_output_of_the_family(prefix: str, field: str) -> None:
    changed = []
    for version, rules in ROWS[prefix].items():
        flipped = replace(rules, **{field: _flipped(getattr(rules, field))})
        changed += [
            (version, name)
            for name in _goldens(version)
            if _output(prefix, flipped, name) != _stored(version, name)
        ]
        if version in REFUSALS and _refusal(prefix, flipped) != REFUSALS[version]:
            changed.append((version, "refusal"))
    assert changed, f"{FAMILIES[prefix].rules.__name__}.{field} changes nothing pinned"


# --- no version module imports another ----------------------------------------------------


def _version_modules() -> dict[str, str]:
    """Module name (inside ``kebab_chunk.parsers``) of every registered version, to version."""
    modules = {}
    for version, by_type in _VERSIONS.items():
        for target in by_type.values():
            module = target.partition(":")[0]
            assert module.startswith("kebab_chunk.parsers.")
            modules[module.removeprefix("kebab_chunk.parsers.")] = version
    return modules


def version_imports(source: str, modules: set[str]) -> set[str]:
    """The version modules among ``modules`` (names inside ``kebab_chunk.parsers``) that
    ``source`` imports (tests/imports.py; its forms are tested in tests/chunkers)."""
    return package_imports(source, "kebab_chunk.parsers", modules)


def test_the_import_check_reads_the_parsers_package() -> None:
    assert version_imports("from . import pdf", {"pdf", "pdf_v2"}) == {"pdf"}
    assert not version_imports("from kebab_chunk.parsers._pdf import PdfRules", {"pdf"})
    assert not version_imports("from kebab_chunk.chunkers import pdf", {"pdf"})



#: The modules of the migrated families that are no version: they import no version either.
FAMILY_SHARED = ("_pdf", "_docling_json", "_html", "_html_build", "_html_collect", "_html_nav")


def test_no_module_of_a_migrated_family_imports_a_versions_module() -> None:
    modules = _version_modules()
    checked = [m for m, version in modules.items() if version.startswith(tuple(FAMILIES))]
    assert {"pdf", "pdf_v2", "docling_json", "docling_json_v2", "html", "html_v2"} <= set(checked)
    violations = []
    for module in [*checked, *FAMILY_SHARED]:
        source = (PARSERS / f"{module}.py").read_text(encoding="utf-8")
        for imported in sorted(version_imports(source, set(modules) - {module})):
            violations.append(f"{module} imports {imported}")
    assert not violations, "a version's code imports another version's:\n" + "\n".join(violations)
