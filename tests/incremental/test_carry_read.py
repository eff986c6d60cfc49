"""Carried records are located by (part file, row) and read back row group by row group:
the rows read must be exactly the records at those places, whatever the row groups."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kebab_chunk.beam.incremental import _ReadCarriedFn, _ReadFingerprintsFn
from kebab_chunk.model import Chunk, ChunkPolicy
from kebab_chunk.output.schema import chunks_table
from kebab_chunk.parsers.registry import parse_document
from kebab_chunk.runtime.reuse import CARRY_BUCKET
from tests.beam.helpers import records

LABEL = "md-heading-v2"


def _chunks() -> list[Chunk]:
    text = "".join(f"# Part {i}\n\nParagraph {i} of the guide.\n\n" for i in range(12))
    doc = parse_document(text.encode(), "guide.md")
    chunks = records(LABEL, doc, ChunkPolicy(target_tokens=16, overlap_tokens=0))
    assert len(chunks) >= 12
    return chunks


@pytest.mark.parametrize("row_group_size", [1, 3, 5, 1000])
def test_located_rows_read_back_as_the_records_there(tmp_path: Path, row_group_size: int) -> None:
    table = chunks_table(_chunks())
    path = tmp_path / "part-00000-of-00001.parquet"
    pq.write_table(table, path, row_group_size=row_group_size)
    by_row = sorted(_chunks(), key=lambda c: c.chunk_id)  # chunks_table sorts by chunk_id

    located = list(_ReadFingerprintsFn(LABEL, LABEL).process(str(path)))
    keys = [element for element in located if isinstance(element, tuple)]
    assert [row for _, (_, row) in keys] == list(range(len(by_row)))
    for (doc, label, bucket), (where, row) in keys:
        chunk = by_row[row]
        assert (doc, label, bucket) == (chunk.doc_id, LABEL, chunk.position // CARRY_BUCKET)
        assert where == str(path)

    wanted = [0, 4, 5, len(by_row) - 1, 4]  # out of order, repeated, across row groups
    got = list(_ReadCarriedFn().process(((str(path), LABEL), wanted)))
    assert got == [by_row[i] for i in sorted(set(wanted))]


def test_a_label_this_run_does_not_apply_gives_fingerprints_only(tmp_path: Path) -> None:
    path = tmp_path / "part-00000-of-00001.parquet"
    pq.write_table(chunks_table(_chunks()), path)
    located = list(_ReadFingerprintsFn(LABEL, None).process(str(path)))
    assert located and not any(isinstance(element, tuple) for element in located)
