"""``kebab-chunk run`` (kebab_chunk.cli.run): option errors are one sentence, exit 2; --overwrite.

Usage errors are caught on the launching machine, before any pipeline runs, so most of these
tests take milliseconds; the two --overwrite runs use a two-file corpus.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kebab_chunk.beam.write import part_name
from kebab_chunk.cli.run import main
from tests.beam.helpers import CORPUS, QUIET, output_chunks, quiet_beam, reference_run

quiet_beam()


@pytest.fixture
def tiny_corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    root.mkdir()
    for uri in ("guides/installation.md", "notes/release-notes-2.4.txt"):
        shutil.copy(CORPUS / uri, root / Path(uri).name)
    return root


def _usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("kebab-chunk run: error: "), err
    return err


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--labels", "md-heading-v1,nope-v1"], "unknown chunker label 'nope-v1'"),
        (["--labels", " , "], "--labels is empty"),
        (["--target-tokens", "100", "--overlap-tokens", "100"], "overlap_tokens"),
        (["--target-tokens", "0"], "target_tokens"),
        (["--tokenizer", "no-such-tokenizer"], "unknown tokenizer"),
        (["--max-file-bytes", "0"], "--max-file-bytes must be > 0"),
        (["--parse-timeout-s", "-1"], "--parse-timeout-s must be > 0"),
        (["--parsers", "md-nope-v9"], "no parser is registered as 'md-nope-v9'"),
        (["--parsers", "md-mistune-v1,md-pyromark-v1"], "name only one of them"),
        (["--taget-tokens", "100"], "unknown option '--taget-tokens'"),
        (["--runner"], "--runner"),
        (["--media-type", "rst"], "--media-type 'rst' is not EXT=MEDIA_TYPE"),
        (["--media-type", ".rst=text/rst"], "'text/rst', which no parser reads"),
        (["--media-type", "a/b=text/plain"], "does not name a file extension"),
        (
            ["--media-type", ".rst=text/plain", "--media-type", "RST=text/markdown"],
            "maps .rst to both text/plain and text/markdown",
        ),
    ],
)
def test_bad_options_are_one_sentence_and_exit_2(
    capsys: pytest.CaptureFixture[str],
    tiny_corpus: Path,
    tmp_path: Path,
    extra: list[str],
    needle: str,
) -> None:
    argv = ["--input", str(tiny_corpus), "--output", str(tmp_path / "out"), *extra]
    assert needle in _usage_error(capsys, argv)
    assert not (tmp_path / "out").exists()


def test_missing_and_unmatched_inputs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert "--input" in _usage_error(capsys, ["--output", str(tmp_path / "out")])
    empty = tmp_path / "empty"
    empty.mkdir()
    err = _usage_error(capsys, ["--input", str(empty), "--output", str(tmp_path / "out")])
    assert "matches no files" in err


def test_output_that_is_a_file_is_refused(
    capsys: pytest.CaptureFixture[str], tiny_corpus: Path, tmp_path: Path
) -> None:
    target = tmp_path / "out.parquet"
    target.write_bytes(b"not a directory")
    err = _usage_error(capsys, ["--input", str(tiny_corpus), "--output", str(target)])
    assert "is a file" in err


def test_output_inside_the_input_is_refused(
    capsys: pytest.CaptureFixture[str], tiny_corpus: Path
) -> None:
    err = _usage_error(capsys, ["--input", str(tiny_corpus), "--output", str(tiny_corpus / "out")])
    assert "inside the corpus" in err


def test_non_empty_output_needs_overwrite_and_foreign_data_is_never_deleted(
    capsys: pytest.CaptureFixture[str], tiny_corpus: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    (out / "chunks").mkdir(parents=True)
    err = _usage_error(capsys, ["--input", str(tiny_corpus), "--output", str(out)])
    assert "--overwrite" in err
    (out / "thesis.tex").write_text("years of work")
    err = _usage_error(capsys, ["--input", str(tiny_corpus), "--output", str(out), "--overwrite"])
    assert "refusing to overwrite" in err and "thesis.tex" in err
    assert (out / "thesis.tex").read_text() == "years of work"


def test_overwrite_replaces_the_whole_output(
    capsys: pytest.CaptureFixture[str], tiny_corpus: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    argv = ["--input", str(tiny_corpus), "--output", str(out), *QUIET]
    assert main(argv) == 0
    summary = capsys.readouterr().out
    assert "closes" in summary and "read_parquet" in summary
    stale_shard = out / "chunks" / "chunker_version=md-heading-v1" / part_name(3, 4)
    stale_label = out / "chunks" / "chunker_version=old-label-v0" / part_name(0, 1)
    for stale in (stale_shard, stale_label):
        stale.parent.mkdir(parents=True, exist_ok=True)
        stale.write_bytes(b"stale")
    assert (
        main(
            [
                *argv,
                "--overwrite",
                "--labels",
                "md-heading-v1",
                "--target-tokens",
                "128",
                "--overlap-tokens",
                "16",
            ]
        )
        == 0
    )
    assert not stale_shard.exists() and not stale_label.parent.exists()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["options"]["chunkers"] == ["md-heading-v1"]
    assert manifest["policy"]["target_tokens"] == 128
    from kebab_chunk.model import make_policy

    policy = make_policy(target_tokens=128, overlap_tokens=16)
    assert output_chunks(out) == reference_run(tiny_corpus, ["md-heading-v1"], policy).chunks


def test_parsers_option_pins_an_older_markdown_parser(
    capsys: pytest.CaptureFixture[str], tiny_corpus: Path, tmp_path: Path
) -> None:
    """--parsers md-mistune-v1: Markdown records name that version, the manifest says so,
    and the chunk ids equal the default parser's (both parsers give the same blocks here)."""
    default_out, pinned_out = tmp_path / "default", tmp_path / "pinned"
    base = ["--input", str(tiny_corpus), *QUIET]
    assert main([*base, "--output", str(default_out)]) == 0
    assert main([*base, "--output", str(pinned_out), "--parsers", "md-mistune-v1"]) == 0
    capsys.readouterr()
    default, pinned = output_chunks(default_out), output_chunks(pinned_out)
    versions = {c.source_uri: c.parser_version for c in pinned}
    assert versions == {
        "installation.md": "md-mistune-v1",
        "release-notes-2.4.txt": "text-plain-v2",
    }
    assert {c.parser_version for c in default if c.source_uri.endswith(".md")} == {"md-pyromark-v1"}
    assert [c.chunk_id for c in pinned] == [c.chunk_id for c in default]
    manifest = json.loads((pinned_out / "manifest.json").read_text())
    assert manifest["options"]["parsers"] == ["md-mistune-v1"]
    assert manifest["parsers"]["text/markdown"] == "md-mistune-v1"
    assert json.loads((default_out / "manifest.json").read_text())["parsers"]["text/markdown"] == (
        "md-pyromark-v1"
    )


