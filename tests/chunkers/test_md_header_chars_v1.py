"""The registry chunker ``md-header-chars-v1``: budget mapping, records, ids, goldens.

Documents come from the real Markdown parser (``parse_document``), as in the pipeline;
expected values are derived here from the source text and the documented rules.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from kebab_chunk.chunkers import Chunker, get_chunker, registered_labels
from kebab_chunk.chunkers._header_chars import HeaderCharsChunker, char_budget
from kebab_chunk.chunkers.registry import label
from kebab_chunk.errors import ParseError, UnsupportedDocumentError
from kebab_chunk.model import (
    CanonicalDocument,
    Chunk,
    ChunkPolicy,
    LineSpan,
    make_policy,
)
from kebab_chunk.model.ids import chunk_id
from kebab_chunk.parsers import parse_document
from kebab_chunk.parsers.decode import decode_text
from tests.chunkers.helpers import outputs_under_hash_seeds
from tests.chunkers.token_docs import page_doc
from tests.golden import assert_golden, parse_for_golden

LABEL = "md-header-chars-v1"
CHUNKER = HeaderCharsChunker(label("md-header-chars-v1"))
ROOT = Path(__file__).resolve().parents[2]


def _chunk(md: str, policy: ChunkPolicy, uri: str = "doc.md") -> list[Chunk]:
    return CHUNKER.chunk(parse_document(md.encode("utf-8"), uri), policy)


def _chars(target: int, overlap: int = 0) -> ChunkPolicy:
    return make_policy(target_tokens=target, overlap_tokens=overlap, tokenizer="chars")


def _check_spans(source: str, record: Chunk) -> None:
    """Each span slices its piece out of the source; the pieces rebuild the text."""
    spans = record.source_spans
    assert all(isinstance(s, LineSpan) for s in spans)
    rebuilt = ""
    for i, span in enumerate(spans):
        assert isinstance(span, LineSpan)
        if i:
            previous = spans[i - 1]
            assert isinstance(previous, LineSpan)
            rebuilt += "\n" * (span.line_start - previous.line_end)
        rebuilt += source[span.char_start : span.char_end]
    assert rebuilt == record.text


# --- registry and protocol ---------------------------------------------------------------


def test_registered_under_its_label() -> None:
    assert LABEL in registered_labels()
    chunker = get_chunker(LABEL)
    assert isinstance(chunker, HeaderCharsChunker)
    assert isinstance(chunker, Chunker)
    assert chunker.label == LABEL
    assert "characters" in chunker.accepts_description


def test_budget_mapping() -> None:
    assert char_budget(make_policy(target_tokens=100, overlap_tokens=10)) == (300, 30)
    assert char_budget(_chars(100, 10)) == (100, 10)
    # Any other tokenizer name uses the byte proxy's ratio too.
    tiktoken = make_policy(target_tokens=50, overlap_tokens=5, tokenizer="tiktoken:cl100k_base")
    assert char_budget(tiktoken) == (150, 15)


@pytest.mark.parametrize(
    ("policy", "size"),
    [(make_policy(target_tokens=10, overlap_tokens=0), 30), (_chars(10), 10)],
)
def test_the_policy_sets_the_character_budget(policy: ChunkPolicy, size: int) -> None:
    word = "x" * 95  # no whitespace: hard cuts of exactly the budget
    records = _chunk(word, policy)
    assert [len(r.text) for r in records] == [size] * (95 // size) + [95 % size]


def test_token_estimate_is_the_byte_proxy() -> None:
    records = _chunk("# Überschrift\n\nGrüße aus Köln, 東京 und überall.\n", _chars(1000))
    for record in records:
        assert record.token_estimate == math.ceil(len(record.text.encode("utf-8")) / 3)


# --- accepted documents --------------------------------------------------------------------


def _pdf_like() -> CanonicalDocument:
    return page_doc(["page text"], "a.pdf", raw=b"%PDF-", parser_version="pdf-text-v1")


def test_pdf_documents_are_refused_with_a_sentence() -> None:
    doc = _pdf_like()
    assert not CHUNKER.accepts(doc)
    with pytest.raises(UnsupportedDocumentError, match="not 'application/pdf'"):
        CHUNKER.chunk(doc, _chars(100))


def test_blocks_without_an_exact_lines_span_are_refused() -> None:
    doc = _pdf_like().model_copy(update={"media_type": "text/plain"})
    assert not CHUNKER.accepts(doc)
    with pytest.raises(UnsupportedDocumentError, match="one lines span"):
        CHUNKER.chunk(doc, _chars(100))


def test_markdown_and_empty_documents() -> None:
    doc = parse_document(b"# T\n\nbody\n", "a.md")
    assert CHUNKER.accepts(doc)
    empty = parse_document(b"", "empty.md")
    assert CHUNKER.accepts(empty)
    assert CHUNKER.chunk(empty, _chars(10)) == []


# --- records -------------------------------------------------------------------------------


def test_records_list_each_touched_block_once_in_order() -> None:
    md = "# Title\n\nFirst paragraph.\n\n- item one\n- item two\n\n## Next\n\nLast.\n"
    doc = parse_document(md.encode(), "a.md")
    records = CHUNKER.chunk(doc, _chars(1000))
    ids = [b.block_id for b in doc.blocks]
    assert [list(r.block_ids) for r in records] == [ids[:3], ids[3:]]
    assert [r.heading_path for r in records] == [("Title",), ("Title", "Next")]
    assert [r.position for r in records] == [0, 1]
    for record in records:
        _check_spans(md, record)
        assert record.chunker_version == LABEL
        assert record.parser_version == doc.parser_version
        assert record.content_hash == doc.content_hash


def test_whole_block_chunks_use_the_plain_policy_hash() -> None:
    md = "# A\n\nalpha\n\n# B\n\nbeta\n"
    doc = parse_document(md.encode(), "ids.md")
    policy = _chars(1000)
    records = CHUNKER.chunk(doc, policy)
    for record in records:
        expected = chunk_id(doc.doc_id, LABEL, record.block_ids, policy.policy_hash)
        assert record.chunk_id == expected
        assert record.policy_hash == policy.policy_hash


def test_slices_of_a_block_use_the_slice_guard() -> None:
    md = "# A\n\n" + " ".join(f"w{i}" for i in range(200)) + "\n"
    doc = parse_document(md.encode(), "slices.md")
    policy = _chars(120, 20)
    records = CHUNKER.chunk(doc, policy)
    paragraph = doc.blocks[1].block_id
    sliced = [r for r in records if r.block_ids == (paragraph,)]
    assert len(sliced) > 3
    for record in sliced:
        start = record.source_spans[0].char_start
        guard = f"{policy.policy_hash}#c{start}"
        assert record.chunk_id == chunk_id(doc.doc_id, LABEL, record.block_ids, guard)
        assert record.policy_hash == policy.policy_hash
    assert len({r.chunk_id for r in records}) == len(records)


def test_gaps_between_blocks_become_one_newline_per_line_break() -> None:
    # A thematic break is no block: the four line breaks around it stay, the rule does not.
    md = "# S\n\nbefore\n\n---\n\nafter\n"
    (record,) = _chunk(md, _chars(1000))
    assert record.text == "# S\n\nbefore\n\n\n\nafter"
    _check_spans(md, record)


def test_crlf_pieces_are_exact_and_gaps_normalised() -> None:
    md = "# T\r\n\r\nline one\r\nline two\r\n"
    (record,) = _chunk(md, _chars(1000))
    assert record.text == "# T\n\nline one\r\nline two"
    _check_spans(md, record)
    assert [(s.line_start, s.line_end) for s in record.source_spans] == [(1, 1), (3, 4)]


def test_split_pieces_carry_their_own_line_numbers() -> None:
    code = "```\n" + "".join(f"line {i}\n" for i in range(1, 31)) + "```"
    md = f"# Code\n\n{code}\n"
    records = _chunk(md, _chars(60, 0))
    assert all(len(r.text) <= 60 for r in records)
    for record in records:
        _check_spans(md, record)
        for span in record.source_spans:
            assert isinstance(span, LineSpan)
            assert span.line_start == md.count("\n", 0, span.char_start) + 1
            assert span.line_end == md.count("\n", 0, span.char_end - 1) + 1


def test_captions_of_images_in_the_chunk() -> None:
    md = '# Pics\n\n![A cat](cat.png "The cat")\n\n![A dog](dog.png)\n\ntext\n'
    (record,) = _chunk(md, _chars(1000))
    assert record.captions == ("The cat", "A dog")


def test_plan_rejects_a_bad_budget() -> None:
    doc = parse_document(b"text", "a.md")
    with pytest.raises(ValueError, match="max_chars > 0"):
        HeaderCharsChunker(label("md-header-chars-v1")).plan_chunks(doc, 10, 10)


def test_same_records_across_hash_seeds() -> None:
    script = (
        "import json, sys\n"
        "from kebab_chunk.chunkers import get_chunker\n"
        "from kebab_chunk.model import make_policy\n"
        "from kebab_chunk.parsers import parse_document\n"
        "md = '# A\\n\\n' + ' '.join(f'w{i}' for i in range(300))\n"
        "md += '\\n\\n## B\\n\\n| x |\\n|---|\\n| 1 |\\n'\n"
        "doc = parse_document(md.encode(), 'seed.md')\n"
        "policy = make_policy(target_tokens=50, overlap_tokens=10)\n"
        "recs = get_chunker('md-header-chars-v1').chunk(doc, policy)\n"
        "print(json.dumps([r.model_dump(mode='json') for r in recs]))\n"
    )
    outputs = [json.loads(out) for out in outputs_under_hash_seeds(script, ("0", "12345"))]
    assert outputs[0] == outputs[1]
    assert len(outputs[0]) > 3


# --- golden snapshots over the Markdown fixtures -------------------------------------------

_FIXTURE_DIRS = (ROOT / "fixtures" / "markdown", ROOT / "fixtures" / "corpus")
FIXTURES = sorted(
    path
    for directory in _FIXTURE_DIRS
    if directory.is_dir()
    for path in directory.rglob("*.md")
    if path.name != "README.md"  # notes about the fixtures, not fixtures
)
GOLDEN_POLICIES = {
    "default": make_policy(),  # 512 tokens x 3 = 1536 characters, overlap 192
    "chars-300": _chars(300, 60),
}


def test_there_are_markdown_fixtures() -> None:
    assert FIXTURES, "no Markdown fixtures found under fixtures/"


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT / "fixtures")))
@pytest.mark.parametrize("policy_name", sorted(GOLDEN_POLICIES))
def test_golden(path: Path, policy_name: str) -> None:
    policy = GOLDEN_POLICIES[policy_name]
    uri = path.relative_to(ROOT / "fixtures").as_posix()
    raw = path.read_bytes()
    name = f"{uri.replace('/', '__').removesuffix('.md')}.{policy_name}"
    try:
        doc = parse_for_golden(raw, uri)
    except ParseError as exc:  # the corpus holds hostile files on purpose; pin that too
        assert_golden(LABEL, name, {"parse_error": exc.error_type})
        return
    source, _ = decode_text(raw, uri)
    records = CHUNKER.chunk(doc, policy)
    max_chars, _ = char_budget(policy)
    # Invariants first, then the snapshot.
    assert [r.position for r in records] == list(range(len(records)))
    for record in records:
        assert len(record.text) <= max_chars
        _check_spans(source, record)
    assert_golden(LABEL, name, [r.model_dump(mode="json") for r in records])
