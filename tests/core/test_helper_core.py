"""The job's helper parses and chunks Markdown in the compiled core, with the same result.

``ParseChunkTask`` hands a Markdown document the default parser reads to the core when the
chunks travel encoded (the job's path): one call gives its spill entries and its outcome
(the facts parsing records: title, front matter, warnings, block count). Compared here
with what the Python path gives for the same document (entries byte for byte, outcome
field for field), on the fixtures and the installed READMEs with a nesting limit low
enough to warn; then a whole job over the fixture corpus, core against Python, file for
file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.corpora import distribution_readmes, fixture_markdown
from kebab_chunk._core import using
from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.elements import RawDocument
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.model.ids import content_hash
from kebab_chunk.parsers.base import ParseLimits
from kebab_chunk.parsers.registry import ParserChoice
from kebab_chunk.runtime.tasks import Chunked, ChunkTask, ParseChunkTask, ParseTask
from tests.beam.helpers import CORPUS, QUIET, REPO, part_files, subprocess_env
from tests.core.test_table_differential import _FRONT, _PART, POLICIES

LABELS = ("md-heading-v2", "md-heading-v3")


def _task(labels: tuple[str, ...] | None, limits: ParseLimits, **kw: Any) -> ParseChunkTask:
    policy = ChunkPolicy(target_tokens=128, overlap_tokens=16)
    chunkers = {label: get_chunker(label) for label in labels or ("md-heading-v3",)}
    return ParseChunkTask(
        ParseTask(kw.get("parse_fn"), limits),
        ChunkTask(labels, policy, chunkers, encode=True),
    )


def _run(task: ParseChunkTask, raw: RawDocument) -> tuple[Chunked, list[Any]]:
    entered: list[Any] = []
    result = task.run(raw, lambda stage, note: entered.append((stage, note)))
    assert isinstance(result, Chunked)
    return result, entered


def _documents() -> list[RawDocument]:
    docs = list(fixture_markdown().documents) + list(distribution_readmes().documents)[:80]
    return [
        RawDocument(f"docs/{i}-{d.name.replace('/', '_')}.md", None, content_hash(d.raw), d.raw)
        for i, d in enumerate(docs)
    ]


@pytest.mark.parametrize("labels", [None, LABELS], ids=["default-labels", "both-labels"])
def test_the_helper_gives_the_python_result_through_the_core(
    compiled: ModuleType, labels: tuple[str, ...] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = 0
    original = compiled.chunk_markdown

    def counting(*args: Any) -> Any:
        nonlocal calls
        calls += 1
        return original(*args)

    monkeypatch.setattr(compiled, "chunk_markdown", counting)
    warned = 0
    for limits in (ParseLimits(), ParseLimits(max_nesting=3)):
        task = _task(labels, limits)
        for raw in _documents():
            fast, fast_entered = _run(task, raw)
            with using("python"):
                slow, slow_entered = _run(task, raw)
            assert fast.outcome == slow.outcome, raw.source_uri
            assert fast.encoded == slow.encoded, raw.source_uri
            assert fast.errors == slow.errors == ()
            assert fast_entered == slow_entered
            warned += bool(fast.outcome.warnings)
    assert calls >= len(_documents()) * 2  # the core really answered
    assert warned > 0  # the nesting warning and front matter were compared too


@settings(max_examples=120, deadline=None)
@given(
    _FRONT,
    st.lists(_PART, min_size=1, max_size=25).map("".join),
    st.sampled_from(POLICIES),
    st.sampled_from([None, LABELS]),
)
def test_generated_markdown_gives_the_same_entries_and_facts(
    compiled: ModuleType,
    front: str,
    body: str,
    policy: ChunkPolicy,
    labels: tuple[str, ...] | None,
) -> None:
    """Spill entries written by the core (marshal rows, JSON digests of control characters,
    quotes and non-ASCII text) are byte for byte those Python writes."""
    data = (front + body).encode("utf-8")
    raw = RawDocument("generated/doc.md", None, content_hash(data), data)
    chunkers = {label: get_chunker(label) for label in labels or ("md-heading-v3",)}
    task = ParseChunkTask(
        ParseTask(None, ParseLimits(max_nesting=4)),
        ChunkTask(labels, policy, chunkers, encode=True),
    )
    fast, _ = _run(task, raw)
    with using("python"):
        slow, _ = _run(task, raw)
    assert fast.outcome == slow.outcome
    assert fast.encoded == slow.encoded


def test_the_core_is_not_used_for_another_markdown_parser(
    compiled: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: Any) -> Any:
        raise AssertionError("the core read a document another parser was chosen for")

    monkeypatch.setattr(compiled, "chunk_markdown", refuse)
    task = _task(None, ParseLimits(), parse_fn=ParserChoice.from_versions(["md-mistune-v1"]))
    fast, _ = _run(task, _documents()[0])
    assert fast.outcome.parser_version == "md-mistune-v1"


def _job(output: Path, mode: str) -> Path:
    cmd = [sys.executable, "-m", "pipelines.chunk_corpus", "--input", str(CORPUS)]
    done = subprocess.run(
        [*cmd, "--output", str(output), *QUIET],
        cwd=REPO,
        env=subprocess_env(KEBAB_CORE=mode),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return output


def test_a_job_writes_the_same_files_with_and_without_the_core(
    compiled: ModuleType, tmp_path: Path
) -> None:
    fast, slow = _job(tmp_path / "core", "native"), _job(tmp_path / "python", "python")
    assert part_files(fast) == part_files(slow)
    manifests = [json.loads((out / "manifest.json").read_text()) for out in (fast, slow)]
    for manifest in manifests:
        manifest.pop("run_info")
    assert manifests[0] == manifests[1]
    assert len(part_files(fast)) > 3
