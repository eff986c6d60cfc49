"""Bounding the context lines a chunk records; no label owns this module.

A heading (or caption, or table header) line is recorded on every chunk of its section, so
a line as long as the input makes output quadratic in it (docs/internals/decisions.md, "Issue
29.7"). The labels that bound such lines (``hybrid-v4``, ``md-heading-v3``) cut each one by
the same rule, :func:`bound_line`, through one :class:`LineBound` per document (each line
cut once, with one warning). :func:`fitting_prefix` is the cut both this rule and
``hybrid-v2``'s counted-text trim use.

Every label's output is frozen (docs/internals/versioning.md): a change of these cuts changes those
labels, so it belongs in a new function for a new label, not in this one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from kebab_chunk._quote import quote

__all__ = ["Count", "LineBound", "bound_line", "cut_line_warning", "fitting_prefix"]

Count = Callable[[str], int]

_WORD_END = re.compile(r"\S+")


def fitting_prefix(line: str, count: Count, limit: int) -> str:
    """The longest prefix of ``line`` measured to cost at most ``limit``: cut at a word end
    when one fits, else at a character; ``""`` when no character fits."""
    ends = [m.end() for m in _WORD_END.finditer(line)]
    best = _last_fitting(ends, lambda end: count(line[:end]) <= limit)
    if best is None:
        first = ends[0] if ends else len(line)
        best = _last_fitting(range(1, first), lambda end: count(line[:end]) <= limit)
    return line[:best].rstrip() if best is not None else ""


def _last_fitting(candidates: Sequence[int], fits: Callable[[int], bool]) -> int | None:
    """The last candidate that fits, by bisection (counts grow with the prefix); only a
    candidate that was measured to fit is ever returned."""
    lo, hi, best = 0, len(candidates) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        if fits(candidates[mid]):
            best, lo = candidates[mid], mid + 1
        else:
            hi = mid - 1
    return best


def bound_line(line: str, count: Count, budget: int) -> str:
    """A heading or caption line as hybrid-v4 and md-heading-v3 record it: at most half the
    budget.

    The longest prefix that costs at most ``budget // 2`` tokens and holds at most
    ``2 * budget`` characters (the character cap bounds tokenizers that count a long run of
    unknown characters as one token), cut at a word end when one fits, else at a
    character; never less than the line's first character. A line within both is returned
    unchanged.
    """
    limit, chars = budget // 2, 2 * budget
    if len(line) <= chars and count(line) <= limit:
        return line
    head = line[: chars + 1]  # a word ending past the cap cannot fit: no need to scan on

    def capped(text: str) -> int:
        return count(text) if len(text) <= chars else limit + 1

    return fitting_prefix(head, capped, limit) or line[:1]


class LineBound:
    """The context lines of one document as its chunks record them (:func:`bound_line`):
    each distinct line is cut once, and each line cut is reported once to ``warn``.

    ``what`` names the kind of line in the warning (``"a heading line"``).
    """

    def __init__(
        self, count: Count, budget: int, source_uri: str, what: str, warn: Callable[[str], None]
    ) -> None:
        self._count = count
        self._budget = budget
        self._source_uri = source_uri
        self._what = what
        self._warn = warn
        self._kept: dict[str, str] = {}

    def __call__(self, line: str) -> str:
        """``line`` as recorded: itself when within the bound, else its cut."""
        kept = self._kept.get(line)
        if kept is None:
            kept = self._kept[line] = bound_line(line, self._count, self._budget)
            if kept != line:
                self._warn(cut_line_warning(self._source_uri, self._what, line, kept, self._budget))
        return kept


def cut_line_warning(source_uri: str, what: str, line: str, kept: str, budget: int) -> str:
    """The warning for a context line cut by :func:`bound_line` (``what`` names its kind)."""
    return (
        f"{source_uri}: {what} of {len(line):,} characters costs more than half of the chunk "
        f"budget ({budget} tokens) or holds more than {2 * budget:,} characters, so its chunks "
        f"record only its first {len(kept):,} characters: {quote(kept)}"
    )
