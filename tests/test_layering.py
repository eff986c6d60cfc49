"""Data flows one way: bytes -> parser -> CanonicalDocument -> chunker -> Chunk -> sink.

This walks every module's imports (statically, with ast) and fails when a layer reaches
into one it must not know about.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "kebab_chunk"

FORBIDDEN = {
    "model": ("kebab_chunk.parsers", "kebab_chunk.chunkers", "kebab_chunk.beam", "apache_beam"),
    "tokenizers": (
        "kebab_chunk.parsers",
        "kebab_chunk.chunkers",
        "kebab_chunk.beam",
        "apache_beam",
    ),
    "parsers": (
        "kebab_chunk.chunkers",
        "kebab_chunk.beam",
        "apache_beam",
        "kebab_chunk.tokenizers",
    ),
    "chunkers": ("kebab_chunk.parsers", "kebab_chunk.beam", "apache_beam"),
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_layers_only_import_downstream() -> None:
    violations = []
    for layer, banned in FORBIDDEN.items():
        for path in sorted((PACKAGE / layer).rglob("*.py")):
            for name in _imports(path):
                if any(name == b or name.startswith(b + ".") for b in banned):
                    violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert not violations, "layering broken:\n" + "\n".join(violations)


def test_the_walker_sees_real_imports() -> None:
    # Guard against a walker that finds nothing: the chunker base must import the model.
    assert "kebab_chunk.model" in _imports(PACKAGE / "chunkers" / "base.py")
