"""Golden snapshots of md-heading-v1 over every Markdown fixture.

Each fixture is parsed with md-mistune-v1 and chunked under two policies: the default
(512 / 64) and a small one that forces section, paragraph and table splits. The contract's
invariants are asserted against the decoded source first, then the records are compared
with ``tests/goldens/md-heading-v1/`` (rewritten only with ``KEBAB_UPDATE_GOLDENS=1``). A
changed snapshot means md-heading-v1's output changed: ship that as a new label.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kebab_chunk.chunkers.md_heading_v1 import MdHeadingV1Chunker
from kebab_chunk.chunkers.registry import label
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.parsers.decode import decode_text
from kebab_chunk.parsers.registry import get_parser_by_version
from tests.chunkers.test_md_heading_v1 import check_invariants
from tests.golden import assert_golden

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
POLICIES = {
    "t512-o64": ChunkPolicy(target_tokens=512, overlap_tokens=64),
    "t120-o24": ChunkPolicy(target_tokens=120, overlap_tokens=24),
}


def _markdown_fixtures() -> list[Path]:
    """Every Markdown fixture that is text (the corpus also holds a binary ``.md`` decoy).

    The folders' README.md files describe the fixtures and are not fixtures themselves.
    """
    paths = sorted((FIXTURES / "markdown").glob("**/*.md"))
    paths += sorted((FIXTURES / "corpus").glob("**/*.md"))
    return [p for p in paths if p.name != "README.md" and b"\x00" not in p.read_bytes()]


def _golden_name(path: Path, policy_name: str) -> str:
    relative = path.relative_to(FIXTURES).with_suffix("").as_posix()
    return f"{relative.replace('/', '__')}.{policy_name}"


def test_long_section_fixture_exists_and_is_long() -> None:
    raw = (FIXTURES / "markdown" / "long-section.md").read_bytes()
    doc = get_parser_by_version("md-mistune-v1").parse(raw, "markdown/long-section.md")
    kinds = {block.kind for block in doc.blocks}
    assert {"heading", "paragraph", "list", "code", "table", "image_ref"} <= kinds
    chunks = MdHeadingV1Chunker(label("md-heading-v1")).chunk(doc, POLICIES["t512-o64"])
    assert any(len(c.block_ids) > 2 for c in chunks), "a long section packs several blocks"
    small = MdHeadingV1Chunker(label("md-heading-v1")).chunk(doc, POLICIES["t120-o24"])
    assert len({c.block_ids for c in small}) < len(small), "a paragraph splits at 120 tokens"


@pytest.mark.parametrize("policy_name", sorted(POLICIES))
@pytest.mark.parametrize(
    "path", _markdown_fixtures(), ids=lambda p: p.relative_to(FIXTURES).as_posix()
)
def test_golden_snapshot(path: Path, policy_name: str) -> None:
    policy = POLICIES[policy_name]
    raw = path.read_bytes()
    uri = path.relative_to(FIXTURES).as_posix()
    source, _ = decode_text(raw, uri)
    doc = get_parser_by_version("md-mistune-v1").parse(raw, uri)
    chunks = MdHeadingV1Chunker(label("md-heading-v1")).chunk(doc, policy)
    check_invariants(source, doc, chunks, policy)
    assert_golden(
        "md-heading-v1",
        _golden_name(path, policy_name),
        [chunk.model_dump(mode="json") for chunk in chunks],
    )
