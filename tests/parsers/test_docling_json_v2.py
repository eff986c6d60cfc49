"""Tests of the docling JSON parser ``docling-json-v2`` (v1 stays as it was).

v2 fixes two defects of ``docling-json-v1`` on converted PDFs: text docling found inside a
picture (axis labels, tick values, legend entries) became paragraphs, and a table's caption
became a paragraph of its own after the table. Each defect test asserts that v1 still has
the defect (its output is frozen) and v2 does not. ``paper()`` builds a document shaped like
docling's export of a research paper: a chart whose children are the texts drawn in it
(a nested group of legend entries included), a picture footnote, captioned tables.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kebab_chunk.chunkers import get_chunker
from kebab_chunk.errors import ParseError
from kebab_chunk.model import CanonicalDocument, ChunkPolicy
from kebab_chunk.model.blocks import ImageRefBlock, TableBlock
from kebab_chunk.model.spans import ElementSpan
from kebab_chunk.parsers._docling_json import MEDIA_TYPE
from kebab_chunk.parsers.registry import get_parser_by_version, parse_document, parser_versions
from tests.golden import assert_golden

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "docling"
AXIS_LABELS = ("68-85", "0.4", "0.8", "mAP", "Epochs", "Human", "MRCNN", "FRCNN", "YOLO")
LEFT_OUT = "item(s) inside pictures left out (text drawn in a figure, such as axis labels)"


# --- a docling export of a paper, built item by item ---------------------------------------


def _prov(page: int, text: str) -> list[dict[str, Any]]:
    bbox = {"l": 72.0, "t": 700.0, "r": 523.0, "b": 686.0, "coord_origin": "BOTTOMLEFT"}
    return [{"page_no": page, "bbox": bbox, "charspan": [0, len(text)]}]


class _Doc:
    """Appends items to a DoclingDocument dict the way docling's ``add_*`` methods do."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {
            "schema_name": "DoclingDocument",
            "version": "1.8.0",
            "name": "paper",
            "origin": {"mimetype": "application/pdf", "filename": "paper.pdf"},
            "furniture": {"self_ref": "#/furniture", "children": [], "label": "unspecified"},
            "body": {"self_ref": "#/body", "children": [], "label": "unspecified"},
            "groups": [],
            "texts": [],
            "pictures": [],
            "tables": [],
            "key_value_items": [],
            "form_items": [],
        }

    def _node(self, collection: str, parent: str, **fields: Any) -> str:
        items: list[dict[str, Any]] = self.data[collection]
        ref = f"#/{collection}/{len(items)}"
        items.append(
            {
                "self_ref": ref,
                "parent": {"$ref": parent},
                "children": [],
                "content_layer": "body",
                **fields,
            }
        )
        self._owner(parent)["children"].append({"$ref": ref})
        return ref

    def _owner(self, ref: str) -> dict[str, Any]:
        if ref == "#/body":
            body: dict[str, Any] = self.data["body"]
            return body
        _, collection, index = ref.split("/")
        item: dict[str, Any] = self.data[collection][int(index)]
        return item

    def text(self, label: str, text: str, parent: str = "#/body", page: int = 1) -> str:
        prov = _prov(page, text)
        return self._node("texts", parent, label=label, prov=prov, orig=text, text=text)

    def group(self, label: str, parent: str) -> str:
        return self._node("groups", parent, name="group", label=label)

    def picture(self, description: str = "") -> str:
        annotations = [{"kind": "description", "text": description}] if description else []
        return self._node(
            "pictures",
            "#/body",
            label="picture",
            prov=_prov(1, ""),
            captions=[],
            references=[],
            footnotes=[],
            annotations=annotations,
        )

    def table(self, cells: list[list[str]], header: bool = True) -> str:
        table_cells = [
            {
                "text": value,
                "start_row_offset_idx": r,
                "end_row_offset_idx": r + 1,
                "start_col_offset_idx": c,
                "end_col_offset_idx": c + 1,
                "column_header": header and r == 0,
            }
            for r, row in enumerate(cells)
            for c, value in enumerate(row)
        ]
        data = {
            "table_cells": table_cells,
            "num_rows": len(cells),
            "num_cols": max((len(row) for row in cells), default=0),
        }
        return self._node(
            "tables",
            "#/body",
            label="table",
            prov=_prov(2, ""),
            captions=[],
            references=[],
            footnotes=[],
            data=data,
        )

    def caption(self, owner: str, text: str, field: str = "captions") -> str:
        """A caption (or footnote) of a table or picture: its child and in its ref list."""
        label = "caption" if field == "captions" else "footnote"
        ref = self.text(label, text, parent=owner)
        self._owner(owner)[field].append({"$ref": ref})
        return ref

    def bytes(self) -> bytes:
        return json.dumps(self.data, indent=2).encode()


