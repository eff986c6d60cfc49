"""The evaluation library: the questions loader and its checks, chunk ranges from spans,
retrieval over one index, and the scores on a tiny hand-made corpus.

Embeddings come from :class:`HashEmbedder`, a deterministic hashed bag of words, so the
expected retrievals follow from the words alone and no model is needed.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from kebab_chunk import get_chunker, make_policy, parse_document
from kebab_chunk.errors import KebabError, UsageError
from kebab_chunk.eval.run import (
    Question,
    chunk_ranges,
    evaluate,
    format_table,
    load_corpus,
    load_questions,
    parse_setting,
    render_html,
)
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.model.spans import PageSpan

ALPHA = "# Cats\n\nCats purr softly and sleep all day in the sun.\n\nA cat has whiskers.\n"
BETA = "Rockets burn fuel to reach orbit.\nEngines roar at launch.\n"
PURR = "Cats purr softly and sleep all day in the sun."
BURN = "Rockets burn fuel to reach orbit."


class HashEmbedder:
    """Hashed bag of lower-cased words, L2-normalised: texts sharing words are close."""

    def __init__(self, dims: int = 1024) -> None:
        self.dims = dims
        self.seen: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.seen.append(list(texts))
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
                out[row, int.from_bytes(digest, "big") % self.dims] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.where(norms > 0, norms, 1.0)).astype(np.float32)


class ConstantEmbedder:
    """Every text gets the same vector: every chunk ties with every other."""

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.ones((len(texts), 4), dtype=np.float32) / 2.0


def write_questions(path: Path, rows: Sequence[tuple[str, str, Sequence[Any]]]) -> Path:
    """A questions CSV: (question, corpus_id, references) rows; a reference is a
    (content, start, end) tuple or a ready JSON-able object."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "references", "corpus_id"])
        for question, corpus_id, refs in rows:
            objects = [
                {"content": r[0], "start_index": r[1], "end_index": r[2]}
                if isinstance(r, tuple)
                else r
                for r in refs
            ]
            writer.writerow([question, json.dumps(objects), corpus_id])
    return path


def ref(text: str, part: str) -> tuple[str, int, int]:
    start = text.index(part)
    return (part, start, start + len(part))


def make_dataset(root: Path) -> tuple[Path, Path]:
    """Two documents and one question about each; returns (corpus folder, questions CSV)."""
    corpus = root / "corpus"
    corpus.mkdir()
    (corpus / "alpha.md").write_text(ALPHA, encoding="utf-8")
    (corpus / "beta.md").write_text(BETA, encoding="utf-8")
    (corpus / "unrelated.md").write_text("Not named by any question.\n", encoding="utf-8")
    questions = write_questions(
        root / "questions.csv",
        [
            ("Why do cats purr softly?", "alpha", [ref(ALPHA, PURR)]),
            ("What do rockets burn?", "beta", [ref(BETA, BURN)]),
        ],
    )
    return corpus, questions


@pytest.fixture
def dataset(tmp_path: Path) -> tuple[list[Question], dict[str, Any]]:
    corpus, questions_csv = make_dataset(tmp_path)
    questions = load_questions(questions_csv)
    return questions, load_corpus(corpus, questions)


# --- the loader and its checks -----------------------------------------------------------


def test_loader_reads_rows_in_order_with_quoted_line_breaks_and_extra_columns(
    tmp_path: Path,
) -> None:
    path = tmp_path / "q.csv"
    refs = json.dumps([{"content": "ab", "start_index": 3, "end_index": 5}])
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(
            [
                ["Unnamed: 0", "question", "references", "corpus_id"],
                ["0", "two\nlines", refs, "doc"],
                ["1", "second", refs, "other"],
            ]
        )
    questions = load_questions(path)
    assert [(q.line, q.question, q.corpus_id) for q in questions] == [
        (2, "two\nlines", "doc"),
        (4, "second", "other"),
    ]
    assert questions[0].references == ((3, 5),) and questions[0].contents == ("ab",)


