"""``run --update``: snapshots of one output that cost the change, with a change feed.

One sequence of corpora is run once per session (``history``): a full run, then updates
after an edit, a rename + deletion + addition, a broken file, and a label change. Every
snapshot must read back record for record as a full run over the same corpus, the new
files must hold only the changed documents' rows, every earlier snapshot must stay
readable ("time travel"), and applying the change feeds in order to snapshot 1 must give
the last snapshot.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from kebab_chunk import results
from kebab_chunk.errors import OutputDirError, UsageError
from kebab_chunk.output.changes import ADDED, MODIFIED, RELOCATED, REMOVED
from kebab_chunk.output.finished import open_output
from kebab_chunk.output.reader import read_chunks as chunks_table
from kebab_chunk.output.snapshots import (
    SnapshotConflictError,
    commit_snapshot,
    expire_snapshots,
    snapshot_ids,
)
from kebab_chunk.pipeline import configure
from kebab_chunk.pipeline import run as run_pipeline
from tests.beam.helpers import QUIET, quiet_beam
from tests.beam.runners import CONFIGS
from tests.incremental.corpus import edit_one_paragraph, markdown_doc, write_corpus
from tests.manifest_shape import problems

pytestmark = pytest.mark.slow
quiet_beam()

RUNNER = [*CONFIGS["in_memory"], *QUIET]
LABEL_BUMP = ["md-heading-v3", "hybrid-v4"]


@dataclass
class Step:
    """One run of the sequence: its corpus (a copy), labels and resulting manifest."""

    corpus: Path
    labels: list[str] | None
    manifest: dict[str, Any]


def _run(corpus: Path, output: Path, labels: list[str] | None, update: bool) -> dict[str, Any]:
    result = run_pipeline(str(corpus), str(output), labels=labels, update=update, beam_args=RUNNER)
    return result.manifest


def _snapshot_records(output: Path, n: int | None) -> dict[str, Any]:
    """Everything a reader sees in one snapshot, sorted, with nothing run-specific."""
    path, manifest = open_output(str(output), "output", snapshot=n)
    chunks = sorted(chunks_table(path, manifest=manifest).to_pylist(), key=_chunk_key)
    from kebab_chunk.output.reader import read_documents, read_errors

    documents = read_documents(path, manifest=manifest)
    errors = sorted(read_errors(path, manifest).to_pylist(), key=lambda r: json.dumps(r))
    return {
        "chunks": chunks,
        "documents": documents.to_pylist(),
        "errors": errors,
        "counts": manifest["counts"],
        "accounting": manifest["accounting"],
        "labels": manifest["chunkers"]["labels"],
    }


def _chunk_key(row: dict[str, Any]) -> tuple[str, str]:
    return str(row["chunker_version"]), str(row["chunk_id"])


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[Step]]]:
    """Snapshots 1..5 of one output (``table``), each corpus kept for the full-run oracle."""
    root = tmp_path_factory.mktemp("update")
    live = write_corpus(root / "live", 30)
    table = root / "table"
    steps: list[Step] = []

    def step(labels: list[str] | None = None) -> None:
        frozen = root / f"corpus{len(steps) + 1}"
        shutil.copytree(live, frozen)
        steps.append(Step(frozen, labels, _run(live, table, labels, update=True)))

    step()  # 1: no output yet, so a full run
    edit_one_paragraph(live / "doc004.md")
    step()  # 2: one edit
    os.rename(live / "doc007.md", live / "renamed007.md")
    (live / "doc011.md").unlink()
    import random

    (live / "doc030.md").write_text(markdown_doc(random.Random(3), "New", 3), "utf-8")
    step()  # 3: a rename, a deletion, an addition
    (live / "broken.pdf").write_bytes(b"%PDF-1.7 not really")
    edit_one_paragraph(live / "doc012.md")
    step()  # 4: an error row appears, another edit
    (live / "broken.pdf").unlink()
    step(LABEL_BUMP)  # 5: another label set: everything is chunked again
    yield table, steps


def test_each_snapshot_reads_as_a_full_run_over_its_corpus(
    history: tuple[Path, list[Step]], tmp_path: Path
) -> None:
    table, steps = history
    assert snapshot_ids(str(table)) == [1, 2, 3, 4, 5]
    for n, step in enumerate(steps, start=1):
        full = tmp_path / f"full{n}"
        _run(step.corpus, full, step.labels, update=False)
        assert _snapshot_records(table, n) == _snapshot_records(full, None), f"snapshot {n}"
        assert step.manifest["accounting"]["closes"] is True
        assert problems(step.manifest) == [], f"snapshot {n}"  # the typed manifest holds
        assert ("snapshot" in step.manifest) is (n > 1)
    # The latest snapshot is what every reader sees by default.
    assert results.read_chunks(table) == results.read_chunks(tmp_path / "full5")


def test_an_update_writes_only_the_changed_documents(history: tuple[Path, list[Step]]) -> None:
    table, steps = history
    incremental = steps[1].manifest["incremental"]["documents"]
    assert incremental == {"reused": 29, "rechunked": 1, "new": 0, "deleted": 0}
    added = [
        e
        for kind in ("chunks", "documents")
        for e in steps[1].manifest["outputs"][kind]
        if e["snapshot"] == 2
    ]
    uris = set()
    for entry in added:
        uris |= set(
            pq.read_table(table / entry["path"], columns=["source_uri"])["source_uri"].to_pylist()
        )
    assert uris == {"doc004.md"}
    # Snapshot 2 keeps referencing every file of snapshot 1: nothing was copied.
    first = {
        e["path"]
        for kind in ("chunks", "documents", "errors")
        for e in steps[0].manifest["outputs"][kind]
    }
    second = {
        e["path"]
        for kind in ("chunks", "documents", "errors")
        for e in steps[1].manifest["outputs"][kind]
    }
    assert first <= second
    assert steps[2].manifest["incremental"]["documents"] == {
        "reused": 28,
        "rechunked": 0,
        "new": 2,
        "deleted": 2,
    }


def test_change_feeds_applied_in_order_give_the_last_snapshot(
    history: tuple[Path, list[Step]],
) -> None:
    table, steps = history
    state = {_chunk_key(r): r for r in _snapshot_records(table, 1)["chunks"]}
    seen_changes: set[str] = set()
    for n in range(2, len(steps) + 1):
        records = {_chunk_key(r): r for r in _snapshot_records(table, n)["chunks"]}
        section = steps[n - 1].manifest["snapshot"]
        assert section["changes"]["complete"] is True
        feed = pq.read_table(table / section["changes"]["path"]).to_pylist()
        for row in feed:
            key = (row["chunker_version"], row["chunk_id"])
            seen_changes.add(row["change"])
            assert row["snapshot"] == n
            if row["change"] == REMOVED:
                del state[key]
            else:
                assert row["change"] != ADDED or key not in state
                state[key] = records[key]
        assert state == records, f"after the feed of snapshot {n}"
    assert {ADDED, REMOVED} <= seen_changes
    assert seen_changes <= {ADDED, REMOVED, MODIFIED, RELOCATED}


def test_a_failed_commit_leaves_the_last_snapshot_as_it_was(
    history: tuple[Path, list[Step]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table, steps = history
    copy = tmp_path / "table"
    shutil.copytree(table, copy)
    before = _snapshot_records(copy, None)
    corpus = shutil.copytree(steps[-1].corpus, tmp_path / "corpus")
    edit_one_paragraph(corpus / "doc001.md")

    def refuse(output: str, manifest: dict[str, Any]) -> str:
        raise OSError("the disk filled up")

    monkeypatch.setattr("kebab_chunk.beam.update.commit_snapshot", refuse)
    with pytest.raises(Exception, match="disk filled up"):
        _run(corpus, copy, LABEL_BUMP, update=True)
    assert snapshot_ids(str(copy)) == [1, 2, 3, 4, 5]
    assert _snapshot_records(copy, None) == before
    monkeypatch.undo()
    # The next update builds snapshot 6 over the orphans and reads as a full run.
    _run(corpus, copy, LABEL_BUMP, update=True)
    assert snapshot_ids(str(copy)) == [1, 2, 3, 4, 5, 6]
    full = tmp_path / "full"
    _run(corpus, full, LABEL_BUMP, update=False)
    assert _snapshot_records(copy, None) == _snapshot_records(full, None)


def test_a_second_commit_of_the_same_snapshot_is_refused(
    history: tuple[Path, list[Step]], tmp_path: Path
) -> None:
    table, _ = history
    copy = tmp_path / "table"
    shutil.copytree(table, copy)
    _, manifest = open_output(str(copy), "output")
    with pytest.raises(SnapshotConflictError, match="another run committed snapshot 5"):
        commit_snapshot(str(copy), manifest)
    assert open_output(str(copy), "output")[1] == manifest


def test_expire_keeps_what_kept_snapshots_reference(
    history: tuple[Path, list[Step]], tmp_path: Path
) -> None:
    table, _ = history
    copy = tmp_path / "table"
    shutil.copytree(table, copy)
    latest = _snapshot_records(copy, None)
    expired, removed = expire_snapshots(str(copy), keep_last=2)
    assert expired == [1, 2, 3]
    assert removed and all(not (copy / p).exists() for p in removed)
    assert snapshot_ids(str(copy)) == [4, 5]
    assert _snapshot_records(copy, None) == latest
    _snapshot_records(copy, 4)  # still whole: its files were kept
    with pytest.raises(OutputDirError, match="has no snapshot 1; its snapshots are 4, 5"):
        open_output(str(copy), "output", snapshot=1)


def test_update_refuses_overwrite_and_previous_in_one_sentence(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "c", 2)
    with pytest.raises(UsageError, match="pass only one of them"):
        configure(str(corpus), str(tmp_path / "o"), update=True, overwrite=True)
    with pytest.raises(UsageError, match="drop one of them"):
        configure(str(corpus), str(tmp_path / "o"), update=True, previous=str(tmp_path / "p"))


def _part_bytes(output: Path, manifest: dict[str, Any], prefix: str = "") -> dict[str, bytes]:
    """Listed part file -> bytes, names without ``prefix``."""
    return {
        e["path"].replace(prefix, ""): (output / e["path"]).read_bytes()
        for kind in ("chunks", "documents", "errors")
        for e in manifest["outputs"][kind]
    }


def test_compaction_and_export_write_a_full_runs_files(
    history: tuple[Path, list[Step]], tmp_path: Path
) -> None:
    """After updates, compaction gives the next snapshot the bytes of a full run's files
    (its own names), and export writes a plain output a full run could have written."""
    from kebab_chunk.output.compact import compact_output, export_output

    table, steps = history
    copy = tmp_path / "table"
    shutil.copytree(table, copy)
    # Snapshot 4 holds an error row and deletes from three updates: export it first.
    exported = Path(export_output(str(copy), str(tmp_path / "export"), snapshot=4))
    full4 = tmp_path / "full4"
    _run(steps[3].corpus, full4, steps[3].labels, update=False)
    _, want4 = open_output(str(full4), "output")
    _, got4 = open_output(str(exported), "output")
    assert _part_bytes(exported, got4) == _part_bytes(full4, want4)
    assert got4["counts"] == want4["counts"] and got4["accounting"] == want4["accounting"]
    # A glob over the exported folders sees exactly the snapshot's chunks.
    globbed = pq.read_table(exported / "chunks").num_rows
    assert globbed == want4["counts"]["chunks_total"]

    before = _snapshot_records(copy, None)
    assert compact_output(str(copy)) == 6
    _, compacted = open_output(str(copy), "output")
    assert compacted["snapshot"]["deletes"] == []
    assert pq.read_table(copy / compacted["snapshot"]["changes"]["path"]).num_rows == 0
    full5 = tmp_path / "full5"
    _run(steps[4].corpus, full5, steps[4].labels, update=False)
    _, want5 = open_output(str(full5), "output")
    assert _part_bytes(copy, compacted, "s00000006-") == _part_bytes(full5, want5)
    assert _snapshot_records(copy, None) == before


def test_diff_between_two_snapshots_agrees_with_the_change_feed(
    history: tuple[Path, list[Step]], capsys: pytest.CaptureFixture[str]
) -> None:
    from kebab_chunk.cli import main

    table, steps = history
    for n in (2, 3, 5):
        status = main(
            [
                "diff",
                str(table),
                str(table),
                "--old-snapshot",
                str(n - 1),
                "--new-snapshot",
                str(n),
                "--json",
            ]
        )
        assert status == 0
        report = json.loads(capsys.readouterr().out)
        feed = pq.read_table(table / steps[n - 1].manifest["snapshot"]["changes"]["path"])
        for label, d in report["labels"].items():
            rows = [r for r in feed.to_pylist() if r["chunker_version"] == label]
            by_change = {
                c: sum(r["change"] == c for r in rows)
                for c in (ADDED, REMOVED, MODIFIED, RELOCATED)
            }
            assert (d["added"], d["removed"], d["modified"], d["relocated"]) == (
                by_change[ADDED],
                by_change[REMOVED],
                by_change[MODIFIED],
                by_change[RELOCATED],
            ), (n, label)


def test_compact_and_export_commands(
    history: tuple[Path, list[Step]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kebab_chunk.cli import main

    table, _ = history
    copy = tmp_path / "table"
    shutil.copytree(table, copy)
    assert main(["export", str(copy), str(tmp_path / "plain"), "--snapshot", "2"]) == 0
    assert results.read_chunks(tmp_path / "plain") == [c for c in _records_as_chunks(copy, 2)]
    assert main(["export", str(copy), str(tmp_path / "plain")]) == 2
    assert "is not an empty directory" in capsys.readouterr().err
    assert main(["compact", str(copy)]) == 0
    assert "is at snapshot 6" in capsys.readouterr().out
    assert main(["export", str(copy), str(tmp_path / "x"), "--snapshot", "9"]) == 2
    assert "has no snapshot 9; its snapshots are 1, 2, 3, 4, 5, 6" in capsys.readouterr().err


def _records_as_chunks(output: Path, n: int) -> list[Any]:
    from kebab_chunk.output.schema import row_to_chunk

    path, manifest = open_output(str(output), "output", snapshot=n)
    chunks = [row_to_chunk(r) for r in chunks_table(path, manifest=manifest).to_pylist()]
    return sorted(chunks, key=lambda c: (c.chunker_version, c.source_uri, c.position))


def test_the_command_line_updates_and_says_where_the_feed_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kebab_chunk.cli.run import main

    corpus = write_corpus(tmp_path / "c", 4)
    out = tmp_path / "out"
    args = ["--input", str(corpus), "--output", str(out), "--update", *RUNNER]
    assert main(args) == 0
    assert "read_parquet(" in capsys.readouterr().out  # snapshot 1 is a plain output
    edit_one_paragraph(corpus / "doc001.md")
    assert main(args) == 0
    said = capsys.readouterr().out
    assert f"snapshot 2 (change feed: {out}/changes/s00000002.parquet)" in said
    assert "reused 3, rechunked 1, new 0, deleted 0" in said
    assert main([*args, "--overwrite"]) == 2
    assert "pass only one of them" in capsys.readouterr().err


def test_previous_refuses_an_updated_output_in_one_sentence(
    history: tuple[Path, list[Step]], tmp_path: Path
) -> None:
    """``--previous`` reads the partitions' part files by pattern: an updated output's hold
    other snapshots' files and deleted rows, so it is refused rather than misread."""
    table, steps = history
    with pytest.raises(OutputDirError, match=r"is an updated output \(snapshot 5\)"):
        configure(str(steps[-1].corpus), str(tmp_path / "o"), previous=str(table))


