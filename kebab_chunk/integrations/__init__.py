"""Adapters from our chunk records into other RAG toolkits (optional extras).

Each adapter keeps ``chunk_id`` as the target's id, so re-ingesting a corpus upserts the
same rows instead of duplicating them. Records are accepted in every form the pipeline's
output reads back in: ``Chunk`` objects, their dict form, pyarrow rows, a pandas
``DataFrame`` from ``pd.read_parquet(OUT / "chunks")``, a ``pyarrow.Table``. Metadata comes
in two forms (``metadata=``): ``"full"`` (default) carries every other record field (spans,
heading path, versions, hashes) as JSON, so a hit can still be cited exactly and the record
rebuilt; ``"flat"`` carries scalars only (:func:`flat_metadata`), which vector stores such
as Chroma require. docs/guide/integrations.md has the whole story.

- :mod:`kebab_chunk.integrations.langchain`: ``langchain_core.documents.Document``
  (``pip install kebab-chunk[langchain]``), and ``KebabTextSplitter``, a LangChain
  ``TextSplitter`` over any registered label;
- :mod:`kebab_chunk.integrations.llamaindex`: ``llama_index.core.schema.TextNode``
  (``pip install kebab-chunk[llamaindex]``), and ``KebabNodeParser``, a LlamaIndex
  ``NodeParser`` over any registered label;
- :mod:`kebab_chunk.integrations.beam_rag`: ``apache_beam.ml.rag.types.Chunk`` and the
  ``ToBeamRagChunks`` transform for use after the pipeline's chunking step
  (``pip install kebab-chunk[pipeline]``).

The third-party packages are imported only when an adapter is called (the splitter and
node parser modules import theirs when imported); a missing one gives an ``ImportError``
that says what to install.
"""

from kebab_chunk.integrations._common import (
    FLAT_KEYS,
    FLAT_SEPARATOR,
    MetadataMode,
    as_records,
    contextualize,
    flat_metadata,
    record_from_metadata,
    record_metadata,
)

__all__ = [
    "FLAT_KEYS",
    "FLAT_SEPARATOR",
    "MetadataMode",
    "as_records",
    "contextualize",
    "flat_metadata",
    "record_from_metadata",
    "record_metadata",
]
