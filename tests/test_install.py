"""Install what you use: the library install (``pip install .``, no extras) has no Apache Beam.

The library, its splitters and adapters, and the commands ``chunk``, ``parse`` and ``view``
work without the extras; the commands of an extra say in one sentence what to install
(exit status 2), as do the modules that need Beam. The fast tests run this repository's
code in a subprocess whose imports of the extras' packages fail as they do where those are
not installed; the slow one installs the project into a fresh venv with no extras
(``library_python``, tests/conftest.py) and runs the console script there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fresh_install

REPO = Path(__file__).resolve().parents[1]
MARKDOWN = REPO / "fixtures" / "corpus" / "guides" / "configuration.md"
PDF = REPO / "fixtures" / "corpus" / "pdf" / "three-page-en.pdf"

#: Top-level modules of what the extras add to the library install: the pipeline (Beam),
#: eval and report (numpy, safetensors, matplotlib), query (pandas, DuckDB), sync (LanceDB,
#: psycopg, pgvector) and dev's Chroma. The slow test below checks the real install.
HIDDEN = (
    "apache_beam", "numpy", "safetensors", "matplotlib", "pandas", "duckdb",
    "lancedb", "psycopg", "pgvector", "chromadb",
)

#: Makes every import of a HIDDEN module fail as it does where it is not installed.
WITHOUT_EXTRAS = f"""
import sys
HIDDEN = {HIDDEN!r}
assert not [m for m in sys.modules if m.partition(".")[0] in HIDDEN], "imported at start-up"

class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, _NotInstalled())
"""

CLI = WITHOUT_EXTRAS + "from kebab_chunk.cli import main\nsys.exit(main(sys.argv[1:]))\n"


def missing(what: str, package: str, extra: str) -> str:
    """The sentence (without the CLI's prefix and period)."""
    return (
        f"{what} needs {package}, which is not installed; install it with "
        f"pip install 'kebab-chunk[{extra}]'"
    )


def cli_without_extras(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CLI, *args],
        capture_output=True, text=True, cwd=cwd, timeout=300, check=False,
    )


def check_chunk_parse_view(run: Any, out: Path) -> None:
    """``chunk`` (Markdown and PDF), ``parse`` and ``view`` work; ``run(*args)`` runs
    the command line."""
    for path, label in ((MARKDOWN, "md-heading-v3"), (PDF, "pdf-page-v3")):
        done = run("chunk", str(path), "--label", label)
        assert done.returncode == 0, done.stderr
        records = [json.loads(line) for line in done.stdout.splitlines()]
        assert records and all(r["chunk_id"] and r["text"] for r in records), done.stdout
        assert {(r["source_uri"], r["chunker_version"]) for r in records} == {(str(path), label)}
    done = run("parse", str(PDF))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["media_type"] == "application/pdf"
    page = out / "view.html"
    done = run("view", str(MARKDOWN), "--html", str(page))
    assert done.returncode == 0, done.stderr
    assert "<html" in page.read_text(encoding="utf-8").lower()


def test_chunk_parse_and_view_run_without_the_extras(tmp_path: Path) -> None:
    check_chunk_parse_view(lambda *a: cli_without_extras(*a, cwd=tmp_path), tmp_path)