def paper() -> _Doc:
    """A two-page paper: a chart full of drawn text, then captioned tables."""
    doc = _Doc()
    doc.text("title", "DocLayNet: A Large Human-Annotated Dataset")
    doc.text("section_header", "5 Experiments")
    doc.text("text", "We trained several detectors on the dataset.")
    chart = doc.picture()
    doc.caption(chart, "Figure 5: Prediction performance (mAP@0.5-0.95) per class.")
    for label in ("68-85", "0.4", "0.8", "mAP", "Epochs"):
        doc.text("text", label, parent=chart)
    legend = doc.group("list", chart)
    for entry in ("Human", "MRCNN", "FRCNN", "YOLO"):
        doc.text("list_item", entry, parent=legend)
    doc.text("text", "   ", parent=chart)  # blank: nothing was left out
    doc.caption(chart, "Values from the validation split.", field="footnotes")
    doc.text("text", "Table 1 compares the models.")
    table = doc.table([["Model", "mAP"], ["MRCNN", "72.4"], ["YOLO", "76.8"]])
    doc.caption(table, "Table 1: Prediction performance\n of four detectors.")
    doc.caption(table, "(mAP@0.5-0.95)")
    doc.caption(table, "All values in percent.", field="footnotes")
    plain = doc.table([["a", "b"], ["c", "d"]], header=False)
    doc.caption(plain, "Table 2: Raw counts.")
    empty = doc.table([])
    doc.caption(empty, "Table 3: Withdrawn.")
    doc.text("text", "The end.", page=2)
    return doc


def parse_v1(raw: bytes) -> CanonicalDocument:
    return get_parser_by_version("docling-json-v1").parse(raw, "paper.docling.json")


def parse_v2(raw: bytes) -> CanonicalDocument:
    return get_parser_by_version("docling-json-v2").parse(raw, "paper.docling.json")


@pytest.fixture(scope="module")
def raw() -> bytes:
    return paper().bytes()


# --- goldens and registration --------------------------------------------------------------


@pytest.mark.parametrize("name", ["report.docling.json", "dangling-refs.docling.json"])
def test_golden_fixtures(name: str) -> None:
    """The committed fixtures, pinned like every parser version's output."""
    doc = get_parser_by_version("docling-json-v2").parse(
        (FIXTURES / name).read_bytes(), f"docling/{name}"
    )
    assert doc.parser_version == "docling-json-v2" and doc.media_type == MEDIA_TYPE
    assert_golden("docling-json-v2", name, doc.model_dump(mode="json"))


def test_golden_paper(raw: bytes) -> None:
    """The built paper pins both fixes at once (pictures' text, tables' captions)."""
    assert_golden("docling-json-v2", "paper.docling.json", parse_v2(raw).model_dump(mode="json"))


def test_registered_beside_v1_and_chosen_by_version() -> None:
    """Both versions stay registered; a run picks v2 with ``parser_version``/``--parsers``."""
    assert parser_versions()["docling-json-v1"] == (MEDIA_TYPE,)
    assert parser_versions()["docling-json-v2"] == (MEDIA_TYPE,)
    raw = (FIXTURES / "report.docling.json").read_bytes()
    doc = parse_document(raw, "c/report.docling.json", parser_version="docling-json-v2")
    assert doc.parser_version == "docling-json-v2"


