"""``read_listing``: what ``ReadCorpus`` emits for a local corpus, without Beam."""

from __future__ import annotations

from typing import Any

from kebab_chunk.beam.locations import CorpusLocation
from kebab_chunk.beam.read import _ReadEntryFn, list_local
from kebab_chunk.corpus import CorpusFilter


def read_listing(
    location: CorpusLocation, corpus_filter: CorpusFilter | None = None, **reader: Any
) -> list[object]:
    """The one listing (``list_local``) read entry by entry, as the read step does;
    tagged outputs unwrapped to their values."""
    read = _ReadEntryFn(location.root, 1 << 20, [p.root for p in location.parts], **reader)
    return [
        getattr(out, "value", out)
        for part in location.inputs
        for entry in list_local(part, location, corpus_filter)
        for out in read.process(entry)
    ]
