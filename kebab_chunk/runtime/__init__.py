"""Running the library safely inside any worker, with no Beam: helper processes that
parse and chunk under limits (``supervisor`` starts, feeds, times out and replaces them;
``helper`` is the process itself; ``protocol`` is what the two send each other) and the
tasks they run (``tasks``).
``kebab_chunk/beam/`` wires these into transforms (docs/internals/architecture.md)."""
