"""Markdown to chunk records: ours with the compiled core and in pure Python, against the
fastest peers, per corpus, in CPU time (best of 5 interleaved rounds, one run).

Corpora (:mod:`benchmarks.corpora`), each on its own: the installed distributions'
Markdown READMEs, the Markdown documentation of a few Debian packages (fetched with apt
at bench time; reported as absent where apt is unavailable) and the fixtures' Markdown.
Quick runs take a ~300 KB subset of each.

Contenders, all from the same documents held in memory, at ~1024 characters a chunk and
no overlap (as the peers are run in ``bench_peers``):

- ours from raw bytes to the Arrow table a run writes (decode, parse with
  md-pyromark-v1, chunk, ids, ``embed_text``: :func:`kebab_chunk.table.chunk_tables`,
  64 documents a call) under ``md-heading-v2``, ``md-heading-v3`` and ``hybrid-v3`` at 342
  byte-proxy tokens, with the compiled core and with ``KEBAB_CORE=python``; plus the core
  with the default 34-token overlap, for reference;
- LangChain ``MarkdownHeaderTextSplitter`` + ``RecursiveCharacterTextSplitter`` (1024),
  semchunk (1024 characters), chonkie ``RecursiveChunker`` (1024 characters) and
  semantic-text-splitter's ``MarkdownSplitter`` (1024 characters), on decoded text.

A peer that is not installed (the bench extra brings them) is reported as not run. The
verdict lines are the issue's: md-heading-v2 with the core at least as fast as
semantic-text-splitter, and hybrid-v3 with the core at least as fast as semchunk, on every
corpus.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks import corpora
from benchmarks.bench_peers import _chonkie, _langchain, _semantic_text_splitter, _semchunk
from kebab_chunk import _core
from kebab_chunk._core import using
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.table import chunk_tables

CHARS = 1024
PROXY_TOKENS = 342  # ceil(1024 / 3)
PROXY_OVERLAP = 34
BATCH = 64
ROUNDS = 5
QUICK_BYTES = 300_000
#: About how long one timed run of a contender lasts (it repeats its pass over the corpus).
MIN_RUN_S = 0.25
STS = "semantic-text-splitter Markdown"
SEMCHUNK = "semchunk"
OURS_CORE = "ours core: md-heading-v2"
HYBRID = "ours core: hybrid-v3"
#: The two targets of issue 34 judged here: (key in the figures, ours, the peer).
TARGETS = (
    ("md-heading-v2 with the core >= 1.0x semantic-text-splitter", OURS_CORE, STS),
    ("hybrid-v3 >= 1.0x semchunk", HYBRID, SEMCHUNK),
)

Work = Callable[[], int]  # one run over the corpus; returns the number of chunks


def _ours(label: str, overlap: int, mode: str) -> Callable[[corpora.Corpus], Work]:
    policy = ChunkPolicy(target_tokens=PROXY_TOKENS, overlap_tokens=overlap)

    def build(corpus: corpora.Corpus) -> Work:
        docs = [(d.raw, _markdown_name(d.name)) for d in corpus.documents]

        def work() -> int:
            rows = 0
            with using(mode):
                for i in range(0, len(docs), BATCH):
                    rows += chunk_tables(docs[i : i + BATCH], label, policy).num_rows
            return rows

        return work

    return build


def _markdown_name(name: str) -> str:
    """A ``file:///`` URI that reads as Markdown (corpus names may lack the extension)."""
    return "file:///" + (name if name.endswith(".md") else name + ".md")


def _on_text(
    make: Callable[[], Callable[[str], Sequence[Any]]],
) -> Callable[[corpora.Corpus], Work]:
    def build(corpus: corpora.Corpus) -> Work:
        texts = [d.text for d in corpus.documents]  # decoded before the clock

        def work() -> int:
            split = make()
            return sum(len(split(text)) for text in texts)

        return work

    return build


#: name -> (builder, the module it needs, or None)
CONTENDERS: dict[str, tuple[Callable[[corpora.Corpus], Work], str | None]] = {
    OURS_CORE: (_ours("md-heading-v2", 0, "native"), "kebab_chunk_core"),
    "ours core: md-heading-v3": (_ours("md-heading-v3", 0, "native"), "kebab_chunk_core"),
    "ours core: md-heading-v3, 34 overlap": (
        _ours("md-heading-v3", PROXY_OVERLAP, "native"),
        "kebab_chunk_core",
    ),
    "ours Python: md-heading-v2": (_ours("md-heading-v2", 0, "python"), None),
    "ours Python: md-heading-v3": (_ours("md-heading-v3", 0, "python"), None),
    HYBRID: (_ours("hybrid-v3", 0, "native"), "kebab_chunk_core"),
    "ours Python: hybrid-v3": (_ours("hybrid-v3", 0, "python"), None),
    "LangChain header+recursive": (_on_text(_langchain), "langchain_text_splitters"),
    SEMCHUNK: (_on_text(_semchunk), "semchunk"),
    "chonkie RecursiveChunker": (_on_text(_chonkie), "chonkie"),
    STS: (_on_text(_semantic_text_splitter), "semantic_text_splitter"),
}


def available(module: str | None) -> bool:
    """Whether a contender's module can be imported (the core only when built)."""
    if module is None:
        return True
    if module == "kebab_chunk_core":
        return _core.installed() is not None
    return importlib.util.find_spec(module) is not None


