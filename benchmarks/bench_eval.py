"""Retrieval quality side by side: our labels and peer chunkers, one embedder, one metric.

``python -m benchmarks eval`` (``./run_local.sh bench eval``) scores, in one run, with the
same embedding model (:class:`kebab_chunk.eval.bert.Embedder`, all-MiniLM-L6-v2 by
default) and the same retrieval and metric code as ``kebab-chunk eval``
(:mod:`kebab_chunk.eval.run`, :mod:`kebab_chunk.eval.metrics`):

- **ours**: each ``--setting`` (default: the current labels ``md-heading-v3``,
  ``hybrid-v3`` and ``md-header-chars-v2`` at 128, 192 and 256 target tokens, no overlap,
  ``bytes-3``), through :func:`kebab_chunk.eval.run.evaluate` itself, embedding each
  record's ``embed_text`` (what the pipeline writes to be embedded); a chunk's character
  ranges come from its spans;
- **peers**: LangChain ``RecursiveCharacterTextSplitter``, ``semchunk``, chonkie
  ``RecursiveChunker`` and ``TokenChunker``, all counting characters, no overlap. A peer
  returns strings only, so each chunk is located in its document with ``str.find``, starting
  just after the previous located chunk's start (the way the ``chunking_evaluation``
  project gives its chunkers offsets); a chunk that is not found is left out of the index
  and counted in the ``not located`` column.

**Comparable sizes.** Chunk size settings mean different things per library, so the peers'
sizes are calibrated: for each target size of our settings, the mean chunk size (characters)
of our settings at that target is a *level*; for each peer and level, the ``chunk_size``
(from 50 to 3,000 characters in steps of 10) whose chunks' mean size is nearest the level
is used (ties: the smaller size). Calibration only chunks; nothing is embedded for it.

Every index holds the chunks of all files the questions name, in ``corpus_id`` order then
chunk order, as ``kebab-chunk eval`` builds it, so ties in similarity resolve the same way.
Results go to ``benchmarks/results/eval-peers.md`` and ``eval-peers.json`` (date, machine,
versions of every library, model, each row's chunk statistics and recall, precision and IoU
at k), rows sorted by mean chunk size. The data is read from ``--corpus`` (default: the
development split of the ``chunking_evaluation`` data on the machine); it is never copied
into the repository. Not part of the default ``python -m benchmarks`` run: it needs that data
and the ``bench`` and ``eval`` extras.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from benchmarks import report
from kebab_chunk.errors import KebabError
from kebab_chunk.eval import run
from kebab_chunk.eval.bert import DEFAULT_MODEL
from kebab_chunk.eval.metrics import Range, Retrieved, Summary, score_question, summarize
from kebab_chunk.tokenizers import get_tokenizer

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DATA = Path("/work/shared/eval/chunking-evaluation-dev")
LABELS = ("md-heading-v3", "hybrid-v3", "md-header-chars-v2")
TARGETS = (128, 192, 256)
DEFAULT_SETTINGS = tuple(f"{label}:{target}:0" for label in LABELS for target in TARGETS)
SIZE_GRID = range(50, 3001, 10)
TOKENIZER = "bytes-3"  # the mean tokens column, as kebab-chunk eval's default
EMBED: run.EmbedMode = "embed_text"  # what our records offer to embed (a peer has only its text)

Split = Callable[[str], list[str]]


@dataclass(frozen=True)
class Peer:
    """A peer chunker: its name, the distribution whose version is reported, and a
    factory from a chunk size in characters to a function splitting one text."""

    name: str
    package: str
    build: Callable[[int], Split]


def _langchain(size: int) -> Split:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=0)
    return splitter.split_text


def _semchunk(size: int) -> Split:
    import semchunk

    chunker = semchunk.chunkerify(len, size)  # type: ignore[attr-defined]
    return lambda text: cast(list[str], chunker(text))


def _chonkie_recursive(size: int) -> Split:
    from chonkie import RecursiveChunker

    chunker = RecursiveChunker(tokenizer="character", chunk_size=size)
    return lambda text: [c.text for c in chunker.chunk(text)]


def _chonkie_token(size: int) -> Split:
    from chonkie import TokenChunker

    chunker = TokenChunker(tokenizer="character", chunk_size=size, chunk_overlap=0)
    return lambda text: [c.text for c in chunker.chunk(text)]


PEERS = (
    Peer("LangChain RecursiveCharacterTextSplitter", "langchain-text-splitters", _langchain),
    Peer("semchunk", "semchunk", _semchunk),
    Peer("chonkie RecursiveChunker", "chonkie", _chonkie_recursive),
    Peer("chonkie TokenChunker", "chonkie", _chonkie_token),
)


def version(package: str) -> str:
    """The installed version of ``package``, or ``not installed``."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def locate(text: str, chunks: Sequence[str]) -> tuple[list[Range | None], int]:
    """Each chunk's range in ``text`` by ``str.find`` from just after the previous located
    chunk's start (None when not found), and how many were not found. Starting after the
    previous start, not its end, finds overlapping chunks; starting after it, not at it,
    finds a repeated chunk at its next occurrence. Empty chunks are not found: they cover
    nothing and would only add noise to the index."""
    ranges: list[Range | None] = []
    missing = 0
    cursor = 0
    for chunk in chunks:
        start = text.find(chunk, cursor) if chunk else -1
        if start < 0:
            ranges.append(None)
            missing += 1
            continue
        ranges.append((start, start + len(chunk)))
        cursor = start + 1
    return ranges, missing


