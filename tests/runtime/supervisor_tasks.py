"""Helper-process tasks for the streaming isolation tests.

They live in a module, not inside a test, because a helper imports them by reference. The
element is a ``(name, action, ...)`` tuple; ``run`` returns ``(name, pid)`` so a test can
tell which helper process did the work.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable
from typing import Any

__all__ = ["ScriptedTask", "Unreadable"]


def _refuse() -> None:
    raise ValueError("this result cannot be rebuilt")


class Unreadable:
    """Pickles fine; unpickling it raises (as a result the worker cannot rebuild)."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_refuse, ())


class ScriptedTask:
    """Does what the element says.

    ``("a", "ok")`` returns at once; ``("a", "sleep", s)`` sleeps ``s`` seconds in stage 0;
    ``("a", "hang")`` busy-loops in stage 0; ``("a", "crash")`` kills the helper;
    ``("a", "raise")`` raises ValueError; ``("a", "oom")`` raises MemoryError (as the memory
    guard does); ``("a", "hang-later")`` enters stage 1 with the note ``"parsed a"`` and
    then busy-loops there; ``("a", "crash-later")`` and ``("a", "oom-later")`` do the same
    but then crash or run out of memory; ``("a", "frozen")`` returns ``(name, objects the
    collector has frozen)``; ``("a", "unpicklable")`` returns what cannot be pickled,
    ``("a", "unreadable")`` what pickles in the helper but cannot be rebuilt in the worker.
    """

    def setup(self) -> None:
        pass

    def run(self, element: tuple[Any, ...], enter: Callable[[int, Any], None]) -> Any:
        name, action, *args = element
        if action == "sleep":
            time.sleep(args[0])
        elif action == "hang":
            while True:
                pass
        elif action == "crash":
            os._exit(9)
        elif action == "raise":
            raise ValueError(f"scripted failure of {name}")
        elif action == "oom":
            raise MemoryError
        elif action == "unpicklable":
            return (name, lambda: None)
        elif action == "unreadable":
            return (name, Unreadable())
        elif action == "frozen":
            return (name, gc.get_freeze_count())
        elif action in ("hang-later", "crash-later", "oom-later"):
            enter(1, f"parsed {name}")
            if action == "crash-later":
                os._exit(9)
            if action == "oom-later":
                raise MemoryError
            while True:
                pass
        return (name, os.getpid())
