"""XPaths of lxml elements exactly as ``tree.getpath(element)`` writes them, in linear time.

libxml2 (``xmlGetNodePath``, which lxml's ``getpath`` calls) numbers a step by scanning
the element's siblings and every ancestor's siblings, so asking for the path of each of n
sibling paragraphs costs O(n²): a DOCX with 16,000 list items spent most of its parse
there. :class:`XPaths` numbers each parent's children once and reuses the parent's path.

It reproduces libxml2's rule for elements whose namespace has a prefix (every element of a
WordprocessingML body): the step is ``prefix:name``, followed by ``[k]`` when another
sibling has the same name and prefix, k counting those siblings up to and including this
one. An element without a prefix (no namespace or the default namespace, which libxml2
writes as ``*`` or by name with other counting rules) is left to lxml itself, so every
path is byte-identical to ``getpath``'s.
"""

from __future__ import annotations

from typing import Any

__all__ = ["XPaths"]


class XPaths:
    """Paths of elements of one lxml tree, each parent's children numbered once."""

    def __init__(self, tree: Any) -> None:
        self._tree = tree
        self._steps: dict[Any, dict[Any, str]] = {}  # parent -> {child: its step}
        self._paths: dict[Any, str] = {}  # element -> path, for parents asked about

    def path(self, element: Any) -> str:
        """``tree.getpath(element)``."""
        known = self._paths.get(element)
        if known is not None:
            return known
        parent = element.getparent()
        step = None if parent is None else self._child_steps(parent).get(element)
        found = self._tree.getpath(element) if step is None else self.path(parent) + step
        self._paths[element] = found
        return found

    def _child_steps(self, parent: Any) -> dict[Any, str]:
        steps = self._steps.get(parent)
        if steps is not None:
            return steps
        named = [
            (child, child.prefix, child.tag.rpartition("}")[2])
            for child in parent
            if isinstance(child.tag, str) and child.prefix is not None  # comments have no str tag
        ]
        totals: dict[tuple[str, str], int] = {}
        for _, prefix, local in named:
            totals[prefix, local] = totals.get((prefix, local), 0) + 1
        seen: dict[tuple[str, str], int] = {}
        steps = {}
        for child, prefix, local in named:
            k = seen[prefix, local] = seen.get((prefix, local), 0) + 1
            index = f"[{k}]" if totals[prefix, local] > 1 else ""
            steps[child] = f"/{prefix}:{local}{index}"
        self._steps[parent] = steps
        return steps
