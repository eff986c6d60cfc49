"""A standalone Flink session cluster on loopback: one JobManager, N TaskManagers.

Started from Flink's own ``lib/`` (tests/engines/provision.py) with Flink's own JVM-sizing
tool (``BashJavaUtils``, what ``bin/taskmanager.sh`` runs), each daemon a separate JVM with
its own log. TaskManagers have one slot each, so ``--parallelism=N`` must use all of them.
SDK workers are started by the TaskManagers themselves (Beam's PROCESS environment, the
``boot`` program), with the Beam venv's ``bin`` first on their PATH.

``beam_jars``: the cluster as docs/guide/runners.md recommends for Beam jobs, Beam's runner
jars on every daemon's class path and loaded parent-first, so a job's stages share one SDK
worker per TaskManager (with ``--environment_cache_millis``) and Beam's classes, with the
code the JIT compiled for them, outlive a job. Without it, the stock cluster: Beam's
classes come with each job and each stage starts its own SDK worker.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.beam.runners import free_port
from tests.engines.provision import EngineSetupError, require

STARTUP_TIMEOUT_S = 90.0
#: With ``beam_jars``: how long a job's SDK environment outlives the stage that used it last,
#: so the next stage takes it over (docs/guide/runners.md). Longer than the gaps between a
#: job's stages here; an idle worker holds only memory, for that long after the job.
ENVIRONMENT_CACHE_ARG = "--environment_cache_millis=60000"
#: What Beam's Python SDK worker logs as it starts (apache_beam/runners/worker/sdk_worker_main).
SDK_WORKER_STARTED = "Python sdk harness starting."
#: JVM flags Flink 1.19's default configuration passes on Java 17.
JAVA17_OPENS = [
    "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
    *(
        f"--add-opens=java.base/{p}=ALL-UNNAMED"
        for p in (
            "java.lang",
            "java.net",
            "java.io",
            "java.nio",
            "sun.nio.ch",
            "java.lang.reflect",
            "java.text",
            "java.time",
            "java.util",
            "java.util.concurrent",
            "java.util.concurrent.atomic",
            "java.util.concurrent.locks",
        )
    ),
]
_LOG4J = """rootLogger.level = INFO
rootLogger.appenderRef.file.ref = File
appender.file.name = File
appender.file.type = File
appender.file.fileName = ${sys:log.file}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{HH:mm:ss,SSS} %-5p %c - %m%n
"""


@dataclass
class FlinkCluster:
    rest_port: int
    logs: Path
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def master(self) -> str:
        return f"localhost:{self.rest_port}"

    def rest(self, path: str) -> Any:
        url = f"http://localhost:{self.rest_port}{path}"
        with urllib.request.urlopen(url, timeout=10) as resp:
            return json.load(resp)

    def sdk_workers_started(self) -> int:
        """SDK workers the TaskManagers have started so far: each logs its start once, and
        Beam forwards the line to the TaskManager's log."""
        return sum(
            log.read_text(errors="replace").count(SDK_WORKER_STARTED)
            for log in self.logs.glob("tm-*.log")
        )

    def taskmanager_ids(self) -> list[str]:
        return sorted(tm["id"] for tm in self.rest("/taskmanagers")["taskmanagers"])

    def records_per_taskmanager(self, vertex_contains: str) -> dict[str, int]:
        """Records read per TaskManager by the newest job's vertex whose name contains
        ``vertex_contains`` (Flink's REST API, summed over that vertex's subtasks)."""
        jobs = self.rest("/jobs/overview")["jobs"]
        job = max(jobs, key=lambda j: j["start-time"])
        vertices = self.rest(f"/jobs/{job['jid']}")["vertices"]
        vertex = next(v for v in vertices if vertex_contains in v["name"])
        per_tm = self.rest(f"/jobs/{job['jid']}/vertices/{vertex['id']}/taskmanagers")
        return {
            tm["taskmanager-id"]: int(tm["metrics"]["read-records"])
            for tm in per_tm["taskmanagers"]
        }


def runner_jars(job_server_jar: Path) -> list[Path]:
    """The jars of Beam's Flink runner that a cluster's class path lacks: the job server's
    dependencies (``lib/`` beside it, tests/engines/provision.py) without Flink's own
    modules, which the cluster's ``lib/`` has in its own version, and slf4j, whose API
    Flink's ``lib/`` has and whose simple binding would take over Flink's logging."""
    return sorted(
        j
        for j in (job_server_jar.parent / "lib").glob("*.jar")
        if not j.name.startswith(("flink-", "slf4j-"))
    )


