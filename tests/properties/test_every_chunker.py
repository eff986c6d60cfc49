"""Properties every registered chunker keeps, on generated documents of every format it
accepts (issue 7, item 4).

Labels come from ``registered_labels()``, so a new label is tested the moment it is
registered: for each label the formats it accepts are found by asking it (a label that
accepts none of the generated formats fails ``test_every_label_accepts_a_generated_format``).
Every label must be deterministic, keep document order, give unique ids, cite spans that
lie inside the source and point into its own blocks, and never emit an empty chunk except
for an image/audio reference. On top, ``PROMISES`` holds what each label promises beyond
that (exact slices, budgets, stated token counts), from its module docstring; a label
without an entry fails ``test_every_label_states_its_promises`` until one is written.
Example budgets come from the suite profiles (``ci``, ``local``, ``fast``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kebab_chunk.chunkers._budget import budget_of, resolve_max_tokens
from kebab_chunk.chunkers._header_chars import char_budget
from kebab_chunk.chunkers._separators import is_exact
from kebab_chunk.chunkers.contextualize import contextualize
from kebab_chunk.chunkers.registry import get_chunker, registered_labels
from kebab_chunk.model import Chunk, ChunkPolicy, make_policy
from kebab_chunk.model.spans import ElementSpan, LineSpan, PageSpan
from kebab_chunk.tokenizers import get_tokenizer
from tests.chunkers.test_hybrid_v2 import promises as hybrid_v2_promises
from tests.chunkers.test_md_header_chars_v2 import promises as md_header_chars_v2_promises
from tests.chunkers.test_pdf_page_v2 import promises as pdf_page_v2_promises
from tests.properties.documents import FORMATS, Generated, Part, parts, render

MEDIA = ("image_ref", "audio_ref")
LABELS = registered_labels()

_SAMPLE = [
    Part("heading", ("Title",)),
    Part("paragraph", ("Some words here.",)),
    Part("list", ("one", "two")),
    Part("table", ("a,b", "1,2")),
]


@cache
def accepted_formats(label: str) -> tuple[str, ...]:
    """The generated formats ``label`` accepts, asked of the chunker itself."""
    chunker = get_chunker(label)
    return tuple(f for f in FORMATS if chunker.accepts(render(f, _SAMPLE).doc))


@st.composite
def policies(draw: st.DrawFn) -> ChunkPolicy:
    target = draw(st.integers(8, 160))
    return make_policy(
        target_tokens=target,
        overlap_tokens=draw(st.sampled_from([0, 0, 1, target // 4, target - 1])),
        max_tokens=draw(st.sampled_from([None, None, 12, 64, 300])),
        tokenizer=draw(st.sampled_from(["bytes-3", "chars"])),
        merge_peers=draw(st.booleans()),
        merge_list_items=draw(st.booleans()),
    )


# ------------------------------------------------------------------ label promises


@dataclass(frozen=True)
class Ctx:
    gen: Generated
    chunks: list[Chunk]
    policy: ChunkPolicy

    def kinds(self, chunk: Chunk) -> list[str]:
        by_id = {b.block_id: b.kind for b in self.gen.doc.blocks}
        return [by_id[b] for b in chunk.block_ids]

    def is_media(self, chunk: Chunk) -> bool:
        return all(k in MEDIA for k in self.kinds(chunk))


def _whole_slice(ctx: Ctx, chunk: Chunk) -> None:
    """The chunk is the source from its first span's start to its last span's end."""
    first, last = chunk.source_spans[0], chunk.source_spans[-1]
    assert ctx.gen.source is not None
    assert ctx.gen.source[first.char_start : last.char_end] == chunk.text


def _byte_proxy(chunk: Chunk) -> None:
    assert chunk.token_estimate == math.ceil(len(chunk.text.encode("utf-8")) / 3)


def _contextualised_count(ctx: Ctx, chunk: Chunk) -> int:
    count = get_tokenizer(ctx.policy.tokenizer).count_tokens(contextualize(chunk))
    assert chunk.token_estimate == count, "token_estimate is the stated count"
    return count


def md_heading_v1(ctx: Ctx) -> None:
    blocks = {b.block_id: b for b in ctx.gen.doc.blocks}
    for chunk in ctx.chunks:
        if ctx.is_media(chunk):
            continue
        _byte_proxy(chunk)
        if not ctx.gen.exact:  # rendered text (HTML): each block is kept whole, as given
            (block_id,) = chunk.block_ids
            assert chunk.text == blocks[block_id].text
            continue
        _whole_slice(ctx, chunk)
        if chunk.token_estimate > ctx.policy.target_tokens:
            assert ctx.kinds(chunk) in (["code"], ["table"]), "only a whole code/table is over"


def md_heading_v2(ctx: Ctx) -> None:
    blocks = {b.block_id: b for b in ctx.gen.doc.blocks}
    budget = budget_of(ctx.policy, get_tokenizer(ctx.policy.tokenizer))
    for chunk in ctx.chunks:
        if ctx.is_media(chunk):
            continue
        count = get_tokenizer(ctx.policy.tokenizer).count_tokens(chunk.text)
        assert chunk.token_estimate == count, "token_estimate is the exact count of text"
        first = blocks[chunk.block_ids[0]]
        if not is_exact(first.text, first.spans):  # rendered (HTML) or one span per record
            assert len(chunk.block_ids) == 1  # (CSV): such a block is kept whole, as given
            assert chunk.text == first.text
            continue
        _whole_slice(ctx, chunk)
        assert count <= budget or len(chunk.text) == 1, "only one over-wide character is over"


def md_heading_v3(ctx: Ctx) -> None:
    """md-heading-v2's promises, and no heading path line over half the budget in tokens or
    twice it in characters (bar a single first character; ``_context.bound_line``)."""
    md_heading_v2(ctx)
    tokenizer = get_tokenizer(ctx.policy.tokenizer)
    budget = budget_of(ctx.policy, tokenizer)
    for chunk in ctx.chunks:
        for line in chunk.heading_path:
            fits = tokenizer.count_tokens(line) <= budget // 2 and len(line) <= 2 * budget
            assert fits or len(line) == 1, "a heading path line over the bound"


def md_header_chars_v1(ctx: Ctx) -> None:
    max_chars, _ = char_budget(ctx.policy)
    for chunk in ctx.chunks:
        if ctx.is_media(chunk):
            continue
        assert len(chunk.text) <= max_chars
        if ctx.gen.fmt in ("md", "txt"):  # LF only: the section text is the source slice
            _whole_slice(ctx, chunk)


def pdf_page_v1(ctx: Ctx) -> None:
    assert ctx.gen.pages is not None
    for chunk in ctx.chunks:
        (span,) = chunk.source_spans
        assert isinstance(span, PageSpan)
        assert ctx.gen.pages[span.page - 1][span.char_start : span.char_end] == chunk.text
        _byte_proxy(chunk)


def hierarchical_v1(ctx: Ctx) -> None:
    blocks = {b.block_id: b for b in ctx.gen.doc.blocks}
    for chunk in ctx.chunks:
        _contextualised_count(ctx, chunk)
        (block_id,) = chunk.block_ids  # one element per chunk
        block = blocks[block_id]
        if ctx.policy.merge_list_items or block.kind != "list":
            if block.kind not in MEDIA:
                assert chunk.text == block.text
            assert chunk.source_spans == block.spans


def hybrid_v1(ctx: Ctx) -> None:
    budget = resolve_max_tokens(ctx.policy, get_tokenizer(ctx.policy.tokenizer))
    for chunk in ctx.chunks:
        count = _contextualised_count(ctx, chunk)
        assert count <= budget or len(chunk.text) == 1
        if ctx.gen.exact and len(chunk.source_spans) == 1:
            _whole_slice(ctx, chunk)


def _titled_paths(ctx: Ctx) -> None:
    if ctx.gen.doc.title:
        for chunk in ctx.chunks:
            assert chunk.heading_path, f"{chunk.chunk_id}: no heading path under a titled document"


PROMISES: dict[str, Callable[[Ctx], None]] = {
    "md-heading-v1": md_heading_v1,
    "md-heading-v2": md_heading_v2,
    "md-heading-v3": md_heading_v3,  # v2's chunks, heading path lines bounded
    "md-header-chars-v1": md_header_chars_v1,
    "md-header-chars-v2": lambda ctx: md_header_chars_v2_promises(
        ctx.gen.source, ctx.chunks, ctx.policy
    ),
    # v2's promises; and with a document title no chunk is without a heading path (the
    # title roots it until a level-1 heading replaces it).
    "md-header-chars-v3": lambda ctx: (
        md_header_chars_v2_promises(ctx.gen.source, ctx.chunks, ctx.policy),
        _titled_paths(ctx),
    ),
    "pdf-page-v1": pdf_page_v1,
    "pdf-page-v2": lambda ctx: pdf_page_v2_promises(ctx.gen.pages or (), ctx.chunks, ctx.policy),
    "pdf-page-v3": lambda ctx: pdf_page_v2_promises(ctx.gen.pages or (), ctx.chunks, ctx.policy),
    "hierarchical-v1": hierarchical_v1,
    "hybrid-v1": hybrid_v1,
    "hybrid-v2": lambda ctx: hybrid_v2_promises(
        ctx.gen.doc, ctx.chunks, ctx.policy, ctx.gen.source if ctx.gen.exact else None
    ),
    # hybrid-v3 makes the same promises (a merged slice + rendered chunk has several spans).
    "hybrid-v3": lambda ctx: hybrid_v2_promises(
        ctx.gen.doc, ctx.chunks, ctx.policy, ctx.gen.source if ctx.gen.exact else None
    ),
    # hybrid-v4 too, with each heading line as bound_line cuts it.
    "hybrid-v4": lambda ctx: hybrid_v2_promises(
        ctx.gen.doc,
        ctx.chunks,
        ctx.policy,
        ctx.gen.source if ctx.gen.exact else None,
        bounded=True,
    ),
}


# ------------------------------------------------------------------ generic properties


def _span_locator(span: object) -> tuple[object, ...]:
    if isinstance(span, PageSpan):
        return ("page", span.page)
    if isinstance(span, ElementSpan):
        return ("element", span.ref)
    return ("lines",)


def check_generic(label: str, gen: Generated, chunks: Sequence[Chunk]) -> None:
    doc = gen.doc
    order = {b.block_id: i for i, b in enumerate(doc.blocks)}
    blocks = {b.block_id: b for b in doc.blocks}
    assert [c.position for c in chunks] == list(range(len(chunks)))
    assert len({c.chunk_id for c in chunks}) == len(chunks), "ids unique"
    first_blocks = []
    for chunk in chunks:
        assert chunk.chunker_version == label
        assert (chunk.doc_id, chunk.source_uri, chunk.content_hash, chunk.parser_version) == (
            doc.doc_id,
            doc.source_uri,
            doc.content_hash,
            doc.parser_version,
        )
        indices = [order[b] for b in chunk.block_ids]  # KeyError: not a block of the doc
        assert indices and indices == sorted(set(indices)), "blocks in document order"
        first_blocks.append(indices[0])
        kinds = [blocks[b].kind for b in chunk.block_ids]
        assert chunk.text.strip() or all(k in MEDIA for k in kinds), "empty chunk"
        assert chunk.token_estimate >= 0
        for span in chunk.source_spans:
            assert 0 <= span.char_start <= span.char_end
            own = [
                s
                for b in chunk.block_ids
                for s in blocks[b].spans
                if _span_locator(s) == _span_locator(span)
            ]
            assert own, "a span must point into one of the chunk's own blocks"
            assert min(s.char_start for s in own) <= span.char_start
            assert span.char_end <= max(s.char_end for s in own)
            if isinstance(span, LineSpan):
                assert gen.source is not None and span.char_end <= len(gen.source)
                assert 1 <= span.line_start <= span.line_end
                if gen.exact and not all(k in MEDIA for k in kinds):
                    cited = gen.source[span.char_start : span.char_end]
                    assert cited in chunk.text, "a span slices back to text of the chunk"
            elif isinstance(span, PageSpan):
                assert gen.pages is not None and 1 <= span.page <= len(gen.pages)
                assert span.char_end <= len(gen.pages[span.page - 1])
                cited = gen.pages[span.page - 1][span.char_start : span.char_end]
                assert cited in chunk.text
    assert first_blocks == sorted(first_blocks), "chunks follow document order"


# ------------------------------------------------------------------ the tests


def test_every_label_accepts_a_generated_format() -> None:
    accepted = {label: accepted_formats(label) for label in LABELS}
    assert all(accepted.values()), f"labels without a generated format: {accepted}"
    assert accepted_formats("pdf-page-v1") == ("pdf",)  # the probe itself discriminates


def test_every_label_states_its_promises() -> None:
    missing = sorted(set(LABELS) - set(PROMISES))
    assert not missing, f"write the promises of {missing} into PROMISES"


@pytest.mark.parametrize("label", LABELS)
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data(), abstract=parts, policy=policies())
def test_chunker_properties_on_every_accepted_format(
    label: str, data: st.DataObject, abstract: list[Part], policy: ChunkPolicy
) -> None:
    formats = accepted_formats(label)
    assume(formats)
    fmt = data.draw(st.sampled_from(formats), label="format")
    gen = render(fmt, abstract)
    chunker = get_chunker(label)
    assume(chunker.accepts(gen.doc))
    chunks = chunker.chunk(gen.doc, policy)
    check_generic(label, gen, chunks)
    # determinism: a fresh chunker on a freshly parsed copy of the same bytes
    assert get_chunker(label).chunk(gen.reparse(), policy) == chunks
    if label in PROMISES:
        PROMISES[label](Ctx(gen, chunks, policy))
