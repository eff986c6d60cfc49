r"""Retrieval quality: recall, precision and IoU over character ranges, and word overlap.

Pure arithmetic, ranges (or texts) in and numbers out. It reproduces the metric of the open-source
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

References in several documents (:func:`score_files`): each document is scored as above
against the retrieved chunks of that document only, and the numerators and unused parts
are added up over documents; the denominators stay the plain sums over all references and
all k chunks. With one document this is the single-document metric, number for number.

The overlap measure (:func:`score_overlap`) needs no character ranges, so it also scores
references into rendered formats (HTML, DOCX, PDF pages): word trigrams (lower-cased
``\w+`` runs; word unigrams for a reference of fewer than 3 words) of each reference's
content found in the text of the retrieved chunks of the reference's own document (and
page, when the reference names one); docs/guide/eval.md defines it in full, and
docs/internals/decisions.md, "Issue 33: the overlap measure" says why.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "GRAM",
    "OverlapScore",
    "OverlapSummary",
    "QuestionScore",
    "Range",
    "Retrieved",
    "RetrievedText",
    "Summary",
    "TextReference",
    "gram_size",
    "intersect",
    "score_files",
    "score_overlap",
    "score_question",
    "subtract",
    "sum_of_ranges",
    "summarize",
    "summarize_overlap",
    "union_ranges",
    "word_grams",
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
    """One retrieved chunk: the document it comes from and the character ranges it covers.

    ``chars`` is the length it counts in precision's denominator when it cites no character
    range (a PDF page or DOCX element, from a document no range reference names); None
    means the sum of its ranges.
    """

    corpus_id: str
    ranges: tuple[Range, ...]
    chars: int | None = None

    @property
    def length(self) -> int:
        """What the chunk counts in precision's and IoU's denominators."""
        return sum_of_ranges(self.ranges) if self.chars is None else self.chars


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
    return score_files([(corpus_id, reference) for reference in references], retrieved)


def score_files(
    references: Sequence[tuple[str, Range]], retrieved: Sequence[Retrieved]
) -> QuestionScore:
    """Recall, precision and IoU for references that may lie in several documents: each
    ``(corpus_id, range)`` reference is met only by retrieved chunks of its own document.

    Per document, ``found`` and ``unused`` are computed as for one document; numerators and
    unused lengths are summed over documents, the denominators are the plain sums over all
    references and all retrieved chunks. The same ValueErrors as :func:`score_question`.
    """
    recall_denominator = sum_of_ranges(reference for _, reference in references)
    precision_denominator = sum(chunk.length for chunk in retrieved)
    if recall_denominator <= 0:
        raise ValueError("a question needs references with a positive total length")
    if precision_denominator <= 0:
        raise ValueError("the retrieved chunks need a positive total length")
    numerator = unused = 0
    for corpus_id in dict.fromkeys(cid for cid, _ in references):
        own = [reference for cid, reference in references if cid == corpus_id]
        chunks = [chunk for chunk in retrieved if chunk.corpus_id == corpus_id]
        found, left = _found_and_unused(own, chunks)
        numerator += sum_of_ranges(found)
        unused += sum_of_ranges(left)
    return QuestionScore(
        recall=numerator / recall_denominator,
        precision=numerator / precision_denominator,
        iou=numerator / (precision_denominator + unused),
    )


def _found_and_unused(
    references: Sequence[Range], chunks: Sequence[Retrieved]
) -> tuple[list[Range], list[Range]]:
    """One document's ``found`` (the union of every chunk ∩ reference) and ``unused`` (each
    reference minus those intersections, reference by reference); ``chunks`` are that
    document's retrieved chunks."""
    found: list[Range] = []
    unused = list(references)
    for chunk in chunks:
        for chunk_range in chunk.ranges:
            for reference in references:
                common = intersect(chunk_range, reference)
                if common is not None:
                    unused = subtract(unused, common)
                    found = union_ranges([common, *found])
    return found, unused


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


