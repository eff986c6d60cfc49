"""Generated Markdown corpora for the incremental tests (deterministic, no fixtures needed)."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

_WORDS = (
    *("chunk", "pipeline", "document", "parser", "token", "budget", "heading", "section"),
    *("paragraph", "retrieval", "embedding", "vector", "index", "query", "source", "span"),
    *("offset", "corpus", "version", "label", "worker", "shard"),
)


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(5, 12))).capitalize() + "."


def markdown_doc(rng: random.Random, title: str, sections: int) -> str:
    """A title, then ``sections`` sections of two short paragraphs each."""
    lines = [f"# {title}", ""]
    for s in range(sections):
        lines += [f"## Section {s}", ""]
        for _ in range(2):
            lines += [" ".join(sentence(rng) for _ in range(rng.randint(1, 3))), ""]
    return "\n".join(lines)


def write_corpus(root: Path, n_docs: int, seed: int = 8) -> Path:
    """``n_docs`` Markdown files ``doc000.md`` ... under ``root``."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    for i in range(n_docs):
        text = markdown_doc(rng, f"Document {i}", rng.randint(2, 5))
        (root / f"doc{i:03d}.md").write_text(text, encoding="utf-8")
    return root


def edit_one_paragraph(path: Path) -> None:
    """Rewrite the last paragraph of ``path`` (the other blocks keep their bytes)."""
    text = path.read_text(encoding="utf-8").rstrip("\n")
    head, _, _ = text.rpartition("\n\n")
    path.write_text(head + "\n\nThis paragraph was edited after the first run.\n", "utf-8")


def copy_corpus(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def apply_op(op: str, corpus: Path, rng: random.Random, step: int) -> None:
    """One step of the property tests' corpus histories: ``add`` a document, ``edit`` one
    paragraph, ``rename`` or ``delete`` a document; anything else changes nothing."""
    docs = sorted(corpus.glob("*.md"))
    if op == "add" or not docs:
        text = markdown_doc(rng, f"Added {step}", rng.randint(1, 4))
        (corpus / f"added{step}.md").write_text(text, "utf-8")
    elif op == "edit":
        edit_one_paragraph(rng.choice(docs))
    elif op == "rename":
        doc = rng.choice(docs)
        doc.rename(corpus / f"renamed{step}-{doc.name}")
    elif op == "delete":
        rng.choice(docs).unlink()
