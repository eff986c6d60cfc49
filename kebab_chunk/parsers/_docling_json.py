"""The engine of the docling JSON parser versions (``docling-json-v1``, ``docling-json-v2``).

Every version it serves is a row of the registry with one
:class:`~kebab_chunk.parsers.rules.DoclingRules` value (every rule in which it differs from
the others); the rest is this module's, the same for every version. A new version is a new
row, never a copied module or an overridden step. What each version changed, and why:
docs/internals/parser-changes.md.

What every version does: reads a ``DoclingDocument`` that docling exported with
``save_as_json`` / ``export_to_dict`` (``*.docling.json``, media type
``application/vnd.docling+json``), so documents already converted by docling can be chunked
without converting them again and without depending on docling: the JSON is validated with
a few lenient pydantic models of the fields used here (unknown fields are ignored, schema
1.x).

The body tree (``body.children``, resolved through the ``$ref`` JSON pointers) is walked
in order; items outside the body content layer (page headers and footers, background) are
skipped, as docling's own serialisers do. Mapping: ``title`` → heading level 1 (and the
document title); ``section_header`` of level *n* → heading level *n* + 1 (docling's own
Markdown export does the same); a ``list`` / ``ordered_list`` group → one list block
(nested groups indented); ``inline`` groups → one paragraph; ``code`` → code block;
tables → table block (header = first row when its cells are marked ``column_header``),
with their captions as paragraphs after it (or, under ``captions_in_tables``, as its first
line); pictures → image references with their description annotation as alt text and
their captions as caption (and, unless ``skip_picture_text``, the texts inside them as
paragraphs); every other text label → paragraph. Pictures with neither description nor
caption, and key-value / form items, are skipped and counted in a warning.

Spans are :class:`ElementSpan`: ``ref`` is the item's ``self_ref`` and ``page`` the
``page_no`` of each provenance entry (one span per entry). Offsets index the item's
``text`` and come from the provenance ``charspan`` when it fits that text, else cover it
whole; docling's charspans are relative to the item, not to a page text, so a
:class:`PageSpan` would claim more than the JSON says.
"""

from __future__ import annotations

import json
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kebab_chunk.errors import LimitExceededError, ParseError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.spans import ElementSpan
from kebab_chunk.parsers._assemble import Assembler, Draft, check_block_count
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits, ParserVersion, VersionedParser
from kebab_chunk.parsers.rules import DoclingRules

__all__ = ["MEDIA_TYPE", "PICTURE_ITEMS_LEFT_OUT", "DoclingJsonEngine"]

MEDIA_TYPE = "application/vnd.docling+json"

#: The warning that counts the items of pictures left out (``{count}`` is filled in).
PICTURE_ITEMS_LEFT_OUT = (
    "item(s) inside pictures left out (text drawn in a figure, such as axis labels)"
)

_LIST_GROUPS = frozenset({"list", "ordered_list"})
_COLLECTIONS = ("groups", "texts", "tables", "pictures", "key_value_items", "form_items")


# --- the subset of the DoclingDocument schema read here ----------------------------------


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class _Ref(_Lenient):
    cref: str = Field(alias="$ref")


class _Prov(_Lenient):
    page_no: int = Field(ge=1)
    charspan: tuple[int, int] | None = None


class _Node(_Lenient):
    self_ref: str
    children: list[_Ref] = []
    content_layer: str = "body"
    label: str = ""


class _TextItem(_Node):
    text: str = ""
    prov: list[_Prov] = []
    level: int = 1
    enumerated: bool = False
    code_language: str | None = None


class _Cell(_Lenient):
    text: str = ""
    start_row_offset_idx: int = Field(ge=0)
    start_col_offset_idx: int = Field(ge=0)
    column_header: bool = False


class _TableData(_Lenient):
    table_cells: list[_Cell] = []
    num_rows: int = Field(default=0, ge=0)
    num_cols: int = Field(default=0, ge=0)


class _Floating(_Node):
    prov: list[_Prov] = []
    captions: list[_Ref] = []


class _TableItem(_Floating):
    data: _TableData = _TableData()


