"""``kebab-chunk run`` / ``rechunk``: --include, --exclude, --include-hidden and several --input.

What a user found: a git checkout as input gave an error row per ``.git/*`` object,
``node_modules/`` was chunked, several inputs were refused. Every run here is a real
pipeline run on the DirectRunner over a small corpus, checked through its output and
manifest; the refusals need no run and leave no output behind.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from kebab_chunk.cli import rechunk
from kebab_chunk.cli.run import main
from kebab_chunk.corpus import SKIPPED_FOLDERS
from tests.beam.checkout import DOCUMENTS, NOT_DOCUMENTS, write_checkout
from tests.beam.helpers import (
    QUIET,
    output_chunks,
    output_errors,
    part_files,
    quiet_beam,
    reference_run,
)

pytestmark = pytest.mark.slow
quiet_beam()

RUNNER = ["--direct_running_mode=in_memory", *QUIET]


def _run(*argv: str) -> dict[str, Any]:
    """Run the job; returns the manifest (the run must succeed)."""
    output = argv[argv.index("--output") + 1]
    assert main([*argv, *RUNNER]) == 0
    manifest: dict[str, Any] = json.loads((Path(output) / "manifest.json").read_text())
    assert manifest["accounting"]["closes"] is True
    return manifest


def _uris(output: Path) -> set[str]:
    return {c.source_uri for c in output_chunks(output)}


def _tree(root: Path, *uris: str) -> Path:
    for i, uri in enumerate(uris):
        (root / uri).parent.mkdir(parents=True, exist_ok=True)
        (root / uri).write_text(f"# Document {i}\n\nAbout {uri}, in a sentence or two.\n")
    return root


def test_a_git_checkout_gives_its_documents_and_nothing_else(tmp_path: Path) -> None:
    repo = write_checkout(tmp_path / "repo")
    out = tmp_path / "out"
    manifest = _run("--input", str(repo), "--output", str(out))
    assert manifest["accounting"]["files_matched"] == len(DOCUMENTS)
    assert manifest["accounting"]["errors"] == 0 and output_errors(out) == set()
    assert _uris(out) == set(DOCUMENTS)
    options = manifest["options"]
    assert (options["inputs"], options["include"], options["exclude"]) == (["**"], [], [])
    assert options["include_hidden"] is False
    assert options["skipped_folders"] == list(SKIPPED_FOLDERS)

    every = tmp_path / "every"
    manifest = _run("--input", str(repo), "--output", str(every), "--include-hidden")
    links = 3  # the dangling links in .git and node_modules: one read error row each
    assert manifest["accounting"]["files_matched"] == len(DOCUMENTS) + len(NOT_DOCUMENTS) + links
    assert {"node_modules/pkg/README.md", ".github/workflows/ci.md"} <= _uris(every)
    assert manifest["options"]["include_hidden"] is True


def test_several_inputs_with_include_and_exclude(tmp_path: Path) -> None:
    corpus = _tree(
        tmp_path / "c",
        "docs/a.md",
        "docs/drafts/b.md",
        "docs/c.txt",
        "notes/d.md",
        "other/e.md",
    )
    out = tmp_path / "out"
    manifest = _run(
        "--input",
        str(corpus / "docs"),
        "--input",
        str(corpus / "notes"),
        "--include",
        "*.md",
        "--exclude",
        "drafts/",
        "--output",
        str(out),
    )
    assert _uris(out) == {"docs/a.md", "notes/d.md"}  # relative to the common parent c/
    assert manifest["accounting"]["files_matched"] == 2
    options = manifest["options"]
    assert options["inputs"] == ["docs/**", "notes/**"]
    assert (options["include"], options["exclude"]) == (["*.md"], ["drafts/"])
    assert manifest["run_info"]["inputs"] == [str(corpus / "docs"), str(corpus / "notes")]

    # One input keeps the source_uri (and so the doc ids) it always had.
    alone = tmp_path / "alone"
    _run("--input", str(corpus / "docs"), "--output", str(alone))
    assert output_chunks(alone) == reference_run(corpus / "docs").chunks
    assert _uris(alone) == {"a.md", "c.txt", "drafts/b.md"}


def _usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("kebab-chunk run: error: "), err
    assert "issue" not in err and "decisions" not in err
    return err


@pytest.mark.parametrize(
    ("inputs", "extra", "needle"),
    [
        (["c/docs", "c"], [], "overlap, so some files would be read twice"),
        (["c/docs", "c/docs"], [], "overlap, so some files would be read twice"),
        (["c/docs,c/notes"], [], "repeat --input once for each"),
        (["c"], ["--include", ".github/**"], "add --include-hidden"),
        (["c"], ["--exclude", ""], "is an empty pattern"),
        (["c"], ["--include", "../x/*.md"], "'..' part"),
    ],
)
def test_selections_that_cannot_work_are_one_sentence(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    inputs: list[str],
    extra: list[str],
    needle: str,
) -> None:
    _tree(tmp_path / "c", "docs/a.md", "notes/b.md")
    argv = [a for i in inputs for a in ("--input", str(tmp_path / i))]
    err = _usage_error(capsys, [*argv, "--output", str(tmp_path / "out"), *extra])
    assert needle in err, err
    assert not (tmp_path / "out").exists()


def test_a_selection_of_no_file_is_refused_and_keeps_the_old_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A glob that selects nothing is a mistake, not an empty corpus: refused in one
    sentence before the output is touched, so --overwrite cannot replace a good output
    with an empty one (a scheduled job with a typo would otherwise wipe its results)."""
    corpus = _tree(tmp_path / "c", "docs/a.md", "notes/b.md")
    out = tmp_path / "out"
    _run("--input", str(corpus), "--output", str(out))
    before = output_chunks(out)
    argv = ["--input", str(corpus), "--output", str(out), "--overwrite", *RUNNER]
    err = _usage_error(capsys, [*argv, "--include", "*.markdown"])
    assert "leave none of the files under --input to read" in err
    hidden_only = tmp_path / "h"
    (hidden_only / ".git").mkdir(parents=True)
    (hidden_only / ".git" / "x.md").write_text("# Hidden\n")
    err = _usage_error(capsys, ["--input", str(hidden_only), *argv[2:]])
    assert "add --include-hidden" in err, err
    assert output_chunks(out) == before


