"""The MarkdownChunker API's contract tests (docs/internals/contract.md, "Chunkers").

The first block is the API's original specification's test plan (same inputs, same
assertions), importing the API the way users do; the tests after it pin the parts of the
contract stated in prose (constraints, invariants, error handling) and the ids and exact
offsets in the metadata.
"""

from __future__ import annotations

import itertools
import re

import pytest

import kebab_chunk
from kebab_chunk.chunkers import get_chunker
from kebab_chunk.integrations.markdown_chunker import Chunk, MarkdownChunker, TextChunk
from kebab_chunk.model import make_policy
from kebab_chunk.parsers import parse_document

# --- the specification's contract tests ---------------------------------------------------


def test_chunker_constructor_defaults() -> None:
    chunker = MarkdownChunker()
    assert chunker.max_chunk_size == 1024
    assert chunker.overlap == 100
    assert chunker.strategy == "headers"


def test_chunk_dataclass_structure() -> None:
    chunk = Chunk(text="test content", metadata={"headers": [], "position": 0, "source": "test.md"})
    assert hasattr(chunk, "text")
    assert hasattr(chunk, "metadata")
    assert isinstance(chunk.text, str)
    assert isinstance(chunk.metadata, dict)


def test_chunk_metadata_required_fields() -> None:
    chunker = MarkdownChunker()
    chunks = chunker.chunk_document("# Test\nContent", source="test.md")
    assert chunks  # the loop below must not pass vacuously
    for chunk in chunks:
        assert "headers" in chunk.metadata
        assert "position" in chunk.metadata
        assert "source" in chunk.metadata
        assert isinstance(chunk.metadata["headers"], list)
        assert isinstance(chunk.metadata["position"], int)
        assert isinstance(chunk.metadata["source"], str)


def test_header_metadata_structure() -> None:
    chunker = MarkdownChunker()
    md = "# Title\n## Section\nContent"
    chunks = chunker.chunk_document(md, source="test.md")
    headers = [header for chunk in chunks for header in chunk.metadata["headers"]]
    assert headers
    for header in headers:
        assert "level" in header
        assert "text" in header
        assert isinstance(header["level"], int)
        assert isinstance(header["text"], str)
        assert 1 <= header["level"] <= 6


def test_chunk_size_constraint() -> None:
    chunker = MarkdownChunker(max_chunk_size=1024)
    large_md = "# Title\n" + ("A" * 5000)
    chunks = chunker.chunk_document(large_md, source="large.md")
    assert len(chunks) > 1
    for chunk in chunks:
        assert len(chunk.text) <= 1024


def test_chunk_position_ordering() -> None:
    chunker = MarkdownChunker()
    md = "# A\nContent A\n## B\nContent B\n### C\nContent C"
    chunks = chunker.chunk_document(md, source="test.md")
    positions = [c.metadata["position"] for c in chunks]
    assert positions == sorted(positions)
    assert positions[0] == 0


def test_source_metadata_propagation() -> None:
    chunker = MarkdownChunker()
    chunks = chunker.chunk_document("# Test\nContent", source="my-doc.md")
    assert chunks
    for chunk in chunks:
        assert chunk.metadata["source"] == "my-doc.md"


def test_headerless_document_handling() -> None:
    chunker = MarkdownChunker(max_chunk_size=1024)
    small_text = "Just plain text without headers." * 10  # ~320 chars
    chunks = chunker.chunk_document(small_text, source="plain.md")
    assert len(chunks) == 1
    assert chunks[0].metadata["headers"] == []
    assert len(chunks[0].text) <= 1024


def test_empty_input_returns_empty_list() -> None:
    chunker = MarkdownChunker()
    chunks = chunker.chunk_document("", source="empty.md")
    assert chunks == []


# --- the public surface ------------------------------------------------------------------


def test_public_names() -> None:
    assert kebab_chunk.MarkdownChunker is MarkdownChunker
    assert Chunk is TextChunk
    # kebab_chunk.Chunk stays the pipeline's record model, not the seed dataclass.
    assert kebab_chunk.Chunk is not Chunk


