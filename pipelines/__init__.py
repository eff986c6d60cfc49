"""Runnable Beam jobs: options and wiring only; the transforms live in kebab_chunk.beam."""
