"""The Markdown path against LangChain, per corpus, in CPU time (best of 3, one run).

Corpora (:mod:`benchmarks.corpora`), each reported on its own: the installed
distributions' Markdown READMEs, the Markdown documentation of a few Debian packages
(fetched with apt at bench time; reported as absent where apt is unavailable), and the
fixtures' Markdown. Quick runs take a ~300 KB subset of each.

Contenders, all from the same documents held in memory:

- ours from raw bytes (decode, parse with the default Markdown parser, chunk):
  ``md-heading-v1`` and ``md-heading-v2`` at 342 byte-proxy tokens (~1024 bytes) with 34
  tokens (~100 bytes) of overlap, and the parse alone;
- LangChain ``MarkdownHeaderTextSplitter`` (h1-h6, headers kept) followed by
  ``RecursiveCharacterTextSplitter(chunk_size=1024, chunk_overlap=100)`` on decoded text.

Timing: CPU time of this process (``time.process_time``), so load from other processes on
a shared machine does not count against whichever contender was running; each contender
is timed once per round in interleaved rounds and the best round is kept. Every timed run
builds its objects afresh. Ratios are against LangChain in the same run.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks import corpora
from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.parsers.registry import get_parser

CHARS = 1024
OVERLAP_CHARS = 100
PROXY_TOKENS = 342  # ceil(1024 / 3): the byte proxy's 1024 bytes
PROXY_OVERLAP = 34  # ~100 bytes
LANGCHAIN = "LangChain header+recursive"
QUICK_BYTES = 300_000

Work = Callable[[corpora.Document], Sequence[Any]]


def _parse_only() -> Work:
    parser = get_parser("text/markdown")
    return lambda doc: parser.parse(doc.raw, doc.name).blocks


def _ours(label: str) -> Callable[[], Work]:
    policy = ChunkPolicy(target_tokens=PROXY_TOKENS, overlap_tokens=PROXY_OVERLAP)

    def build() -> Work:
        parser = get_parser("text/markdown")
        chunker = get_chunker(label)
        return lambda doc: chunker.chunk(parser.parse(doc.raw, doc.name), policy)

    return build


def _langchain() -> Work:
    from langchain_text_splitters import (
        MarkdownHeaderTextSplitter,
        RecursiveCharacterTextSplitter,
    )

    levels = [("#" * n, f"h{n}") for n in range(1, 7)]
    headers = MarkdownHeaderTextSplitter(levels, strip_headers=False)
    recursive = RecursiveCharacterTextSplitter(chunk_size=CHARS, chunk_overlap=OVERLAP_CHARS)
    # Peers get decoded text; the decode happens before the clock, in ``feeds``.
    return lambda text: recursive.split_documents(headers.split_text(text))  # type: ignore[arg-type]


CONTENDERS: dict[str, tuple[Callable[[], Work], str]] = {
    "ours: parse only": (_parse_only, "raw"),
    "ours: parse + md-heading-v1": (_ours("md-heading-v1"), "raw"),
    "ours: parse + md-heading-v2": (_ours("md-heading-v2"), "raw"),
    LANGCHAIN: (_langchain, "text"),
}


def markdown_corpora(quick: bool) -> list[corpora.Corpus]:
    """The three corpora, each on its own (quick: a deterministic ~300 KB subset of each)."""
    found = [
        corpora.distribution_readmes(),
        corpora.debian_markdown(),
        corpora.fixture_markdown(),
    ]
    return [corpora.subset(c, QUICK_BYTES) if quick and c.documents else c for c in found]


def cpu_seconds(build: Callable[[], Work], inputs: Sequence[Any]) -> float:
    """CPU seconds of this process for one cold run: fresh objects, every input."""
    start = time.process_time()
    work = build()
    for item in inputs:
        work(item)
    return time.process_time() - start


def race(corpus: corpora.Corpus, rounds: int = 3) -> dict[str, Any]:
    """Best-of-``rounds`` CPU seconds, MB/s and ratio vs LangChain for every contender."""
    feeds: dict[str, Sequence[Any]] = {
        "raw": list(corpus.documents),
        "text": [d.text for d in corpus.documents],
    }
    times: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    chunks: dict[str, int] = {}
    for name, (build, feed) in CONTENDERS.items():  # untimed warm-up: imports, counts
        work = build()
        chunks[name] = sum(len(work(item)) for item in feeds[feed])
    for _ in range(rounds):
        for name, (build, feed) in CONTENDERS.items():
            times[name].append(cpu_seconds(build, feeds[feed]))
    out: dict[str, Any] = {}
    for name, runs in times.items():
        best = min(runs)
        out[name] = {
            "cpu s (best)": best,
            "cpu s (all)": [round(t, 4) for t in runs],
            "MB/s (cpu)": corpus.megabytes / best,
            "items": chunks[name],
        }
    base = out[LANGCHAIN]["MB/s (cpu)"]
    for figures in out.values():
        figures["vs LangChain"] = figures["MB/s (cpu)"] / base
    return out


HISTORY = Path(__file__).resolve().parent / "results" / "history"


def machine() -> dict[str, Any]:
    """What the figures were measured on (CPU model, cores, OS, Python)."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            names = [ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")]
        model = names[0] if names else model
    except OSError:
        pass
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def save_history(name: str, figures: dict[str, Any], directory: Path = HISTORY) -> Path:
    """Write ``figures`` to ``directory/<name>-<UTC date>[-<n>].json``; never overwrites.

    ``results/latest.json`` is rewritten by every run; these dated files keep each full
    run's figures, so earlier measurements stay comparable with later ones.
    """
    directory.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y-%m-%d", time.gmtime())
    path = directory / f"{name}-{stamp}.json"
    n = 2
    while path.exists():
        path = directory / f"{name}-{stamp}-{n}.json"
        n += 1
    record = {"date": stamp, "machine": machine(), **figures}
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def run(quick: bool) -> dict[str, Any]:
    """Per corpus: sizes (or why it is absent) and the race; full runs are kept in history."""
    figures: dict[str, Any] = {
        "parser": get_parser("text/markdown").version,
        "clock": "time.process_time, best of 3 interleaved rounds",
        "settings": (
            f"ours {PROXY_TOKENS} proxy tokens / {PROXY_OVERLAP} overlap; LangChain "
            f"{CHARS} / {OVERLAP_CHARS} chars"
        ),
        "corpora": {},
    }
    for corpus in markdown_corpora(quick):
        entry: dict[str, Any] = {"corpus": corpus.summary()}
        if corpus.absent is None and corpus.documents:
            print(
                f"  {corpus.name}: {corpus.n_documents} docs, {corpus.megabytes:.2f} MB", flush=True
            )
            entry["race"] = race(corpus)
        figures["corpora"][corpus.name] = entry
    if not quick:
        figures["history file"] = str(
            save_history("markdown", figures).relative_to(HISTORY.parents[1])
        )
    return figures


if __name__ == "__main__":
    import json
    import sys

    result = run(quick="--quick" in sys.argv)
    for name, entry in result["corpora"].items():
        print(name, json.dumps(entry["corpus"]))
        for label, row in entry.get("race", {}).items():
            print(
                f"  {label:32s} {row['cpu s (best)']:.3f}s {row['MB/s (cpu)']:.2f} MB/s "
                f"{row['vs LangChain']:.2f}x  items={row['items']}"
            )