def test_same_bytes_give_identical_output(raw: bytes) -> None:
    assert parse_v2(raw).model_dump_json() == parse_v2(paper().bytes()).model_dump_json()


# --- defect 1: text inside pictures ----------------------------------------------------------


def test_v1_makes_paragraphs_of_text_inside_pictures_v2_leaves_it_out(raw: bytes) -> None:
    """Axis labels and legend entries are not document text; v2 counts them in a warning."""
    old, new = parse_v1(raw), parse_v2(raw)
    old_texts = {b.text for b in old.blocks if b.kind == "paragraph"}
    assert {"68-85", "0.4", "mAP", "Epochs"} <= old_texts  # the defect, frozen in v1
    assert any(b.kind == "list" and "MRCNN" in b.text for b in old.blocks)
    assert not {b.text for b in new.blocks} & set(AXIS_LABELS)
    assert not any(b.kind == "list" for b in new.blocks)  # the chart's legend
    # 5 labels + 4 legend entries; the blank text, the group and the caption are not counted
    assert f"9 {LEFT_OUT}" in new.warnings
    assert not any(LEFT_OUT in w for w in old.warnings)


def test_picture_keeps_its_caption_and_its_footnote(raw: bytes) -> None:
    """What is not drawn in the picture stays: caption on the image, footnote as paragraph."""
    doc = parse_v2(raw)
    (image,) = [b for b in doc.blocks if isinstance(b, ImageRefBlock)]
    assert image.caption == "Figure 5: Prediction performance (mAP@0.5-0.95) per class."
    after = doc.blocks[doc.blocks.index(image) + 1]
    assert (after.kind, after.text) == ("paragraph", "Values from the validation split.")


def test_count_adds_up_over_pictures_and_ignores_furniture() -> None:
    """Two charts sum into one warning; an item in the furniture layer is not counted."""
    doc = _Doc()
    for n in (3, 2):
        chart = doc.picture(description=f"A chart with {n} labels.")
        for k in range(n):
            doc.text("text", f"label {k}", parent=chart)
    doc.data["texts"][0]["content_layer"] = "furniture"
    new = parse_v2(doc.bytes())
    assert new.warnings == (f"4 {LEFT_OUT}",)
    assert [b.kind for b in new.blocks] == ["image_ref", "image_ref"]
    assert [b.kind for b in parse_v1(doc.bytes()).blocks].count("paragraph") == 4


def test_a_picture_child_referenced_again_elsewhere_is_not_emitted_twice() -> None:
    """The body tree is a tree: the later reference is reported as a repeat, as in v1."""
    doc = _Doc()
    chart = doc.picture(description="Bar chart.")
    label = doc.text("text", "42%", parent=chart)
    doc.data["body"]["children"].append({"$ref": label})
    new = parse_v2(doc.bytes())
    assert [b.text for b in new.blocks] == ["Bar chart."]
    assert new.warnings == (
        f"1 {LEFT_OUT}",
        "1 repeated reference(s) to an already visited item skipped",
    )


# --- defect 2: table captions ----------------------------------------------------------------


def test_v1_makes_a_paragraph_of_a_table_caption_v2_puts_it_in_the_table(raw: bytes) -> None:
    """The caption is the first line of the table block's text, never a separate block."""
    caption = "Table 1: Prediction performance of four detectors. (mAP@0.5-0.95)"
    old, new = parse_v1(raw), parse_v2(raw)
    old_table = next(b for b in old.blocks if b.kind == "table")
    after = old.blocks[old.blocks.index(old_table) + 1]
    assert after.kind == "paragraph" and after.text.startswith("Table 1:")  # v1's defect
    assert "Table 1" not in old_table.text
    table = next(b for b in new.blocks if isinstance(b, TableBlock))
    assert table.text == f"{caption}\nModel | mAP\nMRCNN | 72.4\nYOLO | 76.8"
    assert table.header == ("Model", "mAP")  # the grid fields hold the grid only
    assert table.rows == (("MRCNN", "72.4"), ("YOLO", "76.8"))
    assert not [b for b in new.blocks if b.kind == "paragraph" and "Table 1:" in b.text]
    footnote = new.blocks[new.blocks.index(table) + 1]
    assert (footnote.kind, footnote.text) == ("paragraph", "All values in percent.")


