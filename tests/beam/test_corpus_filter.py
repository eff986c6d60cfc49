"""Choosing the corpus files: ``CorpusFilter``, several inputs, and ``ReadCorpus`` applying both.

A user pointed ``--input`` at a git checkout and got one error row per ``.git/*`` object,
chunks made from ``node_modules/`` and no way to give two folders. These tests pin the
glob rules (against a regex oracle written independently of the implementation), the
hidden/tool-folder defaults, the refusals, the roots of several inputs and the read
stage's use of all of it (nothing read, no error row, the walk never enters ``.git``).
"""

from __future__ import annotations

import os
import pickle
import re
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.io.filesystems import FileSystems
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to
from hypothesis import given, settings
from hypothesis import strategies as st

from kebab_chunk.beam import ReadCorpus
from kebab_chunk.beam.locations import (
    CorpusLocation,
    check_output_location,
    resolve_corpora,
    resolve_corpus,
)
from kebab_chunk.beam.read import (
    BROKEN_SYMLINK,
    SYMLINK_OUTSIDE_CORPUS,
    selected_files,
)
from kebab_chunk.corpus import SKIPPED_FOLDERS, CorpusFilter
from kebab_chunk.errors import RunSetupError, UsageError
from kebab_chunk.output.records import ErrorRecord
from tests.beam.checkout import DOC, DOCUMENTS, write_checkout
from tests.beam.helpers import quiet_beam
from tests.beam.listing import read_listing

quiet_beam()

# ---------------------------------------------------------------- the predicate


@pytest.mark.parametrize(
    ("path", "kept"),
    [
        ("README.md", True),
        ("docs/guide.md", True),
        (".gitignore", False),
        (".git/HEAD", False),
        ("docs/.draft.md", False),
        ("a/b/.svn/entries", False),
        ("node_modules/pkg/README.md", False),
        ("deep/node_modules/x.md", False),
        ("src/__pycache__/m.pyc", False),
        ("CVS/Root", False),
        ("node_modules", True),  # a *file* of that name is not a folder
        ("my.notes/a.md", True),  # a dot inside a name is not hidden
    ],
)
def test_hidden_entries_and_tool_folders_are_skipped_by_default(path: str, kept: bool) -> None:
    assert CorpusFilter().accepts(path) is kept
    assert CorpusFilter(include_hidden=True).accepts(path) is True


@pytest.mark.parametrize(
    ("pattern", "path", "matched"),
    [
        # no '/': a name at any depth, file or folder
        ("*.md", "a.md", True),
        ("*.md", "x/y/a.md", True),
        ("*.md", "a.txt", False),
        ("drafts", "drafts/a.txt", True),
        ("drafts", "x/drafts/y/a.txt", True),
        ("draft?", "drafts/a.txt", True),
        # with '/': anchored at the root; '*' never crosses '/'
        ("docs/*.md", "docs/a.md", True),
        ("docs/*.md", "docs/sub/a.md", False),
        ("docs/*.md", "x/docs/a.md", False),
        ("*/a.md", "x/a.md", True),
        ("*/a.md", "x/y/a.md", False),
        # '**' crosses folders, zero or more of them
        ("docs/**/*.md", "docs/a.md", True),
        ("docs/**/*.md", "docs/x/y/a.md", True),
        ("docs/**", "docs/x/y/a.md", True),
        ("docs/**", "docs", False),  # the file 'docs' is not inside the folder
        ("**/b/*.md", "b/a.md", True),
        ("**/b/*.md", "x/y/b/a.md", True),
        # a leading '/' (or './') anchors a single name; a trailing '/' means folders only
        ("/README.md", "README.md", True),
        ("/README.md", "sub/README.md", False),
        ("./README.md", "sub/README.md", False),
        ("build/", "build/out.md", True),
        ("build/", "build", False),
        ("build/", "x/build", False),
        # sets, and characters that are special elsewhere are plain here
        ("[ab].md", "a.md", True),
        ("[!ab].md", "a.md", False),
        ("[!ab].md", "c.md", True),
        ("[*].md", "*.md", True),
        ("[*].md", "a.md", False),
        ("a\\b.md", "a\\b.md", True),
        ("%41.md", "%41.md", True),
        # case-sensitive, like POSIX file names
        ("*.MD", "a.md", False),
    ],
)
def test_glob_rules(pattern: str, path: str, matched: bool) -> None:
    assert CorpusFilter(include=(pattern,)).accepts(path) is matched
    assert CorpusFilter(exclude=(pattern,)).accepts(path) is (not matched)


