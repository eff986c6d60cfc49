"""The bench eval's HTML and PDF sets: the handbook rendered, and the loaders users pair
with the peers.

A rendered set must keep what makes the Markdown set worth scoring: the same pages, the
same questions, references that name the rendered file and read as the page reads (link
targets and syntax gone). The peers' loaders must hand their splitters what LangChain's
loaders would (BeautifulSoup's text, one piece per PDF page), and chunks of a loaded text
cite no ranges, only their page. No embedding model is needed: the embedder is a bag of
words.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from pypdf import PdfReader

from benchmarks import bench_eval, eval_renders
from kebab_chunk.eval import run
from tests.test_benchmarks_eval_smoke import WordsEmbedder

PAGE = """---
title: Expense Policy
description: how we spend
---

Spend company money like it is **your own**; see [the travel page](/handbook/travel/).

## Reimbursement

- Submit receipts within 30 days.
- Use the [expense tool](https://example.com/tool) for claims.

| Item | Limit |
|---|---|
| Meals | 50 <br> per day |

```
code stays code
```
"""
OTHER = "# Rockets\n\nRockets burn fuel to reach orbit. Engines roar at launch.\n"


def _handbook(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "md"
    (corpus / "finance").mkdir(parents=True)
    (corpus / "finance" / "expenses.md").write_text(PAGE, encoding="utf-8")
    (corpus / "space.md").write_text(OTHER, encoding="utf-8")
    cited = "Use the [expense tool](https://example.com/tool) for claims."
    start = PAGE.index(cited)
    questions = tmp_path / "questions.csv"
    with questions.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "references", "corpus_id", "type"])
        refs = [
            {
                "content": cited,
                "start_index": start,
                "end_index": start + len(cited),
                "corpus_id": "finance/expenses.md",
            },
            {"content": "Rockets burn fuel", "start_index": 11, "end_index": 28},
        ]
        writer.writerow(
            ["Which tool takes claims, and what burns fuel?", json.dumps(refs), "space.md", "x"]
        )
    return corpus, questions


def _rows(questions: Path) -> list[dict[str, str]]:
    with questions.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_html_render_keeps_pages_and_turns_references_into_rendered_text(
    tmp_path: Path,
) -> None:
    corpus, questions = _handbook(tmp_path)
    rendered, rewritten = eval_renders.render(corpus, questions, tmp_path / "html", "html")
    assert sorted(p.relative_to(rendered).as_posix() for p in rendered.rglob("*")) == [
        "finance",
        "finance/expenses.html",
        "space.html",
    ]
    page = (rendered / "finance" / "expenses.html").read_text(encoding="utf-8")
    assert "<title>Expense Policy</title>" in page and "<h1>Expense Policy</h1>" in page
    assert "description:" not in page  # the front matter is not content
    assert '<a href="https://example.com/tool">expense tool</a>' in page
    [row] = _rows(rewritten)
    assert row["corpus_id"] == "space.html" and row["type"] == "x"
    references = json.loads(row["references"])
    # content only: the rendered text, link targets gone, each naming its rendered file
    assert references == [
        {"content": "Use the expense tool for claims.", "corpus_id": "finance/expenses.html"},
        {"content": "Rockets burn fuel", "corpus_id": "space.html"},
    ]
    # kebab-chunk eval reads the rendered set: every reference is content only
    loaded = run.load_questions(rewritten)
    assert all(r.span is None for q in loaded for r in q.cited)
    assert set(run.load_corpus(rendered, loaded)) == {"finance/expenses.html", "space.html"}


def test_a_finished_render_is_reused_and_an_unfinished_one_rebuilt(tmp_path: Path) -> None:
    corpus, questions = _handbook(tmp_path)
    out = tmp_path / "html"
    rendered, rewritten = eval_renders.render(corpus, questions, out, "html")
    (rendered / "space.html").write_text("kept", encoding="utf-8")
    assert eval_renders.render(corpus, questions, out, "html") == (rendered, rewritten)
    assert (rendered / "space.html").read_text(encoding="utf-8") == "kept"
    rewritten.unlink()  # as if the build had stopped before its last step
    eval_renders.render(corpus, questions, out, "html")
    assert (rendered / "space.html").read_text(encoding="utf-8") != "kept"


def test_pdf_render_typesets_title_blocks_lists_and_tables(tmp_path: Path) -> None:
    corpus, questions = _handbook(tmp_path)
    rendered, rewritten = eval_renders.render(corpus, questions, tmp_path / "pdf", "pdf")
    reader = PdfReader(rendered / "finance" / "expenses.pdf")
    text = " ".join(" ".join(p.extract_text().split()) for p in reader.pages)
    for expected in (
        "Expense Policy",
        "Spend company money like it is your own; see the travel page.",
        "Reimbursement",
        "Submit receipts within 30 days.",
        "Use the expense tool for claims.",
        "Item | Limit",
        "Meals | 50 per day",
        "code stays code",
    ):
        assert expected in text
    assert "/handbook/travel/" not in text and "description" not in text
    assert [r["corpus_id"] for r in json.loads(_rows(rewritten)[0]["references"])] == [
        "finance/expenses.pdf",
        "space.pdf",
    ]


def test_pdf_peers_split_each_page_and_cite_its_number(tmp_path: Path) -> None:
    corpus, questions = _handbook(tmp_path)
    long_page = "# Long\n\n" + "\n\n".join(f"Paragraph {n} " + "word " * 60 for n in range(60))
    (corpus / "space.md").write_text(OTHER + "\n" + long_page, encoding="utf-8")
    rendered, rewritten = eval_renders.render(corpus, questions, tmp_path / "pdf", "pdf")
    documents = run.load_corpus(rendered, run.load_questions(rewritten))
    pieces = bench_eval.pypdf_pages(documents["space.pdf"])
    assert len(pieces) > 1 and [p.page for p in pieces] == list(range(1, len(pieces) + 1))
    assert not any(p.source for p in pieces)
    [peer] = [p for p in bench_eval.PDF_PEERS if "LangChain" in p.name]
    indexed, missing = bench_eval.peer_index(peer.build(300), documents, load=peer.load)
    assert missing == 0
    assert all(c.ranges is None and len(c.pages) == 1 for c in indexed)
    assert {next(iter(c.pages)) for c in indexed if c.corpus_id == "space.pdf"} == set(
        range(1, len(pieces) + 1)
    )
    # chunks of one page are split from that page's text alone
    for chunk in indexed:
        page = pieces[next(iter(chunk.pages)) - 1] if chunk.corpus_id == "space.pdf" else None
        if page is not None:
            assert chunk.text in page.text


def test_html_peers_read_beautifulsoup_text_or_the_markup(tmp_path: Path) -> None:
    corpus, questions = _handbook(tmp_path)
    rendered, rewritten = eval_renders.render(corpus, questions, tmp_path / "html", "html")
    documents = run.load_corpus(rendered, run.load_questions(rewritten))
    [text] = bench_eval.soup_text(documents["finance/expenses.html"])
    assert "<" not in text.text and "Use the expense tool for claims." in text.text
    assert text.page is None and not text.source
    recipe = bench_eval.HTML_PEERS[0]
    assert recipe.headers and recipe.load is bench_eval.raw_markup
    chunks = recipe.build(200)(documents["finance/expenses.html"].text or "")
    reimbursement = [
        c for c in chunks if isinstance(c, bench_eval.PeerChunk) and "receipts" in c.text
    ]
    assert reimbursement and reimbursement[0].headers == ("Expense Policy", "Reimbursement")


@pytest.mark.parametrize("name", ["handbook-html", "handbook-pdf"])
def test_rendered_sets_score_ours_and_their_peers_by_overlap(tmp_path: Path, name: str) -> None:
    corpus, questions = _handbook(tmp_path)
    data = bench_eval.SETS[name]
    assert data.render is not None
    rendered, rewritten = eval_renders.render(corpus, questions, tmp_path / name, data.render)
    figures = bench_eval.measure(
        rendered,
        rewritten,
        ["hybrid-v4:64:0"],
        k=2,
        peers=data.peers,
        embedder=WordsEmbedder(),
    )
    rows = figures["rows"]
    scored = {r["chunker"] for r in rows if not r["ours"]}
    # every peer is scored, or named as not run (semchunk and chonkie come with the bench
    # extra only); the LangChain ones (a dev dependency) are scored
    assert {p.name for p in data.peers} <= scored | set(figures["not_run"])
    assert all("not installed" in why for why in figures["not_run"].values())
    assert {p.name for p in data.peers if p.package == "langchain-text-splitters"} <= scored
    for row in rows:
        # content-only references: no character metric, the overlap measure for all
        assert row["recall"] is None and row["iou"] is None
        assert row["overlap_recall"] is not None and row["overlap_recall"] > 0
        assert row["ours"] or row["not_located"] == 0
    page = bench_eval.render_markdown(bench_eval.page_figures({name: figures}, 2))
    assert "bytes)" in page if name == "handbook-pdf" else "chars)" in page
