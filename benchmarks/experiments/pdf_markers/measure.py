"""pdf-page-v2 against pdf-page-v3 on real PDFs: chunks that end with a dangling list marker.

``.venv/bin/python -m benchmarks.experiments.pdf_markers.measure [ROOT ...]`` parses every
``*.pdf`` under each ROOT (default ``/usr/share/doc``; nothing is downloaded) with the
default PDF parser and chunks it with both labels at 128, 256 and 512 target tokens (no
overlap), then prints per file and size: chunks, chunks whose last line is only a list
marker (``4.``, ``b)``, ``•``: the item's text is in the next chunk), and how many chunk
texts the two labels share. Files that cannot be parsed are skipped.
"""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path

from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.errors import KebabError
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.parsers.registry import parse_document

LABELS = ("pdf-page-v2", "pdf-page-v3")
TARGETS = (128, 256, 512)
#: A last line holding only a list marker (a number ending the text is a sentence end
#: only when it follows text on its line, so ``... is\n100.`` is not counted).
DANGLING = re.compile(r"\n[ \t]*(?:\d{1,3}[.)]|[A-Za-z][.)]|\(\w{1,3}\)|[\u2022*\-])$")


def main(argv: list[str]) -> int:
    logging.disable(logging.WARNING)
    roots = [Path(a) for a in argv] or [Path("/usr/share/doc")]
    paths = sorted(p for root in roots for p in root.rglob("*.pdf") if p.is_file())
    print("file | target | chunks v2 / v3 | dangling v2 / v3 | same texts")
    for path in paths:
        try:
            doc = parse_document(path.read_bytes(), path.as_posix())
        except KebabError:
            continue
        for target in TARGETS:
            policy = ChunkPolicy(target_tokens=target, overlap_tokens=0)
            old, new = (get_chunker(label).chunk(doc, policy) for label in LABELS)
            bad = [sum(bool(DANGLING.search(c.text)) for c in cs) for cs in (old, new)]
            same = len({c.text for c in old} & {c.text for c in new})
            print(
                f"{path.name} | {target} | {len(old)} / {len(new)} | {bad[0]} / {bad[1]} | {same}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