# --- constructor constraints -------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "constraint"),
    [
        ({"max_chunk_size": 0}, "max_chunk_size must be > 0"),
        ({"max_chunk_size": -5, "overlap": 0}, "max_chunk_size must be > 0"),
        ({"overlap": -1}, "overlap must be >= 0"),
        ({"max_chunk_size": 100, "overlap": 100}, "overlap must be < max_chunk_size"),
        ({"max_chunk_size": 100, "overlap": 150}, "overlap must be < max_chunk_size"),
        ({"strategy": "paragraphs"}, "strategy must be 'headers'"),
        ({"strategy": "recursive"}, "strategy must be 'headers'"),
        ({"max_chunk_size": 10.5}, "max_chunk_size must be an integer"),
        ({"overlap": True}, "overlap must be an integer"),
    ],
)
def test_constraint_violations_raise_value_error_naming_the_constraint(
    kwargs: dict[str, object], constraint: str
) -> None:
    with pytest.raises(ValueError) as info:
        MarkdownChunker(**kwargs)  # type: ignore[arg-type]
    message = str(info.value)
    assert message.startswith(constraint)
    assert message.count(". ") == 0 and message.endswith(".")  # one sentence


def test_smallest_valid_settings_are_accepted() -> None:
    chunker = MarkdownChunker(max_chunk_size=1, overlap=0)
    chunks = chunker.chunk_document("# H\nab", source="x.md")
    assert [c.text for c in chunks] == ["#", "H", "a", "b"]


# --- invariants and error handling -------------------------------------------------------


def test_headerless_long_text_is_character_split_within_budget() -> None:
    text = " ".join(f"word{i}" for i in range(400))  # ~3.5 KB, one paragraph, no header
    chunks = MarkdownChunker(max_chunk_size=500, overlap=50).chunk_document(text, "p.md")
    assert len(chunks) > 1
    assert all(len(c.text) <= 500 for c in chunks)
    assert all(c.metadata["headers"] == [] for c in chunks)
    assert all(c.metadata["recursive_chunk"] for c in chunks)


def test_whitespace_only_text_gives_no_chunks() -> None:
    assert MarkdownChunker().chunk_document(" \n\t\n  ", source="blank.md") == []


def test_code_blocks_and_tables_are_cut_to_the_budget() -> None:
    code = "```python\n" + "".join(f"value_{i} = compute({i}, 'x' * {i})\n" for i in range(80))
    table = "| a | b |\n|---|---|\n" + "".join(f"| row {i} | {'y' * 30} |\n" for i in range(60))
    md = f"# Code\n\n{code}```\n\n# Table\n\n{table}"
    chunks = MarkdownChunker(max_chunk_size=300, overlap=30).chunk_document(md, "t.md")
    assert all(len(c.text) <= 300 for c in chunks)
    code_chunks = [c for c in chunks if c.metadata["headers"] == [{"level": 1, "text": "Code"}]]
    table_chunks = [c for c in chunks if c.metadata["headers"] == [{"level": 1, "text": "Table"}]]
    assert len(code_chunks) > 3 and len(table_chunks) > 3
    # Cut at line breaks: every piece of the code block is whole lines of it.
    for chunk in code_chunks[1:]:
        assert all(line in code for line in chunk.text.split("\n"))


def test_header_lines_stay_in_the_chunk_text_and_in_metadata() -> None:
    chunks = MarkdownChunker().chunk_document("# Title\n\nIntro.\n\n## Part\n\nBody.\n", "d.md")
    assert [c.text for c in chunks] == ["# Title\n\nIntro.", "## Part\n\nBody."]
    assert [c.metadata["headers"] for c in chunks] == [
        [{"level": 1, "text": "Title"}],
        [{"level": 1, "text": "Title"}, {"level": 2, "text": "Part"}],
    ]


def test_headers_are_the_enclosing_stack_outermost_first() -> None:
    md = "# A\n\n### C\n\nc\n\n## B\n\nb\n\n# D\n\nd\n"
    chunks = MarkdownChunker().chunk_document(md, "d.md")
    stacks = [[(h["level"], h["text"]) for h in c.metadata["headers"]] for c in chunks]
    assert stacks == [[(1, "A")], [(1, "A"), (3, "C")], [(1, "A"), (2, "B")], [(1, "D")]]


