"""Pipeline runs shared by the incremental and diff tests, each run at most once per session.

Corpora: ``v1`` has 100 generated Markdown documents; ``v2`` is ``v1`` with one paragraph of
``doc042.md`` edited; ``v3`` is ``v2`` without ``doc017.md`` and with a new ``doc100.md``.
``fixtures`` is the repository's mixed corpus (PDFs, broken files, an empty file).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from apache_beam.metrics.metric import MetricsFilter

from kebab_chunk.beam import metrics
from kebab_chunk.beam.graph import run
from kebab_chunk.cli.run import parse_args
from tests.beam.helpers import CORPUS, QUIET, quiet_beam
from tests.beam.runners import CONFIGS
from tests.incremental.corpus import copy_corpus, edit_one_paragraph, markdown_doc, write_corpus

quiet_beam()

CHANGED, DELETED, ADDED = "doc042.md", "doc017.md", "doc100.md"
IN_MEMORY = CONFIGS["in_memory"]
PORTABLE = CONFIGS["portable_loopback"]
SMALL_POLICY = ["--target-tokens", "64", "--overlap-tokens", "8"]

#: name -> (corpus, previous run name or None, extra arguments, runner arguments)
SPECS: dict[str, tuple[str, str | None, list[str], list[str]]] = {
    "full_v1": ("v1", None, [], IN_MEMORY),
    "incr_v2": ("v2", "full_v1", [], IN_MEMORY),
    "full_v2": ("v2", None, [], IN_MEMORY),
    "incr_v3": ("v3", "incr_v2", [], IN_MEMORY),
    "policy_v2": ("v2", "full_v2", SMALL_POLICY, IN_MEMORY),
    "labels_v2": ("v2", "full_v2", ["--labels", "md-heading-v3,hybrid-v1"], IN_MEMORY),
    "select_v2": ("v2", "labels_v2", ["--labels", "hybrid-v1"], IN_MEMORY),
    "full_fixtures": ("fixtures", None, [], IN_MEMORY),
    "incr_fixtures": ("fixtures", "full_fixtures", [], IN_MEMORY),
    "portable_fixtures": ("fixtures", "full_fixtures", [], PORTABLE),
}


@dataclass
class Run:
    output: Path
    manifest: dict[str, Any]
    counters: dict[str, int]

    def counter(self, name: str) -> int:
        return self.counters.get(name, 0)

    @property
    def parsed(self) -> int:
        """Documents that came out of the parse stage (kebab_chunk/documents_parsed[*])."""
        return sum(n for k, n in self.counters.items() if k.startswith("documents_parsed["))


class Runs:
    def __init__(self, base: Path, corpora: dict[str, Path]) -> None:
        self.base = base
        self.corpora = corpora
        self._cache: dict[str, Run] = {}

    def __getitem__(self, name: str) -> Run:
        if name not in self._cache:
            self._cache[name] = self._run(name)
        return self._cache[name]

    def _run(self, name: str) -> Run:
        corpus, previous, extra, runner = SPECS[name]
        output = self.base / "out" / name
        argv = ["--input", str(self.corpora[corpus]), "--output", str(output), *extra]
        if previous is not None:
            argv += ["--previous", str(self[previous].output)]
        config, beam_args = parse_args([*argv, *runner, *QUIET])
        result, _ = run(config, beam_args)
        found = result.metrics().query(MetricsFilter().with_namespace(metrics.NAMESPACE))
        counters = {c.key.metric.name: int(c.committed) for c in found["counters"]}
        manifest = json.loads((output / "manifest.json").read_text())
        return Run(output, manifest, counters)


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    base = tmp_path_factory.mktemp("incremental")
    v1 = write_corpus(base / "v1", 100)
    v2 = copy_corpus(v1, base / "v2")
    edit_one_paragraph(v2 / CHANGED)
    v3 = copy_corpus(v2, base / "v3")
    (v3 / DELETED).unlink()
    (v3 / ADDED).write_text(markdown_doc(random.Random(99), "A new document", 3), "utf-8")
    yield Runs(base, {"v1": v1, "v2": v2, "v3": v3, "fixtures": CORPUS})