# --- the overlap measure: word n-grams, no character ranges needed --------------------------

_WORD = re.compile(r"\w+")

#: The n of the overlap measure's word n-grams; shorter references use single words.
GRAM = 3


def word_grams(text: str, n: int) -> frozenset[tuple[str, ...]]:
    r"""The distinct word ``n``-grams of ``text``: words are the ``\w+`` runs of the
    lower-cased text, so punctuation, markup symbols and spacing do not matter."""
    words = _WORD.findall(text.lower())
    return frozenset(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def gram_size(text: str) -> int:
    """:data:`GRAM` for a text of at least that many words, else 1 (single words)."""
    return GRAM if len(_WORD.findall(text.lower())) >= GRAM else 1


@dataclass(frozen=True)
class TextReference:
    """A reference as text: its document, its content and, for a PDF, its 1-based page
    (None: anywhere in the document)."""

    corpus_id: str
    content: str
    page: int | None = None


@dataclass(frozen=True)
class RetrievedText:
    """A retrieved chunk as text: its document, its text and the pages it cites."""

    corpus_id: str
    text: str
    pages: frozenset[int] = frozenset()


@dataclass(frozen=True)
class OverlapScore:
    """The overlap recall and precision of one question, each in [0, 1]."""

    recall: float
    precision: float


def _meets(reference: TextReference, chunk: RetrievedText) -> bool:
    """Whether ``chunk`` can hold ``reference``: same document, and its page if it names one."""
    same_page = reference.page is None or reference.page in chunk.pages
    return reference.corpus_id == chunk.corpus_id and same_page


def score_overlap(
    references: Sequence[TextReference], retrieved: Sequence[RetrievedText]
) -> OverlapScore:
    """Overlap recall and precision of the ``retrieved`` chunks for one question.

    Each reference counts its distinct word n-grams (n from :func:`gram_size`); recall is
    the share of them, summed over references, that occur in a retrieved chunk the
    reference meets (same document, same page when given). Precision is the share of the
    retrieved chunks' distinct trigrams, summed over chunks (so chunk overlap counts twice,
    as in the character metric), that belong to a reference the chunk meets; when every
    reference is shorter than 3 words it is taken over single words instead. A question
    whose references hold no word is undefined: ValueError.
    """
    sized = [(ref, gram_size(ref.content)) for ref in references]
    grams = [(ref, n, word_grams(ref.content, n)) for ref, n in sized]
    total = sum(len(g) for _, _, g in grams)
    if total == 0:
        raise ValueError("a question needs references that hold at least one word")
    found = 0
    for ref, n, ref_grams in grams:
        seen: set[tuple[str, ...]] = set()
        for chunk in retrieved:
            if _meets(ref, chunk):
                seen |= word_grams(chunk.text, n)
        found += len(ref_grams & seen)
    n_precision = GRAM if any(n == GRAM for _, n in sized) else 1
    relevant = hits = 0
    for chunk in retrieved:
        chunk_grams = word_grams(chunk.text, n_precision)
        wanted: set[tuple[str, ...]] = set()
        for ref, n, ref_grams in grams:
            if n == n_precision and _meets(ref, chunk):
                wanted |= ref_grams
        relevant += len(chunk_grams)
        hits += len(chunk_grams & wanted)
    return OverlapScore(recall=found / total, precision=hits / relevant if relevant else 0.0)


@dataclass(frozen=True)
class OverlapSummary:
    """Means and (population) standard deviations of the overlap scores over questions."""

    questions: int
    recall: float
    recall_std: float
    precision: float
    precision_std: float


def summarize_overlap(scores: Sequence[OverlapScore]) -> OverlapSummary:
    """The overlap scores averaged over questions (every question weighs the same)."""
    if not scores:
        raise ValueError("no overlap scores to summarize")
    recall, recall_std = _mean_std([s.recall for s in scores])
    precision, precision_std = _mean_std([s.precision for s in scores])
    return OverlapSummary(len(scores), recall, recall_std, precision, precision_std)
