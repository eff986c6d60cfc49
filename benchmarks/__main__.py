"""Run every ``benchmarks/bench_*.py`` module and record the figures.

Each module exposes ``run(quick: bool) -> dict``; figures are medians of repeated runs,
reported with their units. Results go to ``benchmarks/results/latest.json`` together with
the date and the machine, and a short table is printed. ``--quick`` shrinks the corpora
(useful to check the harness works); ``--only NAME`` runs one module.

``python -m benchmarks scale [--docs N] ...`` runs the scale benchmark instead
(``benchmarks/scale.py``: the whole job on N real documents on the DirectRunner and a Flink
cluster; an hour or more at the default size). Never part of the default or ``--quick`` run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
    }


def _flatten(prefix: str, value: Any, rows: list[tuple[str, str]]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), inner, rows)
    elif isinstance(value, float):
        rows.append((prefix, f"{value:,.3f}"))
    else:
        rows.append((prefix, str(value)))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["scale"]:
        from benchmarks import scale

        return scale.main(argv[1:])
    if argv[:1] == ["eval"]:  # retrieval quality, ours vs peers (bench_eval.py; not by default)
        from benchmarks import bench_eval

        return bench_eval.main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="benchmarks",
        epilog="python -m benchmarks scale --help: the scale benchmark (not run by default)",
    )
    parser.add_argument("--quick", action="store_true", help="small corpora, for a smoke run")
    parser.add_argument("--only", help="run only benchmarks/bench_<ONLY>.py")
    args = parser.parse_args(argv)

    names = sorted(p.stem for p in HERE.glob("bench_*.py") if p.stem != "bench_eval")
    if args.only:
        names = [n for n in names if n == f"bench_{args.only}"]
        if not names:
            print(f"no benchmark named {args.only!r}; see benchmarks/bench_*.py", file=sys.stderr)
            return 2
    results: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": _machine(),
        "quick": args.quick,
        "benchmarks": {},
    }
    for name in names:
        print(f"== {name}", flush=True)
        module = importlib.import_module(f"benchmarks.{name}")
        figures = module.run(quick=args.quick)
        results["benchmarks"][name.removeprefix("bench_")] = figures
        rows: list[tuple[str, str]] = []
        _flatten("", figures, rows)
        width = max((len(k) for k, _ in rows), default=0)
        for key, value in rows:
            print(f"  {key.ljust(width)}  {value}")
    out_dir = HERE / "results"
    out_dir.mkdir(exist_ok=True)
    target = out_dir / ("quick.json" if args.quick else "latest.json")
    if args.only and target.exists():  # keep the other modules' figures from earlier runs
        previous = json.loads(target.read_text(encoding="utf-8"))
        previous.get("benchmarks", {}).update(results["benchmarks"])
        results["benchmarks"] = previous.get("benchmarks", {})
    target.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {target.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
