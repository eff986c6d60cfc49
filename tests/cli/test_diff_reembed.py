"""``kebab-chunk diff``: chunks to re-embed against the ideal of re-embedding only the chunks
that overlap the edited text.

Two real pipeline runs (DirectRunner) over a small corpus — a long Markdown guide, a short
Markdown note and an HTML page — before and after one paragraph is inserted in the guide's
first section and one sentence is changed in the HTML page. The test knows exactly which
characters it inserted, so the expected ideal is computed from the NEW output's chunks and
that known range; the diff has to find the same figure from the outputs alone. The HTML
page's chunks hold rendered text, not source slices, so its edit cannot be located: the
ideal counts all of its re-embedded chunks and says so.
"""

from __future__ import annotations

import argparse
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from kebab_chunk.cli.diff import add_diff_parser, cmd_diff
from kebab_chunk.model import Chunk, LineSpan
from kebab_chunk.output.diff import (
    LabelDiff,
    OutputDiff,
    compare_label,
    diff_outputs,
    format_diff,
    ideal_reembed,
)
from tests.beam.helpers import output_chunks
from tests.report.helpers import run_pipeline

LABELS = "md-heading-v1,md-heading-v2,hybrid-v1"
GUIDE = "guide.md"
PAGE_NAME = "page.html"
INSERTED = "\n\nThis paragraph was inserted by an editor between two existing ones."
LONG = " ".join(["The pipeline reads each document once and writes one record per chunk."] * 40)


def _guide() -> str:
    sections = ["# Operations guide", "Intro paragraph.", "## Setup", "Install the package."]
    for n in range(1, 4):
        sections += [f"## Part {n}", f"Part {n} opens here.", LONG.replace("once", f"once {n}")]
    return "\n\n".join(sections) + "\n"


PAGE = "<html><body><h1>Page</h1><p>First sentence of the page.</p><p>{second}</p></body></html>\n"


@dataclass(frozen=True)
class Runs:
    old: Path
    new: Path
    edit: tuple[int, int]  # the inserted characters of guide.md, in the NEW text


def _write(corpus: Path, guide: str, second: str) -> None:
    (corpus / GUIDE).write_text(guide, encoding="utf-8")
    (corpus / "note.md").write_text("# Note\n\nA short note that never changes.\n")
    (corpus / PAGE_NAME).write_text(PAGE.format(second=second), encoding="utf-8")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    root = tmp_path_factory.mktemp("diff-reembed")
    corpus = root / "corpus"
    corpus.mkdir()
    guide = _guide()
    _write(corpus, guide, "Second sentence.")
    old = run_pipeline(corpus, root / "old", "--labels", LABELS)
    at = guide.index("Install the package.") + len("Install the package.")
    _write(corpus, guide[:at] + INSERTED + guide[at:], "Second sentence, now changed.")
    new = run_pipeline(corpus, root / "new", "--labels", LABELS)
    shutil.rmtree(corpus)
    return Runs(old, new, (at, at + len(INSERTED)))


def _hull(chunk: Chunk) -> tuple[int, int]:
    return (
        min(s.char_start for s in chunk.source_spans),
        max(s.char_end for s in chunk.source_spans),
    )


def _expected_ideal(runs: Runs, label: str) -> tuple[int, int]:
    """(chunks, tokens): the NEW chunks with a new id that overlap the text inserted in the
    guide, plus every new chunk of the HTML page (whose edit cannot be located)."""
    old_ids = {c.chunk_id for c in output_chunks(runs.old) if c.chunker_version == label}
    start, end = runs.edit
    new = [
        c
        for c in output_chunks(runs.new)
        if c.chunker_version == label and c.chunk_id not in old_ids
    ]
    hits = [
        c
        for c in new
        if c.source_uri.endswith(PAGE_NAME)
        or (c.source_uri.endswith(GUIDE) and _hull(c)[0] < end and start < _hull(c)[1])
    ]
    return len(hits), sum(c.token_estimate for c in hits)


def _label(runs: Runs, label: str) -> LabelDiff:
    return next(d for d in diff_outputs(str(runs.old), str(runs.new)).labels if d.label == label)


@pytest.mark.slow
@pytest.mark.parametrize("label", ["md-heading-v1", "md-heading-v2", "hybrid-v1"])
def test_the_ideal_is_the_chunks_overlapping_the_inserted_text(runs: Runs, label: str) -> None:
    """The diff locates the insertion from the outputs alone: its ideal equals the count of
    new chunks that overlap the characters the test inserted (plus the HTML page's, which
    the note names as not locatable)."""
    d = _label(runs, label)
    assert (d.ideal_reembed_chunks, d.ideal_reembed_tokens) == _expected_ideal(runs, label)
    assert d.ideal_reembed_chunks is not None and d.ideal_reembed_chunks >= 2
    assert d.reembed_chunks == d.added + d.modified
    assert PAGE_NAME in d.ideal_note and "not exact slices" in d.ideal_note
    assert GUIDE not in d.ideal_note


