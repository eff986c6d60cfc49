"""A helper task over a group of documents: the experiment's one trip per group.

It lives in a module of its own because the helper process unpickles the task by
reference (a class defined in the script's ``__main__`` would not be found there).
"""

from __future__ import annotations

from typing import Any


class GroupTask:
    """Runs the inner task on each document of a group, in order; one reply per group."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def setup(self) -> None:
        self._inner.setup()

    def run(self, docs: tuple[Any, ...], enter: Any) -> tuple[Any, ...]:
        return tuple(self._inner.run(doc, _no_stage) for doc in docs)


def _no_stage(stage: int, note: Any) -> None:
    """A group reports no stages: a failure of the group would be retried per document."""
