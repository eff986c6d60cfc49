"""Headings of a PDF without an outline, found by how their lines are set (``pdf-text-v3``).

A PDF exported without bookmarks still shows its structure in type: section titles are
short lines in a larger font than the running text, or in bold where the running text is
not. While pypdf extracts a page's text, :class:`FontCollector` sees every text run with
its font and effective size (the font size scaled by the text and transformation
matrices); :func:`font_headings` then reads the document's lines:

- **Body size**: the size that sets the most non-blank characters (ties: the smaller).
- **A heading line** holds 2 to 150 characters, at least two letters, mostly letters
  (:data:`MIN_LETTER_SHARE`), few digits (:data:`MAX_DIGITS`: not a row of figures) and
  at most 20 words, and every non-blank character of it is
  either at least :data:`LARGER` times the body size, or bold at about the body size or
  larger (bold only counts when under a third of the document's characters are bold).
  Lines set larger in one size in a row are one heading (a title wrapped over two lines)
  unless more than :data:`MAX_HEADING_LINES` follow each other: then they are a paragraph
  set large, not a heading. Each bold line stands alone.
- **Not headings**: a line whose text recurs on :data:`RUNNING_PAGES` pages or more
  (running headers, repeated labels).
- **Levels**: the distinct larger sizes, largest first, are levels 1, 2, ... (at most 5);
  bold at body size comes one level below the smallest of them (at most 6).

The result is the same kind of entry an outline gives (level, title, page), placed in the
page text by the same search, so a found heading is a heading block whose span is exact.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FontCollector", "FontHeading", "font_headings"]

#: How much larger than the body size a heading's type must be.
LARGER = 1.15
#: Bold at body size needs at least this share of the body size (rounding of sizes).
BOLD_FLOOR = 0.95
#: Bold marks headings only where less than this share of all characters is bold.
MAX_BOLD_SHARE = 1 / 3
MAX_CHARS = 150
MAX_WORDS = 20
MAX_HEADING_LINES = 3
#: At least this share of a heading line's non-blank characters are letters ...
MIN_LETTER_SHARE = 0.5
#: ... and less than this share digits.
MAX_DIGITS = 0.3
#: A line recurring on this many pages is running text, not a heading.
RUNNING_PAGES = 3
MAX_LEVEL = 6
_BOLD = re.compile(r"bold|black|heavy|semibold|demi", re.IGNORECASE)
_LETTER = re.compile(r"[^\W\d_]")


@dataclass
class _Line:
    """One line of a page as the text runs set it: its text and, per non-blank character,
    the (size, bold) it was set in."""

    parts: list[str] = field(default_factory=list)
    styles: Counter[tuple[float, bool]] = field(default_factory=Counter)

    def text(self) -> str:
        return " ".join("".join(self.parts).split())


class FontCollector:
    """pypdf's ``visitor_text`` callback for one page: collects its lines and styles."""

    def __init__(self) -> None:
        self.lines: list[_Line] = [_Line()]

    def __call__(
        self, text: str, cm: Sequence[float], tm: Sequence[float], font: Any, size: float
    ) -> None:
        if not text:
            return
        try:  # whatever a broken PDF hands over, the page's text must not be lost
            scale = math.hypot(float(tm[2]), float(tm[3])) * math.hypot(float(cm[2]), float(cm[3]))
            effective = round(abs(float(size) * scale) if scale else abs(float(size)), 1)
        except (TypeError, ValueError, OverflowError, IndexError):
            effective = 0.0
        if not math.isfinite(effective):
            effective = 0.0
        name = font.get("/BaseFont") if isinstance(font, dict) else None
        bold = bool(name) and _BOLD.search(str(name)) is not None
        first, *rest = text.split("\n")
        self._add(first, effective, bold)
        for part in rest:
            self.lines.append(_Line())
            self._add(part, effective, bold)

    def _add(self, part: str, size: float, bold: bool) -> None:
        line = self.lines[-1]
        line.parts.append(part)
        visible = sum(1 for char in part if not char.isspace())
        if visible:
            line.styles[(size, bold)] += visible


@dataclass(frozen=True)
class FontHeading:
    """A heading found by its type: ``level`` 1-6, its ``title`` (whitespace collapsed)
    and its 1-based ``page``."""

    level: int
    title: str
    page: int


def _kind(line: _Line, body: float, bold_ok: bool) -> tuple[str, float] | None:
    """``("large", size)`` or ``("bold", body)`` when every character of ``line`` is set
    as a heading, else None."""
    if not line.styles:
        return None
    smallest = min(size for size, _ in line.styles)
    if smallest >= body * LARGER:
        return ("large", smallest)
    if bold_ok and smallest >= body * BOLD_FLOOR and all(bold for _, bold in line.styles):
        return ("bold", body)
    return None


def _wordy(text: str) -> bool:
    """Mostly letters, at least two, and few digits: not a line of code or symbols, nor a
    table row of figures (a bold total)."""
    letters = len(_LETTER.findall(text))
    digits = sum(1 for char in text if char.isdigit())
    visible = sum(1 for char in text if not char.isspace())
    return letters >= 2 and letters >= visible * MIN_LETTER_SHARE and digits < visible * MAX_DIGITS


def _plausible(title: str) -> bool:
    """Short and a few words."""
    return 2 <= len(title) <= MAX_CHARS and len(title.split()) <= MAX_WORDS


def font_headings(pages: Sequence[Sequence[_Line]]) -> list[FontHeading]:
    """The headings of a document whose pages' lines were collected by
    :class:`FontCollector` (see the module docstring), in page and line order."""
    weights: Counter[float] = Counter()
    bold_chars = total = 0
    for lines in pages:
        for line in lines:
            for (size, bold), count in line.styles.items():
                weights[size] += count
                total += count
                bold_chars += count if bold else 0
    if not total:
        return []
    body = min(weights, key=lambda size: (-weights[size], size))
    bold_ok = bold_chars < total * MAX_BOLD_SHARE
    recurring: defaultdict[str, set[int]] = defaultdict(set)
    for number, lines in enumerate(pages, start=1):
        for line in lines:
            recurring[line.text()].add(number)
    found: list[tuple[int, str, tuple[str, float]]] = []
    for number, lines in enumerate(pages, start=1):
        run: list[tuple[str, tuple[str, float]]] = []
        for line in [*lines, _Line()]:  # a blank line ends the last run
            text = line.text()
            kind = _kind(line, body, bold_ok) if _wordy(text) else None
            # Only larger type wraps a title over lines: each bold line is its own (bold
            # runs of lines are terms, code or table rows more often than titles).
            joins = kind is not None and kind[0] == "large" and bool(run) and kind == run[-1][1]
            if run and not joins:
                if len(run) <= MAX_HEADING_LINES:
                    title = " ".join(t for t, _ in run)
                    if _plausible(title):
                        found.append((number, title, run[0][1]))
                run = []
            if kind is not None and len(recurring[text]) < RUNNING_PAGES:
                run.append((text, kind))
    sizes = sorted({size for _, _, (kind, size) in found if kind == "large"}, reverse=True)
    level_of = {size: min(n, MAX_LEVEL - 1) for n, size in enumerate(sizes, start=1)}
    bold_level = min(len(sizes) + 1, MAX_LEVEL)
    return [
        FontHeading(level_of[size] if kind == "large" else bold_level, title, number)
        for number, title, (kind, size) in found
    ]
