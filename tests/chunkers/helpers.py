"""What several chunker test modules share: generated prose and hash-seed subprocess runs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]

#: Words with dots, digits, accents, Hangul and an emoji, mixed into generated prose.
FIXED_WORDS = ["alpha", "beta", "gamma", "naïve", "한국어", "🙂", "x", "e.g.", "3.14", "Ünïcödé"]
_LETTERS = st.characters(codec="utf-8", categories=["Lu", "Ll", "Lo", "Nd"])


def words(max_size: int) -> st.SearchStrategy[str]:
    """A fixed word, or letters and digits of any script up to ``max_size`` characters."""
    return st.one_of(st.sampled_from(FIXED_WORDS), st.text(_LETTERS, min_size=1, max_size=max_size))


def sentences(word: st.SearchStrategy[str], max_words: int) -> st.SearchStrategy[str]:
    """Words joined by spaces, ending in ``. ! ? … 。`` or nothing."""
    return st.builds(
        lambda ws, end: " ".join(ws) + end,
        st.lists(word, min_size=1, max_size=max_words),
        st.sampled_from([".", "!", "?", "", "…", "。"]),
    )


def outputs_under_hash_seeds(
    code: str, seeds: Sequence[str], args: Sequence[str] = ()
) -> list[str]:
    """The stdout of ``python -c code *args`` run from the repository root, once per
    ``PYTHONHASHSEED`` value in ``seeds``."""
    outputs = []
    for seed in seeds:
        result = subprocess.run(
            [sys.executable, "-c", code, *args],
            cwd=REPO,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.append(result.stdout)
    return outputs
