"""Retrieval quality side by side: our labels and peer chunkers, one embedder, one metric.

``python -m benchmarks eval`` (``./run_local.sh bench eval``) scores, in one run and on each
development set (:data:`SETS`, every one by default: the ``prose`` set of the
``chunking_evaluation`` project, the ``handbook`` set of structured Markdown, and that
handbook rendered as HTML and as PDF, ``handbook-html`` and ``handbook-pdf``, by
:mod:`benchmarks.eval_renders`), with the same embedding model
(:class:`kebab_chunk.eval.bert.Embedder`, all-MiniLM-L6-v2 by default) and the same
retrieval and metric code as ``kebab-chunk eval`` (:mod:`kebab_chunk.eval.run`,
:mod:`kebab_chunk.eval.metrics`):

- **ours**: each ``--setting`` (default :data:`DEFAULT_SETTINGS`: the default labels
  ``md-heading-v3`` and ``hybrid-v4`` and ``md-header-chars-v2``, each at the three targets
  that give mean chunk sizes near 350, 450 and 550 characters on the handbook, no overlap,
  ``bytes-3``), through :func:`kebab_chunk.eval.run.evaluate` itself, embedding each
  record's ``embed_text`` (what the pipeline writes to be embedded); a chunk's character
  ranges come from its spans;
- **peers**: what a user would otherwise run, all counting characters. On the prose set
  (:data:`PEERS`): LangChain ``RecursiveCharacterTextSplitter``, ``semchunk``, chonkie
  ``RecursiveChunker`` and ``TokenChunker``, no overlap. On the handbook
  (:data:`MARKDOWN_PEERS`): the LangChain MarkdownChunker recipe
  (``MarkdownHeaderTextSplitter`` on headers ``#`` to ``####`` keeping the header lines,
  then ``RecursiveCharacterTextSplitter``), plain LangChain recursive, semchunk and chonkie
  ``RecursiveChunker``. A peer's chunk text is embedded; a header-aware peer (the recipe) is
  also scored with its header metadata prepended (header values one per line, then the
  text) as a row of its own, so that it gets the context our ``embed_text`` has. The recipe
  is also scored at the settings users pick (:data:`RECIPE_EXTRAS`, with overlap). On the
  renderings each peer reads what its users' loader gives (:data:`HTML_PEERS`,
  :data:`PDF_PEERS`: LangChain's HTML header recipe on the markup; BeautifulSoup text or
  pypdf's page text, each page split alone, into the text splitters); ours there are each
  set's ``settings`` (:data:`HTML_SETTINGS`, :data:`PDF_SETTINGS`). A set's ``not_run``
  peers are listed with the reason.

**Locating peer chunks.** A peer returns strings, some re-joined with other whitespace than
the source has (``MarkdownHeaderTextSplitter`` strips lines and joins them with ``"  \\n"``),
so :func:`locate` finds each chunk in its document with ``str.find`` from just after the
previous located chunk's start, else whitespace-insensitively (whitespace runs collapsed on
both sides) from there, else whitespace-insensitively from the start of the document, and
maps the match back to source offsets. A chunk found by none of these is left out of the
index and counted in the ``not located`` column.

**Comparable sizes.** Chunk size settings mean different things per library, so the peers'
sizes are calibrated: our settings form size *levels* (each label's settings by rising
target: its first target is level 1, its second level 2, ...), and a level's size is the
mean chunk size (characters) of our settings in it, per data set. For each peer and level,
the ``chunk_size`` (from 50 to 3,000 characters in steps of 10) whose chunks' mean size is
nearest the level is used (ties: the smaller size). Calibration only chunks; nothing is
embedded for it. With every label at the same targets a level is a target, as before.

**Scores.** Every index holds the chunks of all files the questions name, in ``corpus_id``
order then chunk order, as ``kebab-chunk eval`` builds it, so ties in similarity resolve the
same way. A question is scored against all of its references, each in its own file
(:func:`kebab_chunk.eval.metrics.score_files`), with the character-range metric (recall,
precision, IoU) and the word-trigram overlap measure. Questions of
:data:`kebab_chunk.eval.APART_TYPES` (the handbook's "Contextual Anaphora") are left out of
the headline numbers and shown only in the table by question type.

Results go to ``benchmarks/results/eval-peers.md`` and ``eval-peers.json`` (sets not
measured in a run keep their figures from that file, each set with its date; machine,
versions of every library, model, k, and per data set each row's chunk statistics, scores
and scores by question type), rows sorted by mean chunk size. The data is read in place
(``--set``, or ``--corpus``/``--questions`` for another folder); it is never copied into the
repository. Not part of the default ``python -m benchmarks`` run: it needs that data and the
``bench`` and ``eval`` extras.
"""

from __future__ import annotations

import argparse
import bisect
import functools
import importlib.metadata
import json
import math
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, cast

import numpy as np
import numpy.typing as npt

from benchmarks import eval_renders, report
from kebab_chunk.errors import KebabError
from kebab_chunk.eval import APART_TYPES, EmbedMode, run
from kebab_chunk.eval.bert import DEFAULT_MODEL
from kebab_chunk.eval.metrics import OverlapSummary, Range, Summary
from kebab_chunk.tokenizers import get_tokenizer

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
EVAL_DATA = Path("/work/shared/eval")
#: Each label's targets (bytes-3 tokens), chosen so that the mean chunk size on the
#: handbook is near 350, 450 and 550 characters (measured 2026-11-27: see
#: docs/benchmarks.md, "Retrieval quality").
TARGETS_BY_LABEL: dict[str, tuple[int, ...]] = {
    "md-heading-v3": (170, 225, 290),
    "hybrid-v4": (200, 256, 320),
    "md-header-chars-v2": (200, 256, 320),
}


