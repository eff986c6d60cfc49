"""End to end over fixtures/corpus on four runner configurations (issue 4, items 2, 4, 5).

Each configuration runs once per module (module-scoped cache). Every run must give the
records the plain-Python oracle gives, byte-identical Parquet files, and the same manifest
apart from ``run_info``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.runners.runner import PipelineResult

from kebab_chunk.beam import metrics
from kebab_chunk.beam.graph import run
from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE
from kebab_chunk.cli.run import parse_args
from kebab_chunk.model.ids import content_hash
from kebab_chunk.output.reader import read_chunks, read_errors
from kebab_chunk.output.schema import PARTITION_COLUMN
from tests.beam.helpers import (
    CORPUS,
    QUIET,
    REPO,
    Reference,
    output_chunks,
    output_errors,
    part_files,
    quiet_beam,
    reference_run,
    subprocess_env,
)
from tests.beam.runners import CONFIGS, job_service_with_worker_pool

pytestmark = pytest.mark.slow
quiet_beam()

RUN_TIMEOUT_S = 240
#: Hash seeds given to worker processes, so runs differ in PYTHONHASHSEED as well.
MULTI_SEED, EXTERNAL_SEED, SUBPROCESS_SEED = "12345", "777", "0"


@dataclass
class Run:
    output: Path
    manifest: dict[str, Any]
    result: PipelineResult | None  # None for runs done in a child process


def _deterministic(manifest: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in manifest.items() if k != "run_info"}


def _cli(output: Path, beam_args: list[str], seed: str) -> Path:
    cmd = [
        sys.executable,
        "-m",
        "pipelines.chunk_corpus",
        "--input",
        str(CORPUS),
        "--output",
        str(output),
        *beam_args,
        *QUIET,
    ]
    done = subprocess.run(
        cmd,
        cwd=REPO,
        env=subprocess_env(PYTHONHASHSEED=seed),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return output


class _Runs:
    """Runs each configuration at most once per module."""

    def __init__(self, base: Path) -> None:
        self._base = base
        self._cache: dict[str, Run] = {}

    def get(self, name: str) -> Run:
        if name not in self._cache:
            self._cache[name] = self._run(name)
        return self._cache[name]

    def _run(self, name: str) -> Run:
        output = self._base / name
        if name == "portable_external":
            with job_service_with_worker_pool(self._base, PYTHONHASHSEED=EXTERNAL_SEED) as args:
                _cli(output, args, EXTERNAL_SEED)
            result = None
        elif name == "subprocess_seed0":
            _cli(output, ["--direct_num_workers=1"], SUBPROCESS_SEED)
            result = None
        else:
            config, beam_args = parse_args(
                ["--input", str(CORPUS), "--output", str(output), *CONFIGS[name], *QUIET]
            )
            with pytest.MonkeyPatch.context() as mp:
                for key, value in subprocess_env(PYTHONHASHSEED=MULTI_SEED).items():
                    mp.setenv(key, value)  # multi_processing workers inherit os.environ
                result, _ = run(config, beam_args)
        manifest = json.loads((output / "manifest.json").read_text())
        return Run(output, manifest, result)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Runs]:
    yield _Runs(tmp_path_factory.mktemp("e2e"))


@pytest.fixture(scope="module")
def reference() -> Reference:
    return reference_run(CORPUS)


@pytest.mark.parametrize("config", list(CONFIGS))
def test_records_match_the_plain_python_reference(
    runs: _Runs, reference: Reference, config: str
) -> None:
    out = runs.get(config)
    assert output_chunks(out.output) == reference.chunks
    assert output_errors(out.output) == reference.errors
    assert out.manifest["accounting"]["closes"] is True


@pytest.mark.parametrize("config", [c for c in CONFIGS if c != "in_memory"])
def test_every_config_writes_byte_identical_files_and_manifest(runs: _Runs, config: str) -> None:
    base, other = runs.get("in_memory"), runs.get(config)
    assert part_files(other.output) == part_files(base.output)
    assert _deterministic(other.manifest) == _deterministic(base.manifest)


def test_multi_processing_spread_documents_over_worker_processes(runs: _Runs) -> None:
    result = runs.get("multi_processing").result
    assert result is not None
    [pids] = result.metrics().query(MetricsFilter().with_name(metrics.WORKER_PID))["distributions"]
    assert pids.committed.count == len(list(p for p in CORPUS.rglob("*") if p.is_file()))
    assert pids.committed.min != pids.committed.max, "all files were read by one process"


def test_rerun_with_other_hash_seed_and_worker_count_is_byte_identical(runs: _Runs) -> None:
    """Child process, PYTHONHASHSEED=0, one worker vs. two workers with another seed."""
    again, multi = runs.get("subprocess_seed0"), runs.get("multi_processing")
    assert part_files(again.output) == part_files(multi.output)
    assert _deterministic(again.manifest) == _deterministic(multi.manifest)


def test_manifest_accounting_closes_on_a_corpus_with_broken_files(
    runs: _Runs, reference: Reference
) -> None:
    manifest = runs.get("in_memory").manifest
    acc, counts = manifest["accounting"], manifest["counts"]
    buckets = Counter(reference.buckets.values())
    assert acc["files_matched"] == len(reference.buckets) == counts["files_matched"]
    assert (acc["documents_chunked"], acc["documents_with_zero_chunks"], acc["errors"]) == (
        buckets["chunked"],
        buckets["zero_chunks"],
        buckets["errors"],
    )
    assert buckets["errors"] >= 3 and buckets["zero_chunks"] >= 1  # the corpus exercises all
    assert acc["closes"] is True and not acc["unaccounted_files"]
    assert acc["zero_chunk_files"] == sorted(
        uri for uri, bucket in reference.buckets.items() if bucket == "zero_chunks"
    )
    assert counts["chunks_by_label"] == dict(
        sorted(Counter(c.chunker_version for c in reference.chunks).items())
    )
    by_type = Counter((stage, t) for _, stage, t in reference.errors)
    assert counts["errors_by_stage"] == {
        stage: {t: n for (s, t), n in sorted(by_type.items()) if s == stage}
        for stage in sorted({s for s, _ in by_type})
    }
    assert manifest["policy_hash"] and manifest["options"]["chunkers"] is None
    defaults = {label for labels in DEFAULT_LABELS_BY_MEDIA_TYPE.values() for label in labels}
    assert manifest["chunkers"]["labels"] == sorted(defaults)
    assert {"md-heading-v3", "pdf-page-v3"} <= defaults


def test_metrics_counters_mirror_the_manifest(runs: _Runs) -> None:
    out = runs.get("in_memory")
    assert out.result is not None
    found = out.result.metrics().query(MetricsFilter().with_namespace(metrics.NAMESPACE))
    counters = {c.key.metric.name: c.committed for c in found["counters"]}
    counts = out.manifest["counts"]
    for name in (
        "files_matched",
        "documents_chunked",
        "documents_with_zero_chunks",
        "documents_with_errors",
    ):
        assert counters.get(name, 0) == counts[name], name
    for label, n in counts["chunks_by_label"].items():
        assert counters[metrics.keyed("chunks", label)] == n
    for stage, by_type in counts["errors_by_stage"].items():
        for error_type, n in by_type.items():
            assert counters[metrics.keyed("errors", f"{stage}/{error_type}")] == n
    for media_type, c in counts["by_media_type"].items():
        assert counters[metrics.keyed("files", media_type)] == c["files"]


def test_error_rows_for_the_broken_pdf_and_the_binary_markdown(runs: _Runs) -> None:
    rows = {r["source_uri"]: r for r in read_errors(str(runs.get("in_memory").output)).to_pylist()}
    for uri, media_type, error_type in [
        ("pdf/broken-truncated.pdf", "application/pdf", "parse_error"),
        ("blob.md", "text/markdown", "binary_content"),
    ]:
        row = rows[uri]
        assert (row["stage"], row["error_type"], row["media_type"]) == (
            "parse",
            error_type,
            media_type,
        )
        assert row["content_hash"] == content_hash((CORPUS / uri).read_bytes())
        assert uri in row["message"] and row["chunker_version"] is None


def test_output_reads_back_with_duckdb_pyarrow_and_pandas(
    runs: _Runs, reference: Reference
) -> None:
    output = runs.get("in_memory").output
    expected = Counter(c.chunker_version for c in reference.chunks)
    glob = f"{output}/chunks/*/*.parquet"
    by_duckdb = dict(
        duckdb.sql(
            f"SELECT {PARTITION_COLUMN}, count(DISTINCT chunk_id) FROM "
            f"read_parquet('{glob}', hive_partitioning = true) GROUP BY 1"
        ).fetchall()
    )
    assert by_duckdb == expected
    spans = duckdb.sql(
        f"SELECT s.page FROM read_parquet('{glob}', hive_partitioning = true), "
        f"unnest(source_spans) AS t(s) WHERE {PARTITION_COLUMN} = 'pdf-page-v3'"
    ).fetchall()
    assert spans and all(page >= 1 for (page,) in spans)
    table = read_chunks(str(output))
    assert Counter(table.column(PARTITION_COLUMN).to_pylist()) == expected
    frame = pd.read_parquet(output / "chunks")
    assert Counter(map(str, frame[PARTITION_COLUMN])) == expected
    assert len(frame) == len(reference.chunks)
