"""Where ``kebab-chunk run --update`` spends its time and memory (issue 30).

Runs the update in this process, as the in-memory DirectRunner does anyway (the launcher
is the whole job but for the parse/chunk helpers), on a hard-link copy of a finished full
output (``cp -al``: the update only adds files and renames manifest.json into place):

    <beam venv>/bin/python benchmarks/experiments/update_profile/profile_update.py \\
        --corpus WORK/corpus --base WORK/out/direct_in_memory --work /tmp/upd-prof [--cprofile]

``WORK`` is a ``benchmarks scale --workdir`` directory after its incremental
configurations (the corpus holds the 1% churn). Prints, per phase, wall seconds and the
process's RSS after it (launch: ``load_base`` + first snapshot; the pipeline; inside it
the base documents read, the commit and its change feed), Beam's per-transform
process-bundle milliseconds (FnApiRunner monitoring infos, the ten largest) and, with
``--cprofile``, the top functions by cumulative and own time (cProfile roughly doubles
pure-Python time, so use its shares, not its seconds). ``--repeat`` runs several updates
on fresh copies.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import os
import pstats
import resource
import shutil
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

PHASES: dict[str, list[float]] = defaultdict(list)
RSS_AFTER: dict[str, int] = {}
RESULTS: list[Any] = []


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _hwm_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class _Peak:
    """Samples this process's RSS every 0.2 s; the peak per phase label."""

    def __init__(self) -> None:
        self.label = "start"
        self.peaks: dict[str, float] = defaultdict(float)
        self.timeline: list[tuple[float, float]] = []  # (seconds since start, RSS MB)
        self._t0 = time.perf_counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(0.2):
            rss = _rss_mb()
            self.peaks[self.label] = max(self.peaks[self.label], rss)
            self.timeline.append((time.perf_counter() - self._t0, rss))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


PEAK = _Peak()


def _timed(name: str, fn: Callable[..., Any], *, generator: bool = False) -> Callable[..., Any]:
    if generator:  # time spent inside the generator only; its outputs still stream
        @functools.wraps(fn)
        def gen(*args: Any, **kwargs: Any) -> Any:
            spent = 0.0
            it = iter(fn(*args, **kwargs))
            while True:
                start = time.perf_counter()
                try:
                    item = next(it)
                except StopIteration:
                    break
                finally:
                    spent += time.perf_counter() - start
                yield item
            PHASES[name].append(spent)
            RSS_AFTER[name] = int(_rss_mb())

        return gen

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            PHASES[name].append(time.perf_counter() - start)
            RSS_AFTER[name] = int(_rss_mb())

    return wrapper


def instrument() -> None:
    from kebab_chunk.beam import graph, update
    from kebab_chunk.cli import run as cli_run

    graph.load_base = _timed("launch: load_base", graph.load_base)
    graph.first_snapshot = _timed("launch: first_snapshot", graph.first_snapshot)
    graph.build_pipeline = _timed("pipeline: build", graph.build_pipeline)
    execute = cli_run.execute

    def execute_and_keep(config: Any, beam_args: Any, output: str) -> Any:
        PEAK.label = "pipeline"
        result = execute(config, beam_args, output)
        RESULTS.append(result)
        PEAK.label = "after"
        return result

    cli_run.execute = _timed("pipeline: execute (p.run to the end)", execute_and_keep)
    fn = update._ReadBaseDocumentsFn
    fn.process = _timed("in job: read base documents files", fn.process, generator=True)
    commit = update._CommitFn
    commit.process = _timed("in job: commit (all of it)", commit.process, generator=True)
    commit._changes = _timed("in job: commit / change feed", commit._changes)
    update._index_rows = _timed("in job: commit / _index_rows (each call)", update._index_rows)


def transform_msecs(result: Any, top: int = 10) -> list[tuple[str, int]]:
    """Process-bundle msecs per PTransform from the FnApiRunner's monitoring infos."""
    from apache_beam.metrics import monitoring_infos as mi

    totals: dict[str, int] = defaultdict(int)
    try:
        infos = list(result.monitoring_infos())
    except AttributeError:
        return []
    for info in infos:
        if info.urn not in (mi.PROCESS_BUNDLE_MSECS_URN, mi.START_BUNDLE_MSECS_URN,
                            mi.FINISH_BUNDLE_MSECS_URN):
            continue
        label = info.labels.get(mi.PTRANSFORM_LABEL) or info.labels.get("PTRANSFORM", "?")
        totals[label] += int(mi.extract_counter_value(info))
    return sorted(totals.items(), key=lambda kv: -kv[1])[:top]


def by_composite(rows: list[tuple[str, int]], depth: int) -> list[tuple[str, int]]:
    """Per-transform msecs summed over the first ``depth`` parts of their names."""
    totals: dict[str, int] = defaultdict(int)
    for label, msecs in rows:
        totals["/".join(label.split("/")[:depth])] += msecs
    return sorted(totals.items(), key=lambda kv: -kv[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--base", type=Path, required=True, help="a finished full output")
    parser.add_argument("--work", type=Path, required=True, help="copies go here (new dir)")
    parser.add_argument("--cprofile", action="store_true")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=False)
    target = args.work / "out"
    shutil.copytree(args.base, target, copy_function=os.link)

    instrument()
    from kebab_chunk.cli import main as cli_main

    argv_run = ["run", "--input", str(args.corpus), "--output", str(target), "--update",
                "--direct_running_mode=in_memory"]
    PEAK.start()
    profiler = cProfile.Profile() if args.cprofile else None
    start = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    status = cli_main(argv_run)
    if profiler is not None:
        profiler.disable()
    wall = time.perf_counter() - start
    PEAK.stop()
    print(f"exit {status}, wall {wall:.1f} s, peak RSS (VmHWM) {_hwm_mb():,.0f} MB")
    print("peak RSS MB by phase:", {k: round(v) for k, v in PEAK.peaks.items()})
    line = PEAK.timeline[:: max(1, len(PEAK.timeline) // 30)]
    print("RSS timeline (s: MB):", ", ".join(f"{t:.0f}: {m:.0f}" for t, m in line))
    print("\nphase | calls | seconds | RSS MB after")
    for name, values in PHASES.items():
        print(f"{name} | {len(values)} | {sum(values):.2f} | {RSS_AFTER.get(name, 0)}")
    if RESULTS:
        every = transform_msecs(RESULTS[0], top=10_000)
        print(f"\nBeam process-bundle msecs, all transforms: {sum(m for _, m in every):,} ms")
        print("per transform (top 15):")
        for label, msecs in every[:15]:
            print(f"  {msecs:>8,} ms  {label}")
        for depth in (1, 2):
            print(f"summed by the first {depth} part(s) of the name:")
            for label, msecs in by_composite(every, depth):
                print(f"  {msecs:>8,} ms  {label}")
    if profiler is not None:
        profiler.dump_stats(str(args.work / "update.prof"))
        for key in ("cumulative", "tottime"):
            print(f"\ncProfile by {key}:")
            pstats.Stats(profiler, stream=sys.stdout).sort_stats(key).print_stats(args.top)
    return status


if __name__ == "__main__":
    sys.exit(main())