@pytest.mark.slow
def test_md_heading_v1_re_embeds_more_than_the_ideal_and_v2_does_not(runs: Runs) -> None:
    """v1 renames the slices of the long paragraphs after the edit (document-absolute slice
    offsets), so it re-embeds more than the ideal; v2's local ids re-embed exactly it."""
    v1, v2 = _label(runs, "md-heading-v1"), _label(runs, "md-heading-v2")
    assert v1.ideal_reembed_chunks is not None
    assert v1.reembed_chunks > v1.ideal_reembed_chunks
    assert v2.reembed_chunks == v2.ideal_reembed_chunks


@pytest.mark.slow
def test_text_and_json_reports_carry_the_ideal(
    runs: Runs, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both report forms show the re-embed count beside the ideal, or why there is none."""
    parser = argparse.ArgumentParser(prog="kebab-chunk")
    add_diff_parser(parser.add_subparsers(dest="command"))
    assert cmd_diff(parser.parse_args(["diff", str(runs.old), str(runs.new), "--json"])) == 0
    report = json.loads(capsys.readouterr().out)
    v2 = report["labels"]["md-heading-v2"]
    assert v2["ideal_reembed_chunks"] == _expected_ideal(runs, "md-heading-v2")[0]
    assert PAGE_NAME in report["labels"]["hybrid-v1"]["ideal_note"]
    assert report["totals"]["reembed_chunks"] == sum(
        d["reembed_chunks"] for d in report["labels"].values()
    )
    assert cmd_diff(parser.parse_args(["diff", str(runs.old), str(runs.new)])) == 0
    text = capsys.readouterr().out
    chunks, tokens = _expected_ideal(runs, "md-heading-v2")
    assert f"ideal {chunks} chunks ({tokens} tokens)" in text
    assert "note: the chunks of 1 changed document(s) (such as" in text


def _row(doc: str, chunk_id: str, text: str, start: int, kind: str = "lines") -> dict[str, object]:
    span = LineSpan(line_start=1, line_end=1, char_start=start, char_end=start + len(text))
    spans = [span.model_dump(mode="json")]
    if kind != "lines":
        spans = [{"kind": kind, "page": 1, "char_start": start, "char_end": start + len(text)}]
    return {
        "chunk_id": chunk_id,
        "doc_id": doc,
        "source_uri": f"{doc}.src",
        "text": text,
        "source_spans": spans,
        "token_estimate": len(text),
    }


def test_ideal_locates_a_removal_and_counts_new_documents_whole() -> None:
    """Pure cases: a removal between two chunks needs nothing re-embedded in the ideal,
    a document only in NEW is embedded whole, and page spans give no ideal."""
    old = {
        "a1": _row("a", "a1", "Alpha text.", 0),
        "a2": _row("a", "a2", "Gone text.", 12),
        "a3": _row("a", "a3", "Omega text.", 23),
    }
    new = {
        "a1": old["a1"],
        "a3x": _row("a", "a3x", "Omega text.", 12),  # moved and renamed by a rippling id
        "b1": _row("b", "b1", "New document.", 0),
    }
    ideal = ideal_reembed(old, new, {"a3x", "b1"})
    assert (ideal.chunks, ideal.tokens, ideal.note) == (1, len("New document."), "")
    paged_old = {"p1": _row("p", "p1", "Page one.", 0, "page")}
    paged_new = {"p2": _row("p", "p2", "Page one, edited.", 0, "page")}
    paged = ideal_reembed(paged_old, paged_new, {"p2"})
    assert paged.chunks is None and "p.src" in paged.note


def test_a_label_without_an_ideal_says_why_in_the_text_report() -> None:
    """When no changed document can be located the text report says so instead of a figure."""
    old = {"p1": _row("p", "p1", "Page one.", 0, "page")}
    new = {"p2": _row("p", "p2", "Page one, edited.", 0, "page")}
    for rows in (old, new):
        for row in rows.values():
            row.update(heading_path=[], captions=[], position=0, content_hash="h")
            row.update(parser_version="v", policy_hash="x")
    text = format_diff(OutputDiff("OLD", "NEW", [compare_label("pdf-page-v1", old, new)]))
    assert "re-embed 1 chunks (17 tokens); ideal not computed: the chunks of 1" in text


def test_the_ideal_re_embeds_a_renamed_headings_section() -> None:
    """A renamed heading is in the text every chunk below it embeds: a chunk that keeps its
    id there is modified, and no chunker could avoid re-embedding it, so the ideal counts
    it although it does not overlap the edited characters; a chunk under an unchanged
    heading path that does not overlap them stays out."""
    old = {
        "a1": _row("a", "a1", "# Setup", 0),
        "a2": _row("a", "a2", "Body under setup.", 9),
        "a3": _row("a", "a3", "# Other", 28),
        "a4": _row("a", "a4", "Body under other.", 37),
    }
    new = {
        "a1x": _row("a", "a1x", "# Setup renamed", 0),
        "a2": _row("a", "a2", "Body under setup.", 17),
        "a3x": _row("a", "a3x", "# Other", 36),  # an id that rippled, outside the edit
        "a4": _row("a", "a4", "Body under other.", 45),
    }
    for rows, setup in ((old, "Setup"), (new, "Setup renamed")):
        for row in rows.values():
            row["heading_path"] = [setup] if row["chunk_id"] in ("a1", "a1x", "a2") else ["Other"]
    ideal = ideal_reembed(old, new, {"a1x", "a2", "a3x"})
    assert (ideal.chunks, ideal.tokens) == (2, len("# Setup renamed") + len("Body under setup."))
