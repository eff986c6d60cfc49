"""The range arithmetic of the retrieval metric, pinned on hand-made cases.

Each expected number is worked out by hand from the definitions of the
``chunking_evaluation`` project (docs/guide/eval.md): numerator = union of chunk ∩ reference
over chunks of the question's document; recall over the plain sum of reference lengths;
precision over the plain sum of all k retrieved chunk lengths; IoU over that sum plus the
reference parts no chunk touched.
"""

from __future__ import annotations

import pytest

from kebab_chunk.eval.metrics import (
    OverlapScore,
    QuestionScore,
    Retrieved,
    RetrievedText,
    TextReference,
    gram_size,
    intersect,
    score_files,
    score_overlap,
    score_question,
    subtract,
    sum_of_ranges,
    summarize,
    summarize_overlap,
    union_ranges,
    word_grams,
)


def _score(refs: list[tuple[int, int]], *chunks: tuple[str, tuple[int, int]]) -> QuestionScore:
    return score_question(refs, "a", [Retrieved(cid, (rng,)) for cid, rng in chunks])


def _assert(score: QuestionScore, recall: float, precision: float, iou: float) -> None:
    assert score.recall == pytest.approx(recall)
    assert score.precision == pytest.approx(precision)
    assert score.iou == pytest.approx(iou)


def test_union_merges_overlapping_and_touching_ranges_in_order() -> None:
    assert union_ranges([(30, 40), (0, 10), (5, 12), (12, 15), (20, 20)]) == [
        (0, 15),
        (20, 20),
        (30, 40),
    ]
    assert union_ranges([]) == []


def test_intersect_touching_ranges_is_empty_not_none() -> None:
    assert intersect((0, 10), (5, 20)) == (5, 10)
    assert intersect((0, 10), (10, 20)) == (10, 10)  # the reference project's rule
    assert intersect((0, 10), (11, 20)) is None


def test_subtract_works_range_by_range_without_merging() -> None:
    # the middle of a range splits it; a covered range disappears; a disjoint one stays
    assert subtract([(0, 20), (5, 8), (30, 40)], (4, 10)) == [(0, 4), (10, 20), (30, 40)]
    # two overlapping ranges are cut separately: their shared part still counts twice
    left = subtract([(0, 10), (5, 15)], (0, 3))
    assert left == [(3, 10), (5, 15)] and sum_of_ranges(left) == 17


def test_chunk_equal_to_the_reference_scores_one() -> None:
    _assert(_score([(10, 20)], ("a", (10, 20))), 1.0, 1.0, 1.0)


def test_no_overlap_scores_zero() -> None:
    _assert(_score([(0, 10)], ("a", (20, 30))), 0.0, 0.0, 0.0)


def test_touching_chunk_finds_nothing_and_iou_counts_the_missed_reference() -> None:
    score = _score([(10, 20)], ("a", (0, 10)))
    _assert(score, 0.0, 0.0, 0.0)


def test_one_chunk_covering_several_references() -> None:
    # numerator 10 + 10; precision 20 / 50; nothing unused, so IoU = 20 / 50
    _assert(_score([(10, 20), (30, 40)], ("a", (0, 50))), 1.0, 0.4, 0.4)


def test_partial_hit_iou_adds_the_unfound_reference_part() -> None:
    # ref 0..20, chunk 10..40: found 10; recall 10/20; precision 10/30; IoU 10/(30 + 10)
    _assert(_score([(0, 20)], ("a", (10, 40))), 0.5, 1 / 3, 0.25)


def test_overlapping_references_count_their_shared_part_twice_in_recall() -> None:
    # refs 0..10 and 5..15 (20 characters summed, 15 in union), chunk 0..20 covers both:
    # numerator = union 15, recall = 15 / 20 (the plain sum), as the reference project does
    _assert(_score([(0, 10), (5, 15)], ("a", (0, 20))), 0.75, 0.75, 0.75)