def test_exclude_wins_over_include() -> None:
    chosen = CorpusFilter(include=("*.md", "notes/**"), exclude=("drafts/", "*.tmp.md"))
    paths = ["a.md", "drafts/b.md", "x/c.tmp.md", "notes/d.txt", "e.txt"]
    assert [p for p in paths if chosen.accepts(p)] == ["a.md", "notes/d.txt"]


def test_names_the_user_typed_are_never_judged_hidden() -> None:
    chosen = CorpusFilter()
    assert chosen.accepts(".notes/a.md", named=".notes/")
    assert not chosen.accepts(".notes/.cache/a.md", named=".notes/")  # below it they are
    assert chosen.accepts(".env.md", named=".env.md")  # a file given as the input
    assert not chosen.accepts(".env.md", named="other.md")
    assert chosen.accepts_folder("node_modules/pkg", named="node_modules/pkg/")


def test_folders_are_ruled_out_by_hidden_and_exclude_but_never_by_include() -> None:
    chosen = CorpusFilter(include=("*.md",), exclude=("vendor",))
    assert chosen.accepts_folder("docs")  # no .md in the name, but files inside may be
    assert not chosen.accepts_folder("x/vendor")
    assert not chosen.accepts_folder(".git")
    assert not chosen.accepts_folder("a/node_modules")
    assert CorpusFilter(include_hidden=True).accepts_folder("a/node_modules")


@pytest.mark.parametrize(
    ("include", "exclude", "include_hidden", "needle"),
    [
        (("",), (), False, "--include '' is an empty pattern"),
        ((), ("a//b",), False, "has an empty, '.' or '..' part"),
        ((), ("../outside/**",), False, "has an empty, '.' or '..' part"),
        ((), ("/",), False, "has an empty, '.' or '..' part"),
        (("docs/./a.md",), (), False, "has an empty, '.' or '..' part"),
        (("a\0b",), (), False, "NUL character"),
        ((".github/**",), (), False, "add --include-hidden"),
        (("**/node_modules/*.md",), (), False, "add --include-hidden"),
    ],
)
def test_patterns_that_cannot_be_right_are_one_sentence(
    include: tuple[str, ...], exclude: tuple[str, ...], include_hidden: bool, needle: str
) -> None:
    with pytest.raises(UsageError) as raised:
        CorpusFilter(include, exclude, include_hidden)
    message = str(raised.value)
    assert needle in message and message.endswith(".") and message.count(". ") == 0, message


def test_a_hidden_include_is_fine_with_include_hidden() -> None:
    chosen = CorpusFilter(include=(".github/**",), include_hidden=True)
    assert chosen.accepts(".github/workflows/ci.md") and not chosen.accepts("README.md")


def test_the_filter_pickles_and_records_itself_for_the_manifest() -> None:
    chosen = CorpusFilter.from_options(["*.md"], None, False)
    assert chosen == CorpusFilter(("*.md",))
    again = pickle.loads(pickle.dumps(chosen))
    assert again == chosen and again.accepts("a/b.md") and not again.accepts("a/b.txt")
    assert chosen.to_manifest() == {
        "include": ["*.md"],
        "exclude": [],
        "include_hidden": False,
        "skipped_folders": list(SKIPPED_FOLDERS),
    }
    assert CorpusFilter(include_hidden=True).to_manifest()["skipped_folders"] == []
    assert CorpusFilter(exclude=("a",)).to_manifest() != CorpusFilter().to_manifest()


