"""Every docs path the code and the docs cite exists, and every cited section is a heading.

Docstrings and comments cite the docs as ``docs/internals/contract.md, "Snapshots"`` and
decisions as ``docs/internals/decisions.md, "Issue 30: table format for outputs"`` (often a
prefix of the heading, and for the ``Issue N: ...`` entries of docs/internals/decisions.md
the title after that prefix). Moving or renaming a doc, or rewording a heading, must update
its citations; this test makes a stale one fail instead of silently pointing nowhere.
Relative Markdown links in README.md, CONTRIBUTING.md, CHANGELOG.md and docs/ must reach an
existing file, and an ``#anchor`` into a Markdown file one of its headings.

tests/ is not scanned: tests use paths such as ``docs/a.md`` as corpus fixtures.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED_DIRS = ("kebab_chunk", "pipelines", "benchmarks", "fuzz", "docs")
SCANNED_FILES = ("README.md", "CONTRIBUTING.md", "CHANGELOG.md", "run_local.sh", "pyproject.toml")
SUFFIXES = {".py", ".md", ".sh", ".toml", ".txt"}

#: ``docs/x.md`` or ``docs/guide/x.md``, optionally followed by ``, "Title"`` (the title may
#: run over a line break, with a comment marker on the next line).
_CITATION = re.compile(
    r"(?<![\w./-])(docs/(?:[\w-]+/)*[\w-]+\.md)"
    r"(?:(?:,[ \t]*|[ \t]+|,?[ \t]*\n[ \t]*(?:#:?)?[ \t]*)\"([^\"\n]+(?:\n[^\"\n]+)?)\")?"
)
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
#: A paragraph that opens with a bold lead, ``**When no job server can be had.**``: a
#: section the docs cite like a heading.
_LEAD = re.compile(r"^\*\*([^*\n]+?)\.?\*\*", re.M)
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
_LINK = re.compile(r"\]\(([^)\s]+)\)")
#: What a citation may leave out of a heading: ``Issue 30: `` or a section number ``4. ``.
_ISSUE = re.compile(r"^(?:issue [\d.]+(?: \([^)]*\))?: |\d+\. )")


def _scanned() -> list[Path]:
    files = [ROOT / name for name in SCANNED_FILES if (ROOT / name).is_file()]
    for folder in SCANNED_DIRS:
        files += sorted(
            p for p in (ROOT / folder).rglob("*")
            if p.suffix in SUFFIXES and p.is_file() and ".venv" not in p.parts
        )
    return files


def _normal(text: str) -> str:
    text = re.sub(r"\s*\n\s*(?:#:?)?\s*", " ", text)
    return " ".join(text.replace("`", "").split()).lower().rstrip(".")


def _headings(path: Path) -> list[str]:
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    return [_normal(h) for h in _HEADING.findall(text) + _LEAD.findall(text)]


def _names_a_heading(title: str, headings: list[str]) -> bool:
    cited = _normal(title)
    return any(
        h.startswith(cited) or _ISSUE.sub("", h).startswith(cited) for h in headings
    )


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _citations() -> list[tuple[str, str, str | None]]:
    found = []
    for path in _scanned():
        text = path.read_text(encoding="utf-8", errors="replace")
        where = path.relative_to(ROOT).as_posix()
        for match in _CITATION.finditer(text):
            found.append((where, match.group(1), match.group(2)))
    return found


def test_every_cited_docs_path_exists() -> None:
    citations = _citations()
    assert len(citations) > 100, len(citations)  # the scan sees the code's citations
    missing = sorted({(where, doc) for where, doc, _ in citations if not (ROOT / doc).is_file()})
    assert missing == []


def test_every_cited_section_is_a_heading_of_its_doc() -> None:
    citations = [(w, d, t) for w, d, t in _citations() if t and (ROOT / d).is_file()]
    decisions = [c for c in citations if c[1].endswith("/decisions.md")]
    assert len(decisions) >= 15, decisions  # the code cites decisions by title
    headings = {doc: _headings(ROOT / doc) for _, doc, _ in citations}
    stale = [(w, d, t) for w, d, t in citations if not _names_a_heading(t, headings[d])]
    assert stale == []


def test_relative_links_in_the_docs_reach_a_file_and_a_heading() -> None:
    pages = [p for p in _scanned() if p.suffix == ".md" and "results" not in p.parts]
    assert ROOT / "README.md" in pages
    broken = []
    for page in pages:
        text = _FENCE.sub("", page.read_text(encoding="utf-8"))
        for target in _LINK.findall(text):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            dest = (page.parent / file_part).resolve() if file_part else page
            if not dest.exists():
                broken.append((page.relative_to(ROOT).as_posix(), target))
            elif anchor and dest.suffix == ".md":
                anchors = {_slug(h) for h in _HEADING.findall(
                    _FENCE.sub("", dest.read_text(encoding="utf-8")))}
                if anchor not in anchors:
                    broken.append((page.relative_to(ROOT).as_posix(), target))
    assert broken == []
