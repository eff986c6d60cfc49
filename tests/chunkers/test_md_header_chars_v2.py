"""The registry chunker ``md-header-chars-v2``: exact slices, runs, budget, ids, goldens.

v2 fixes one defect of ``md-header-chars-v1``: v1 joins a section's blocks with one ``"\\n"``
per line break, so CRLF between blocks, thematic breaks and link reference definitions
become ``"\\n"`` and its text is not what its spans cite. Each defect test below asserts the
old label has it and the new one does not. Documents come from the real Markdown parser
(``parse_document``), as in the pipeline; expected values are derived from the source text.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.chunkers import Chunker, get_chunker, registered_labels
from kebab_chunk.chunkers._header_chars import HeaderCharsChunker, char_budget
from kebab_chunk.chunkers.registry import label
from kebab_chunk.errors import ParseError, UnsupportedDocumentError
from kebab_chunk.integrations.markdown_chunker import MarkdownChunker
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy, LineSpan, make_policy
from kebab_chunk.model.ids import chunk_id
from kebab_chunk.parsers import parse_document
from kebab_chunk.parsers.decode import decode_text
from tests.chunkers.helpers import outputs_under_hash_seeds
from tests.chunkers.token_docs import page_doc
from tests.golden import assert_golden, parse_for_golden
from tests.test_markdown_chunker_properties import ANY_TEXT, MARKDOWN

LABEL = "md-header-chars-v2"
CHUNKER = HeaderCharsChunker(label("md-header-chars-v2"))
V1 = HeaderCharsChunker(label("md-header-chars-v1"))
ROOT = Path(__file__).resolve().parents[2]


def _chars(target: int, overlap: int = 0) -> ChunkPolicy:
    return make_policy(target_tokens=target, overlap_tokens=overlap, tokenizer="chars")


def _doc(source: str, uri: str = "doc.md") -> CanonicalDocument:
    return parse_document(source.encode("utf-8"), uri)


def _cited(source: str, record: Chunk) -> str:
    """The source from the record's first span start to its last span end."""
    first, last = record.source_spans[0], record.source_spans[-1]
    return source[first.char_start : last.char_end]


def _check_exact(source: str, record: Chunk) -> None:
    """The chunk is the exact source slice its spans cite, and every span slices its block."""
    assert _cited(source, record) == record.text
    for span in record.source_spans:
        assert isinstance(span, LineSpan)
        assert source[span.char_start : span.char_end] in record.text
        assert span.line_start == 1 + _line_breaks(source[: span.char_start])
        assert span.line_end == 1 + _line_breaks(source[: max(span.char_start, span.char_end - 1)])


def _line_breaks(text: str) -> int:
    """Line breaks in ``text``, CRLF, LF and a lone CR counted once each."""
    return len(re.findall(r"\r\n|\r|\n", text))


# --- registry and protocol ---------------------------------------------------------------


def test_registered_beside_v1() -> None:
    assert {LABEL, "md-header-chars-v1"} <= set(registered_labels())
    chunker = get_chunker(LABEL)
    assert isinstance(chunker, HeaderCharsChunker)
    assert isinstance(chunker, Chunker)
    assert chunker.label == LABEL
    assert "exact source slice" in chunker.accepts_description
    assert chunker.uses_tokenizers == frozenset({"bytes-3", "chars"})


def test_refuses_what_v1_refuses() -> None:
    pdf = page_doc(["page text"], "a.pdf", raw=b"%PDF-", parser_version="pdf-text-v1")
    assert not CHUNKER.accepts(pdf)
    with pytest.raises(UnsupportedDocumentError, match="not 'application/pdf'"):
        CHUNKER.chunk(pdf, _chars(100))
    inexact = pdf.model_copy(update={"media_type": "text/plain"})
    assert not CHUNKER.accepts(inexact)
    with pytest.raises(UnsupportedDocumentError, match="one lines span"):
        CHUNKER.chunk(inexact, _chars(100))
    assert CHUNKER.chunk(_doc(""), _chars(10)) == []


@pytest.mark.parametrize("chunker", [CHUNKER, V1], ids=["v2", "v1"])
def test_the_refusal_of_another_media_type_suggests_no_wrong_label(chunker: Chunker) -> None:
    """Issue 29: the refusal used to say "e.g. pdf-page-v1" for any media type (a CSV too);
    it now points at the listing that names each label's defaults."""
    csv = parse_document(b"a,b\n1,2\n", "t.csv")
    with pytest.raises(UnsupportedDocumentError) as caught:
        chunker.chunk(csv, _chars(100))
    message = str(caught.value)
    assert "pdf-page" not in message and "`kebab-chunk labels`" in message, message


def test_plan_rejects_a_bad_budget() -> None:
    with pytest.raises(ValueError, match="max_chars > 0"):
        HeaderCharsChunker(label("md-header-chars-v2")).plan_chunks(_doc("text"), 10, 10)


# --- the defect: v1 texts are not the slices they cite; v2 texts are ------------------------

