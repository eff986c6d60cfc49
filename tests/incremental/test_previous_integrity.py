"""``--previous`` carries records only out of the files its manifest lists, unchanged, and
only under options that would make the same records (issue 29, items 1, 3 and 4).

* every listed part file must be there, of its listed size and blake3 digest, and no
  unlisted one beside them: otherwise one sentence, exit 2, nothing written;
* other parse limits (or smaller budgets) reuse nothing: the output equals a full run
  with the new limits;
* an output whose manifest lists no digests (an older version) reuses nothing.
"""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kebab_chunk.beam import graph
from kebab_chunk.beam.incremental import (
    NEW,
    NOTHING_REUSED,
    RECHUNKED,
    REUSED,
    incremental_summary,
)
from kebab_chunk.beam.manifest import WriteManifest
from kebab_chunk.beam.write import WriteChunks
from kebab_chunk.cli.run import main
from kebab_chunk.output.schema import write_parquet
from tests.beam.helpers import QUIET, output_chunks, part_files, quiet_beam
from tests.incremental.corpus import write_corpus

quiet_beam()

pytestmark = pytest.mark.slow

MD = "chunks/chunker_version=md-heading-v3"


def _run(corpus: Path, out: Path, *extra: str) -> int:
    return main(["--input", str(corpus), "--output", str(out), *extra, *QUIET])


def _manifest(out: Path) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((out / "manifest.json").read_text())
    return manifest


