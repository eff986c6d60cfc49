"""Tests of the DOCX parser ``docx-v1`` on fixtures/docx/ (made by its generator)."""

from __future__ import annotations

import importlib.util
import io
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from docx.oxml.ns import qn
from lxml import etree

from kebab_chunk.errors import EncryptedDocumentError, LimitExceededError, ParseError
from kebab_chunk.model import SPAN_ADAPTER, CanonicalDocument
from kebab_chunk.model.spans import ElementSpan
from kebab_chunk.parsers.base import ParseLimits
from kebab_chunk.parsers.docx_v1 import MAX_UNCOMPRESSED_BYTES, DocxParser
from kebab_chunk.parsers.registry import (
    detect_media_type,
    get_parser_by_version,
    parse_document,
    version_row,
)
from tests.golden import assert_golden

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "docx"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_docx", FIXTURES / "make_fixtures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DEFAULT_LIMITS = ParseLimits()


def parse(name: str, limits: ParseLimits = DEFAULT_LIMITS) -> CanonicalDocument:
    return get_parser_by_version("docx-v1").parse(
        (FIXTURES / name).read_bytes(), f"docx/{name}", limits
    )


@pytest.fixture(scope="module")
def report() -> CanonicalDocument:
    return parse("report.docx")


def test_golden(report: CanonicalDocument) -> None:
    assert report.parser_version == "docx-v1" and report.media_type == MEDIA_TYPE
    assert_golden("docx-v1", "report.docx", report.model_dump(mode="json"))


def test_committed_fixtures_match_their_generator(tmp_path: Path) -> None:
    generator().main(["--out", str(tmp_path)])
    committed = parse("report.docx")
    regenerated = get_parser_by_version("docx-v1").parse(
        (tmp_path / "report.docx").read_bytes(), "docx/report.docx"
    )
    assert regenerated.blocks == committed.blocks
    for name in ("not-a-zip.docx", "legacy-doc.docx", "encrypted.docx"):
        assert (tmp_path / name).read_bytes() == (FIXTURES / name).read_bytes()


def test_headings_paragraphs_and_title(report: CanonicalDocument) -> None:
    headings = [(b.level, b.text) for b in report.blocks if b.kind == "heading"]  # type: ignore[union-attr]
    assert headings == [
        (1, "Quarterly Operations Report"),  # Title style
        (1, "Overview"),
        (2, "Incidents"),
        (2, "Capacity"),
        (2, "Figures"),
        (1, "Odds and ends"),
        (2, "Outline level heading"),  # Normal style with w:outlineLvl=1
    ]
    assert report.title == "Quarterly Operations Report"
    texts = [b.text for b in report.blocks]
    assert "Tabs\tand bold runs, then a line break\non the next line." in texts
    overview = next(b for b in report.blocks if b.text.startswith("This report summarises"))
    assert overview.heading_path == ("Overview",)


def test_lists_group_consecutive_numbered_paragraphs(report: CanonicalDocument) -> None:
    bullets, numbers = (b for b in report.blocks if b.kind == "list")
    assert bullets.ordered is False and numbers.ordered is True  # type: ignore[union-attr]
    assert bullets.items == (  # type: ignore[union-attr]
        "Disk pressure on the ingest nodes",
        "Ingest node 3 ran out of inodes",
        "Certificate expiry on the status page",
    )
    assert bullets.text == (
        "- Disk pressure on the ingest nodes\n"
        "  - Ingest node 3 ran out of inodes\n"
        "- Certificate expiry on the status page"
    )
    assert numbers.text == "1. Detect the problem\n2. Mitigate the impact\n3. Write the postmortem"
    assert len(numbers.spans) == 3 and bullets.heading_path == ("Overview", "Incidents")


def test_table_with_header_and_nested_table(report: CanonicalDocument) -> None:
    (table,) = (b for b in report.blocks if b.kind == "table")
    assert table.header == ("Region", "Nodes", "Utilisation")  # type: ignore[union-attr]
    assert table.rows == (("eu-west", "12", "71%"), ("us-east", "9", "64%\npeak\n88%"))  # type: ignore[union-attr]
    assert table.text.splitlines()[-1] == "us-east | 9 | 64% peak 88%"


def test_images_alt_text_captions_and_skips(report: CanonicalDocument) -> None:
    images = [b for b in report.blocks if b.kind == "image_ref"]
    assert [(i.alt, i.caption, i.text) for i in images] == [  # type: ignore[union-attr]
        (
            "Bar chart of weekly uptime per region",
            "Figure 1: Weekly uptime",
            "Bar chart of weekly uptime per region",
        ),
        (
            "",
            "Figure 2: Only a caption describes this one",
            "Figure 2: Only a caption describes this one",
        ),
    ]
    assert all(i.src == "media/image1.png" for i in images)  # type: ignore[union-attr]
    assert report.warnings == ("1 image(s) without alt text or caption skipped",)
    assert not any(b.text.startswith("Figure 1") and b.kind == "paragraph" for b in report.blocks)


