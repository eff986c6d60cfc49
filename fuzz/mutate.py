"""``python -m fuzz.mutate TARGET --seconds N``: a seeded random mutation fuzzer.

The fallback engine where atheris is not installed. Starting from the target's fixtures,
each round picks an input from the pool, applies one to four random mutations (bit flip,
byte run insert, delete, duplicate a slice, splice with another input, truncate) and runs
:func:`fuzz.targets.check` under a 10 s alarm and a 2 GiB memory guard. Inputs that make
the check fail are written to ``--crashes``; the exit status is 1 if there was any.
Deterministic for a given ``--seed`` and seed corpus, bounded by ``--seconds``.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import random
import signal
import sys
import time
import traceback
from pathlib import Path
from types import FrameType

from fuzz.targets import Target, check, seed_files, targets
from kebab_chunk.runtime.helper import limit_memory

PER_INPUT_S = 10
MEMORY_MB = 2048
_MAX_LEN = 1 << 16


class _Hang(Exception):
    """Raised by the alarm when one input takes longer than PER_INPUT_S."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _Hang(f"no result within {PER_INPUT_S} s")


def mutate(rng: random.Random, data: bytes, pool: list[bytes]) -> bytes:
    """One to four random edits of ``data`` (kept under 64 KiB)."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        pos = rng.randint(0, len(buf))
        if op == 0 and buf:
            i = rng.randrange(len(buf))
            buf[i] ^= 1 << rng.randrange(8)
        elif op == 1:
            buf[pos:pos] = bytes([rng.randrange(256)]) * rng.randint(1, 64)
        elif op == 2 and buf:
            del buf[pos : pos + rng.randint(1, 64)]
        elif op == 3 and buf:
            start = rng.randrange(len(buf))
            piece = buf[start : start + rng.randint(1, 256)]
            buf[pos:pos] = piece * rng.randint(1, 8)
        elif op == 4 and pool:
            other = rng.choice(pool)
            cut = rng.randint(0, len(other))
            buf = buf[:pos] + bytearray(other[cut:])
        else:
            del buf[pos:]
    return bytes(buf[:_MAX_LEN])


def run(name: str, seconds: float, seed: int, crashes: Path) -> int:
    """Fuzz ``name`` for ``seconds``; returns the number of crashing inputs written."""
    target = targets()[name]
    pool = [p.read_bytes()[:_MAX_LEN] for p in seed_files(target)] or [b""]
    rng = random.Random(seed)
    previous = signal.signal(signal.SIGALRM, _alarm)
    deadline = time.monotonic() + seconds
    try:
        found, runs = _loop(target, rng, pool, deadline, crashes)
    finally:
        signal.signal(signal.SIGALRM, previous)
    print(f"{name}: {runs} inputs, {found} crashes")
    return found


def _loop(
    target: Target, rng: random.Random, pool: list[bytes], deadline: float, crashes: Path
) -> tuple[int, int]:
    found = runs = 0
    name = target.name
    while time.monotonic() < deadline:
        data = mutate(rng, rng.choice(pool), pool)
        runs += 1
        signal.alarm(PER_INPUT_S)
        try:
            check(target, data)
        except Exception:
            found += 1
            digest = hashlib.sha1(data).hexdigest()
            crashes.mkdir(parents=True, exist_ok=True)
            (crashes / f"{name}-crash-{digest}").write_bytes(data)
            print(f"crash {digest}:\n{traceback.format_exc(limit=-3)}", file=sys.stderr)
        else:
            if len(pool) < 500 and rng.random() < 0.05:
                pool.append(data)  # keep some survivors as new starting points
        finally:
            signal.alarm(0)
    return found, runs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m fuzz.mutate")
    p.add_argument("target")
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--crashes", type=Path, default=Path("out/fuzz/crashes"))
    args = p.parse_args(argv)
    limit_memory(MEMORY_MB)  # this process exists only to fuzz: cap it
    logging.disable(logging.WARNING)  # chunkers log trimmed contexts; not crashes
    return 1 if run(args.target, args.seconds, args.seed, args.crashes) else 0


if __name__ == "__main__":
    sys.exit(main())