def test_table_spans_cite_the_captions_then_the_table(raw: bytes) -> None:
    """Caption spans index each caption's own text; the table span its grid rendering."""
    data = json.loads(raw)
    table = next(b for b in parse_v2(raw).blocks if b.kind == "table")
    refs = [(s.ref, s.char_start, s.char_end) for s in table.spans if isinstance(s, ElementSpan)]
    first, second = (data["texts"][int(r.split("/")[-1])]["text"] for r, _, _ in refs[:2])
    grid = table.text.split("\n", 1)[1]
    assert refs[0][2] == len(first) and refs[1][2] == len(second)
    assert refs[2] == ("#/tables/0", 0, len(grid))
    assert len(refs) == len(table.spans) == 3


def test_tables_without_header_or_without_cells(raw: bytes) -> None:
    """A headerless table gets its caption line too; an empty table keeps the paragraph."""
    blocks = parse_v2(raw).blocks
    plain = [b for b in blocks if isinstance(b, TableBlock)][1]
    assert plain.text == "Table 2: Raw counts.\na | b\nc | d"
    assert plain.header == () and plain.rows == (("a", "b"), ("c", "d"))
    withdrawn = [b for b in blocks if "Table 3" in b.text]
    assert [(b.kind, b.text) for b in withdrawn] == [("paragraph", "Table 3: Withdrawn.")]


def test_hybrid_v1_repeats_the_caption_on_every_piece_of_a_split_table() -> None:
    """Why the caption is the table's first line: a split table keeps it on each piece."""
    doc = _Doc()
    doc.text("section_header", "Results")
    rows = [["Region", "Cost"], *([f"region-{k:02d}", f"{100 + k}"] for k in range(40))]
    table = doc.table(rows)
    doc.caption(table, "Table 9: Cost per region in kEUR")
    chunks = get_chunker("hybrid-v1").chunk(
        parse_v2(doc.bytes()), ChunkPolicy(target_tokens=64, overlap_tokens=0)
    )
    assert len(chunks) > 2
    assert chunks[0].text.startswith("Table 9: Cost per region in kEUR\nRegion | Cost")
    for chunk in chunks[1:]:
        assert chunk.captions == ("Table 9: Cost per region in kEUR\nRegion | Cost",)
    old_chunks = get_chunker("hybrid-v1").chunk(
        parse_v1(doc.bytes()), ChunkPolicy(target_tokens=64, overlap_tokens=0)
    )
    assert not any("Table 9" in "".join(c.captions) for c in old_chunks)


# --- what v2 shares with v1 ------------------------------------------------------------------


def test_documents_without_either_defect_parse_as_in_v1() -> None:
    """Same blocks and warnings as v1 when no picture has drawn text and no table a caption."""
    raw = (FIXTURES / "dangling-refs.docling.json").read_bytes()
    old, new = parse_v1(raw), parse_v2(raw)
    assert new.blocks == old.blocks and new.warnings == old.warnings


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("not-json.docling.json", "is not valid JSON"),
        ("wrong-schema.docling.json", "not a DoclingDocument (schema_name is 'NotDocling')"),
        ("invalid-fields.docling.json", "is not a valid DoclingDocument (body/self_ref"),
    ],
)
def test_broken_files_give_one_sentence_errors(name: str, words: str) -> None:
    with pytest.raises(ParseError) as caught:
        get_parser_by_version("docling-json-v2").parse(
            (FIXTURES / name).read_bytes(), f"docling/{name}"
        )
    message = str(caught.value)
    assert words in message and f"docling/{name}" in message and message.endswith(".")
