"""Real corpora for the peer benchmark (only the Debian documentation is downloaded).

- :func:`distribution_readmes` — the long descriptions (PyPI READMEs) of the installed Python
  distributions, read with ``importlib.metadata``, kept when they are Markdown (declared
  ``text/markdown``, or undeclared but Markdown-looking), deduplicated by content. Which
  documents this yields depends on what is installed: the sizes are always reported.
- :func:`fixture_markdown` — every ``*.md`` file under ``fixtures/``, deduplicated.
- :func:`debian_markdown` — the Markdown documentation shipped in a few Debian packages
  (Node.js's API reference, Docker's engine API reference, npm's command docs): long
  real documentation pages with tables, code and front matter. The packages are fetched
  at bench time with ``apt-get download`` (no root needed) and unpacked with ``dpkg-deb``
  into ``.cache/bench-corpora`` (never committed); where apt is unavailable the corpus is
  reported as absent (:attr:`Corpus.absent`) instead of failing the run.
- :func:`fixture_pdfs` — the fixtures' PDFs (deduplicated) plus, optionally, a long PDF
  built in memory by ``fixtures/pdf/make_fixtures.py``.
- :func:`typical_document` — a generated Markdown document of ~10 pages / ~100 sections,
  the "typical document" of the hybrid chunker's latency target (< 100 ms).

Every loader returns a :class:`Corpus` of raw bytes in a deterministic order, so each
contender gets exactly the same input; :func:`subset` trims one for quick runs.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.metadata
import importlib.util
import random
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
CACHE = REPO / ".cache" / "bench-corpora"

#: Debian packages whose Markdown documentation makes the "Debian docs" corpus: reference
#: pages of tens to hundreds of KB with tables, code blocks and front matter.
DEBIAN_DOC_PACKAGES = ("nodejs-doc", "docker-doc", "npm")

__all__ = [
    "Corpus",
    "Document",
    "combine",
    "debian_markdown",
    "distribution_readmes",
    "fixture_markdown",
    "fixture_pdfs",
    "looks_like_markdown",
    "subset",
    "typical_document",
]


@dataclass(frozen=True)
class Document:
    """One input: a corpus-relative name and its raw bytes."""

    name: str
    raw: bytes

    @property
    def text(self) -> str:
        """The UTF-8 text (with replacement characters for invalid bytes), for str-only peers."""
        return self.raw.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class Corpus:
    """Named, ordered documents of one media type."""

    name: str
    media_type: str
    documents: tuple[Document, ...]
    source: str  # one line saying where the documents come from
    absent: str | None = None  # why the corpus could not be built here (then it is empty)

    @property
    def n_documents(self) -> int:
        return len(self.documents)

    @property
    def n_bytes(self) -> int:
        return sum(len(d.raw) for d in self.documents)

    @property
    def megabytes(self) -> float:
        """Size in MB (10**6 bytes), the unit of every MB/s figure."""
        return self.n_bytes / 1e6

    def summary(self) -> dict[str, object]:
        """Sizes as reported in the results: documents, bytes, MB, and the source."""
        if self.absent is not None:
            return {"absent": self.absent, "media_type": self.media_type, "source": self.source}
        return {
            "documents": self.n_documents,
            "bytes": self.n_bytes,
            "MB": round(self.megabytes, 3),
            "media_type": self.media_type,
            "source": self.source,
        }


# --- Markdown detection ------------------------------------------------------------------

_ATX_HEADING = re.compile(r"^#{1,6}[ \t]+\S", re.MULTILINE)
_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)", re.MULTILINE)
_LINK = re.compile(r"\]\([^)\s]+\)")
_RST_DIRECTIVE = re.compile(r"^\.\. [\w-]+::", re.MULTILINE)
_RST_UNDERLINE = re.compile(r"^\S.*\n(=+|-+|~+|\^+)[ \t]*$", re.MULTILINE)


def looks_like_markdown(text: str, content_type: str | None) -> bool:
    """Whether a long description is Markdown.

    A declared ``Description-Content-Type`` decides (``text/markdown`` yes, anything else
    no). Undeclared text (PyPI renders it as reStructuredText) counts as Markdown only when
    it has Markdown markers (ATX headings, code fences, inline links) and no reST directive.
    Setext underlines are shared by both languages, so they decide nothing.
    """
    if content_type:
        return content_type.split(";", 1)[0].strip().lower() == "text/markdown"
    if not text.strip() or _RST_DIRECTIVE.search(text):
        return False
    markers = sum(
        1 for pattern in (_ATX_HEADING, _FENCE, _LINK) if pattern.search(text) is not None
    )
    return markers >= 2 or (markers == 1 and _RST_UNDERLINE.search(text) is None)


def _header(metadata: importlib.metadata.PackageMetadata, name: str) -> str | None:
    values = metadata.get_all(name)
    return str(values[0]) if values else None


def _description(metadata: importlib.metadata.PackageMetadata) -> str:
    """The long description: the metadata body, else the (folded) ``Description`` header."""
    body = metadata.get_payload()  # type: ignore[attr-defined]
    if isinstance(body, str) and body.strip():
        return body
    header = _header(metadata, "Description") or ""
    if not header or header.strip() == "UNKNOWN":
        return ""
    first, _, rest = header.partition("\n")
    # Metadata 1.x folds continuation lines with 8 spaces (or 7 and a bar).
    lines = [re.sub(r"^(        |       \|)", "", line) for line in rest.split("\n")]
    return "\n".join([first, *lines])


def distribution_readmes(paths: Iterable[str] | None = None) -> Corpus:
    """Markdown READMEs of the installed distributions (``paths``: other site dirs too).

    Deduplicated by content (the same README shipped by two versions counts once) and
    ordered by normalised distribution name, so the corpus is stable for one environment.
    """
    found: dict[str, tuple[str, bytes]] = {}  # content digest -> (name, raw)
    dists = (
        importlib.metadata.distributions()
        if paths is None
        else importlib.metadata.distributions(path=list(paths))
    )
    for dist in dists:
        metadata = dist.metadata
        if metadata is None:  # a broken dist-info folder
            continue
        text = _description(metadata)
        if not looks_like_markdown(text, _header(metadata, "Description-Content-Type")):
            continue
        raw = text.encode("utf-8", errors="surrogatepass")
        digest = hashlib.sha256(raw).hexdigest()
        name = re.sub(r"[-_.]+", "-", (_header(metadata, "Name") or "unnamed")).lower()
        if digest not in found or name < found[digest][0]:
            found[digest] = (name, raw)
    docs = sorted(found.values())
    return Corpus(
        name="dist-readmes",
        media_type="text/markdown",
        documents=tuple(Document(f"dists/{name}.md", raw) for name, raw in docs),
        source="Markdown long descriptions of the installed Python distributions",
    )


def _unique_files(paths: Iterable[Path], root: Path) -> tuple[Document, ...]:
    seen: set[bytes] = set()
    docs = []
    for path in sorted(paths, key=lambda p: p.relative_to(root).as_posix()):
        raw = path.read_bytes()
        digest = hashlib.sha256(raw).digest()
        if digest in seen:
            continue
        seen.add(digest)
        docs.append(Document(path.relative_to(root).as_posix(), raw))
    return tuple(docs)


def _is_text(raw: bytes) -> bool:
    """Valid UTF-8 without NUL bytes (the bad-input fixtures are not Markdown to race on)."""
    if b"\x00" in raw:
        return False
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def fixture_markdown(root: Path = FIXTURES) -> Corpus:
    """Every ``*.md`` under the fixtures that is UTF-8 text, deduplicated, in path order.

    Deliberately broken fixtures (binary data named ``.md``) are left out: they test error
    handling, and peers without a decoder would race on replacement characters.
    """
    docs = tuple(d for d in _unique_files(root.rglob("*.md"), root) if _is_text(d.raw))
    return Corpus(
        name="fixtures-md",
        media_type="text/markdown",
        documents=docs,
        source=f"*.md files under {root.name}/ (UTF-8 text only)",
    )


_MARKDOWN_NAME = re.compile(r"\.(md|markdown)(\.gz)?$")


def _fetch_deb(package: str, cache: Path) -> Path:
    """The unpacked tree of ``package`` under ``cache``, fetched and unpacked on first use.

    ``apt-get download`` needs no root; the ``.deb`` goes to a temporary directory and only
    the unpacked tree (named after the package file, so a new version unpacks anew) is kept.
    """
    done = sorted(cache.glob(f"{package}_*/.unpacked"))
    if done:
        return done[-1].parent
    with tempfile.TemporaryDirectory(prefix="kebab-bench-deb-") as tmp:
        subprocess.run(
            ["apt-get", "download", package],
            cwd=tmp,
            check=True,
            capture_output=True,
            timeout=300,
        )
        debs = sorted(Path(tmp).glob(f"{package}_*.deb"))
        if not debs:
            raise FileNotFoundError(f"apt-get download {package} left no .deb file")
        target = cache / debs[-1].name.removesuffix(".deb")
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        subprocess.run(
            ["dpkg-deb", "-x", str(debs[-1]), str(target)],
            check=True,
            capture_output=True,
            timeout=300,
        )
        (target / ".unpacked").write_text(package + "\n", encoding="utf-8")
        return target


def debian_markdown(packages: Iterable[str] = DEBIAN_DOC_PACKAGES, cache: Path = CACHE) -> Corpus:
    """Markdown files (``*.md``, ``*.markdown``, gzipped or not) shipped in Debian ``packages``.

    Fetched with ``apt-get download`` and ``dpkg-deb -x`` into ``cache`` on first use,
    then read from there. UTF-8 text only, deduplicated by content, in path order (paths
    start with the unpacked package's name, which carries its version). When apt or dpkg
    is missing or a download fails, the corpus is empty and :attr:`Corpus.absent` says why.
    """
    name, media = "debian-docs", "text/markdown"
    packages = tuple(packages)
    source = "Markdown documentation of the Debian packages " + ", ".join(packages)
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        return Corpus(name, media, (), source, absent="apt-get or dpkg-deb is not installed")
    files: list[tuple[str, bytes]] = []
    try:
        for package in packages:
            root = _fetch_deb(package, cache)
            for path in root.rglob("*"):
                if path.is_file() and _MARKDOWN_NAME.search(path.name):
                    raw = path.read_bytes()
                    if path.name.endswith(".gz"):
                        raw = gzip.decompress(raw)
                    rel = f"{root.name}/{path.relative_to(root).as_posix()}".removesuffix(".gz")
                    files.append((rel, raw))
    except (OSError, subprocess.SubprocessError) as exc:
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        return Corpus(name, media, (), source, absent=reason)
    seen: set[bytes] = set()
    docs = []
    for rel, raw in sorted(files):
        digest = hashlib.sha256(raw).digest()
        if digest in seen or not _is_text(raw):
            continue
        seen.add(digest)
        docs.append(Document(rel, raw))
    return Corpus(name, media, tuple(docs), source)


def fixture_pdfs(root: Path = FIXTURES, generated_pages: int = 0) -> Corpus:
    """The fixtures' PDFs (deduplicated), plus a ``generated_pages``-page generated PDF.

    Broken and encrypted fixtures are included on purpose: a consumer reports how many it
    could not parse. The generated PDF comes from the fixture generator (needs ``fpdf2``).
    """
    docs = list(_unique_files(root.rglob("*.pdf"), root))
    source = f"*.pdf files under {root.name}/"
    if generated_pages > 0:
        docs.append(Document(f"generated-{generated_pages}p.pdf", _long_pdf(generated_pages)))
        source += f" + a {generated_pages}-page PDF from fixtures/pdf/make_fixtures.py"
    return Corpus("fixtures-pdf", "application/pdf", tuple(docs), source)


def _long_pdf(pages: int) -> bytes:
    path = FIXTURES / "pdf" / "make_fixtures.py"
    spec = importlib.util.spec_from_file_location("kebab_bench_pdf_fixtures", path)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(f"cannot load the PDF fixture generator at {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    raw: bytes = module.long_pdf(pages)
    return raw


# --- the typical document ------------------------------------------------------------------

_PROSE = (
    "the chunk pipeline reads each document once and writes records keyed by a stable "
    "identifier so that a later run under a new version label can be compared row by row "
    "with the previous one while the source spans still point at the exact lines of text "
    "that every retrieval answer cites back to its reader"
)
_WORDS = _PROSE.split()


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(8, 20))]
    return " ".join(words).capitalize() + "."


def typical_document(pages: int = 10, sections_per_page: int = 10, seed: int = 3) -> Corpus:
    """One ~10-page Markdown document: ``pages`` chapters of ``sections_per_page`` sections.

    Each section is a few paragraphs (sometimes a list, a code block or a table) of about
    one "page tenth" (~350 bytes), so a heading-aware chunker yields about one chunk per
    section: ~100 chunks, about 40 KB of text.
    """
    rng = random.Random(seed)
    out = ["# Operations handbook", "", _sentence(rng), ""]
    for page in range(1, pages + 1):
        out += [f"## Chapter {page}", "", " ".join(_sentence(rng) for _ in range(2)), ""]
        for section in range(1, sections_per_page + 1):
            out += [f"### {page}.{section} {rng.choice(_WORDS).capitalize()}", ""]
            out += [" ".join(_sentence(rng) for _ in range(rng.randint(2, 3))), ""]
            extra = rng.random()
            if extra < 0.2:
                out += [f"- {_sentence(rng)}" for _ in range(3)] + [""]
            elif extra < 0.3:
                out += ["```sh", f"kebab-chunk run --chapter {page} --section {section}", "```", ""]
            elif extra < 0.4:
                out += ["| key | value |", "|---|---|"]
                out += [f"| {rng.choice(_WORDS)} | {rng.randint(1, 99)} |" for _ in range(3)] + [""]
    return Corpus(
        name="typical-10p",
        media_type="text/markdown",
        documents=(Document("typical-10p.md", "\n".join(out).encode("utf-8")),),
        source=f"generated: {pages} chapters x {sections_per_page} sections (seed {seed})",
    )


# --- shaping -------------------------------------------------------------------------------


def combine(name: str, *corpora: Corpus) -> Corpus:
    """One corpus made of several (same media type), documents in the given order."""
    media = {c.media_type for c in corpora}
    if len(media) != 1:
        raise ValueError(f"cannot combine corpora of media types {sorted(media)}; use one type.")
    return Corpus(
        name=name,
        media_type=corpora[0].media_type,
        documents=tuple(d for c in corpora for d in c.documents),
        source=" + ".join(c.source for c in corpora),
    )


def subset(corpus: Corpus, max_bytes: int) -> Corpus:
    """The documents that fit, in order, within ``max_bytes`` in total (at least one).

    Used by quick runs; the subset is deterministic, so quick runs stay comparable.
    """
    kept: list[Document] = []
    total = 0
    for doc in corpus.documents:
        if kept and total + len(doc.raw) > max_bytes:
            continue
        kept.append(doc)
        total += len(doc.raw)
    if len(kept) == corpus.n_documents:
        return corpus
    return Corpus(
        corpus.name,
        corpus.media_type,
        tuple(kept),
        f"{corpus.source} (first {max_bytes:,} bytes' worth)",
    )
