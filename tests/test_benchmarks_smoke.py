"""The peer benchmark's corpus loaders and report writer work, on a few KB.

Nothing here times anything or needs a peer library: the race itself only runs under
``./run_local.sh bench``. These tests pin what the harness reports — which documents a
corpus holds, how ratios are derived, and that a contender that cannot run is reported
as "not run" rather than dropped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks import bench_peers, corpora, report

MARKDOWN_README = "# Tool\n\nSome *text* with a [link](https://example.org).\n\n```sh\nrun\n```\n"


def _dist(site: Path, name: str, body: str, content_type: str | None) -> None:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    headers = ["Metadata-Version: 2.1", f"Name: {name}", "Version: 1.0"]
    if content_type:
        headers.append(f"Description-Content-Type: {content_type}")
    (info / "METADATA").write_text("\n".join(headers) + "\n\n" + body, encoding="utf-8")


def test_looks_like_markdown_follows_declared_type_then_markers() -> None:
    assert corpora.looks_like_markdown("plain", "text/markdown; charset=UTF-8")
    assert not corpora.looks_like_markdown(MARKDOWN_README, "text/x-rst")
    assert corpora.looks_like_markdown(MARKDOWN_README, None)
    assert not corpora.looks_like_markdown("Title\n=====\n\n.. note:: reST\n", None)
    assert not corpora.looks_like_markdown("just words, no markup", None)


def test_distribution_readmes_keeps_markdown_once(tmp_path: Path) -> None:
    _dist(tmp_path, "zeta", MARKDOWN_README, "text/markdown")
    _dist(tmp_path, "alpha", MARKDOWN_README, "text/markdown")  # same README: kept once
    _dist(tmp_path, "rsty", "Title\n=====\n\nText.\n", "text/x-rst")
    _dist(tmp_path, "Plain_Md", "## Usage\n\nSee [docs](https://x.y).\n", None)
    corpus = corpora.distribution_readmes([str(tmp_path)])
    assert [d.name for d in corpus.documents] == ["dists/alpha.md", "dists/plain-md.md"]
    assert corpus.documents[0].raw == MARKDOWN_README.encode()
    assert corpus.n_bytes == sum(len(d.raw) for d in corpus.documents)
    assert corpus.summary()["documents"] == 2


def test_fixture_markdown_skips_binary_and_duplicates(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.md").write_bytes(b"# A\n\ntext\n")
    (tmp_path / "sub" / "copy.md").write_bytes(b"# A\n\ntext\n")
    (tmp_path / "blob.md").write_bytes(b"\x00\x01binary")
    (tmp_path / "latin.md").write_bytes("caf\xe9".encode("latin-1"))
    corpus = corpora.fixture_markdown(tmp_path)
    assert [d.name for d in corpus.documents] == ["a.md"]


def test_fixture_markdown_of_the_repo_is_real_text() -> None:
    corpus = corpora.fixture_markdown()
    assert corpus.n_documents >= 1
    assert all(b"\x00" not in d.raw for d in corpus.documents)


def test_fixture_pdfs_dedupes_and_can_add_a_generated_pdf(tmp_path: Path) -> None:
    (tmp_path / "one.pdf").write_bytes(b"%PDF-1.4 fake")
    (tmp_path / "two.pdf").write_bytes(b"%PDF-1.4 fake")
    assert [d.name for d in corpora.fixture_pdfs(tmp_path).documents] == ["one.pdf"]
    with_generated = corpora.fixture_pdfs(tmp_path, generated_pages=2)
    assert with_generated.documents[-1].name == "generated-2p.pdf"
    assert with_generated.documents[-1].raw.startswith(b"%PDF-")


def test_typical_document_is_ten_chapters_of_ten_sections_and_deterministic() -> None:
    first, again = corpora.typical_document(), corpora.typical_document()
    assert first == again
    text = first.documents[0].text
    lines = text.splitlines()
    assert sum(line.startswith("## ") for line in lines) == 10
    assert sum(line.startswith("### ") for line in lines) == 100
    assert 15_000 < first.n_bytes < 80_000


def test_subset_and_combine() -> None:
    docs = tuple(corpora.Document(f"d{i}.md", b"x" * 10) for i in range(5))
    corpus = corpora.Corpus("c", "text/markdown", docs, "test")
    assert corpora.subset(corpus, 25).n_documents == 2
    assert corpora.subset(corpus, 1).n_documents == 1  # never empty
    assert corpora.subset(corpus, 1_000) is corpus
    both = corpora.combine("both", corpus, corpus)
    assert both.n_documents == 10
    pdf = corpora.Corpus("p", "application/pdf", docs, "test")
    with pytest.raises(ValueError, match="media types"):
        corpora.combine("mixed", corpus, pdf)


def test_a_contender_that_cannot_run_is_reported_not_dropped() -> None:
    def missing() -> Any:
        raise ImportError("No module named 'somepeer'")

    contender = bench_peers.Contender("somepeer", False, "somepeer", "1024 chars", missing, "text")
    figures = bench_peers.measure(contender, ["text"], repeats=3)
    assert figures["not run"] == "ImportError: No module named 'somepeer'"
    assert "seconds" not in figures


def _figures() -> dict[str, Any]:
    corpus = corpora.Corpus(
        "tiny", "text/markdown", (corpora.Document("a.md", b"x" * 2_000_000),), "test"
    )

    def timed(ours: bool, seconds: float) -> dict[str, Any]:
        return {
            "ours": ours,
            "version": "1",
            "settings": "1024 chars",
            "runs": 3,
            "seconds": seconds,
            "seconds min": seconds,
            "seconds max": seconds,
            "chunks": 10,
            "mean chunk chars": 900.0,
        }

    race = {
        "ours: md-heading-v1": timed(True, 0.5),
        bench_peers.LANGCHAIN: timed(False, 1.0),
        "fast peer": timed(False, 0.25),
        "absent peer": {
            "ours": False,
            "version": "not installed",
            "settings": "1024 chars",
            "not run": "ImportError: x",
        },
    }
    bench_peers.add_throughput(race, corpus)
    return {
        "corpora": {"race": corpus.summary()},
        "parser": "md-mistune-v1",
        "repeats": 3,
        "race": race,
        "typical": {"ours: hybrid-v1 all-MiniLM-L6-v2, chunk only": {"ms": 4.0, "chunks": 99}},
        "docling": {"race": {}, "hybrid-v1 speed-up vs docling-core": 25.0},
        "fidelity": {"md-heading-v1 on tiny": {"chunks": 10, "share over target, cl100k": 0.1}},
    }


def test_throughput_and_ratios_come_from_one_corpus() -> None:
    race = _figures()["race"]
    assert race["ours: md-heading-v1"]["MB/s"] == pytest.approx(4.0)
    assert race["ours: md-heading-v1"]["docs/s"] == pytest.approx(2.0)
    assert race["ours: md-heading-v1"]["vs LangChain"] == pytest.approx(2.0)
    assert race["ours: md-heading-v1"]["vs fastest peer"] == pytest.approx(0.5)
    assert race["fast peer"]["vs fastest peer"] == pytest.approx(1.0)
    assert "MB/s" not in race["absent peer"]


def test_report_writes_table_chart_and_readme_block(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{report.BEGIN}\nold table\n{report.END}\noutro\n", encoding="utf-8")
    written = report.write_reports(
        _figures(), quick=False, out_dir=tmp_path / "results", readme=readme, date="2026-01-02"
    )
    page = written["markdown"].read_text(encoding="utf-8")
    assert "| **ours: md-heading-v1** | 1 | 1024 chars | 4.00 |" in page
    assert "| absent peer | not installed | 1024 chars | not run: ImportError: x |" in page
    assert "| parse + md-heading-v1 ≥ 1.0× LangChain | 2.00× | met |" in page
    assert "| stretch: parse + md-heading-v1 ≥ 1.0× chonkie | not measured | unknown |" in page
    assert "(all-MiniLM-L6-v2) chunking < 10 ms | 4.00 ms | met |" in page
    assert "(bytes-3) chunking < 10 ms | not measured | unknown |" in page
    assert "docling-core HybridChunker (same documents) | 25.00× | met |" in page
    assert "Measured 2026-01-02" in page
    assert "10.0%" in page
    assert written["chart"].read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    updated = readme.read_text(encoding="utf-8")
    assert "old table" not in updated
    assert updated.startswith("intro\n") and updated.endswith(f"{report.END}\noutro\n")
    assert "](results/peers.png)" in updated


def test_quick_report_leaves_the_readme_alone(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"{report.BEGIN}\nfull results\n{report.END}\n", encoding="utf-8")
    written = report.write_reports(_figures(), quick=True, out_dir=tmp_path, readme=readme)
    assert written["markdown"].name == "peers-quick.md"
    assert "readme" not in written
    assert "full results" in readme.read_text(encoding="utf-8")


def test_other_markdown_parsers_never_repeat_the_default() -> None:
    from kebab_chunk.parsers.registry import get_parser

    others = bench_peers.other_markdown_parsers()
    assert get_parser("text/markdown").version not in others
    assert all(callable(factory) for factory in others.values())
