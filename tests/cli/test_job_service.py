"""A job service that cannot be reached or started is one sentence, exit 2 (issue 29.15).

No network and no Java: the job endpoint is an unused loopback port, the jar downloads go
to unused loopback URLs (Beam's Maven repositories are pointed there), and a missing
local jar is a path that does not exist.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from apache_beam.runners.portability import prism_runner
from apache_beam.utils.subprocess_server import JavaJarServer

from kebab_chunk.beam import job_service
from kebab_chunk.cli.run import main
from tests.beam.helpers import QUIET


def _unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nSome text.\n")
    return root


def _one_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("kebab-chunk run: error: "), err
    assert "Traceback" not in err and "see the log above" not in err
    return err


@pytest.mark.parametrize("given_wait", [True, False])
def test_a_job_endpoint_where_nothing_listens_is_one_sentence_within_the_wait(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    corpus: Path,
    tmp_path: Path,
    given_wait: bool,
) -> None:
    """--job_server_timeout bounds the wait when given; else JOB_ENDPOINT_WAIT_S does
    (30 s; one second here), never Beam's silent 300 s."""
    monkeypatch.setattr(job_service, "JOB_ENDPOINT_WAIT_S", 1.0)
    endpoint = f"127.0.0.1:{_unused_port()}"
    argv = ["--input", str(corpus), "--output", str(tmp_path / "out"), *QUIET]
    argv += ["--runner=PortableRunner", f"--job_endpoint={endpoint}"]
    argv += ["--job_server_timeout=2"] if given_wait else []
    err = _one_line(capsys, argv)
    wait = "2 s" if given_wait else "1 s"
    assert f"no job service answered at --job_endpoint={endpoint} within {wait}" in err
    assert not (tmp_path / "out" / "manifest.json").exists()


def test_a_flink_job_server_jar_that_cannot_be_downloaded_is_one_sentence(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    corpus: Path,
    tmp_path: Path,
) -> None:
    """What a machine gets when Maven Central has no jar for the installed Beam (HTTP 404)
    or cannot be reached: both repositories Beam tries fail here without a network."""
    for attribute in ("MAVEN_CENTRAL_REPOSITORY", "GOOGLE_MAVEN_MIRROR"):
        monkeypatch.setattr(JavaJarServer, attribute, f"http://127.0.0.1:{_unused_port()}/maven2")
    argv = ["--input", str(corpus), "--output", str(tmp_path / "out"), *QUIET]
    argv += ["--runner=FlinkRunner", "--flink_master=localhost:8081"]
    err = _one_line(capsys, [*argv, f"--jar_cache_dir={tmp_path / 'jars'}"])
    assert "FlinkRunner could not download its job server jar" in err
    assert "pass --flink_job_server_jar=PATH" in err and "docs/guide/runners.md" in err


def test_a_missing_local_job_server_jar_is_one_sentence(
    capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-job-server.jar"
    argv = ["--input", str(corpus), "--output", str(tmp_path / "out"), *QUIET]
    argv += ["--runner=SparkRunner", f"--spark_job_server_jar={missing}"]
    err = _one_line(capsys, argv)
    assert f"the job server jar {str(missing)!r} does not exist" in err
    assert "pass --spark_job_server_jar=PATH" in err


#: Beam keeps one Prism job server per process, made with the first run's options; each
#: test here gets its own so that its --prism_location (or none) is the one Beam reads.
_OWN_PRISM_SERVER = ["--experiments=disable_prism_server_singleton"]


def test_a_prism_binary_that_cannot_be_downloaded_is_one_sentence(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    corpus: Path,
    tmp_path: Path,
) -> None:
    """PrismRunner without --prism_location downloads a release binary; offline (here an
    unused loopback URL and an empty binary cache) that used to end as "the pipeline
    failed ... see the log above for the worker's traceback" with no such traceback."""
    monkeypatch.setattr(
        prism_runner, "GITHUB_DOWNLOAD_PREFIX", f"http://127.0.0.1:{_unused_port()}/download/"
    )
    monkeypatch.setattr(prism_runner.PrismJobServer, "BIN_CACHE", str(tmp_path / "bin"))
    argv = ["--input", str(corpus), "--output", str(tmp_path / "out"), *QUIET]
    err = _one_line(capsys, [*argv, "--runner=PrismRunner", *_OWN_PRISM_SERVER])
    assert "PrismRunner could not download its Prism binary" in err
    assert "pass --prism_location=PATH" in err and "docs/guide/runners.md" in err


def test_a_prism_location_that_does_not_exist_is_one_sentence(
    capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "no-prism"
    argv = ["--input", str(corpus), "--output", str(tmp_path / "out"), *QUIET]
    err = _one_line(
        capsys, [*argv, "--runner=PrismRunner", f"--prism_location={missing}", *_OWN_PRISM_SERVER]
    )
    assert f"the Prism binary '{missing}' does not exist" in err
