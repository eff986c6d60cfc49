"""``python -m fuzz``: fuzz every parser for a bounded time (``./run_local.sh fuzz``).

    python -m fuzz [--seconds N] [--engine auto|atheris|mutate] [--out DIR] [TARGET ...]

Each target (see ``--list``) runs for ``--seconds`` (default 20) in its own process, so a
crash, hang or memory blow-up in one cannot hide the others. Engines:

* ``atheris`` — coverage-guided libFuzzer through atheris (``pip install atheris``), the
  parser package and its parsing library instrumented; per-input limits ``-timeout=10``
  seconds and ``-rss_limit_mb=2048``. The corpus grows in ``OUT/corpus/<target>/``
  (seeded from ``fixtures/``), so later runs start where earlier ones stopped.
* ``mutate`` — a seeded random mutator over the fixtures (bit flips, byte runs, splices,
  truncation), for platforms without atheris; per input a 10 s alarm and a 2 GiB memory
  guard.

``auto`` (default) uses atheris when it is installed. Crashing inputs are written to
``OUT/crashes/`` (default ``out/fuzz``); the exit status is 1 when any target crashed.
Every crash becomes a regression input under ``tests/reliability/fuzz_regressions/
<target>/`` once fixed (``tests/reliability/test_fuzz_regressions.py`` replays them).
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

from fuzz.targets import REPO, seed_files, targets


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__.splitlines()[0])
    p.add_argument("targets", nargs="*", metavar="TARGET", help="default: every target")
    p.add_argument("--seconds", type=float, default=20.0, help="per target (default 20)")
    p.add_argument("--engine", choices=["auto", "atheris", "mutate"], default="auto")
    p.add_argument("--out", type=Path, default=REPO / "out" / "fuzz")
    p.add_argument("--seed", type=int, default=0, help="mutate engine: random seed")
    p.add_argument("--list", action="store_true", help="list the targets and exit")
    return p


def _seed_corpus(out: Path, name: str) -> Path:
    corpus = out / "corpus" / name
    corpus.mkdir(parents=True, exist_ok=True)
    for path in seed_files(targets()[name]):
        dest = corpus / f"seed-{path.name}"
        if not dest.exists():
            shutil.copyfile(path, dest)
    return corpus


def _command(engine: str, name: str, args: argparse.Namespace) -> list[str]:
    crashes = args.out / "crashes"
    crashes.mkdir(parents=True, exist_ok=True)
    if engine == "atheris":
        return [
            sys.executable,
            "-m",
            "fuzz.atheris_target",
            name,
            str(_seed_corpus(args.out, name)),
            f"-max_total_time={max(1, int(args.seconds))}",
            "-timeout=10",
            "-rss_limit_mb=2048",
            "-max_len=65536",
            f"-artifact_prefix={crashes}/{name}-",
            "-print_final_stats=1",
        ]
    return [
        sys.executable,
        "-m",
        "fuzz.mutate",
        name,
        f"--seconds={args.seconds}",
        f"--seed={args.seed}",
        f"--crashes={crashes}",
    ]


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    known = targets()
    if args.list:
        for name, target in known.items():
            print(f"{name}\t{target.media_type}")
        return 0
    unknown = [t for t in args.targets if t not in known]
    if unknown:
        print(f"unknown target {unknown[0]!r}; run with --list for the targets.", file=sys.stderr)
        return 2
    engine = args.engine
    if engine == "auto":
        engine = "atheris" if importlib.util.find_spec("atheris") else "mutate"
    if engine == "atheris" and not importlib.util.find_spec("atheris"):
        print("atheris is not installed; pip install atheris, or use --engine mutate.")
        return 2
    crashed: list[str] = []
    for name in args.targets or list(known):
        print(f"== {name} ({engine}, {args.seconds:g} s)", flush=True)
        budget = args.seconds + 120  # start-up and the final stats; a hang is still stopped
        try:
            done = subprocess.run(_command(engine, name, args), cwd=REPO, timeout=budget)
            failed = done.returncode != 0
        except subprocess.TimeoutExpired:
            failed = True
        if failed:
            crashed.append(name)
    if crashed:
        print(
            f"crashes in {', '.join(crashed)}; inputs are in {args.out / 'crashes'}. Fix them, "
            "then add each input under tests/reliability/fuzz_regressions/<target>/.",
            file=sys.stderr,
        )
        return 1
    print(f"no crashes in {len(args.targets or known)} targets.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
