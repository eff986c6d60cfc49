"""The uncompressed chunk encoding WriteChunks spills: exact round trip, and really used.

Spill rows are written once and read back once, so ``encode_chunk(chunk, compress=False)``
skips zstd (which cost more CPU than the rest of the encoding). The compressed form stays
the coder's default; both must decode to the same row.
"""

from __future__ import annotations

from pathlib import Path

from apache_beam.coders.typecoders import registry

from kebab_chunk.beam.coders import decode_chunk, decode_row, encode_chunk, row_of
from kebab_chunk.beam.spill import entry_id, entry_record
from kebab_chunk.beam.write import _SpillFn
from kebab_chunk.model import Chunk, LineSpan


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


def test_plain_form_round_trips_to_the_same_row_as_the_compressed_form() -> None:
    for chunk in (_chunk(), _chunk("é ü 漢字 " * 200), _chunk("x", position=2**70)):
        plain, packed = encode_chunk(chunk, compress=False), encode_chunk(chunk)
        assert decode_row(plain) == decode_row(packed) == row_of(chunk)
        assert decode_chunk(plain) == chunk
        assert encode_chunk(chunk, compress=False) == plain  # deterministic


def test_lone_surrogates_still_take_the_json_form() -> None:
    chunk = _chunk("bad \ud800 text")
    data = encode_chunk(chunk, compress=False)
    assert data[:1] == b"J"
    assert decode_chunk(data) == chunk


def test_the_spill_writer_stores_plain_rows(tmp_path: Path) -> None:
    fn = _SpillFn(str(tmp_path), spill_bytes=1)
    fn.start_bundle()
    spills = list(fn.process(_chunk()))
    assert len(spills) == 1
    label, path, rows = spills[0]
    assert (label, rows) == ("md-heading-v1", 1)
    data = Path(path).read_bytes()
    entry = data[4:]  # one entry after its 4-byte length
    assert entry_id(entry) == ("ab" * 16).encode()
    line, row = entry_record(entry[len(entry_id(entry)) + 1 :])
    assert line.startswith("ab" * 16 + "\t")
    assert row[:1] == b"P"
    assert decode_row(row) == row_of(_chunk())
    assert registry.get_coder(Chunk).encode(_chunk())[:1] == b"S"  # coder unchanged