def _settings(targets: Mapping[str, tuple[int, ...]]) -> tuple[str, ...]:
    return tuple(f"{label}:{t}:0" for label, ts in targets.items() for t in ts)


DEFAULT_SETTINGS = _settings(TARGETS_BY_LABEL)
#: The rendered sets' labels, at the handbook's targets: the default labels of their
#: format. md-header-chars reads only Markdown and text; md-heading does not read PDF, and
#: on HTML it keeps every rendered block whole and alone (its chunks are exact source
#: slices), so its size does not follow its target and would skew the size levels.
HTML_SETTINGS = _settings({"hybrid-v4": TARGETS_BY_LABEL["hybrid-v4"]})
PDF_SETTINGS = _settings({"pdf-page-v3": (200, 256, 320), "hybrid-v4": (200, 256, 320)})
SIZE_GRID = range(50, 3001, 10)
TOKENIZER = "bytes-3"  # the mean tokens column, as kebab-chunk eval's default
EMBED: EmbedMode = "embed_text"  # what our records offer to embed (a peer has only its text)
#: The header levels the LangChain MarkdownChunker recipe splits on, and its metadata keys.
MARKDOWN_HEADERS = (
    ("#", "Header 1"),
    ("##", "Header 2"),
    ("###", "Header 3"),
    ("####", "Header 4"),
)
#: The header tags LangChain's HTML recipe splits on, and its metadata keys.
HTML_HEADERS = (("h1", "Header 1"), ("h2", "Header 2"), ("h3", "Header 3"), ("h4", "Header 4"))
#: ``(chunk_size, chunk_overlap)`` in characters at which users run the recipe, scored as is.
RECIPE_EXTRAS = ((400, 50), (800, 100))


@dataclass(frozen=True)
class PeerChunk:
    """One peer chunk: its text and the header values its splitter attached (outermost
    first; empty for a splitter that attaches none)."""

    text: str
    headers: tuple[str, ...] = ()


#: A peer's splitter of one text: plain strings, or chunks with header metadata.
Split = Callable[[str], Sequence[str | PeerChunk]]


@dataclass(frozen=True)
class Piece:
    """What a peer's loader hands its splitter: a text, the 1-based PDF page it comes from
    (None: the whole file) and whether it is the file's decoded text itself (then the
    chunks are located in it and cite character ranges; otherwise they cite none and only
    the overlap measure scores them)."""

    text: str
    page: int | None = None
    source: bool = False


#: A peer's loader: the pieces of text a user's loader makes of one corpus file.
Load = Callable[[run.CorpusDocument], tuple[Piece, ...]]


def decoded(document: run.CorpusDocument) -> tuple[Piece, ...]:
    """The file's decoded text, as is (Markdown and plain text; none for a binary file)."""
    return (Piece(document.text or "", source=True),)


def raw_markup(document: run.CorpusDocument) -> tuple[Piece, ...]:
    """The file's markup for a splitter that parses it (LangChain's HTML header splitter);
    its chunks are extracted text, so they cite no ranges."""
    return (Piece(document.text or ""),)


@functools.lru_cache(maxsize=256)
def soup_text(document: run.CorpusDocument) -> tuple[Piece, ...]:
    """The text LangChain's ``BSHTMLLoader`` makes of an HTML file with its defaults:
    BeautifulSoup's ``get_text()`` with no separator (parser ``html.parser`` here)."""
    from bs4 import BeautifulSoup

    return (Piece(BeautifulSoup(document.raw, "html.parser").get_text()),)


@functools.lru_cache(maxsize=256)
def pypdf_pages(document: run.CorpusDocument) -> tuple[Piece, ...]:
    """One piece per page, as LangChain's ``PyPDFLoader`` loads a PDF with its defaults:
    pypdf's ``extract_text()`` of each page, its 1-based number kept."""
    import io

    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(document.raw))
    return tuple(Piece(page.extract_text(), n) for n, page in enumerate(reader.pages, 1))


class Build(Protocol):
    """A factory from a chunk size (and overlap) in characters to a splitter."""

    def __call__(self, size: int, overlap: int = 0) -> Split:
        """The splitter at ``size`` characters with ``overlap`` characters of overlap."""
        ...


@dataclass(frozen=True)
class Peer:
    """A peer chunker: its name, the distribution whose version is reported, a factory of
    splitters, whether its chunks carry header metadata (then it is also scored with the
    headers prepended to what is embedded), the ``(chunk_size, overlap)`` settings users
    pick, scored as is beside the calibrated sizes, and the loader that turns a file into
    the text it splits (:func:`decoded` for Markdown and text)."""

    name: str
    package: str
    build: Build
    headers: bool = False
    extras: tuple[tuple[int, int], ...] = ()
    load: Load = decoded


def _langchain(size: int, overlap: int = 0) -> Split:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap)
    return splitter.split_text


@functools.lru_cache(maxsize=256)
def _header_sections(text: str) -> list[Any]:
    """``MarkdownHeaderTextSplitter``'s sections of ``text`` (header lines kept), kept
    because they do not depend on the chunk size that calibration varies."""
    from langchain_text_splitters import MarkdownHeaderTextSplitter

    sections = MarkdownHeaderTextSplitter(list(MARKDOWN_HEADERS), strip_headers=False)
    return list(sections.split_text(text))


@functools.lru_cache(maxsize=256)
def _html_header_sections(markup: str) -> list[Any]:
    """``HTMLHeaderTextSplitter``'s sections of an HTML page (``h1`` to ``h4``)."""
    from langchain_text_splitters import HTMLHeaderTextSplitter

    return list(HTMLHeaderTextSplitter(list(HTML_HEADERS)).split_text(markup))