@pytest.mark.parametrize("args", [["--help"], ["chunk", "--help"], ["view", "--help"]])
def test_help_works_without_the_extras(args: list[str], tmp_path: Path) -> None:
    done = cli_without_extras(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: kebab-chunk"), done.stdout


@pytest.mark.parametrize(
    ("args", "package", "extra"),
    [
        (["run", "--input", str(REPO / "fixtures" / "corpus"), "--output", "out"], "Apache Beam",
         "pipeline"),
        (["run", "--help"], "Apache Beam", "pipeline"),
        (["rechunk", "--corpus", str(REPO / "fixtures" / "corpus"), "--runs", "runs"],
         "Apache Beam", "pipeline"),
        (["expire", "out", "--keep-last", "1"], "Apache Beam", "pipeline"),
        (["compact", "out"], "Apache Beam", "pipeline"),
        (["export", "out", "dest"], "Apache Beam", "pipeline"),
        (["inspect", "out"], "numpy", "report"),
        (["eval", "--corpus", "c", "--questions", "q.csv", "--setting", "md-heading-v1"],
         "numpy", "eval"),
    ],
)
def test_a_command_of_an_extra_says_what_to_install(
    args: list[str], package: str, extra: str, tmp_path: Path
) -> None:
    done = cli_without_extras(*args, cwd=tmp_path)
    sentence = missing(f"the {args[0]} command", package, extra)
    assert (done.returncode, done.stderr, done.stdout) == (2, f"kebab-chunk: {sentence}.\n", "")
    assert list(tmp_path.iterdir()) == []  # nothing created


#: ``python -m pipelines.chunk_corpus ARGS`` where the extras are not installed.
RUNNABLE_JOB = WITHOUT_EXTRAS + (
    "import runpy\n"
    "runpy.run_module('pipelines.chunk_corpus', run_name='__main__', alter_sys=True)\n"
)


@pytest.mark.parametrize(
    "args", [["--input", str(REPO / "fixtures" / "corpus"), "--output", "out"], ["--help"]]
)
def test_the_runnable_job_says_what_to_install(args: list[str], tmp_path: Path) -> None:
    """Not a ModuleNotFoundError traceback: the sentence of ``kebab-chunk run``."""
    done = subprocess.run(
        [sys.executable, "-c", RUNNABLE_JOB, *args],
        capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False,
    )
    sentence = missing("the run command", "Apache Beam", "pipeline")
    assert (done.returncode, done.stderr, done.stdout) == (2, f"kebab-chunk: {sentence}.\n", "")
    assert list(tmp_path.iterdir()) == []  # nothing created


LIBRARY = WITHOUT_EXTRAS + """
import importlib, json
import kebab_chunk
from kebab_chunk import get_chunker, make_policy, parse_document
from kebab_chunk.errors import MissingDependencyError
from kebab_chunk.integrations.langchain import KebabTextSplitter, to_langchain_documents

text = open(sys.argv[1], encoding="utf-8").read()
doc = parse_document(text.encode(), "guide.md")
records = get_chunker("md-heading-v3").chunk(doc, make_policy(target_tokens=64, overlap_tokens=8))
pieces = KebabTextSplitter().split_text(text)
documents = to_langchain_documents(records, metadata="flat")
refused = {}
for module in ("kebab_chunk.beam", "kebab_chunk.pipeline", "kebab_chunk.integrations.beam_rag"):
    try:
        importlib.import_module(module)
    except MissingDependencyError as exc:
        refused[module] = str(exc)
print(json.dumps({
    "records": len(records), "pieces": pieces, "documents": [d.id for d in documents],
    "ids": [r.chunk_id for r in records], "refused": refused,
}))
"""


def test_the_library_and_the_langchain_splitter_run_without_the_extras(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", LIBRARY, str(MARKDOWN)],
        capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    text = MARKDOWN.read_text(encoding="utf-8")
    assert result["records"] > 1 and result["documents"] == result["ids"]
    assert result["pieces"] and all(piece in text for piece in result["pieces"])
    assert result["refused"] == {
        module: missing(module, "Apache Beam", "pipeline")
        for module in ("kebab_chunk.beam", "kebab_chunk.pipeline",
                       "kebab_chunk.integrations.beam_rag")
    }


def test_apache_beam_is_the_pipeline_extra_not_a_core_dependency() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def names(requirements: list[str]) -> set[str]:
        return {r.split(";")[0].split("[")[0].split(">")[0].split("=")[0].strip().lower()
                for r in requirements}

    extras = project["optional-dependencies"]
    assert "apache-beam" not in names(project["dependencies"])
    assert "apache-beam" in names(extras["pipeline"])
    # ./run_local.sh (run, test, bench) installs it; so do the README and the dev extra.
    bootstrap = [line for line in (REPO / "run_local.sh").read_text().splitlines()
                 if "bootstrap dev" in line]
    assert bootstrap and all(line.count(",pipeline") == 2 for line in bootstrap), bootstrap
    assert "kebab-chunk[pipeline]" in extras["dev"]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert 'pip install -c constraints.txt ".[pipeline,' in readme


# --- the real library install ----------------------------------------------------------------


@pytest.mark.slow
def test_the_library_install_has_no_beam_and_chunks(library_python: Path, tmp_path: Path) -> None:
    bin_dir = library_python.parent
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
    probe = subprocess.run(
        [str(library_python), "-I", "-c",
         "import importlib.util, kebab_chunk; "
         "assert importlib.util.find_spec('apache_beam') is None; print(kebab_chunk.__file__)"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120, check=False,
    )
    assert probe.returncode == 0, probe.stderr
    assert Path(probe.stdout.strip()).is_relative_to(bin_dir.parent), probe.stdout

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(bin_dir / "kebab-chunk"), *args],
            capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300, check=False,
        )

    assert run("--help").returncode == 0
    check_chunk_parse_view(run, tmp_path)
    done = run("run", "--input", str(REPO / "fixtures" / "corpus"), "--output", "out")
    sentence = missing("the run command", "Apache Beam", "pipeline")
    assert (done.returncode, done.stderr) == (2, f"kebab-chunk: {sentence}.\n")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_the_library_with_the_langchain_extra_runs_the_splitter_without_beam(
    tmp_path: Path,
) -> None:
    """Issue 31's fresh venv: the library plus the splitter's own package, no Beam."""
    python = fresh_install(tmp_path / "install", "langchain")
    code = (
        "import importlib.util, kebab_chunk\n"
        "from kebab_chunk.integrations.langchain_splitter import KebabTextSplitter\n"
        "assert importlib.util.find_spec('apache_beam') is None\n"
        "pieces = KebabTextSplitter().split_text('# Title\\n\\nOne paragraph.\\n\\n"
        "## Part\\n\\nAnother one.\\n')\n"
        "print(len(pieces), repr(pieces[-1]))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    done = subprocess.run([str(python), "-I", "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    count, last = done.stdout.split(" ", 1)
    assert int(count) >= 1 and "Another one." in last
