"""Property tests of md-heading-v1 (and of the splitting helpers it is built on).

Two sources of documents: block lists rendered to Markdown by the test builder (which
also controls the text between blocks: blank lines, CRLF, thematic breaks, spaces on blank
lines, mixed line ends), and generated Markdown parsed by the real parser md-mistune-v1.
Every output is checked against the decoded source text by ``check_invariants``:
positions, unique ids, headings only first, code blocks whole in exactly one chunk, the
exact-slice rule, budgets, overlap limits and no lost text.
"""

from __future__ import annotations

import itertools
import re

from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.chunkers._split import split_atoms, split_ranges, utf8_len
from kebab_chunk.chunkers.md_heading_v1 import MdHeadingV1Chunker
from kebab_chunk.chunkers.registry import label
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.parsers.decode import decode_text
from kebab_chunk.parsers.registry import get_parser_by_version
from tests.chunkers.helpers import sentences, words
from tests.chunkers.test_md_heading_v1 import (
    Part,
    build,
    bullets,
    check_invariants,
    code,
    heading,
    image,
    para,
    table,
)

CHUNKER = MdHeadingV1Chunker(label("md-heading-v1"))

word = words(max_size=40)
sentence = sentences(word, max_words=12)
prose = st.builds(
    lambda parts, seps: "".join(
        s + sep for s, sep in zip(parts, [*seps, ""], strict=False)
    ).strip(),
    st.lists(sentence, min_size=1, max_size=10),
    st.lists(st.sampled_from([" ", " ", "\n"]), max_size=10),
)
title = st.lists(word, min_size=1, max_size=4).map(" ".join)
code_line = st.one_of(
    st.just(""), st.just("# not a heading"), st.lists(word, max_size=6).map(" ".join)
)
code_body = st.lists(code_line, min_size=1, max_size=12).map("\n".join)
cells = st.lists(word, min_size=1, max_size=3)


@st.composite
def tables(draw: st.DrawFn) -> Part:
    header = draw(cells)
    rows = draw(st.lists(st.lists(word, min_size=len(header), max_size=len(header)), max_size=8))
    return table(header, rows)


block_part = st.one_of(
    st.builds(heading, st.integers(1, 4), title),
    prose.map(para),
    prose.map(para),
    st.lists(st.lists(word, min_size=1, max_size=8).map(" ".join), min_size=1, max_size=8).map(
        bullets
    ),
    code_body.map(code),
    tables(),
    st.builds(image, st.lists(word, max_size=3).map(" ".join), st.just("pic.png")),
)


@st.composite
def policies(draw: st.DrawFn) -> ChunkPolicy:
    target = draw(st.integers(2, 120))
    return ChunkPolicy(target_tokens=target, overlap_tokens=draw(st.integers(0, target - 1)))


@st.composite
def built_documents(draw: st.DrawFn) -> list[Part]:
    parts = draw(st.lists(block_part, max_size=12))
    seps = st.sampled_from(["\n\n", "\n\n", "\n\n\n", "\n  \n", "\n\n***\n\n", "\n"])
    out = []
    for index, part in enumerate(parts):
        sep = draw(seps) if index else ""
        out.append(Part(**{**part.__dict__, "sep": sep}))
    return out


@given(built_documents(), policies(), st.sampled_from(["\n", "\r\n"]))
def test_invariants_on_built_documents(
    parts: list[Part], policy: ChunkPolicy, newline: str
) -> None:
    source, doc = build(parts, newline=newline)
    chunks = CHUNKER.chunk(doc, policy)
    check_invariants(source, doc, chunks, policy)
    assert CHUNKER.chunk(doc, policy) == chunks, "deterministic"


def _markdown(parts: list[Part], seps: list[str]) -> str:
    out = []
    for index, part in enumerate(parts):
        out.append((seps[index % len(seps)] if index else "") + part.text)
    return "".join(out) + "\n"


@given(
    st.lists(block_part, max_size=12),
    st.lists(st.sampled_from(["\n\n", "\n\n\n", "\n\n***\n\n", "\n \n"]), min_size=1),
    policies(),
    st.sampled_from(["\n", "\r\n"]),
)
def test_invariants_on_parsed_markdown(
    parts: list[Part], seps: list[str], policy: ChunkPolicy, newline: str
) -> None:
    raw = _markdown(parts, seps).replace("\n", newline).encode("utf-8")
    source, _ = decode_text(raw, "gen.md")
    doc = get_parser_by_version("md-mistune-v1").parse(raw, "gen.md")
    chunks = CHUNKER.chunk(doc, policy)
    check_invariants(source, doc, chunks, policy)
    again = CHUNKER.chunk(get_parser_by_version("md-mistune-v1").parse(raw, "gen.md"), policy)
    assert [c.chunk_id for c in again] == [c.chunk_id for c in chunks], "deterministic"
    # the heading structure is respected: a chunk never holds text of two sections
    for chunk in chunks:
        inner_heading = any(m.start() > 0 for m in re.finditer(r"(?m)^#{1,6} ", chunk.text))
        assert not inner_heading or any(
            b.kind == "code" for b in doc.blocks if b.block_id in chunk.block_ids
        )


# -- the splitting helpers ------------------------------------------------------------

split_text = st.one_of(
    prose,
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=300),
    st.lists(word, max_size=40).map(" ".join),
)


@given(split_text, st.integers(4, 200))
def test_split_atoms_stay_in_budget_and_lose_nothing(text: str, budget: int) -> None:
    atoms = split_atoms(text, budget)
    covered = bytearray(len(text))
    prev_end = 0
    for start, end, _level in atoms:
        assert prev_end <= start < end <= len(text)
        assert utf8_len(text[start:end]) <= budget or end - start == 1
        covered[start:end] = b"\1" * (end - start)
        prev_end = end
    lost = "".join(ch for ch, seen in zip(text, covered, strict=True) if not seen)
    assert lost.strip() == ""


@given(split_text, st.integers(4, 200), st.data())
def test_split_ranges_are_exact_increasing_and_overlap_bounded(
    text: str, budget: int, data: st.DataObject
) -> None:
    overlap = data.draw(st.integers(0, budget - 1))
    ranges = split_ranges(text, budget, overlap)
    covered = bytearray(len(text))
    for start, end in ranges:
        assert utf8_len(text[start:end]) <= budget or end - start == 1
        covered[start:end] = b"\1" * (end - start)
    for (s1, e1), (s2, _e2) in itertools.pairwise(ranges):
        assert s2 > s1
        if s2 < e1:
            assert utf8_len(text[s2:e1]) <= overlap
    if overlap == 0:
        assert all(s2 >= e1 for (_s1, e1), (s2, _e2) in itertools.pairwise(ranges))
    lost = "".join(ch for ch, seen in zip(text, covered, strict=True) if not seen)
    assert lost.strip() == ""
