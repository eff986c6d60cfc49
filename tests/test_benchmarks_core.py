"""The compiled-core benchmark's harness: verdicts, peers that cannot run, the report.

Nothing here times anything that matters: the race runs under ``./run_local.sh bench``.
"""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks import bench_core, corpora

STS = bench_core.STS
OURS = "ours core: md-heading-v2"


def test_the_verdict_names_each_corpus_that_falls_short() -> None:
    races: dict[str, dict[str, Any]] = {
        "fast": {OURS: {"MB/s (cpu)": 14.0}, STS: {"MB/s (cpu)": 10.0}},
        "slow": {OURS: {"MB/s (cpu)": 5.0}, STS: {"MB/s (cpu)": 10.0}},
    }
    assert bench_core.verdict(races) == "NOT met: slow 0.50x"
    assert bench_core.verdict({"fast": races["fast"]}) == "met"
    assert bench_core.verdict({"x": {OURS: {"not run": "absent"}}}).startswith("not judged")


def test_hybrid_v3_is_judged_against_semchunk() -> None:
    hybrid, semchunk = bench_core.HYBRID, bench_core.SEMCHUNK
    races: dict[str, dict[str, Any]] = {
        "a": {hybrid: {"MB/s (cpu)": 3.0}, semchunk: {"MB/s (cpu)": 12.0}, OURS: {}},
    }
    assert bench_core.verdict(races, hybrid, semchunk) == "NOT met: a 0.25x"
    assert bench_core.HYBRID in bench_core.CONTENDERS


def test_a_contender_that_cannot_run_is_reported_not_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def build(corpus: corpora.Corpus) -> bench_core.Work:
        return lambda: len(corpus.documents)

    monkeypatch.setattr(
        bench_core,
        "CONTENDERS",
        {"present": (build, None), STS: (build, None), "absent": (build, "no_such_module_x")},
    )
    monkeypatch.setattr(bench_core, "MIN_RUN_S", 0.0)
    doc = corpora.Document("a.md", b"# A\n\ntext\n")
    corpus = corpora.Corpus("tiny", "text/markdown", (doc,), "a test")
    race = bench_core.race(corpus, rounds=1)
    assert race["absent"] == {"not run": "no_such_module_x is not installed"}
    assert race["present"]["chunks"] == 1
    assert race["present"][f"vs {STS}"] > 0
    page = bench_core.report(
        {
            "clock": "c",
            "settings": "s",
            "corpora": {"tiny": {"corpus": corpus.summary(), "race": race}},
            "md-heading-v2 with the core >= 1.0x semantic-text-splitter": "met",
        }
    )
    assert "| absent | not run: no_such_module_x is not installed | | |" in page
    assert page.rstrip().endswith("met")
