"""pdf-page-v3: pdf-page-v2 that never cuts between a list marker and its item, and goldens.

The defect (shown on v2, gone in v3): PDF text keeps a numbered item on its line
(``4. MODIFICATIONS``), and v2 took the space after ``4.`` for a sentence end, so a chunk
ended with a dangling ``4.`` and the item's text began the next chunk. Everything else is
v2's: a page without list markers gets v2's chunks. The goldens
(``tests/goldens/pdf-page-v3/``, rewritten only with ``KEBAB_UPDATE_GOLDENS=1``) pin v3's
output on the PDF fixtures and on a page of numbered and bulleted items.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import pytest

from kebab_chunk.chunkers._pages import PageChunker
from kebab_chunk.chunkers.registry import get_chunker, label, registered_labels
from kebab_chunk.model import Chunk, ChunkPolicy, make_policy
from kebab_chunk.parsers.registry import get_parser_by_version
from tests.chunkers.helpers import outputs_under_hash_seeds
from tests.chunkers.test_pdf_page_v2 import (
    FIXTURES,
    GOLDEN_FIXTURES,
    GOLDEN_POLICIES,
    POLICIES,
    page_doc,
    promises,
)
from tests.golden import assert_golden

V2, V3 = "pdf-page-v2", "pdf-page-v3"
#: A chunk that ends with a line holding only a list marker (its item is in the next chunk).
_DANGLING = re.compile(r"(?:^|\n)[ \t]*(?:\d{1,3}[.)]|[A-Za-z][.)]|\(\w{1,3}\)|[\u2022*\-])$")
_TITLES = ("SCOPE", "DEFINITIONS", "COPYING", "MODIFICATIONS", "COMBINING", "TERMINATION")
_SENTENCES = (
    "This section applies to every copy of the work in any medium.",
    "A copy made in a format whose specification is public counts as transparent.",
    "You may add other material on the covers, limited to the title.",
    "Each change must be stated in the notice near the start of the work.",
    "The list below names what a modified version has to keep.",
)
POLICY_SET = {
    **POLICIES,
    "t48-o0": make_policy(target_tokens=48, overlap_tokens=0),
    "t64-o8": make_policy(target_tokens=64, overlap_tokens=8),
    "t240-o0-chars": make_policy(target_tokens=240, overlap_tokens=0, tokenizer="chars"),
}


def numbered_pages() -> list[str]:
    """Two pages of numbered sections with wrapped prose and bulleted items, laid out as
    PDF text extraction gives them (one line per printed line)."""
    pages = []
    for page in range(2):
        lines = []
        for n, title in enumerate(_TITLES):
            lines.append(f"{page * len(_TITLES) + n}. {title}")
            for k in range(2 + n % 3):
                lines.append(_SENTENCES[(n + k) % len(_SENTENCES)])
            lines.append("\u2022 Keep every copyright notice of the work intact.")
            lines.append(f"{chr(ord('a') + n)}) Preserve the section entitled {title.title()}.")
        pages.append("\n".join(lines))
    return pages


def dangling(chunks: Sequence[Chunk]) -> list[str]:
    return [c.text[-40:] for c in chunks if _DANGLING.search(c.text)]


def test_v3_is_registered_beside_v2() -> None:
    assert {V2, V3} <= set(registered_labels())
    assert isinstance(get_chunker(V3), PageChunker)
    assert get_chunker(V3).uses_tokenizers is None


def test_no_chunk_ends_with_a_list_marker_whose_item_is_in_the_next() -> None:
    doc = page_doc(numbered_pages())
    old = {name: dangling(get_chunker(V2).chunk(doc, p)) for name, p in POLICY_SET.items()}
    new = {name: dangling(get_chunker(V3).chunk(doc, p)) for name, p in POLICY_SET.items()}
    assert sum(map(len, old.values())) >= 3, old  # v2 shows the defect
    assert new == {name: [] for name in POLICY_SET}


@pytest.mark.parametrize("name", sorted(POLICY_SET))
def test_v3_keeps_v2_promises(name: str) -> None:
    pages = numbered_pages()
    policy: ChunkPolicy = POLICY_SET[name]
    chunks = get_chunker(V3).chunk(page_doc(pages), policy)
    promises(pages, chunks, policy)
    assert [c.position for c in chunks] == list(range(len(chunks)))
    assert len({c.chunk_id for c in chunks}) == len(chunks)


@pytest.mark.parametrize("name", GOLDEN_FIXTURES)
def test_pages_without_markers_get_v2_chunks(name: str) -> None:
    doc = get_parser_by_version("pdf-text-v1").parse(
        (FIXTURES / "pdf" / f"{name}.pdf").read_bytes(), f"pdf/{name}.pdf"
    )
    for policy in POLICY_SET.values():
        old = [
            (c.text, c.source_spans, c.token_estimate) for c in get_chunker(V2).chunk(doc, policy)
        ]
        new = [
            (c.text, c.source_spans, c.token_estimate) for c in get_chunker(V3).chunk(doc, policy)
        ]
        assert new == old


def test_a_cut_before_the_marker_stays_allowed() -> None:
    """Only the cut after a marker is gone: the line break before it is still a cut."""
    pages = numbered_pages()
    chunks = get_chunker(V3).chunk(page_doc(pages), POLICY_SET["t48-o0"])
    assert any(re.match(r"\d{1,3}\. [A-Z]", c.text) for c in chunks[1:])


_SCRIPT = """
import json
from kebab_chunk.chunkers.registry import get_chunker
from tests.chunkers.test_pdf_page_v3 import POLICY_SET, numbered_pages, page_doc
doc = page_doc(numbered_pages())
print(json.dumps([[c.model_dump(mode="json") for c in get_chunker("pdf-page-v3").chunk(doc, p)]
                  for p in POLICY_SET.values()]))
"""


def test_output_is_identical_across_hash_seeds() -> None:
    outputs = outputs_under_hash_seeds(_SCRIPT, ("1", "2"))
    assert outputs[0] == outputs[1]
    assert sum(map(len, json.loads(outputs[0]))) > 50


# ----------------------------------------------------------------------------- goldens


@pytest.mark.parametrize("policy_name", GOLDEN_POLICIES)
@pytest.mark.parametrize("name", GOLDEN_FIXTURES)
def test_golden_fixture(name: str, policy_name: str) -> None:
    doc = get_parser_by_version("pdf-text-v1").parse(
        (FIXTURES / "pdf" / f"{name}.pdf").read_bytes(), f"pdf/{name}.pdf"
    )
    chunks = PageChunker(label("pdf-page-v3")).chunk(doc, POLICIES[policy_name])
    assert chunks and all(c.chunker_version == V3 for c in chunks)
    assert_golden(V3, f"{name}.{policy_name}", [c.model_dump(mode="json") for c in chunks])


@pytest.mark.parametrize("policy_name", ["t48-o0", "t64-o8"])
def test_golden_numbered_page(policy_name: str) -> None:
    chunks = get_chunker(V3).chunk(page_doc(numbered_pages()), POLICY_SET[policy_name])
    assert_golden(V3, f"numbered.{policy_name}", [c.model_dump(mode="json") for c in chunks])
