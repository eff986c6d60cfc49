"""The parser engines with rules (issue 32): every rule a real behaviour difference, every
golden of their versions accounted for.

pdf-text-v1/v2 are rows of :class:`kebab_chunk.parsers._pdf.PdfTextParser`, docling-json-v1/v2
of :class:`kebab_chunk.parsers._docling_json.DoclingJsonEngine` and html-v1/v2 of
:class:`kebab_chunk.parsers._html.HtmlEngine`, each row with its own rules value
(:mod:`kebab_chunk.parsers.rules`). The input of every golden of those versions is listed
here, so a golden no input makes (an orphan) fails, and so does a rule whose flip leaves
every pinned output of its family as it is (a field that is not a behaviour). Pinned outputs
are the goldens, plus, for the one rule that changes only a refusal
(``HtmlRules.refusal_names_assertion_error``), the refusal sentences below (html-v1's is
also pinned by the differential test of ``test_html_linear.py`` against the ``html.parser``
it was built on). The table itself (each parser is its row's engine, rows of one engine
differ, no engine imports another's) is tested in ``test_parser_table.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from kebab_chunk.errors import ParseError
from kebab_chunk.parsers._docling_json import DoclingJsonEngine
from kebab_chunk.parsers._html import HtmlEngine
from kebab_chunk.parsers._pdf import PdfTextParser
from kebab_chunk.parsers._plain_text import PlainTextParser
from kebab_chunk.parsers.base import ParserVersion
from kebab_chunk.parsers.registry import PARSER_VERSIONS, get_parser_by_version
from kebab_chunk.parsers.rules import DoclingRules, HtmlRules, PdfRules, PlainTextRules
from tests.golden import GOLDEN_DIR, rendered_golden
from tests.parsers.test_docling_json_v2 import paper

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"

Input = tuple[Callable[[], bytes], str]  # (the bytes, the source uri)


def _file(path: Path) -> Callable[[], bytes]:
    return cache(path.read_bytes)


@dataclass(frozen=True)
class Family:
    """One engine with rules: the engine, its rules type and the inputs of its goldens."""

    engine: type[PdfTextParser | DoclingJsonEngine | HtmlEngine | PlainTextParser]
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
            "typeset-manual": (
                _file(FIXTURES / "pdf-text-v3" / "typeset-manual.pdf"),
                "pdf/typeset-manual.pdf",
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
            **_named(FIXTURES / "html" / "manual", "html/manual", ["label-manual.html"]),
        },
    ),
    "text-plain-": Family(
        PlainTextParser,
        PlainTextRules,
        {
            **_named(
                FIXTURES / "corpus" / "notes",
                "notes",
                ["release-notes-2.4.txt", "legacy-latin1.txt", "empty.txt"],
            ),
            **_named(FIXTURES / "text", "text", ["asciidoc-manual.txt"]),
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


def _rows(prefix: str) -> dict[str, ParserVersion]:
    """Every row of the family, by version: the versions named ``prefix...``, each a row of
    the family's engine with its rules type (and no other row has that type)."""
    family = FAMILIES[prefix]
    rows = {row.name: row for row in PARSER_VERSIONS if row.name.startswith(prefix)}
    for name, row in rows.items():
        assert isinstance(row.rules, family.rules), name
        assert isinstance(get_parser_by_version(name), family.engine), name
    strays = [r.name for r in PARSER_VERSIONS if isinstance(r.rules, family.rules)]
    assert sorted(strays) == sorted(rows), f"{family.rules.__name__} rows named otherwise"
    return rows


ROWS = {prefix: _rows(prefix) for prefix in FAMILIES}
CASES = [(prefix, version) for prefix, rows in ROWS.items() for version in sorted(rows)]
FIELDS = [(prefix, f.name) for prefix, family in FAMILIES.items() for f in fields(family.rules)]


def _goldens(version: str) -> list[str]:
    return sorted(path.stem for path in (GOLDEN_DIR / version).glob("*.json"))


def _output(prefix: str, row: ParserVersion, name: str) -> str:
    read, uri = FAMILIES[prefix].inputs[name]
    doc = FAMILIES[prefix].engine(row).parse(read(), uri)
    return rendered_golden(doc.model_dump(mode="json"))


def _stored(version: str, name: str) -> str:
    return (GOLDEN_DIR / version / f"{name}.json").read_text(encoding="utf-8")


def _refusal(prefix: str, row: ParserVersion) -> str | None:
    """The refusal of :data:`MALFORMED` (HTML only)."""
    if prefix != "html-":
        return None
    with pytest.raises(ParseError) as caught:
        FAMILIES[prefix].engine(row).parse(MALFORMED, "t.html")
    return str(caught.value)


def _flipped(value: object) -> object:
    """Another value of a rule's type (a new field's type needs a line here)."""
    if isinstance(value, bool):
        return not value
    raise AssertionError(f"no flip for a rule of type {type(value).__name__}; add one")


def test_every_family_has_versions_with_distinct_rules() -> None:
    for prefix, rows in ROWS.items():
        assert len(rows) >= 2, prefix
        assert len({row.rules for row in rows.values()}) == len(rows), prefix


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
    for version, row in ROWS[prefix].items():
        rules: Any = row.rules
        flipped = replace(row, rules=replace(rules, **{field: _flipped(getattr(rules, field))}))
        changed += [
            (version, name)
            for name in _goldens(version)
            if _output(prefix, flipped, name) != _stored(version, name)
        ]
        if version in REFUSALS and _refusal(prefix, flipped) != REFUSALS[version]:
            changed.append((version, "refusal"))
    assert changed, f"{FAMILIES[prefix].rules.__name__}.{field} changes nothing pinned"
