"""Whether the optional compiled core (``kebab_chunk_core``, built from ``native/``) is used.

The core is an accelerator, never a second behaviour: each of its functions returns exactly
what the Python code it replaces returns (the Python code is the reference, and the
differential tests in ``tests/core/`` compare the two whenever the core is built). So a
record never depends on whether the core is installed; only speed does.

``KEBAB_CORE`` chooses, read at each call so tests and users can switch at run time:

- ``auto`` (default): the core when it is installed, else the Python path;
- ``python``: the Python path even when the core is installed;
- ``native``: the core, and a :class:`~kebab_chunk.errors.MissingDependencyError` when it
  is not installed (for runs that must not silently be slow).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

from kebab_chunk.errors import ConfigurationError, MissingDependencyError

__all__ = ["API", "core", "installed", "using"]

_MODES = ("auto", "python", "native")
#: The core's ``API`` this package calls (``native/src/lib.rs``): raised with every change
#: to a function's arguments or results, so a core built from another version of the source
#: (a stale wheel on a worker) is not called with arguments it does not take.
API = 4
_loaded: ModuleType | None = None
_tried = False
#: Why the installed core is not used (another API), for the ``native`` mode's error.
_mismatch: str | None = None
_log = logging.getLogger(__name__)


def installed() -> ModuleType | None:
    """The compiled core module when it is installed, importable and of this package's
    :data:`API`, else None (a core of another API is left unused, with one warning)."""
    global _loaded, _tried, _mismatch
    if not _tried:
        _tried = True
        try:
            import kebab_chunk_core
        except ImportError:
            _loaded = None
        else:
            found = getattr(kebab_chunk_core, "API", None)
            if found == API:
                _loaded = kebab_chunk_core
            else:
                _mismatch = (
                    f"the installed compiled core (kebab_chunk_core) has API {found}, but this "
                    f"kebab-chunk calls API {API}; rebuild it with `pip install ./native`"
                )
                _log.warning("%s; using the Python path meanwhile (same records).", _mismatch)
    return _loaded


def core() -> ModuleType | None:
    """The core to use now (see the module docstring), or None for the Python path."""
    mode = os.environ.get("KEBAB_CORE", "auto") or "auto"
    if mode == "python":
        return None
    if mode not in _MODES:
        raise ConfigurationError(
            f"KEBAB_CORE={mode!r} is not a core mode; set it to one of {', '.join(_MODES)}."
        )
    module = installed()
    if module is None and mode == "native":
        if _mismatch is not None:
            raise MissingDependencyError(f"KEBAB_CORE=native but {_mismatch}.")
        raise MissingDependencyError(
            "KEBAB_CORE=native but the compiled core (kebab_chunk_core) is not installed; "
            "build it with `pip install ./native` (needs Rust) or unset KEBAB_CORE."
        )
    return module


@contextmanager
def using(mode: str) -> Iterator[None]:
    """Run the block with ``KEBAB_CORE=mode`` (the process environment: not for threads
    that chunk meanwhile); the differential tests and the benchmarks compare the paths so."""
    saved = os.environ.get("KEBAB_CORE")
    os.environ["KEBAB_CORE"] = mode
    try:
        yield
    finally:
        if saved is None:
            del os.environ["KEBAB_CORE"]
        else:
            os.environ["KEBAB_CORE"] = saved
