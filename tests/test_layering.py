"""Data flows one way: bytes -> parser -> CanonicalDocument -> chunker -> Chunk -> sink.

This walks every module's imports (statically, with ast, including imports inside
functions) and fails when a package reaches into one it must not know about
(docs/internals/architecture.md has the table).
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
    # Output and runtime work without a runner: readers, diff, helper processes.
    "output": ("kebab_chunk.beam", "apache_beam", "kebab_chunk.cli", "kebab_chunk.report"),
    # The pipeline's element types: the helper processes (runtime) build them too.
    "elements.py": ("kebab_chunk.beam", "apache_beam", "kebab_chunk.cli", "kebab_chunk.report"),
    "runtime": ("kebab_chunk.beam", "apache_beam", "kebab_chunk.cli", "kebab_chunk.report"),
    "report": ("kebab_chunk.beam", "apache_beam", "kebab_chunk.cli"),
    "beam": ("kebab_chunk.cli",),
    "integrations": ("kebab_chunk.cli",),
    # Retrieval evaluation is a library: no runner, no command code.
    "eval": ("kebab_chunk.beam", "apache_beam", "kebab_chunk.cli"),
    # Whether the compiled core is used: below every package that asks.
    "_core.py": (
        "apache_beam",
        *(
            f"kebab_chunk.{name}"
            for name in ("model", "tokenizers", "parsers", "chunkers", "output", "runtime")
        ),
        *(
            f"kebab_chunk.{name}"
            for name in ("beam", "report", "eval", "sync", "integrations", "table", "pipeline")
        ),
    ),
    # Chunk rows in bulk: a library function, no runner.
    "table.py": ("kebab_chunk.beam", "apache_beam", "kebab_chunk.cli", "kebab_chunk.report"),
    # Syncing a finished output into a vector store is a library too.
    "sync": ("kebab_chunk.beam", "apache_beam", "kebab_chunk.cli"),
}
#: The library never imports the runnable job's package.
EVERYWHERE = ("pipelines",)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _banned(name: str, banned: tuple[str, ...]) -> bool:
    return any(name == b or name.startswith(b + ".") for b in banned)


def _layer_files(layer: str) -> list[Path]:
    """The modules of a layer: a package's, or the one module a ``.py`` layer names."""
    path = PACKAGE / layer
    assert path.exists(), f"no layer {layer} in kebab_chunk/"
    return [path] if path.suffix == ".py" else sorted(path.rglob("*.py"))


def test_layers_only_import_downstream() -> None:
    violations = []
    for layer, banned in FORBIDDEN.items():
        for path in _layer_files(layer):
            for name in _imports(path):
                if _banned(name, banned):
                    violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert not violations, "layering broken:\n" + "\n".join(violations)


def test_only_cli_imports_cli_and_nothing_imports_pipelines() -> None:
    violations = []
    for path in sorted(PACKAGE.rglob("*.py")):
        inside_cli = path.relative_to(PACKAGE).parts[0] == "cli"
        for name in _imports(path):
            if _banned(name, EVERYWHERE) or (
                not inside_cli and _banned(name, ("kebab_chunk.cli",))
            ):
                violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert not violations, "layering broken:\n" + "\n".join(violations)


def _package_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "kebab_chunk" else None


def test_no_import_cycle_between_packages() -> None:
    """Package-level import graph of kebab_chunk (top-level modules count as packages)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        here = rel.parts[0].removesuffix(".py")
        for name in _imports(path):
            there = _package_of(name)
            if there and there != here and here != "__init__":
                graph.setdefault(here, set()).add(there)
    seen: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(node: str, trail: list[str]) -> None:
        seen[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if seen.get(nxt) == 1:
                cycle = [*trail[trail.index(nxt) :], nxt] if nxt in trail else [node, nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in seen:
                visit(nxt, [*trail, nxt])
        seen[node] = 2

    for node in sorted(graph):
        if node not in seen:
            visit(node, [node])


def test_the_walker_sees_real_imports() -> None:
    # Guard against a walker that finds nothing: the chunker base must import the model.
    assert "kebab_chunk.model" in _imports(PACKAGE / "chunkers" / "base.py")
