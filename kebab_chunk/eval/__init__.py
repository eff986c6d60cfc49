"""Retrieval-quality evaluation of chunker labels (``kebab-chunk eval``).

:mod:`.metrics` holds the range arithmetic (recall, precision, IoU over character ranges),
:mod:`.run` loads a questions file and a corpus, chunks, embeds, retrieves and scores, and
:mod:`.bert` embeds texts with a local BERT sentence-embedding model (the ``eval`` extra).
Nothing of numpy or the model is imported here, so importing one module never loads the
model's dependencies, and the command line declares ``eval``'s options without them.
"""

from typing import Literal

__all__ = ["APART_TYPES", "EMBED_MODES", "EmbedMode"]

#: What is embedded for a chunk: its ``text``, ``contextualize(chunk)`` (heading path and
#: captions, then the text), or the record's ``embed_text`` (what the pipeline writes for
#: every label to be embedded; kebab_chunk/chunkers/embedding.py).
EMBED_MODES = ("text", "contextualized", "embed_text")
EmbedMode = Literal["text", "contextualized", "embed_text"]

#: Question types left out of the summary rows and reported only by type: an anaphora
#: question ("And for the next one?") depends on an earlier turn of a conversation, so
#: retrieval on its text alone cannot be expected to answer it.
APART_TYPES = ("Contextual Anaphora",)
