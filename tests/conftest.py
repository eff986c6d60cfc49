"""Suite-wide settings: hypothesis example budgets (small in CI, larger locally); fixtures
shared by several test packages."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "local", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "fast", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("KEBAB_HYPOTHESIS_PROFILE", "ci"))
# No test reads or fills the user's embedding cache (kebab_chunk/sync/cache.py); subprocesses
# inherit this too (the README's verbatim run).
os.environ["KEBAB_CHUNK_CACHE_DIR"] = tempfile.mkdtemp(prefix="kebab-test-embeddings-")

REPO = Path(__file__).resolve().parents[1]

#: The paths a test taking ``core_mode`` runs on: the compiled core's and the pure-Python
#: one when the core is installed (docs/guide/core.md), else the Python path alone.
CORE_MODES = ("auto", "python") if importlib.util.find_spec("kebab_chunk_core") else ("python",)


@pytest.fixture(params=CORE_MODES)
def core_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs the test once per path (``KEBAB_CORE`` set for it): goldens pinned on both."""
    mode: str = request.param
    monkeypatch.setenv("KEBAB_CORE", mode)
    return mode


#: What the project needs to build and install; copied so pip writes nothing into the tree.
PROJECT_FILES = ("pyproject.toml", "README.md", "kebab_chunk", "pipelines")


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A temporary directory that a user without root's privileges can traverse (pytest's
    own is 0700); any mode changes below it are undone before it is removed."""
    path = Path(tempfile.mkdtemp(prefix="kebab-open-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for d, _, _ in os.walk(path):
            os.chmod(d, 0o755)
        shutil.rmtree(path)


@pytest.fixture(scope="session")
def library_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a fresh venv holding what ``pip install -c constraints.txt .`` installs
    (the library install: runtime dependencies, no extras, nothing else). A copy of the
    project is installed, not the tree itself. It reaches the package registry once per
    session (pip's cache makes that quick); tests/test_install.py and
    tests/parsers/test_runtime_only_pdf.py share it."""
    return fresh_install(tmp_path_factory.mktemp("library-install"), "")


def fresh_install(root: Path, extras: str) -> Path:
    """The python of a fresh venv under ``root`` with a copy of the project installed as
    ``pip install -c constraints.txt .[extras]`` (``extras`` "": none)."""
    source = root / "src"
    source.mkdir(parents=True)
    for name in PROJECT_FILES:
        if (REPO / name).is_dir():
            shutil.copytree(
                REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            shutil.copy2(REPO / name, source / name)
    venv.create(root / "venv", with_pip=True)
    python = root / "venv" / "bin" / "python"
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-c",
            str(REPO / "constraints.txt"),
            f"{source}[{extras}]" if extras else str(source),
        ],
        check=True,
        timeout=600,
    )
    return python
