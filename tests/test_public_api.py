"""The public surface: what ``import kebab_chunk`` exports, and the one exception tree.

Every exception class a module of the package exports (its ``__all__``) must be defined in
``kebab_chunk.errors`` and derive from ``KebabError``, so ``except KebabError`` catches
every error the library raises on purpose (docs/internals/architecture.md).
"""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

import kebab_chunk
from kebab_chunk import errors
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.parsers.base import ParseLimits

PUBLIC = [
    "CanonicalDocument",
    "Chunk",
    "ChunkPolicy",
    "ConfigurationError",
    "DocumentError",
    "EnvironmentProblem",
    "KebabError",
    "Manifest",
    "MarkdownChunker",
    "__version__",
    "get_chunker",
    "make_policy",
    "parse_document",
    "read_chunks",
    "read_documents",
    "read_errors",
    "read_manifest",
    "read_table",
    "registered_labels",
]


def test_top_level_exports_exactly_the_public_names() -> None:
    assert sorted(kebab_chunk.__all__) == sorted(PUBLIC)
    for name in PUBLIC:
        assert getattr(kebab_chunk, name) is not None, name


def test_every_exception_is_in_exactly_one_group_of_handling() -> None:
    """Configuration (fix the call), environment (fix the machine), document (record it and
    go on): a caller handles each of our errors by catching one of three classes."""
    groups = (errors.ConfigurationError, errors.EnvironmentProblem, errors.DocumentError)
    for name in errors.__all__:
        cls = getattr(errors, name)
        if cls is errors.KebabError or cls in groups:
            continue
        assert sum(issubclass(cls, group) for group in groups) == 1, name
    assert errors.UsageError is errors.ConfigurationError
    assert issubclass(errors.ParseError, errors.DocumentError)
    assert issubclass(errors.UnknownChunkerError, KeyError)  # still what a dict lookup raises


def _modules() -> list[str]:
    names = ["kebab_chunk"]
    for info in pkgutil.walk_packages(kebab_chunk.__path__, "kebab_chunk."):
        if not info.name.endswith("__main__"):
            names.append(info.name)
    return names


def test_every_exported_name_resolves_and_readers_load_lazily() -> None:
    for name in kebab_chunk.__all__:
        assert getattr(kebab_chunk, name) is not None
    code = (
        "import sys, kebab_chunk; assert 'pyarrow.dataset' not in sys.modules; "
        "kebab_chunk.read_chunks; assert 'pyarrow.dataset' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_exported_exception_lives_in_errors_and_derives_from_kebab_error() -> None:
    seen = 0
    wrong = []
    for name in _modules():
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr)
            if isinstance(obj, type) and issubclass(obj, BaseException):
                seen += 1
                if obj.__module__ != "kebab_chunk.errors" or not issubclass(obj, errors.KebabError):
                    wrong.append(f"{name}.{attr} ({obj.__module__})")
    assert seen >= len(errors.__all__)
    assert wrong == []


def test_the_tree_drawn_in_the_docstring_names_every_exception() -> None:
    doc = errors.__doc__ or ""
    for name in errors.__all__:
        assert name in doc, name
        assert issubclass(getattr(errors, name), errors.KebabError)


@pytest.mark.parametrize(
    "make",
    [
        lambda: ChunkPolicy(target_tokens=0),
        lambda: ChunkPolicy(overlap_tokens=600),
        lambda: ChunkPolicy(max_tokens=-1),
    ],
)
def test_a_bad_policy_is_our_one_sentence_error(make: object) -> None:
    with pytest.raises(errors.PolicyError) as info:
        make()  # type: ignore[operator]
    assert "\n" not in str(info.value) and str(info.value).endswith(".")


@pytest.mark.parametrize("field", ["max_pages", "max_blocks", "max_nesting", "time_budget_s"])
def test_bad_parse_limits_are_refused(field: str) -> None:
    with pytest.raises(errors.LimitsError, match=field):
        ParseLimits(**{field: -5})
    with pytest.raises(errors.LimitsError):
        ParseLimits(**{field: 0})


def test_text_where_bytes_belong_is_one_clear_error() -> None:
    with pytest.raises(errors.NotBytesError, match=r"got str; pass text\.encode"):
        kebab_chunk.parse_document("# hello", "a.md")  # type: ignore[arg-type]
    assert kebab_chunk.parse_document(b"# hello", "a.md").title == "hello"