def _jvm_params(lib: Path, conf: Path, which: str) -> tuple[list[str], list[str]]:
    """(JVM flags, -D dynamic properties) Flink's own sizing tool derives from the config."""
    out = subprocess.run(
        [
            "java",
            "-cp",
            f"{lib}/*",
            "org.apache.flink.runtime.util.bash.BashJavaUtils",
            which,
            "--configDir",
            str(conf),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    results = [
        ln.split(":", 1)[1]
        for ln in out.splitlines()
        if ln.startswith("BASH_JAVA_UTILS_EXEC_RESULT:")
    ]
    return results[0].split(), results[1].split()


@contextmanager
def flink_cluster(
    dist: Path,
    workdir: Path,
    beam_bin: Path,
    taskmanagers: int = 2,
    tm_memory: str = "2048m",
    beam_jars: Path | None = None,
) -> Iterator[FlinkCluster]:
    """Start the cluster; yields it once every TaskManager has registered. ``beam_jars``: the
    Flink job server jar whose runner jars go on the class path (see the module docstring)."""
    require("java")
    conf, logs = workdir / "conf", workdir / "log"
    conf.mkdir(parents=True, exist_ok=True)
    logs.mkdir(parents=True, exist_ok=True)
    rest_port, rpc_port = free_port(), free_port()
    (conf / "flink-conf.yaml").write_text(
        "\n".join(
            [
                "jobmanager.rpc.address: localhost",
                f"jobmanager.rpc.port: {rpc_port}",
                "jobmanager.bind-host: localhost",
                "rest.address: localhost",
                "rest.bind-address: localhost",
                f"rest.port: {rest_port}",
                "taskmanager.bind-host: localhost",
                "taskmanager.host: localhost",
                "taskmanager.numberOfTaskSlots: 1",
                "taskmanager.rpc.port: 0",
                "blob.server.port: 0",
                "jobmanager.memory.process.size: 1024m",
                f"taskmanager.memory.process.size: {tm_memory}",
                # Beam's gRPC data plane allocates direct buffers outside Flink's network memory;
                # with Flink's default of 0 a large carried-forward document fails the TaskManager.
                "taskmanager.memory.task.off-heap.size: 384m",
                f"parallelism.default: {taskmanagers}",
                f"io.tmp.dirs: {workdir / 'tmp'}",
                # Beam's classes from the class path: no job's own copy shadows them.
                *(["classloader.resolve-order: parent-first"] if beam_jars else []),
                "",
            ]
        )
    )
    (conf / "log4j.properties").write_text(_LOG4J)
    lib = dist / "lib"
    classpath = os.pathsep.join(
        [f"{lib}/*", *(str(j) for j in (runner_jars(beam_jars) if beam_jars else []))]
    )
    env = dict(os.environ)
    # SDK workers: Beam's boot runs `python` from PATH, in that venv (no per-job venv).
    env["PATH"] = os.pathsep.join([str(beam_bin), env.get("PATH", "")])
    env["RUN_PYTHON_SDK_IN_DEFAULT_ENVIRONMENT"] = "1"
    cluster = FlinkCluster(rest_port=rest_port, logs=logs)
    daemons = [
        (
            "jobmanager",
            "GET_JM_RESOURCE_PARAMS",
            "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint",
            [],
        )
    ]
    daemons += [
        (
            f"tm-{i}",
            "GET_TM_RESOURCE_PARAMS",
            "org.apache.flink.runtime.taskexecutor.TaskManagerRunner",
            [f"-Dtaskmanager.resource-id=tm-{i}"],
        )
        for i in range(1, taskmanagers + 1)
    ]
    try:
        for name, sizing, main, extra in daemons:
            jvm, dynamic = _jvm_params(lib, conf, sizing)
            cmd = [
                sys.executable,  # a subreaper: every descendant's CPU stays in the tree
                str(Path(__file__).with_name("reaper.py")),
                "java",
                *JAVA17_OPENS,
                *jvm,
                f"-Dlog.file={logs / name}.log",
                f"-Dlog4j.configurationFile=file:{conf / 'log4j.properties'}",
                "-cp",
                classpath,
                main,
                "--configDir",
                str(conf),
                *extra,
                *dynamic,
            ]
            with (logs / f"{name}.out").open("wb") as sink:
                # Own session: teardown kills the daemon and the SDK workers it started.
                cluster.procs[name] = subprocess.Popen(
                    cmd, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
                )
        _wait_registered(cluster, taskmanagers)
        yield cluster
    finally:
        for proc in cluster.procs.values():
            _kill_group(proc)


def _wait_registered(cluster: FlinkCluster, taskmanagers: int) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        for name, proc in cluster.procs.items():
            if proc.poll() is not None:
                raise EngineSetupError(
                    f"Flink {name} exited with {proc.returncode}; see {cluster.logs / name}.log"
                )
        try:
            if len(cluster.taskmanager_ids()) == taskmanagers:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise EngineSetupError(
        f"Flink did not register {taskmanagers} TaskManagers within {STARTUP_TIMEOUT_S} s; "
        f"see {cluster.logs}"
    )


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
