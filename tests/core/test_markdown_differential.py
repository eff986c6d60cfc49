"""The compiled core's Markdown scan gives exactly ``md_pyromark_v1._scan``'s records.

The core walks pulldown-cmark's events in Rust (the same crate version pyromark wraps) and
hands Python one tuple per top-level block instead of one dict per event. Compared with the
Python scan, record for record, and then as whole parsed documents, on:

- every Markdown input of pulldown-cmark's own test suite (the CommonMark spec examples,
  its GFM table and regression cases, ...), read from the crate source cargo fetched to
  build the core;
- the fixtures' Markdown and the installed distributions' READMEs;
- generated documents mixing headings, nested lists, tables, fences, quotes, HTML, link
  definitions, CRLF and lone CR line ends and non-ASCII text.
"""

from __future__ import annotations

import json
import re
import subprocess
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.corpora import distribution_readmes, fixture_markdown
from kebab_chunk._core import using
from kebab_chunk.errors import LimitExceededError
from kebab_chunk.parsers import md_pyromark_v1
from kebab_chunk.parsers._assemble import Assembler
from kebab_chunk.parsers.base import ParseLimits
from kebab_chunk.parsers.registry import get_parser_by_version

NATIVE = Path(__file__).resolve().parents[2] / "native"
_ORIGINAL = re.compile(r'let original = r##"(.*?)"##;', re.DOTALL)


@cache
def suite_inputs() -> tuple[str, ...]:
    """The Markdown inputs of pulldown-cmark's test suite, from the crate cargo fetched."""
    metadata = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--offline"],
        cwd=NATIVE,
        capture_output=True,
        text=True,
        check=True,
    )
    packages = json.loads(metadata.stdout)["packages"]
    manifest = next(p["manifest_path"] for p in packages if p["name"] == "pulldown-cmark")
    suite = Path(manifest).parent / "tests" / "suite"
    return tuple(
        text
        for path in sorted(suite.glob("*.rs"))
        for text in _ORIGINAL.findall(path.read_text(encoding="utf-8"))
    )


def _assembler(limits: ParseLimits | None = None) -> Assembler:
    limits = limits or ParseLimits()
    return Assembler(b"", "file:///t.md", "text/markdown", "md-pyromark-v1", limits)


def _python_scan(body: str, limits: ParseLimits | None = None) -> Any:
    with using("python"):
        return md_pyromark_v1._scan(body, _assembler(limits))


def _core_scan(compiled: ModuleType, body: str) -> Any:
    found = compiled.scan_markdown(body, ParseLimits().max_blocks)
    assert found is not None
    records, deepest, over = found
    assert not over
    return records, deepest


def test_the_suite_was_found(compiled: ModuleType) -> None:
    inputs = suite_inputs()
    assert len(inputs) > 1000  # 652 spec examples alone
    assert any("|" in text and "---" in text for text in inputs)  # tables among them


def test_every_suite_input_scans_to_the_python_records(compiled: ModuleType) -> None:
    differ = [
        text
        for text in suite_inputs()
        for body in (text, md_pyromark_v1._lone_cr_as_lf(text.replace("\n", "\r")))
        if _core_scan(compiled, body) != _python_scan(body)
    ]
    assert differ == []


@cache
def _real_documents() -> tuple[bytes, ...]:
    docs = list(fixture_markdown().documents) + list(distribution_readmes().documents)
    return tuple(d.raw for d in docs)


def _parsed(raw: bytes, uri: str) -> str:
    parser = get_parser_by_version("md-pyromark-v1")
    return parser.parse(raw, uri).model_dump_json()


def test_real_documents_parse_to_the_same_documents(compiled: ModuleType) -> None:
    docs = _real_documents()
    assert len(docs) > 50
    for index, raw in enumerate(docs):
        uri = f"file:///doc{index}.md"
        fast = _parsed(raw, uri)
        with using("python"):
            assert fast == _parsed(raw, uri), uri


def test_suite_inputs_parse_to_the_same_documents(compiled: ModuleType) -> None:
    for index, text in enumerate(suite_inputs()):
        raw = text.encode("utf-8")
        fast = _parsed(raw, f"file:///s{index}.md")
        with using("python"):
            assert fast == _parsed(raw, f"file:///s{index}.md"), text


_PART = st.sampled_from(
    [
        "# Title\n",
        "Setext\n===\n",
        "## Sub ##\n",
        "#\n",
        "### \\*escaped\\* `code` <b>x</b>\n",
        "Plain words. Another sentence\nwrapped line.\n",
        "\n",
        "\r\n",
        "\r",
        "- item\n  - nested\n    1. deep\n- next\n",
        "3. ordered\n4. more\n",
        "| a | b |\n|---|:-:|\n| 1 | 2 |\n| 3 |\n",
        "```python extra\ncode\n```\n",
        "~~~\nunclosed fence\n",
        "    indented code\n",
        "> quote\n> - list in quote\n",
        "<div>\nhtml block\n</div>\n",
        "[ref]: https://example.com\n",
        "***\n",
        "![alt](img.png)\n",
        "Ünïcödé 中文 😀 text\n",
        "\t- tabbed item\n",
    ]
)


@settings(max_examples=200)
@given(st.lists(_PART, min_size=1, max_size=30).map("".join))
def test_generated_markdown_scans_and_parses_the_same(compiled: ModuleType, text: str) -> None:
    body = md_pyromark_v1._lone_cr_as_lf(text)
    assert _core_scan(compiled, body) == _python_scan(body)
    raw = text.encode("utf-8")
    fast = _parsed(raw, "file:///g.md")
    with using("python"):
        assert fast == _parsed(raw, "file:///g.md")


def test_the_block_limit_is_enforced_the_same_way(compiled: ModuleType) -> None:
    body = "para\n\n" * 200
    limits = ParseLimits(max_blocks=64)
    records, _, over = compiled.scan_markdown(body, limits.max_blocks)
    assert over and len(records) == 128  # stopped at the first check past the limit
    with pytest.raises(LimitExceededError) as python_error:
        _python_scan(body, limits)
    with pytest.raises(LimitExceededError) as core_error:
        md_pyromark_v1._scan(body, _assembler(limits))
    assert str(core_error.value) == str(python_error.value)