def _recipe(sections: Callable[[str], list[Any]], keys: Sequence[str]) -> Build:
    """A LangChain header recipe: ``sections`` of a text (documents whose metadata holds
    the header values under ``keys``), each cut by ``RecursiveCharacterTextSplitter``; the
    header values are the chunk's metadata."""

    def build(size: int, overlap: int = 0) -> Split:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        cutter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap)

        def split(text: str) -> list[str | PeerChunk]:
            documents = cutter.split_documents(sections(text))
            return [
                PeerChunk(
                    d.page_content, tuple(str(d.metadata[k]) for k in keys if k in d.metadata)
                )
                for d in documents
            ]

        return split

    return build


#: LangChain's MarkdownChunker recipe: ``MarkdownHeaderTextSplitter`` sections (``#`` to
#: ``####``, header lines kept in the text), each cut by ``RecursiveCharacterTextSplitter``.
_markdown_recipe = _recipe(_header_sections, [key for _, key in MARKDOWN_HEADERS])
#: Its HTML counterpart: ``HTMLHeaderTextSplitter`` sections (``h1`` to ``h4``) of the page.
_html_recipe = _recipe(_html_header_sections, [key for _, key in HTML_HEADERS])


def _semchunk(size: int, overlap: int = 0) -> Split:
    import semchunk

    chunker = semchunk.chunkerify(len, size)  # type: ignore[attr-defined]
    if overlap:
        return lambda text: cast(list[str], chunker(text, overlap=overlap))
    return lambda text: cast(list[str], chunker(text))


def _chonkie_recursive(size: int, overlap: int = 0) -> Split:
    from chonkie import RecursiveChunker

    chunker = RecursiveChunker(tokenizer="character", chunk_size=size)
    return lambda text: [c.text for c in chunker.chunk(text)]


def _chonkie_token(size: int, overlap: int = 0) -> Split:
    from chonkie import TokenChunker

    chunker = TokenChunker(tokenizer="character", chunk_size=size, chunk_overlap=overlap)
    return lambda text: [c.text for c in chunker.chunk(text)]


LANGCHAIN = Peer("LangChain RecursiveCharacterTextSplitter", "langchain-text-splitters", _langchain)
SEMCHUNK = Peer("semchunk", "semchunk", _semchunk)
CHONKIE_RECURSIVE = Peer("chonkie RecursiveChunker", "chonkie", _chonkie_recursive)
RECIPE = Peer(
    "LangChain MarkdownChunker recipe",
    "langchain-text-splitters",
    _markdown_recipe,
    headers=True,
    extras=RECIPE_EXTRAS,
)
#: The prose set's peers.
PEERS = (
    LANGCHAIN,
    SEMCHUNK,
    CHONKIE_RECURSIVE,
    Peer("chonkie TokenChunker", "chonkie", _chonkie_token),
)
#: The handbook's peers: what a user would run on Markdown files.
MARKDOWN_PEERS = (RECIPE, LANGCHAIN, SEMCHUNK, CHONKIE_RECURSIVE)


def _loaded(peer: Peer, loader: str, load: Load) -> Peer:
    return replace(peer, name=f"{loader} + {peer.name}", load=load)


#: The HTML rendering's peers: LangChain's HTML header recipe on the markup, and the text
#: splitters on the text LangChain's ``BSHTMLLoader`` gives.
HTML_PEERS = (
    Peer(
        "LangChain HTMLHeaderTextSplitter recipe",
        "langchain-text-splitters",
        _html_recipe,
        headers=True,
        extras=RECIPE_EXTRAS,
        load=raw_markup,
    ),
    *(
        _loaded(p, "BeautifulSoup text", soup_text)
        for p in (LANGCHAIN, SEMCHUNK, CHONKIE_RECURSIVE)
    ),
)
#: The PDF rendering's peers: the text splitters on the pages LangChain's ``PyPDFLoader``
#: gives, each page split on its own as ``split_documents`` does.
PDF_PEERS = tuple(
    _loaded(p, "pypdf pages", pypdf_pages) for p in (LANGCHAIN, SEMCHUNK, CHONKIE_RECURSIVE)
)
CACHE = HERE.parent / ".cache" / "eval"
#: Unstructured (``partition`` + ``chunk_by_title``) is the loader-and-chunker users pair
#: with HTML and PDF, but it does not run offline: checked 2026-11-28 with 0.27.35.
UNSTRUCTURED = (
    "Unstructured partition + chunk_by_title",
    "unstructured 0.27.35 installs from PyPI but its partitioners download spaCy's "
    "en_core_web_sm model from GitHub on first use (unstructured/nlp/tokenize.py), and "
    "the official model is not on PyPI; with the download blocked partition_html fails and "
    "partition_pdf returns no elements, so it cannot be scored offline",
)


@dataclass(frozen=True)
class DataSet:
    """A development set: its name (``--set``), a title, its corpus folder, its questions
    file and the peers scored on it. A rendered set (``render``: ``html`` or ``pdf``) is
    the Markdown set at ``corpus``/``questions`` rendered into that format under
    ``.cache/eval/NAME`` first (:mod:`benchmarks.eval_renders`). ``not_run`` names peers a
    user would pair with the format that cannot run here, and why; ``settings`` are ours
    scored on it unless ``--setting`` is given."""

    name: str
    title: str
    corpus: Path
    questions: Path
    peers: tuple[Peer, ...] = PEERS
    render: eval_renders.Kind | None = None
    not_run: tuple[tuple[str, str], ...] = ()
    settings: tuple[str, ...] = DEFAULT_SETTINGS

    def files(self) -> tuple[Path, Path]:
        """The corpus folder and questions file to score (rendered first if need be)."""
        if self.render is None:
            return self.corpus, self.questions
        return eval_renders.render(self.corpus, self.questions, CACHE / self.name, self.render)


