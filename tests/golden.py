"""Golden snapshot helper: pins a chunker label's (or parser's) output on the fixtures.

Snapshots live under ``tests/goldens/<label>/<name>.json``. They are rewritten only when
``KEBAB_UPDATE_GOLDENS=1`` is set; otherwise a difference fails the test. A changed
snapshot without a new version label is a bug (docs/internals/versioning.md).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

GOLDEN_DIR = Path(__file__).parent / "goldens"
UPDATE_FLAG = "KEBAB_UPDATE_GOLDENS"


def updating() -> bool:
    return os.environ.get(UPDATE_FLAG) == "1"


#: Record fields the pipeline fills in after chunking (kebab_chunk/chunkers/embedding.py):
#: a chunker leaves them None, and a snapshot pins what the chunker returns.
_PIPELINE_FIELDS = ("embed_text", "embed_tokens")


def _chunker_output(data: Any) -> Any:
    """``data`` without the pipeline-filled fields that are still None (chunk dumps)."""
    if isinstance(data, list):
        return [_chunker_output(item) for item in data]
    if isinstance(data, dict):
        return {
            key: _chunker_output(value)
            for key, value in data.items()
            if not (key in _PIPELINE_FIELDS and value is None)
        }
    return data


def rendered_golden(data: Any) -> str:
    """``data`` (JSON-serialisable) as its snapshot file holds it."""
    snapshot = _chunker_output(data)
    return json.dumps(snapshot, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def assert_golden(label: str, name: str, data: Any) -> None:
    """Compare ``data`` (JSON-serialisable) with the stored snapshot ``label/name``."""
    path = GOLDEN_DIR / label / f"{name}.json"
    rendered = rendered_golden(data)
    if updating():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rendered, encoding="utf-8")
        return
    assert path.exists(), (
        f"golden snapshot {path} is missing; create it with {UPDATE_FLAG}=1 "
        "(only for a new label or new fixture)"
    )
    expected = path.read_text(encoding="utf-8")
    assert rendered == expected, (
        f"output of {label} on {name} differs from its golden snapshot; a label's output "
        "must never change: ship the change under a new version label"
    )


#: Chunker goldens pin the parser too, so changing a media type's default parser can never
#: move a chunker label's snapshot (the parser's own goldens pin each parser version).
GOLDEN_PARSER_VERSIONS = {
    "text/markdown": "md-mistune-v1",
    "application/pdf": "pdf-text-v1",
    "text/html": "html-v1",
    "application/vnd.docling+json": "docling-json-v1",
}


def parse_for_golden(raw: bytes, uri: str) -> Any:
    """``parse_document`` with the parser version pinned for chunker goldens."""
    from kebab_chunk.parsers.registry import detect_media_type, parse_document

    media_type = detect_media_type(uri, raw[:8])
    version = GOLDEN_PARSER_VERSIONS.get(media_type or "")
    return parse_document(raw, uri, media_type=media_type, parser_version=version)
