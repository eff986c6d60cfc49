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
    select_types,
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


# --- corpora with sub-folders, references in several files, content-only references -------

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
GUIDE = "# Guide\n\nThe kettle boils water for tea.\n\nKeep the lid closed.\n"
FAQ = "# Notes\n\nThe kettle switches off by itself.\n"
BOIL = "The kettle boils water for tea."
SWITCH = "The kettle switches off by itself."


def _reference(text: str, part: str, corpus_id: str | None = None) -> dict[str, Any]:
    content, start, end = ref(text, part)
    found: dict[str, Any] = {"content": content, "start_index": start, "end_index": end}
    return found if corpus_id is None else {**found, "corpus_id": corpus_id}


def write_typed(path: Path, rows: Sequence[tuple[str, str, Sequence[Any], str]]) -> Path:
    """A questions CSV with a type column (and an answer column, ignored):
    (question, corpus_id, reference objects, type) rows."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "references", "corpus_id", "type", "answer"])
        for question, corpus_id, refs, kind in rows:
            writer.writerow([question, json.dumps(refs), corpus_id, kind, "-"])
    return path


def make_nested(root: Path) -> Path:
    """A corpus with sub-folders and one ``_index.md`` per folder (their stems collide)."""
    corpus = root / "corpus"
    (corpus / "kitchen").mkdir(parents=True)
    (corpus / "help").mkdir()
    (corpus / "kitchen" / "_index.md").write_text(GUIDE, encoding="utf-8")
    (corpus / "help" / "_index.md").write_text(FAQ, encoding="utf-8")
    (corpus / "help" / "unnamed.md").write_text("# Other\n\nNot cited.\n", encoding="utf-8")
    return corpus


def test_corpus_ids_are_paths_under_the_corpus_folder_with_or_without_extension(
    tmp_path: Path,
) -> None:
    corpus = make_nested(tmp_path)
    path = write_questions(
        tmp_path / "q.csv",
        [
            ("boil", "kitchen/_index.md", [ref(GUIDE, BOIL)]),
            ("switch", "help/_index", [ref(FAQ, SWITCH)]),
        ],
    )
    loaded = load_corpus(corpus, load_questions(path))
    assert [(d.corpus_id, d.name, d.text) for d in loaded.values()] == [
        ("help/_index", "help/_index.md", FAQ),
        ("kitchen/_index.md", "kitchen/_index.md", GUIDE),
    ]


@pytest.mark.parametrize(
    ("corpus_id", "message"),
    [
        ("help/missing", r"names corpus_id 'help/missing', but .* has no file help/missing"),
        ("nowhere/_index", r"names corpus_id 'nowhere/_index', but"),
        ("../corpus/help/_index", r"'\.\./corpus/help/_index' points outside the corpus folder"),
        ("help/_index", r"matches several files in .*help \(_index\.md, _index\.txt\)"),
    ],
)
def test_missing_outside_and_ambiguous_paths_are_one_sentence_errors(
    tmp_path: Path, corpus_id: str, message: str
) -> None:
    corpus = make_nested(tmp_path)
    (corpus / "help" / "_index.txt").write_text(FAQ, encoding="utf-8")
    path = write_questions(tmp_path / "q.csv", [("q", corpus_id, [ref(FAQ, SWITCH)])])
    with pytest.raises(UsageError, match=message) as info:
        load_corpus(corpus, load_questions(path))
    assert "\n" not in str(info.value)


def test_two_corpus_ids_naming_one_file_are_refused(tmp_path: Path) -> None:
    corpus = make_nested(tmp_path)
    path = write_questions(
        tmp_path / "q.csv",
        [("a", "help/_index", [ref(FAQ, SWITCH)]), ("b", "help/_index.md", [ref(FAQ, SWITCH)])],
    )
    with pytest.raises(UsageError, match=r"'help/_index' and 'help/_index\.md' name the same file"):
        load_corpus(corpus, load_questions(path))


def test_each_reference_names_its_own_file_and_every_named_file_is_indexed(
    tmp_path: Path,
) -> None:
    corpus = make_nested(tmp_path)
    refs = [_reference(GUIDE, BOIL), _reference(FAQ, SWITCH, "help/_index.md")]
    path = write_questions(tmp_path / "q.csv", [("kettle", "kitchen/_index.md", refs)])
    (question,) = load_questions(path)
    assert [r.corpus_id for r in question.cited] == ["kitchen/_index.md", "help/_index.md"]
    assert question.corpus_id == "kitchen/_index.md" and question.ranged
    assert sorted(load_corpus(corpus, [question])) == ["help/_index.md", "kitchen/_index.md"]
    shifted = {**refs[1], "start_index": refs[1]["start_index"] + 1}
    bad = write_questions(tmp_path / "b.csv", [("kettle", "kitchen/_index.md", [refs[0], shifted])])
    with pytest.raises(
        UsageError, match=r"reference 2 of the question on line 2 .*help/_index\.md"
    ):
        load_corpus(corpus, load_questions(bad))


def test_a_chunk_counts_only_against_the_references_of_its_own_file(tmp_path: Path) -> None:
    """Both files' answers start at offset 9 after a heading; FAQ's chunk covers GUIDE's
    answer's offsets too, but must not count for it."""
    corpus = make_nested(tmp_path)
    assert GUIDE.index(BOIL) == FAQ.index(SWITCH) == 9
    refs = [_reference(GUIDE, BOIL), _reference(FAQ, SWITCH, "help/_index.md")]
    path = write_questions(tmp_path / "q.csv", [("switches off by itself", "kitchen/_index", refs)])
    questions = load_questions(path)
    (res,) = evaluate(
        questions,
        load_corpus(corpus, questions),
        [parse_setting("hierarchical-v1")],
        HashEmbedder(),
        k=1,
    ).results
    assert res.retrieved == ((("help/_index.md", 0),),)  # the FAQ paragraph
    (score,) = res.scores
    assert score is not None
    total = len(BOIL) + len(SWITCH)
    assert (score.recall, score.precision) == (pytest.approx(len(SWITCH) / total), 1.0)
    assert score.iou == pytest.approx(len(SWITCH) / (len(SWITCH) + len(BOIL)))
    (overlap,) = res.overlaps
    assert overlap is not None and overlap.recall == pytest.approx(4 / (4 + 4))  # trigrams


