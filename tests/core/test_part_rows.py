"""The shard writer's rows by the compiled core equal the Python path's, byte for byte.

``_WritePartFn`` (kebab_chunk/beam/write.py) hands a shard's sorted spill segments to the
core (``kebab_chunk.output.part_rows.core_part_rows``) and takes the Python path
(``merged_segments``, ``_unique_rows``, ``rows_table``) when it declines. Here both read
the same spill and run files, made by the real spill functions from rows the Python
encoder wrote: the tables must give the same Parquet bytes and the per-source counts the
same lines. What the core cannot read exactly (conflicting records, another encoding,
text that is not UTF-8, a truncated file, a panic) must be declined, never guessed.
"""

from __future__ import annotations

import json
import marshal
import random
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kebab_chunk.beam.spill import Segment, merged_segments, split_by_shard, write_spill
from kebab_chunk.beam.write import _unique_rows
from kebab_chunk.chunkers.embedding import with_embedding
from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.output.chunk_index import line_of_row
from kebab_chunk.output.part_rows import core_part_rows
from kebab_chunk.output.records import ErrorRecord
from kebab_chunk.output.schema import parquet_bytes, rows_table
from kebab_chunk.output.spill_entry import make_entry, row_entry, row_of
from kebab_chunk.parsers.registry import parse_document

LABEL = "md-heading-v3"
Row = tuple[Any, ...]

_TEXT = st.text(max_size=40)
_INTS = st.integers(-(2**40), 2**40)
_OPT_INTS = st.none() | _INTS
_SPAN = st.tuples(
    st.sampled_from(["lines", "page", "element"]),
    _OPT_INTS,
    _OPT_INTS,
    _OPT_INTS,
    st.none() | _TEXT,
    _INTS,
    _INTS,
)
_STRINGS = st.lists(_TEXT, max_size=3).map(tuple)
#: A row without its id (given by position, so ids are unique) in ROW_FIELDS order.
_BODY = st.tuples(
    st.sampled_from(["d1", "d2"]),  # doc_id
    st.sampled_from(["a.md", "b/c.md", "\u00e9.pdf"]),  # source_uri
    st.sampled_from(["p1", "p2"]),  # policy_hash
    st.sampled_from(["md-pyromark-v1", "pdf-pypdf-v1"]),  # parser_version
    _INTS,  # position
    _TEXT,  # text
    _STRINGS,  # heading_path
    _STRINGS,  # captions
    _STRINGS,  # block_ids
    st.lists(_SPAN, max_size=3).map(tuple),  # source_spans
    _INTS,  # token_estimate
    _TEXT,  # content_hash
    _TEXT,  # embed_text
    _INTS,  # embed_tokens
)


def _row(chunk_id: str, body: Sequence[Any]) -> Row:
    doc_id, uri, policy, parser, *rest = body
    return (chunk_id, doc_id, uri, LABEL, policy, parser, *rest)


def _chains(directory: str, spills: Sequence[list[bytes]], groups: int = 2) -> list[list[Segment]]:
    """The segments of shard 0 of 1 per group of spill files, as ``_WritePartFn`` gets
    them: each group split (in several runs) by the real spill functions."""
    paths = [write_spill(directory, LABEL, list(entries)) for entries in spills if entries]
    chains: list[list[Segment]] = []
    for g in range(groups):
        mine = paths[g::groups]
        if mine:
            runs = sorted(
                (run, segment)
                for _, run, segment in split_by_shard(directory, LABEL, mine, 1, 2048)
            )
            chains.append([segment for _, segment in runs])
    return chains


def _python(chains: list[list[Segment]]) -> tuple[bytes, list[Any], list[ErrorRecord]]:
    per_source: dict[str, list[str]] = defaultdict(list)
    errors: list[ErrorRecord] = []
    table = rows_table(_unique_rows(LABEL, merged_segments(chains), per_source, errors))
    counts = [(uri, len(lines), "\n".join(lines)) for uri, lines in sorted(per_source.items())]
    return parquet_bytes(table), counts, errors


def _core(chains: list[list[Segment]]) -> tuple[bytes, list[Any]] | None:
    found = core_part_rows(chains)
    return None if found is None else (parquet_bytes(found[0]), found[1])


def _spills(entries: list[bytes], rng: random.Random, files: int) -> list[list[bytes]]:
    spills: list[list[bytes]] = [[] for _ in range(files)]
    for entry in entries:
        spills[rng.randrange(files)].append(entry)
        if rng.random() < 0.2:  # an identical duplicate elsewhere (a retried bundle)
            spills[rng.randrange(files)].append(entry)
    return spills


