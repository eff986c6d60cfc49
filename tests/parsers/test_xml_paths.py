"""XPaths must write exactly lxml's getpath (DOCX spans cite these paths, so chunk ids
depend on them) while numbering each parent's children once, not once per element."""

from __future__ import annotations

import io
import random
from pathlib import Path
from typing import Any

import docx
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from kebab_chunk.parsers._xml_paths import XPaths

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "docx"

# Same local names under two prefixes (one URI bound twice), no namespace, the default
# namespace, and non-elements, so every rule of libxml2's step numbering is exercised.
_NAMESPACES = 'xmlns:w="urn:w" xmlns:v="urn:w" xmlns:m="urn:m"'
_NAMES = ["w:p", "v:p", "m:p", "w:r", "p", "r"]


@st.composite
def _trees(draw: Any) -> str:
    def element(depth: int) -> str:
        name = draw(st.sampled_from(_NAMES))
        default_ns = ' xmlns="urn:d"' if draw(st.booleans()) and ":" not in name else ""
        children = []
        if depth < 3:
            for _ in range(draw(st.integers(0, 5))):
                kind = draw(st.sampled_from(["element", "element", "comment", "pi", "text"]))
                if kind == "element":
                    children.append(element(depth + 1))
                elif kind == "comment":
                    children.append("<!--c-->")
                elif kind == "pi":
                    children.append("<?pi x?>")
                else:
                    children.append("t")
        return f"<{name}{default_ns}>{''.join(children)}</{name}>"

    return f"<w:document {_NAMESPACES}>{element(0)}{element(0)}</w:document>"


def _assert_same_paths(tree: Any, seed: int) -> int:
    elements = [e for e in tree.getroot().iter() if isinstance(e.tag, str)]
    random.Random(seed).shuffle(elements)  # parents asked for before or after children
    paths = XPaths(tree)
    for element in elements:
        assert paths.path(element) == tree.getpath(element)
    return len(elements)


@given(_trees(), st.integers(0, 1000))
def test_paths_equal_lxml_getpath_on_any_tree(xml: str, seed: int) -> None:
    tree = etree.ElementTree(etree.fromstring(xml))
    _assert_same_paths(tree, seed)


def test_paths_equal_lxml_getpath_on_a_real_docx() -> None:
    document = docx.Document(str(FIXTURES / "report.docx"))
    assert _assert_same_paths(document.element.getroottree(), 0) > 100


class _CountingTree:
    def __init__(self, tree: Any) -> None:
        self.tree = tree
        self.calls = 0

    def getpath(self, element: Any) -> str:
        self.calls += 1
        result: str = self.tree.getpath(element)
        return result


def test_sibling_paragraphs_do_not_each_ask_libxml2() -> None:
    # libxml2 scans every sibling per getpath: 4,000 list items used to cost 4,000 scans
    # of 4,000 siblings. Only the root's path comes from lxml now.
    document = docx.Document()
    for i in range(4000):
        document.add_paragraph(f"item {i}", style="List Bullet")
    buffer = io.BytesIO()
    document.save(buffer)
    tree = docx.Document(io.BytesIO(buffer.getvalue())).element.getroottree()
    counting = _CountingTree(tree)
    paths = XPaths(counting)
    body = tree.getroot()[0]
    got = [paths.path(p) for p in body]
    assert got[1234] == tree.getpath(body[1234]) == "/w:document/w:body/w:p[1235]"
    assert counting.calls == 1
