"""Input helpers shared by the command-line modules: read a file, name its source_uri.

Both raise :class:`UsageError`, whose message is the one sentence the CLI prints.
"""

from __future__ import annotations

import os
import traceback
from pathlib import Path

from kebab_chunk.errors import UsageError

__all__ = ["UsageError", "print_debug", "read_input", "source_uri_for"]


def source_uri_for(path: str, root: str | None) -> str:
    """The path as given (POSIX), or relative to ``root`` when one is given."""
    if root is None:
        return Path(path).as_posix()
    try:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(root)).as_posix()
    except ValueError:
        raise UsageError(
            f"{path} is not inside --root {root}; pass a root that contains it"
        ) from None


def read_input(path: str) -> bytes:
    """The file's bytes, or a one-sentence ``UsageError`` saying why they cannot be read."""
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{path} does not exist; check the path") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a directory; pass files (or use 'kebab-chunk run')") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


def print_debug(debug: bool) -> None:
    """With --debug, print the traceback of the exception being handled."""
    if debug:
        traceback.print_exc()