def test_recursive_chunk_marks_every_chunk_of_a_split_section_only() -> None:
    md = "# Small\n\nshort\n\n# Big\n\n" + "\n\n".join(["para " * 30] * 6)
    chunks = MarkdownChunker(max_chunk_size=400, overlap=0).chunk_document(md, "d.md")
    flags = {c.metadata["headers"][0]["text"]: [] for c in chunks}
    for c in chunks:
        flags[c.metadata["headers"][0]["text"]].append(c.metadata["recursive_chunk"])
    assert flags["Small"] == [False]
    assert len(flags["Big"]) > 1 and all(flags["Big"])


def test_overlap_repeats_the_tail_of_the_previous_chunk_within_a_section() -> None:
    paragraphs = [f"Paragraph {i} " + "x" * 40 for i in range(12)]
    md = "# S\n\n" + "\n\n".join(paragraphs)
    chunks = MarkdownChunker(max_chunk_size=200, overlap=60).chunk_document(md, "d.md")
    assert len(chunks) > 2
    for before, after in itertools.pairwise(chunks):
        shared = before.metadata["char_end"] - after.metadata["char_start"]
        assert 0 < shared <= 60
        assert after.text.startswith(md[after.metadata["char_start"] : before.metadata["char_end"]])
        assert before.text.endswith(md[after.metadata["char_start"] : before.metadata["char_end"]])


def test_overlap_never_crosses_a_heading() -> None:
    md = "# One\n\n" + "a " * 200 + "\n\n# Two\n\n" + "b " * 200
    chunks = MarkdownChunker(max_chunk_size=120, overlap=50).chunk_document(md, "d.md")
    two_starts = md.index("# Two")
    for chunk in chunks:
        if chunk.metadata["headers"][0]["text"] == "Two":
            assert chunk.metadata["char_start"] >= two_starts
        else:
            assert chunk.metadata["char_end"] <= two_starts


def test_source_none_becomes_empty_string() -> None:
    chunks = MarkdownChunker().chunk_document("# T\nbody")
    assert [c.metadata["source"] for c in chunks] == [""]


def test_text_that_breaks_the_parser_degrades_to_character_splitting() -> None:
    # NUL bytes make the Markdown parser reject the text as binary.
    text = "# Not a header here\n" + "data\x00" * 300
    chunks = MarkdownChunker(max_chunk_size=256, overlap=16).chunk_document(text, "odd.md")
    assert len(chunks) > 1
    assert all(len(c.text) <= 256 for c in chunks)
    assert all(c.metadata["headers"] == [] for c in chunks)
    assert {c.metadata["parser_version"] for c in chunks} == {"text-fallback-v1"}
    for chunk in chunks:
        assert text[chunk.metadata["char_start"] : chunk.metadata["char_end"]] == chunk.text


def test_a_parser_exception_degrades_instead_of_raising(monkeypatch: pytest.MonkeyPatch) -> None:
    import kebab_chunk.integrations.markdown_chunker as module

    class Exploding:
        def parse(self, raw: bytes, source_uri: str) -> object:
            raise RecursionError("too deep")

    monkeypatch.setattr(module, "get_parser", lambda media_type: Exploding())
    text = "# Heading\n\nbody " * 50
    chunks = MarkdownChunker(max_chunk_size=200, overlap=0).chunk_document(text, "x.md")
    assert chunks and all(len(c.text) <= 200 for c in chunks)
    assert {c.metadata["parser_version"] for c in chunks} == {"text-fallback-v1"}


def test_a_parse_with_wrong_offsets_is_not_trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    import kebab_chunk.integrations.markdown_chunker as module

    text = "# Heading\n\nbody text\n"
    real = parse_document(text.encode(), "x.md")
    shifted = real.model_copy(
        update={
            "blocks": tuple(
                b.model_copy(
                    update={
                        "spans": tuple(
                            s.model_copy(update={"char_start": s.char_start + 1}) for s in b.spans
                        )
                    }
                )
                for b in real.blocks
            )
        }
    )

    class Confused:
        def parse(self, raw: bytes, source_uri: str) -> object:
            return shifted

    monkeypatch.setattr(module, "get_parser", lambda media_type: Confused())
    chunks = MarkdownChunker().chunk_document(text, "x.md")
    assert [c.text for c in chunks] == ["# Heading\n\nbody text"]
    assert chunks[0].metadata["parser_version"] == "text-fallback-v1"