def test_content_only_references_with_an_optional_page_are_read(tmp_path: Path) -> None:
    refs = [
        {"content": "Page two talks about citations.", "corpus_id": "doc.pdf", "page": 2},
        {"content": "ab", "start_index": 3, "end_index": 5},
    ]
    path = write_questions(tmp_path / "q.csv", [("q", "notes", refs)])
    (question,) = load_questions(path)
    assert [(r.corpus_id, r.span, r.page) for r in question.cited] == [
        ("doc.pdf", None, 2),
        ("notes", (3, 5), None),
    ]
    assert question.references == ((3, 5),) and not question.ranged


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ({"content": "ab", "start_index": 3}, "no whole-number start/end index"),
        ({"content": "ab", "page": 0}, "page 0 is not a number >= 1"),
        ({"content": "ab", "page": True}, "page True is not a number >= 1"),
        ({"content": "— …"}, "a reference without indexes has no word in content"),
        ({"content": "ab", "corpus_id": ""}, "corpus_id is not a non-empty string"),
        ({"content": "ab", "corpus_id": 3}, "corpus_id is not a non-empty string"),
    ],
)
def test_malformed_new_reference_fields_are_refused(
    tmp_path: Path, reference: dict[str, Any], message: str
) -> None:
    path = write_questions(tmp_path / "q.csv", [("q", "d", [reference])])
    with pytest.raises(UsageError, match=message) as info:
        load_questions(path)
    assert "question on line 2" in str(info.value) and "\n" not in str(info.value)


