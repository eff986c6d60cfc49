"""``kebab-chunk diff --json`` is a contract: its fields are exactly docs/guide/diff-json.md's, and
it lists relocated ids (the ones a store updates without embedding again)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kebab_chunk.cli import main
from kebab_chunk.output.diff import DIFF_FORMAT
from kebab_chunk.pipeline import run
from tests.beam.helpers import quiet_beam
from tests.incremental.corpus import edit_one_paragraph, write_corpus
from tests.sync.helpers import RUNNER

pytestmark = pytest.mark.slow
quiet_beam()

DOC = Path(__file__).resolve().parents[2] / "docs" / "guide" / "diff-json.md"


def _documented(section: str) -> set[str]:
    """The field names of the table under ``## <section>`` in docs/guide/diff-json.md."""
    text = DOC.read_text(encoding="utf-8").split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+)` \|", text, flags=re.MULTILINE))


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("diff-json")
    corpus = write_corpus(root / "corpus", 3, seed=21)
    out = root / "table"
    run(str(corpus), str(out), update=True, beam_args=RUNNER)
    docs = sorted(corpus.glob("*.md"))
    docs[0].write_text("# New top\n\nAn opening paragraph.\n\n" + docs[0].read_text())
    edit_one_paragraph(docs[1])
    docs[2].unlink()
    run(str(corpus), str(out), update=True, beam_args=RUNNER)
    return out


def _diff(table: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    status = main(["diff", str(table), str(table), "--old-snapshot", "1", "--new-snapshot", "2",
                   "--json"])
    assert status in (0, 1)
    document: dict[str, object] = json.loads(capsys.readouterr().out)
    return document


def test_the_fields_are_the_documented_ones(
    table: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = _diff(table, capsys)
    assert document["format"] == DIFF_FORMAT == "kebab-chunk-diff-v1"
    assert set(document) == _documented("Top level")
    labels = document["labels"]
    assert isinstance(labels, dict) and labels
    for entry in labels.values():
        assert set(entry) == _documented("Per label")
    assert (document["old_snapshot"], document["new_snapshot"]) == (1, 2)


def test_relocated_ids_are_the_change_feeds(
    table: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = _diff(table, capsys)
    feed = pq.read_table(table / "changes" / "s00000002.parquet").to_pylist()
    labels = document["labels"]
    assert isinstance(labels, dict)
    entry = labels["md-heading-v3"]
    by_change: dict[str, list[str]] = {}
    for row in feed:
        by_change.setdefault(row["change"], []).append(row["chunk_id"])
    assert entry["relocated_ids"] == sorted(by_change["relocated"])
    assert entry["relocated"] == len(entry["relocated_ids"]) > 0
    assert entry["added_ids"] == sorted(by_change["added"])
    assert entry["removed_ids"] == sorted(by_change["removed"])
