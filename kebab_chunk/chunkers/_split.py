"""Cutting text into budget-sized pieces that stay exact slices of their source.

Sizing and cut semantics are kept apart (as in the ``text-splitter`` crate): sizes are UTF-8
byte counts (the byte proxy counts ``ceil(bytes / 3)`` tokens, so a byte budget of
``3 * target_tokens`` is exactly "at most ``target_tokens``"), and cuts prefer the cleanest
boundary available, in this order::

    BLOCK < PARAGRAPH (blank line) < SENTENCE (. ! ? … then space; 。！？) < LINE < WORD < HARD

(the separators of each level are ``_separators.BYTE_LEVELS``; md-heading-v1 cuts with
this module).

Nothing here copies or rewrites text: an *atom* is a ``(start, end)`` range of a string, the
whitespace separating atoms is left out of them but never lost (it lies between two atoms of
one piece, so a piece's text is always ``text[start:end]`` of its source), and :func:`pack`
groups atoms greedily into pieces with optional overlap. Chunkers build their records from
those ranges; this module knows nothing about blocks, spans or documents.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from kebab_chunk.chunkers._separators import (
    BLOCK,
    BYTE_LEVELS,
    BYTE_LEVELS_WRAPPED,
    HARD,
    WHITESPACE,
    Separator,
    match_span,
)

__all__ = [
    "Atom",
    "Piece",
    "best_boundary",
    "pack",
    "split_atoms",
    "split_ranges",
    "utf8_len",
]

_Levels = tuple[tuple[int, Separator], ...]


def _levels(line_cuts: bool) -> _Levels:
    return BYTE_LEVELS if line_cuts else BYTE_LEVELS_WRAPPED


def utf8_len(text: str) -> int:
    """Size of ``text`` in UTF-8 bytes."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _glued(text: str, i: int) -> bool:
    """Whether a cut before ``text[i]`` would tear a CRLF or a combining sequence apart."""
    char, prev = text[i], text[i - 1]
    return (
        (char == "\n" and prev == "\r")
        or unicodedata.combining(char) != 0
        or char == "\u200d"
        or prev == "\u200d"
        or "\ufe00" <= char <= "\ufe0f"
    )


def split_atoms(
    text: str, budget: int, hard: int | None = None, *, line_cuts: bool = True
) -> list[tuple[int, int, int]]:
    """Cut ``text`` into atoms of at most ``budget`` UTF-8 bytes at the cleanest boundaries.

    Returns ``(start, end, level)`` triples in order, where ``level`` says how clean the
    boundary before the atom is (the first atom gets ``BLOCK``). Leading and trailing
    whitespace and the separators between atoms are not part of any atom. An atom exceeds
    the budget only when it is a single code point wider than the budget. Text that is all
    whitespace is cut hard so that nothing disappears.

    ``hard`` (default ``budget``) is the size of the pieces of a hard cut, where no
    boundary exists at all; callers that want overlap pass ``budget - overlap`` so a hard
    piece leaves room for the overlap in front of it. ``line_cuts=False`` treats single
    line breaks as ordinary whitespace (hard-wrapped prose), ``True`` prefers them to other
    whitespace (lists: one item per line).
    """
    out: list[tuple[int, int, int]] = []
    if not text:
        return out
    cutter = _Cutter(
        text,
        budget,
        budget if hard is None else min(budget, max(1, hard)),
        _levels(line_cuts),
        text.isascii(),
        out,
    )
    lo = len(text) - len(text.lstrip())
    hi = len(text.rstrip())
    if lo >= hi:
        cutter.hard(0, len(text), BLOCK)
    else:
        cutter.split(lo, hi, 0, BLOCK)
    return out