def peer_index(
    split: Split, corpus: Mapping[str, run.CorpusDocument]
) -> tuple[list[run.IndexedChunk], int]:
    """A peer's chunks of every document as the index holds them (documents by
    ``corpus_id``, then chunk order; chunks that cannot be located left out) and the count
    of chunks left out."""
    counter = get_tokenizer(TOKENIZER)
    indexed: list[run.IndexedChunk] = []
    missing_total = 0
    for corpus_id, document in sorted(corpus.items()):
        chunks = split(document.text)
        ranges, missing = locate(document.text, chunks)
        missing_total += missing
        for position, (chunk, where) in enumerate(zip(chunks, ranges, strict=True)):
            if where is None:
                continue
            indexed.append(
                run.IndexedChunk(
                    corpus_id=corpus_id,
                    position=position,
                    ranges=(where,),
                    embed_text=chunk,
                    chars=len(chunk),
                    tokens=counter.count_tokens(chunk),
                    exact=True,
                )
            )
    return indexed, missing_total


def mean_chars(split: Split, corpus: Mapping[str, run.CorpusDocument]) -> float:
    """Mean characters per non-empty chunk over all documents (what calibration matches)."""
    sizes = [len(c) for _, d in sorted(corpus.items()) for c in split(d.text) if c]
    return math.fsum(sizes) / len(sizes) if sizes else 0.0


def calibrate(
    peer: Peer, corpus: Mapping[str, run.CorpusDocument], levels: Sequence[float]
) -> list[tuple[int, float]]:
    """For each level, the grid ``chunk_size`` whose mean chunk size is nearest it (ties:
    the smaller size), with that mean."""
    means = [(size, mean_chars(peer.build(size), corpus)) for size in SIZE_GRID]
    return [min(means, key=lambda sm: (abs(sm[1] - level), sm[0])) for level in levels]


def score_index(
    indexed: Sequence[run.IndexedChunk],
    questions: Sequence[run.Question],
    question_vectors: Any,
    embedder: run.TextEmbedder,
    k: int,
) -> Summary:
    """Retrieve and score exactly as :func:`kebab_chunk.eval.run.evaluate` does for one
    setting (same embedding, brute-force top k with stable ties, same metric)."""
    chunk_vectors = run._embed(embedder, [c.embed_text for c in indexed])
    top = run._top_k(question_vectors, chunk_vectors, k)
    scores = []
    for question, row in zip(questions, top, strict=True):
        hits = [indexed[int(i)] for i in row]
        retrieved = [Retrieved(h.corpus_id, h.ranges) for h in hits]
        scores.append(score_question(question.references, question.corpus_id, retrieved))
    return summarize(scores)


