"""``--previous``: unchanged documents are carried forward, and the output equals a full run's.

Each test names the runs it needs (see ``conftest.SPECS``); "parsed" is proved with the
pipeline's own counter of documents that came out of the parse stage, and every output is
checked against a full run (byte-identical Parquet) or the plain-Python oracle.
"""

from __future__ import annotations

from typing import Any

import pytest

from kebab_chunk.beam.incremental import DELETED as DELETED_
from kebab_chunk.beam.incremental import NEW, RECHUNKED, REUSED
from kebab_chunk.model import make_policy
from kebab_chunk.model.ids import doc_id
from tests.beam.helpers import CORPUS, output_chunks, output_errors, part_files, reference_run
from tests.incremental.conftest import ADDED, CHANGED, DELETED, Runs

pytestmark = pytest.mark.slow


def _decisions(manifest: dict[str, Any]) -> dict[str, int]:
    return dict(manifest["incremental"]["documents"])


def _deterministic(manifest: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in manifest.items() if k not in ("run_info", "incremental")}


def _partition(files: dict[str, bytes], label: str) -> dict[str, bytes]:
    return {k: v for k, v in files.items() if k.startswith(f"chunks/chunker_version={label}/")}


def test_one_changed_document_of_100_is_the_only_one_parsed(runs: Runs) -> None:
    incr = runs["incr_v2"]
    assert runs["full_v1"].parsed == 100
    assert incr.parsed == 1
    assert _decisions(incr.manifest) == {REUSED: 99, RECHUNKED: 1, NEW: 0, DELETED_: 0}
    for decision, n in _decisions(incr.manifest).items():
        assert incr.counter(f"incremental[{decision}]") == n
    old_hashes = {c.content_hash for c in output_chunks(runs["full_v1"].output)}
    new_bytes = {
        c.source_uri for c in output_chunks(incr.output) if c.content_hash not in old_hashes
    }
    assert new_bytes == {CHANGED}


def test_incremental_output_is_byte_identical_to_a_full_run(runs: Runs) -> None:
    incr, full = runs["incr_v2"], runs["full_v2"]
    assert part_files(incr.output) == part_files(full.output)
    assert _deterministic(incr.manifest) == _deterministic(full.manifest)
    assert incr.manifest["accounting"]["closes"] is True
    assert "incremental" not in full.manifest
    assert output_chunks(incr.output) == reference_run(runs.corpora["v2"]).chunks


def test_deleted_and_new_documents(runs: Runs) -> None:
    incr = runs["incr_v3"]  # previous: the incremental run incr_v2
    assert _decisions(incr.manifest) == {REUSED: 99, RECHUNKED: 0, NEW: 1, DELETED_: 1}
    assert incr.parsed == 1
    chunks = output_chunks(incr.output)
    assert chunks == reference_run(runs.corpora["v3"]).chunks
    uris = {c.source_uri for c in chunks}
    assert DELETED not in uris and ADDED in uris
    assert incr.manifest["accounting"]["closes"] is True
    assert incr.manifest["counts"]["files_matched"] == 100
    # Appending a document changed no existing id: every kept document's ids are still there.
    before = {c.chunk_id for c in output_chunks(runs["incr_v2"].output) if c.source_uri != DELETED}
    assert before <= {c.chunk_id for c in chunks}


def test_a_changed_policy_rechunks_everything(runs: Runs) -> None:
    incr = runs["policy_v2"]
    assert _decisions(incr.manifest) == {REUSED: 0, RECHUNKED: 100, NEW: 0, DELETED_: 0}
    assert incr.parsed == 100
    policy = make_policy(target_tokens=64, overlap_tokens=8)
    assert output_chunks(incr.output) == reference_run(runs.corpora["v2"], policy=policy).chunks


def test_a_new_label_rechunks_everything_and_writes_both_partitions(runs: Runs) -> None:
    incr, full = runs["labels_v2"], runs["full_v2"]
    assert _decisions(incr.manifest) == {REUSED: 0, RECHUNKED: 100, NEW: 0, DELETED_: 0}
    assert incr.parsed == 100
    files = part_files(incr.output)
    assert {k.split("/")[1] for k in files if k.startswith("chunks/")} == {
        "chunker_version=md-heading-v3",
        "chunker_version=hybrid-v1",
    }
    # The old label's partition is exactly what a run of the old label alone writes.
    assert _partition(files, "md-heading-v3") == _partition(
        part_files(full.output), "md-heading-v3"
    )
    expected = reference_run(runs.corpora["v2"], ["md-heading-v3", "hybrid-v1"]).chunks
    assert output_chunks(incr.output) == expected


def test_chunkers_selects_labels_and_reuses_what_the_previous_run_made(runs: Runs) -> None:
    incr, previous = runs["select_v2"], runs["labels_v2"]
    assert _decisions(incr.manifest) == {REUSED: 100, RECHUNKED: 0, NEW: 0, DELETED_: 0}
    assert incr.parsed == 0
    files = part_files(incr.output)
    assert files == {
        **_partition(part_files(previous.output), "hybrid-v1"),
        "errors/part-00000-of-00001.parquet": files["errors/part-00000-of-00001.parquet"],
        "documents/part-00000-of-00001.parquet": files["documents/part-00000-of-00001.parquet"],
    }
    assert output_chunks(incr.output) == reference_run(runs.corpora["v2"], ["hybrid-v1"]).chunks


def test_nothing_changed_on_the_mixed_corpus_changes_nothing(runs: Runs) -> None:
    """Error rows are never reused (they may be transient) and zero-chunk files have no
    chunk record to reuse, so those documents are processed again; everything else is
    carried forward, its documents row (warnings included) from the previous output."""
    incr, full = runs["incr_fixtures"], runs["full_fixtures"]
    assert part_files(incr.output) == part_files(full.output)
    assert output_errors(incr.output) == output_errors(full.output)
    buckets = reference_run(CORPUS).buckets
    expected = {
        REUSED: sum(b == "chunked" for b in buckets.values()),
        RECHUNKED: sum(b == "errors" for b in buckets.values()),
        NEW: sum(b == "zero_chunks" for b in buckets.values()),
        DELETED_: 0,
    }
    assert _decisions(incr.manifest) == expected
    assert incr.parsed == expected[NEW]  # the erroring files fail in the parser again
    # Reused documents carry their warnings from the previous documents table.
    assert incr.manifest["counts"] == full.manifest["counts"]
    assert incr.manifest["counts"]["documents_with_warnings"] > 0
    assert incr.manifest["accounting"] == full.manifest["accounting"]


def test_the_portable_runner_gives_the_same_incremental_output(runs: Runs) -> None:
    portable, direct = runs["portable_fixtures"], runs["incr_fixtures"]
    assert part_files(portable.output) == part_files(direct.output)
    assert (
        portable.manifest["incremental"]["documents"] == direct.manifest["incremental"]["documents"]
    )
    assert _deterministic(portable.manifest) == _deterministic(direct.manifest)


def test_reused_records_keep_their_doc_ids(runs: Runs) -> None:
    chunks = output_chunks(runs["incr_v2"].output)
    assert all(c.doc_id == doc_id(c.source_uri) for c in chunks)
