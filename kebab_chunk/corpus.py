"""Which files of a corpus a run reads: ``--include``/``--exclude`` globs, hidden and tool folders.

:class:`CorpusFilter` is a pure predicate (no Beam, no I/O) over a path *relative to the
corpus root*, ``/``-separated, exactly as the file system names it (before the ``%XX``
escaping of ``source_uri``). ``kebab_chunk.beam.read.ReadCorpus`` applies it to every
matched file before reading it and to every folder before walking into it; a file it
refuses is not matched at all: no bytes read, no error row, not counted in the manifest.

The rules, in order (docs/guide/corpus-selection.md is the user's version):

1. **Hidden and tool entries** are skipped unless ``include_hidden``: any file or folder
   whose name starts with ``.`` (``.git``, ``.hg``, ``.svn``, ``.venv``, ``.DS_Store``) and
   every folder named in :data:`SKIPPED_FOLDERS` (``node_modules``, ``__pycache__``, ...).
   Names the user typed as part of an input (``--input ~/.notes``) are never judged.
2. **Exclude** patterns: a file is skipped when a pattern matches it or one of the folders
   it lies in.
3. **Include** patterns (when any is given): a file is kept only when a pattern matches it
   or one of the folders it lies in. Exclude wins over include.

Glob syntax, on the relative path (case-sensitive, like POSIX file names):

* ``*`` matches any run of characters within one name, ``?`` one character, ``[abc]`` /
  ``[a-z]`` / ``[!abc]`` one character of a set (Python's :func:`fnmatch.fnmatchcase`
  within each name; a backslash is an ordinary character, write ``[*]`` for a literal
  ``*``). None of them ever matches ``/``, and ``*`` does match a leading ``.``.
* ``**`` as a whole name matches any number of folders: ``docs/**/*.md``, ``**/drafts``;
  a trailing ``/**`` matches everything inside (``docs/**``).
* A pattern without a ``/`` matches a name at any depth (``*.md``, ``drafts``), as in
  ``.gitignore``; a pattern with a ``/`` is anchored at the corpus root (``docs/*.md`` is
  only the top-level ``docs`` folder). A leading ``/`` (or ``./``) anchors a pattern
  without another ``/``: ``/README.md`` is only the top-level one.
* A trailing ``/`` matches folders only: ``build/`` skips a folder named ``build`` but not
  a file of that name.
* A pattern that matches a folder covers everything inside it.

Python 3.11's ``PurePath.match`` matches from the right and has no ``**``, and
``fnmatch`` lets ``*`` cross ``/``; so names are matched one by one with
``fnmatchcase`` and ``**`` is handled here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from kebab_chunk.errors import UsageError

__all__ = ["SKIPPED_FOLDERS", "CorpusFilter"]

#: Folders skipped by default besides every hidden name (``.git``, ``.hg``, ``.svn``,
#: ``.bzr``, ``.venv``, ``.tox``, ...): version-control and dependency/cache folders whose
#: files are not documents. ``include_hidden`` (``--include-hidden``) keeps them.
SKIPPED_FOLDERS: tuple[str, ...] = (
    "CVS",
    "__pycache__",
    "_darcs",
    "bower_components",
    "node_modules",
)
_SKIPPED = frozenset(SKIPPED_FOLDERS)
_DOUBLE_STAR = "**"


@dataclass(frozen=True)
class _Glob:
    """One compiled pattern: its names (``**`` kept as is) and whether it is folders-only."""

    names: tuple[str, ...]
    folders_only: bool


def _compile(pattern: str, option: str, include_hidden: bool) -> _Glob:
    """``pattern`` as a :class:`_Glob`; UsageError (one sentence) when it cannot match."""
    shown = f"--{option} {pattern!r}"
    if not pattern.strip():
        raise UsageError(f"{shown} is an empty pattern; give a glob such as '*.md' or 'drafts/'.")
    if "\0" in pattern:
        raise UsageError(f"{shown} contains a NUL character, which no file name has.")
    text = pattern
    anchored = False
    for anchor in ("./", "/"):
        if text.startswith(anchor):
            text, anchored = text[len(anchor) :], True
    folders_only = text.endswith("/")
    text = text.rstrip("/") if folders_only else text
    names = tuple(text.split("/"))
    if not text or any(name in ("", ".", "..") for name in names):
        raise UsageError(
            f"{shown} has an empty, '.' or '..' part; write a path relative to the corpus "
            "root, such as 'docs/**/*.md'."
        )
    if not include_hidden and option == "include":
        for name in names:
            if name.startswith("."):
                raise UsageError(
                    f"{shown} names hidden entries ({name}), which are skipped by default; "
                    "add --include-hidden to read them."
                )
            if name in _SKIPPED:
                raise UsageError(
                    f"{shown} names {name}, a folder skipped by default; add "
                    "--include-hidden to read such folders."
                )
    if not anchored and len(names) == 1:
        names = (_DOUBLE_STAR, *names)  # no '/': a name at any depth
    return _Glob(names, folders_only)


def _ends(glob: _Glob, names: Sequence[str]) -> set[int]:
    """Every ``j`` such that the glob matches the first ``j`` names of a path exactly."""
    reach = {0}
    last = len(glob.names) - 1
    for k, part in enumerate(glob.names):
        if not reach:
            break
        if part == _DOUBLE_STAR:
            start = min(reach) + (1 if k == last else 0)  # a trailing ** needs one name
            reach = set(range(start, len(names) + 1))
        else:
            reach = {j + 1 for j in reach if j < len(names) and fnmatchcase(names[j], part)}
    return reach


def _matches(glob: _Glob, names: Sequence[str], *, is_folder: bool) -> bool:
    """Whether the glob matches the entry ``names`` or one of the folders it lies in."""
    ends = _ends(glob, names)
    whole = len(names)
    return any(0 < j < whole or (j == whole and (is_folder or not glob.folders_only)) for j in ends)


def _names(relative_path: str) -> list[str]:
    names = relative_path.strip("/").split("/")
    if names == [""]:
        raise ValueError("relative_path is empty; give a path relative to the corpus root.")
    return names


def _judged_from(relative_path: str, named: str) -> int:
    """How many leading names of ``relative_path`` the user typed (never judged hidden)."""
    if not named:
        return 0
    if relative_path == named.rstrip("/") or (
        named.endswith("/") and relative_path.startswith(named)
    ):
        return len(named.strip("/").split("/"))
    return 0


@dataclass(frozen=True)
class CorpusFilter:
    """Which corpus files a run reads (module docstring: the rules and the glob syntax).

    ``include``: keep only files matching one of these globs (empty: every file);
    ``exclude``: skip files matching one of these; ``include_hidden``: also read hidden
    entries and :data:`SKIPPED_FOLDERS`. Patterns are checked when the filter is made (a
    UsageError in one sentence for one that cannot be right). Equal filters select the
    same files on every machine and runner; the filter pickles to Beam workers.
    """

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    include_hidden: bool = False
    _include: tuple[_Glob, ...] = field(init=False, repr=False, compare=False)
    _exclude: tuple[_Glob, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("include", "exclude"):
            given = getattr(self, name)
            if isinstance(given, str):  # one pattern, not its characters
                given = (given,)
            patterns = tuple(given)
            object.__setattr__(self, name, patterns)
            globs = tuple(_compile(p, name, self.include_hidden) for p in patterns)
            object.__setattr__(self, f"_{name}", globs)

    def accepts(self, relative_path: str, *, named: str = "") -> bool:
        """Whether the file at ``relative_path`` (relative to the corpus root) is read.

        ``named``: the leading part of the path the user gave literally as an input (a
        folder ending with ``/`` or the file itself, relative to the root); names inside it
        are never judged hidden or skipped. Empty for an input that is the root itself.
        """
        return self._accepts(_names(relative_path), _judged_from(relative_path, named), False)

    def accepts_folder(self, relative_path: str, *, named: str = "") -> bool:
        """Whether anything inside the folder at ``relative_path`` can be read; False lets a
        walk skip the folder without listing it (hidden, a tool folder, or excluded).
        Include patterns never rule a folder out: a file deeper inside may match them."""
        names = _names(relative_path)
        if not self.include_hidden and _skipped(names, _judged_from(relative_path, named), True):
            return False
        return not any(_matches(g, names, is_folder=True) for g in self._exclude)

    def _accepts(self, names: Sequence[str], judged_from: int, is_folder: bool) -> bool:
        if not self.include_hidden and _skipped(names, judged_from, is_folder):
            return False
        if any(_matches(g, names, is_folder=is_folder) for g in self._exclude):
            return False
        return not self._include or any(
            _matches(g, names, is_folder=is_folder) for g in self._include
        )

    def to_manifest(self) -> dict[str, Any]:
        """The filter as the manifest's ``options`` record it (JSON; equal filters, equal
        records), so two runs that read different files of one corpus are told apart."""
        return {
            "include": list(self.include),
            "exclude": list(self.exclude),
            "include_hidden": self.include_hidden,
            "skipped_folders": [] if self.include_hidden else list(SKIPPED_FOLDERS),
        }

    @staticmethod
    def from_options(
        include: Iterable[str] | None = (),
        exclude: Iterable[str] | None = (),
        include_hidden: bool = False,
    ) -> CorpusFilter:
        """A filter from repeatable command-line values (lists, possibly None)."""
        return CorpusFilter(tuple(include or ()), tuple(exclude or ()), include_hidden)


def _skipped(names: Sequence[str], judged_from: int, is_folder: bool) -> bool:
    """Whether a name below the typed part is hidden, or a folder in SKIPPED_FOLDERS."""
    last = len(names) - 1
    for i in range(judged_from, len(names)):
        name = names[i]
        if name.startswith(".") or (name in _SKIPPED and (is_folder or i < last)):
            return True
    return False
