"""Shared helpers for the Beam tests: a plain-Python oracle and output readers.

The oracle chunks a corpus in an ordinary loop with the library's own parsers and chunkers,
no Beam involved, so pipeline tests compare against an independent computation instead of
numbers copied from an earlier pipeline run.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kebab_chunk.chunkers.base import Chunker
from kebab_chunk.chunkers.embedding import with_embedding
from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE, get_chunker
from kebab_chunk.errors import ParseError
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy
from kebab_chunk.output.reader import read_chunks, read_errors
from kebab_chunk.output.schema import row_to_chunk, row_to_error
from kebab_chunk.parsers.registry import parse_document

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "fixtures" / "corpus"
#: Keeps Beam's own workers quiet in test logs.
QUIET = ["--default_sdk_harness_log_level=WARNING"]


def quiet_beam() -> None:
    """Beam logs at INFO through the root logger; tests keep both at WARNING."""
    logging.getLogger().setLevel(logging.WARNING)
    logging.getLogger("apache_beam").setLevel(logging.WARNING)


def subprocess_env(**extra: str) -> dict[str, str]:
    """Environment for child processes: the repo importable, the venv's bin on PATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(extra)
    return env


def python_stdout(*args: str) -> str:
    """The stripped output of this interpreter run with ``args`` in the repo (a fresh
    process), failing the test when it exits non-zero."""
    done = subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


@dataclass
class Reference:
    """What a correct run over a corpus must produce."""

    chunks: list[Chunk] = field(default_factory=list)
    errors: set[tuple[str, str, str]] = field(default_factory=set)  # (uri, stage, type)
    buckets: dict[str, str] = field(default_factory=dict)  # uri -> chunked|zero_chunks|errors


def reference_run(
    corpus: Path, labels: Sequence[str] | None = None, policy: ChunkPolicy | None = None
) -> Reference:
    policy = policy or ChunkPolicy()
    ref = Reference()
    for path in sorted(p for p in corpus.rglob("*") if p.is_file()):
        uri = path.relative_to(corpus).as_posix()
        try:
            doc = parse_document(path.read_bytes(), uri)
        except ParseError as exc:
            ref.errors.add((uri, "parse", exc.error_type))
            ref.buckets[uri] = "errors"
            continue
        wanted = list(labels) if labels else DEFAULT_LABELS_BY_MEDIA_TYPE[doc.media_type]
        chunkers = [get_chunker(label) for label in wanted]
        produced = [
            c
            for ch in chunkers
            if ch.accepts(doc)
            for c in with_embedding(ch.chunk(doc, policy), ch, policy)
        ]
        ref.chunks.extend(produced)
        ref.buckets[uri] = "chunked" if produced else "zero_chunks"
    ref.chunks.sort(key=chunk_sort_key)
    return ref


def chunk_sort_key(chunk: Chunk) -> tuple[str, str]:
    return chunk.chunker_version, chunk.chunk_id


def output_chunks(output: Path | str) -> list[Chunk]:
    """Every chunk record of an output, read back from Parquet, in a stable order."""
    return sorted(
        (row_to_chunk(r) for r in read_chunks(str(output)).to_pylist()), key=chunk_sort_key
    )


def output_errors(output: Path | str) -> set[tuple[str, str, str]]:
    return {
        (e.source_uri, e.stage, e.error_type)
        for e in (row_to_error(r) for r in read_errors(str(output)).to_pylist())
    }


def part_files(output: Path | str) -> dict[str, bytes]:
    """Relative path -> bytes of every Parquet file of an output."""
    root = Path(output)
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.parquet"))}


def records(chunker: str | Chunker, doc: CanonicalDocument, policy: ChunkPolicy) -> list[Chunk]:
    """What the pipeline writes for ``doc`` under one label: its chunks with embed fields."""
    made = get_chunker(chunker) if isinstance(chunker, str) else chunker
    return with_embedding(made.chunk(doc, policy), made, policy)
