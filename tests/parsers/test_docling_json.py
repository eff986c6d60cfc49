"""Tests of the docling JSON parser ``docling-json-v1`` on fixtures/docling/."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from kebab_chunk.errors import LimitExceededError, ParseError
from kebab_chunk.model import SPAN_ADAPTER, CanonicalDocument
from kebab_chunk.model.spans import ElementSpan
from kebab_chunk.parsers._docling_json import MEDIA_TYPE
from kebab_chunk.parsers.base import ParseLimits
from kebab_chunk.parsers.registry import (
    DEFAULT_PARSER_VERSIONS,
    detect_media_type,
    get_parser_by_version,
    parse_document,
)
from tests.golden import assert_golden

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "docling"
DEFAULT_LIMITS = ParseLimits()


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_bytes())
    return data


def parse(name: str, limits: ParseLimits = DEFAULT_LIMITS) -> CanonicalDocument:
    return get_parser_by_version("docling-json-v1").parse(
        (FIXTURES / name).read_bytes(), f"docling/{name}", limits
    )


def parse_data(data: dict[str, Any], limits: ParseLimits = DEFAULT_LIMITS) -> CanonicalDocument:
    return get_parser_by_version("docling-json-v1").parse(
        json.dumps(data).encode(), "x.docling.json", limits
    )


def item_text(data: dict[str, Any], ref: str) -> str:
    _, collection, index = ref.split("/")
    text: str = data[collection][int(index)]["text"]
    return text


@pytest.fixture(scope="module")
def report() -> CanonicalDocument:
    return parse("report.docling.json")


@pytest.mark.parametrize("name", ["report.docling.json", "dangling-refs.docling.json"])
def test_golden(name: str) -> None:
    doc = parse(name)
    assert doc.parser_version == "docling-json-v1" and doc.media_type == MEDIA_TYPE
    assert_golden("docling-json-v1", name, doc.model_dump(mode="json"))


def test_committed_fixtures_match_their_generator(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_docling", FIXTURES / "make_fixtures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(["--out", str(tmp_path)])
    for path in sorted(tmp_path.iterdir()):
        assert path.read_bytes() == (FIXTURES / path.name).read_bytes(), path.name


def test_structure(report: CanonicalDocument) -> None:
    assert report.title == "Annual Infrastructure Review"
    assert [(b.kind, b.text.splitlines()[0]) for b in report.blocks] == [
        ("heading", "Annual Infrastructure Review"),
        ("heading", "1 Introduction"),
        (
            "paragraph",
            "This review covers the compute, storage and network estate operated in "
            "2024. It continues on the second page, where the scope is listed.",
        ),
        ("heading", "1.1 Scope"),
        ("list", "- Compute clusters"),
        ("table", "Region | Cost (kEUR) | Change"),
        ("paragraph", "Table 1: Cost per region"),
        ("image_ref", "Line chart of monthly traffic, rising from 2 to 5 PB."),
        ("code", "kubectl get nodes -o wide"),
        ("heading", "2 Findings"),
        ("paragraph", "Costs fell in every region but one."),
        ("list", "1. Renew the storage contract"),
        ("paragraph", "1 Figures are rounded to the nearest thousand."),
        ("paragraph", "E = m c^2"),
    ]
    levels = [b.level for b in report.blocks if b.kind == "heading"]  # type: ignore[union-attr]
    assert levels == [1, 2, 3, 2]  # title 1, section_header level n -> n + 1
    scope_list = report.blocks[4]
    assert scope_list.text == (
        "- Compute clusters\n- Storage tiers\n  - Object storage\n  - Block storage\n- Networking"
    )
    assert scope_list.heading_path == (
        "Annual Infrastructure Review",
        "1 Introduction",
        "1.1 Scope",
    )
    table, picture, code = report.blocks[5], report.blocks[7], report.blocks[8]
    assert table.header == ("Region", "Cost (kEUR)", "Change")  # type: ignore[union-attr]
    assert table.rows == (("eu-west", "412", "-8%"), ("us-east", "388", "+2%"))  # type: ignore[union-attr]
    assert picture.caption == "Figure 1: Traffic growth" and picture.src == ""  # type: ignore[union-attr]
    assert code.language == "Bash"  # type: ignore[union-attr]
    assert report.blocks[11].ordered is True  # type: ignore[union-attr]
    assert report.metadata["origin_filename"] == "annual-review.pdf"


def test_furniture_and_unsupported_items_are_left_out(report: CanonicalDocument) -> None:
    texts = "\n".join(b.text for b in report.blocks)
    assert "ACME Corp" not in texts and "Page 3" not in texts
    assert texts.count("Figure 1: Traffic growth") == 0  # it is the picture's caption field
    assert report.warnings == (
        "1 picture(s) without description or caption skipped",
        "1 key-value or form item(s) skipped (not supported)",
    )


def test_spans_carry_pages_and_slice_the_item_text(report: CanonicalDocument) -> None:
    data = load("report.docling.json")
    for block in report.blocks:
        for span in block.spans:
            assert isinstance(span, ElementSpan) and span.page in (1, 2, 3)
            if span.ref.startswith("#/texts/"):
                assert 0 <= span.char_start <= span.char_end <= len(item_text(data, span.ref))
    intro = report.blocks[2]
    first, second = intro.spans
    assert (first.page, second.page) == (1, 2)  # type: ignore[union-attr]
    assert intro.text[first.char_start : first.char_end].endswith("operated in 2024. ")
    assert intro.text[second.char_start : second.char_end].startswith("It continues")
    assert second.char_end == len(intro.text)
    assert SPAN_ADAPTER.validate_python(first.model_dump()) == first


def test_dangling_references_and_cycles_degrade_with_warnings() -> None:
    doc = parse("dangling-refs.docling.json")
    assert [b.text for b in doc.blocks] == [
        "Survives the broken references.",
        "Reached once despite the loop.",
    ]
    assert doc.warnings == (
        "1 dangling reference(s) skipped",
        "1 repeated reference(s) to an already visited item skipped",
    )


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
        parse(name)
    message = str(caught.value)
    assert words in message and f"docling/{name}" in message and message.endswith(".")


def test_pathological_json_is_a_parse_error() -> None:
    deep = b'{"schema_name": "DoclingDocument", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(ParseError, match="nests JSON too deeply"):
        get_parser_by_version("docling-json-v1").parse(deep, "deep.docling.json")
    with pytest.raises(ParseError, match="not UTF-8"):
        get_parser_by_version("docling-json-v1").parse(b"\xff\xfe{}", "bad.docling.json")
    data = load("report.docling.json")
    data["tables"][0]["data"]["num_rows"] = 10**9
    with pytest.raises(LimitExceededError, match="malformed"):
        parse_data(data)


def test_limits_are_enforced() -> None:
    with pytest.raises(LimitExceededError, match="more than 3 blocks"):
        parse("report.docling.json", ParseLimits(max_blocks=3))
    with pytest.raises(LimitExceededError, match="max_nesting=1"):
        parse("report.docling.json", ParseLimits(max_nesting=1))


def test_newer_meta_description_is_the_alt_text() -> None:
    data = load("report.docling.json")
    picture = data["pictures"][0]
    picture["annotations"] = []
    picture["meta"] = {"description": {"text": "Described via meta", "created_by": "vlm"}}
    doc = parse_data(data)
    images = [b for b in doc.blocks if b.kind == "image_ref"]
    assert [i.alt for i in images] == ["Described via meta"]  # type: ignore[union-attr]


def test_list_item_written_as_formatted_runs() -> None:
    data = load("report.docling.json")
    texts, groups = data["texts"], data["groups"]
    networking = texts[9]
    networking["text"] = networking["orig"] = ""
    networking["children"] = [{"$ref": f"#/groups/{len(groups)}"}]
    runs = [
        {
            "self_ref": f"#/texts/{len(texts) + k}",
            "parent": {"$ref": f"#/groups/{len(groups)}"},
            "children": [],
            "content_layer": "body",
            "label": "text",
            "prov": [],
            "orig": word,
            "text": word,
        }
        for k, word in enumerate(["Net", "working"])
    ]
    texts.extend(runs)
    groups.append(
        {
            "self_ref": f"#/groups/{len(groups)}",
            "parent": {"$ref": "#/texts/9"},
            "children": [{"$ref": r["self_ref"]} for r in runs],
            "content_layer": "body",
            "label": "inline",
        }
    )
    scope_list = parse_data(data).blocks[4]
    assert scope_list.items[-1] == "Net working"  # type: ignore[union-attr]
    assert scope_list.text.endswith("\n- Net working")


def test_registry_detects_the_double_extension() -> None:
    assert detect_media_type("converted/report.docling.json") == MEDIA_TYPE
    assert detect_media_type("converted/REPORT.DOCLING.JSON") == MEDIA_TYPE
    assert detect_media_type("data/other.json") == "application/json"
    doc = parse_document((FIXTURES / "report.docling.json").read_bytes(), "c/report.docling.json")
    assert doc.parser_version == DEFAULT_PARSER_VERSIONS[MEDIA_TYPE] == "docling-json-v2"