HANDBOOK = EVAL_DATA / "gitlab-handbook-dev"
#: The handbook's renderings: format, how it is made, its peers and our settings on it.
_RENDERINGS: tuple[tuple[eval_renders.Kind, str, tuple[Peer, ...], tuple[str, ...]], ...] = (
    ("html", "rendered by mistune", HTML_PEERS, HTML_SETTINGS),
    ("pdf", "typeset by fpdf2", PDF_PEERS, PDF_SETTINGS),
)
SETS: dict[str, DataSet] = {
    "prose": DataSet(
        "prose",
        "Prose: chunking_evaluation development split (two plain-prose documents)",
        EVAL_DATA / "chunking-evaluation-dev",
        EVAL_DATA / "chunking-evaluation-dev" / "questions.csv",
        PEERS,
    ),
    "handbook": DataSet(
        "handbook",
        "Structured Markdown: GitLab handbook development split (50 pages)",
        HANDBOOK / "corpus",
        HANDBOOK / "questions.csv",
        MARKDOWN_PEERS,
    ),
    **{
        f"handbook-{kind}": DataSet(
            f"handbook-{kind}",
            f"{kind.upper()}: the handbook's 50 pages {how} (content-only references)",
            HANDBOOK / "corpus",
            HANDBOOK / "questions.csv",
            peers,
            render=kind,
            not_run=(UNSTRUCTURED,),
            settings=settings,
        )
        for kind, how, peers, settings in _RENDERINGS
    },
}


def version(package: str) -> str:
    """The installed version of ``package``, or ``not installed``."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


# --- locating peer chunks ------------------------------------------------------------------

_SPACES = re.compile(r"\s+")


def collapse(text: str) -> tuple[str, list[int]]:
    """``text`` with every whitespace run replaced by one space, and for each character of
    that the offset in ``text`` it comes from (a run maps to its first character)."""
    parts: list[str] = []
    offsets: list[int] = []
    position = 0
    for run_ in _SPACES.finditer(text):
        parts += [text[position : run_.start()], " "]
        offsets += [*range(position, run_.start()), run_.start()]
        position = run_.end()
    parts.append(text[position:])
    offsets += range(position, len(text))
    return "".join(parts), offsets


class Locator:
    """Finds chunks of one text: exactly, or with whitespace runs collapsed on both sides
    (the source collapsed once, here)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.collapsed, self.offsets = collapse(text)

    def find(self, chunk: str, cursor: int) -> Range | None:
        """``chunk``'s range in the text: exactly from ``cursor``, else whitespace-
        insensitively from ``cursor``, else whitespace-insensitively from the start; None
        when it is not there or holds only whitespace. A whitespace-insensitive match runs
        from the source offset of its first non-space character to just after its last."""
        if not chunk.strip():
            return None
        start = self.text.find(chunk, cursor)
        if start >= 0:
            return (start, start + len(chunk))
        needle = _SPACES.sub(" ", chunk).strip()
        begin = bisect.bisect_left(self.offsets, cursor)
        found = self.collapsed.find(needle, begin)
        if found < 0:
            found = self.collapsed.find(needle)
        if found < 0:
            return None
        return (self.offsets[found], self.offsets[found + len(needle) - 1] + 1)


def locate(text: str, chunks: Sequence[str]) -> tuple[list[Range | None], int]:
    """Each chunk's range in ``text`` (None when not found, :meth:`Locator.find`) searching
    from just after the previous located chunk's start, and how many were not found.
    Starting after the previous start, not its end, finds overlapping chunks; starting
    after it, not at it, finds a repeated chunk at its next occurrence. Empty and
    whitespace-only chunks are not found: they cover nothing and would only add noise."""
    locator = Locator(text)
    ranges: list[Range | None] = []
    missing = 0
    cursor = 0
    for chunk in chunks:
        where = locator.find(chunk, cursor)
        ranges.append(where)
        if where is None:
            missing += 1
        else:
            cursor = where[0] + 1
    return ranges, missing


def _peer_chunks(split: Split, text: str) -> list[PeerChunk]:
    return [c if isinstance(c, PeerChunk) else PeerChunk(c) for c in split(text)]


def headed(chunk: PeerChunk) -> str:
    """What is embedded for a header-aware peer's chunk in its "+ headers" row: the header
    values one per line, then the text."""
    return "\n".join([*chunk.headers, chunk.text])


def peer_index(
    split: Split,
    corpus: Mapping[str, run.CorpusDocument],
    embed: Callable[[PeerChunk], str] = lambda c: c.text,
    load: Load = decoded,
) -> tuple[list[run.IndexedChunk], int]:
    """A peer's chunks of every document as the index holds them (documents by
    ``corpus_id``, then chunk order; ``load`` makes each file's pieces, each split on its
    own; ``embed`` says what is embedded, the chunk text by default) and the count of
    chunks left out. Chunks of a file's decoded text are located in it (those not found are
    left out); chunks of other pieces cite no ranges, only their page."""
    counter = get_tokenizer(TOKENIZER)
    indexed: list[run.IndexedChunk] = []
    missing_total = 0
    for corpus_id, document in sorted(corpus.items()):
        position = 0
        for piece in load(document):
            chunks = _peer_chunks(split, piece.text)
            if piece.source:
                ranges, missing = locate(piece.text, [c.text for c in chunks])
                missing_total += missing
            else:
                ranges = [None] * len(chunks)
            for chunk, where in zip(chunks, ranges, strict=True):
                position += 1
                if piece.source and where is None:
                    continue
                if not chunk.text.strip():
                    continue
                indexed.append(
                    run.IndexedChunk(
                        corpus_id=corpus_id,
                        position=position - 1,
                        ranges=None if where is None else (where,),
                        embed_text=embed(chunk),
                        chars=len(chunk.text),
                        tokens=counter.count_tokens(chunk.text),
                        exact=where is not None and piece.text[where[0] : where[1]] == chunk.text,
                        text=chunk.text,
                        pages=frozenset() if piece.page is None else frozenset({piece.page}),
                    )
                )
    return indexed, missing_total


