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


def _fixed(size: int, overlap: int = 0) -> bench_eval.Split:
    return lambda text: [text[i : i + size] for i in range(0, len(text), size)]


def _missing(size: int, overlap: int = 0) -> bench_eval.Split:
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
    # each peer row was calibrated to the mean size of ours at one level (here: one target)
    levels = {lv["level"]: lv["mean_chars"] for lv in figures["size_levels"]}
    assert [lv["settings"] for lv in figures["size_levels"]] == [
        ["md-heading-v1:16:0"],
        ["md-heading-v1:64:0"],
    ]
    for row in fixed:
        assert row["matched_level_chars"] == levels[row["matched_level"]]
        assert row["chunk_size"] in bench_eval.SIZE_GRID
        assert row["not_located"] == 0
    # the section about rockets is what a heading chunker retrieves: the answer is found
    assert all(r["recall"] == 1.0 for r in ours)
    assert all(r["overlap_recall"] == 1.0 for r in ours)
    assert figures["not_run"] == {"absent": "nothere is not installed (No module named 'nothere')"}
    assert figures["versions"]["no-such-dist"] == "not installed"
    assert figures["types"] == [] and figures["apart"] == {}
    page = bench_eval.render_markdown(bench_eval.page_figures({"tiny": figures}, 1))
    assert page.count("| **md-heading-v1** |") == 2
    assert page.count("| fixed-width |") == 2
    assert "absent: not run" in page
    assert "by question type" not in page  # no type column, no table by type


def test_locator_finds_chunks_whose_whitespace_differs_and_maps_back_to_source() -> None:
    text = "# Title\n\nAlpha  beta\ngamma.\n\n  Delta   epsilon\n"
    chunks = [
        "# Title  \nAlpha beta",  # lines re-joined as MarkdownHeaderTextSplitter does
        "gamma.",  # exact: found by str.find, its range is its own length
        "Delta epsilon",  # indentation and a run of spaces collapsed
        "Alpha beta gamma.",  # before the previous chunk: found by the search from the start
        "not in the text",
        " \n ",  # whitespace only: covers nothing
    ]
    ranges, missing = bench_eval.locate(text, chunks)
    assert missing == 2
    assert ranges[4] is None and ranges[5] is None
    assert ranges[:4] == [
        (0, text.index("beta") + 4),
        (text.index("gamma."), text.index("gamma.") + 6),
        (text.index("Delta"), text.index("epsilon") + 7),
        (text.index("Alpha"), text.index("gamma.") + 6),
    ]
    # each located range holds the chunk's words, whitespace aside
    for chunk, where in zip(chunks, ranges, strict=True):
        if where is not None:
            assert text[where[0] : where[1]].split() == chunk.split()


def test_collapse_maps_each_character_to_its_source_offset() -> None:
    collapsed, offsets = bench_eval.collapse("a \n b\tc")
    assert collapsed == "a b c"
    assert offsets == [0, 1, 4, 5, 6]


HANDBOOK_A = (
    "# Cats\n\nCats purr softly and sleep all day in the sun.\n\n"
    "## Food\n\nCats eat fish and\nmice every evening.\n\n"
    "# Rockets\n\nRockets burn fuel to reach orbit. Engines roar at launch.\n"
)
HANDBOOK_B = (
    "# Bread\n\nBread needs flour, water, salt and patience.\n\n"
    "## Ovens\n\nOvens bake bread at high heat for an hour.\n"
)


def _reference(text: str, corpus_id: str, content: str) -> dict[str, object]:
    start = text.index(content)
    return {
        "content": content,
        "start_index": start,
        "end_index": start + len(content),
        "corpus_id": corpus_id,
    }


def _handbook(tmp_path: Path) -> tuple[Path, Path]:
    """Two Markdown files, one in a sub-folder; typed questions, one citing both files."""
    corpus = tmp_path / "corpus"
    (corpus / "kitchen").mkdir(parents=True)
    (corpus / "animals.md").write_text(HANDBOOK_A, encoding="utf-8")
    (corpus / "kitchen" / "bread.md").write_text(HANDBOOK_B, encoding="utf-8")
    rows = [
        (
            "What do rockets burn to reach orbit?",
            [_reference(HANDBOOK_A, "animals.md", "Rockets burn fuel to reach orbit.")],
            "animals.md",
            "Single-Text",
        ),
        (
            "What do cats eat, and how hot do ovens bake bread?",
            [
                _reference(HANDBOOK_A, "animals.md", "Cats eat fish and\nmice every evening."),
                _reference(HANDBOOK_B, "kitchen/bread.md", "Ovens bake bread at high heat"),
            ],
            "animals.md",
            "Multi-hop Reasoning",
        ),
        (
            "And for the next one?",
            [_reference(HANDBOOK_B, "kitchen/bread.md", "Bread needs flour")],
            "kitchen/bread.md",
            "Contextual Anaphora",
        ),
    ]
    questions = tmp_path / "questions.csv"
    with questions.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "references", "corpus_id", "type"])
        for question, refs, corpus_id, kind in rows:
            writer.writerow([question, json.dumps(refs), corpus_id, kind])
    return corpus, questions


