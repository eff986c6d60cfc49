"""The registry chunker ``md-header-chars-v3``: md-header-chars-v2 with the document's title
as the root of every heading path until a level-1 heading replaces it (rules.py,
``HeaderCharsRules.title_root``). Goldens, and the rule on small documents."""

from __future__ import annotations

from pathlib import Path

import pytest

from kebab_chunk.chunkers import get_chunker
from kebab_chunk.errors import ParseError
from kebab_chunk.model import make_policy
from kebab_chunk.parsers.registry import parse_document
from tests.chunkers.test_md_header_chars_v1 import FIXTURES, GOLDEN_POLICIES, ROOT
from tests.golden import assert_golden, parse_for_golden

LABEL = "md-header-chars-v3"
V3, V2 = get_chunker(LABEL), get_chunker("md-header-chars-v2")
POLICY = make_policy(target_tokens=40, overlap_tokens=0)


def _paths(text: str) -> list[list[str]]:
    doc = parse_document(text.encode(), "page.md")
    return [list(c.heading_path) for c in V3.chunk(doc, POLICY)]


def test_a_front_matter_title_roots_every_heading_path() -> None:
    page = (
        '---\ntitle: "Sales"\n---\nIntro line.\n\n## Who we are\n\nA team.\n\n'
        "### Roles\n\nMany.\n"
    )
    assert _paths(page) == [["Sales"], ["Sales", "Who we are"], ["Sales", "Who we are", "Roles"]]


def test_a_level_one_heading_replaces_the_title() -> None:
    page = "---\ntitle: Guide\n---\nBefore.\n\n# Install\n\nSteps.\n\n## Linux\n\napt.\n"
    assert _paths(page) == [["Guide"], ["Install"], ["Install", "Linux"]]


def test_without_a_title_the_chunks_are_v2s_but_for_the_label() -> None:
    doc = parse_document(b"Just text.\n\n## Part\n\nMore text.\n", "page.md")
    assert doc.title is None
    ours, theirs = V3.chunk(doc, POLICY), V2.chunk(doc, POLICY)
    assert [(c.text, c.heading_path, c.source_spans) for c in ours] == [
        (c.text, c.heading_path, c.source_spans) for c in theirs
    ]


def test_the_title_reaches_embed_text() -> None:
    doc = parse_document(b'---\ntitle: "Expenses"\n---\n## Limits\n\nUp to 50 USD.\n', "e.md")
    (chunk,) = V3.chunk(doc, POLICY)
    assert V3.embed_text(chunk, POLICY).splitlines()[0] == "Expenses"


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT / "fixtures")))
@pytest.mark.parametrize("policy_name", sorted(GOLDEN_POLICIES))
def test_golden(path: Path, policy_name: str) -> None:
    uri = path.relative_to(ROOT / "fixtures").as_posix()
    name = f"{uri.replace('/', '__').removesuffix('.md')}.{policy_name}"
    try:
        doc = parse_for_golden(path.read_bytes(), uri)
    except ParseError as exc:  # the corpus holds hostile files on purpose; pin that too
        assert_golden(LABEL, name, {"parse_error": exc.error_type})
        return
    records = V3.chunk(doc, GOLDEN_POLICIES[policy_name])
    assert_golden(LABEL, name, [r.model_dump(mode="json") for r in records])