@pytest.mark.parametrize(
    ("references", "message"),
    [
        ("not json", "not valid JSON"),
        ("[]", "non-empty JSON list"),
        ('["text"]', "not a JSON object"),
        ('[{"start_index": 0, "end_index": 2}]', "no text 'content'"),
        ('[{"content": "ab", "start_index": "0", "end_index": 2}]', "whole-number"),
        ('[{"content": "ab", "start_index": 4, "end_index": 2}]', "runs from 4 to 2"),
        ('[{"content": "", "start_index": 2, "end_index": 2}]', "every reference is empty"),
    ],
)
def test_malformed_references_are_refused_naming_the_line(
    tmp_path: Path, references: str, message: str
) -> None:
    path = tmp_path / "q.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(
            [["question", "references", "corpus_id"], ["q", references, "d"]]
        )
    with pytest.raises(UsageError, match=message) as info:
        load_questions(path)
    assert "question on line 2" in str(info.value)


def test_missing_columns_empty_file_and_missing_file_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text("question,corpus_id\nq,d\n", encoding="utf-8")
    with pytest.raises(UsageError, match="no column references"):
        load_questions(path)
    path.write_text("question,references,corpus_id\n", encoding="utf-8")
    with pytest.raises(UsageError, match="has no questions"):
        load_questions(path)
    with pytest.raises(UsageError, match="does not exist"):
        load_questions(tmp_path / "absent.csv")


def test_a_question_naming_no_corpus_file_is_refused(tmp_path: Path) -> None:
    corpus, _ = make_dataset(tmp_path)
    path = write_questions(tmp_path / "q.csv", [("q", "gamma", [("x", 0, 1)])])
    with pytest.raises(UsageError, match=r"line 2 names corpus_id 'gamma'.*no file gamma"):
        load_corpus(corpus, load_questions(path))


def test_a_reference_that_is_not_its_content_in_the_file_is_refused(tmp_path: Path) -> None:
    corpus, _ = make_dataset(tmp_path)
    content, start, end = ref(ALPHA, PURR)
    good = write_questions(tmp_path / "good.csv", [("q", "alpha", [(content, start, end)])])
    assert load_corpus(corpus, load_questions(good))["alpha"].text == ALPHA
    shifted = write_questions(tmp_path / "q.csv", [("q", "alpha", [(content, start + 1, end + 1)])])
    with pytest.raises(UsageError, match=r"reference 1 of the question on line 2 .*alpha\.md"):
        load_corpus(corpus, load_questions(shifted))


@pytest.mark.parametrize(
    "past",
    [
        ("whiskers.\n", len(ALPHA) - 10, len(ALPHA) + 5),  # end past the end, content clipped
        ("", len(ALPHA) + 2, len(ALPHA) + 7),  # wholly past the end: the clipped slice is ""
    ],
)
def test_a_reference_past_the_end_of_its_file_is_refused(
    tmp_path: Path, past: tuple[str, int, int]
) -> None:
    """Python clips a slice at the end of the text, so such a reference "matched" its content
    and then scored 0 for every setting (no chunk can cover characters that do not exist)."""
    corpus, _ = make_dataset(tmp_path)
    refs = [ref(ALPHA, PURR), past]
    path = write_questions(tmp_path / "q.csv", [("q", "alpha", refs)])
    message = rf"reference 2 of the question on line 2 .*past the end of alpha\.md \({len(ALPHA)} "
    with pytest.raises(UsageError, match=message):
        load_corpus(corpus, load_questions(path))


def test_corpus_ids_match_stems_and_ambiguous_stems_are_refused(tmp_path: Path) -> None:
    corpus, questions_csv = make_dataset(tmp_path)
    questions = load_questions(questions_csv)
    loaded = load_corpus(corpus, questions)
    assert [(d.corpus_id, d.name) for d in loaded.values()] == [
        ("alpha", "alpha.md"),
        ("beta", "beta.md"),
    ]  # the unrelated file is not indexed
    (corpus / "alpha.txt").write_text(ALPHA, encoding="utf-8")
    with pytest.raises(UsageError, match="several files"):
        load_corpus(corpus, questions)
    with pytest.raises(UsageError, match="not a directory"):
        load_corpus(tmp_path / "nowhere", questions)


# --- settings ------------------------------------------------------------------------------


def test_settings_parse_label_target_and_overlap() -> None:
    assert parse_setting("md-heading-v1").policy == make_policy()
    setting = parse_setting("hybrid-v1:128:16", "chars")
    assert (setting.name, setting.label) == ("hybrid-v1:128:16", "hybrid-v1")
    assert setting.policy == make_policy(target_tokens=128, overlap_tokens=16, tokenizer="chars")


