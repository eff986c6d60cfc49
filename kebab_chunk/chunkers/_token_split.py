"""Token-budget splitting of one text into exact slices (used by ``hybrid-v1``).

Sizing and cut semantics are separate, as in the ``text-splitter`` crate: the caller
supplies ``measure(start, end)``, the token count of the *contextualised* piece
``text[start:end]``, and this module only decides where to cut. Cuts prefer the cleanest
boundary: the caller's structural cuts (list items, table rows), then blank lines, then
(prose) sentence ends before line breaks or (code) line breaks, then whitespace, then any
character (the separators are ``_separators.TOKEN_LEVELS``). For each piece the highest
level whose first candidate fits is chosen and as much text as fits at that level is taken.

Cost: the search never re-tokenises the rest of a long text. It starts from a guess (the
text's own characters per token) and gallops/bisects over candidate ends, so each piece
costs a few counts of about one piece of text, and a candidate far longer than any fitting
piece could be (``max_chars``) is rejected without counting. A pathological tokenizer can
only make pieces smaller than necessary, never over budget: every piece returned was
measured to fit, except a single character that alone exceeds the budget (its count says
so: it is the only piece with ``tokens > budget``).
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable, Iterator, Sequence

from kebab_chunk.chunkers._separators import TOKEN_LEVELS, WHITESPACE, separator_starts

__all__ = ["cut_levels", "split_pieces"]

_SPACE = WHITESPACE.pattern

Measure = Callable[[int, int], int]


def cut_levels(text: str, style: str, structural: Sequence[int] = ()) -> list[list[int]]:
    """Sorted candidate cut offsets per level; each level includes the cleaner ones before it.

    Every level ends with ``len(text)``, so the end of the text is always a candidate.
    """
    n = len(text)
    raw: list[list[int]] = []
    if structural:
        raw.append(sorted(c for c in structural if 0 < c < n))
    for sep in TOKEN_LEVELS.get(style, TOKEN_LEVELS["prose"]):
        raw.append([start for start in separator_starts(sep, text) if 0 < start < n])
    levels: list[list[int]] = []
    merged: list[int] = []
    for cuts in raw:
        merged = _unique(heapq.merge(merged, cuts))
        levels.append([*merged, n])
    return levels


def _unique(values: Iterator[int]) -> list[int]:
    out: list[int] = []
    for v in values:
        if not out or out[-1] != v:
            out.append(v)
    return out


def split_pieces(
    text: str,
    levels: Sequence[Sequence[int]],
    measure: Measure,
    budget: int,
    *,
    chars_per_token: float,
    overlap: Callable[[int, int], int] | None = None,
    overlap_tokens: int = 0,
) -> Iterator[tuple[int, int, int]]:
    """Cover ``text`` (minus whitespace at the cuts) with pieces that each fit ``budget``.

    Yields ``(start, end, tokens)``: ``text[start:end]`` costs ``measure(start, end) ==
    tokens``, at most ``budget`` unless it is a single character that alone does not fit.

    ``overlap(start, end)`` counts a bare slice; with ``overlap_tokens > 0`` each piece after
    the first starts with the longest tail of the previous piece that costs at most
    ``overlap_tokens`` and starts at the cleanest boundary (skipped when it would leave no
    room to advance).
    """
    n = len(text)
    search = _Search(text, levels, measure, budget, chars_per_token)
    start = _skip_space(text, 0)
    while start < n:
        end, tokens = search.piece(start)
        yield start, end, tokens
        nxt = _skip_space(text, end)
        if nxt >= n:
            return
        if overlap is not None and overlap_tokens > 0:
            back = _overlap_start(text, start, end, levels, overlap, overlap_tokens)
            if back is not None:
                candidate = search.piece(back)
                if candidate[0] > end:
                    search.prime(back, candidate)
                    nxt = back
        start = nxt


def _skip_space(text: str, pos: int) -> int:
    m = _SPACE.match(text, pos)
    return m.end() if m else pos


def _overlap_start(
    text: str,
    start: int,
    end: int,
    levels: Sequence[Sequence[int]],
    overlap: Measure,
    tokens: int,
) -> int | None:
    """Start of the longest tail of ``text[start:end]`` that fits ``tokens``, at the cleanest
    level.

    Tails start just after a cut (sentence end, line break, whitespace...); the cleanest
    level that has a fitting tail wins, so the overlap repeats whole sentences when it can.
    """
    for cuts in levels:
        lo_i = bisect.bisect_right(cuts, start)
        hi_i = bisect.bisect_left(cuts, end)
        starts = _unique(iter(_skip_space(text, c) for c in cuts[lo_i:hi_i]))
        starts = [s for s in starts if start < s < end]
        if starts and overlap(starts[-1], end) <= tokens:
            return starts[_first_fitting(starts, end, overlap, tokens)]
    return None


def _first_fitting(starts: Sequence[int], end: int, overlap: Measure, tokens: int) -> int:
    """Smallest index whose tail fits, given that the last one does (gallop backwards)."""
    hi, lo, step = len(starts) - 1, -1, 1
    while hi - step >= 0:  # short tails are cheap to count, so walk back from the end
        k = hi - step
        if overlap(starts[k], end) <= tokens:
            hi, step = k, step * 2
        else:
            lo = k
            break
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if overlap(starts[mid], end) <= tokens:
            hi = mid
        else:
            lo = mid
    return hi


class _Search:
    """Finds, for one start, the longest piece that fits at the cleanest possible level."""

    def __init__(
        self,
        text: str,
        levels: Sequence[Sequence[int]],
        measure: Measure,
        budget: int,
        chars_per_token: float,
    ) -> None:
        self.text = text
        self.levels = levels
        self.measure = measure
        self.budget = budget
        self.cpt = max(chars_per_token, 0.25)
        # No fitting piece can plausibly be this long; longer candidates are not counted.
        self.max_chars = max(64, int(8 * budget * self.cpt))
        self._primed: tuple[int, tuple[int, int]] | None = None
        self._memo: dict[int, int] = {}

    def prime(self, start: int, piece: tuple[int, int]) -> None:
        """Remember a piece already found for ``start`` (the overlap probe)."""
        self._primed = (start, piece)

    def piece(self, start: int) -> tuple[int, int]:
        """``(end, tokens)`` of the piece that starts at ``start``."""
        if self._primed is not None and self._primed[0] == start:
            found = self._primed[1]
            self._primed = None
            return found
        self._memo = {}
        n = len(self.text)
        guess = start + max(1, int(self.budget * self.cpt))
        for cuts in self.levels:
            best = self._best(start, cuts, bisect.bisect_right(cuts, start), guess)
            if best is not None:
                return best
        # Any character: candidate ends are start+1 .. n.
        best = self._best(start, range(start + 1, n + 1), 0, guess)
        if best is not None:
            return best
        end = start + 1  # one character that alone is over budget
        return end, self.measure(start, end)

    def _trim(self, start: int, end: int) -> int:
        while end > start and self.text[end - 1].isspace():
            end -= 1
        return end

    def _fits(self, start: int, end: int) -> int | None:
        if end <= start or end - start > self.max_chars:
            return None
        tokens = self._memo.get(end)
        if tokens is None:
            tokens = self.measure(start, end)
            self._memo[end] = tokens
        return tokens if tokens <= self.budget else None

    def _best(
        self, start: int, positions: Sequence[int], offset: int, guess: int
    ) -> tuple[int, int] | None:
        """Largest candidate ``positions[offset + k]`` that fits, galloping from the guess."""
        count = len(positions) - offset
        if count <= 0:
            return None

        def ok(k: int) -> int | None:
            return self._fits(start, self._trim(start, positions[offset + k]))

        g = bisect.bisect_right(positions, guess, lo=offset) - 1 - offset
        g = min(max(g, 0), count - 1)
        if ok(g) is not None:
            lo, hi, step = g, count, 1
            while lo + step < count:
                if ok(lo + step) is not None:
                    lo += step
                    step *= 2
                else:
                    hi = lo + step
                    break
        else:
            hi, step, lo = g, 1, -1
            while hi > 0:
                k = max(hi - step, 0)
                if ok(k) is not None:
                    lo = k
                    break
                hi, step = k, step * 2
            if lo < 0:
                return None
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if ok(mid) is not None:
                lo = mid
            else:
                hi = mid
        end = self._trim(start, positions[offset + lo])
        tokens = ok(lo)
        assert tokens is not None
        return end, tokens