def test_content_controls_tracked_changes_and_text_boxes(report: CanonicalDocument) -> None:
    texts = [b.text for b in report.blocks]
    assert "Text inside a content control." in texts
    assert "Kept inserted text." in texts and not any("deleted" in t for t in texts)
    anchor = texts.index("Anchor paragraph.")
    assert texts[anchor + 1] == "Text box content."
    assert texts.count("Text box content.") == 1  # the mc:Fallback copy is not read twice


def test_element_spans_point_at_the_element(report: CanonicalDocument) -> None:
    with zipfile.ZipFile(FIXTURES / "report.docx") as package:  # plain lxml, not python-docx
        root = etree.fromstring(package.read("word/document.xml"))
    prefixes = {prefix: uri for prefix, uri in root.nsmap.items() if prefix}
    for block in report.blocks:
        for span in block.spans:
            assert isinstance(span, ElementSpan) and span.page is None
            (element,) = root.xpath(span.ref, namespaces=prefixes)
            if block.kind in ("heading", "paragraph"):
                text = "".join(t.text or "" for t in own_text_nodes(element))
                assert block.text.replace("\t", "").replace("\n", "") == text.strip()
                assert (span.char_start, span.char_end) == (0, len(block.text))
            if block.kind == "image_ref":
                assert element.tag.endswith("}docPr")
            if block.kind == "table":
                assert element.tag.endswith("}tbl")
    assert (
        SPAN_ADAPTER.validate_json(SPAN_ADAPTER.dump_json(report.blocks[0].spans[0]))
        == (report.blocks[0].spans[0])
    )


@pytest.mark.parametrize(
    ("name", "error", "words"),
    [
        ("truncated.docx", ParseError, "truncated or corrupt zip"),
        ("not-a-zip.docx", ParseError, "is not a DOCX file"),
        ("legacy-doc.docx", ParseError, "legacy Word 97-2003"),
        ("encrypted.docx", EncryptedDocumentError, "password-protected"),
        ("no-document-part.docx", ParseError, "without word/document.xml"),
    ],
)
def test_broken_files_give_one_sentence_errors(
    name: str, error: type[ParseError], words: str
) -> None:
    with pytest.raises(error) as caught:
        parse(name)
    message = str(caught.value)
    assert words in message and f"docx/{name}" in message
    assert message.endswith(".") and message.count(". ") == 0


def own_text_nodes(paragraph: Any) -> list[Any]:
    """The w:t elements of a paragraph that are not inside one of its own text boxes."""
    boxed = (qn("w:txbxContent"), f"{{{MC}}}Fallback")
    nodes = []
    for t in paragraph.iter(qn("w:t")):
        between = []
        for ancestor in t.iterancestors():
            if ancestor is paragraph:
                break
            between.append(ancestor.tag)
        if not any(tag in boxed for tag in between):
            nodes.append(t)
    return nodes


def _bomb(size: int) -> bytes:
    """A zip whose word/document.xml inflates to ``size`` zero bytes."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("[Content_Types].xml", "<Types/>")
        with package.open("word/document.xml", "w") as member:
            chunk = bytes(1 << 20)
            for _ in range(size >> 20):
                member.write(chunk)
    return out.getvalue()


def test_zip_bomb_is_refused_before_inflating() -> None:
    bomb = _bomb(MAX_UNCOMPRESSED_BYTES + (1 << 20))  # 257 MiB of zeros in ~260 KB
    assert len(bomb) < 1_000_000
    with pytest.raises(LimitExceededError, match="would uncompress to"):
        get_parser_by_version("docx-v1").parse(bomb, "bomb.docx")
    with pytest.raises(LimitExceededError, match="limit of 1048576"):
        DocxParser(version_row("docx-v1"), max_uncompressed_bytes=1 << 20).parse(
            _bomb(2 << 20), "small-bomb.docx"
        )


def test_too_many_zip_members() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        for index in range(6):
            package.writestr(f"part{index}.xml", "<x/>")
    with pytest.raises(LimitExceededError, match="6 zip members"):
        DocxParser(version_row("docx-v1"), max_members=5).parse(out.getvalue(), "many.docx")


def test_max_blocks_is_enforced() -> None:
    with pytest.raises(LimitExceededError, match="more than 5 blocks"):
        parse("report.docx", ParseLimits(max_blocks=5))


def test_registry_routes_docx() -> None:
    assert detect_media_type("reports/q3.DOCX") == MEDIA_TYPE
    doc = parse_document((FIXTURES / "report.docx").read_bytes(), "reports/q3.docx")
    assert doc.parser_version == "docx-v1"
