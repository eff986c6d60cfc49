"""The runnable job (``python -m pipelines.chunk_corpus``); the job itself lives in kebab_chunk."""
