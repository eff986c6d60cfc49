"""``embed_text`` and ``embed_tokens``: one text to embed, with the same meaning for every label.

Before these fields, md-heading chunks carried their heading line in ``text`` (only the
chunk that opens a section), hybrid-v1 kept headings out of ``text`` and counted tokens of a
contextualised string it did not store, and "embed the text column" meant different things
per file type. These tests pin the one recipe (docs/internals/contract.md, "The text to embed").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kebab_chunk.chunkers.contextualize import contextualize
from kebab_chunk.chunkers.embedding import embed_text, with_embedding
from kebab_chunk.chunkers.registry import get_chunker, registered_labels
from kebab_chunk.model import make_policy
from kebab_chunk.parsers.registry import parse_document
from kebab_chunk.tokenizers import get_tokenizer

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "corpus"
GUIDE = (CORPUS / "guides" / "configuration.md").read_bytes()
POLICY = make_policy(target_tokens=48, overlap_tokens=0)


def _records(label: str, raw: bytes = GUIDE, uri: str = "guides/configuration.md") -> list:
    chunker = get_chunker(label)
    doc = parse_document(raw, uri)
    assert chunker.accepts(doc)
    return with_embedding(chunker.chunk(doc, POLICY), chunker, POLICY)


MARKDOWN_LABELS = [
    label
    for label in registered_labels()
    if get_chunker(label).accepts(parse_document(GUIDE, "guides/configuration.md"))
]


def test_chunkers_alone_leave_the_fields_empty() -> None:
    doc = parse_document(GUIDE, "guides/configuration.md")
    assert all(c.embed_text is None for c in get_chunker("md-heading-v1").chunk(doc, POLICY))


@pytest.mark.parametrize("label", MARKDOWN_LABELS)
def test_every_label_names_each_heading_of_its_chunk_once(label: str) -> None:
    """The same meaning per label: every chunk's embed_text holds its heading path (as
    text, once) and its text; a heading line the text opens with is not repeated."""
    records = _records(label)
    assert records
    own = getattr(get_chunker(label), "embed_text", None)
    budget = get_tokenizer(POLICY.tokenizer).count_tokens
    for record in records:
        assert record.embed_text is not None
        if own is not None and budget(contextualize(record)) > POLICY.target_tokens:
            continue  # a label that shortens context to its budget says so itself
        assert record.embed_text.endswith(record.text)
        for heading in record.heading_path:
            assert heading in record.embed_text
        innermost = record.heading_path[-1] if record.heading_path else None
        if innermost:
            assert record.embed_text.count(innermost) == record.text.count(innermost) + (
                0 if record.text.lstrip("# ").startswith(innermost) else 1
            )


def test_md_heading_continuations_get_their_headings_and_openers_do_not_repeat_them() -> None:
    records = _records("md-heading-v1")
    opener = next(r for r in records if r.text.startswith("## Scheduling"))
    assert opener.embed_text == "Configuration reference\n" + opener.text
    continuation = next(
        r
        for r in records
        if r.heading_path[-1:] == ("Scheduling",) and not r.text.startswith("#")
    )
    assert continuation.embed_text == (
        "Configuration reference\nScheduling\n" + continuation.text
    )
    # Without the field, a user embedding ``text`` loses the section of a continuation.
    assert "Scheduling" not in continuation.text


def test_hybrid_embed_text_is_what_it_counted() -> None:
    """hybrid-v1 states token_estimate as the count of its contextualised text: that is
    exactly the embed_text now stored, and embed_tokens agrees with it."""
    for record in _records("hybrid-v1"):
        assert record.embed_text == contextualize(record)
        assert record.embed_tokens == record.token_estimate


@pytest.mark.parametrize("tokenizer", ["bytes-3", "chars"])
def test_embed_tokens_counts_embed_text_under_the_run_tokenizer(tokenizer: str) -> None:
    policy = make_policy(target_tokens=64, overlap_tokens=0, tokenizer=tokenizer)
    chunker = get_chunker("md-heading-v2")
    doc = parse_document(GUIDE, "guides/configuration.md")
    counter = get_tokenizer(tokenizer)
    for record in with_embedding(chunker.chunk(doc, policy), chunker, policy):
        assert record.embed_text is not None
        assert record.embed_tokens == counter.count_tokens(record.embed_text)


def test_a_chunker_may_say_what_it_embeds() -> None:
    class Own:
        def embed_text(self, chunk: object, policy: object) -> str:
            return "own" if policy is POLICY else "wrong policy"

    [record] = with_embedding(_records("md-heading-v1")[:1], Own(), POLICY)
    assert record.embed_text == "own" and record.embed_tokens == 1


def test_setext_and_closed_atx_openers_are_recognised() -> None:
    base = _records("md-heading-v1")[0]
    for text in ("Configuration reference\n=======\n\nBody.", "# Configuration reference #\n"):
        chunk = base.model_copy(update={"text": text})
        assert embed_text(chunk) == text