def test_settings_take_the_run_commands_policy_switches() -> None:
    """``,no-merge-peers`` / ``,no-merge-list-items`` turn those policy fields off, as the
    ``kebab-chunk run`` flags of the same names do; nothing else changes."""
    setting = parse_setting("hybrid-v2:256:0,no-merge-peers")
    assert setting.label == "hybrid-v2"
    assert setting.policy == make_policy(target_tokens=256, overlap_tokens=0, merge_peers=False)
    both = parse_setting("hybrid-v2,no-merge-list-items,no-merge-peers").policy
    assert (both.merge_peers, both.merge_list_items) == (False, False)
    assert both.target_tokens == ChunkPolicy().target_tokens


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("nope", "unknown chunker label 'nope'"),
        ("md-heading-v1:1:2:3", "is not LABEL"),
        ("md-heading-v1:big", "target_tokens 'big' is not a whole number"),
        ("md-heading-v1:32", "overlap_tokens must be"),
        ("md-heading-v1:0:0", "target_tokens must be > 0"),
        ("hybrid-v2:256,merge-peers", "unknown switch 'merge-peers'; use no-merge-peers or"),
        (",no-merge-peers", "is not LABEL"),
    ],
)
def test_bad_settings_are_one_sentence_errors(value: str, message: str) -> None:
    with pytest.raises(KebabError, match=message) as info:
        parse_setting(value)
    assert "\n" not in str(info.value)


# --- chunk ranges ------------------------------------------------------------------------


def test_an_exact_chunk_covers_its_whole_slice_gaps_included() -> None:
    doc = parse_document(ALPHA.encode(), "alpha.md")
    (chunk,) = get_chunker("md-heading-v1").chunk(doc, make_policy())
    assert len(chunk.source_spans) == 3  # heading and two paragraphs, "\n\n" between
    assert chunk_ranges(chunk, ALPHA) == ((0, len(ALPHA) - 1),)


def test_an_inexact_chunk_covers_its_spans_bridging_only_whitespace() -> None:
    doc = parse_document(ALPHA.encode(), "alpha.md")
    (chunk,) = get_chunker("md-heading-v1").chunk(doc, make_policy())
    heading, _, second = chunk.source_spans
    bridged = chunk.model_copy(update={"text": "Cats\nCats purr"})
    assert chunk_ranges(bridged, ALPHA) == ((0, 75),)
    apart = chunk.model_copy(update={"text": "Cats\nA cat", "source_spans": (heading, second)})
    assert chunk_ranges(apart, ALPHA) == ((0, 6), (56, 75))
    paged = chunk.model_copy(update={"source_spans": (PageSpan(page=1, char_start=0, char_end=4),)})
    with pytest.raises(ValueError, match="character ranges"):
        chunk_ranges(paged, ALPHA)


# --- evaluate --------------------------------------------------------------------------------


def test_whole_document_chunks_and_k1_find_every_answer(dataset: Any) -> None:
    questions, corpus = dataset
    result = evaluate(questions, corpus, [parse_setting("md-heading-v1")], HashEmbedder(), k=1)
    (res,) = result.results
    assert res.retrieved == ((("alpha", 0),), (("beta", 0),))
    assert res.summary.recall == 1.0
    # one chunk per document: alpha 0..75, beta 0..57
    assert [s.precision for s in res.scores] == pytest.approx([len(PURR) / 75, len(BURN) / 57])
    assert [s.iou for s in res.scores] == pytest.approx([len(PURR) / 75, len(BURN) / 57])
    assert (res.chunks, res.exact_share) == (2, 1.0)
    assert res.mean_chars == pytest.approx((75 + 57) / 2)
    assert res.per_corpus["alpha"].recall == 1.0 and res.per_corpus["beta"].questions == 1


def test_one_index_over_all_documents_other_files_chunks_cost_precision(dataset: Any) -> None:
    questions, corpus = dataset
    (res,) = evaluate(
        questions, corpus, [parse_setting("md-heading-v1")], HashEmbedder(), k=2
    ).results
    assert res.summary.recall == 1.0
    assert res.scores[0].precision == pytest.approx(len(PURR) / (75 + 57))


def test_smaller_chunks_score_exactly_the_matching_paragraph(dataset: Any) -> None:
    questions, corpus = dataset
    (res,) = evaluate(
        questions, corpus, [parse_setting("hierarchical-v1")], HashEmbedder(), k=1
    ).results
    assert res.retrieved[0] == (("alpha", 0),)
    assert (res.scores[0].recall, res.scores[0].precision, res.scores[0].iou) == (1.0, 1.0, 1.0)