def test_lone_surrogates_do_not_raise_and_keep_offsets() -> None:
    text = "# T\n\nbad \ud800 char and more text"
    chunks = MarkdownChunker().chunk_document(text, "s.md")
    assert len(chunks) == 1
    assert chunks[0].text == text.replace("\ud800", "\ufffd")
    assert chunks[0].metadata["char_end"] == len(text)


def test_a_leading_byte_order_mark_keeps_offsets_into_the_given_text() -> None:
    text = "\ufeff# Title\n\nBody.\n"
    chunks = MarkdownChunker().chunk_document(text, "bom.md")
    for chunk in chunks:
        assert text[chunk.metadata["char_start"] : chunk.metadata["char_end"]] == chunk.text


def test_non_string_text_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="text must be a str"):
        MarkdownChunker().chunk_document(b"# bytes")  # type: ignore[arg-type]


# --- ids and exact offsets ---------------------------------------------------------------


def _line_of(text: str, offset: int) -> int:
    """1-based line of ``offset``, counted independently (CRLF, LF and CR end a line)."""
    return 1 + len(re.findall(r"\r\n|\r|\n", text[:offset]))


def test_offsets_are_exact_even_for_repeated_text() -> None:
    para = "Same words again and again."
    md = "# R\n\n" + "\n\n".join([para] * 8) + "\n\n# R\n\n" + "\n\n".join([para] * 8)
    chunks = MarkdownChunker(max_chunk_size=90, overlap=30).chunk_document(md, "r.md")
    starts = [c.metadata["char_start"] for c in chunks]
    assert starts == sorted(set(starts))  # strictly increasing: no two found at one place
    for chunk in chunks:
        meta = chunk.metadata
        assert md[meta["char_start"] : meta["char_end"]] == chunk.text
        assert meta["line_start"] == _line_of(md, meta["char_start"])
        assert meta["line_end"] == _line_of(md, meta["char_end"] - 1)
        for span in meta["spans"]:
            assert span["line_start"] == _line_of(md, span["char_start"])


def test_chunk_ids_are_unique_and_stable() -> None:
    md = "# A\n\n" + "text " * 300 + "\n\n## B\n\nmore\n"
    first = MarkdownChunker(max_chunk_size=200, overlap=20).chunk_document(md, "a.md")
    second = MarkdownChunker(max_chunk_size=200, overlap=20).chunk_document(md, "a.md")
    ids = [c.metadata["chunk_id"] for c in first]
    assert len(set(ids)) == len(ids)
    assert ids == [c.metadata["chunk_id"] for c in second]
    other_source = MarkdownChunker(max_chunk_size=200, overlap=20).chunk_document(md, "b.md")
    assert not set(ids) & {c.metadata["chunk_id"] for c in other_source}


def test_ids_match_the_registry_chunker_under_the_equivalent_policy() -> None:
    md = "# Guide\n\nIntro text.\n\n## Steps\n\n" + "step " * 400 + "\n\n```sh\nrun it\n```\n"
    api = MarkdownChunker(max_chunk_size=700, overlap=70)
    chunks = api.chunk_document(md, source="guides/g.md")
    doc = parse_document(md.encode("utf-8"), "guides/g.md")
    policy = make_policy(target_tokens=700, overlap_tokens=70, tokenizer="chars")
    records = get_chunker("md-header-chars-v1").chunk(doc, policy)
    assert [r.chunk_id for r in records] == [c.metadata["chunk_id"] for c in chunks]
    assert [r.text for r in records] == [c.text for c in chunks]
    assert api.chunk_records(md, source="guides/g.md") == records


