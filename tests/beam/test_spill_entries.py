"""The spill entries WriteChunks sorts: exact round trip, deterministic, and really used.

A chunk's entry (``row_entry``: marshal format 2 of its row, plus its chunk index line) is
made in the helper process in the job, or by the spill writer for Chunk elements. It must
decode to the same row as the Beam coder's form and give equal bytes for equal rows
(identical duplicates of an id collapse by their bytes).
"""

from __future__ import annotations

from pathlib import Path

from apache_beam.coders.typecoders import registry

from kebab_chunk.beam.coders import decode_chunk, decode_row, encode_chunk, row_of
from kebab_chunk.beam.spill import entry_id, entry_record
from kebab_chunk.beam.write import _SpillFn
from kebab_chunk.elements import EncodedChunks
from kebab_chunk.model import Chunk, LineSpan
from kebab_chunk.output.chunk_index import line_of_row
from kebab_chunk.output.spill_entry import row_entry


def _chunk(text: str = "# A\n\nalpha beta", position: int = 0) -> Chunk:
    return Chunk(
        chunk_id="ab" * 16,
        doc_id="d",
        source_uri="docs/a.md",
        chunker_version="md-heading-v1",
        policy_hash="p",
        parser_version="md-pyromark-v1",
        position=position,
        text=text,
        heading_path=("A",),
        block_ids=("b1", "b2"),
        source_spans=(LineSpan(line_start=1, line_end=3, char_start=0, char_end=len(text)),),
        token_estimate=5,
        content_hash="c",
    )


def _row_part(entry: bytes) -> tuple[str, bytes]:
    return entry_record(entry[len(entry_id(entry)) + 1 :])


def test_entries_round_trip_to_the_coder_row_and_are_deterministic() -> None:
    for chunk in (_chunk(), _chunk("é ü 漢字 " * 200), _chunk("x", position=2**40)):
        entry = row_entry(row_of(chunk))
        line, data = _row_part(entry)
        assert data[:1] == b"M"
        assert decode_row(data) == decode_row(encode_chunk(chunk)) == row_of(chunk)
        assert decode_chunk(data) == chunk
        assert line == line_of_row(row_of(chunk))
        # equal rows built from distinct objects: the same bytes (no reference memo)
        assert row_entry(row_of(chunk.model_copy(deep=True))) == entry


def _spilled_entry(path: str) -> bytes:
    return Path(path).read_bytes()[4:]  # one entry after its 4-byte length


def test_the_spill_writer_stores_entries_of_chunks_and_of_encoded_batches(
    tmp_path: Path,
) -> None:
    fn = _SpillFn(str(tmp_path), spill_bytes=1)
    fn.start_bundle()
    spills = list(fn.process(_chunk()))
    assert len(spills) == 1
    label, path, rows, size = spills[0]
    assert (label, rows, size) == ("md-heading-v1", 1, Path(path).stat().st_size)
    entry = _spilled_entry(path)
    assert entry == row_entry(row_of(_chunk()))
    assert entry_id(entry) == ("ab" * 16).encode()
    # the job's form: the entries a helper made, one element per document and label
    batch = EncodedChunks("md-heading-v1", (entry,))
    (spill,) = fn.process(batch)
    assert spill[0::2] == ("md-heading-v1", 1)
    assert _spilled_entry(spill[1]) == entry
    assert registry.get_coder(Chunk).encode(_chunk())[:1] == b"S"  # coder unchanged