def test_previous_run_with_another_filter_is_not_fooled(tmp_path: Path) -> None:
    corpus = _tree(tmp_path / "c", "a.md", "b/x.md", "b/y.md", "z.md")
    narrow = tmp_path / "narrow"
    first = _run("--input", str(corpus), "--output", str(narrow), "--exclude", "b/")
    assert _uris(narrow) == {"a.md", "z.md"}

    wide = tmp_path / "wide"
    second = _run("--input", str(corpus), "--output", str(wide), "--previous", str(narrow))
    assert second["incremental"]["documents"] == {
        "reused": 2,
        "rechunked": 0,
        "new": 2,  # newly included
        "deleted": 0,
    }
    assert first["options"]["exclude"] != second["options"]["exclude"]
    full = tmp_path / "full"
    third = _run("--input", str(corpus), "--output", str(full))
    assert part_files(wide) == part_files(full)  # byte-identical to a full run
    drop = {"run_info", "incremental"}
    assert {k: v for k, v in second.items() if k not in drop} == {
        k: v for k, v in third.items() if k not in drop
    }

    fewer = tmp_path / "fewer"
    fourth = _run(
        "--input", str(corpus), "--output", str(fewer), "--previous", str(wide), "--exclude", "a.md"
    )
    assert fourth["incremental"]["documents"]["deleted"] == 1  # newly excluded
    assert fourth["incremental"]["documents"]["reused"] == 3
    assert _uris(fewer) == {"b/x.md", "b/y.md", "z.md"}


def test_rechunk_takes_several_corpora_and_passes_the_filters_on(tmp_path: Path) -> None:
    corpus = _tree(tmp_path / "c", "docs/a.md", "docs/skip.md", "notes/b.md")
    shutil.copy(corpus / "docs" / "a.md", corpus / "notes" / ".hidden.md")
    runs = tmp_path / "runs"
    argv = [
        "--corpus",
        str(corpus / "docs"),
        "--corpus",
        str(corpus / "notes"),
        "--runs",
        str(runs),
        "--exclude",
        "skip.md",
        *RUNNER,
    ]
    assert rechunk.main(argv) == 0
    run_dir = runs / rechunk.TABLE_NAME
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["options"]["inputs"] == ["docs/**", "notes/**"]
    assert manifest["options"]["exclude"] == ["skip.md"]
    assert _uris(run_dir) == {"docs/a.md", "notes/b.md"}