def test_chunk_records_carry_headers_as_heading_path() -> None:
    md = "# A\n\n## B\n\ntext\n"
    records = MarkdownChunker().chunk_records(md, source="h.md")
    chunks = MarkdownChunker().chunk_document(md, source="h.md")
    for record, chunk in zip(records, chunks, strict=True):
        assert list(record.heading_path) == [h["text"] for h in chunk.metadata["headers"]]
        assert record.chunker_version == "md-header-chars-v1"


# --- version="md-header-chars-v2": exact slices, a leading byte order mark ------------------

V2 = "md-header-chars-v2"


def test_version_defaults_to_v1_and_accepts_v2() -> None:
    assert MarkdownChunker().version == "md-header-chars-v1"
    assert "version" not in repr(MarkdownChunker())  # the v1 repr is unchanged
    chunker = MarkdownChunker(max_chunk_size=300, overlap=30, version=V2)
    assert chunker.version == V2
    assert repr(chunker).endswith(f"strategy='headers', version='{V2}')")
    assert chunker.policy == MarkdownChunker(max_chunk_size=300, overlap=30).policy


@pytest.mark.parametrize("version", ["md-heading-v1", "v2", "", "md-header-chars-v3"])
def test_an_unknown_version_raises_value_error_naming_the_constraint(version: str) -> None:
    with pytest.raises(ValueError) as info:
        MarkdownChunker(version=version)
    message = str(info.value)
    assert message.startswith("version must be one of 'md-header-chars-v1', 'md-header-chars-v2'")
    assert message.count(". ") == 0 and message.endswith(".")


def test_a_leading_byte_order_mark_hides_the_first_heading_under_v1_not_v2() -> None:
    text = "\ufeff# Foo\n\nIntro.\n\n## Bar\n\nBody.\n"
    old = MarkdownChunker().chunk_document(text, "bom.md")
    assert old[0].metadata["headers"] == []  # v1's defect: the heading is lost
    assert old[1].metadata["headers"] == [{"level": 2, "text": "Bar"}]
    new = MarkdownChunker(version=V2).chunk_document(text, "bom.md")
    assert [c.text for c in new] == ["# Foo\n\nIntro.", "## Bar\n\nBody."]
    assert [c.metadata["headers"] for c in new] == [
        [{"level": 1, "text": "Foo"}],
        [{"level": 1, "text": "Foo"}, {"level": 2, "text": "Bar"}],
    ]
    for chunk in new:  # offsets still index the given text, BOM included
        meta = chunk.metadata
        assert text[meta["char_start"] : meta["char_end"]] == chunk.text
        assert meta["line_start"] == _line_of(text, meta["char_start"])
        for span in meta["spans"]:
            assert span["line_start"] == _line_of(text, span["char_start"])
    assert new[0].metadata["char_start"] == 1
    records = MarkdownChunker(version=V2).chunk_records(text, "bom.md")
    assert records[0].heading_path == ("Foo",)
    assert [r.source_spans[0].char_start for r in records] == [1, text.index("## Bar")]


def test_v2_with_a_bom_has_the_pipeline_ids_of_the_same_bytes() -> None:
    """The str with a BOM is the file ``text.encode()``: same ids, text and blocks as the
    pipeline's records of it, offsets one more (the pipeline decodes without the BOM)."""
    text = "\ufeff# Guide\r\n\r\n" + "step " * 120 + "\r\n\r\n## Next\r\n\r\ndone\r\n"
    api = MarkdownChunker(max_chunk_size=200, overlap=40, version=V2)
    records = api.chunk_records(text, "guides/g.md")
    doc = parse_document(text.encode("utf-8"), "guides/g.md")
    policy = make_policy(target_tokens=200, overlap_tokens=40, tokenizer="chars")
    pipeline = get_chunker(V2).chunk(doc, policy)
    assert len(records) > 3
    assert len({r.block_ids for r in records}) < len(records)  # slices: ids use offsets
    assert [r.chunk_id for r in records] == [p.chunk_id for p in pipeline]
    assert [r.text for r in records] == [p.text for p in pipeline]
    assert [r.block_ids for r in records] == [p.block_ids for p in pipeline]
    assert records[0].content_hash == pipeline[0].content_hash
    for record, piped in zip(records, pipeline, strict=True):
        for mine, theirs in zip(record.source_spans, piped.source_spans, strict=True):
            assert (mine.char_start, mine.char_end) == (theirs.char_start + 1, theirs.char_end + 1)
        assert text[record.source_spans[0].char_start : record.source_spans[-1].char_end] == (
            record.text
        )


