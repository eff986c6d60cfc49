"""DOCX → CanonicalDocument (parser version ``docx-v1``) with python-docx.

The body is read in document order, including content wrapped in content controls
(``w:sdt``) and custom XML: a paragraph with an outline level (its own or its style's) or a
"Heading N" / "Title" style is a heading; consecutive numbered paragraphs (``w:numPr`` on
the paragraph or its style) form one list, ordered unless the numbering format is a
bullet; tables become table blocks (first row = header when there are two or more rows;
nested tables flatten into their cell); drawings become image references whose alt text
is the ``wp:docPr`` description (or title) and whose caption is the "Caption"-styled
paragraph right after them. Text boxes follow the paragraph that anchors them, once
(``mc:Fallback`` copies are skipped). Page headers and footers, footnotes and comments are
not part of the body and are not read. Images with neither alt text nor caption are
skipped and counted in a warning.

A DOCX has no text to slice, so spans are :class:`ElementSpan`: ``ref`` is the lxml XPath of
the element in ``word/document.xml`` and the offsets index that element's text as rendered
here (a list has one span per item paragraph).

Bad bytes raise :class:`ParseError` with one sentence: not a zip, a truncated zip, a legacy
``.doc``, a zip without ``word/document.xml``; an encrypted package raises
:class:`EncryptedDocumentError`. Before python-docx reads anything, the zip directory is
checked: more than :data:`MAX_MEMBERS` members or more than :data:`MAX_UNCOMPRESSED_BYTES`
of declared uncompressed data is a :class:`LimitExceededError` (a zip bomb). The declared
sizes are a safe bound because :mod:`zipfile` never inflates a member beyond its declared
size.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import docx
from docx.oxml.ns import qn

from kebab_chunk.errors import EncryptedDocumentError, LimitExceededError, ParseError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.spans import ElementSpan
from kebab_chunk.parsers._assemble import Assembler, Draft, check_block_count
from kebab_chunk.parsers._xml_paths import XPaths
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits, ParserVersion, VersionedParser

__all__ = ["MAX_MEMBERS", "MAX_UNCOMPRESSED_BYTES", "MEDIA_TYPE", "DocxParser"]

MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
#: Ceiling on the total declared uncompressed size of the zip members (256 MiB).
MAX_UNCOMPRESSED_BYTES = 256 * 1024 * 1024
#: Ceiling on the number of zip members.
MAX_MEMBERS = 10_000

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTION_STREAM = "EncryptionInfo".encode("utf-16-le")
_HEADING_NAME = re.compile(r"heading\s*([1-9])$", re.IGNORECASE)
_LIST_STYLE_LEVEL = re.compile(r"list (?:bullet|number|continue)? ?([2-9])$", re.IGNORECASE)

_P, _TBL, _TR, _TC = qn("w:p"), qn("w:tbl"), qn("w:tr"), qn("w:tc")
_SDT, _SDT_CONTENT, _CUSTOM_XML = qn("w:sdt"), qn("w:sdtContent"), qn("w:customXml")
_T, _TAB, _BR, _CR = qn("w:t"), qn("w:tab"), qn("w:br"), qn("w:cr")
_NO_BREAK_HYPHEN = qn("w:noBreakHyphen")
_TXBX_CONTENT = qn("w:txbxContent")
_PPR, _RPR, _PSTYLE, _VAL = qn("w:pPr"), qn("w:rPr"), qn("w:pStyle"), qn("w:val")
_NUMPR, _NUMID, _ILVL, _OUTLINE = qn("w:numPr"), qn("w:numId"), qn("w:ilvl"), qn("w:outlineLvl")
_DEL, _INSTR = qn("w:del"), qn("w:instrText")
_MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_WP_DOCPR = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}docPr"
_A_BLIP = "{http://schemas.openxmlformats.org/drawingml/2006/main}blip"
_R_EMBED = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}embed"
_DRAWING = qn("w:drawing")
_SKIP = frozenset({_PPR, _RPR, _DEL, _INSTR, _MC_FALLBACK})


class DocxParser(VersionedParser):
    """Parser ``docx-v1``: python-docx, body order, element spans, zip-bomb guard (built from
    its version row; the two ceilings can be lowered for tests)."""

    media_types = (MEDIA_TYPE,)

    def __init__(
        self,
        row: ParserVersion,
        max_uncompressed_bytes: int = MAX_UNCOMPRESSED_BYTES,
        max_members: int = MAX_MEMBERS,
    ) -> None:
        super().__init__(row)
        self._max_bytes = max_uncompressed_bytes
        self._max_members = max_members

    def parse(
        self, raw: bytes, source_uri: str, limits: ParseLimits = DEFAULT_LIMITS
    ) -> CanonicalDocument:
        self._check_container(raw, source_uri)
        try:
            document = docx.Document(io.BytesIO(raw))
        except Exception as exc:  # python-docx and lxml raise many types on broken input
            raise ParseError(
                f"{source_uri} is not a readable Word document ({type(exc).__name__}: {exc}); "
                "re-save it as .docx from Word or LibreOffice, or remove it from the corpus."
            ) from exc
        walker = _Walker(document, source_uri, limits)
        walker.run()
        title = walker.title or (document.core_properties.title or "").strip() or None
        assembler = Assembler(raw, source_uri, MEDIA_TYPE, self.version, limits)
        _assemble(walker.drafts, assembler)
        return assembler.finish(walker.warnings, title=title)

    def _check_container(self, raw: bytes, source_uri: str) -> None:
        if raw.startswith(_OLE_MAGIC):
            if _ENCRYPTION_STREAM in raw:
                raise EncryptedDocumentError(
                    f"{source_uri} is a password-protected Word document; save an unprotected "
                    "copy to index it, or remove it from the corpus."
                )
            raise ParseError(
                f"{source_uri} is a legacy Word 97-2003 (.doc) file, not DOCX; save it as "
                ".docx, or remove it from the corpus."
            )
        if not raw.startswith(b"PK"):
            raise ParseError(
                f"{source_uri} is not a DOCX file (a DOCX is a zip package and this does not "
                "start like one); give it the extension of its real type or remove it."
            )
        try:
            with zipfile.ZipFile(io.BytesIO(raw)) as package:
                members = package.infolist()
        except (
            zipfile.BadZipFile,
            zipfile.LargeZipFile,
            ValueError,
            OSError,
            NotImplementedError,  # a zip feature zipfile lacks (found by fuzzing)
            EOFError,
        ) as exc:
            raise ParseError(
                f"{source_uri} is a truncated or corrupt zip package ({exc}); re-save or "
                "re-export the document."
            ) from exc
        if len(members) > self._max_members:
            raise LimitExceededError(
                f"{source_uri} holds {len(members)} zip members, more than the DOCX limit of "
                f"{self._max_members}; it is malformed or hostile, remove it from the corpus."
            )
        total = sum(member.file_size for member in members)
        if total > self._max_bytes:
            raise LimitExceededError(
                f"{source_uri} would uncompress to {total} bytes, more than the DOCX limit "
                f"of {self._max_bytes} (a zip bomb or an oversized document); remove it or "
                "split it."
            )
        if not any(member.filename == "word/document.xml" for member in members):
            raise ParseError(
                f"{source_uri} is a zip package without word/document.xml, so not a Word "
                "document; give it the extension of its real type or remove it."
            )


# --- walking the body ---------------------------------------------------------------------


@dataclass
class _Draft(Draft):
    """A block before ids and heading paths; ``refs`` are (XPath, text length) pairs."""

    _: KW_ONLY
    refs: list[tuple[str, int]]
    lines: list[str] = field(default_factory=list)  # a list's rendered item lines
    counters: list[int] = field(default_factory=list)  # a list's item number per level
    item_texts: list[str] = field(default_factory=list)  # a list's items, as read


@dataclass
class _Style:
    name: str
    based_on: str | None
    outline: int | None
    num: tuple[str, int] | None


@dataclass
class _Run:
    """What one paragraph holds: its text, its images, the text boxes it anchors."""

    text: str
    images: list[tuple[Any, str, str]]  # (docPr element, alt, relationship id)
    text_boxes: list[Any]


class _Walker:
    """Reads the body in order into drafts; iterative, so nesting costs no recursion."""

    def __init__(self, document: Any, source_uri: str, limits: ParseLimits) -> None:
        self.document = document
        self.source_uri = source_uri
        self.limits = limits
        self.paths = XPaths(document.element.getroottree())
        self.styles = _styles(document)
        self.default_style = _default_paragraph_style(document)
        self.formats = _numbering_formats(document)
        self.drafts: list[_Draft] = []
        self.warnings: list[str] = []
        self.title: str | None = None
        self._last_images: list[_Draft] = []

    def run(self) -> None:
        pending: list[Any] = list(self.document.element.body)
        pending.reverse()
        while pending:
            element = pending.pop()
            tag = element.tag
            if tag == _P:
                boxes = self._paragraph(element)
                for box in reversed(boxes):  # text box paragraphs follow their anchor
                    pending.extend(reversed(list(box)))
            elif tag == _TBL:
                self._table(element)
            elif tag in (_SDT, _SDT_CONTENT, _CUSTOM_XML):
                pending.extend(reversed(list(element)))
        for draft in self.drafts:  # a list's text and items built once: per item is O(n²)
            if draft.kind == "list":
                draft.text = "\n".join(draft.lines)
                draft.items = tuple(draft.item_texts)
        skipped = sum(1 for d in self.drafts if d.kind == "image_ref" and not _image_text(d))
        if skipped:
            self.warnings.append(f"{skipped} image(s) without alt text or caption skipped")

    # -- paragraphs

    def _paragraph(self, p: Any) -> list[Any]:
        run = _read_paragraph(p)
        text = run.text.strip()
        style_id = _style_id(p) or self.default_style
        name = self.styles[style_id].name.lower() if style_id in self.styles else ""
        if not text and not run.images:
            return run.text_boxes  # empty paragraph: an image's caption may still follow
        ref = self.paths.path(p)
        last_images, self._last_images = self._last_images, []
        if name == "caption" and last_images and not run.images:
            for image in last_images:
                image.caption = text
            return run.text_boxes
        level = self._heading_level(p, style_id, name)
        numbering = self._numbering(p, style_id, name)
        if text and level:
            if name == "title" and self.title is None:
                self.title = text
            self._add(_Draft("heading", text, refs=[(ref, len(text))], level=level))
        elif text and numbering is not None:
            self._list_item(text, ref, numbering)
        elif text:
            self._add(_Draft("paragraph", text, refs=[(ref, len(text))]))
        self._last_images = [self._image(*image) for image in run.images]
        return run.text_boxes

    def _heading_level(self, p: Any, style_id: str | None, name: str) -> int:
        outline = _outline(p.find(_PPR))
        if outline is None:
            outlines = (style.outline for style in self._style_chain(style_id))
            outline = next((found for found in outlines if found is not None), None)
        if outline is not None and 0 <= outline <= 8:
            return min(outline + 1, 6)
        match = _HEADING_NAME.match(name)
        if match:
            return min(int(match.group(1)), 6)
        return 1 if name == "title" else 0

    def _numbering(self, p: Any, style_id: str | None, name: str) -> tuple[str, int] | None:
        """``(numId, level)`` of a list paragraph; "List Bullet 2"-style names give the
        level when the numbering itself does not."""
        number = _num_pr(p.find(_PPR))
        if number is None:
            numbers = (style.num for style in self._style_chain(style_id))
            number = next((found for found in numbers if found is not None), None)
        if number is None or number[0] == "0":  # numId 0 switches numbering off
            return None
        match = _LIST_STYLE_LEVEL.match(name)
        if number[1] < 0 and match:
            return number[0], int(match.group(1)) - 1
        return number[0], max(number[1], 0)

    def _style_chain(self, style_id: str | None) -> Iterator[_Style]:
        """The style ``style_id`` and the styles it is based on, nearest first (a cycle in
        the ``basedOn`` chain ends it)."""
        seen: set[str] = set()
        while style_id in self.styles and style_id not in seen:
            seen.add(style_id)
            style = self.styles[style_id]
            yield style
            style_id = style.based_on

    def _list_item(self, text: str, ref: str, numbering: tuple[str, int]) -> None:
        num_id, level = numbering
        level = min(level, 8)
        ordered = self.formats.get((num_id, level), "bullet") != "bullet"
        last = self.drafts[-1] if self.drafts else None
        if last is None or last.kind != "list":
            root_ordered = self.formats.get((num_id, 0), "bullet") != "bullet"
            last = _Draft("list", "", refs=[], ordered=root_ordered)
            self._add(last)
        counters = last.counters
        del counters[level + 1 :]
        counters.extend([0] * (level + 1 - len(counters)))
        counters[level] += 1
        marker = f"{counters[level]}." if ordered else "-"
        last.lines.append(f"{'  ' * level}{marker} {text}")
        last.item_texts.append(text)
        last.refs.append((ref, len(text)))

    def _image(self, doc_pr: Any, alt: str, rel_id: str) -> _Draft:
        src = ""
        if rel_id:
            try:
                src = str(self.document.part.target_ref(rel_id))
            except KeyError:
                src = ""
        ref = self.paths.path(doc_pr)
        draft = _Draft("image_ref", alt, refs=[(ref, len(alt))], alt=alt, src=src)
        self._add(draft)
        return draft

    # -- tables

    def _table(self, tbl: Any) -> None:
        self._last_images = []
        grid: list[tuple[str, ...]] = []
        images: list[tuple[Any, str, str]] = []
        for tr in tbl.iterchildren(_TR):
            cells: list[str] = []
            for tc in tr.iterchildren(_TC):
                texts: list[str] = []
                for p in tc.iter(_P):
                    if any(a.tag in (_MC_FALLBACK, _TXBX_CONTENT) for a in _ancestors(p, tc)):
                        continue
                    run = _read_paragraph(p)
                    images.extend(run.images)
                    texts.append(run.text.strip())
                cells.append("\n".join(t for t in texts if t))
            grid.append(tuple(cells))
        grid = [row for row in grid if row]
        if any(any(cell for cell in row) for row in grid):
            text = "\n".join(" | ".join(c.replace("\n", " ") for c in row) for row in grid)
            header, body = (grid[0], grid[1:]) if len(grid) > 1 else ((), grid)
            ref = self.paths.path(tbl)
            self._add(
                _Draft("table", text, refs=[(ref, len(text))], header=header, rows=tuple(body))
            )
        for image in images:
            self._image(*image)

    def _add(self, draft: _Draft) -> None:
        self.drafts.append(draft)
        check_block_count(len(self.drafts), self.limits, self.source_uri, whole="document")


def _read_paragraph(p: Any) -> _Run:
    """Text of one paragraph, skipping properties, deletions, field codes, fallbacks."""
    pieces: list[str] = []
    images: list[tuple[Any, str, str]] = []
    boxes: list[Any] = []
    pending: list[Any] = list(p)
    pending.reverse()
    while pending:
        element = pending.pop()
        tag = element.tag
        if not isinstance(tag, str) or tag in _SKIP:
            continue
        if tag == _T:
            pieces.append(element.text or "")
        elif tag == _TAB:
            pieces.append("\t")
        elif tag in (_BR, _CR):
            pieces.append("\n")
        elif tag == _NO_BREAK_HYPHEN:
            pieces.append("-")
        elif tag == _TXBX_CONTENT:
            boxes.append(element)
        else:
            if tag == _DRAWING:
                images.extend(_drawing_images(element))
            pending.extend(reversed(list(element)))
    return _Run("".join(pieces), images, boxes)


def _drawing_images(drawing: Any) -> list[tuple[Any, str, str]]:
    """The picture of a ``w:drawing`` (one with an ``a:blip``; shapes and text boxes are not)."""
    blip = next(drawing.iter(_A_BLIP), None)
    doc_pr = next(drawing.iter(_WP_DOCPR), None)
    if blip is None or doc_pr is None:
        return []
    alt = doc_pr.get("descr") or doc_pr.get("title") or ""
    return [(doc_pr, " ".join(alt.split()), blip.get(_R_EMBED, ""))]


def _ancestors(element: Any, stop: Any) -> list[Any]:
    found: list[Any] = []
    for ancestor in element.iterancestors():
        if ancestor is stop:
            break
        found.append(ancestor)
    return found


def _style_id(p: Any) -> str | None:
    ppr = p.find(_PPR)
    style = ppr.find(_PSTYLE) if ppr is not None else None
    value = style.get(_VAL) if style is not None else None
    return str(value) if value else None


def _outline(ppr: Any) -> int | None:
    element = ppr.find(_OUTLINE) if ppr is not None else None
    try:
        return int(element.get(_VAL)) if element is not None else None
    except (TypeError, ValueError):
        return None


def _num_pr(ppr: Any) -> tuple[str, int] | None:
    num_pr = ppr.find(_NUMPR) if ppr is not None else None
    if num_pr is None:
        return None
    num_id = num_pr.find(_NUMID)
    ilvl = num_pr.find(_ILVL)
    if num_id is None:
        return None
    try:
        level = int(ilvl.get(_VAL)) if ilvl is not None else -1  # -1: not stated
    except (TypeError, ValueError):
        level = -1
    return str(num_id.get(_VAL) or "0"), level


def _styles(document: Any) -> dict[str, _Style]:
    styles: dict[str, _Style] = {}
    for style in document.styles.element.iterchildren(qn("w:style")):
        style_id = style.get(qn("w:styleId"))
        if not style_id:
            continue
        name = style.find(qn("w:name"))
        based_on = style.find(qn("w:basedOn"))
        ppr = style.find(_PPR)
        styles[str(style_id)] = _Style(
            name=str(name.get(_VAL) or "") if name is not None else "",
            based_on=str(based_on.get(_VAL)) if based_on is not None else None,
            outline=_outline(ppr),
            num=_num_pr(ppr),
        )
    return styles


def _default_paragraph_style(document: Any) -> str | None:
    for style in document.styles.element.iterchildren(qn("w:style")):
        if style.get(qn("w:type")) == "paragraph" and style.get(qn("w:default")) in ("1", "true"):
            value = style.get(qn("w:styleId"))
            return str(value) if value else None
    return None


def _numbering_formats(document: Any) -> dict[tuple[str, int], str]:
    """``(numId, ilvl) -> numFmt`` from word/numbering.xml (``bullet``, ``decimal``, ...)."""
    try:
        numbering = document.part.numbering_part.element
    except (KeyError, NotImplementedError, ValueError):
        return {}
    abstract: dict[str, dict[int, str]] = {}
    for definition in numbering.iterchildren(qn("w:abstractNum")):
        levels: dict[int, str] = {}
        for lvl in definition.iterchildren(qn("w:lvl")):
            fmt = lvl.find(qn("w:numFmt"))
            try:
                levels[int(lvl.get(qn("w:ilvl")))] = str(fmt.get(_VAL)) if fmt is not None else ""
            except (TypeError, ValueError):
                continue
        abstract[str(definition.get(qn("w:abstractNumId")))] = levels
    formats: dict[tuple[str, int], str] = {}
    for num in numbering.iterchildren(qn("w:num")):
        ref = num.find(qn("w:abstractNumId"))
        if ref is None:
            continue
        for level, fmt in abstract.get(str(ref.get(_VAL)), {}).items():
            formats[(str(num.get(qn("w:numId"))), level)] = fmt
    return formats


# --- drafts → blocks ----------------------------------------------------------------------


def _image_text(draft: _Draft) -> str:
    """An image's text: its alt text, else its caption (none: the image is skipped)."""
    return draft.alt or draft.caption or ""


def _assemble(drafts: list[_Draft], assembler: Assembler) -> None:
    """Every draft as a block (images without alt text or caption are skipped)."""
    for d in drafts:
        if d.kind == "image_ref" and not _image_text(d):
            continue
        text = _image_text(d) if d.kind == "image_ref" else d.text
        spans = tuple(
            ElementSpan(ref=ref, char_start=0, char_end=length if d.text else len(text))
            for ref, length in d.refs
        )
        assembler.add_draft(d, text, spans)
