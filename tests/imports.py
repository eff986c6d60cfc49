"""Which modules of one package a piece of source imports (the "no label or parser version
imports another's" checks of tests/chunkers and tests/parsers)."""

from __future__ import annotations

import ast


def package_imports(source: str, package: str, modules: set[str]) -> set[str]:
    """The modules among ``modules`` (names directly inside ``package``, e.g.
    ``kebab_chunk.chunkers``) that ``source`` imports, at any depth of the code and in any
    form of import (absolute, ``from package import module``, relative from inside it)."""
    prefix = package.split(".")
    found = set()
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.ImportFrom) and node.level == 1:  # from .x import y
            base = package + (f".{node.module}" if node.module else "")
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        for name in names:
            parts = name.split(".")
            depth = len(prefix)
            if parts[:depth] == prefix and len(parts) > depth and parts[depth] in modules:
                found.add(parts[depth])
    return found
