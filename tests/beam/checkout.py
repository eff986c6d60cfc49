"""A corpus shaped like a git checkout: a few documents among VCS, dependency and hidden files.

Shared by the corpus-selection tests of the read stage (tests/beam/test_corpus_filter.py)
and of the command line (tests/cli/test_run_filters.py).
"""

from __future__ import annotations

from pathlib import Path

DOC = b"# Title\n\nSome text.\n"
#: A git checkout as a user has it: its documents, and everything that is not one.
DOCUMENTS = ["README.md", "docs/guide.md", "src/notes.txt"]
NOT_DOCUMENTS = [
    ".gitignore",
    ".git/HEAD",
    ".git/config",
    ".git/objects/ab/cdef0123",
    ".github/workflows/ci.md",
    "docs/.draft.md",
    "node_modules/pkg/README.md",
    "node_modules/pkg/index.js",
    "src/__pycache__/notes.cpython-311.pyc",
]


def write_checkout(root: Path) -> Path:
    """A git-checkout-like corpus; dangling links hide in .git and node_modules."""
    for uri in [*DOCUMENTS, *NOT_DOCUMENTS]:
        path = root / uri
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\x00\x01binary" if "objects" in uri or uri.endswith(".pyc") else DOC)
    (root / ".git" / "dangling").symlink_to(root / "missing")
    (root / "node_modules" / ".bin").mkdir()
    (root / "node_modules" / ".bin" / "tool").symlink_to(root / "missing-too")
    (root / "node_modules" / "pkg" / "broken.md").symlink_to(root / "missing-three")
    return root
