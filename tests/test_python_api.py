"""The documented Python API: ``kebab_chunk.pipeline``, the public readers, the examples.

The examples of docs/guide/python-api.md run as written (in a scratch folder that sees the
repository's fixtures); ``pipeline.run`` writes what ``kebab-chunk run`` writes; bad
arguments and unfinished outputs give one-sentence KebabErrors.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import kebab_chunk
from kebab_chunk.cli import main as cli_main
from kebab_chunk.errors import KebabError, OutputDirError, UnknownChunkerError, UsageError
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.pipeline import configure, run
from tests.manifest_shape import problems
from tests.test_readme import marked_blocks, script

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "guide" / "python-api.md"
CORPUS = REPO / "fixtures" / "corpus"


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*.parquet"))
    }


@pytest.mark.slow
def test_python_api_doc_examples_run_as_written(tmp_path: Path) -> None:
    (tmp_path / "fixtures").symlink_to(REPO / "fixtures")
    blocks = marked_blocks(DOC.read_text(encoding="utf-8"))
    assert [language for language, _ in blocks] == ["python"] * 4
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(
        ["bash", "-c", script(blocks)], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=900, check=False,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    out = proc.stdout
    assert "('md-heading-v3'," in out and "('pdf-page-v3'," in out  # the composed pipeline
    assert "pdf/three-page-en.pdf chunked" in out  # result.documents()
    assert "pdf/encrypted-real-password.pdf" not in out  # excluded
    assert (tmp_path / "out" / "api-example" / "manifest.json").is_file()


@pytest.mark.slow
def test_pipeline_run_writes_what_the_command_writes(tmp_path: Path) -> None:
    result = run(CORPUS, tmp_path / "api", beam_args=["--direct_num_workers=1"])
    assert cli_main(["run", "--input", str(CORPUS), "--output", str(tmp_path / "cli")]) == 0
    assert result.closes
    api, cli = _files(tmp_path / "api"), _files(tmp_path / "cli")
    assert api and api == cli
    chunks = result.chunks()
    assert chunks == kebab_chunk.read_chunks(tmp_path / "cli")
    assert [c.position for c in chunks if c.source_uri == "README.md"] == sorted(
        c.position for c in chunks if c.source_uri == "README.md"
    )
    pdf = kebab_chunk.read_chunks(tmp_path / "api", label="pdf-page-v3")
    assert pdf and {c.chunker_version for c in pdf} == {"pdf-page-v3"}
    assert {e.source_uri for e in result.errors()} == {
        e.source_uri for e in kebab_chunk.read_errors(tmp_path / "cli")
    }
    statuses = {d.source_uri: d.status for d in kebab_chunk.read_documents(tmp_path / "api")}
    assert statuses["notes/empty.txt"] == "zero_chunks"
    assert statuses["pdf/encrypted-real-password.pdf"] == "error"
    assert len(statuses) == result.manifest["accounting"]["files_matched"]
    assert problems(result.manifest) == []  # the typed manifest is what was written
    with pytest.raises(OutputDirError, match="was not chunked with label 'hierarchical-v1'"):
        kebab_chunk.read_chunks(tmp_path / "api", label="hierarchical-v1")


def test_readers_refuse_an_unfinished_output(tmp_path: Path) -> None:
    (tmp_path / "chunks").mkdir()
    for reader in (kebab_chunk.read_chunks, kebab_chunk.read_documents, kebab_chunk.read_errors):
        with pytest.raises(OutputDirError, match=r"no manifest\.json, so it is not a finished"):
            reader(tmp_path)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"labels": "md-heading-v1"}, UsageError, "labels must be a list, got the string"),
        ({"labels": []}, UsageError, "labels is empty"),
        ({"exclude": "*.pdf"}, UsageError, "exclude must be a list, got the string"),
        ({"include": [""]}, UsageError, "empty"),
        ({"labels": ["no-such-v9"]}, UnknownChunkerError, "no-such-v9"),
        ({"max_file_bytes": 0}, UsageError, "max_file_bytes must be > 0"),
        ({"chunk_timeout_s": -1}, UsageError, "chunk_timeout_s must be > 0"),
        ({"previous": "/nonexistent/prev"}, OutputDirError, "prev"),
        ({"previous": "gs://bucket/prev"}, UsageError, "kebab-chunk\\[gcs\\]"),
        ({"media_types": [".rst=text/plain"]}, UsageError, "media_types must be a mapping"),
        ({"media_types": {".rst": "text/x-rst"}}, UsageError, "which no parser reads"),
        ({"media_types": {"": "text/plain"}}, UsageError, "does not name a file extension"),
        (
            {
                "labels": ["md-heading-v1"],
                "policy": ChunkPolicy(tokenizer="tiktoken:cl100k_base"),
            },
            UsageError,
            "is not used by md-heading-v1",
        ),
    ],
)
def test_configure_refuses_bad_values_in_one_sentence(
    tmp_path: Path, kwargs: dict[str, object], error: type[KebabError], message: str
) -> None:
    with pytest.raises(error, match=message) as caught:
        configure(CORPUS, tmp_path / "out", **kwargs)  # type: ignore[arg-type]
    text = str(caught.value)
    assert "\n" not in text and text.endswith((".", ")", "'"))
    assert not (tmp_path / "out").exists()  # nothing written


def test_configure_defaults_match_the_command_line(tmp_path: Path) -> None:
    from kebab_chunk.cli.run import parse_args

    api = configure(str(CORPUS), str(tmp_path / "o"))
    cli, beam_args = parse_args(["--input", str(CORPUS), "--output", str(tmp_path / "o")])
    assert api == cli and beam_args == []


def test_configure_takes_the_media_type_options_as_the_command_line_does(tmp_path: Path) -> None:
    from kebab_chunk.cli.run import parse_args

    api = configure(
        str(CORPUS),
        str(tmp_path / "o"),
        media_types={"RST": "text/plain", ".json": "application/vnd.docling+json"},
        skip_unsupported=True,
    )
    mapped = ["--media-type", ".rst=text/plain"]
    mapped += ["--media-type", "json=application/vnd.docling+json"]
    cli, _ = parse_args(
        ["--input", str(CORPUS), "--output", str(tmp_path / "o"), "--skip-unsupported", *mapped]
    )
    assert api == cli and api.skip_unsupported
    assert api.media_types.detect("docs/a.RST") == "text/plain"
    assert api.media_types.detect("a.rst", b"%PDF-1.7") == "application/pdf"  # content wins
    assert api.media_types.to_manifest() == {
        ".json": "application/vnd.docling+json",
        ".rst": "text/plain",
    }