# --- calibration ---------------------------------------------------------------------------


def mean_chars(
    split: Split, corpus: Mapping[str, run.CorpusDocument], load: Load = decoded
) -> float:
    """Mean characters per non-empty chunk over all documents (what calibration matches)."""
    sizes = [
        len(c.text)
        for _, d in sorted(corpus.items())
        for piece in load(d)
        for c in _peer_chunks(split, piece.text)
        if c.text
    ]
    return math.fsum(sizes) / len(sizes) if sizes else 0.0


def grid_means(peer: Peer, corpus: Mapping[str, run.CorpusDocument]) -> list[tuple[int, float]]:
    """The mean chunk size of ``peer`` at every ``chunk_size`` of :data:`SIZE_GRID`."""
    return [(size, mean_chars(peer.build(size), corpus, peer.load)) for size in SIZE_GRID]


def nearest(means: Sequence[tuple[int, float]], level: float) -> tuple[int, float]:
    """The ``(chunk_size, mean)`` whose mean is nearest ``level`` (ties: the smaller size)."""
    return min(means, key=lambda sm: (abs(sm[1] - level), sm[0]))


def calibrate(
    peer: Peer, corpus: Mapping[str, run.CorpusDocument], levels: Sequence[float]
) -> list[tuple[int, float]]:
    """For each level, the grid ``chunk_size`` whose mean chunk size is nearest it (ties:
    the smaller size), with that mean."""
    means = grid_means(peer, corpus)
    return [nearest(means, level) for level in levels]


def size_levels(settings: Sequence[run.Setting]) -> list[list[int]]:
    """Our settings grouped into size levels: level n holds each label's n-th setting by
    rising target (indexes into ``settings``)."""
    by_label: dict[str, list[int]] = {}
    for i, setting in enumerate(settings):
        by_label.setdefault(setting.label, []).append(i)
    levels: list[list[int]] = []
    for indexes in by_label.values():
        ranked = sorted(indexes, key=lambda i: settings[i].policy.target_tokens)
        for n, i in enumerate(ranked):
            if n == len(levels):
                levels.append([])
            levels[n].append(i)
    return levels


# --- scoring -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scored:
    """One row's scores: the range metric and the overlap measure over the questions not
    set apart (None: the measure covers none of them), and every question type's group."""

    summary: Summary | None
    overlap: OverlapSummary | None
    per_type: dict[str, run.Group] = field(default_factory=dict)


def score_peer(
    indexed: Sequence[run.IndexedChunk],
    questions: Sequence[run.Question],
    question_vectors: npt.NDArray[np.float64],
    embedder: run.TextEmbedder,
    k: int,
) -> Scored:
    """Retrieve and score exactly as :func:`kebab_chunk.eval.run.evaluate` does for one
    setting (same embedding, brute-force top k with stable ties, each question against all
    its references in their own files, types of ``APART_TYPES`` left out of the summaries)."""
    chunk_vectors = run._embed(embedder, [c.embed_text for c in indexed])
    top = run._top_k(question_vectors, chunk_vectors, k)
    scores, overlaps, _ = run._scored(questions, indexed, top)
    rows = list(zip(questions, scores, overlaps, strict=True))
    kept = run._group(
        [s for q, s, _ in rows if q.type not in APART_TYPES],
        [o for q, _, o in rows if q.type not in APART_TYPES],
    )
    per_type = {
        kind: run._group(
            [s for q, s, _ in rows if q.type == kind], [o for q, _, o in rows if q.type == kind]
        )
        for kind in run._type_order(q.type for q in questions)
    }
    return Scored(kept.ranges, kept.overlap, per_type)


def score_index(
    indexed: Sequence[run.IndexedChunk],
    questions: Sequence[run.Question],
    question_vectors: Any,
    embedder: run.TextEmbedder,
    k: int,
) -> Summary:
    """The range metric's summary of :func:`score_peer` (what the experiments read)."""
    summary = score_peer(indexed, questions, question_vectors, embedder, k).summary
    if summary is None:
        raise ValueError("no question has only character-range references")
    return summary


def _scores_json(scored: Scored) -> dict[str, Any]:
    s, o = scored.summary, scored.overlap
    return {
        "recall": s.recall if s else None,
        "recall_std": s.recall_std if s else None,
        "precision": s.precision if s else None,
        "precision_std": s.precision_std if s else None,
        "iou": s.iou if s else None,
        "iou_std": s.iou_std if s else None,
        "overlap_recall": o.recall if o else None,
        "overlap_precision": o.precision if o else None,
        "per_type": {
            kind: {
                "questions": group.questions,
                "ranged": group.ranges.questions if group.ranges else 0,
                "recall": group.ranges.recall if group.ranges else None,
                "iou": group.ranges.iou if group.ranges else None,
                "overlap_recall": group.overlap.recall if group.overlap else None,
                "apart": kind in APART_TYPES,
            }
            for kind, group in scored.per_type.items()
        },
    }


