"""Retrieval quality over character ranges: recall, precision and IoU of retrieved chunks.

Pure arithmetic, ranges in and numbers out. It reproduces the metric of the open-source
``chunking_evaluation`` project (its ``BaseEvaluation._scores_from_dataset_and_retrievals``)
so our numbers compare with the numbers published for other chunkers, quirks included:

For one question with reference ranges ``R`` (all in one corpus document) and the top-k
retrieved chunks ``C`` (from any document):

- ``numerator`` = the length of the union of every ``c ∩ r`` for a retrieved chunk ``c``
  of the question's document and a reference ``r``;
- ``unused`` = the references minus those intersections, each reference on its own (so
  overlapping references count their shared part twice);
- ``recall = numerator / Σ|r|`` (the plain sum of reference lengths, not their union);
- ``precision = numerator / Σ|c|`` (the plain sum of the lengths of all k retrieved
  chunks, chunks of other documents and overlaps between chunks included);
- ``iou = numerator / (Σ|c| + Σ|unused|)``.

Each is averaged over the questions (:func:`summarize`). A chunk here may cite several
ranges (a chunk whose spans are not one contiguous slice); its length is the sum of its
ranges and its intersections are taken range by range. With one range per chunk, as in the
reference project, the two definitions are the same.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "QuestionScore",
    "Range",
    "Retrieved",
    "Summary",
    "intersect",
    "score_question",
    "subtract",
    "sum_of_ranges",
    "summarize",
    "union_ranges",
]

#: A half-open character range ``(start, end)`` with ``start <= end``.
Range = tuple[int, int]


def sum_of_ranges(ranges: Iterable[Range]) -> int:
    """The plain sum of the ranges' lengths (overlaps count once per range)."""
    return sum(end - start for start, end in ranges)


def union_ranges(ranges: Iterable[Range]) -> list[Range]:
    """The ranges merged into disjoint ones, sorted; touching ranges merge too."""
    merged: list[Range] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def intersect(a: Range, b: Range) -> Range | None:
    """The common part of two ranges; ranges that only touch give an empty range (as in the
    reference project), disjoint ones None."""
    start, end = max(a[0], b[0]), min(a[1], b[1])
    return (start, end) if start <= end else None


def subtract(ranges: Sequence[Range], target: Range) -> list[Range]:
    """Each range minus ``target``, range by range (the list is not merged first)."""
    out: list[Range] = []
    t_start, t_end = target
    for start, end in ranges:
        if end < t_start or start > t_end:
            out.append((start, end))
            continue
        if start < t_start:
            out.append((start, t_start))
        if end > t_end:
            out.append((t_end, end))
    return out


@dataclass(frozen=True)
class Retrieved:
    """One retrieved chunk: the document it comes from and the character ranges it covers."""

    corpus_id: str
    ranges: tuple[Range, ...]


@dataclass(frozen=True)
class QuestionScore:
    """The three scores of one question, each in [0, 1]."""

    recall: float
    precision: float
    iou: float


def score_question(
    references: Sequence[Range], corpus_id: str, retrieved: Sequence[Retrieved]
) -> QuestionScore:
    """Recall, precision and IoU of the ``retrieved`` chunks (the top k, in any order) for a
    question whose answer is the ``references`` ranges of document ``corpus_id``.

    ``references`` must have a positive total length and ``retrieved`` a positive total
    length (a ValueError otherwise: the scores would be undefined).
    """
    recall_denominator = sum_of_ranges(references)
    precision_denominator = sum(sum_of_ranges(chunk.ranges) for chunk in retrieved)
    if recall_denominator <= 0:
        raise ValueError("a question needs references with a positive total length")
    if precision_denominator <= 0:
        raise ValueError("the retrieved chunks need a positive total length")
    found: list[Range] = []
    unused = list(references)
    for chunk in retrieved:
        if chunk.corpus_id != corpus_id:
            continue  # counts in precision's denominator only
        for chunk_range in chunk.ranges:
            for reference in references:
                common = intersect(chunk_range, reference)
                if common is not None:
                    unused = subtract(unused, common)
                    found = union_ranges([common, *found])
    numerator = sum_of_ranges(found)
    return QuestionScore(
        recall=numerator / recall_denominator,
        precision=numerator / precision_denominator,
        iou=numerator / (precision_denominator + sum_of_ranges(unused)),
    )


@dataclass(frozen=True)
class Summary:
    """Means and (population) standard deviations of the scores over questions."""

    questions: int
    recall: float
    recall_std: float
    precision: float
    precision_std: float
    iou: float
    iou_std: float


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    mean = math.fsum(values) / len(values)
    return mean, math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))


def summarize(scores: Sequence[QuestionScore]) -> Summary:
    """The scores averaged over questions (every question weighs the same)."""
    if not scores:
        raise ValueError("no question scores to summarize")
    recall, recall_std = _mean_std([s.recall for s in scores])
    precision, precision_std = _mean_std([s.precision for s in scores])
    iou, iou_std = _mean_std([s.iou for s in scores])
    return Summary(len(scores), recall, recall_std, precision, precision_std, iou, iou_std)