#: Documents whose blocks are separated by more than blank lines (inline, so the shared
#: fixtures and every other label's goldens stay as they are).
GAPPY = {
    "thematic-break": "# S\n\nbefore\n\n---\n\nafter\n",
    "link-definitions": (
        "# Links\n\nSee [the docs][d] and [the API][a].\n\n"
        '[d]: https://example.org/docs\n[a]: https://example.org/api "API"\n\nMore text.\n'
    ),
    "crlf": "# T\r\n\r\nline one\r\nline two\r\n\r\nnext paragraph\r\n",
    "trailing-spaces": "# T\n\nfirst paragraph   \n\nsecond paragraph\n",
}


@pytest.mark.parametrize("name", sorted(GAPPY))
def test_v1_texts_are_not_source_slices_v2_texts_are(name: str) -> None:
    source = GAPPY[name]
    doc = _doc(source)
    old = V1.chunk(doc, _chars(1000))
    new = CHUNKER.chunk(doc, _chars(1000))
    assert any(_cited(source, r) != r.text for r in old), "v1's defect"
    for record in new:
        _check_exact(source, record)
    # Nothing but the text between blocks is lost: every block is in some chunk, whole.
    assert [b for r in new for b in r.block_ids] == [b.block_id for b in doc.blocks]


@pytest.mark.parametrize(
    "path",
    [
        ROOT / "fixtures" / "markdown" / "crlf-bom.md",
        ROOT / "fixtures" / "markdown" / "tables-quotes-html.md",
    ],
    ids=["crlf-bom", "thematic-break"],
)
@pytest.mark.parametrize("policy", [make_policy(), _chars(300, 60)], ids=["default", "chars-300"])
def test_fixture_files_v1_inexact_v2_exact(path: Path, policy: ChunkPolicy) -> None:
    raw = path.read_bytes()
    doc = parse_document(raw, path.name)
    source, _ = decode_text(raw, path.name)
    assert any(_cited(source, r) != r.text for r in V1.chunk(doc, policy)), "v1's defect"
    records = CHUNKER.chunk(doc, policy)
    assert records
    for record in records:
        _check_exact(source, record)


def test_crlf_gaps_are_kept_and_counted() -> None:
    source = GAPPY["crlf"]
    (record,) = CHUNKER.chunk(_doc(source), _chars(1000))
    assert record.text == source.rstrip("\r\n")
    spans = [s for s in record.source_spans if isinstance(s, LineSpan)]
    assert [(s.line_start, s.line_end) for s in spans] == [(1, 1), (3, 4), (6, 6)]
    # The budget counts every character of the gaps, CRs included.
    assert len(record.text) == 43 and record.text.count("\r") == 5
    pieces = CHUNKER.chunk(_doc(source), _chars(42))
    assert len(pieces) > 1 and all(len(r.text) <= 42 for r in pieces)


def test_an_unknown_gap_ends_a_run_and_its_text_is_in_no_chunk() -> None:
    source = GAPPY["thematic-break"]
    records = CHUNKER.chunk(_doc(source), _chars(1000))
    assert [r.text for r in records] == ["# S\n\nbefore", "after"]
    assert all(r.heading_path == ("S",) for r in records)
    assert all("---" not in r.text for r in records)


def test_overlap_never_crosses_an_unknown_gap() -> None:
    paragraphs = [f"para{i} " + "w " * 20 for i in range(4)]
    source = "# S\n\n" + "\n\n".join(paragraphs[:2]) + "\n\n***\n\n" + "\n\n".join(paragraphs[2:])
    records = CHUNKER.chunk(_doc(source), _chars(80, 60))
    rule = source.index("***")
    for record in records:
        first, last = record.source_spans[0], record.source_spans[-1]
        assert last.char_end < rule or first.char_start > rule
        _check_exact(source, record)


def test_recursive_chunk_marks_a_section_cut_at_an_unknown_gap() -> None:
    md = "# A\n\none\n\n---\n\ntwo\n\n# B\n\nthree\n"
    chunks = MarkdownChunker(version=LABEL).chunk_document(md, "r.md")
    assert [(c.text, c.metadata["recursive_chunk"]) for c in chunks] == [
        ("# A\n\none", True),
        ("two", True),
        ("# B\n\nthree", False),
    ]


def test_plain_lf_markdown_gives_v1_texts() -> None:
    """Where v1 already cut exact slices (LF, blank lines only), v2 has the same texts."""
    source = (
        "# Title\n\nIntro paragraph.\n\n## Part\n\n- one\n- two\n\n```py\nx = 1\n```\n\n"
        + "\n\n".join(f"Sentence {i} " + " ".join(["word"] * 30) for i in range(6))
        + "\n"
    )
    doc = _doc(source)
    for policy in (_chars(1000), _chars(120, 30), make_policy(target_tokens=40, overlap_tokens=8)):
        old, new = V1.chunk(doc, policy), CHUNKER.chunk(doc, policy)
        assert [r.text for r in new] == [r.text for r in old]
        assert [r.source_spans for r in new] == [r.source_spans for r in old]
        assert [r.heading_path for r in new] == [r.heading_path for r in old]
        assert not {r.chunk_id for r in new} & {r.chunk_id for r in old}  # the label is in the id


