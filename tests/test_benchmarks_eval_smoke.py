"""The ours-versus-peers retrieval benchmark's harness works, on a few hundred characters.

No peer library and no embedding model is needed: peers here are plain Python splitters and
the embedder is a hashed bag of words. These tests pin what the benchmark reports — where a
peer's chunks are located, how many are not, that peer sizes are calibrated to ours, that a
peer that cannot be imported is reported as not run, and that rows come sorted by size.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from benchmarks import bench_eval

DOC = (
    "# Cats\n\nCats purr softly and sleep all day in the sun.\n\n"
    "# Rockets\n\nRockets burn fuel to reach orbit. Engines roar at launch.\n\n"
    "# Bread\n\nBread needs flour, water, salt and patience.\n"
)
ORBIT = "Rockets burn fuel to reach orbit."


class WordsEmbedder:
    """Hashed bag of lower-cased words, L2-normalised: texts sharing words are close."""

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), 256), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
                out[row, int.from_bytes(digest, "big") % 256] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def _fixed(size: int) -> bench_eval.Split:
    return lambda text: [text[i : i + size] for i in range(0, len(text), size)]


def _missing(size: int) -> bench_eval.Split:
    raise ImportError("No module named 'nothere'")


def _data(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "doc.md").write_text(DOC, encoding="utf-8")
    start = DOC.index(ORBIT)
    questions = tmp_path / "questions.csv"
    with questions.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "references", "corpus_id"])
        refs = [{"content": ORBIT, "start_index": start, "end_index": start + len(ORBIT)}]
        writer.writerow(["What do rockets burn to reach orbit?", json.dumps(refs), "doc"])
    return tmp_path, questions


def test_locate_searches_from_the_previous_start_and_counts_misses() -> None:
    # overlapping chunks: searching from the previous *end* would miss the second one
    ranges, missing = bench_eval.locate("abcabc", ["abca", "cabc", "zzz", ""])
    assert ranges == [(0, 4), (2, 6), None, None]
    assert missing == 2
    # repeated text is found in order, not at its first occurrence each time
    assert bench_eval.locate("ab ab ab", ["ab", "ab", "ab"]) == ([(0, 2), (3, 5), (6, 8)], 0)


def test_peer_index_leaves_out_chunks_not_in_the_text(tmp_path: Path) -> None:
    from kebab_chunk.eval import run

    corpus_dir, questions = _data(tmp_path)
    corpus = run.load_corpus(corpus_dir, run.load_questions(questions))
    indexed, missing = bench_eval.peer_index(lambda t: [t[:20], "not in the text", t[20:]], corpus)
    assert missing == 1
    assert [(c.position, c.ranges) for c in indexed] == [(0, ((0, 20),)), (2, ((20, len(DOC)),))]


def test_measure_scores_ours_and_calibrated_peers_sorted_by_size(tmp_path: Path) -> None:
    corpus_dir, questions = _data(tmp_path)
    peers = (
        bench_eval.Peer("fixed-width", "no-such-dist", _fixed),
        bench_eval.Peer("absent", "nothere", _missing),
    )
    figures = bench_eval.measure(
        corpus_dir,
        questions,
        ["md-heading-v1:16:0", "md-heading-v1:64:0"],
        k=1,
        peers=peers,
        embedder=WordsEmbedder(),
    )
    rows = figures["rows"]
    ours = [r for r in rows if r["ours"]]
    fixed = [r for r in rows if r["chunker"] == "fixed-width"]
    assert len(ours) == 2 and len(fixed) == 2
    assert [r["mean_chars"] for r in rows] == sorted(r["mean_chars"] for r in rows)
    # each peer row was calibrated to the mean size of ours at one target
    levels = {lv["target_tokens"]: lv["mean_chars"] for lv in figures["size_levels"]}
    for row in fixed:
        assert row["matched_level_chars"] == levels[row["matched_target_tokens"]]
        assert row["chunk_size"] in bench_eval.SIZE_GRID
        assert row["not_located"] == 0
    # the section about rockets is what a heading chunker retrieves: the answer is found
    assert all(r["recall"] == 1.0 for r in ours)
    assert figures["not_run"] == {"absent": "nothere is not installed (No module named 'nothere')"}
    assert figures["versions"]["no-such-dist"] == "not installed"
    page = bench_eval.render_markdown(figures)
    assert page.count("| **md-heading-v1** |") == 2
    assert page.count("| fixed-width |") == 2
    assert "absent: not run" in page
