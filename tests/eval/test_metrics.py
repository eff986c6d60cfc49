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
    QuestionScore,
    Retrieved,
    intersect,
    score_question,
    subtract,
    sum_of_ranges,
    summarize,
    union_ranges,
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