class _PictureItem(_Floating):
    annotations: list[dict[str, Any]] = []
    meta: dict[str, Any] | None = None
    image: dict[str, Any] | None = None


class _Document(_Lenient):
    schema_name: str
    version: str = ""
    origin: dict[str, Any] | None = None
    body: _Node
    groups: list[_Node] = []
    texts: list[_TextItem] = []
    tables: list[_TableItem] = []
    pictures: list[_PictureItem] = []
    key_value_items: list[_Node] = []
    form_items: list[_Node] = []


Item = _Node | _TextItem | _TableItem | _PictureItem


# --- the parser ---------------------------------------------------------------------------


class DoclingJsonEngine(VersionedParser):
    """A docling JSON parser built from one version row (its
    :class:`~kebab_chunk.parsers.rules.DoclingRules`; see the module docstring); nothing
    else is meant to be overridden."""

    media_types = (MEDIA_TYPE,)

    def __init__(self, row: ParserVersion) -> None:
        super().__init__(row)
        self.rules = row.rules_as(DoclingRules)

    def parse(
        self, raw: bytes, source_uri: str, limits: ParseLimits = DEFAULT_LIMITS
    ) -> CanonicalDocument:
        document = _load(raw, source_uri)
        walker = _Walker(self.rules, document, source_uri, limits)
        walker.run()
        origin = document.origin or {}
        metadata: dict[str, Any] = {"docling_schema_version": document.version}
        for key in ("mimetype", "filename"):
            if isinstance(origin.get(key), str):
                metadata[f"origin_{key}"] = origin[key]
        assembler = Assembler(raw, source_uri, MEDIA_TYPE, self.version, limits)
        for draft in walker.drafts:
            if draft.kind != "list" or draft.items:  # a list group without items: no block
                assembler.add_draft(draft, draft.text, tuple(draft.spans))
        return assembler.finish(walker.warnings, title=walker.title, metadata=metadata)


def _load(raw: bytes, source_uri: str) -> _Document:
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ParseError(
            f"{source_uri} is not UTF-8 text (bad byte at {exc.start}), so not docling JSON; "
            "re-export it with docling or remove it from the corpus."
        ) from exc
    except json.JSONDecodeError as exc:
        raise ParseError(
            f"{source_uri} is not valid JSON ({exc.msg} at line {exc.lineno}, column "
            f"{exc.colno}); re-export it with docling or remove it from the corpus."
        ) from exc
    except RecursionError as exc:
        raise ParseError(
            f"{source_uri} nests JSON too deeply to read; it is not a docling export, "
            "remove it from the corpus."
        ) from exc
    if not isinstance(data, dict) or data.get("schema_name") != "DoclingDocument":
        found = data.get("schema_name") if isinstance(data, dict) else type(data).__name__
        raise ParseError(
            f"{source_uri} is JSON but not a DoclingDocument (schema_name is {found!r}); "
            "only docling's JSON export can be named *.docling.json."
        )
    try:
        return _Document.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = "/".join(str(part) for part in error["loc"])
        raise ParseError(
            f"{source_uri} is not a valid DoclingDocument ({where}: {error['msg']}); "
            "re-export it with docling or remove it from the corpus."
        ) from exc


# --- walking the body tree ----------------------------------------------------------------


@dataclass
class _Draft(Draft):
    """A block before ids and heading paths; spans are already final."""

    items: list[str] = field(default_factory=list)
    _: KW_ONLY
    spans: list[ElementSpan]
    lines: list[str] = field(default_factory=list)  # a list's rendered item lines


@dataclass
class _ListState:
    """The list being collected: its draft, the open group depth and the item counters.

    ``split`` is set when another block (a table, a paragraph inside an item...) was
    emitted while the list is open: the next item then starts a continuation list block,
    so blocks stay in document order.
    """

    draft: _Draft
    depth: int
    counters: list[int]
    ordered_levels: list[bool]
    split: bool = False


_END_LIST = "end-list"
_END_GROUP = "end-group"