def test_the_summary_shows_skipped_and_inconsistent_files_apart() -> None:
    from kebab_chunk.cli.run import _summary

    counts = {"chunks_total": 4, "chunks_by_label": {"md-heading-v2": 4}, "errors_by_stage": {}}
    accounting = {
        "files_matched": 9,
        "documents_chunked": 2,
        "documents_with_zero_chunks": 1,
        "errors": 1,
        "skipped": 5,
        "inconsistent": 0,
        "closes": True,
    }
    line = _summary({"counts": counts, "accounting": accounting}, "out").splitlines()[1]
    assert line.strip() == (
        "files matched 9 = chunked 2 + zero chunks 1 + errors 1 + skipped 5 (closes)"
    )
    broken = {**accounting, "files_matched": 11, "inconsistent": 2, "closes": False}
    line = _summary({"counts": counts, "accounting": broken}, "out").splitlines()[1]
    assert line.endswith("(DOES NOT CLOSE; 2 inconsistent: accounting.inconsistent_files)")


def test_no_merge_peers_gives_the_chunk_commands_records_and_is_not_reused_across(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tiny_corpus: Path,
    tmp_path: Path,
) -> None:
    """Issue 29.12: ``run --no-merge-peers`` (the stable-id setting docs/guide/scheduling.md
    recommends) chunks as ``chunk --no-merge-peers`` does, and a run with the other setting
    reuses none of its documents through --previous (the switch is in the policy hash)."""
    from kebab_chunk.cli import main as cli_main

    label = ["--labels", "md-heading-v2"]
    base = ["--input", str(tiny_corpus), *label, *QUIET]
    packed_out, apart_out = tmp_path / "packed", tmp_path / "apart"
    assert main([*base, "--output", str(packed_out)]) == 0
    assert (
        main([*base, "--output", str(apart_out), "--previous", str(packed_out), "--no-merge-peers"])
        == 0
    )
    capsys.readouterr()
    monkeypatch.chdir(tiny_corpus)
    assert (
        cli_main(["chunk", "installation.md", "--label", "md-heading-v2", "--no-merge-peers"])
        == 0
    )
    expected = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    apart = [c for c in output_chunks(apart_out) if c.source_uri == "installation.md"]
    packed = [c for c in output_chunks(packed_out) if c.source_uri == "installation.md"]
    assert sorted(c.chunk_id for c in apart) == sorted(r["chunk_id"] for r in expected)
    assert len(packed) < len(apart)  # peers merge in this file by default
    manifest = json.loads((apart_out / "manifest.json").read_text())
    assert manifest["policy"]["merge_peers"] is False
    assert manifest["incremental"]["documents"]["reused"] == 0
