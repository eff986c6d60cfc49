"""Retrieval-quality evaluation of chunker labels (``kebab-chunk eval``).

:mod:`.metrics` holds the range arithmetic (recall, precision, IoU over character ranges),
:mod:`.run` loads a questions file and a corpus, chunks, embeds, retrieves and scores, and
:mod:`.embed` embeds texts with a local sentence-embedding model (the ``eval`` extra).
Nothing is imported here, so importing one module never loads the model's dependencies.
"""
