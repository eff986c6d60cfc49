"""``chunk_table`` gives the same Arrow table through the compiled core as through Python.

The core turns decoded Markdown into chunk rows in one pass (md-pyromark-v1 blocks, the
md-heading engine, ids, ``embed_text``); the Python path parses, chunks and fills in the
embedding fields record by record. Compared table for table (every column, every value)
under both engine labels and several policies, on the fixtures' Markdown, the installed
distributions' READMEs and generated documents full of what the two could read
differently: image and audio references, escapes, setext and ATX headings with closing
hashes, empty headings, CRLF and lone CR line ends, front matter that is and is not YAML,
thematic breaks and link definitions between blocks, non-ASCII text.
"""

from __future__ import annotations

from functools import cache
from types import ModuleType
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.corpora import distribution_readmes, fixture_markdown
from kebab_chunk._core import using
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.table import chunk_table, chunk_tables

LABELS = ("md-heading-v2", "md-heading-v3")
POLICIES = (
    ChunkPolicy(target_tokens=256, overlap_tokens=64),
    ChunkPolicy(target_tokens=40, overlap_tokens=10),
    ChunkPolicy(target_tokens=300, overlap_tokens=30, tokenizer="chars"),
    ChunkPolicy(target_tokens=64, overlap_tokens=8, merge_peers=False),
)


def _both(raw: bytes, uri: str, label: str, policy: ChunkPolicy) -> tuple[pa.Table, pa.Table]:
    fast = chunk_table(raw, uri, label, policy)
    with using("python"):
        slow = chunk_table(raw, uri, label, policy)
    return fast, slow


def _explain(fast: pa.Table, slow: pa.Table) -> str:
    a, b = fast.to_pylist(), slow.to_pylist()
    if len(a) != len(b):
        return f"{len(a)} rows against {len(b)}"
    for x, y in zip(a, b, strict=True):
        for key in x:
            if x[key] != y[key]:
                return f"row {x['position']} {key}: {x[key]!r} against {y[key]!r}"
    return "schemas differ"


@cache
def _documents() -> tuple[tuple[str, bytes], ...]:
    docs = list(fixture_markdown().documents) + list(distribution_readmes().documents)[:60]
    return tuple((f"file:///{i}-{d.name.replace('/', '_')}.md", d.raw) for i, d in enumerate(docs))


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: f"{p.tokenizer}-{p.target_tokens}")
@pytest.mark.parametrize("label", LABELS)
def test_real_documents_give_the_same_table(
    compiled: ModuleType, label: str, policy: ChunkPolicy
) -> None:
    rows = 0
    for uri, raw in _documents():
        fast, slow = _both(raw, uri, label, policy)
        assert fast.equals(slow), f"{uri}: {_explain(fast, slow)}"
        rows += fast.num_rows
    assert rows > 300  # the documents really were chunked


def test_the_core_takes_ordinary_documents(compiled: ModuleType) -> None:
    """Most documents are not declined: the comparison above is of two paths, not one."""
    rows: list[int] = []
    original = compiled.chunk_markdown

    def counting(*args: object) -> Any:
        found = original(*args)
        rows.extend(found["doc_rows"])
        return found

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compiled, "chunk_markdown", counting)
        chunk_tables([(raw, uri) for uri, raw in _documents()], "md-heading-v3", POLICIES[0])
    declined = rows.count(-1)
    assert len(rows) == len(_documents())
    assert len(rows) - declined > 10 * declined


def test_a_batch_is_the_documents_one_after_another(compiled: ModuleType) -> None:
    docs = [(raw, uri) for uri, raw in _documents()[:30]]
    docs.insert(5, ("# Not UTF-8 \xff\n".encode("latin-1"), "file:///latin.md"))
    docs.insert(9, (b"plain text file\n", "file:///notes.txt"))
    docs.insert(12, (b"\xef\xbb\xbf# With a BOM\n\nText \xc3\xa9.\n", "file:///bom.md"))
    docs.insert(14, (b"\xef\xbb\xbf---\ntitle: T\n---\n# Body\n\nText.\n", "file:///bom-front.md"))
    docs.insert(16, (b"---\n- a list, not front matter\n---\n# Body\n", "file:///list-front.md"))
    docs.insert(18, (b"# Broken \xe2\x82 UTF-8 past the start\n", "file:///broken.md"))
    policy = POLICIES[1]
    batch = chunk_tables(docs, "md-heading-v3", policy)
    assert batch.equals(
        pa.concat_tables([chunk_table(r, u, "md-heading-v3", policy) for r, u in docs])
    )
    with using("python"):
        assert batch.equals(chunk_tables(docs, "md-heading-v3", policy))


_PART = st.sampled_from(
    [
        "# Title\n\n",
        "Setext title\n============\n\n",
        "## Closing hashes ##\n",
        "#\n",
        "### \\*escaped\\* heading\n",
        "Plain words. Another sentence that runs on and on.\nWrapped line here.\n\n",
        "\r\n",
        "\r",
        "\n",
        "- item one\n- item two\n  - nested\n",
        "| a | b |\n|---|---|\n| 1 | 2 |\n",
        "```python\ncode line\n```\n",
        "> quoted text\n",
        "***\n",
        "[ref]: https://example.com\n",
        "![alt text](img.png)\n\n",
        '![](pic.jpg "A title")\n\n',
        "![spoken](talk.MP3)\n\n",
        "![x](<a b.png>)\n\n",
        "Not only ![inline](i.png) an image.\n\n",
        "Ünïcödé 中文句子。下一句！ 😀\n\n",
        "trailing blanks   \n",
        'controls \x01\x1f\x7f "quoted" back\\slash\ttab\x0cfeed\x08 end\n\n',
        "word " * 30 + "\n\n",
    ]
)
_FRONT = st.sampled_from(["", "---\ntitle: T\n---\n", "---\n- a list\n---\n", "---\n: bad\n---\n"])


@settings(max_examples=120)
@given(
    _FRONT,
    st.lists(_PART, min_size=1, max_size=25).map("".join),
    st.sampled_from(POLICIES),
    st.sampled_from(LABELS),
)
def test_generated_markdown_gives_the_same_table(
    compiled: ModuleType, front: str, body: str, policy: ChunkPolicy, label: str
) -> None:
    raw = (front + body).encode("utf-8")
    fast, slow = _both(raw, "file:///generated.md", label, policy)
    assert fast.equals(slow), _explain(fast, slow)


def test_a_heading_line_md_heading_v3_cuts_is_left_to_python(compiled: ModuleType) -> None:
    text = "# " + "long heading words " * 20 + "\n\nBody text.\n"
    policy = ChunkPolicy(target_tokens=40, overlap_tokens=0)
    found = compiled.chunk_markdown(
        [(text.encode(), 0, "u")],
        "md-heading-v3",
        "p",
        40,
        0,
        True,
        "bytes-3",
        True,
        True,
        1000,
    )
    assert found["doc_rows"] == [-1]
    fast, slow = _both(text.encode(), "file:///long.md", "md-heading-v3", policy)
    assert fast.equals(slow)
    assert fast.column("heading_path")[0].as_py()[0] != "long heading words " * 20  # cut