@pytest.fixture(scope="module")
def multipart(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(corpus, output) of 12 documents, written with 5 chunks and 4 documents rows per
    part file, so the chunk partition and the documents table have several parts each."""
    base = tmp_path_factory.mktemp("multipart")
    corpus = write_corpus(base / "corpus", 12)
    out = base / "previous"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(graph, "WriteChunks", functools.partial(WriteChunks, rows_per_file=5))
        mp.setattr(
            graph, "WriteManifest", functools.partial(WriteManifest, document_rows_per_file=4)
        )
        assert _run(corpus, out) == 0
    return corpus, out


def _largest_md_part(out: Path) -> str:
    """The listed md-heading-v3 part file with the most rows."""
    entries = [e for e in _manifest(out)["outputs"]["chunks"] if e["path"].startswith(MD)]
    return str(max(entries, key=lambda e: e["rows"])["path"])


def _refused(capsys: pytest.CaptureFixture[str], corpus: Path, previous: Path, out: Path) -> str:
    assert _run(corpus, out, "--previous", str(previous)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("kebab-chunk run: error: "), err
    assert "run without --previous" in err, err
    assert not out.exists()
    return err


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def test_an_untouched_multipart_previous_output_is_reused(
    multipart: tuple[Path, Path], tmp_path: Path
) -> None:
    corpus, previous = multipart
    listed = _manifest(previous)["outputs"]
    assert len([e for e in listed["chunks"] if e["path"].startswith(MD)]) > 2
    assert len(listed["documents"]) > 1
    out = tmp_path / "again"
    assert _run(corpus, out, "--previous", str(previous)) == 0
    assert _manifest(out)["incremental"]["documents"][REUSED] == 12
    assert NOTHING_REUSED not in _manifest(out)["incremental"]
    assert output_chunks(out) == output_chunks(previous)  # (other part sizes: other files)


@pytest.mark.parametrize("kind", ["chunks", "documents"])
def test_a_missing_part_file_is_refused_by_name(
    multipart: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """An interrupted copy: the manifest lists parts 0..n-1, one of them is not there."""
    corpus, previous = multipart
    damaged = _copy(previous, tmp_path / "damaged")
    gone = _manifest(previous)["outputs"][kind][1]["path"]
    if kind == "chunks":
        gone = _largest_md_part(previous)
    (damaged / gone).unlink()
    err = _refused(capsys, corpus, damaged, tmp_path / "out")
    assert f"lacks {gone} although its manifest.json lists it" in err, err


def test_a_part_file_the_manifest_does_not_list_is_refused(
    multipart: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus, previous = multipart
    damaged = _copy(previous, tmp_path / "damaged")
    first = damaged / _largest_md_part(previous)
    stray = first.parent / "part-00099-of-00099.parquet"
    stray.write_bytes(first.read_bytes())
    err = _refused(capsys, corpus, damaged, tmp_path / "out")
    assert f"holds {MD}/part-00099-of-00099.parquet, which its manifest.json does not list" in err


def test_an_edited_chunk_text_is_never_carried(
    multipart: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tester's edit: one chunk's text rewritten inside the previous Parquet file."""
    corpus, previous = multipart
    edited = _copy(previous, tmp_path / "edited")
    relative = _largest_md_part(previous)
    table = pq.read_table(edited / relative)
    texts = table.column("text").to_pylist()
    texts[0] = "EDITED " + texts[0][7:]  # same length, other words
    column = table.schema.get_field_index("text")
    table = table.set_column(column, table.schema.field(column), pa.array(texts, pa.string()))
    with (edited / relative).open("wb") as f:
        write_parquet(table, f)
    err = _refused(capsys, corpus, edited, tmp_path / "out")
    assert relative in err, err


def test_same_size_other_bytes_is_refused_by_digest(
    multipart: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus, previous = multipart
    edited = _copy(previous, tmp_path / "edited")
    relative = _manifest(previous)["outputs"]["documents"][0]["path"]
    data = bytearray((edited / relative).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (edited / relative).write_bytes(bytes(data))
    err = _refused(capsys, corpus, edited, tmp_path / "out")
    assert f"has {relative} whose bytes differ from the blake3 digest" in err, err


def test_a_previous_output_without_digests_reuses_nothing(
    multipart: tuple[Path, Path], tmp_path: Path
) -> None:
    """Written before part files had digests: nothing can be checked, so every document
    is parsed again and the output equals a full run (the next run can reuse it)."""
    corpus, previous = multipart
    legacy = _copy(previous, tmp_path / "legacy")
    manifest = _manifest(legacy)
    for entries in manifest["outputs"].values():
        for entry in entries:
            del entry["bytes"], entry["blake3"]
    (legacy / "manifest.json").write_text(json.dumps(manifest))
    out = tmp_path / "out"
    assert _run(corpus, out, "--previous", str(legacy)) == 0
    got = _manifest(out)["incremental"]["documents"]
    assert got[REUSED] == 0 and got[RECHUNKED] == 12
    assert "lists no part-file digests" in _manifest(out)["incremental"][NOTHING_REUSED]
    full = tmp_path / "full"
    assert _run(corpus, full) == 0
    assert part_files(out) == part_files(full)


def _nested_list(depth: int) -> str:
    return "".join(f"{'  ' * i}- level {i}\n" for i in range(depth)) + "\n"


def test_other_parse_limits_give_the_output_of_a_full_run(tmp_path: Path) -> None:
    """Previous made with generous limits; the new run's --max-blocks refuses one document
    and --max-nesting flattens another (with a warning): the incremental output must be
    the full run's under the new limits, not the carried records."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "many.md").write_text("".join(f"Paragraph {i}.\n\n" for i in range(51)))
    (corpus / "nested.md").write_text("# Nested\n\n" + _nested_list(14))
    (corpus / "plain.md").write_text("# Plain\n\nOne paragraph.\n")
    generous = ["--max-blocks", "1000", "--max-nesting", "200"]
    tight = ["--max-blocks", "20", "--max-nesting", "10"]
    previous = tmp_path / "previous"
    assert _run(corpus, previous, *generous) == 0
    full = tmp_path / "full"
    assert _run(corpus, full, *tight) == 0
    assert part_files(full) != part_files(previous)  # the limits change this corpus's output
    out = tmp_path / "incremental"
    assert _run(corpus, out, *tight, "--previous", str(previous)) == 0
    assert part_files(out) == part_files(full)
    got = _manifest(out)["incremental"]["documents"]
    assert got[REUSED] == 0 and got[RECHUNKED] + got[NEW] == 3
    line = incremental_summary(_manifest(out))
    assert line is not None and line.endswith(
        "; nothing could be reused: max_blocks changed from 1000 to 20"
    ), line