def _row(
    *,
    ours: bool,
    chunker: str,
    package: str,
    settings: str,
    embedded: str,
    indexed: Sequence[run.IndexedChunk] | None = None,
    chunks: int = 0,
    mean_chars: float = 0.0,
    mean_tokens: float = 0.0,
    scored: Scored,
    extra: Mapping[str, Any],
) -> dict[str, Any]:
    if indexed is not None:
        chunks = len(indexed)
        mean_chars = math.fsum(c.chars for c in indexed) / len(indexed)
        mean_tokens = math.fsum(c.tokens for c in indexed) / len(indexed)
    return {
        "ours": ours,
        "chunker": chunker,
        "version": version(package),
        "settings": settings,
        "embedded": embedded,
        "chunks": chunks,
        "mean_chars": mean_chars,
        "mean_tokens": mean_tokens,
        **_scores_json(scored),
        **extra,
    }


def _peer_rows(
    peer: Peer,
    size: int,
    overlap: int,
    corpus: Mapping[str, run.CorpusDocument],
    score: Callable[[Sequence[run.IndexedChunk]], Scored],
    extra: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """The rows of one peer at one size: its chunk text embedded, and for a header-aware
    peer also its headers prepended."""
    split = peer.build(size, overlap) if overlap else peer.build(size)
    variants: list[tuple[str, Callable[[PeerChunk], str]]] = [("chunk text", lambda c: c.text)]
    if peer.headers:
        variants.append(("headers + chunk text", headed))
    rows = []
    for embedded, embed in variants:
        print(f"  {peer.name} at {size}/{overlap} chars, embedding {embedded} ...", flush=True)
        indexed, missing = peer_index(split, corpus, embed, peer.load)
        rows.append(
            _row(
                ours=False,
                chunker=peer.name + (" + headers" if embed is headed else ""),
                package=peer.package,
                settings=f"chunk_size {size} chars, overlap {overlap}",
                embedded=embedded,
                indexed=indexed,
                scored=score(indexed),
                extra={
                    "chunk_size": size,
                    "chunk_overlap": overlap,
                    "ranges": "find",
                    "not_located": missing,
                    **extra,
                },
            )
        )
    return rows


def _our_row(r: run.SettingResult) -> dict[str, Any]:
    """One of our settings' row."""
    return _row(
        ours=True,
        chunker=r.setting.label,
        package="kebab-chunk",
        settings=f"{r.setting.policy.target_tokens} target tokens ({TOKENIZER}), overlap "
        f"{r.setting.policy.overlap_tokens}",
        embedded=EMBED,
        chunks=r.chunks,
        mean_chars=r.mean_chars,
        mean_tokens=r.mean_tokens,
        scored=Scored(r.summary, r.overlap, r.per_type),
        extra={"setting": r.setting.name, "ranges": "spans", "exact_share": r.exact_share},
    )


def _progress_line(row: Mapping[str, Any]) -> str:
    return (
        f"    {row['chunker']} ({row['settings']}): {row['mean_chars']:.0f} chars, recall "
        f"{_cell(row['recall'])}, overlap recall {_cell(row['overlap_recall'])}"
    )


def measure(
    corpus_dir: Path,
    questions_file: Path,
    settings: Sequence[str],
    k: int,
    peers: Sequence[Peer] = PEERS,
    embedder: run.TextEmbedder | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Score our settings and the calibrated peers on one data set; the figures as one
    JSON object.

    The work goes level by level (our settings of the level, then each peer calibrated to
    it), then the peers' fixed settings; after each row ``on_row`` gets the figures so far
    (``"complete": False``), so a long run can save what it has measured. Each of our
    settings is scored by :func:`kebab_chunk.eval.run.evaluate` as it would be in one call
    with all of them (settings are scored independently)."""
    questions = run.load_questions(questions_file)
    corpus = run.load_corpus(corpus_dir, questions)
    parsed = [run.parse_setting(s, TOKENIZER) for s in settings]
    if embedder is None:
        from kebab_chunk.eval.bert import Embedder

        embedder = Embedder.load()
    question_vectors = run._embed(embedder, [q.question for q in questions])

    def score(indexed: Sequence[run.IndexedChunk]) -> Scored:
        assert embedder is not None
        return score_peer(indexed, questions, question_vectors, embedder, k)

    kept = [q for q in questions if q.type not in APART_TYPES]
    apart = [q.type for q in questions if q.type in APART_TYPES]
    figures: dict[str, Any] = {
        "complete": False,
        "versions": {
            "kebab-chunk": version("kebab-chunk"),
            **{p.package: version(p.package) for p in peers},
        },
        "questions": len(questions),
        "summarized_questions": len(kept),
        "range_questions": sum(q.ranged for q in kept),
        "multi_file_questions": sum(len({r.corpus_id for r in q.cited}) > 1 for q in questions),
        "apart": {kind: apart.count(kind) for kind in APART_TYPES if kind in apart},
        "types": run._type_order(q.type for q in questions),
        "questions_file": questions_file.name,
        "corpus": [
            {
                "corpus_id": cid,
                "file": d.name,
                "chars": None if d.text is None else len(d.text),
                "bytes": len(d.raw),
            }
            for cid, d in sorted(corpus.items())
        ],
        "size_levels": [],
        "not_run": {},
        "rows": [],
    }
    rows: list[dict[str, Any]] = figures["rows"]
    not_run: dict[str, str] = figures["not_run"]

    def add(row: dict[str, Any]) -> None:
        rows.append(row)
        rows.sort(key=lambda r: (r["mean_chars"], not r["ours"], r["chunker"], r["settings"]))
        print(_progress_line(row), flush=True)
        if on_row is not None:
            on_row(figures)

    means: dict[str, list[tuple[int, float]]] = {}
    for n, group in enumerate(size_levels(parsed), start=1):
        chosen = [parsed[i] for i in group]
        print(f"level {n}: scoring {', '.join(s.name for s in chosen)} ...", flush=True)
        result = run.evaluate(
            questions, corpus, chosen, embedder, k=k, embed=EMBED, model=DEFAULT_MODEL
        )
        level = math.fsum(r.mean_chars for r in result.results) / len(result.results)
        figures["size_levels"].append(
            {"level": n, "settings": [s.name for s in chosen], "mean_chars": level}
        )
        for r in result.results:
            add(_our_row(r))
        for peer in peers:
            if peer.name in not_run:
                continue
            if peer.name not in means:
                try:
                    means[peer.name] = grid_means(peer, corpus)
                except ImportError as exc:
                    not_run[peer.name] = f"{peer.package} is not installed ({exc})"
                    print(f"  {peer.name}: not run, {not_run[peer.name]}", flush=True)
                    continue
            size, _ = nearest(means[peer.name], level)
            extra = {"matched_level": n, "matched_level_chars": level, "calibrated": True}
            for row in _peer_rows(peer, size, 0, corpus, score, extra):
                add(row)
    for peer in peers:
        if peer.name in not_run:
            continue
        for size, overlap in peer.extras:
            for row in _peer_rows(peer, size, overlap, corpus, score, {"calibrated": False}):
                add(row)
    figures["complete"] = True
    return figures


# --- the page ------------------------------------------------------------------------------


def _cell(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _corpus_line(figures: Mapping[str, Any]) -> str:
    files = figures["corpus"]
    if any(c["chars"] is None for c in files):  # a binary format: its size in bytes
        return f"{len(files)} files ({sum(c.get('bytes', 0) for c in files):,} bytes)"
    chars = sum(c["chars"] for c in files)
    if len(files) <= 3:
        return ", ".join(f"{c['file']} ({c['chars']:,} chars)" for c in files)
    return f"{len(files)} files ({chars:,} chars)"


def render_set(figures: Mapping[str, Any], k: int) -> list[str]:
    """One data set's section: what was scored, the table (one row per setting, sorted by
    mean chunk size) and, when the questions have types, the table by question type."""
    levels = ", ".join(
        f"level {lv['level']} {lv['mean_chars']:.0f} chars ({', '.join(lv['settings'])})"
        for lv in figures["size_levels"]
    )
    apart = "".join(
        f"; {count} {kind} questions set apart (by type only)"
        for kind, count in sorted(figures.get("apart", {}).items())
    )
    multi = figures.get("multi_file_questions", 0)
    stopped = (
        ""
        if figures.get("complete", True)
        else " **Incomplete: the run was stopped before every row below was measured.**"
    )
    measured = f"Measured {figures['date']}. " if figures.get("date") else ""
    lines = [
        f"## {figures['title']}" if "title" in figures else "## Data set",
        "",
        f"{measured}Top {k} of one index over {_corpus_line(figures)}; "
        f"{figures['questions']} questions"
        f" ({multi} citing several files){apart}. Headline scores over "
        f"{figures.get('summarized_questions', figures['questions'])} questions. Peer sizes "
        f"calibrated to our size levels: {levels}.{stopped}",
        "",
        f"| chunker | version | settings | embedded | chunks | mean chars | mean tokens "
        f"| not located | recall@{k} % | overlap recall@{k} % | precision@{k} % | IoU@{k} % |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in figures["rows"]:
        name = f"**{r['chunker']}**" if r["ours"] else r["chunker"]
        located = "–" if r["ours"] else str(r["not_located"])
        lines.append(
            f"| {name} | {r['version']} | {r['settings']} | {r['embedded']} | {r['chunks']} "
            f"| {r['mean_chars']:.0f} | {r['mean_tokens']:.0f} | {located} "
            f"| {_cell(r['recall'])} | {_cell(r.get('overlap_recall'))} "
            f"| {_cell(r['precision'])} | {_cell(r['iou'])} |"
        )
    for name, reason in sorted(figures["not_run"].items()):
        lines.append(f"\n{name}: not run, {reason}.")
    types = figures.get("types", [])
    if types:
        lines += _type_table(figures, types, k)
    return lines


def _type_table(figures: Mapping[str, Any], types: Sequence[str], k: int) -> list[str]:
    """Recall by question type for every row: character recall / overlap recall, the
    types set apart last and marked."""
    counts = {
        kind: next(
            (r["per_type"][kind]["questions"] for r in figures["rows"] if kind in r["per_type"]),
            0,
        )
        for kind in types
    }
    heads = [f"{kind} ({counts[kind]}{', apart' if kind in APART_TYPES else ''})" for kind in types]
    lines = [
        "",
        f"Recall@{k} % by question type, character recall / overlap recall (types set apart "
        "are not in the headline scores):",
        "",
        "| chunker | settings | embedded | mean chars | " + " | ".join(heads) + " |",
        "|---|---|---|---|" + "---|" * len(types),
    ]
    for r in figures["rows"]:
        name = f"**{r['chunker']}**" if r["ours"] else r["chunker"]
        cells = []
        for kind in types:
            group = r["per_type"].get(kind)
            if group is None:
                cells.append("–")
            else:
                cells.append(f"{_cell(group['recall'])} / {_cell(group['overlap_recall'])}")
        lines.append(
            f"| {name} | {r['settings']} | {r['embedded']} | {r['mean_chars']:.0f} | "
            + " | ".join(cells)
            + " |"
        )
    return lines


def render_markdown(page: Mapping[str, Any]) -> str:
    """The figures of every data set as one Markdown page: how they were measured, then a
    section per set (:func:`render_set`)."""
    k = page["k"]
    m = page["machine"]
    versions = ", ".join(f"{name} {v}" for name, v in sorted(page["versions"].items()))
    lines = [
        "# Retrieval quality: ours and peers, one embedder, one metric",
        "",
        f"Measured {page['date']} on {m['cpu']} ({m['cpus']} cores), {m['platform']}, "
        f"Python {m['python']}, by `python -m benchmarks eval`. Versions: {versions}. "
        f"Model {page['model']}; top {k} of one index per data set. Recall, precision and "
        "IoU over character ranges, as `kebab-chunk eval` defines them (docs/guide/eval.md), "
        "each question against all its references in their own files; overlap recall: the "
        "share of the references' word trigrams found in the retrieved chunks of their "
        "file. Averaged over questions.",
        "",
        "Ours embed each record's `embed_text` and cite their character ranges from their "
        "spans. A peer embeds its chunk text; a header-aware peer also with its header values "
        "prepended, one per line (rows *+ headers*). A peer's chunks are located with "
        "`str.find` from just after the previous chunk's start, else with whitespace runs "
        "collapsed on both sides (from there, then from the start); chunks not found are "
        "left out (column *not located*). Calibrated peer sizes give the mean chunk size "
        "nearest each size level of ours (level n: each label's n-th target); the recipe is "
        f"also run at the settings users pick. Mean tokens: `{page['tokenizer']}` of the "
        "chunk text. Ours in bold.",
    ]
    for figures in page["sets"].values():
        lines += ["", *render_set(figures, k)]
    return "\n".join(lines) + "\n"


def page_figures(sets: Mapping[str, Mapping[str, Any]], k: int) -> dict[str, Any]:
    """The results file's object: the run's date, machine, versions, model, k and embed
    modes, and each data set's figures under its name."""
    versions: dict[str, str] = {}
    for figures in sets.values():
        versions.update(figures["versions"])
    return {
        "date": time.strftime("%Y-%m-%d"),
        "machine": report.machine(),
        "versions": versions,
        "model": DEFAULT_MODEL,
        "embed": {"ours": EMBED, "peers": "text; header-aware peers also headers + text"},
        "k": k,
        "tokenizer": TOKENIZER,
        "sets": dict(sets),
    }


def kept_sets(results: Path, k: int, measured: set[str]) -> dict[str, dict[str, Any]]:
    """The figures of the sets a run does not measure, from an earlier results file with
    the same model and k (each with the date it was measured), so that re-measuring one set
    keeps the others; none when there is no such file."""
    try:
        page = json.loads(results.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    if page.get("k") != k or page.get("model") != DEFAULT_MODEL:
        return {}
    return {
        name: {"date": page.get("date"), **figures}
        for name, figures in page.get("sets", {}).items()
        if name not in measured and figures.get("complete", True)
    }


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks eval``: measure, print the tables, write the results files."""
    parser = argparse.ArgumentParser(
        prog="benchmarks eval",
        description="Score our chunker settings and peer chunkers with the same embedder and "
        "retrieval metric on the development sets; write "
        "benchmarks/results/eval-peers.{md,json}.",
    )
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        choices=sorted(SETS),
        help="a development set to score; repeatable (default: every set, "
        + ", ".join(
            f"{s.name} = {s.corpus}" + (f" rendered as {s.render}" if s.render else "")
            for s in SETS.values()
        )
        + ")",
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        help="score this corpus folder instead of --set, with the prose set's peers "
        "(default: none, the sets of --set)",
    )
    parser.add_argument(
        "--questions",
        type=Path,
        help="questions CSV for --corpus (default: questions.csv in --corpus)",
    )
    parser.add_argument(
        "--setting",
        action="append",
        help="one of our settings, LABEL[:TARGET[:OVERLAP]]; repeatable (default per set: "
        + "; ".join(f"{s.name}: {', '.join(s.settings)}" for s in SETS.values())
        + ")",
    )
    parser.add_argument(
        "--k", type=int, default=5, help="chunks retrieved per question (default: 5)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=RESULTS,
        help=f"folder for eval-peers.md and .json (default: {RESULTS})",
    )
    args = parser.parse_args(argv)
    if args.corpus is not None:
        questions = args.questions or args.corpus / "questions.csv"
        chosen = [DataSet(args.corpus.name, str(args.corpus), args.corpus, questions, PEERS)]
    else:
        chosen = [SETS[name] for name in dict.fromkeys(args.sets or SETS)]
    sets: dict[str, dict[str, Any]] = {}
    kept = kept_sets(args.out / "eval-peers.json", args.k, {d.name for d in chosen})

    def write(current: Mapping[str, Any] | None = None, name: str = "") -> None:
        measured = {**sets, **({name: current} if current else {})}
        page = page_figures({**kept, **measured}, args.k)
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "eval-peers.md").write_text(render_markdown(page), encoding="utf-8")
        (args.out / "eval-peers.json").write_text(
            json.dumps(page, indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )

    today = time.strftime("%Y-%m-%d")
    for data in chosen:
        print(f"== {data.name}: {data.title}", flush=True)

        def partial(figures: Mapping[str, Any], data: DataSet = data) -> None:
            write({"title": data.title, "date": today, **figures}, data.name)

        try:
            corpus_dir, questions_file = data.files()
            figures = measure(
                corpus_dir,
                questions_file,
                args.setting or data.settings,
                args.k,
                data.peers,
                on_row=partial,
            )
            figures["not_run"].update(data.not_run)
        except KebabError as exc:
            print(f"benchmarks eval: {exc}", file=sys.stderr)
            return 2
        sets[data.name] = {"title": data.title, "date": today, **figures}
        write()
        print("\n".join(render_set(sets[data.name], args.k)) + "\n", flush=True)
    print(f"wrote {args.out / 'eval-peers.md'} and eval-peers.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
