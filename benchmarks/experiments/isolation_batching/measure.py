"""What the helper exchange costs per document, one document per trip against batches.

The job parses and chunks each document in a helper process (``IsolatedRunner``: pickled
batches and replies, the progress record, the supervisor's clock). This runs the job's own
task (``ParseChunkTask``, default labels, encoded chunks) over the pipeline bench's 10,000
generated documents three ways, without Beam:

- in the calling process (``InlineRunner``): the work alone;
- through a helper, one document per batch (``batch=1``, as the job did before);
- through a helper, batches of ``GROUP`` documents (the runner's default).

The exchange's cost per document is (worker CPU + helper CPU - inline CPU) / documents.
Run: ``PYTHONPATH=. .venv/bin/python benchmarks/experiments/isolation_batching/measure.py``.
"""

from __future__ import annotations

import gc
import tempfile
import time
from pathlib import Path

from benchmarks.bench_pipeline import _DescendantCpu, _write_corpus
from kebab_chunk.beam.parse_chunk import ParseAndChunk
from kebab_chunk.elements import RawDocument
from kebab_chunk.model.ids import content_hash
from kebab_chunk.parsers.registry import detect_media_type
from kebab_chunk.runtime.supervisor import InlineRunner, IsolatedRunner
from kebab_chunk.runtime.tasks import ParseChunkTask

DOCS = 10_000
GROUP = 16
ROUNDS = 3


def documents(root: Path) -> list[RawDocument]:
    """The corpus as the job's reader hands it on."""
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        raw, uri = path.read_bytes(), path.relative_to(root).as_posix()
        found.append(RawDocument(uri, detect_media_type(uri, raw[:8]), content_hash(raw), raw))
    return found


def task() -> ParseChunkTask:
    transform = ParseAndChunk(encode=True)
    return ParseChunkTask(transform._parse.task(), transform._chunk.task())


def inline_cpu(docs: list[RawDocument]) -> float:
    runner = InlineRunner(task())
    runner.start()
    start = time.process_time()
    for doc in docs:
        runner.submit(doc)
    return time.process_time() - start


def helper_cpu(docs: list[RawDocument], batch: int) -> tuple[float, float]:
    """(worker CPU, helper CPU) with up to ``batch`` documents per trip."""
    runner = IsolatedRunner(task(), budgets_s=(600, 600), max_memory_mb=2048, batch=batch)
    runner.start()
    runner.submit(docs[0])  # the helper is up before the clock starts
    runner.drain()
    with _DescendantCpu() as children:
        start = time.process_time()
        for doc in docs:
            runner.submit(doc)
        runner.drain()
        own = time.process_time() - start
    runner.close()
    return own, sum(children.per_process())


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _write_corpus(root, DOCS)
        docs = documents(root)
    gc.freeze()
    print("| round | inline CPU s | per trip | worker CPU s | helper CPU s | cost per document |")
    print("|---|---|---|---|---|---|")
    for round_ in range(1, ROUNDS + 1):
        alone = inline_cpu(docs)
        for group in (1, GROUP):
            own, helper = helper_cpu(docs, group)
            cost = (own + helper - alone) / len(docs) * 1e6
            print(
                f"| {round_} | {alone:.2f} | {group} | {own:.2f} | {helper:.2f} | {cost:.1f} µs |",
                flush=True,
            )


if __name__ == "__main__":
    main()