def _row(
    *,
    ours: bool,
    chunker: str,
    package: str,
    settings: str,
    chunks: int,
    mean_chars: float,
    mean_tokens: float,
    summary: Summary,
    extra: Mapping[str, Any],
) -> dict[str, Any]:
    return {
        "ours": ours,
        "chunker": chunker,
        "version": version(package),
        "settings": settings,
        "chunks": chunks,
        "mean_chars": mean_chars,
        "mean_tokens": mean_tokens,
        "recall": summary.recall,
        "recall_std": summary.recall_std,
        "precision": summary.precision,
        "precision_std": summary.precision_std,
        "iou": summary.iou,
        "iou_std": summary.iou_std,
        **extra,
    }


def measure(
    corpus_dir: Path,
    questions_file: Path,
    settings: Sequence[str],
    k: int,
    peers: Sequence[Peer] = PEERS,
    embedder: run.TextEmbedder | None = None,
) -> dict[str, Any]:
    """Score our settings and the calibrated peers; the figures as one JSON object."""
    questions = run.load_questions(questions_file)
    corpus = run.load_corpus(corpus_dir, questions)
    parsed = [run.parse_setting(s, TOKENIZER) for s in settings]
    if embedder is None:
        from kebab_chunk.eval.bert import Embedder

        embedder = Embedder.load()
    print(f"scoring {len(parsed)} settings of ours ...", flush=True)
    result = run.evaluate(
        questions, corpus, parsed, embedder, k=k, embed=EMBED, model=DEFAULT_MODEL
    )
    rows = [
        _row(
            ours=True,
            chunker=r.setting.label,
            package="kebab-chunk",
            settings=f"{r.setting.policy.target_tokens} target tokens ({TOKENIZER}), overlap "
            f"{r.setting.policy.overlap_tokens}",
            chunks=r.chunks,
            mean_chars=r.mean_chars,
            mean_tokens=r.mean_tokens,
            summary=r.summary,
            extra={"setting": r.setting.name, "ranges": "spans", "exact_share": r.exact_share},
        )
        for r in result.results
    ]
    by_target: dict[int, list[float]] = {}
    for r in result.results:
        by_target.setdefault(r.setting.policy.target_tokens, []).append(r.mean_chars)
    targets = sorted(by_target)
    levels = [math.fsum(by_target[t]) / len(by_target[t]) for t in targets]
    question_vectors = run._embed(embedder, [q.question for q in questions])
    not_run: dict[str, str] = {}
    for peer in peers:
        try:
            picks = calibrate(peer, corpus, levels)
        except ImportError as exc:
            not_run[peer.name] = f"{peer.package} is not installed ({exc})"
            print(f"  {peer.name}: not run, {not_run[peer.name]}", flush=True)
            continue
        for target, level, (size, _) in zip(targets, levels, picks, strict=True):
            print(f"scoring {peer.name} at {size} chars ...", flush=True)
            indexed, missing = peer_index(peer.build(size), corpus)
            summary = score_index(indexed, questions, question_vectors, embedder, k)
            rows.append(
                _row(
                    ours=False,
                    chunker=peer.name,
                    package=peer.package,
                    settings=f"chunk_size {size} chars, overlap 0",
                    chunks=len(indexed),
                    mean_chars=math.fsum(c.chars for c in indexed) / len(indexed),
                    mean_tokens=math.fsum(c.tokens for c in indexed) / len(indexed),
                    summary=summary,
                    extra={
                        "chunk_size": size,
                        "matched_level_chars": level,
                        "matched_target_tokens": target,
                        "ranges": "find",
                        "not_located": missing,
                    },
                )
            )
    rows.sort(key=lambda r: (r["mean_chars"], not r["ours"], r["chunker"]))
    versions = {"kebab-chunk": version("kebab-chunk")}
    versions.update({p.package: version(p.package) for p in peers})
    return {
        "date": time.strftime("%Y-%m-%d"),
        "machine": report.machine(),
        "versions": versions,
        "model": DEFAULT_MODEL,
        "embed": {"ours": EMBED, "peers": "text"},
        "k": k,
        "tokenizer": TOKENIZER,
        "questions": len(questions),
        "questions_file": questions_file.name,
        "corpus": [
            {"corpus_id": cid, "file": name, "chars": chars} for cid, name, chars in result.corpus
        ],
        "size_levels": [
            {"target_tokens": t, "mean_chars": level}
            for t, level in zip(targets, levels, strict=True)
        ],
        "not_run": not_run,
        "rows": rows,
    }