def test_handbook_like_set_scores_several_files_types_and_the_markdown_recipe(
    tmp_path: Path,
) -> None:
    corpus, questions = _handbook(tmp_path)
    seen: list[tuple[bool, int]] = []
    figures = bench_eval.measure(
        corpus,
        questions,
        ["md-heading-v3:24:0", "md-heading-v3:64:0", "hybrid-v4:24:0", "hybrid-v4:64:0"],
        k=2,
        peers=(bench_eval.RECIPE, bench_eval.LANGCHAIN),
        embedder=WordsEmbedder(),
        on_row=lambda partial: seen.append((partial["complete"], len(partial["rows"]))),
    )
    rows = figures["rows"]
    # a long run can save its figures after every row; only the end is complete
    assert seen == [(False, n) for n in range(1, len(rows) + 1)]
    assert figures["complete"] is True
    names = {r["chunker"] for r in rows}
    assert {
        "md-heading-v3",
        "hybrid-v4",
        "LangChain MarkdownChunker recipe",
        "LangChain MarkdownChunker recipe + headers",
        "LangChain RecursiveCharacterTextSplitter",
    } <= names
    recipe = [r for r in rows if r["chunker"].startswith("LangChain MarkdownChunker recipe")]
    # two calibrated levels and the two settings users pick, each embedded two ways
    assert len(recipe) == 2 * (2 + len(bench_eval.RECIPE_EXTRAS))
    assert {(r["chunk_size"], r["chunk_overlap"]) for r in recipe if not r["calibrated"]} == set(
        bench_eval.RECIPE_EXTRAS
    )
    assert {r["embedded"] for r in recipe} == {"chunk text", "headers + chunk text"}
    # the recipe re-joins lines with other whitespace; every chunk is still located
    assert all(r["not_located"] == 0 for r in rows if not r["ours"])
    # the levels pair each label's first targets, then its second ones
    assert [lv["settings"] for lv in figures["size_levels"]] == [
        ["md-heading-v3:24:0", "hybrid-v4:24:0"],
        ["md-heading-v3:64:0", "hybrid-v4:64:0"],
    ]
    assert figures["multi_file_questions"] == 1
    # anaphora is apart: two questions in the headline, all three types by type
    assert figures["apart"] == {"Contextual Anaphora": 1}
    assert figures["summarized_questions"] == 2
    assert figures["types"] == ["Multi-hop Reasoning", "Single-Text", "Contextual Anaphora"]
    for row in rows:
        assert set(row["per_type"]) == set(figures["types"])
        assert row["per_type"]["Contextual Anaphora"]["apart"] is True
        assert row["per_type"]["Single-Text"]["questions"] == 1
        assert row["overlap_recall"] is not None
        headline = [row["per_type"][t]["recall"] for t in ("Multi-hop Reasoning", "Single-Text")]
        assert row["recall"] == sum(headline) / 2  # the anaphora question is not in it
    # the multi-file question finds its reference in the sub-folder's file: the section on
    # ovens scores recall above what the cats reference alone could give
    cats = len("Cats eat fish and\nmice every evening.")
    alone = cats / (cats + len("Ovens bake bread at high heat"))
    multi = [r["per_type"]["Multi-hop Reasoning"]["recall"] for r in rows]
    assert max(multi) > alone
    page = bench_eval.render_markdown(bench_eval.page_figures({"handbook": figures}, 2))
    assert "| LangChain MarkdownChunker recipe + headers |" in page
    assert "by question type" in page
    assert "Contextual Anaphora (1, apart)" in page
    assert "1 Contextual Anaphora questions set apart" in page


def test_headers_are_prepended_one_per_line() -> None:
    chunk = bench_eval.PeerChunk("Cats eat fish.", ("Cats", "Food"))
    assert bench_eval.headed(chunk) == "Cats\nFood\nCats eat fish."
    assert bench_eval.headed(bench_eval.PeerChunk("plain")) == "plain"


def test_recipe_chunks_carry_their_header_values() -> None:
    split = bench_eval.RECIPE.build(200)
    chunks = split(HANDBOOK_A)
    assert all(isinstance(c, bench_eval.PeerChunk) for c in chunks)
    food = next(c for c in chunks if isinstance(c, bench_eval.PeerChunk) and "fish" in c.text)
    assert isinstance(food, bench_eval.PeerChunk)
    assert food.headers == ("Cats", "Food")
    assert food.text.startswith("## Food")  # header lines are kept in the text


def test_a_run_of_one_set_keeps_the_other_sets_figures(tmp_path: Path) -> None:
    results = tmp_path / "eval-peers.json"
    sets = {"prose": {"rows": [1]}, "handbook": {"rows": [2], "date": "2026-11-01"}}
    page = {"k": 5, "model": bench_eval.DEFAULT_MODEL, "date": "2026-11-27", "sets": sets}
    results.write_text(json.dumps(page), encoding="utf-8")
    kept = bench_eval.kept_sets(results, 5, {"prose"})
    # the set measured now is not kept; the other keeps its own date (else the page's)
    assert kept == {"handbook": {"rows": [2], "date": "2026-11-01"}}
    assert bench_eval.kept_sets(results, 5, set())["prose"]["date"] == "2026-11-27"
    # another k or model measured something else: nothing is kept
    assert bench_eval.kept_sets(results, 3, set()) == {}
    page["model"] = "other-model"
    results.write_text(json.dumps(page), encoding="utf-8")
    assert bench_eval.kept_sets(results, 5, set()) == {}
    assert bench_eval.kept_sets(tmp_path / "missing.json", 5, set()) == {}
    # a set whose run was stopped is not carried over as if complete
    page["model"] = bench_eval.DEFAULT_MODEL
    page["sets"] = {"prose": {"rows": [], "complete": False}}
    results.write_text(json.dumps(page), encoding="utf-8")
    assert bench_eval.kept_sets(results, 5, set()) == {}
