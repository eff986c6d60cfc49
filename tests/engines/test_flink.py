"""The job on a real Flink cluster (one JobManager, two TaskManagers) and on Flink's
embedded mini-cluster, against the DirectRunner of the same Beam version.

Everything runs in the apache-beam 2.62.0 venv (tests/engines/provision.py says why):
the DirectRunner output is the oracle, and a last test ties that venv's records to the
main environment's. SDK workers are separate processes that the TaskManagers start through
Beam's ``boot`` (PROCESS environment), so elements really cross process boundaries:
read, parse helpers, spill files and their k-way merge, the manifest written last.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from kebab_chunk.output.reader import read_chunks, read_errors
from tests.engines import provision
from tests.engines.conftest import Mixed, Output, assert_same_output, kebab_run
from tests.engines.flink import ENVIRONMENT_CACHE_ARG, flink_cluster

pytestmark = pytest.mark.slow

CHANGED, REMOVED, ADDED = "guides/installation.md", "notes/release-notes-2.4.txt", "new/added.md"


@dataclass
class FlinkRuns:
    direct_v1: Output
    direct_main: Output
    cluster_v1: Output
    cluster_incr_v2: Output
    cluster_update_v2: Output
    direct_v2: Output
    embedded_v1: Output
    records_per_taskmanager: dict[str, int]
    taskmanagers: list[str]
    mixed: Mixed
    stock_workers_per_job: int
    deployed_v1: Output
    deployed_update_v2: Output
    deployed_workers_per_job: list[int]


def _edited_copy(mixed: Mixed, dest: Path) -> Path:
    shutil.copytree(mixed.root, dest, symlinks=True)
    with (dest / CHANGED).open("a") as f:
        f.write("\n## Upgrading\n\nStop the scheduler, replace the binary, start it again.\n")
    (dest / REMOVED).unlink()
    (dest / ADDED).parent.mkdir()
    (dest / ADDED).write_text("# Added\n\nA document that only the second run sees.\n")
    return dest


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory,
    mixed_corpus: Mixed,
    beam262_bin: Path,
    boot262: Path,
    direct262: Output,
    direct_main: Output,
) -> Iterator[FlinkRuns]:
    base = tmp_path_factory.mktemp("flink")
    jar = provision.flink_job_server_jar()
    dist = provision.flink_dist()
    v2 = _edited_copy(mixed_corpus, base / "corpus-v2")
    portable = [
        "--runner=FlinkRunner",
        f"--flink_job_server_jar={jar}",
        "--environment_type=PROCESS",
        f'--environment_config={{"command": "{boot262}"}}',
        "--parallelism=2",
    ]
    env = {"RUN_PYTHON_SDK_IN_DEFAULT_ENVIRONMENT": "1"}
    direct_v2 = kebab_run(beam262_bin, v2, base / "direct-v2")
    with flink_cluster(dist, base / "cluster", beam262_bin, taskmanagers=2) as cluster:
        on_cluster = [*portable, f"--flink_master={cluster.master}"]
        cluster_v1 = kebab_run(beam262_bin, mixed_corpus.root, base / "cluster-v1", *on_cluster)
        stock_workers = cluster.sdk_workers_started()
        records = cluster.records_per_taskmanager("Parse and chunk documents")
        incr = kebab_run(
            beam262_bin, v2, base / "cluster-incr-v2", *on_cluster, f"--previous={cluster_v1.path}"
        )
        shutil.copytree(cluster_v1.path, base / "cluster-update")
        update = kebab_run(beam262_bin, v2, base / "cluster-update", *on_cluster, "--update")
        taskmanagers = cluster.taskmanager_ids()
    # The deployment docs/guide/runners.md recommends: Beam's jars on the class path.
    with flink_cluster(
        dist, base / "deployed", beam262_bin, taskmanagers=2, beam_jars=jar
    ) as deployed:
        on_deployed = [*portable, ENVIRONMENT_CACHE_ARG, f"--flink_master={deployed.master}"]
        deployed_v1 = kebab_run(beam262_bin, mixed_corpus.root, base / "deployed-v1", *on_deployed)
        deployed_workers = [deployed.sdk_workers_started()]
        shutil.copytree(deployed_v1.path, base / "deployed-update")
        deployed_update = kebab_run(
            beam262_bin, v2, base / "deployed-update", *on_deployed, "--update"
        )
        deployed_workers.append(deployed.sdk_workers_started() - deployed_workers[0])
    embedded = kebab_run(
        beam262_bin,
        mixed_corpus.root,
        base / "embedded-v1",
        *portable,
        "--flink_master=[local]",
        **env,
    )
    yield FlinkRuns(
        direct262,
        direct_main,
        cluster_v1,
        incr,
        update,
        direct_v2,
        embedded,
        records,
        taskmanagers,
        mixed_corpus,
        stock_workers,
        deployed_v1,
        deployed_update,
        deployed_workers,
    )
    shutil.rmtree(base, ignore_errors=True)


def test_cluster_output_is_byte_identical_to_the_direct_runner(runs: FlinkRuns) -> None:
    assert_same_output(runs.cluster_v1, runs.direct_v1)
    assert runs.cluster_v1.manifest["accounting"]["closes"] is True


def test_the_work_was_spread_over_both_taskmanagers(runs: FlinkRuns) -> None:
    """Flink's REST API: the parse-and-chunk stage read records on both TaskManagers."""
    assert runs.taskmanagers == ["tm-1", "tm-2"]
    assert sorted(runs.records_per_taskmanager) == runs.taskmanagers
    assert all(n > 0 for n in runs.records_per_taskmanager.values()), runs.records_per_taskmanager