def test_ties_go_to_the_earlier_chunk_and_results_repeat_exactly(dataset: Any) -> None:
    questions, corpus = dataset
    settings = [parse_setting("md-heading-v1"), parse_setting("hierarchical-v1")]
    first = evaluate(questions, corpus, settings, ConstantEmbedder(), k=1)
    assert first.results[0].retrieved == ((("alpha", 0),), (("alpha", 0),))
    assert first.results[0].scores[1].recall == 0.0  # beta's answer is not in alpha
    again = evaluate(questions, corpus, settings, ConstantEmbedder(), k=1)
    assert json.dumps(first.as_json()) == json.dumps(again.as_json())


def test_contextualized_mode_embeds_heading_path_before_the_text(dataset: Any) -> None:
    questions, corpus = dataset
    plain, context = HashEmbedder(), HashEmbedder()
    setting = [parse_setting("hierarchical-v1")]
    evaluate(questions, corpus, setting, plain, embed="text")
    evaluate(questions, corpus, setting, context, embed="contextualized")
    assert plain.seen[0] == context.seen[0] == [q.question for q in questions]
    assert plain.seen[1][0] == PURR
    assert context.seen[1][0] == "Cats\n" + PURR


def test_embed_text_mode_embeds_the_records_embed_text(dataset: Any) -> None:
    """md-heading-v1's first chunk opens with its heading line: ``contextualized`` repeats
    it, ``embed_text`` (the column the pipeline writes) does not."""
    questions, corpus = dataset
    context, record = HashEmbedder(), HashEmbedder()
    setting = [parse_setting("md-heading-v1")]
    evaluate(questions, corpus, setting, context, embed="contextualized")
    evaluate(questions, corpus, setting, record, embed="embed_text")
    first = record.seen[1][0]
    assert first.startswith("# ") and context.seen[1][0] != first
    assert context.seen[1][0].endswith(first) and context.seen[1][0].count("\n") > first.count("\n")


def test_spans_that_are_not_the_chunk_text_are_reported_as_inexact(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    corpus.mkdir()
    page = "<html><body><h1>Pets</h1><p>Cats purr softly.</p></body></html>\n"
    (corpus / "page.html").write_text(page, encoding="utf-8")
    questions = load_questions(
        write_questions(tmp_path / "q.csv", [("purr", "page", [ref(page, "Cats purr softly.")])])
    )
    result = evaluate(
        questions, load_corpus(corpus, questions), [parse_setting("hybrid-v1")], HashEmbedder()
    )
    (res,) = result.results
    assert res.exact_share == 0.0  # rendered text; the span is the <p> element's source
    assert res.summary.recall == 1.0
    assert res.scores[0].precision == pytest.approx(
        len("Cats purr softly.") / len("<p>Cats purr softly.</p>")
    )
    assert " no " in format_table(result).splitlines()[-1]


def test_a_label_that_does_not_read_the_files_is_refused(dataset: Any) -> None:
    questions, corpus = dataset
    with pytest.raises(UsageError, match=r"pdf-page-v1 does not chunk alpha\.md"):
        evaluate(questions, corpus, [parse_setting("pdf-page-v1")], HashEmbedder())


def test_table_json_and_html_carry_the_scores(dataset: Any) -> None:
    questions, corpus = dataset
    result = evaluate(
        questions,
        corpus,
        [parse_setting("md-heading-v1:256:32")],
        HashEmbedder(),
        k=1,
        model="hash",
    )
    table = format_table(result)
    assert "top 1 of one index over 2 documents, 2 questions, model hash" in table
    row = table.splitlines()[-1].split()
    assert row[0] == "md-heading-v1:256:32" and row[5:7] == ["yes", "100.0"]
    data = json.loads(json.dumps(result.as_json()))
    assert (
        data["settings"][0]["recall"] == 1.0
        and data["settings"][0]["policy"]["target_tokens"] == 256
    )
    assert data["corpus"] == [
        {"corpus_id": "alpha", "file": "alpha.md", "chars": len(ALPHA)},
        {"corpus_id": "beta", "file": "beta.md", "chars": len(BETA)},
    ]
    page = render_html(result)
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "md-heading-v1:256:32" in page
    assert render_html(result) == page  # deterministic