class _Walker:
    """Depth-first walk of the body tree with an explicit stack (no recursion, no cycles)."""

    def __init__(
        self, rules: DoclingRules, document: _Document, source_uri: str, limits: ParseLimits
    ) -> None:
        self.rules = rules
        self.document = document
        self.source_uri = source_uri
        self.limits = limits
        self.drafts: list[_Draft] = []
        self.warnings: list[str] = []
        self.title: str | None = None
        self._list: _ListState | None = None
        self._consumed: set[str] = set()  # captions attached to their table or picture
        self._problems: dict[str, int] = {}

    def run(self) -> None:
        if self.document.version and not self.document.version.startswith("1."):
            self.warnings.append(
                f"DoclingDocument schema {self.document.version} is not 1.x; read on a "
                "best-effort basis"
            )
        visited: set[str] = set()
        stack: list[tuple[str, str]] = [("item", ref.cref) for ref in self.document.body.children]
        stack.reverse()
        while stack:
            action, ref = stack.pop()
            if action == _END_LIST:
                self._list = None
                continue
            if action == _END_GROUP:
                if self._list is not None:
                    self._list.depth -= 1
                continue
            if ref in visited:
                self._problem("repeated reference(s) to an already visited item skipped")
                continue
            visited.add(ref)
            item = self._resolve(ref)
            if item is None or item.content_layer != "body":
                continue
            closing = self._visit(item)
            children = self._children(item, visited)
            stack.extend(reversed([*(("item", c) for c in children), *closing]))
        self._join_lists()
        for problem, count in self._problems.items():
            self.warnings.append(f"{count} {problem}")

    def _children(self, item: Item, visited: set[str]) -> list[str]:
        """The references of ``item``'s children to walk, in order: every child, except a
        picture's under ``skip_picture_text`` (only its footnotes are walked)."""
        children = [c.cref for c in item.children]
        if self.rules.skip_picture_text and isinstance(item, _PictureItem):
            return self._picture_children(children, visited)
        return children

    def _picture_children(self, children: list[str], visited: set[str]) -> list[str]:
        """The picture's children to walk (its footnotes); the rest is marked visited and
        its non-empty items (captions aside, they are attached already) are counted."""
        kept: list[str] = []
        left_out = 0
        pending = list(reversed(children))
        top = set(children)
        while pending:
            ref = pending.pop()
            if ref in visited:
                continue
            item = self._resolve(ref)
            if ref in top and isinstance(item, _TextItem) and item.label == "footnote":
                kept.append(ref)
                continue
            visited.add(ref)
            if item is None or item.content_layer != "body" or ref in self._consumed:
                continue
            if not ref.startswith("#/groups/") and (
                not isinstance(item, _TextItem) or item.text.strip()
            ):
                left_out += 1
            pending.extend(reversed([c.cref for c in item.children]))
        if left_out:
            self._problems[PICTURE_ITEMS_LEFT_OUT] = (
                self._problems.get(PICTURE_ITEMS_LEFT_OUT, 0) + left_out
            )
        return kept

    def _join_lists(self) -> None:
        """Each list's text from its lines, once the walk is done (joining after every
        item would make a long list quadratic)."""
        for draft in self.drafts:
            if draft.kind == "list":
                draft.text = "\n".join(draft.lines)

    def _resolve(self, ref: str) -> Item | None:
        parts = ref.split("/")
        if len(parts) == 3 and parts[0] == "#" and parts[1] in _COLLECTIONS:
            collection: list[Any] = getattr(self.document, parts[1])
            if parts[2].isdigit() and int(parts[2]) < len(collection):
                item: Item = collection[int(parts[2])]
                return item
        self._problem("dangling reference(s) skipped")
        return None

    def _problem(self, message: str) -> None:
        self._problems[message] = self._problems.get(message, 0) + 1

    def _visit(self, item: Item) -> list[tuple[str, str]]:
        """Handle one item; returns the markers to process after its children."""
        if isinstance(item, _TableItem):
            self._table(item)
        elif isinstance(item, _PictureItem):
            self._picture(item)
        elif isinstance(item, _TextItem):
            self._text(item)
        elif item.self_ref.startswith(("#/key_value_items/", "#/form_items/")):
            self._problem("key-value or form item(s) skipped (not supported)")
        elif item.label in _LIST_GROUPS:
            return self._open_list(item)
        elif item.label == "inline":
            self._inline(item)
            return []
        return []

    # -- text items

    def _text(self, item: _TextItem) -> None:
        if item.self_ref in self._consumed or not item.text.strip():
            return
        spans = _spans(item.self_ref, item.prov, item.text)
        label = item.label
        if label == "list_item":
            self._list_item(item.text, spans, item.enumerated)
            return
        self._end_orphan_list()
        if label == "title":
            self.title = self.title or item.text
            self._add(_Draft("heading", item.text, spans=spans, level=1))
        elif label == "section_header":
            self._add(
                _Draft("heading", item.text, spans=spans, level=min(max(item.level, 1) + 1, 6))
            )
        elif label == "code":
            language = item.code_language
            language = None if not language or language == "unknown" else language
            self._add(_Draft("code", item.text, spans=spans, language=language))
        else:
            self._add(_Draft("paragraph", item.text, spans=spans))

    def _inline(self, group: _Node) -> None:
        """An inline group: its text children joined with spaces into one paragraph."""
        texts: list[str] = []
        spans: list[ElementSpan] = []
        for ref in group.children:
            child = self._resolve(ref.cref)
            if isinstance(child, _TextItem) and child.text.strip():
                texts.append(child.text)
                spans.extend(_spans(child.self_ref, child.prov, child.text))
                self._consumed.add(child.self_ref)
        if not texts:
            return
        text = " ".join(texts)
        if self._list is not None and self._list.depth > 0:
            self._list_item(text, spans, False)  # a list item written as formatted runs
        else:
            self._end_orphan_list()
            self._add(_Draft("paragraph", text, spans=spans))

    # -- lists

    def _open_list(self, group: _Node) -> list[tuple[str, str]]:
        ordered = group.label == "ordered_list"
        state = self._list
        if state is None or state.depth == 0:  # orphan list items do not nest a group
            self._end_orphan_list()
            draft = _Draft("list", "", spans=[], ordered=ordered)
            self._add(draft)
            self._list = _ListState(draft, 1, [0], [ordered])
            return [(_END_LIST, "")]
        if state.depth >= self.limits.max_nesting:
            raise LimitExceededError(
                f"{self.source_uri} nests lists deeper than max_nesting="
                f"{self.limits.max_nesting}; flatten them or raise ParseLimits.max_nesting."
            )
        state.depth += 1
        del state.counters[state.depth - 1 :]
        del state.ordered_levels[state.depth - 1 :]
        state.counters.append(0)
        state.ordered_levels.append(ordered)
        return [(_END_GROUP, "")]

    def _list_item(self, text: str, spans: list[ElementSpan], enumerated: bool) -> None:
        state = self._list
        if state is None:  # list items outside any list group: an implicit list
            last = self.drafts[-1] if self.drafts else None
            if last is None or last.kind != "list":
                last = _Draft("list", "", spans=[], ordered=enumerated)
                self._add(last)
            state = self._list = _ListState(last, 0, [len(last.items)], [last.ordered])
        if state.split:
            continuation = _Draft("list", "", spans=[], ordered=state.draft.ordered)
            self._add(continuation)
            state.draft, state.split = continuation, False
        level = max(state.depth - 1, 0)
        state.counters[level] += 1
        ordered = state.ordered_levels[level] or enumerated
        if level == 0 and enumerated and not state.draft.items:
            state.draft.ordered = True
        marker = f"{state.counters[level]}." if ordered else "-"
        state.draft.items.append(text)
        state.draft.lines.append(f"{'  ' * level}{marker} {text}")
        state.draft.spans.extend(spans)

    def _end_orphan_list(self) -> None:
        if self._list is not None and self._list.depth == 0:
            self._list = None

    # -- tables and pictures

    def _captions(self, item: _Floating) -> list[tuple[str, list[ElementSpan]]]:
        found: list[tuple[str, list[ElementSpan]]] = []
        for ref in item.captions:
            caption = self._resolve(ref.cref)
            if isinstance(caption, _TextItem) and caption.text.strip():
                self._consumed.add(caption.self_ref)
                found.append((caption.text, _spans(caption.self_ref, caption.prov, caption.text)))
        return found

    def _table(self, table: _TableItem) -> None:
        self._end_orphan_list()
        data = table.data
        rows = max([data.num_rows, *(c.start_row_offset_idx + 1 for c in data.table_cells)])
        cols = max([data.num_cols, *(c.start_col_offset_idx + 1 for c in data.table_cells)])
        if rows * cols > 10 * max(len(data.table_cells), 1) + 10_000:
            raise LimitExceededError(
                f"{self.source_uri} declares a {rows}x{cols} table with only "
                f"{len(data.table_cells)} cells; the table data is malformed."
            )
        grid = [[""] * cols for _ in range(rows)]
        header_row = False
        for cell in data.table_cells:
            grid[cell.start_row_offset_idx][cell.start_col_offset_idx] = " ".join(cell.text.split())
            header_row |= cell.column_header and cell.start_row_offset_idx == 0
        captions = self._captions(table)
        if not any(any(row) for row in grid):  # no table block (to attach captions to)
            for caption, spans in captions:
                self._add(_Draft("paragraph", caption, spans=spans))
            return
        grid_text = "\n".join(" | ".join(row) for row in grid)
        header = tuple(grid[0]) if header_row else ()
        body = tuple(tuple(row) for row in (grid[1:] if header_row else grid))
        table_spans = _spans(table.self_ref, table.prov, grid_text, whole=True)
        if not self.rules.captions_in_tables:
            self._add(_Draft("table", grid_text, spans=table_spans, header=header, rows=body))
            for caption, spans in captions:
                self._add(_Draft("paragraph", caption, spans=spans))
            return
        caption_line = " ".join(" ".join(caption.split()) for caption, _ in captions)
        text = f"{caption_line}\n{grid_text}" if caption_line else grid_text
        caption_spans: list[ElementSpan] = [span for _, spans in captions for span in spans]
        self._add(
            _Draft("table", text, spans=[*caption_spans, *table_spans], header=header, rows=body)
        )

    def _picture(self, picture: _PictureItem) -> None:
        self._end_orphan_list()
        captions = self._captions(picture)
        caption = " ".join(text for text, _ in captions) or None
        alt = " ".join(_description(picture).split())
        text = alt or caption or ""
        if not text:
            self._problem("picture(s) without description or caption skipped")
            return
        uri = str((picture.image or {}).get("uri") or "")
        src = "" if uri.startswith("data:") else uri
        spans = _spans(picture.self_ref, picture.prov, text, whole=True)
        self._add(_Draft("image_ref", text, spans=spans, alt=alt, src=src, caption=caption))

    def _add(self, draft: _Draft) -> None:
        if self._list is not None and draft.kind != "list":
            self._list.split = True
        self.drafts.append(draft)
        check_block_count(len(self.drafts), self.limits, self.source_uri, whole="document")


def _description(picture: _PictureItem) -> str:
    """The picture's description: ``meta.description.text`` or a description annotation."""
    description = (picture.meta or {}).get("description")
    if isinstance(description, dict) and isinstance(description.get("text"), str):
        return str(description["text"])
    for annotation in picture.annotations:
        if annotation.get("kind") == "description" and isinstance(annotation.get("text"), str):
            return str(annotation["text"])
    return ""


def _spans(ref: str, prov: list[_Prov], text: str, whole: bool = False) -> list[ElementSpan]:
    """One span per provenance entry (page + charspan when it fits ``text``)."""
    if not prov:
        return [ElementSpan(ref=ref, char_start=0, char_end=len(text))]
    spans: list[ElementSpan] = []
    for entry in prov:
        start, end = 0, len(text)
        if not whole and entry.charspan is not None:
            first, last = entry.charspan
            if 0 <= first <= last <= len(text):
                start, end = first, last
        spans.append(ElementSpan(ref=ref, page=entry.page_no, char_start=start, char_end=end))
    return spans
