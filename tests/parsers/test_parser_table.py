"""The parser registry is one table of versions (issue 32, "labels as data", parser half).

Every parser version is a row: a name, the engine that reads each of its media types, the
engine's rules for it and a summary. Here, for every row: the parser the registry builds is
the row's engine carrying the row's values; the rows of one engine differ in their rules
(and an engine without rules makes one version only); every parser version has goldens; no
engine's module imports another engine's module; and listing the versions imports no
engine. ``test_parser_rules.py`` checks that every field of a rules type changes a golden.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kebab_chunk.errors import UnknownParserVersionError, UnsupportedMediaTypeError
from kebab_chunk.parsers._pdf import PdfTextParser
from kebab_chunk.parsers.base import ParserVersion
from kebab_chunk.parsers.registry import (
    DEFAULT_PARSER_VERSIONS,
    PARSER_VERSIONS,
    get_parser,
    get_parser_by_version,
    parser_versions,
    version_row,
)
from tests.golden import GOLDEN_DIR
from tests.imports import package_imports

REPO = Path(__file__).resolve().parents[2]
PARSERS = REPO / "kebab_chunk" / "parsers"

#: Every (row, media type) the table names, one parser each.
READERS = [(row, media_type) for row in PARSER_VERSIONS for media_type in row.media_types]


def _engine_class(target: str) -> type:
    module, _, name = target.partition(":")
    cls = getattr(importlib.import_module(module), name)
    assert isinstance(cls, type)
    return cls


def _engine_module(target: str) -> str:
    module = target.partition(":")[0]
    assert module.startswith("kebab_chunk.parsers."), target
    return module.removeprefix("kebab_chunk.parsers.")


def _engines() -> set[str]:
    return {target for row in PARSER_VERSIONS for _, target in row.engines}


def test_the_table_lists_every_version_once() -> None:
    names = [row.name for row in PARSER_VERSIONS]
    assert len(names) == len(set(names))
    assert sorted(names) == list(parser_versions())
    for row in PARSER_VERSIONS:
        assert row.media_types and len(set(row.media_types)) == len(row.media_types), row.name
        assert parser_versions()[row.name] == row.media_types
        assert version_row(row.name) is row
    assert {"md-mistune-v1", "pdf-text-v1", "html-v1", "docling-json-v1"} <= set(names)


@pytest.mark.parametrize(("row", "media_type"), READERS, ids=lambda v: getattr(v, "name", v))
def test_each_parser_is_its_rows_engine_with_its_rows_values(
    row: ParserVersion, media_type: str
) -> None:
    target = row.engine(media_type)
    assert target is not None
    parser: Any = get_parser_by_version(row.name, media_type)
    assert type(parser) is _engine_class(target)
    assert parser.version == row.name and parser.row is row
    assert parser.media_types == (media_type,)
    if row.rules is not None:
        assert parser.rules is row.rules
    assert type(get_parser_by_version(row.name)) is _engine_class(row.engines[0][1])


def test_each_default_is_a_row_reading_its_media_type() -> None:
    for media_type, version in DEFAULT_PARSER_VERSIONS.items():
        parser: Any = get_parser(media_type)
        assert parser.row is version_row(version) and media_type in parser.media_types


def test_a_version_refuses_a_media_type_it_does_not_read() -> None:
    with pytest.raises(UnsupportedMediaTypeError) as caught:
        get_parser_by_version("csv-v1", "text/html")
    assert str(caught.value) == (
        "parser csv-v1 reads text/csv, text/tab-separated-values, not text/html; choose a "
        "parser version for text/html or leave the parser version unset."
    )


def test_rows_of_one_engine_differ_in_their_rules_of_one_type() -> None:
    by_engine: dict[str, list[ParserVersion]] = defaultdict(list)
    for row in PARSER_VERSIONS:
        for _, target in row.engines:
            by_engine[target].append(row)
    for engine, rows in by_engine.items():
        if any(row.rules is None for row in rows):
            assert len(rows) == 1, f"{engine} has no rules yet makes {len(rows)} versions"
            continue
        assert len({type(row.rules) for row in rows}) == 1, engine
        assert len({row.rules for row in rows}) == len(rows), f"two rows of {engine} are equal"


def test_an_engine_refuses_another_engines_rules() -> None:
    html, pdf = version_row("html-v2"), version_row("pdf-text-v2")
    wrong = replace(html, engines=pdf.engines)
    with pytest.raises(TypeError, match="parser version html-v2 has rules HtmlRules"):
        PdfTextParser(wrong)


def test_every_parser_version_has_goldens() -> None:
    missing = [r.name for r in PARSER_VERSIONS if not any((GOLDEN_DIR / r.name).glob("*.json"))]
    assert not missing, f"parser versions without goldens: {missing}"


def test_no_engine_imports_another_engines_module() -> None:
    """Nor does any other module of the package (the registry names engines as strings)."""
    engines = {_engine_module(target) for target in _engines()}
    assert {"_pdf", "_html", "_docling_json", "md_mistune_v1", "csv_v1"} <= engines
    violations = []
    for path in sorted(PARSERS.glob("*.py")):
        module = path.stem
        imported = package_imports(path.read_text(encoding="utf-8"), "kebab_chunk.parsers", engines)
        violations += [f"{module} imports {other}" for other in sorted(imported - {module})]
    assert not violations, "a module imports an engine's module:\n" + "\n".join(violations)


def test_the_import_check_reads_the_parsers_package() -> None:
    engines = {"_pdf", "csv_v1"}
    assert package_imports("from . import _pdf", "kebab_chunk.parsers", engines) == {"_pdf"}
    rules = "from kebab_chunk.parsers.rules import PdfRules"
    assert not package_imports(rules, "kebab_chunk.parsers", engines)
    other_package = "from kebab_chunk.chunkers import _pdf"
    assert not package_imports(other_package, "kebab_chunk.parsers", engines)


def test_listing_the_versions_imports_no_engine() -> None:
    modules = sorted({target.partition(":")[0] for target in _engines()})
    script = (
        "import sys; from kebab_chunk.parsers.registry import parser_versions, version_row; "
        "parser_versions(); version_row('pdf-text-v2'); "
        f"print([m for m in {modules!r} if m in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout


def test_an_unknown_version_is_one_sentence_naming_the_registered_ones() -> None:
    with pytest.raises(UnknownParserVersionError) as caught:
        get_parser_by_version("pdf-text-v9")
    message = str(caught.value)
    assert message.count(". ") == 0 and "pdf-text-v2" in message, message
