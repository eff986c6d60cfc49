"""The four runner configurations of the end-to-end tests, and the worker-pool services.

``portable_external`` is the Fn API path Flink and Dataflow use: the pipeline goes to
Beam's own Python job service, which asks an EXTERNAL worker pool for SDK workers. Both
services are started here with ``sys.executable``, free ports, the venv's ``bin`` on
``PATH`` (the pool starts workers as plain ``python``), the repository on ``PYTHONPATH``
(workers import ``kebab_chunk`` by reference, as a staged wheel would provide on a
cluster), a start-up timeout, and cleanup of exactly the processes started.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.beam.helpers import REPO, subprocess_env

STARTUP_TIMEOUT_S = 60.0

CONFIGS: dict[str, list[str]] = {
    "in_memory": ["--direct_running_mode=in_memory"],
    "multi_processing": ["--direct_running_mode=multi_processing", "--direct_num_workers=2"],
    "portable_loopback": [
        "--runner=PortableRunner",
        "--job_endpoint=embed",
        "--environment_type=LOOPBACK",
    ],
    "portable_external": [],  # filled in from the running services, see external_args()
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path, what: str) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}:\n{log.read_text()}")
        with socket.socket() as s:
            if s.connect_ex(("localhost", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(
        f"{what} did not listen on port {port} within {STARTUP_TIMEOUT_S} s:\n{log.read_text()}"
    )


@contextmanager
def job_service_with_worker_pool(logs: Path, **env: str) -> Iterator[list[str]]:
    """Start both services; yields the pipeline arguments that use them."""
    job_port, pool_port = free_port(), free_port()
    child_env = subprocess_env(**env)
    commands = {
        "job service": [
            sys.executable,
            "-m",
            "apache_beam.runners.portability.local_job_service_main",
            "--port",
            str(job_port),
        ],
        "worker pool": [
            sys.executable,
            "-m",
            "apache_beam.runners.worker.worker_pool_main",
            "--service_port",
            str(pool_port),
        ],
    }
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for (what, cmd), port in zip(commands.items(), (job_port, pool_port), strict=True):
            log = logs / f"{what.replace(' ', '_')}.log"
            with log.open("wb") as sink:
                proc = subprocess.Popen(
                    cmd, cwd=REPO, env=child_env, stdout=sink, stderr=subprocess.STDOUT
                )
            procs.append(proc)
            _wait_for_port(port, proc, log, what)
        yield [
            "--runner=PortableRunner",
            f"--job_endpoint=localhost:{job_port}",
            "--environment_type=EXTERNAL",
            f"--environment_config=localhost:{pool_port}",
        ]
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