@settings(max_examples=60, deadline=None)
@given(st.lists(_BODY, max_size=25), st.integers(0, 2**32), st.integers(1, 4))
def test_generated_rows_give_the_python_paths_bytes_and_counts(
    compiled: ModuleType, bodies: list[Sequence[Any]], seed: int, files: int
) -> None:
    rng = random.Random(seed)
    rows = [_row(f"{rng.getrandbits(24):06x}{i}", body) for i, body in enumerate(bodies)]
    with tempfile.TemporaryDirectory() as tmp:
        chains = _chains(tmp, _spills([row_entry(r) for r in rows], rng, files))
        table, counts, errors = _python(chains)
        assert not errors
        assert _core(chains) == (table, counts)


def test_a_shard_of_several_batches_gives_the_same_bytes(
    compiled: ModuleType, tmp_path: Path
) -> None:
    """Over ``BATCH_ROWS`` rows, where the Python table is built in chunks."""
    rng = random.Random(5)
    rows = [
        _row(
            f"{i:08x}",
            (
                "d",
                f"docs/{i % 37}.md",
                "p",
                "md-pyromark-v1",
                i,
                "word " * rng.randrange(50),
                ("H1", f"H2 {i}"),
                (),
                (f"b{i}",),
                (("lines", i, i + 2, None, None, 0, 10),),
                rng.randrange(100),
                "c",
                "e",
                7,
            ),
        )
        for i in range(2600)
    ]
    chains = _chains(str(tmp_path), _spills([row_entry(r) for r in rows], rng, 5))
    table, counts, _ = _python(chains)
    assert _core(chains) == (table, counts)


def _one(i: int, text: str = "t") -> Row:
    return _row(
        f"id{i}",
        ("d", "a.md", "p", "md-pyromark-v1", i, text, (), (), (), (), 1, "c", text, 1),
    )


def _chunk_rows() -> list[Row]:
    """Rows of real chunks (the conflict path validates them as Chunks)."""
    doc = parse_document(b"# A\n\none\n\n# B\n\ntwo\n", "a.md")
    chunker = get_chunker(LABEL)
    policy = ChunkPolicy()
    return [row_of(c) for c in with_embedding(chunker.chunk(doc, policy), chunker, policy)]


def test_conflicting_records_under_one_id_are_declined(
    compiled: ModuleType, tmp_path: Path
) -> None:
    """Two different records under one id become error rows on the Python path."""
    first, second = _chunk_rows()
    clash = (first[0], *second[1:])  # the first id with the second record
    chains = _chains(str(tmp_path), [[row_entry(first), row_entry(second)], [row_entry(clash)]])
    assert _core(chains) is None
    assert _python(chains)[2]


def test_rows_in_another_encoding_are_declined(compiled: ModuleType, tmp_path: Path) -> None:
    row = _one(1)
    other = make_entry(row[0], b"J" + json.dumps(row).encode(), line_of_row(row))
    chains = _chains(str(tmp_path), [[row_entry(_one(0)), other]])
    assert _core(chains) is None
    assert not _python(chains)[2]


def test_text_that_is_not_utf8_is_declined(compiled: ModuleType, tmp_path: Path) -> None:
    """marshal keeps a lone surrogate (no writer makes such a row: its index line cannot
    be hashed); the core reads UTF-8 only and leaves it to the Python path."""
    row = _one(1, "bad \ud800")
    entry = make_entry(row[0], b"M" + marshal.dumps(row, 2), f"{row[0]}\tx\ty")
    chains = _chains(str(tmp_path), [[row_entry(_one(0)), entry]])
    assert _core(chains) is None


def test_a_truncated_file_is_declined_and_the_python_path_says_so(
    compiled: ModuleType, tmp_path: Path
) -> None:
    chains = _chains(str(tmp_path), [[row_entry(_one(i)) for i in range(5)]], groups=1)
    path, offset, length = chains[0][-1]
    Path(path).write_bytes(Path(path).read_bytes()[: offset + length - 3])
    assert _core(chains) is None
    with pytest.raises(OSError, match="truncated"):
        _python(chains)


def test_a_panic_in_the_core_is_declined(compiled: ModuleType, tmp_path: Path) -> None:
    chains = _chains(str(tmp_path), [[row_entry(_one(i)) for i in range(5)]])
    compiled.inject_fault(True)
    try:
        assert _core(chains) is None
    finally:
        compiled.inject_fault(False)
    assert _core(chains) == _python(chains)[:2]
