"""``kebab-chunk sync``: the default embedder (packaged all-MiniLM-L6-v2) into a LanceDB
folder, a second sync that writes nothing, and one-sentence refusals with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kebab_chunk.cli import main
from kebab_chunk.pipeline import run
from kebab_chunk.sync.stores.lance import LanceStore
from tests.beam.helpers import quiet_beam
from tests.incremental.corpus import write_corpus
from tests.sync.helpers import RUNNER, expected_rows

pytestmark = pytest.mark.slow
quiet_beam()


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sync-cli")
    corpus = write_corpus(root / "corpus", 2, seed=11)
    run(str(corpus), str(root / "table"), update=True, beam_args=RUNNER)
    return root / "table"


def _sync(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        status = main(["sync", *args])
    except SystemExit as exc:  # argparse's own refusals
        status = int(exc.code or 0)
    said = capsys.readouterr()
    return status, said.out, said.err


def test_sync_embeds_with_the_default_model_once(
    output: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, cache = tmp_path / "store", tmp_path / "cache.sqlite3"
    status, out, err = _sync(capsys, str(output), "--to", str(store), "--cache", str(cache))
    want = expected_rows(output)
    assert status == 0, err
    assert out.startswith(f"kebab-chunk sync: lancedb now holds the {len(want)} chunks of ")
    assert f"{len(want)} upserted ({len(want)} embedded" in out
    lance = LanceStore(store)
    # The id names the model and a digest of its files; 384 floats per vector.
    status, out, _ = _sync(capsys, str(output), "--to", str(store), "--cache", str(cache),
                           "--json")
    report = json.loads(out)
    assert status == 0
    assert report["embedder"].startswith("all-MiniLM-L6-v2@")
    assert (report["embedded"], report["upserted"], report["wrote"]) == (0, 0, False)
    lance.open(384, report["embedder"])
    lance_rows = lance.rows()
    state = lance.state()
    assert [r.chunk_id for r in lance_rows] == sorted(want)
    assert all(len(r.vector) == 384 for r in lance_rows)
    assert state is not None and state.embedder == report["embedder"]
    # A new store of the same texts takes every vector from the cache.
    status, out, _ = _sync(capsys, str(output), "--to", f"lancedb:{tmp_path / 'other'}",
                           "--cache", str(cache), "--json")
    again = json.loads(out)
    assert (again["embedded"], again["cached"], again["upserted"]) == (0, len(want), len(want))


@pytest.mark.parametrize(
    ("args", "sentence"),
    [
        (["--label", "md-heading-v1"], "was not chunked with md-heading-v1; its labels are"),
        (["--no-cache", "--cache", "x"], "--cache and --no-cache contradict each other"),
        (["--table", "drop table"], "is not a plain identifier"),
        (["--batch-size", "0"], "--batch-size takes a whole number >= 1"),
        (["--embedder", "/nonexistent/model"], "does not exist"),
    ],
)
def test_bad_options_are_one_sentence_and_exit_2(
    output: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
    sentence: str,
) -> None:
    status, out, err = _sync(capsys, str(output), "--to", str(tmp_path / "s"), "--no-cache"
                             if "--cache" not in args else "--json", *args)
    assert status == 2
    assert sentence in err and err.count("\n") == 1 and out == ""


def test_an_unknown_store_kind_and_a_missing_output_are_refused(
    output: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = _sync(capsys, str(output), "--to", "qdrant://localhost:6333")
    assert status == 2 and "unknown store 'qdrant'" in err
    status, _, err = _sync(capsys, str(tmp_path / "nothing"), "--to", str(tmp_path / "s"))
    assert status == 2 and err.count("\n") == 1 and "nothing" in err
