"""The whole hostile corpus through the real pipeline, beside the normal fixtures (issue 7).

Three runs of the command line, at the same time, each in a child process with a time
limit (a hang must fail the test, not stall it): the fixtures with the bad corpus beside
them (in memory), the same corpus again on two worker processes (the rerun), and the
fixtures alone. The
runs must complete; every bad entry must land in the manifest bucket its ``Expect`` names
with exactly one error row where it is an error; the accounting must close over all of
them; the good documents must give exactly the records of the run without bad neighbours;
and the rerun must write byte-identical files.

``--max-file-bytes`` is 16 MiB here so the 50 MB single line exercises the size limit
(refused from its metadata, never read); every other limit is at its default.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE
from kebab_chunk.model import Chunk, ChunkPolicy
from kebab_chunk.output.reader import read_chunks, read_errors
from kebab_chunk.output.schema import row_to_chunk, row_to_error
from kebab_chunk.parsers.registry import parse_document
from tests.beam.helpers import (
    CORPUS,
    QUIET,
    REPO,
    chunk_sort_key,
    output_chunks,
    part_files,
    records,
    reference_run,
    subprocess_env,
)
from tests.hostile.corpus import (
    ERRORS,
    NON_UTF8_NAME,
    NON_UTF8_URI,
    ZERO,
    Expect,
    build_bad_corpus,
    expected_outcomes,
)

pytestmark = pytest.mark.slow

BAD = "bad"  # the bad corpus sits in this folder of the combined corpus
RUN_TIMEOUT_S = 420
MAX_FILE_BYTES = 16 * 1024 * 1024
EXPECTED = expected_outcomes()
#: Too big to re-chunk in the test process for the record-by-record comparison.
HEADINGS = "markdown/headings-100000.md"


@dataclass
class Runs:
    corpus: Path
    bad_uris: dict[str, Expect]
    mixed: Path
    rerun: Path
    alone: Path

    def manifest(self, output: Path) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads((output / "manifest.json").read_text())
        return loaded

    @cached_property
    def mixed_table(self) -> pa.Table:
        return read_chunks(str(self.mixed))

    @cached_property
    def mixed_chunks(self) -> list[Chunk]:
        """The mixed run's records except the 100,000 of the headings file, read once."""
        table = self.mixed_table
        keep = pc.not_equal(table.column("source_uri"), f"{BAD}/{HEADINGS}")
        rows = table.filter(keep).to_pylist()
        return sorted((row_to_chunk(r) for r in rows), key=chunk_sort_key)

    @cached_property
    def chunked_uris(self) -> set[str]:
        return set(self.mixed_table.column("source_uri").to_pylist())

    @cached_property
    def mixed_errors(self) -> dict[str, list[tuple[str, str]]]:
        return _errors_by_uri(self.mixed)


def _run_all(*runs: tuple[Path, Path, tuple[str, ...]]) -> None:
    """Run the command line once per (corpus, output, extra args), all at the same time.

    Concurrent runs share the machine's cores; they also show that runs do not interfere
    (each has its own helper processes). Each must finish within RUN_TIMEOUT_S.
    """
    procs = []
    for corpus, output, extra in runs:
        cmd = [
            sys.executable,
            "-m",
            "pipelines.chunk_corpus",
            "--input",
            str(corpus),
            "--output",
            str(output),
            f"--max-file-bytes={MAX_FILE_BYTES}",
            *extra,
            *QUIET,
        ]
        log = output.with_suffix(".log")
        with log.open("wb") as sink:
            proc = subprocess.Popen(
                cmd, cwd=REPO, env=subprocess_env(), stdout=sink, stderr=subprocess.STDOUT
            )
        procs.append((proc, log))
    deadline = time.monotonic() + RUN_TIMEOUT_S
    try:
        for proc, log in procs:
            code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
            assert code == 0, log.read_text(errors="replace")[-4000:]
    finally:
        for proc, _ in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    base = tmp_path_factory.mktemp("hostile")
    corpus = base / "corpus"
    shutil.copytree(CORPUS, corpus)
    bad = build_bad_corpus(corpus / BAD, base / "outside")
    bad_uris = {f"{BAD}/{uri}": expect for uri, expect in bad.items()}
    runs = Runs(corpus, bad_uris, base / "mixed", base / "rerun", base / "alone")
    multi = ("--direct_running_mode=multi_processing", "--direct_num_workers=2")
    _run_all((corpus, runs.mixed, ()), (corpus, runs.rerun, multi), (CORPUS, runs.alone, ()))
    yield runs
    shutil.rmtree(base, ignore_errors=True)  # the 50 MB line and a FIFO


def _errors_by_uri(output: Path) -> dict[str, list[tuple[str, str]]]:
    found: dict[str, list[tuple[str, str]]] = {}
    for row in read_errors(str(output)).to_pylist():
        error = row_to_error(row)
        found.setdefault(error.source_uri, []).append((error.stage, error.error_type))
    return found


def _bucket(uri: str, errors: dict[str, list[tuple[str, str]]], chunked: set[str]) -> str:
    if uri in errors:
        return ERRORS
    return "chunked" if uri in chunked else ZERO


@pytest.mark.parametrize("uri", sorted(EXPECTED), ids=lambda u: u.replace("\n", "\\n"))
def test_each_hostile_case_ends_as_its_contract_says(runs: Runs, uri: str) -> None:
    expect = EXPECTED[uri]
    full = f"{BAD}/{uri}"
    errors = runs.mixed_errors
    assert _bucket(full, errors, runs.chunked_uris) == expect.bucket, (expect.why, errors.get(full))
    if expect.bucket == ERRORS:
        assert errors[full] == [(expect.stage, expect.error_type)], "exactly one error row"


