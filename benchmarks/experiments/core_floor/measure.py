"""The least work a Markdown chunk record of ours needs, against semantic-text-splitter.

Issue 34 asks for parse + md-heading-v2 with the compiled core at >= 1.0x
semantic-text-splitter's Markdown splitter on every bench corpus. This measures, per corpus
of ``benchmarks/bench_core.py`` (in one process, CPU time, best of 7):

- ``sts``: semantic-text-splitter's ``MarkdownSplitter(1024).chunks`` of every text;
- ``ours``: ``chunk_tables`` with the core, md-heading-v2 (bench_core's contender);
- ``parse``: the core's ``scan_markdown`` of every text: pulldown-cmark's events folded
  into one tuple per top-level block (the first step of every record; the tuples Python
  gets are a small part of it);
- ``hash``: blake3 over exactly the messages the id recipes hash for those records: each
  file's bytes (``content_hash``), the ``doc_id`` JSON, each block id's JSON (its kind and
  text) and each chunk id's JSON (its block ids), less the same number of empty-message
  calls (the Python call around each);
- ``floor``: parse + hash, work any implementation of these records does before it packs
  a single chunk.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/experiments/core_floor/measure.py`` (needs
the core and semantic-text-splitter: ``./run_local.sh bench`` installs the peers).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from json.encoder import encode_basestring as json_str
from typing import Any

from blake3 import blake3

from benchmarks import bench_core, corpora
from kebab_chunk._core import core
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.parsers.registry import parse_document
from kebab_chunk.table import chunk_tables

LABEL = "md-heading-v2"
ROUNDS = 7
MIN_RUN_S = 0.2


def best_seconds(work: Callable[[], object]) -> float:
    """Best CPU seconds of one call of ``work`` (repeated to about ``MIN_RUN_S`` a round)."""
    start = time.process_time()
    work()
    once = max(time.process_time() - start, 1e-6)
    repeat = max(1, int(MIN_RUN_S / once))
    rounds = []
    for _ in range(ROUNDS):
        start = time.process_time()
        for _ in range(repeat):
            work()
        rounds.append((time.process_time() - start) / repeat)
    return min(rounds)


def recipe_messages(docs: list[tuple[bytes, str]], policy: ChunkPolicy) -> list[bytes]:
    """The messages the id recipes hash for the documents' records under ``LABEL``."""
    messages: list[bytes] = []
    for raw, uri in docs:
        doc = parse_document(raw, uri)
        messages += [raw, f'["doc",{json_str(uri)}]'.encode()]
        seen: Counter[tuple[str, str]] = Counter()
        for block in doc.blocks:
            occurrence = seen[(block.kind, block.text)]
            seen[(block.kind, block.text)] += 1
            messages.append(
                f'["block",{json_str(doc.doc_id)},{json_str(block.kind)},'
                f"{json_str(block.text)},{occurrence}]".encode()
            )
    rows = chunk_tables(docs, LABEL, policy).select(["doc_id", "block_ids"]).to_pylist()
    for row in rows:
        ids = ",".join(map(json_str, row["block_ids"]))
        messages.append(
            f'["chunk",{json_str(row["doc_id"])},{json_str(LABEL)},[{ids}],'
            f"{json_str(policy.policy_hash)}]".encode()
        )
    return messages


def figures(corpus: corpora.Corpus, compiled: Any, splitter: Any) -> dict[str, float | str]:
    """One corpus's figures (MB/s of CPU time, and the ratios)."""
    policy = ChunkPolicy(target_tokens=bench_core.PROXY_TOKENS, overlap_tokens=0)
    docs = [(d.raw, bench_core._markdown_name(d.name)) for d in corpus.documents]
    texts = [d.text for d in corpus.documents]
    messages = recipe_messages(docs, policy)
    empty = [b""] * len(messages)
    batches = [docs[i : i + bench_core.BATCH] for i in range(0, len(docs), bench_core.BATCH)]
    seconds = {
        "sts": best_seconds(lambda: [splitter.chunks(t) for t in texts]),
        "ours": best_seconds(lambda: [chunk_tables(b, LABEL, policy) for b in batches]),
        "parse": best_seconds(lambda: [compiled.scan_markdown(t, 10**9) for t in texts]),
        "hash": best_seconds(lambda: [blake3(m).digest() for m in messages])
        - best_seconds(lambda: [blake3(m).digest() for m in empty]),
    }
    seconds["floor"] = seconds["parse"] + seconds["hash"]
    mb = corpus.megabytes
    row: dict[str, float | str] = {"corpus": corpus.name, "MB": mb}
    row |= {f"{name} MB/s": mb / s for name, s in seconds.items()}
    row["floor / sts"] = seconds["sts"] / seconds["floor"]
    row["ours / sts"] = seconds["sts"] / seconds["ours"]
    row["hashed bytes / corpus bytes"] = sum(map(len, messages)) / sum(len(r) for r, _ in docs)
    return row


def measure() -> list[dict[str, float | str]]:
    """One row of figures per bench_core corpus present."""
    from semantic_text_splitter import MarkdownSplitter

    compiled = core()
    if compiled is None:
        raise SystemExit("the compiled core is not built: run ./run_local.sh first")
    splitter = MarkdownSplitter(bench_core.CHARS)
    return [
        figures(corpus, compiled, splitter)
        for corpus in bench_core.markdown_corpora(quick=False)
        if corpus.absent is None and corpus.documents
    ]


def main() -> None:
    rows = measure()
    columns = list(rows[0])
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        cells = [f"{v:.2f}" if isinstance(v, float) else str(v) for v in row.values()]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