def _embedded(figures: Mapping[str, Any]) -> str:
    """What was embedded, in words (older result files say ``"text"`` for both sides)."""
    embed = figures.get("embed", "text")
    ours = embed.get("ours", "text") if isinstance(embed, dict) else embed
    if ours == "text":
        return "the chunk text"
    return f"our records' `{ours}` and the peers' chunk text"


def render_markdown(figures: Mapping[str, Any]) -> str:
    """The figures as a Markdown page: how they were measured, then one table row per
    setting, sorted by mean chunk size."""
    k = figures["k"]
    m = figures["machine"]
    files = ", ".join(f"{c['file']} ({c['chars']:,} chars)" for c in figures["corpus"])
    versions = ", ".join(f"{name} {v}" for name, v in sorted(figures["versions"].items()))
    levels = ", ".join(
        f"{lv['mean_chars']:.0f} chars (our target {lv['target_tokens']})"
        for lv in figures["size_levels"]
    )
    lines = [
        "# Retrieval quality: ours and peers, one embedder, one metric",
        "",
        f"Measured {figures['date']} on {m['cpu']} ({m['cpus']} cores), {m['platform']}, "
        f"Python {m['python']}, by `python -m benchmarks eval`. Versions: {versions}. "
        f"Model {figures['model']}, embedding {_embedded(figures)}; top {k} of one index over "
        f"{files}; {figures['questions']} questions. Recall, precision and IoU over "
        "character ranges, as `kebab-chunk eval` defines them (docs/guide/eval.md), averaged "
        "over questions.",
        "",
        "Ours cite their character ranges from their spans; a peer's chunks are located with "
        "`str.find` from just after the previous chunk's start, and chunks not found are left "
        "out (column *not located*). Peer chunk sizes are calibrated so their mean chunk size "
        f"is nearest the mean of our settings at each target: {levels}. Mean tokens: "
        f"`{figures['tokenizer']}` of the chunk text. Ours in bold.",
        "",
        f"| chunker | version | settings | chunks | mean chars | mean tokens | not located "
        f"| recall@{k} % | precision@{k} % | IoU@{k} % |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in figures["rows"]:
        name = f"**{r['chunker']}**" if r["ours"] else r["chunker"]
        located = "–" if r["ours"] else str(r["not_located"])
        lines.append(
            f"| {name} | {r['version']} | {r['settings']} | {r['chunks']} "
            f"| {r['mean_chars']:.0f} | {r['mean_tokens']:.0f} | {located} "
            f"| {100 * r['recall']:.1f} | {100 * r['precision']:.1f} | {100 * r['iou']:.1f} |"
        )
    for name, reason in sorted(figures["not_run"].items()):
        lines.append(f"\n{name}: not run, {reason}.")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks eval``: measure, print the table, write the results files."""
    parser = argparse.ArgumentParser(
        prog="benchmarks eval",
        description="Score our chunker settings and peer chunkers with the same embedder and "
        "retrieval metric; write benchmarks/results/eval-peers.{md,json}.",
    )
    parser.add_argument(
        "--corpus", type=Path, default=DATA, help=f"corpus folder (default: {DATA})"
    )
    parser.add_argument(
        "--questions", type=Path, help="questions CSV (default: questions.csv in --corpus)"
    )
    parser.add_argument(
        "--setting",
        action="append",
        help="one of our settings, LABEL[:TARGET[:OVERLAP]]; repeatable (default: "
        + ", ".join(DEFAULT_SETTINGS)
        + ")",
    )
    parser.add_argument("--k", type=int, default=5, help="chunks retrieved per question")
    parser.add_argument(
        "--out", type=Path, default=RESULTS, help="folder for eval-peers.md and .json"
    )
    args = parser.parse_args(argv)
    questions = args.questions or args.corpus / "questions.csv"
    try:
        figures = measure(args.corpus, questions, args.setting or DEFAULT_SETTINGS, args.k)
    except KebabError as exc:
        print(f"benchmarks eval: {exc}", file=sys.stderr)
        return 2
    page = render_markdown(figures)
    print(page)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "eval-peers.md").write_text(page, encoding="utf-8")
    (args.out / "eval-peers.json").write_text(
        json.dumps(figures, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    print(f"wrote {args.out / 'eval-peers.md'} and eval-peers.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
