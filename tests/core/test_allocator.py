"""The core's allocator and the helper's memory guard.

The core takes allocations under 256 KiB from mimalloc and larger ones from the system
allocator, moving a block whose resize crosses that size: a document large enough for its
buffers to cross it gives the same rows as the Python path. mimalloc reserves address
space an arena at a time, 1 GiB by default. The guard caps a helper's address space at its
size after set-up plus ``max_memory_mb``, so the core sets a 64 MiB reservation when it
loads, and the helper tasks load the core during set-up, before the guard: what the core
reserves then is the code's memory, not a document's.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from kebab_chunk.model import ChunkPolicy
from tests.beam.helpers import python_stdout
from tests.core.test_hybrid_differential import _Taken
from tests.core.test_table_differential import _both, _explain

#: What loading the core may add to the address space: its code and one 64 MiB arena.
MAX_RESERVED_MIB = 128

_VM_SIZE = """
import re
def vm_mib():
    status = open("/proc/self/status").read()
    return int(re.search(r"VmSize:\\s+(\\d+)", status).group(1)) / 1024
"""

_IMPORT = (
    _VM_SIZE
    + """
before = vm_mib()
import kebab_chunk_core
kebab_chunk_core.repeat_string("x", 1000)  # the allocator is in use
print(vm_mib() - before)
"""
)

_SETUP = """
import sys
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.parsers.base import ParseLimits
from kebab_chunk.runtime.tasks import {task}
{task}({args}).setup()
print("kebab_chunk_core" in sys.modules)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_loading_the_core_reserves_one_small_arena(compiled: ModuleType) -> None:
    added = float(python_stdout("-c", _IMPORT))
    assert added < MAX_RESERVED_MIB, (
        f"loading the core added {added:.0f} MiB of address space; the arena reservation "
        "option was not applied (check the option's index after a mimalloc upgrade)"
    )


@pytest.mark.parametrize(
    ("task", "args"),
    [("ParseTask", "None, ParseLimits()"), ("ChunkTask", "None, ChunkPolicy(), {}")],
)
def test_helper_tasks_load_the_core_in_setup(compiled: ModuleType, task: str, args: str) -> None:
    assert python_stdout("-c", _SETUP.format(task=task, args=args)) == "True"


def _large_markdown() -> bytes:
    """About 1.5 MB: sections of prose, a list and a wide table, then one long paragraph."""
    parts = []
    for i in range(400):
        parts.append(f"## Section {i}\n\n" + f"Sentence {i} runs on for a while. " * 60)
        parts.append("\n".join(f"- item {i}.{j} with some words" for j in range(20)))
        rows = "\n".join(f"| {i} | {j} | cell text {j} |" for j in range(15))
        parts.append("| a | b | c |\n|---|---|---|\n" + rows)
    parts.append("word " * 60_000)  # one block of 300 KB: its buffers cross 256 KiB
    return "\n\n".join(parts).encode()


def test_buffers_crossing_the_size_split_give_the_same_rows(
    compiled: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = _large_markdown()
    assert len(raw) > 1_000_000
    taken = _Taken(compiled, monkeypatch)
    for label in ("md-heading-v3", "hybrid-v3"):
        fast, slow = _both(raw, "docs/large.md", label, ChunkPolicy(target_tokens=256))
        assert fast.equals(slow), _explain(fast, slow)
    assert taken.taken == 2, f"the core declined the document: {taken.rows}"