@dataclass(frozen=True, slots=True)
class _Cutter:
    """The recursive descent of :func:`split_atoms` over the separator levels."""

    text: str
    budget: int
    hard_size: int
    separators: _Levels
    ascii_only: bool
    out: list[tuple[int, int, int]]

    def split(self, lo: int, hi: int, index: int, start_level: int) -> None:
        size = hi - lo if self.ascii_only else utf8_len(self.text[lo:hi])
        if size <= self.budget:
            self.out.append((lo, hi, start_level))
            return
        if index == len(self.separators):
            self.hard(lo, hi, start_level)
            return
        level, sep = self.separators[index]
        text, budget, out, ascii_only = self.text, self.budget, self.out, self.ascii_only
        pos, next_level = lo, start_level
        leading_blanks = sep.leading_blanks
        # ``_separators.separator_spans``, inlined: the search resumed at ``pos``
        for match in sep.pattern.finditer(text, lo, hi):
            sep_start, sep_end = match_span(match)
            if leading_blanks:
                while sep_start > pos and text[sep_start - 1] in " \t":
                    sep_start -= 1
            if sep_start > pos:
                # inline the common case (the segment fits) to keep long texts fast
                if (sep_start - pos if ascii_only else utf8_len(text[pos:sep_start])) <= budget:
                    out.append((pos, sep_start, next_level))
                else:
                    self.split(pos, sep_start, index + 1, next_level)
                next_level = level
            pos = max(pos, sep_end)
        if pos < hi:
            self.split(pos, hi, index + 1, next_level)

    def hard(self, lo: int, hi: int, start_level: int) -> None:
        """Cut ``text[lo:hi]`` into runs of at most ``hard_size`` bytes on code points."""
        text, size = self.text, self.hard_size
        pos, level = lo, start_level
        while pos < hi:
            if self.ascii_only:
                end = min(hi, pos + size)
            else:
                window = text[pos : min(hi, pos + size)].encode("utf-8")[:size]
                end = pos + len(window.decode("utf-8", "ignore"))
            if end < hi:
                back = end
                while back > pos + 1 and _glued(text, back):
                    back -= 1
                if back > pos and not _glued(text, back):
                    end = back
            end = max(end, pos + 1)  # one code point wider than the budget still moves on
            self.out.append((pos, end, level))
            pos, level = end, HARD


def best_boundary(
    text: str, lo: int, hi: int, max_bytes: int, *, line_cuts: bool = True
) -> tuple[int, int] | None:
    """The cleanest cut ``p`` with ``lo < p < hi`` and ``utf8_len(text[p:hi]) <= max_bytes``.

    Used to pick where an overlap starts: the best level wins, and within a level the
    earliest position (the longest tail). Returns ``(p, level)``, or ``None`` when the
    window holds no boundary. Text without any whitespace (e.g. CJK without punctuation)
    falls back to a hard cut at the window start.
    """
    if max_bytes <= 0 or hi - lo <= 1:
        return None
    segment = text[lo:hi]
    if segment.isascii():
        window_start = hi - max_bytes
    else:
        encoded = segment.encode("utf-8")
        if len(encoded) <= max_bytes:
            window_start = lo
        else:
            window_start = hi - len(encoded[len(encoded) - max_bytes :].decode("utf-8", "ignore"))
    window_start = max(window_start, lo + 1)
    if window_start >= hi:
        return None
    for level, sep in _levels(line_cuts):  # only separator ends matter here
        for match in sep.pattern.finditer(text, lo, hi):
            end = match_span(match)[1]
            if window_start <= end < hi:
                return end, level
    if WHITESPACE.pattern.search(segment) is None:
        pos = window_start
        while pos < hi and _glued(text, pos):
            pos += 1
        if pos < hi:
            return pos, HARD
    return None


@dataclass(slots=True)
class Atom:
    """A range of ``text`` that :func:`pack` never cuts.

    ``gap`` is the byte size of the text between the previous atom and this one, or
    ``None`` when the two may not share a piece (the text between them is unknown or a
    boundary the caller keeps). ``overlap_ok`` says whether the atom may be repeated at the
    start of the next piece. ``line_cuts`` says whether a line break inside the atom is a
    better overlap start than other whitespace. ``owner`` is the caller's tag.
    """

    text: str
    start: int
    end: int
    nbytes: int
    gap: int | None
    level: int
    overlap_ok: bool
    owner: int
    line_cuts: bool = True