def test_v2_ids_match_the_registry_chunker_under_the_equivalent_policy() -> None:
    md = "# Guide\n\nIntro text.\n\n## Steps\n\n" + "step " * 400 + "\n\n```sh\nrun it\n```\n"
    api = MarkdownChunker(max_chunk_size=700, overlap=70, version=V2)
    chunks = api.chunk_document(md, source="guides/g.md")
    doc = parse_document(md.encode("utf-8"), "guides/g.md")
    policy = make_policy(target_tokens=700, overlap_tokens=70, tokenizer="chars")
    records = get_chunker(V2).chunk(doc, policy)
    assert [r.chunk_id for r in records] == [c.metadata["chunk_id"] for c in chunks]
    assert api.chunk_records(md, source="guides/g.md") == records
    assert {r.chunker_version for r in records} == {V2}


@pytest.mark.parametrize(
    "md",
    [
        "# S\n\nbefore\n\n---\n\nafter\n",
        "# L\n\nSee [d][d].\n\n[d]: https://example.org\n\nMore.\n",
        "# T\r\n\r\nline one\r\nline two\r\n\r\nnext\r\n",
    ],
    ids=["thematic-break", "link-definition", "crlf"],
)
def test_v2_chunk_text_is_the_slice_its_offsets_cite_v1_is_not(md: str) -> None:
    old = MarkdownChunker().chunk_document(md, "g.md")
    assert any(md[c.metadata["char_start"] : c.metadata["char_end"]] != c.text for c in old)
    new = MarkdownChunker(version=V2).chunk_document(md, "g.md")
    for chunk in new:
        assert md[chunk.metadata["char_start"] : chunk.metadata["char_end"]] == chunk.text


def test_the_specification_holds_under_v2() -> None:
    """The specification's assertions, run with ``version="md-header-chars-v2"``."""
    chunker = MarkdownChunker(version=V2)
    assert chunker.chunk_document("", source="empty.md") == []
    assert chunker.chunk_document(" \n\t\n  ", source="blank.md") == []
    chunks = chunker.chunk_document("# Title\n## Section\nContent", source="test.md")
    assert [c.metadata["headers"] for c in chunks] == [
        [{"level": 1, "text": "Title"}],
        [{"level": 1, "text": "Title"}, {"level": 2, "text": "Section"}],
    ]
    assert all(c.metadata["source"] == "test.md" for c in chunks)
    large = MarkdownChunker(max_chunk_size=1024, version=V2).chunk_document(
        "# Title\n" + "A" * 5000, source="large.md"
    )
    assert len(large) > 1 and all(len(c.text) <= 1024 for c in large)
    plain = chunker.chunk_document("Just plain text without headers." * 10, source="plain.md")
    assert len(plain) == 1 and plain[0].metadata["headers"] == []
    md = "# Title\n\nIntro.\n\n## Part\n\nBody.\n"
    assert [c.text for c in chunker.chunk_document(md, "d.md")] == [
        c.text for c in MarkdownChunker().chunk_document(md, "d.md")
    ]
    small = MarkdownChunker(max_chunk_size=1, overlap=0, version=V2).chunk_document("# H\nab")
    assert [c.text for c in small] == ["#", "H", "a", "b"]


def test_v2_degrades_like_v1_and_keeps_offsets_after_a_bom() -> None:
    text = "\ufeff# Not a header here\n" + "data\x00" * 300  # NUL: the parser refuses it
    chunks = MarkdownChunker(max_chunk_size=256, overlap=16, version=V2).chunk_document(text)
    assert len(chunks) > 1 and all(len(c.text) <= 256 for c in chunks)
    assert {c.metadata["parser_version"] for c in chunks} == {"text-fallback-v1"}
    assert chunks[0].metadata["char_start"] == 1 and not chunks[0].text.startswith("\ufeff")
    for chunk in chunks:
        assert text[chunk.metadata["char_start"] : chunk.metadata["char_end"]] == chunk.text