def test_overlapping_references_partly_found() -> None:
    # chunk 0..8: intersections 0..8 and 5..8, union 8; unused 8..10 (2) and 8..15 (7)
    _assert(_score([(0, 10), (5, 15)], ("a", (0, 8))), 8 / 20, 1.0, 8 / (8 + 9))


def test_retrieved_chunks_overlapping_each_other_count_twice_in_precision() -> None:
    # ref 10..30; chunks 0..20 and 15..25: found 10..25 = 15; precision 15 / (20 + 10);
    # unused 25..30 = 5; IoU 15 / (30 + 5)
    _assert(_score([(10, 30)], ("a", (0, 20)), ("a", (15, 25))), 0.75, 0.5, 15 / 35)


def test_chunks_of_other_documents_count_only_in_precision_denominator() -> None:
    # the "b" chunk covers the same offsets but in another file: no credit, 10 more chars
    _assert(_score([(0, 10)], ("a", (0, 10)), ("b", (0, 10))), 1.0, 0.5, 0.5)


def test_a_chunk_with_several_ranges_is_scored_range_by_range() -> None:
    # ranges 0..5 and 10..15 of one chunk, ref 0..15: found 10 of 15; chunk length 10;
    # unused 5..10
    score = score_question([(0, 15)], "a", [Retrieved("a", ((0, 5), (10, 15)))])
    _assert(score, 10 / 15, 1.0, 10 / 15)


def test_undefined_scores_are_refused() -> None:
    with pytest.raises(ValueError, match="references"):
        _score([(5, 5)], ("a", (0, 10)))
    with pytest.raises(ValueError, match="retrieved"):
        _score([(0, 5)], ("a", (3, 3)))


def test_summary_is_the_mean_over_questions_with_population_std() -> None:
    summary = summarize([QuestionScore(1.0, 0.5, 0.2), QuestionScore(0.0, 0.1, 0.4)])
    assert summary.questions == 2
    assert summary.recall == pytest.approx(0.5) and summary.recall_std == pytest.approx(0.5)
    assert summary.precision == pytest.approx(0.3) and summary.precision_std == pytest.approx(0.2)
    assert summary.iou == pytest.approx(0.3) and summary.iou_std == pytest.approx(0.1)
    with pytest.raises(ValueError):
        summarize([])


# --- references in several documents -------------------------------------------------------


def test_each_chunk_meets_only_the_references_of_its_own_document() -> None:
    # refs a:0..10 and b:0..10; the "a" chunk covers a's reference, the "b" chunk covers
    # b:0..5 only. Offsets alone would let the "a" chunk find b's reference too.
    score = score_files(
        [("a", (0, 10)), ("b", (0, 10))],
        [Retrieved("a", ((0, 10),)), Retrieved("b", ((0, 5),))],
    )
    # found 10 + 5 of 20; chunks 15; unused b:5..10
    _assert(score, 15 / 20, 15 / 15, 15 / (15 + 5))


def test_a_document_without_a_retrieved_chunk_adds_its_references_to_unused() -> None:
    score = score_files([("a", (0, 10)), ("b", (20, 40))], [Retrieved("a", ((0, 20),))])
    # found 10 of 30; chunk 20; unused: b's 20 characters
    _assert(score, 10 / 30, 10 / 20, 10 / (20 + 20))


def test_one_document_through_score_files_is_the_single_document_metric() -> None:
    refs = [(0, 10), (5, 15), (30, 40)]
    chunks = [Retrieved("a", ((0, 8),)), Retrieved("b", ((0, 50),)), Retrieved("a", ((32, 60),))]
    assert score_files([("a", r) for r in refs], chunks) == score_question(refs, "a", chunks)


def test_a_chunk_without_ranges_counts_its_characters_in_the_denominators() -> None:
    # a PDF page of 30 characters (no ranges) retrieved beside the right chunk
    score = score_files([("a", (0, 10))], [Retrieved("a", ((0, 10),)), Retrieved("p", (), 30)])
    _assert(score, 1.0, 10 / 40, 10 / 40)


