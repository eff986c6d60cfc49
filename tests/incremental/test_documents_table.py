"""``--previous`` and the documents table: a reused document gets the row a full run gives.

The facts only parsing learns (title, front matter, warnings, pages, blocks) are carried
from the previous documents table; a previous output written before that table existed
still works, and then every document is parsed again. The chunk index of a reused
document comes from the records carried through WriteChunks, so it too equals a full
run's, also when the previous documents table predates the ``chunk_index`` column.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from blake3 import blake3

from kebab_chunk.beam.graph import run
from kebab_chunk.beam.incremental import DELETED, NEW, RECHUNKED, REUSED
from kebab_chunk.cli.run import parse_args
from kebab_chunk.output.reader import read_documents
from kebab_chunk.output.schema import parquet_bytes
from tests.beam.helpers import QUIET, part_files
from tests.incremental.conftest import IN_MEMORY, Runs

pytestmark = pytest.mark.slow

DOCUMENTS_PART = "documents/part-00000-of-00001.parquet"


def test_reused_documents_keep_their_warnings_and_facts(runs: Runs) -> None:
    incr, full = runs["incr_fixtures"], runs["full_fixtures"]
    assert incr.manifest["incremental"]["documents"][REUSED] > 0
    rows = read_documents(str(incr.output)).to_pylist()
    assert rows == read_documents(str(full.output)).to_pylist()
    assert part_files(incr.output)[DOCUMENTS_PART] == part_files(full.output)[DOCUMENTS_PART]
    # Chunked documents of this corpus are all reused, so these warnings were carried.
    carried = [r for r in rows if r["status"] == "chunked" and r["warnings"]]
    assert carried, "the fixture corpus has a chunked document with warnings"
    assert incr.manifest["counts"]["documents_with_warnings"] == sum(
        bool(r["warnings"]) for r in rows
    )


def test_the_documents_table_of_an_incremental_run_equals_a_full_run(runs: Runs) -> None:
    got = part_files(runs["incr_v2"].output)[DOCUMENTS_PART]
    assert got == part_files(runs["full_v2"].output)[DOCUMENTS_PART]
    rows = read_documents(str(runs["incr_v2"].output)).to_pylist()
    assert len(rows) == 100 and {r["status"] for r in rows} == {"chunked"}
    assert all(r["title"] and r["blocks"] for r in rows)
    assert all(len(r["chunk_index"]) == r["chunks_by_label"][0]["count"] for r in rows)


def test_a_previous_documents_table_without_chunk_index_is_reused(
    runs: Runs, tmp_path: Path
) -> None:
    """A previous output written before the ``chunk_index`` column: its facts are still
    carried, and this run's documents rows get their index as a full run's do."""
    older = tmp_path / "older_v1"
    shutil.copytree(runs["full_v1"].output, older)
    part = older / DOCUMENTS_PART
    data = parquet_bytes(pq.read_table(part).drop_columns(["chunk_index"]))
    part.write_bytes(data)
    manifest = json.loads((older / "manifest.json").read_text())
    (entry,) = manifest["outputs"]["documents"]
    entry.update(bytes=len(data), blake3=blake3(data).hexdigest())
    (older / "manifest.json").write_text(json.dumps(manifest))
    out = tmp_path / "incr"
    argv = ["--input", str(runs.corpora["v2"]), "--output", str(out), "--previous", str(older)]
    config, beam_args = parse_args([*argv, *IN_MEMORY, *QUIET])
    run(config, beam_args)
    got = json.loads((out / "manifest.json").read_text())
    assert got["incremental"]["documents"] == runs["incr_v2"].manifest["incremental"]["documents"]
    assert got["incremental"]["documents"][REUSED] > 0
    assert part_files(out) == part_files(runs["full_v2"].output)


def test_a_previous_output_without_documents_table_is_used_by_parsing_everything(
    runs: Runs, tmp_path: Path
) -> None:
    """An output of an older version (no documents table, not listed in its manifest):
    nothing can be reused, so every document is parsed and the output equals a full run."""
    legacy = tmp_path / "legacy_v1"
    shutil.copytree(runs["full_v1"].output, legacy)
    shutil.rmtree(legacy / "documents")
    manifest = json.loads((legacy / "manifest.json").read_text())
    del manifest["outputs"]["documents"]
    (legacy / "manifest.json").write_text(json.dumps(manifest))
    out = tmp_path / "incr"
    argv = ["--input", str(runs.corpora["v2"]), "--output", str(out), "--previous", str(legacy)]
    config, beam_args = parse_args([*argv, *IN_MEMORY, *QUIET])
    run(config, beam_args)
    got = json.loads((out / "manifest.json").read_text())
    assert got["incremental"]["documents"] == {REUSED: 0, RECHUNKED: 100, NEW: 0, DELETED: 0}
    assert part_files(out) == part_files(runs["full_v2"].output)