# ---------------------------------------------------------------- property: an oracle


def _oracle_regex(pattern: str) -> tuple[re.Pattern[str], bool]:
    """The documented glob rules as one regex over a relative path (no '[' sets)."""
    text, anchored = pattern, False
    if text.startswith("/"):
        text, anchored = text[1:], True
    folders_only = text.endswith("/")
    names = text.rstrip("/").split("/")
    if not anchored and len(names) == 1:
        names = ["**", *names]
    out = ""
    for i, name in enumerate(names):
        last = i == len(names) - 1
        if name == "**":
            out += ".+" if last else "(?:[^/]+/)*"
            continue
        body = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in name)
        out += body if last else body + "/"
    return re.compile(out, re.DOTALL), folders_only


def _oracle(pattern: str, path: str) -> bool:
    regex, folders_only = _oracle_regex(pattern)
    names = path.split("/")
    ends = range(1, len(names)) if folders_only else range(1, len(names) + 1)
    return any(regex.fullmatch("/".join(names[:j])) for j in ends)


_NAMES = st.sampled_from(["a", "b", "ab", "a.md", "b.md", ".a", "x y"])
_GLOB_NAMES = st.sampled_from(["a", "b", "*", "?", "**", "*.md", "a*", "?.md", ".a", "a**"])


@settings(max_examples=400, deadline=None)
@given(
    path=st.lists(_NAMES, min_size=1, max_size=4).map("/".join),
    names=st.lists(_GLOB_NAMES, min_size=1, max_size=3),
    lead=st.booleans(),
    trail=st.booleans(),
)
def test_matching_agrees_with_an_independent_regex_oracle(
    path: str, names: list[str], lead: bool, trail: bool
) -> None:
    pattern = ("/" if lead else "") + "/".join(names) + ("/" if trail else "")
    expected = _oracle(pattern, path)
    assert CorpusFilter(include=(pattern,), include_hidden=True).accepts(path) is expected
    assert CorpusFilter(exclude=(pattern,), include_hidden=True).accepts(path) is not expected


@settings(max_examples=200, deadline=None)
@given(path=st.lists(_NAMES, min_size=1, max_size=4).map("/".join))
def test_hidden_rule_is_exactly_a_name_starting_with_a_dot(path: str) -> None:
    assert CorpusFilter().accepts(path) is not any(n.startswith(".") for n in path.split("/"))


# ---------------------------------------------------------------- several inputs


def _tree(root: Path, *uris: str) -> Path:
    for uri in uris:
        (root / uri).parent.mkdir(parents=True, exist_ok=True)
        (root / uri).write_bytes(DOC)
    return root


def test_one_input_resolves_exactly_as_before(tmp_path: Path) -> None:
    _tree(tmp_path, "c/a.md", "c/sub/b.md")
    for given_path in [str(tmp_path / "c"), str(tmp_path / "c" / "*.md"), str(tmp_path / "c/a.md")]:
        one = resolve_corpora([given_path])
        assert one == resolve_corpus(given_path) and one.inputs == (one,)