def test_a_row_without_corpus_id_needs_one_on_every_reference(tmp_path: Path) -> None:
    named = write_questions(tmp_path / "a.csv", [("q", "", [{"content": "ab", "corpus_id": "x"}])])
    assert load_questions(named)[0].corpus_id == "x"
    bare = write_questions(tmp_path / "b.csv", [("q", "", [{"content": "ab"}])])
    with pytest.raises(UsageError, match="has no corpus_id and the row has none"):
        load_questions(bare)


def test_content_references_score_rendered_html_by_overlap_only(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    (corpus / "site").mkdir(parents=True)
    page = (
        "<html><body><h1>Pets</h1><p>Cats <b>purr</b> softly.</p><p>Dogs bark.</p></body></html>\n"
    )
    (corpus / "site" / "pets.html").write_text(page, encoding="utf-8")
    (corpus / "beta.md").write_text(BETA, encoding="utf-8")
    path = write_questions(
        tmp_path / "q.csv",
        [
            ("do cats purr softly", "site/pets", [{"content": "Cats purr softly."}]),
            ("What do rockets burn?", "beta", [ref(BETA, BURN)]),
        ],
    )
    questions = load_questions(path)
    result = evaluate(
        questions, load_corpus(corpus, questions), [parse_setting("hybrid-v1")], HashEmbedder(), k=1
    )
    (res,) = result.results
    assert res.scores[0] is None and res.scores[1] is not None  # no range: no range score
    assert res.summary is not None and res.summary.questions == 1
    assert res.retrieved == ((("site/pets", 0),), (("beta", 0),))
    html, markdown = res.overlaps
    # the HTML chunk's rendered text is both paragraphs: 1 of its 3 trigrams is the answer
    assert html is not None and (html.recall, html.precision) == (1.0, pytest.approx(1 / 3))
    # beta's chunk: "rockets burn fuel to reach orbit engines roar at launch", 8 trigrams
    assert markdown is not None and (markdown.recall, markdown.precision) == (1.0, 4 / 8)
    assert res.overlap is not None and res.overlap.questions == 2
    assert (result.range_questions, result.overlap_questions, result.summarized) == (1, 2, 2)
    assert "IoU over the 1 of 2 questions" in format_table(result)


def test_pdf_and_docx_references_are_content_and_pages(tmp_path: Path) -> None:
    """A PDF page reference meets only chunks of its page; binary files index without a
    text, and a range into one is refused."""
    corpus = tmp_path / "c"
    (corpus / "filings").mkdir(parents=True)
    (corpus / "filings" / "sample.pdf").write_bytes(
        (FIXTURES / "pdf" / "three-page-en.pdf").read_bytes()
    )
    (corpus / "report.docx").write_bytes((FIXTURES / "docx" / "report.docx").read_bytes())
    citations = "Page two talks about citations."
    rows = [
        ("citations page", "filings/sample", [{"content": citations, "page": 2}]),
        ("citations page", "filings/sample", [{"content": citations, "page": 3}]),
        ("quarterly operations report", "report", [{"content": "Quarterly Operations Report"}]),
    ]
    questions = load_questions(write_questions(tmp_path / "q.csv", rows))
    loaded = load_corpus(corpus, questions)
    assert [loaded[cid].text for cid in ("filings/sample", "report")] == [None, None]
    result = evaluate(questions, loaded, [parse_setting("hybrid-v4:64:0")], HashEmbedder(), k=1)
    (res,) = result.results
    assert res.retrieved == ((("filings/sample", 1),), (("filings/sample", 1),), (("report", 0),))
    assert res.scores == (None, None, None) and res.summary is None
    assert [(o.recall, o.precision > 0) for o in res.overlaps if o] == [
        (1.0, True),  # page 2's chunk holds the reference
        (0.0, False),  # the reference is said to be on page 3
        (1.0, True),
    ]
    table = format_table(result)
    assert "IoU over the 0 of 3 questions" in table
    assert table.splitlines()[3].split()[6:9] == ["-", "-", "-"]
    assert [c["chars"] for c in result.as_json()["corpus"]] == [None, None]
    ranged = [{"content": "%PDF", "start_index": 0, "end_index": 4}]
    bad = load_questions(write_questions(tmp_path / "b.csv", [("q", "filings/sample", ranged)]))
    with pytest.raises(UsageError, match=r"characters 0 to 4 of filings/sample\.pdf, which is not"):
        load_corpus(corpus, bad)


def test_chunks_without_ranges_are_refused_only_in_files_with_range_references(
    tmp_path: Path,
) -> None:
    """PDF chunks cite pages: fine for content references, and a PDF chunk retrieved for a
    range question counts its characters in precision; a docling JSON file is text, so a
    range reference into it passes the loader, but its chunks cite elements: refused."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "sample.pdf").write_bytes((FIXTURES / "pdf" / "three-page-en.pdf").read_bytes())
    (corpus / "alpha.md").write_text(ALPHA, encoding="utf-8")
    rows = [
        ("citations", "sample", [{"content": "Page two talks about citations."}]),
        ("purr", "alpha", [ref(ALPHA, PURR)]),
    ]
    questions = load_questions(write_questions(tmp_path / "q.csv", rows))
    loaded = load_corpus(corpus, questions)
    setting = [parse_setting("hierarchical-v1")]
    (res,) = evaluate(questions, loaded, setting, ConstantEmbedder(), k=3).results
    assert res.retrieved[1] == (("alpha", 0), ("alpha", 1), ("sample", 0))
    pdf = parse_document(loaded["sample"].raw, "sample.pdf")
    pdf_chars = len(get_chunker("hierarchical-v1").chunk(pdf, make_policy())[0].text)
    chunk_chars = len(PURR) + len("A cat has whiskers.")
    score = res.scores[1]
    assert score is not None and score.recall == 1.0
    assert score.precision == pytest.approx(len(PURR) / (chunk_chars + pdf_chars))
    docling = (FIXTURES / "docling" / "report.docling.json").read_text(encoding="utf-8")
    (corpus / "report.docling.json").write_text(docling, encoding="utf-8")
    part = docling[docling.index('"') : docling.index('"') + 8]
    ranged = [("report", "report.docling", [ref(docling, part)])]
    questions = load_questions(write_questions(tmp_path / "r.csv", ranged))
    with pytest.raises(UsageError, match=r"cites no character ranges of report\.docling\.json"):
        evaluate(questions, load_corpus(corpus, questions), setting, HashEmbedder())


# --- question types ------------------------------------------------------------------------


def _typed_dataset(tmp_path: Path) -> tuple[list[Question], dict[str, Any]]:
    corpus, _ = make_dataset(tmp_path)
    path = write_typed(
        tmp_path / "typed.csv",
        [
            ("Why do cats purr softly?", "alpha", [_reference(ALPHA, PURR)], "Single-Text"),
            ("What do rockets burn?", "beta", [_reference(BETA, BURN)], "Single-Text"),
            ("And the other one?", "alpha", [_reference(ALPHA, PURR)], "Contextual Anaphora"),
            ("Which burns?", "beta", [_reference(BETA, BURN)], "Multi-hop Reasoning"),
        ],
    )
    questions = load_questions(path)
    return questions, load_corpus(corpus, questions)


def test_types_are_read_and_selected(tmp_path: Path) -> None:
    questions, _ = _typed_dataset(tmp_path)
    assert [q.type for q in questions] == [
        "Single-Text",
        "Single-Text",
        "Contextual Anaphora",
        "Multi-hop Reasoning",
    ]
    kept = select_types(questions, "Single-Text, Multi-hop Reasoning")
    assert [q.line for q in kept] == [2, 3, 5]
    assert [q.line for q in select_types(questions, exclude="Contextual Anaphora")] == [2, 3, 5]


@pytest.mark.parametrize(
    ("types", "exclude", "message"),
    [
        (
            "Single Text",
            None,
            r"--types: no question of q\.csv has the type 'Single Text'; use "
            r"one or more \(comma-separated\) of Contextual Anaphora, Multi-hop Reasoning, "
            "Single-Text",
        ),
        (None, "Nope", "--exclude-types: no question of q.csv has the type 'Nope'"),
        ("Single-Text", "Single-Text", "leave no question of q.csv; keep at least one type"),
    ],
)
def test_unknown_types_and_empty_selections_are_refused(
    tmp_path: Path, types: str | None, exclude: str | None, message: str
) -> None:
    questions, _ = _typed_dataset(tmp_path)
    with pytest.raises(UsageError, match=message) as info:
        select_types(questions, types, exclude, "q.csv")
    assert "\n" not in str(info.value)


def test_types_need_a_type_column(dataset: Any) -> None:
    questions, _ = dataset
    assert select_types(questions) == questions
    with pytest.raises(UsageError, match="--types selects by the type column, but questions"):
        select_types(questions, "Single-Text")


def test_results_by_type_and_anaphora_set_apart_from_the_summary(tmp_path: Path) -> None:
    questions, corpus = _typed_dataset(tmp_path)
    result = evaluate(questions, corpus, [parse_setting("md-heading-v1")], ConstantEmbedder(), k=1)
    (res,) = result.results
    # every question retrieves alpha's one chunk: the alpha questions score 1, beta's 0
    assert [s.recall for s in res.scores if s] == [1.0, 0.0, 1.0, 0.0]
    assert res.summary is not None and res.summary.questions == 3  # anaphora left out
    assert res.summary.recall == pytest.approx(1 / 3)
    assert res.overlap is not None and res.overlap.recall == pytest.approx(1 / 3)
    assert list(res.per_type) == ["Multi-hop Reasoning", "Single-Text", "Contextual Anaphora"]
    anaphora = res.per_type["Contextual Anaphora"]
    assert anaphora.questions == 1 and anaphora.ranges is not None
    assert anaphora.ranges.recall == 1.0
    assert res.per_type["Single-Text"].ranges is not None
    assert res.per_type["Single-Text"].ranges.recall == 0.5
    assert (result.summarized, result.apart) == (3, (("Contextual Anaphora", 1),))
    data = json.loads(json.dumps(result.as_json()))
    assert data["apart"] == {"Contextual Anaphora": 1} and data["summarized_questions"] == 3
    setting = data["settings"][0]
    assert setting["questions"] == 3 and setting["overlap_questions"] == 3
    assert setting["per_type"]["Contextual Anaphora"]["recall"] == 1.0
    assert setting["per_type"]["Single-Text"]["all_questions"] == 2
    assert [q["type"] for q in setting["per_question"]][2] == "Contextual Anaphora"
    table = format_table(result).splitlines()
    assert "Contextual Anaphora (1 question) set apart" in table[0]
    assert table[3].split()[6] == "33.3"
    assert table[5].startswith("by question type")
    rows = [line.split("  ") for line in table[8:]]
    assert [[c.strip() for c in row if c.strip()][1] for row in rows] == [
        "Multi-hop Reasoning",
        "Single-Text",
        "Contextual Anaphora",
    ]
    iou = f"{100 * len(PURR) / 75:.1f}"  # alpha's one chunk is 75 characters
    assert table[-1].split()[-5:] == ["1", "1", "100.0", iou, "100.0"]
    assert "Contextual Anaphora" in render_html(result)


def test_untyped_questions_have_no_type_rows(dataset: Any) -> None:
    questions, corpus = dataset
    result = evaluate(questions, corpus, [parse_setting("md-heading-v1")], HashEmbedder(), k=1)
    assert result.results[0].per_type == {} and result.apart == ()
    assert len(format_table(result).splitlines()) == 4
