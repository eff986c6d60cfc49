"""The registry is one table of labels (issue 32, "labels as data").

Every label is a row: a name, the engine that makes it, the engine's rules for it, what it
accepts, which tokenizers shape it and a summary. Here, for every row: the chunker the
registry builds is the row's engine carrying the row's values; the rows of one engine
differ in their rules (and an engine without rules makes one label only); every label has
goldens and every golden folder is a label; and no engine's module imports another
engine's module. Each family's rules test (``test_*_rules.py``) checks that every field of
its rules changes a golden.
"""

from __future__ import annotations

import importlib
from collections import defaultdict
from pathlib import Path

import pytest

from kebab_chunk.chunkers.base import Chunker, Label
from kebab_chunk.chunkers.registry import LABELS, get_chunker, label, registered_labels
from kebab_chunk.errors import UnknownChunkerError
from kebab_chunk.parsers.registry import parser_versions
from tests.golden import GOLDEN_DIR
from tests.imports import package_imports

CHUNKERS = Path(__file__).resolve().parents[2] / "kebab_chunk" / "chunkers"


def _engine_class(row: Label) -> type:
    module, _, name = row.engine.partition(":")
    cls = getattr(importlib.import_module(module), name)
    assert isinstance(cls, type)
    return cls


def _engine_module(row: Label) -> str:
    module = row.engine.partition(":")[0]
    assert module.startswith("kebab_chunk.chunkers."), row.engine
    return module.removeprefix("kebab_chunk.chunkers.")


def test_the_table_lists_every_label_once() -> None:
    names = [row.name for row in LABELS]
    assert len(names) == len(set(names))
    assert sorted(names) == registered_labels()
    assert {"md-heading-v1", "pdf-page-v1", "hierarchical-v1", "hybrid-v1"} <= set(names)


@pytest.mark.parametrize("row", LABELS, ids=lambda row: row.name)
def test_each_chunker_is_its_rows_engine_with_its_rows_values(row: Label) -> None:
    chunker = get_chunker(row.name)
    assert isinstance(chunker, Chunker) and type(chunker) is _engine_class(row)
    assert chunker.label == row.name
    assert chunker.accepts_description == f"{row.accepts}: {row.summary}"
    assert chunker.uses_tokenizers == row.tokenizers
    if row.rules is not None:
        assert chunker.rules is row.rules
    assert label(row.name) is row


def test_rows_of_one_engine_differ_in_their_rules_of_one_type() -> None:
    by_engine: dict[str, list[Label]] = defaultdict(list)
    for row in LABELS:
        by_engine[row.engine].append(row)
    for engine, rows in by_engine.items():
        if any(row.rules is None for row in rows):
            assert len(rows) == 1, f"{engine} has no rules yet makes {len(rows)} labels"
            continue
        assert len({type(row.rules) for row in rows}) == 1, engine
        assert len({row.rules for row in rows}) == len(rows), f"two rows of {engine} are equal"


def test_an_engine_refuses_another_engines_rules() -> None:
    hybrid, pages = label("hybrid-v4"), label("pdf-page-v3")
    wrong = Label(hybrid.name, pages.engine, hybrid.rules, "", None, "")
    with pytest.raises(TypeError, match="hybrid-v4 has rules HybridRules"):
        _engine_class(pages)(wrong)


def test_every_label_has_goldens_and_every_golden_folder_is_a_label_or_parser() -> None:
    folders = {path.name for path in GOLDEN_DIR.iterdir() if path.is_dir()}
    labels = set(registered_labels())
    assert labels <= folders, f"labels without goldens: {sorted(labels - folders)}"
    orphans = folders - labels - set(parser_versions())
    assert not orphans, f"golden folders of no label or parser: {sorted(orphans)}"
    for name in labels:
        assert any((GOLDEN_DIR / name).glob("*.json")), name


def test_the_import_check_sees_every_form_of_import() -> None:
    engines = {"_pages", "pdf_page_v1"}
    for source in (
        "from kebab_chunk.chunkers._pages import PageChunker",
        "from kebab_chunk.chunkers import _pages",
        "import kebab_chunk.chunkers._pages",
        "def f():\n    from ._pages import PageChunker",
        "from . import _pages",
    ):
        assert package_imports(source, "kebab_chunk.chunkers", engines) == {"_pages"}, source
    rules = "from kebab_chunk.chunkers.rules import PageRules"
    assert not package_imports(rules, "kebab_chunk.chunkers", engines)


def test_no_engine_imports_another_engines_module() -> None:
    engines = {_engine_module(row) for row in LABELS}
    violations = []
    for module in sorted(engines):
        source = (CHUNKERS / f"{module}.py").read_text(encoding="utf-8")
        others = engines - {module}
        for imported in sorted(package_imports(source, "kebab_chunk.chunkers", others)):
            violations.append(f"{module} imports {imported}")
    assert not violations, "a label's engine imports another's:\n" + "\n".join(violations)


def test_an_unknown_label_is_one_sentence_naming_the_registered_ones() -> None:
    with pytest.raises(UnknownChunkerError) as caught:
        get_chunker("md-heading-v9")
    message = str(caught.value)
    assert message.count(". ") == 0 and "md-heading-v3" in message, message
