"""Experiment (not registered): md-heading-v2's contract, cuts chosen by lexical cohesion.

``md-heading-v2`` fills every piece of an over-budget section greedily up to the budget,
cutting at the cleanest boundary that fits. This experiment keeps its contract (exact
source slices, sections and heading glue, cuts only at block, paragraph or sentence
boundaries unless a sentence alone is over budget, the budget never exceeded) and changes
only *where* inside an over-budget section a cut falls: among the candidate boundaries
whose piece size lies in ``[min_fraction * budget, budget]``, the one where the text on
either side shares the fewest words (TextTiling: cosine similarity of the tf-idf word
vectors of the ``window`` words before and after the boundary; idf from the section's own
sentences, so no language-specific stop list is needed).

Variants (constructor arguments):

- ``score="similarity"``: cut at the lowest similarity; ``score="depth"``: cut at the
  deepest valley (TextTiling's depth: how far the similarity climbs on both sides before
  it falls again), which ignores a boundary that is low only because the whole stretch is.
- ``prefer_paragraphs``: a block or paragraph boundary in the window wins over any
  sentence boundary (cohesion only chooses among boundaries of the cleanest level present).
- ``cohesion=False``: no similarity at all; with ``prefer_paragraphs`` this is "the last
  paragraph boundary in the window, else the last sentence boundary" (the ablation).
- ``window_fraction``: the window as a share of the words a budget-sized piece holds
  (estimated from the run), instead of a fixed ``window`` of words.
- ``search="greedy"`` (default): piece by piece, the best-scored boundary in the size
  window, avoiding a remainder shorter than the minimum when a candidate allows it;
  ``search="dp"``: one global segmentation of the run (dynamic programming) with every
  piece but the last in ``[min, budget]``, minimising the sum over cuts of (similarity minus
  the run's mean similarity), so cuts go where cohesion is below the run's typical level;
  when no such segmentation exists (a sentence over budget) the greedy search runs.

Not registered and not covered by goldens: an experiment for measuring retrieval, run by
instantiating the class directly. Measured result (132 development questions, k=5): the
cohesion variants beat the best peer by about 1 to 4 recall points depending on size and
window, not by 3 points at every size; see the report that came with this module.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections import Counter as WordCounter
from collections.abc import Sequence

from kebab_chunk.chunkers._budget import budget_of
from kebab_chunk.chunkers._md_heading import (
    _FIRST_WORD,
    MdHeadingChunker,
    _LazyLevels,
    _Member,
    _Run,
    _skip_space,
)
from kebab_chunk.chunkers._separators import PARAGRAPH_BREAK, SENTENCE_STOP, separator_starts
from kebab_chunk.chunkers._token_split import split_pieces
from kebab_chunk.chunkers.registry import label
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy
from kebab_chunk.tokenizers import get_tokenizer

__all__ = ["MdCohesionExpChunker"]

_WORD = re.compile(r"\w+")


class MdCohesionExpChunker(MdHeadingChunker):
    """md-heading-v2 with cohesion-chosen cuts inside over-budget sections (experiment)."""

    def __init__(
        self,
        *,
        min_fraction: float = 0.5,
        window: int = 40,
        score: str = "similarity",
        prefer_paragraphs: bool = False,
        cohesion: bool = True,
        window_fraction: float | None = None,
        search: str = "greedy",
    ) -> None:
        super().__init__(label("md-heading-v2"))
        self.version = "md-cohesion-exp"  # the row sets md-heading-v2's label
        self.min_fraction = min_fraction
        self.window = window
        self.score = score
        self.prefer_paragraphs = prefer_paragraphs
        self.cohesion = cohesion
        self.window_fraction = window_fraction
        self.search = search

    def chunk(self, doc: CanonicalDocument, policy: ChunkPolicy) -> list[Chunk]:
        """All chunks of ``doc`` in document order (md-heading-v2's, cut by cohesion)."""
        if not self.accepts(doc):
            return super().chunk(doc, policy)  # raises md-heading-v2's error
        tokenizer = get_tokenizer(policy.tokenizer)
        count, budget = self._counters.get(tokenizer), budget_of(policy, tokenizer)
        # chunks keep md-heading-v2's label, as before (the engine's row is v2's)
        run = _CohesionRun(doc, policy, count, budget, self.label.name)
        run.options = self
        return run.run()


class _CohesionRun(_Run):
    """One pass; only the cut search of an over-budget run differs from md-heading-v2."""

    options: MdCohesionExpChunker

    def _pieces(self, text: str, members: Sequence[_Member]) -> list[tuple[int, int, int]]:
        if self.count(text) <= self.budget or self.overlap:
            return super()._pieces(text, members)
        blocks = self.doc.blocks
        glue_end: int | None = None
        lead = 0
        while lead < len(members) and blocks[members[lead].index].kind == "heading":
            lead += 1
        if 0 < lead < len(members):
            word = _FIRST_WORD.match(text, members[lead].offset)
            word_end = word.end() if word else members[lead].offset
            if self.count(text[:word_end]) <= self.budget:
                glue_end = members[lead].offset
        n = len(text)
        strong = {m.offset for m in members[1:]} | set(separator_starts(PARAGRAPH_BREAK, text))
        weak = set(separator_starts(SENTENCE_STOP, text))
        cuts = sorted(c for c in strong | weak if 0 < c < n and (glue_end is None or c > glue_end))
        is_strong = {c: c in strong for c in cuts}
        sims = self._scores(text, cuts)
        levels = _LazyLevels(text, [m.offset for m in members[1:]], glue_end)
        total = self.count(text)
        fallback_cpt = len(text) / max(1, total)
        lo_tokens = max(1, int(self.options.min_fraction * self.budget))
        if self.options.search == "dp":
            found = self._dp(text, cuts, sims, is_strong, lo_tokens)
            if found is not None:
                return found
        out: list[tuple[int, int, int]] = []
        start = _skip_space(text, 0)
        while start < n:
            rest_end = len(text.rstrip())
            rest = self.count(text[start:rest_end])
            if rest <= self.budget:
                out.append((start, rest_end, rest))
                break
            i = bisect.bisect_right(cuts, start)
            window: list[tuple[int, int, int]] = []  # (cut, end, tokens)
            fitting: list[tuple[int, int, int]] = []
            while i < len(cuts):
                c = cuts[i]
                end = len(text[:c].rstrip())
                if end <= start:
                    i += 1
                    continue
                tokens = self.count(text[start:end])
                if tokens > self.budget:
                    break
                fitting.append((c, end, tokens))
                if tokens >= lo_tokens:
                    window.append((c, end, tokens))
                i += 1
            if window:
                # avoid a remainder shorter than the minimum when possible
                ok = [w for w in window if self.count(text[_skip_space(text, w[0]) :]) >= lo_tokens]
                pool = ok or window
                if self.options.prefer_paragraphs and any(is_strong[w[0]] for w in pool):
                    pool = [w for w in pool if is_strong[w[0]]]
                if self.options.cohesion:
                    best = min(pool, key=lambda w: (sims[w[0]], -w[0]))
                else:
                    best = pool[-1]
            elif fitting:
                best = fitting[-1]
            else:  # one sentence over the budget: md-heading-v2's search from here
                rest_text = text[start:]

                def measure(a: int, b: int, rest_text: str = rest_text) -> int:
                    return self.count(rest_text[a:b])

                piece = next(
                    split_pieces(
                        rest_text,
                        [[c - start for c in lv if c > start] for lv in levels],
                        measure,
                        self.budget,
                        chars_per_token=fallback_cpt,
                    )
                )
                best = (start + piece[1], start + piece[1], piece[2])
                out.append((start + piece[0], start + piece[1], piece[2]))
                start = _skip_space(text, best[0])
                continue
            out.append((start, best[1], best[2]))
            start = _skip_space(text, best[0])
        return out

    def _dp(
        self,
        text: str,
        cuts: Sequence[int],
        sims: dict[int, float],
        is_strong: dict[int, bool],
        lo_tokens: int,
    ) -> list[tuple[int, int, int]] | None:
        """Global segmentation: pieces of ``[lo_tokens, budget]`` tokens (the last may be
        smaller) minimising the sum over cuts of (similarity - the run's mean similarity),
        so a cut is rewarded where cohesion is below the run's typical level. None when no
        such segmentation exists (the greedy search then runs)."""
        n = len(text)
        ends = [*cuts, n]
        starts = [_skip_space(text, 0)] + [_skip_space(text, c) for c in cuts]
        values = [sims[c] for c in cuts]
        mean = sum(values) / len(values) if values else 0.0
        inf = float("inf")
        best = [inf] * len(ends)  # best[j]: cost of covering text up to ends[j]
        back: list[tuple[int, int]] = [(-1, 0)] * len(ends)
        for j, c in enumerate(ends):
            end = len(text[:c].rstrip())
            for i in range(j, -1, -1):  # piece from starts[i] to end
                a = starts[i]
                if end <= a:
                    continue
                tokens = self.count(text[a:end])
                if tokens > self.budget:
                    break
                prev = 0.0 if i == 0 else best[i - 1]
                if prev == inf or (tokens < lo_tokens and j != len(ends) - 1):
                    continue
                cost = prev + (0.0 if j == len(ends) - 1 else sims[c] - mean)
                if cost < best[j]:
                    best[j] = cost
                    back[j] = (i, tokens)
        if best[-1] == inf:
            return None
        out: list[tuple[int, int, int]] = []
        j = len(ends) - 1
        while j >= 0:
            i, tokens = back[j]
            out.append((starts[i], len(text[: ends[j]].rstrip()), tokens))
            j = i - 1
        return out[::-1]

    def _scores(self, text: str, cuts: Sequence[int]) -> dict[int, float]:
        """Per cut: similarity of the word windows either side (lower = better cut);
        with ``score="depth"``, minus TextTiling's depth score instead."""
        if not self.options.cohesion:
            return dict.fromkeys(cuts, 0.0)
        words = [(m.start(), m.group().lower()) for m in _WORD.finditer(text)]
        starts = [w[0] for w in words]
        # idf over the run's sentences
        bounds = [0, *cuts, len(text)]
        docs = 0
        df: WordCounter[str] = WordCounter()
        for a, b in itertools.pairwise(bounds):
            lo, hi = bisect.bisect_left(starts, a), bisect.bisect_left(starts, b)
            if hi > lo:
                docs += 1
                df.update({w for _, w in words[lo:hi]})
        idf = {w: math.log((1 + docs) / (1 + f)) + 1.0 for w, f in df.items()}
        win = self.options.window
        if self.options.window_fraction is not None:  # a share of a budget's words
            per_token = len(words) / max(1, self.count(text))
            win = max(5, round(self.options.window_fraction * self.budget * per_token))
        sims: list[float] = []
        for c in cuts:
            k = bisect.bisect_left(starts, c)
            left = WordCounter(w for _, w in words[max(0, k - win) : k])
            right = WordCounter(w for _, w in words[k : k + win])
            sims.append(_cosine(left, right, idf))
        if self.options.score == "depth":
            depth = []
            for j, s in enumerate(sims):
                lp = s
                for t in range(j - 1, -1, -1):
                    if sims[t] < lp:
                        break
                    lp = sims[t]
                rp = s
                for t in range(j + 1, len(sims)):
                    if sims[t] < rp:
                        break
                    rp = sims[t]
                depth.append(-((lp - s) + (rp - s)))
            sims = depth
        return dict(zip(cuts, sims, strict=True))


def _cosine(a: WordCounter[str], b: WordCounter[str], idf: dict[str, float]) -> float:
    if not a or not b:
        return 1.0  # no evidence: not a preferred cut
    dot = sum(a[w] * b[w] * idf[w] ** 2 for w in a.keys() & b.keys())
    na = math.sqrt(sum((v * idf[w]) ** 2 for w, v in a.items()))
    nb = math.sqrt(sum((v * idf[w]) ** 2 for w, v in b.items()))
    return dot / (na * nb) if na and nb else 1.0