# --- the overlap measure ----------------------------------------------------------------------


def test_word_grams_ignore_case_punctuation_and_markup() -> None:
    assert word_grams("The **Quick** brown-fox!", 3) == {
        ("the", "quick", "brown"),
        ("quick", "brown", "fox"),
    }
    markup = {("p", "quick", "brown"), ("quick", "brown", "p")}
    assert word_grams("<p>Quick  brown</p>", 3) == markup
    assert word_grams("two words", 3) == frozenset()
    assert word_grams("two words", 1) == {("two",), ("words",)}
    assert (gram_size("a b c"), gram_size("a b"), gram_size("")) == (3, 1, 1)


def _text(corpus_id: str, text: str, *pages: int) -> RetrievedText:
    return RetrievedText(corpus_id, text, frozenset(pages))


def test_overlap_recall_is_the_share_of_reference_trigrams_in_chunks_of_its_file() -> None:
    ref = TextReference("a", "one two three four five")  # 3 trigrams
    # the "a" chunk holds "one two three four": 2 of the 3; the "b" chunk holds all but is
    # another document
    score = score_overlap(
        [ref], [_text("a", "One two, three four."), _text("b", "one two three four five")]
    )
    assert score.recall == pytest.approx(2 / 3)
    # chunk trigrams: a has 2 (both in the reference), b has 3 (another document): 2 / 5
    assert score.precision == pytest.approx(2 / 5)


def test_overlap_sums_over_references_of_several_files_and_short_ones_use_words() -> None:
    refs = [
        TextReference("a", "alpha beta gamma delta"),  # 2 trigrams, both found
        TextReference("b", "CFO | `#finance"),  # 2 words: unigrams, "cfo" found in b only
    ]
    chunks = [_text("a", "x alpha beta gamma delta"), _text("b", "the CFO"), _text("a", "finance")]
    score = score_overlap(refs, chunks)
    assert score.recall == pytest.approx((2 + 1) / (2 + 2))
    # precision over trigrams (one reference has 3+ words): a chunk 1: 3 trigrams, 2 in
    # a's reference; "the CFO" and "finance" have none
    assert score.precision == pytest.approx(2 / 3)


def test_overlap_precision_uses_words_when_every_reference_is_short() -> None:
    score = score_overlap([TextReference("a", "CISO #security")], [_text("a", "the ciso channel")])
    assert (score.recall, score.precision) == (pytest.approx(0.5), pytest.approx(1 / 3))


def test_a_reference_with_a_page_meets_only_chunks_of_that_page() -> None:
    ref = TextReference("doc.pdf", "revenue grew by ten percent", page=2)
    wrong_page = score_overlap([ref], [_text("doc.pdf", "revenue grew by ten percent", 1)])
    right_page = score_overlap([ref], [_text("doc.pdf", "revenue grew by ten percent", 1, 2)])
    assert (wrong_page.recall, wrong_page.precision) == (0.0, 0.0)
    assert (right_page.recall, right_page.precision) == (1.0, 1.0)


def test_overlap_of_wordless_references_is_undefined_and_chunks_without_words_score_0() -> None:
    with pytest.raises(ValueError, match="at least one word"):
        score_overlap([TextReference("a", "— ... —")], [_text("a", "text")])
    assert score_overlap([TextReference("a", "a b c")], [_text("a", "!!")]).precision == 0.0


def test_overlap_summary_is_the_mean_with_population_std() -> None:
    summary = summarize_overlap([OverlapScore(1.0, 0.2), OverlapScore(0.5, 0.4)])
    assert (summary.questions, summary.recall, summary.precision) == (
        2,
        pytest.approx(0.75),
        pytest.approx(0.3),
    )
    assert summary.recall_std == pytest.approx(0.25) and summary.precision_std == pytest.approx(0.1)
    with pytest.raises(ValueError):
        summarize_overlap([])