def race(corpus: corpora.Corpus, rounds: int = ROUNDS) -> dict[str, Any]:
    """Best-of-``rounds`` CPU seconds and MB/s per contender, and ratios against
    semantic-text-splitter (the fastest peer measured) in the same run.

    A timed run passes over the corpus as many times as it takes the contender about
    ``MIN_RUN_S`` (found in the untimed warm-up), so a small corpus is not measured at the
    clock's granularity; MB/s counts every pass.
    """
    works: dict[str, Work] = {}
    passes: dict[str, int] = {}
    out: dict[str, Any] = {}
    for name, (build, module) in CONTENDERS.items():
        if not available(module):
            out[name] = {"not run": f"{module} is not installed"}
            continue
        works[name] = build(corpus)
        start = time.process_time()
        out[name] = {"chunks": works[name]()}  # untimed warm-up: imports, first calls
        warm = max(time.process_time() - start, 1e-4)
        passes[name] = max(1, min(1000, round(MIN_RUN_S / warm)))
    times: dict[str, list[float]] = {name: [] for name in works}
    for _ in range(rounds):
        for name, work in works.items():
            start = time.process_time()
            for _ in range(passes[name]):
                work()
            times[name].append(time.process_time() - start)
    for name, runs in times.items():
        best = min(runs)
        out[name].update(
            {
                "passes per run": passes[name],
                "cpu s (best)": best,
                "cpu s (all)": [round(t, 4) for t in runs],
                "MB/s (cpu)": corpus.megabytes * passes[name] / best,
            }
        )
    base = out.get(STS, {}).get("MB/s (cpu)")
    if base:
        for figures in out.values():
            if "MB/s (cpu)" in figures:
                figures[f"vs {STS}"] = figures["MB/s (cpu)"] / base
    return out


def markdown_corpora(quick: bool) -> list[corpora.Corpus]:
    """The three corpora, each on its own (quick: a deterministic ~300 KB subset of each)."""
    found = [corpora.distribution_readmes(), corpora.debian_markdown(), corpora.fixture_markdown()]
    return [corpora.subset(c, QUICK_BYTES) if quick and c.documents else c for c in found]


def verdict(per_corpus: dict[str, dict[str, Any]], ours: str = OURS_CORE, peer: str = STS) -> str:
    """ "met" when ``ours`` is at least ``peer``'s speed (MB/s of CPU time, same run) on
    every corpus measured, else which corpora fall short (or why it could not be judged)."""
    short, judged = [], 0
    for name, race_figures in per_corpus.items():
        mine = race_figures.get(ours, {}).get("MB/s (cpu)")
        theirs = race_figures.get(peer, {}).get("MB/s (cpu)")
        if mine is None or not theirs:
            continue
        judged += 1
        if mine < theirs:
            short.append(f"{name} {mine / theirs:.2f}x")
    if not judged:
        return f"not judged ({ours} or {peer} did not run)"
    return "met" if not short else "NOT met: " + ", ".join(short)


def run(quick: bool) -> dict[str, Any]:
    """Per corpus: sizes (or why it is absent) and the race, then the verdict."""
    figures: dict[str, Any] = {
        "clock": f"time.process_time, best of {ROUNDS} interleaved rounds",
        "settings": (
            f"ours {PROXY_TOKENS} byte-proxy tokens, no overlap (one row with "
            f"{PROXY_OVERLAP}), {BATCH} documents a call; peers {CHARS} characters"
        ),
        "corpora": {},
    }
    races: dict[str, dict[str, Any]] = {}
    for corpus in markdown_corpora(quick):
        entry: dict[str, Any] = {"corpus": corpus.summary()}
        if corpus.absent is None and corpus.documents:
            print(f"  {corpus.name}: {corpus.n_documents} docs, {corpus.megabytes:.2f} MB")
            entry["race"] = races[corpus.name] = race(corpus, 1 if quick else ROUNDS)
        figures["corpora"][corpus.name] = entry
    for key, ours, peer in TARGETS:
        figures[key] = verdict(races, ours, peer)
    if not quick:
        RESULTS.write_text(report(figures), encoding="utf-8")
    return figures


RESULTS = Path(__file__).resolve().parent / "results" / "core.md"


def report(figures: dict[str, Any]) -> str:
    """The run as a Markdown page: one table per corpus, then the verdict."""
    lines = [
        "## Compiled core against the peers (Markdown to chunk records)",
        "",
        f"Measured {time.strftime('%Y-%m-%d', time.gmtime())}; {figures['clock']}; "
        f"{figures['settings']}. Ratios are against semantic-text-splitter in the same run.",
        "",
    ]
    for name, entry in figures["corpora"].items():
        summary = entry["corpus"]
        if "race" not in entry:
            lines += [f"### {name}: not measured ({summary.get('absent', 'no documents')})", ""]
            continue
        lines += [
            f"### {name}: {summary['documents']} documents, {summary['MB']:.2f} MB",
            "",
            f"| contender | MB/s (CPU) | vs {STS} | chunks |",
            "|---|---|---|---|",
        ]
        for contender, row in entry["race"].items():
            if "not run" in row:
                lines.append(f"| {contender} | not run: {row['not run']} | | |")
                continue
            ratio = row.get(f"vs {STS}")
            shown = f"{ratio:.2f}x" if ratio is not None else ""
            lines.append(f"| {contender} | {row['MB/s (cpu)']:.1f} | {shown} | {row['chunks']} |")
        lines.append("")
    for key, _, _ in TARGETS:
        if key in figures:
            lines += [f"**{key}:** {figures[key]}", ""]
    return "\n".join(lines)
