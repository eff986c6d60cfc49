"""PackPerBucket: small join records travel in compressed batches, one per bucket.

The update's plan (kebab_chunk/beam/update.py) joins three records per document; grouped
one element per record, the in-memory runner held them all as Python objects (2.4 GB at
1,000,000 documents). Packed, the grouping sees at most one element per bucket and
bundle, and every record comes back exactly once, however the records fall into bundles.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that

from kebab_chunk.beam.batches import (
    PackPerBucket,
    _PackFn,
    bucket_of,
    pack_records,
    unpack_records,
)
from tests.beam.helpers import quiet_beam

quiet_beam()


def _records(n: int, seed: int = 7) -> list[tuple[str, Any]]:
    rng = random.Random(seed)
    return [
        (
            f"dir{i % 13}/doc{i:05d}-\u00e9\n.md",
            (rng.choice(["text/markdown", None]), rng.randrange(10**9), ("hybrid-v4", i)),
        )
        for i in range(n)
    ]


def test_packs_give_back_every_record_once_across_bundles() -> None:
    records = _records(3000)
    fn = _PackFn(8)
    packs: list[tuple[int, Any]] = []
    for start in range(0, len(records), 700):  # bundles of 700 records
        fn.start_bundle()
        for record in records[start : start + 700]:
            assert list(fn.process(record)) == []
        packs += [w.value for w in fn.finish_bundle()]
    assert Counter(unpack_records(p for _, p in packs)) == Counter(records)
    for bucket, pack in packs:
        assert all(bucket_of(key, 8) == bucket for key, _ in unpack_records([pack]))
    # one element per bucket and bundle, compressed well below the records' size
    assert len(packs) <= 8 * 5
    size = sum(len(block) for _, blocks in packs for block in blocks)
    assert size < len(repr(records)) // 3
    assert Counter(unpack_records([pack_records(records)])) == Counter(records)


def test_records_sharing_values_and_records_larger_than_a_block_come_back_equal() -> None:
    """One pickler writes a block's records, so a value two records share is written once
    and read back in both; a record alone over the block size is a block of its own."""
    shared = ("md-heading-v3", "x" * 100)
    big = "y" * (3 * 16 * 1024)
    records = [(f"doc{i}.md", (shared, i, big if i % 50 == 7 else "")) for i in range(400)]
    packed = pack_records(records)
    assert len(packed) > 1
    assert list(unpack_records([packed])) == records


def test_the_grouping_sees_one_element_per_bucket() -> None:
    records = _records(5000)

    def check(packed: list[tuple[int, Any]]) -> None:
        buckets = [b for b, _ in packed]
        assert len(buckets) == len(set(buckets)) <= 8
        assert Counter(unpack_records(p for _, p in packed)) == Counter(records)
        for bucket, pack in packed:
            assert all(bucket_of(key, 8) == bucket for key, _ in unpack_records([pack]))

    with BeamTestPipeline() as p:
        packed = p | beam.Create(records) | PackPerBucket(8)
        assert_that(packed, check)


def test_a_key_function_packs_values_as_keyed_records() -> None:
    """``key=``: the values are keyed where they are packed, as a keying Map would."""
    records = _records(2000)
    fn = _PackFn(8, key=lambda value: records_by_value[value])
    records_by_value = {value: key for key, value in records}
    fn.start_bundle()
    for _, value in records:
        assert list(fn.process(value)) == []
    packs = [w.value for w in fn.finish_bundle()]
    assert Counter(unpack_records(p for _, p in packs)) == Counter(records)
    for bucket, pack in packs:
        assert all(bucket_of(key, 8) == bucket for key, _ in unpack_records([pack]))


def test_buckets_do_not_depend_on_the_hash_seed() -> None:
    """crc32, not Python's salted ``hash``: every worker puts a key in the same bucket."""
    import subprocess
    import sys

    code = "from kebab_chunk.beam.batches import bucket_of; print(bucket_of('a/b.md', 1024))"
    seen = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={"PYTHONHASHSEED": seed, "PATH": ""},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("0", "1", "2")
    }
    assert len(seen) == 1 and seen.pop().strip() == str(bucket_of("a/b.md", 1024))


def test_a_run_writes_the_same_bytes_with_many_files_per_bucket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The manifest's per-file join is packed per bucket too: with the corpus's files in 2
    buckets instead of nearly one each, every part file and the accounting are the same."""
    from kebab_chunk.beam import batches
    from kebab_chunk.pipeline import run
    from tests.beam.helpers import QUIET
    from tests.beam.runners import CONFIGS

    corpus = Path(__file__).resolve().parents[2] / "fixtures" / "corpus"
    runner = [*CONFIGS["in_memory"], *QUIET]

    def listing(output: Path) -> tuple[Any, Any]:
        manifest = run(str(corpus), str(output), beam_args=runner).manifest
        files = {e["path"]: e["blake3"] for kind in manifest["outputs"].values() for e in kind}
        return files, manifest["accounting"]

    default = listing(tmp_path / "default")
    monkeypatch.setattr(batches, "JOIN_BUCKETS", 2)
    assert listing(tmp_path / "two") == default
    assert default[1]["closes"] is True and len(default[0]) > 3
