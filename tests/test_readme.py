"""The README's user sections, run verbatim on a fresh copy of the repository.

Every fenced block preceded by ``<!-- readme-test -->`` is executed, in README order, by
one bash script in a copy of the tracked (and untracked, not ignored) files: shell blocks
as they are, Python blocks with the ``python`` that the Install block put on PATH. The
copy has no ``.venv``, so the Install block really creates and fills one (pip's cache keeps
that to a minute or two). A block that fails fails the test with the script's output.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
MARKER = "<!-- readme-test -->"
#: The README is for users: what it is, install, quick start, the main uses, links. Details
#: (benchmarks, every option, the output contract) live in docs/.
MAX_README_LINES = 150
_BLOCK = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.S | re.M)


def _documents(output: Path) -> list[dict[str, object]]:
    import pyarrow.parquet as pq

    return pq.read_table(output / "documents").to_pylist()


def marked_blocks(text: str) -> list[tuple[str, str]]:
    """``(language, code)`` of each block that follows a marker line, in order."""
    blocks = []
    for part in text.split(MARKER)[1:]:
        match = _BLOCK.match(part.lstrip("\n"))
        if match is None:
            raise AssertionError(f"{MARKER} must be followed by a fenced block: {part[:80]!r}")
        blocks.append((match.group(1), match.group(2)))
    return blocks


def script(blocks: list[tuple[str, str]]) -> str:
    lines = ["set -euo pipefail"]
    for i, (language, code) in enumerate(blocks):
        lines.append(f"echo '>>> README block {i} ({language})'")
        if language in ("sh", "bash", "console"):
            lines.append(code)
        elif language == "python":
            lines.append(f"python - <<'KEBAB_README_PY'\n{code}KEBAB_README_PY")
        else:
            raise AssertionError(f"README block {i}: no way to run a {language!r} block")
    return "\n".join(lines) + "\n"


def fresh_copy(target: Path) -> Path:
    """The files a fresh clone of the working tree has (tracked plus new, not ignored)."""
    names = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.split(b"\0")
    for raw in names:
        if not raw:
            continue
        name = os.fsdecode(raw)
        source = REPO / name
        if not source.is_file():  # deleted in the working tree
            continue
        dest = target / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest)
    return target


def test_the_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines"


def test_the_readme_shows_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert re.search(r"^\./run_local\.sh +#", text, re.M), "./run_local.sh"
    assert re.search(r"^\./run_local\.sh test +#", text, re.M), "./run_local.sh test"


def test_every_marked_readme_block_is_runnable_code() -> None:
    blocks = marked_blocks(README.read_text(encoding="utf-8"))
    languages = [language for language, _ in blocks]
    assert languages[0] == "sh" and "python" in languages, languages
    assert any("pip install" in code for _, code in blocks), "the Install block is tested"
    assert any("kebab-chunk run" in code for _, code in blocks), "the quick start is tested"


@pytest.mark.slow
def test_readme_runs_verbatim_on_a_fresh_copy(tmp_path: Path) -> None:
    clone = fresh_copy(tmp_path / "kebab-chunk")
    assert not (clone / ".venv").exists()
    (clone / "readme.sh").write_text(script(marked_blocks(README.read_text("utf-8"))))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = os.pathsep.join(
        p for p in env["PATH"].split(os.pathsep) if not p.startswith(str(REPO))
    )
    proc = subprocess.run(
        ["bash", "readme.sh"], cwd=clone, env=env, capture_output=True, text=True,
        timeout=1500, check=False,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-6000:]
    manifest = json.loads((clone / "out" / "docs" / "manifest.json").read_text())
    assert manifest["accounting"]["closes"] and manifest["counts"]["chunks_total"] > 0, log
    out = proc.stdout
    # What each block prints: DuckDB's table, the records, the adapters, the API's result.
    assert "│ md-heading-v3" in out, out[-4000:]
    assert re.search(r"^\d+ chunks; 0 errors$", out, re.M), out[-4000:]
    assert re.search(r"^\d+ README chunks$", out, re.M), out[-4000:]
    assert re.search(r"^True \d+ chunks$", out, re.M), out[-4000:]
    uris = {str(d["source_uri"]) for d in _documents(clone / "out" / "docs")}
    assert "guide/install.md" in uris, sorted(uris)  # docs/ in subfolders, all read
    assert not any(uri.endswith("decisions.md") for uri in uris), sorted(uris)  # --exclude