@dataclass(slots=True)
class Piece:
    """Atoms ``first..last`` (inclusive), starting at ``head`` in ``atoms[first].text``.

    ``head`` is later than ``atoms[first].start`` when the piece opens with an overlap that
    begins inside that atom. ``nbytes`` is the piece's size in UTF-8 bytes.
    """

    first: int
    last: int
    head: int
    nbytes: int


def pack(atoms: Sequence[Atom], budget: int, overlap: int) -> list[Piece]:
    """Group atoms greedily into pieces of at most ``budget`` bytes, in order.

    A piece holds at least one atom; an atom larger than the budget is a piece of its own.
    When ``overlap > 0`` each piece after the first starts with the longest tail of the
    previous piece that begins at its cleanest boundary (see :func:`best_boundary`), is at
    most ``overlap`` bytes, consists of ``overlap_ok`` atoms only, and still leaves room for
    the next atom within the budget. The overlap always starts strictly after the previous
    piece's start, so every piece covers new text and piece starts strictly increase.
    """
    pieces: list[Piece] = []
    count = len(atoms)
    i = 0
    carried: tuple[int, int, int] | None = None
    while i < count:
        if carried is None:
            first, head, size = i, atoms[i].start, atoms[i].nbytes
        else:
            first, head, size = carried
        last = i
        while last + 1 < count:
            nxt = atoms[last + 1]
            if nxt.gap is None or size + nxt.gap + nxt.nbytes > budget:
                break
            size += nxt.gap + nxt.nbytes
            last += 1
        pieces.append(Piece(first, last, head, size))
        i = last + 1
        carried = None
        if overlap > 0 and i < count and atoms[i].gap is not None:
            carried = _overlap(atoms, first, head, last, i, budget, overlap)
    return pieces


def _overlap(
    atoms: Sequence[Atom], first: int, head: int, last: int, nxt: int, budget: int, overlap: int
) -> tuple[int, int, int] | None:
    """Where the piece after ``first..last`` starts: ``(atom, head, size incl. atom nxt)``."""
    gap = atoms[nxt].gap
    assert gap is not None
    follow = gap + atoms[nxt].nbytes
    limit = min(overlap, budget - follow)
    best: tuple[int, int, int, int] | None = None  # (level, atom, head, tail bytes)
    tail = 0
    m = last
    while m >= first and limit > 0:
        atom = atoms[m]
        if not atom.overlap_ok:
            break
        if m > first and tail + atom.nbytes <= limit:
            tail += atom.nbytes
            if best is None or (atom.level, m) <= best[:2]:
                best = (atom.level, m, atom.start, tail)
            tail += atom.gap or 0  # gaps inside one piece are always known
            m -= 1
            continue
        lo = head if m == first else atom.start
        inner = best_boundary(atom.text, lo, atom.end, limit - tail, line_cuts=atom.line_cuts)
        if inner is not None:
            pos, level = inner
            if best is None or level <= best[0]:
                best = (level, m, pos, tail + utf8_len(atom.text[pos : atom.end]))
        break
    if best is None:
        return None
    _, m, pos, tail_bytes = best
    return m, pos, tail_bytes + follow


def split_ranges(
    text: str, budget: int, overlap: int = 0, *, line_cuts: bool = True
) -> list[tuple[int, int]]:
    """Cut one text into ``(start, end)`` pieces of at most ``budget`` bytes with overlap.

    The single-text form of :func:`split_atoms` + :func:`pack` (e.g. for a long page): every
    piece is ``text[start:end]``, starts strictly after the previous one, and together the
    pieces cover every non-whitespace character.
    """
    triples = split_atoms(text, budget, hard=budget - overlap, line_cuts=line_cuts)
    atoms: list[Atom] = []
    prev_end: int | None = None
    for start, end, level in triples:
        gap = None if prev_end is None else utf8_len(text[prev_end:start])
        nbytes = utf8_len(text[start:end])
        atoms.append(Atom(text, start, end, nbytes, gap, level, True, 0, line_cuts))
        prev_end = end
    return [(p.head, atoms[p.last].end) for p in pack(atoms, budget, overlap)]