def test_accounting_closes_with_every_entry_exactly_once(runs: Runs) -> None:
    manifest = runs.manifest(runs.mixed)
    acc, counts = manifest["accounting"], manifest["counts"]
    fixtures = reference_run(CORPUS).buckets  # the good corpus, by the plain-Python oracle
    errors, chunked = runs.mixed_errors, runs.chunked_uris
    everything = {**fixtures, **{u: e.bucket for u, e in runs.bad_uris.items()}}
    # nothing produced for an entry that is not in the corpus (x.pdf, in-root dir links)
    assert set(errors) | chunked <= set(everything)
    assert {u: _bucket(u, errors, chunked) for u in everything} == everything
    expected_buckets = Counter(everything.values())
    assert acc["closes"] is True
    assert not acc["unaccounted_files"] and not acc["unexpected_files"]
    assert acc["files_matched"] == counts["files_matched"] == len(everything)
    assert (acc["documents_chunked"], acc["documents_with_zero_chunks"], acc["errors"]) == (
        expected_buckets["chunked"],
        expected_buckets[ZERO],
        expected_buckets[ERRORS],
    )
    assert sum(len(rows) for rows in errors.values()) == counts["error_rows"] == len(errors)


def test_good_documents_lose_nothing_beside_bad_ones(runs: Runs) -> None:
    beside = [c for c in runs.mixed_chunks if not c.source_uri.startswith(f"{BAD}/")]
    alone = output_chunks(runs.alone)
    assert alone and beside == alone
    good_errors = {u: e for u, e in runs.mixed_errors.items() if not u.startswith(f"{BAD}/")}
    assert good_errors == _errors_by_uri(runs.alone)


def test_rerun_on_other_workers_is_byte_identical(runs: Runs) -> None:
    assert part_files(runs.rerun) == part_files(runs.mixed)
    first, again = runs.manifest(runs.mixed), runs.manifest(runs.rerun)
    first.pop("run_info")
    again.pop("run_info")
    assert again == first


def _library_chunks(raw: bytes, uri: str) -> list[Chunk]:
    doc = parse_document(raw, uri)
    policy = ChunkPolicy()
    labels = DEFAULT_LABELS_BY_MEDIA_TYPE[doc.media_type]
    return [c for label in labels for c in records(label, doc, policy)]


def test_chunked_hostile_documents_match_the_library_record_for_record(runs: Runs) -> None:
    """Hostile but valid input is chunked in full, with its warnings, not truncated."""
    by_uri: dict[str, list[Chunk]] = {}
    for chunk in runs.mixed_chunks:
        by_uri.setdefault(chunk.source_uri, []).append(chunk)
    root = runs.corpus / BAD
    for uri, expect in EXPECTED.items():
        if expect.bucket != "chunked" or uri == HEADINGS:
            continue
        if uri == NON_UTF8_URI:  # the file's real name is bytes that are not UTF-8
            path = Path(os.fsdecode(os.fsencode(root) + b"/" + NON_UTF8_NAME))
        else:
            path = root / uri
        raw = path.read_bytes()
        expected = sorted(_library_chunks(raw, f"{BAD}/{uri}"), key=chunk_sort_key)
        assert by_uri[f"{BAD}/{uri}"] == expected, uri
        if expect.warning:
            warnings = parse_document(raw, uri).warnings
            assert any(expect.warning in w for w in warnings), (uri, warnings)


def test_one_hundred_thousand_headings_are_all_chunked_once(runs: Runs) -> None:
    """100,000 headings with no text between them: the default label (md-heading-v3) keeps
    each heading with what follows, so runs of headings share chunks; every heading line is
    chunked, in order (overlap repeats some), and the ids are unique."""
    table = runs.mixed_table
    mine = table.filter(pc.equal(table.column("source_uri"), f"{BAD}/{HEADINGS}"))
    rows = sorted(
        zip(mine.column("position").to_pylist(), mine.column("text").to_pylist(), strict=True)
    )
    assert [p for p, _ in rows] == list(range(len(rows)))
    lines = [line for _, text in rows for line in text.splitlines() if line]
    first_seen = list(dict.fromkeys(lines))  # overlap repeats a chunk's last lines in the next
    assert first_seen == [f"{'#' * (1 + i % 6)} h{i}" for i in range(100_000)]
    assert len(set(mine.column("chunk_id").to_pylist())) == mine.num_rows


def test_links_out_of_the_root_are_never_read(runs: Runs) -> None:
    rows = {
        e.source_uri: e for e in (row_to_error(r) for r in read_errors(str(runs.mixed)).to_pylist())
    }
    for uri in ("links/to-outside-file.md", "links/to-outside-dir", "links/dangling.md"):
        row = rows[f"{BAD}/{uri}"]
        assert row.content_hash is None, "the bytes behind the link were never read"
        assert "symbolic link" in row.message
    assert not any("This must never be read" in c.text for c in runs.mixed_chunks)


def test_the_big_line_is_refused_without_being_read(runs: Runs) -> None:
    [row] = [
        e
        for e in (row_to_error(r) for r in read_errors(str(runs.mixed)).to_pylist())
        if e.source_uri == f"{BAD}/text/single-line-50mb.md"
    ]
    assert row.content_hash is None and "--max-file-bytes" in row.message
