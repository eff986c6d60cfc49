"""Throughput of the PDF path: pdf-text-v1 parsing and pdf-page-v1 chunking.

``run(quick)`` returns figures keyed by their unit, e.g. ``{"pdf-text-v1 parse, fixtures":
{"pages/s": ...}}``, each from the median of 3 (quick) or 5 timed runs on one core.
Inputs: the committed fixtures of fixtures/pdf/ and a larger document generated in memory
with the fixture generator (200 pages, 40 in quick mode). Reference point from the issue:
pypdf ``extract_text()`` ran at about 52 pages/s over 83 real manuals.
"""

from __future__ import annotations

import importlib.util
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks.timing import median_seconds
from kebab_chunk.chunkers import Chunker, get_chunker
from kebab_chunk.model import CanonicalDocument, ChunkPolicy
from kebab_chunk.parsers.registry import get_parser_by_version

PDF_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "pdf"
FIXTURES = (
    "three-page-en.pdf",
    "one-long-page.pdf",
    "with-empty-page.pdf",
    "encrypted-empty-password.pdf",
)


def _generator() -> ModuleType:
    path = PDF_DIR / "make_fixtures.py"
    spec = importlib.util.spec_from_file_location("kebab_pdf_fixtures", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _parse_all(inputs: list[tuple[str, bytes]]) -> list[CanonicalDocument]:
    parser = get_parser_by_version("pdf-text-v1")
    return [parser.parse(raw, name) for name, raw in inputs]


def _chunk_all(chunker: Chunker, docs: list[CanonicalDocument], policy: ChunkPolicy) -> None:
    for doc in docs:
        chunker.chunk(doc, policy)


def _pdfium_extract_all(inputs: list[tuple[str, bytes]]) -> int:
    """Reference only: page texts with pypdfium2 (a candidate for a faster pdf-* parser)."""
    import pypdfium2  # type: ignore[import-untyped]

    pages = 0
    for _, raw in inputs:
        try:
            pdf = pypdfium2.PdfDocument(raw)
        except pypdfium2.PdfiumError:
            continue  # encrypted or broken fixtures: pypdf's side reports those
        for page in pdf:
            page.get_textpage().get_text_range()
            pages += 1
        pdf.close()
    return pages


def run(quick: bool) -> dict[str, Any]:
    """Measure and return the figures (see the module docstring)."""
    repeats = 3 if quick else 5
    generated_pages = 40 if quick else 200
    fixtures = [(f"pdf/{name}", (PDF_DIR / name).read_bytes()) for name in FIXTURES]
    generated = [("generated.pdf", _generator().long_pdf(generated_pages))]
    chunker = get_chunker("pdf-page-v1")
    policies = (ChunkPolicy(), ChunkPolicy(target_tokens=128, overlap_tokens=16))

    figures: dict[str, Any] = {"corpus": {}}
    for label, inputs in (("fixtures", fixtures), ("generated", generated)):
        docs = _parse_all(inputs)
        pages = sum(len(doc.blocks) for doc in docs)
        text_mb = sum(len(b.text.encode("utf-8")) for doc in docs for b in doc.blocks) / 1e6
        figures["corpus"][label] = {"pages": pages, "MB of page text": round(text_mb, 3)}
        parse_s = median_seconds(partial(_parse_all, inputs), repeats)
        figures[f"pdf-text-v1 parse, {label}"] = {"pages/s": pages / parse_s}
        try:
            pdfium_pages = _pdfium_extract_all(inputs)
            pdfium_s = median_seconds(partial(_pdfium_extract_all, inputs), repeats)
            figures[f"reference: pypdfium2 text, {label}"] = {
                "pages/s": pdfium_pages / pdfium_s,
                "ratio to pdf-text-v1": (pdfium_pages / pdfium_s) / (pages / parse_s),
            }
        except ImportError:
            figures[f"reference: pypdfium2 text, {label}"] = "not run: pypdfium2 not installed"
        chunk_share = []
        for policy in policies:
            chunk_count = sum(len(chunker.chunk(doc, policy)) for doc in docs)
            chunk_s = median_seconds(partial(_chunk_all, chunker, docs, policy), repeats)
            name = f"pdf-page-v1 chunk t{policy.target_tokens}/o{policy.overlap_tokens}, {label}"
            figures[name] = {
                "pages/s": pages / chunk_s,
                "chunks/s": chunk_count / chunk_s,
                "MB/s": text_mb / chunk_s,
                # Target: chunking adds <= 5% to extraction time.
                "chunk time as % of parse time": 100 * chunk_s / parse_s,
            }
            chunk_share.append(chunk_s / parse_s)
        figures[f"pdf-page-v1 overhead target (<= 5%), {label}"] = (
            "met" if max(chunk_share) <= 0.05 else f"not met: {100 * max(chunk_share):.1f}%"
        )
    return figures


if __name__ == "__main__":
    for key, figure in run(quick=True).items():
        print(f"{key}: {figure}")