def test_several_inputs_share_their_longest_common_parent(tmp_path: Path) -> None:
    _tree(tmp_path, "c/docs/a.md", "c/notes/b.md", "c/other/x.md", "c/docs2/y.md")
    both = resolve_corpora([str(tmp_path / "c/docs"), str(tmp_path / "c/notes/*.md")])
    assert both.root == f"{tmp_path}/c/"
    assert [p.root for p in both.inputs] == [f"{tmp_path}/c/docs/", f"{tmp_path}/c/notes/"]
    assert both.relative_patterns() == ["docs/**", "notes/*.md"]
    # a common *prefix* of names is no folder: docs/ and docs2/ share c/, not c/docs
    assert resolve_corpora([str(tmp_path / "c/docs"), str(tmp_path / "c/docs2")]).root == (
        f"{tmp_path}/c/"
    )
    files = resolve_corpora([str(tmp_path / "c/docs/a.md"), str(tmp_path / "c/notes/b.md")])
    assert files.relative_patterns() == ["docs/a.md", "notes/b.md"]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("c", "c"),
        ("c", "c/docs"),
        ("c/docs", "c"),
        ("c/docs", "c/docs/a.md"),
        ("c/docs/*.md", "c/docs/sub"),
        ("c/docs", "link-to-docs"),  # the same folder under another name
    ],
)
def test_overlapping_inputs_are_refused(tmp_path: Path, first: str, second: str) -> None:
    _tree(tmp_path, "c/docs/a.md", "c/docs/sub/b.md")
    (tmp_path / "link-to-docs").symlink_to(tmp_path / "c" / "docs", target_is_directory=True)
    with pytest.raises(RunSetupError, match="overlap, so some files would be read twice"):
        resolve_corpora([str(tmp_path / first), str(tmp_path / second)])


def test_two_files_of_one_folder_do_not_overlap(tmp_path: Path) -> None:
    _tree(tmp_path, "c/a.md", "c/b.md")
    both = resolve_corpora([str(tmp_path / "c/a.md"), str(tmp_path / "c/b.md")])
    assert both.root == f"{tmp_path}/c/" and both.relative_patterns() == ["a.md", "b.md"]


def test_inputs_in_different_buckets_or_file_systems_are_refused() -> None:
    for inputs in (["gs://one/a", "gs://two/b"], ["gs://one/a", "s3://one/b"], ["/a", "gs://b/c"]):
        with pytest.raises(RunSetupError, match="different file systems or buckets"):
            resolve_corpora(inputs, must_match=False)
    same = resolve_corpora(["gs://one/a/", "gs://one/b/"], must_match=False)
    assert same.root == "gs://one/" and same.relative_patterns() == ["a/**", "b/**"]


def test_comma_separated_inputs_get_a_hint(tmp_path: Path) -> None:
    _tree(tmp_path, "a/x.md", "b/y.md")
    with pytest.raises(RunSetupError, match="repeat --input once for each"):
        resolve_corpus(f"{tmp_path / 'a'},{tmp_path / 'b'}")


def test_output_beside_the_inputs_but_under_their_common_parent_is_fine(tmp_path: Path) -> None:
    _tree(tmp_path, "c/docs/a.md", "c/notes/b.md")
    both = resolve_corpora([str(tmp_path / "c/docs"), str(tmp_path / "c/notes")])
    assert check_output_location(str(tmp_path / "c" / "out"), corpus=both)
    with pytest.raises(RunSetupError, match="inside the corpus"):
        check_output_location(str(tmp_path / "c" / "notes" / "out"), corpus=both)
    with pytest.raises(RunSetupError, match="contains the corpus"):
        check_output_location(str(tmp_path), corpus=both)


# ---------------------------------------------------------------- the read stage


def _walk_rows(
    location: CorpusLocation, chosen: CorpusFilter | None = None
) -> set[tuple[str, str]]:
    return {
        (out.source_uri, out.error_type)
        for out in read_listing(location, chosen)
        if isinstance(out, ErrorRecord)
    }


def test_the_walk_never_records_or_enters_skipped_folders(tmp_path: Path) -> None:
    root = write_checkout(tmp_path / "repo")
    (root / "docs" / "gone.md").symlink_to(root / "missing-four")
    location = resolve_corpus(str(root))
    assert _walk_rows(location) == {("docs/gone.md", BROKEN_SYMLINK)}
    assert _walk_rows(location, CorpusFilter(exclude=("gone.md",))) == set()
    everything = _walk_rows(location, CorpusFilter(include_hidden=True))
    assert {uri for uri, _ in everything} == {
        "docs/gone.md",
        ".git/dangling",
        "node_modules/.bin/tool",
        "node_modules/pkg/broken.md",
    }


