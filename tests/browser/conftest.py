"""Headless Chromium for the browser tests; missing Chromium is a failure, never a skip."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ENSURE_SCRIPT = "tests/browser/ensure_chromium.sh"
#: The flags the project runs Chromium with: no sandbox (containers), no GPU, no network
#: chatter of its own, a throw-away profile.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
)


@dataclass
class Rendered:
    dom: str  # document.documentElement.outerHTML after scripts ran
    console: list[str]  # every console message / uncaught error Chromium logged
    screenshot: Path


def require_chromium(path: Path = CHROMIUM) -> Path:
    """``path`` if it exists, else a test failure (never a skip) naming the install script."""
    if not path.exists():
        pytest.fail(
            f"{path} is missing, and the browser tests need it: run {ENSURE_SCRIPT} as root "
            "(it installs Debian's chromium package); these tests never skip.",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="session")
def chromium() -> Path:
    return require_chromium()


@pytest.fixture
def open_in_chromium(chromium: Path, tmp_path: Path):
    """Open a local page headless: its DOM after load, its console lines, a screenshot."""

    def run(page: Path, width: int = 1280, height: int = 1600) -> Rendered:
        shot = tmp_path / f"{page.stem}.png"
        cmd = [
            str(chromium),
            *FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--window-size={width},{height}",
            f"--screenshot={shot}",
            "--dump-dom",
            page.resolve().as_uri(),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
        assert proc.returncode == 0, proc.stderr[-2000:]
        console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
        return Rendered(proc.stdout, console, shot)

    return run
