"""The tables of labels and parsers in docs/guide/labels.md are the registries, rendered.

Each table sits between ``<!-- generated:NAME -->`` and ``<!-- end:NAME -->`` and is made
here from the registry rows (:data:`kebab_chunk.chunkers.registry.LABELS` and the parser
registry), so a doc that disagrees with the registry fails. After changing a row, rewrite
the tables with ``KEBAB_UPDATE_DOCS=1 .venv/bin/python -m pytest tests/test_doc_tables.py``
and review the diff.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE, LABELS

PAGE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "labels.md"
UPDATE = os.environ.get("KEBAB_UPDATE_DOCS") == "1"
#: How the docs name each media type, in the order a "default for" list gives them.
FORMAT_NAMES = {
    "text/markdown": "Markdown",
    "text/plain": "plain text",
    "application/pdf": "PDF",
    "text/html": "HTML",
    "text/csv": "CSV",
    "text/tab-separated-values": "TSV",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "DOCX",
    "application/vnd.docling+json": "docling JSON",
}


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def labels_table() -> str:
    """The table of every registered label, in registry order, defaults marked."""
    rows = [
        "| label | accepts | what its chunks are | tokenizers that size it |",
        "|---|---|---|---|",
    ]
    for row in LABELS:
        formats = [
            name
            for media, name in FORMAT_NAMES.items()
            if row.name in DEFAULT_LABELS_BY_MEDIA_TYPE.get(media, ())
        ]
        mark = f"**default for {_listed(formats)}.** " if formats else ""
        tokenizers = "any" if row.tokenizers is None else ", ".join(sorted(row.tokenizers))
        rows.append(
            f"| `{row.name}` | {_cell(row.accepts)} | {mark}{_cell(row.summary)} | {tokenizers} |"
        )
    return "\n".join(rows)


TABLES: dict[str, Callable[[], str]] = {"labels": labels_table}


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