def test_the_walk_does_not_list_a_skipped_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_checkout(tmp_path / "repo")
    listed: list[str] = []
    real_scandir = os.scandir

    def spy(path: str) -> object:
        listed.append(os.fsdecode(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", spy)
    _walk_rows(resolve_corpus(str(root)))
    relative = {os.path.relpath(p, root) for p in listed}
    assert relative == {".", "docs", "src"}


def test_read_corpus_reads_only_the_documents_of_a_checkout(tmp_path: Path) -> None:
    root = write_checkout(tmp_path / "repo")
    with BeamTestPipeline() as p:
        out = p | ReadCorpus(str(root))
        assert_that(
            out["files"] | beam.Map(lambda f: f.source_uri), equal_to(DOCUMENTS), label="files"
        )
        assert_that(out["errors"], equal_to([]), label="no error rows")
        assert_that(
            out["documents"] | beam.Map(lambda d: (d.source_uri, d.raw)),
            equal_to([(u, DOC) for u in DOCUMENTS]),
            label="documents",
        )
    listed = selected_files(resolve_corpus(str(root)))
    assert [Path(path).relative_to(root).as_posix() for path, _ in listed] == sorted(DOCUMENTS)
    assert all(size == len(DOC) for _, size in listed)


def test_read_corpus_with_include_hidden_and_patterns(tmp_path: Path) -> None:
    root = write_checkout(tmp_path / "repo")
    chosen = CorpusFilter(include=("*.md",), exclude=("docs/",), include_hidden=True)
    expected = [".github/workflows/ci.md", "README.md", "node_modules/pkg/README.md"]
    with BeamTestPipeline() as p:
        out = p | ReadCorpus(str(root), corpus_filter=chosen)
        assert_that(
            out["documents"] | beam.Map(lambda d: d.source_uri), equal_to(expected), label="docs"
        )
        assert_that(
            out["errors"] | beam.Map(lambda e: (e.source_uri, e.error_type)),
            equal_to([("node_modules/pkg/broken.md", BROKEN_SYMLINK)]),
            label="the dangling .md link the filter selects",
        )


def test_read_corpus_over_several_inputs(tmp_path: Path) -> None:
    corpus = _tree(tmp_path / "c", "docs/a.md", "notes/b.md", "private/secret.md")
    (corpus / "docs" / "peek.md").symlink_to(corpus / "private" / "secret.md")
    with BeamTestPipeline() as p:
        out = p | ReadCorpus([str(corpus / "docs"), str(corpus / "notes")])
        assert_that(
            out["documents"] | beam.Map(lambda d: d.source_uri),
            equal_to(["docs/a.md", "notes/b.md"]),
            label="uris relative to the common parent",
        )
        # private/ is under the common root but is no input: a link into it leaves the corpus
        assert_that(
            out["errors"] | beam.Map(lambda e: (e.source_uri, e.error_type)),
            equal_to([("docs/peek.md", SYMLINK_OUTSIDE_CORPUS)]),
            label="errors",
        )


def test_the_listing_of_a_glob_lists_what_beams_match_does_and_enters_only_folders_it_could(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path / "c", "a1/x.md", "a1/y.md", "a2/x.md", "a2/deep/x.md", "b/x.md", "x.md")
    location = resolve_corpus(str(root / "a*" / "x.md"))
    beam_match = sorted(m.path for m in FileSystems.match([location.pattern])[0].metadata_list)
    listed: list[str] = []
    real_scandir = os.scandir

    def spy(path: str) -> object:
        listed.append(os.path.relpath(os.fsdecode(path), root))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", spy)
    assert [path for path, _ in selected_files(location)] == beam_match
    assert [Path(p).relative_to(root).as_posix() for p in beam_match] == ["a1/x.md", "a2/x.md"]
    assert sorted(listed) == [".", "a1", "a2"]  # never b/ nor a2/deep/
