"""Every reader refuses a damaged output in one sentence (issue 29, item 11).

A finished output is damaged in one way per case (no manifest, a manifest that is not JSON
or not of the manifest's shape, a listed part file missing, an unlisted one present, a part
file that is not Parquet, of another table or with other rows than listed), and each reader
is pointed at it: the Python API (``kebab_chunk.read_*``), ``diff`` on either side,
``inspect``, ``report`` and ``view --from-output``. Each must refuse with one
OutputDirError sentence (exit status 2 on the command line), never exit 0 with a garbage
result, a raw pyarrow/JSON error or an "unexpected" failure. ``diff`` escapes control
characters in the names it prints, as ``inspect`` does.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import kebab_chunk
from kebab_chunk.cli import main as cli_main
from kebab_chunk.errors import OutputDirError
from kebab_chunk.output.diff import LabelDiff, OutputDiff, format_diff
from tests.beam.helpers import QUIET, quiet_beam

quiet_beam()

DOC = "guide.md"


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(corpus, output): a finished run over two Markdown files."""
    base = tmp_path_factory.mktemp("damaged")
    corpus = base / "corpus"
    corpus.mkdir()
    sections = "\n\n".join(f"## Part {i}\n\n" + "Some words here. " * 40 for i in range(6))
    (corpus / DOC).write_text(f"# Guide\n\n{sections}\n")
    (corpus / "short.md").write_text("# Short\n\nA line.\n")
    out = base / "out"
    assert cli_main(["run", "--input", str(corpus), "--output", str(out), *QUIET]) == 0
    return corpus, out


def _chunk_part(out: Path) -> Path:
    """The part file of the label with the most chunks."""
    return max(out.glob("chunks/*/*.parquet"), key=lambda p: pq.read_metadata(p).num_rows)


def _no_manifest(out: Path) -> None:
    (out / "manifest.json").unlink()


def _not_json(out: Path) -> None:
    (out / "manifest.json").write_text('{"policy_hash": "x", ')


def _wrong_shape(out: Path) -> None:
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["chunkers"] = ["md-heading-v2"]
    (out / "manifest.json").write_text(json.dumps(manifest))


def _listed_file_missing(out: Path) -> None:
    _chunk_part(out).unlink()


def _unlisted_file(out: Path) -> None:
    part = _chunk_part(out)
    shutil.copy(part, part.with_name("part-00001-of-00001.parquet"))


def _not_parquet(out: Path) -> None:
    part = _chunk_part(out)  # same size, so the listed size does not give it away first
    part.write_bytes(b"\0" * part.stat().st_size)


def _other_table(out: Path) -> None:
    shutil.copy(next(out.glob("errors/*.parquet")), _chunk_part(out))


def _other_rows(out: Path) -> None:
    part = _chunk_part(out)
    pq.write_table(pq.read_table(part).slice(0, 1), part)


DAMAGES: dict[str, tuple[Callable[[Path], None], str]] = {
    "no manifest": (_no_manifest, "has no manifest.json"),
    "manifest not JSON": (_not_json, "unreadable manifest.json"),
    "manifest of the wrong shape": (_wrong_shape, "without a 'chunkers' object"),
    "listed part file missing": (_listed_file_missing, "although its manifest.json lists it"),
    "unlisted part file": (_unlisted_file, "which its manifest.json does not list"),
    "part file not Parquet": (_not_parquet, "not a readable Parquet file"),
    "part file of another table": (_other_table, "lacks the chunks column"),
    "part file with other rows": (_other_rows, "rows, not the"),
}


@pytest.fixture(params=sorted(DAMAGES))
def damaged(
    request: pytest.FixtureRequest, finished: tuple[Path, Path], tmp_path: Path
) -> tuple[Path, Path, Path, str]:
    """(corpus, good output, damaged copy, the phrase its refusal must hold)."""
    corpus, good = finished
    bad = tmp_path / "bad"
    shutil.copytree(good, bad)
    damage, needle = DAMAGES[request.param]
    damage(bad)
    return corpus, good, bad, needle


def test_the_python_readers_refuse_a_damaged_output(
    damaged: tuple[Path, Path, Path, str],
) -> None:
    _, _, bad, needle = damaged
    readers = [kebab_chunk.read_chunks, kebab_chunk.read_documents, kebab_chunk.read_errors]
    for reader in [*readers, kebab_chunk.read_manifest]:
        with pytest.raises(OutputDirError) as caught:
            reader(bad)
        message = str(caught.value)
        assert needle in message and "\n" not in message, (reader.__name__, message)


def test_every_command_refuses_a_damaged_output(
    damaged: tuple[Path, Path, Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus, good, bad, needle = damaged
    html = str(tmp_path / "page.html")
    view = ["view", str(corpus / DOC), "--root", str(corpus), "--html", html]
    commands = [
        ["diff", str(bad), str(good)],
        ["diff", str(good), str(bad)],
        ["inspect", str(bad)],
        ["report", str(bad), "--html", html],
        [*view, "--from-output", str(bad)],
    ]
    for argv in commands:
        status = cli_main(argv)
        captured = capsys.readouterr()
        err = captured.err.strip()
        assert status == 2 and not captured.out, (argv, status, err)
        assert len(err.splitlines()) == 1 and needle in err, (argv, err)
        assert "unexpected" not in err and "Traceback" not in err, (argv, err)


def test_diff_escapes_control_characters_in_names() -> None:
    """A file or folder name with an escape sequence must not drive the terminal."""
    name = "evil\x1b[2J\x9b31m.md"
    label = LabelDiff(
        label="md-heading-v2",
        status="both",
        added=1,
        removed=0,
        unchanged=0,
        modified=0,
        relocated=0,
        documents_affected=1,
        added_tokens=3,
        reembed_tokens=3,
        reembed_chunks=1,
        ideal_note=f"such as {name}",
        affected_sources=[name],
    )
    text = format_diff(OutputDiff("old\x07dir", "new\x1bdir", [label]))
    assert not any(c != "\n" and (ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F) for c in text)
    assert "evil\\x1b[2J\\x9b31m.md" in text and "old\\x07dir -> new\\x1bdir" in text


def test_json_printed_by_diff_and_inspect_escapes_c1_controls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """JSON escapes C0 controls itself but, written with ``ensure_ascii=False``, leaves
    DEL and C1 raw; ``\\x9b`` starts an escape sequence on many terminals."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    evil = "evil\x9b2J.md"
    (corpus / evil).write_text("# Evil\n\nFirst version.\n")
    old, new = tmp_path / "old", tmp_path / "new"
    assert cli_main(["run", "--input", str(corpus), "--output", str(old), *QUIET]) == 0
    (corpus / evil).write_text("# Evil\n\nSecond version, longer than the first.\n")
    assert cli_main(["run", "--input", str(corpus), "--output", str(new), *QUIET]) == 0
    capsys.readouterr()
    for argv in (["diff", str(old), str(new), "--json"], ["inspect", str(new), "--json"]):
        cli_main(argv)
        out = capsys.readouterr().out
        assert not any(0x7F <= ord(c) <= 0x9F for c in out), argv
        assert "evil\\u009b2J.md" in out, argv
        assert evil in json.dumps(json.loads(out), ensure_ascii=False), argv  # same value