def test_an_update_decides_the_same_with_many_documents_per_bucket(
    history: tuple[Path, list[Step]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan joins per bucket of source_uris (kebab_chunk/beam/batches.py); with 30
    documents and the default 1,024 buckets nearly each has its own, so here two buckets
    hold them all: an edit, a rename, a deletion, two additions and a broken file must
    still give the snapshot a full run gives."""
    import functools

    from kebab_chunk.beam import graph
    from kebab_chunk.beam.update import PlanUpdate

    _, steps = history
    monkeypatch.setattr(graph, "PlanUpdate", functools.partial(PlanUpdate, buckets=2))
    table, full = tmp_path / "table", tmp_path / "full"
    _run(steps[1].corpus, table, None, update=False)
    manifest = _run(steps[3].corpus, table, None, update=True)
    assert manifest["incremental"]["documents"] == {
        "reused": 27,
        "rechunked": 1,
        "new": 3,
        "deleted": 2,
    }
    _run(steps[3].corpus, full, None, update=False)
    assert _snapshot_records(table, None) == _snapshot_records(full, None)


def test_the_update_plan_joins_plain_values_per_document(
    history: tuple[Path, list[Step]],
) -> None:
    """The in-memory runner holds every value of the plan's join at once, one per document
    and side: at 1,000,000 documents pickled dataclasses there peaked at 3.2 GB, plain
    tuples at 2.3 GB. Each value must be a tuple that rebuilds its record and encodes to
    less than half the record's bytes."""
    from apache_beam.coders import FastPrimitivesCoder

    from kebab_chunk.beam.reuse_rule import BaseRow
    from kebab_chunk.beam.update import _ReadBaseDocumentsFn, file_key
    from kebab_chunk.elements import SourceFile
    from kebab_chunk.output.snapshots import added_in

    table, steps = history
    coder = FastPrimitivesCoder()
    entry = steps[-1].manifest["outputs"]["documents"][0]
    rows = list(_ReadBaseDocumentsFn(str(table), ()).process((entry["path"], added_in(entry))))
    assert rows
    for uri, values in rows:
        assert type(values) is tuple
        record = BaseRow(*values)
        assert record.values() == values
        assert 2 * len(coder.encode((uri, values))) < len(coder.encode((uri, record)))
    source = SourceFile("d/doc001.md", "text/markdown", 1234)
    uri, values = file_key(source)
    assert SourceFile(uri, *values) == source
    assert 2 * len(coder.encode((uri, values))) < len(coder.encode((uri, source)))
