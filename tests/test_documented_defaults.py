"""Where the README, the docs or a docstring names the default chunker label, it names the
one ``DEFAULT_LABELS_BY_MEDIA_TYPE`` holds today.

Defaults change by design (a new label replaces an old one as the default, the old one
stays registered), and each change left sentences behind: ``KebabTextSplitter()  #
md-heading-v1`` in a docstring and "``md-heading-v1`` for Markdown and plain text,
``hybrid-v1`` for HTML" in docs/guide/integrations.md outlived two changes of default. Three
forms of claim are checked: the adapters' no-argument examples, "``LABEL`` for FORMATS"
after the word "default" (the README's quick start names all three defaults so), and the
"**default for FORMATS.**" marks of the chunker table in docs/guide/labels.md, which must
mark every default and nothing else. docs/internals/decisions.md, docs/internals/versioning.md
and CHANGELOG.md record past defaults on purpose and are not scanned.
"""

from __future__ import annotations

import re
from pathlib import Path

from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE, registered_labels

ROOT = Path(__file__).resolve().parents[1]
HISTORY = {"decisions.md", "versioning.md", "CHANGELOG.md"}
#: The page whose chunker table marks the defaults.
LABELS_PAGE = "docs/guide/labels.md"
_DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
#: How the prose names media types.
FORMATS: dict[str, tuple[str, ...]] = {
    "Markdown": ("text/markdown",),
    "plain text": ("text/plain",),
    "text": ("text/plain",),
    "PDF": ("application/pdf",),
    "HTML": ("text/html",),
    "CSV": ("text/csv",),
    "TSV": ("text/tab-separated-values",),
    "CSV/TSV": ("text/csv", "text/tab-separated-values"),
    "DOCX": (_DOCX,),
    "docling JSON": ("application/vnd.docling+json",),
}
_LABEL = "|".join(re.escape(label) for label in sorted(registered_labels(), key=len)[::-1])
_FORMAT = "|".join(re.escape(name) for name in sorted(FORMATS, key=len)[::-1])
_FORMAT_LIST = rf"(?:{_FORMAT})(?:(?:,\s+|\s+and\s+)(?:{_FORMAT}))*"
#: ``KebabTextSplitter()  # md-heading-v3, default policy`` and the like.
_NO_ARGUMENT = re.compile(rf"(?:KebabTextSplitter|KebabNodeParser)\(\)[^\n#]*#[^\n]*?({_LABEL})")
#: ```md-heading-v3`` for Markdown and plain text``, counted after the word "default".
_FOR = re.compile(rf"`{{1,2}}({_LABEL})`{{1,2}}\s+for\s+({_FORMAT_LIST})\b")
#: A chunker table row: ``| `hybrid-v4` | ... | **default for HTML, CSV/TSV.** ...``.
_ROW = re.compile(rf"^\| `({_LABEL})` \|[^\n]*?\*\*default for ({_FORMAT_LIST})\.\*\*", re.M)


def _texts() -> dict[str, str]:
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    paths = [p for p in paths if p.name not in HISTORY]
    paths += sorted((ROOT / "kebab_chunk").rglob("*.py"))
    return {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in paths}


def _media_types(formats: str) -> list[str]:
    names = re.split(r",\s+|\s+and\s+", " ".join(formats.split()))
    return [media for name in names for media in FORMATS[name]]


def test_the_adapters_no_argument_examples_name_the_markdown_default() -> None:
    (default,) = DEFAULT_LABELS_BY_MEDIA_TYPE["text/markdown"]
    found = [
        (where, m.group(1)) for where, text in _texts().items() for m in _NO_ARGUMENT.finditer(text)
    ]
    assert len(found) >= 5, found  # README, docs/guide/integrations.md twice, both docstrings
    assert [f for f in found if f[1] != default] == []


def test_every_label_named_as_a_default_for_a_format_is_that_default() -> None:
    claims = []
    for where, text in _texts().items():
        for match in _FOR.finditer(text):
            if "default" in text[max(0, match.start() - 120) : match.start()]:
                claims.append((where, match.group(1), _media_types(match.group(2))))
    assert len(claims) >= 6, claims  # the README, docs/guide/integrations.md, both docstrings
    in_readme = {label for where, label, _ in claims if where == "README.md"}
    defaults = {label for labels in DEFAULT_LABELS_BY_MEDIA_TYPE.values() for label in labels}
    assert in_readme == defaults, in_readme
    wrong = [
        (where, label, media)
        for where, label, media_types in claims
        for media in media_types
        if label not in DEFAULT_LABELS_BY_MEDIA_TYPE[media]
    ]
    assert wrong == []


def test_the_chunker_table_marks_exactly_the_defaults() -> None:
    marked: dict[str, list[str]] = {}
    for match in _ROW.finditer(_texts()[LABELS_PAGE]):
        marked.setdefault(match.group(1), []).extend(_media_types(match.group(2)))
    expected: dict[str, list[str]] = {}
    for media, labels in DEFAULT_LABELS_BY_MEDIA_TYPE.items():
        for label in labels:
            expected.setdefault(label, []).append(media)
    assert {label: sorted(media) for label, media in marked.items()} == {
        label: sorted(media) for label, media in expected.items()
    }
