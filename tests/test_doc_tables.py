"""The tables of labels and parser versions in docs/guide/labels.md are the registries.

Each table sits between ``<!-- generated:NAME -->`` and ``<!-- end:NAME -->`` and is made
here from the registry rows (:data:`kebab_chunk.chunkers.registry.LABELS` and
:data:`kebab_chunk.parsers.registry.PARSER_VERSIONS`), so a doc that disagrees with the
registry fails. After changing a row, rewrite the tables with
``KEBAB_UPDATE_DOCS=1 .venv/bin/python -m pytest tests/test_doc_tables.py`` and review the
diff.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE, LABELS
from kebab_chunk.parsers.registry import (
    DEFAULT_PARSER_VERSIONS,
    MEDIA_TYPE_NAMES,
    PARSER_VERSIONS,
    media_type_names,
)

PAGE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "labels.md"
UPDATE = os.environ.get("KEBAB_UPDATE_DOCS") == "1"


def _cell(text: str) -> str:
    """``text`` safe in a table cell: pipes escaped, an HTML tag name shown as code."""
    return re.sub(r"<(/?\w+)>", r"`<\1>`", text.replace("|", "\\|"))


def labels_table() -> str:
    """The table of every registered label, in registry order, defaults marked."""
    rows = [
        "| label | accepts | what its chunks are | tokenizers that size it |",
        "|---|---|---|---|",
    ]
    for row in LABELS:
        formats = [
            media
            for media in MEDIA_TYPE_NAMES
            if row.name in DEFAULT_LABELS_BY_MEDIA_TYPE.get(media, ())
        ]
        mark = f"**default for {media_type_names(formats)}.** " if formats else ""
        tokenizers = "any" if row.tokenizers is None else ", ".join(sorted(row.tokenizers))
        rows.append(
            f"| `{row.name}` | {_cell(row.accepts)} | {mark}{_cell(row.summary)} | {tokenizers} |"
        )
    return "\n".join(rows)


def parsers_table() -> str:
    """The table of every registered parser version, in registry order, defaults marked."""
    rows = ["| parser version | reads | what its documents are |", "|---|---|---|"]
    for row in PARSER_VERSIONS:
        reads = media_type_names(row.media_types)
        formats = [
            media
            for media in MEDIA_TYPE_NAMES
            if DEFAULT_PARSER_VERSIONS.get(media) == row.name
        ]
        mark = f"**default for {media_type_names(formats)}.** " if formats else ""
        rows.append(f"| `{row.name}` | {reads} | {mark}{_cell(row.summary)} |")
    return "\n".join(rows)


TABLES: dict[str, Callable[[], str]] = {"labels": labels_table, "parsers": parsers_table}


def _section(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- generated:{name} -->\n)(.*?)(<!-- end:{name} -->)", re.S)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_the_docs_table_is_the_registry(name: str) -> None:
    text = PAGE.read_text(encoding="utf-8")
    match = _section(name).search(text)
    assert match, f"{PAGE.name} has no <!-- generated:{name} --> ... <!-- end:{name} --> section"
    expected = TABLES[name]() + "\n"
    if UPDATE and match.group(2) != expected:
        PAGE.write_text(
            text[: match.start(2)] + expected + text[match.end(2) :], encoding="utf-8"
        )
        return
    assert match.group(2) == expected, (
        f"the {name} table of {PAGE.name} is not the registry's; rewrite it with "
        "KEBAB_UPDATE_DOCS=1 .venv/bin/python -m pytest tests/test_doc_tables.py"
    )


def test_the_labels_table_names_every_label_and_marks_every_default() -> None:
    table = labels_table()
    for row in LABELS:
        assert f"| `{row.name}` |" in table
    marked = table.count("**default for ")
    defaults = {label for labels in DEFAULT_LABELS_BY_MEDIA_TYPE.values() for label in labels}
    assert marked == len(defaults)


def test_the_parsers_table_names_every_version_and_marks_every_default() -> None:
    table = parsers_table()
    for row in PARSER_VERSIONS:
        assert f"| `{row.name}` |" in table
    assert table.count("**default for ") == len(set(DEFAULT_PARSER_VERSIONS.values()))
