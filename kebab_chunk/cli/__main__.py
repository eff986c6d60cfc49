"""``python -m kebab_chunk.cli ...`` is the ``kebab-chunk`` console script."""

from kebab_chunk.cli import main

raise SystemExit(main())