# --- budget and records --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "size"),
    [(make_policy(target_tokens=10, overlap_tokens=0), 30), (_chars(10), 10)],
)
def test_the_policy_sets_the_character_budget(policy: ChunkPolicy, size: int) -> None:
    records = CHUNKER.chunk(_doc("x" * 95), policy)
    assert [len(r.text) for r in records] == [size] * (95 // size) + [95 % size]
    for record in records:
        assert record.token_estimate == math.ceil(len(record.text.encode("utf-8")) / 3)


def test_ids_follow_the_recipe() -> None:
    source = "# A\n\nalpha\n\n# B\n\n" + " ".join(f"w{i}" for i in range(200)) + "\n"
    doc = _doc(source, "ids.md")
    policy = _chars(120, 20)
    records = CHUNKER.chunk(doc, policy)
    assert records[0].chunk_id == chunk_id(
        doc.doc_id, LABEL, records[0].block_ids, policy.policy_hash
    )
    sliced = [r for r in records if r.block_ids == (doc.blocks[3].block_id,)]
    assert len(sliced) > 3
    for record in sliced:
        guard = f"{policy.policy_hash}#c{record.source_spans[0].char_start}"
        assert record.chunk_id == chunk_id(doc.doc_id, LABEL, record.block_ids, guard)
    assert len({r.chunk_id for r in records}) == len(records)
    assert all(r.chunker_version == LABEL and r.policy_hash == policy.policy_hash for r in records)


def test_same_records_across_hash_seeds() -> None:
    script = (
        "import json\n"
        "from kebab_chunk.chunkers import get_chunker\n"
        "from kebab_chunk.model import make_policy\n"
        "from kebab_chunk.parsers import parse_document\n"
        "md = '# A\\r\\n\\r\\n' + ' '.join(f'w{i}' for i in range(300))\n"
        "md += '\\r\\n\\r\\n---\\r\\n\\r\\n## B\\r\\n\\r\\n| x |\\r\\n|---|\\r\\n| 1 |\\r\\n'\n"
        "doc = parse_document(md.encode(), 'seed.md')\n"
        "policy = make_policy(target_tokens=50, overlap_tokens=10)\n"
        "recs = get_chunker('md-header-chars-v2').chunk(doc, policy)\n"
        "print(json.dumps([r.model_dump(mode='json') for r in recs]))\n"
    )
    outputs = [json.loads(out) for out in outputs_under_hash_seeds(script, ("0", "12345"))]
    assert outputs[0] == outputs[1]
    assert len(outputs[0]) > 3


# --- properties: exact slices within the budget on any text ---------------------------------


def promises(source: str | None, chunks: Sequence[Chunk], policy: ChunkPolicy) -> None:
    """What the label promises on any document it accepts (also run by
    tests/properties/test_every_chunker.py): every chunk, media included, is within the
    character budget and is the exact slice of the decoded ``source`` its spans cite."""
    assert source is not None, "md-header-chars-v2 accepts only line-spanned text"
    max_chars, _ = char_budget(policy)
    for chunk in chunks:
        assert 0 < len(chunk.text) <= max_chars
        assert _cited(source, chunk) == chunk.text


_LONE_CR = re.compile(r"\r(?!\n)")
_GAPS = st.sampled_from(["\n\n", "\r\n\r\n", "\n\n---\n\n", "\n\n[r]: /x\n\n", "  \n\n", "\n \n"])


@st.composite
def _gappy_markdown(draw: st.DrawFn) -> str:
    """Generated Markdown blocks joined by blank lines, rules, link definitions, CRLF."""
    blocks = draw(st.lists(MARKDOWN, min_size=1, max_size=4))
    out = blocks[0]
    for block in blocks[1:]:
        out += draw(_GAPS) + block
    return out.replace("\n", "\r\n") if draw(st.booleans()) else out


@given(
    # Lone CRs between blocks are the one documented inexact case (module docstring): LF here.
    source=st.one_of(_gappy_markdown(), ANY_TEXT).map(lambda text: _LONE_CR.sub("\n", text)),
    size=st.integers(1, 200),
    overlap_share=st.floats(0, 0.9),
)
def test_every_chunk_is_an_exact_slice_within_the_budget(
    source: str, size: int, overlap_share: float
) -> None:
    raw = source.encode("utf-8")
    try:
        doc = parse_document(raw, "g.md")
    except ParseError:  # binary-looking text (NUL): the pipeline makes it an error row
        return
    decoded, _ = decode_text(raw, "g.md")
    policy = _chars(size, int(size * overlap_share))
    records = CHUNKER.chunk(doc, policy)
    assert [r.position for r in records] == list(range(len(records)))
    starts = [r.source_spans[0].char_start for r in records]
    assert starts == sorted(set(starts))
    promises(decoded, records, policy)


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
        _check_exact(source, record)
    assert_golden(LABEL, name, [r.model_dump(mode="json") for r in records])
