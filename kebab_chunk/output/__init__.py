"""What a run writes and how to read it back: records, the Arrow schema, the directory
layout, readers and the diff of two outputs. Depends on pyarrow only, never on Beam, so
tools that read outputs (``inspect``, ``diff``, ``report``) start fast and work without a
runner installed (docs/internals/architecture.md)."""
