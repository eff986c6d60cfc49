"""md-mistune-v1 vs md-pyromark-v1: block-structure agreement and parse throughput.

Corpora: the real Markdown of the peer race (READMEs of the installed distributions plus
the fixtures' Markdown, see :mod:`benchmarks.corpora`), the generated "typical" document,
and the generated varied corpus of :mod:`benchmarks.corpus` (1 MB quick, 5 MB full).

Agreement, per corpus (counted over all its documents):

- ``documents identical``: share of documents whose CanonicalDocument is the same apart
  from ``parser_version`` (blocks with every field and id, title, metadata, warnings);
- ``blocks identical``: matched blocks / the larger of the two block counts, where a
  block matches when a block equal in every field exists in the other parse (multiset);
- ``structure``: the same with blocks reduced to (kind, char_start, char_end);
- up to five example differences (document, kinds and first characters).

Throughput: each parser's MB/s (10**6 input bytes per second, decode included), median
of interleaved cold runs (fresh parser per run), and the speed-up of md-pyromark-v1.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from benchmarks import corpora
from benchmarks.corpus import markdown_corpus
from kebab_chunk.errors import ParseError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.parsers.base import Parser
from kebab_chunk.parsers.registry import get_parser_by_version

VERSIONS = ("md-mistune-v1", "md-pyromark-v1")


def generated_corpus(total_bytes: int) -> corpora.Corpus:
    """The varied generated Markdown of ``bench_markdown`` as a :class:`corpora.Corpus`."""
    texts = markdown_corpus(total_bytes)
    return corpora.Corpus(
        name="generated",
        media_type="text/markdown",
        documents=tuple(
            corpora.Document(f"gen/{i}.md", text.encode("utf-8")) for i, text in enumerate(texts)
        ),
        source=f"benchmarks/corpus.py markdown_corpus({total_bytes:,})",
    )


def _parse_all(parser: Parser, corpus: corpora.Corpus) -> list[CanonicalDocument | None]:
    out: list[CanonicalDocument | None] = []
    for doc in corpus.documents:
        try:
            out.append(parser.parse(doc.raw, doc.name))
        except ParseError:
            out.append(None)
    return out


def _same_document(a: CanonicalDocument | None, b: CanonicalDocument | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.model_copy(update={"parser_version": ""}) == b.model_copy(
        update={"parser_version": ""}
    )


def _matched(
    a: CanonicalDocument | None,
    b: CanonicalDocument | None,
    key: Callable[[Any], Hashable],
) -> tuple[int, int]:
    """(blocks matched as multisets under ``key``, the larger block count)."""
    left = Counter(key(block) for block in (a.blocks if a else ()))
    right = Counter(key(block) for block in (b.blocks if b else ()))
    return sum((left & right).values()), max(sum(left.values()), sum(right.values()))


def _structure(block: Any) -> Hashable:
    span = block.spans[0]
    return (block.kind, span.char_start, span.char_end)


def _identity(block: Any) -> Hashable:
    identity: Hashable = block
    return identity


def agreement(corpus: corpora.Corpus) -> dict[str, Any]:
    """Agreement figures of the two parser versions on ``corpus`` (see the module doc)."""
    mistune = _parse_all(get_parser_by_version(VERSIONS[0]), corpus)
    pyromark = _parse_all(get_parser_by_version(VERSIONS[1]), corpus)
    identical_docs = 0
    blocks = [0, 0]
    structure = [0, 0]
    examples: list[str] = []
    for doc, a, b in zip(corpus.documents, mistune, pyromark, strict=True):
        identical_docs += _same_document(a, b)
        for totals, key in ((blocks, _identity), (structure, _structure)):
            matched, larger = _matched(a, b, key)
            totals[0] += matched
            totals[1] += larger
        if len(examples) < 5 and not _same_document(a, b):
            examples.append(_first_difference(doc.name, a, b))
    return {
        "documents": corpus.n_documents,
        "MB": round(corpus.megabytes, 3),
        "documents identical %": 100 * identical_docs / max(corpus.n_documents, 1),
        "blocks identical %": 100 * blocks[0] / max(blocks[1], 1),
        "structure (kind + span) %": 100 * structure[0] / max(structure[1], 1),
        "blocks compared": blocks[1],
        "examples": examples,
    }


def _first_difference(name: str, a: CanonicalDocument | None, b: CanonicalDocument | None) -> str:
    if a is None or b is None:
        return f"{name}: only one parser failed"
    for x, y in zip(a.blocks, b.blocks, strict=False):
        if x != y:
            return (
                f"{name}: mistune {x.kind} {x.text[:40]!r} vs pyromark {y.kind} {y.text[:40]!r}"
            )
    if len(a.blocks) != len(b.blocks):
        return f"{name}: {len(a.blocks)} vs {len(b.blocks)} blocks"
    return f"{name}: same blocks, other document fields differ"


def throughput(corpus: corpora.Corpus, repeats: int) -> dict[str, Any]:
    """MB/s of both parser versions, timed in interleaved rounds of cold runs."""
    times: dict[str, list[float]] = {v: [] for v in VERSIONS}
    for _ in range(repeats):
        for version in VERSIONS:
            start = time.perf_counter()
            parser = get_parser_by_version(version)
            for doc in corpus.documents:
                with contextlib.suppress(ParseError):  # failures are counted by agreement()
                    parser.parse(doc.raw, doc.name)
            times[version].append(time.perf_counter() - start)
    out: dict[str, Any] = {}
    for version, seconds in times.items():
        median = statistics.median(seconds)
        out[version] = {
            "MB/s": corpus.megabytes / median,
            "seconds": median,
            "seconds min": min(seconds),
            "seconds max": max(seconds),
        }
    out["md-pyromark-v1 speed-up"] = out[VERSIONS[1]]["MB/s"] / out[VERSIONS[0]]["MB/s"]
    return out


def _corpora(quick: bool) -> Sequence[corpora.Corpus]:
    real = corpora.combine(
        "real-markdown", corpora.distribution_readmes(), corpora.fixture_markdown()
    )
    return (
        corpora.subset(real, 200_000) if quick else real,
        corpora.typical_document(),
        generated_corpus(1_000_000 if quick else 5_000_000),
    )


def run(quick: bool) -> dict[str, Any]:
    """Agreement and throughput on every corpus."""
    repeats = 3 if quick else 5
    out: dict[str, Any] = {"versions": list(VERSIONS), "repeats": repeats}
    for corpus in _corpora(quick):
        print(f"  {corpus.name}: {corpus.n_documents} documents, {corpus.megabytes:.2f} MB")
        out[corpus.name] = {
            "source": corpus.source,
            "agreement": agreement(corpus),
            "throughput": throughput(corpus, repeats),
        }
    return out
