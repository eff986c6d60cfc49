"""The shape of ``manifest.json``, as types a caller can check against.

``read_manifest`` and ``RunResult.manifest`` give the parsed JSON unchanged (a ``dict``, so
code written against the JSON keeps working); these ``TypedDict`` s say which keys it has
and what each holds (docs/internals/contract.md). ``options`` and ``run_info``
stay open mappings: they record what a run was given and where it ran, and grow with new
options. ``snapshot`` is present in an output updated with ``run --update``, and
``incremental`` in the manifest of a run with ``--previous`` or ``--update``.
"""

from typing import Any, NotRequired, TypedDict

__all__ = [
    "Accounting",
    "ChunkerSection",
    "Counts",
    "IncrementalSection",
    "Manifest",
    "MediaTypeCounts",
    "OutputFile",
    "PackageSection",
    "SnapshotSection",
]


class PackageSection(TypedDict):
    """What wrote the output."""

    name: str
    version: str


class ChunkerSection(TypedDict):
    """The labels the run applied, and the default labels by media type it used."""

    labels: list[str]
    defaults_by_media_type: dict[str, list[str]]


class OutputFile(TypedDict):
    """One part file the output lists, relative to the output directory."""

    path: str
    rows: int
    bytes: int
    blake3: str
    #: The snapshot that added the file (updated outputs).
    snapshot: NotRequired[int]


class MediaTypeCounts(TypedDict):
    """How the files of one media type ended."""

    files: int
    chunked: int
    zero_chunks: int
    errors: int
    skipped: int


class Counts(TypedDict):
    """What the run read and wrote, computed from what was written."""

    files_matched: int
    bytes_matched: int
    documents_parsed: int
    documents_with_warnings: int
    documents_by_parser_version: dict[str, int]
    documents_chunked: int
    documents_with_zero_chunks: int
    documents_with_errors: int
    documents_skipped: int
    chunks_total: int
    chunks_by_label: dict[str, int]
    by_media_type: dict[str, MediaTypeCounts]
    error_rows: int
    errors_by_stage: dict[str, int]


class Accounting(TypedDict):
    """``files_matched = documents_chunked + documents_with_zero_chunks + errors + skipped``
    and whether it holds (``closes``), with the files that break it."""

    equation: str
    files_matched: int
    documents_chunked: int
    documents_with_zero_chunks: int
    errors: int
    skipped: int
    inconsistent: int
    closes: bool
    unaccounted_files: list[str]
    unexpected_files: list[str]
    inconsistent_files: list[str]
    skipped_files: list[str]
    zero_chunk_files: list[str]


class SnapshotSection(TypedDict):
    """Which snapshot a manifest is, the one before it, its delete files and change feed."""

    id: int
    parent: int | None
    deletes: list[OutputFile]
    changes: dict[str, Any] | None


class IncrementalSection(TypedDict):
    """What a run with ``--previous`` or ``--update`` reused from the output before it:
    documents ``reused``, ``rechunked``, ``new`` and ``deleted``."""

    previous_output: str
    #: The snapshot an update started from (``--update`` only).
    base_snapshot: NotRequired[int]
    documents: dict[str, int]


class Manifest(TypedDict):
    """A finished output's ``manifest.json``."""

    manifest_version: int
    package: PackageSection
    schema_version: str
    options: dict[str, Any]
    chunkers: ChunkerSection
    policy: dict[str, Any]
    policy_hash: str
    parsers: dict[str, str]
    outputs: dict[str, list[OutputFile]]
    counts: Counts
    accounting: Accounting
    run_info: dict[str, Any]
    #: Runs with ``--previous`` or ``--update``.
    incremental: NotRequired[IncrementalSection]
    snapshot: NotRequired[SnapshotSection]