def test_hostile_files_end_as_their_contract_says_on_the_cluster(runs: FlinkRuns) -> None:
    errors: dict[str, set[tuple[str, str]]] = {}
    for row in read_errors(str(runs.cluster_v1.path)).to_pylist():
        errors.setdefault(row["source_uri"], set()).add((row["stage"], row["error_type"]))
    chunked = set(read_chunks(str(runs.cluster_v1.path)).column("source_uri").to_pylist())
    assert len(runs.mixed.hostile) > 20
    for uri, expect in runs.mixed.hostile.items():
        if expect.bucket == "errors":
            assert errors.get(uri) == {(expect.stage, expect.error_type)}, uri
        elif expect.bucket == "chunked":
            assert uri in chunked and uri not in errors, uri
        else:
            assert uri not in chunked and uri not in errors, uri
    # The DOCX that is no zip archive is one error row, not a lost document.
    assert errors["office/not-a-zip.docx"]


def test_incremental_run_on_the_cluster_equals_a_full_run(runs: FlinkRuns) -> None:
    incr, full = runs.cluster_incr_v2, runs.direct_v2
    assert incr.part_files() == full.part_files()
    assert "documents/part-00000-of-00001.parquet" in full.part_files()
    got, want = incr.deterministic_manifest(), full.deterministic_manifest()
    # Reused documents carry their warnings from the previous documents table.
    assert got["counts"]["documents_with_warnings"] > 0
    assert got == want
    decisions = incr.manifest["incremental"]["documents"]
    assert decisions["reused"] > 10 and decisions["rechunked"] >= 1
    assert decisions["new"] >= 1 and decisions["deleted"] == 1


def test_an_update_on_the_cluster_reads_as_a_full_run(runs: FlinkRuns) -> None:
    """``--update`` commits snapshot 2 of the cluster's output: its live records equal a
    full DirectRunner run over the edited corpus, and the counts and accounting too."""
    _assert_reads_as_full_run(runs.cluster_update_v2, runs.direct_v2)


def _assert_reads_as_full_run(update: Output, full: Output) -> None:
    """Snapshot 2 of an ``--update`` against a full run over the same corpus: the same live
    records, counts and accounting, with the edit's reuse, rechunk, new and deleted."""
    assert update.manifest["snapshot"]["id"] == 2
    for read in (read_chunks, read_errors):
        got = read(str(update.path)).sort_by([("source_uri", "ascending")])
        want = read(str(full.path)).sort_by([("source_uri", "ascending")])
        assert sorted(got.to_pylist(), key=repr) == sorted(want.to_pylist(), key=repr)
    got, want = update.deterministic_manifest(), full.deterministic_manifest()
    assert got["counts"] == want["counts"] and got["accounting"] == want["accounting"]
    decisions = update.manifest["incremental"]["documents"]
    assert decisions["reused"] > 10 and decisions["rechunked"] >= 1
    assert decisions["new"] >= 1 and decisions["deleted"] == 1


def test_a_cluster_with_beam_on_its_class_path_writes_the_same_output(runs: FlinkRuns) -> None:
    """The recommended deployment (one SDK worker per TaskManager for all of a job's
    stages): the same files as the DirectRunner, and an update that reads as a full run."""
    assert_same_output(runs.deployed_v1, runs.direct_v1)
    _assert_reads_as_full_run(runs.deployed_update_v2, runs.direct_v2)


def test_a_cluster_with_beam_on_its_class_path_starts_one_sdk_worker_per_job_and_slot(
    runs: FlinkRuns,
) -> None:
    """What the deployment is for: each TaskManager serves all of a job's stages from one
    SDK worker, where the stock cluster starts one per stage (docs/guide/runners.md)."""
    assert runs.deployed_workers_per_job == [2, 2]
    assert runs.stock_workers_per_job > 2 * 3


def test_embedded_mini_cluster_is_byte_identical_to_the_direct_runner(runs: FlinkRuns) -> None:
    assert_same_output(runs.embedded_v1, runs.direct_v1)


def test_the_engine_venv_writes_the_records_of_the_main_environment(runs: FlinkRuns) -> None:
    """Beam 2.62 with its older pyarrow against this project's pinned Beam: the same
    records and manifest (the Parquet bytes differ only in the writer's version string)."""
    for read in (read_chunks, read_errors):
        got: pa.Table = read(str(runs.direct_v1.path))
        want: pa.Table = read(str(runs.direct_main.path))
        assert got.equals(want)
    got, want = runs.direct_v1.deterministic_manifest(), runs.direct_main.deterministic_manifest()
    # A part file's size and blake3 digest are of its bytes, which hold the writer's version.
    assert _writer_free(got) == _writer_free(want)


def _writer_free(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest with each listed part file reduced to its path and rows."""
    outputs = {
        kind: [{"path": e["path"], "rows": e["rows"]} for e in entries]
        for kind, entries in manifest["outputs"].items()
    }
    return {**manifest, "outputs": outputs}


def test_the_workers_run_the_compiled_core_when_this_run_built_it(beam262_bin: Path) -> None:
    """The Beam venv the cluster's workers boot has the core the main venv has, so the
    cluster runs above compared the core's records with the DirectRunner's."""
    if os.environ.get("KEBAB_REQUIRE_CORE") != "1":
        pytest.skip("the compiled core was not built for this run (no cargo)")
    probe = "import kebab_chunk._core as c; print(c.core() is not None)"
    found = subprocess.run(
        [str(beam262_bin / "python"), "-c", probe], capture_output=True, text=True, check=True
    )
    assert found.stdout.strip() == "True"
