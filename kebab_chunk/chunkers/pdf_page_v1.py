"""``pdf-page-v1``: page-bounded chunks with exact page citations (docs/internals/decisions.md).

Input is a document from a PDF parser: every block a paragraph with exactly one ``page``
span covering its text (``pdf-text-v1`` gives one such block per page). Per block:

- whitespace-only (or empty) text gives no chunk;
- text within the byte budget ``target_tokens * BYTES_PER_TOKEN`` is one chunk;
- longer text is cut into segments, each ending after a run of blank lines (``\\n\\n``)
  or after sentence-ending punctuation plus its following whitespace. Chunk *cores*
  grow greedily segment by segment while they fit the budget, with at least one segment
  each; a single segment over the budget is cut hard at the budget on a code-point
  boundary (CJK text without punctuation still splits). Cores partition the text;
- every chunk but a block's first starts ``overlap_tokens * BYTES_PER_TOKEN`` characters
  before its core, but always after the previous chunk's start;
- a chunk whose text is only whitespace is dropped (it carries nothing to retrieve).

A chunk never spans two blocks, so it never crosses a page, and its single span satisfies
``page_text[char_start:char_end] == chunk.text``. When one block gives several chunks,
their ids use the slice guard (``make_chunk(is_slice=True)``) so they never collide.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

from kebab_chunk.chunkers._separators import PDF_SEGMENT_END, is_exact, separator_spans
from kebab_chunk.chunkers.base import LabelledChunker, ParserNeeds, make_chunk
from kebab_chunk.errors import UnsupportedDocumentError
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy, PageSpan, ParagraphBlock
from kebab_chunk.tokenizers import BYTES_PER_TOKEN

__all__ = ["PdfPageV1Chunker"]

_PDF_MEDIA_TYPE = "application/pdf"


class PdfPageV1Chunker(LabelledChunker):
    """Page-aware chunker for PDF documents, the engine of ``pdf-page-v1`` only (it sizes
    by the byte proxy whatever the policy's tokenizer); see the module docstring."""

    #: Only pdf-text-v1's blocks: pdf-text-v2 makes headings from a PDF's outline.
    needs = ParserNeeds(_PDF_MEDIA_TYPE, ("pdf-text-v1",))

    def accepts(self, doc: CanonicalDocument) -> bool:
        """True when every block is a page-spanned paragraph (an empty doc must be a PDF)."""
        if not doc.blocks:
            return doc.media_type == _PDF_MEDIA_TYPE
        return all(_page_span(block) is not None for block in doc.blocks)

    def chunk(self, doc: CanonicalDocument, policy: ChunkPolicy) -> list[Chunk]:
        """All chunks of ``doc`` in page order; UnsupportedDocumentError (one sentence naming
        the parser to pin, or a chunker for other documents) for a document it does not
        accept."""
        if not self.accepts(doc):
            raise UnsupportedDocumentError(
                self.needs.refusal(self.label, doc)
                or f"{self.label} needs every block to be a paragraph citing one exact page "
                f"range (as pdf-text-v1 makes), and {doc.source_uri} ({doc.media_type}, parsed "
                f"by {doc.parser_version}) is not such a document; use a chunker that accepts "
                "any document (such as hybrid-v4) for it"
            )
        budget = policy.target_tokens * BYTES_PER_TOKEN
        overlap = policy.overlap_tokens * BYTES_PER_TOKEN
        chunks: list[Chunk] = []
        for block in doc.blocks:
            span = _page_span(block)
            assert span is not None  # guaranteed by accepts()
            pieces = _slices(block.text, budget, overlap)
            for start, end in pieces:
                chunks.append(
                    make_chunk(
                        doc,
                        chunker_version=self.label,
                        policy=policy,
                        position=len(chunks),
                        text=block.text[start:end],
                        block_ids=(block.block_id,),
                        spans=(
                            PageSpan(
                                page=span.page,
                                char_start=span.char_start + start,
                                char_end=span.char_start + end,
                            ),
                        ),
                        is_slice=len(pieces) > 1,
                    )
                )
        return chunks


def _page_span(block: object) -> PageSpan | None:
    """The block's page span if it is a paragraph with exactly one span covering its text."""
    if not isinstance(block, ParagraphBlock) or not is_exact(block.text, block.spans):
        return None
    span = block.spans[0]
    return span if isinstance(span, PageSpan) else None


def _segment_ends(text: str) -> list[int]:
    """Sorted end offsets of the segments of ``text``; the last is ``len(text)``.

    A segment ends after a run of blank lines, or after sentence-ending punctuation (Latin
    and full-width CJK) together with the whitespace that follows it
    (``_separators.PDF_SEGMENT_END``).
    """
    ends = [end for _, end in separator_spans(PDF_SEGMENT_END, text)]
    if not ends or ends[-1] != len(text):
        ends.append(len(text))
    return ends


def _cores(text: str, budget: int) -> list[tuple[int, int]]:
    """Greedy partition of ``text`` into ``(start, end)`` cores of at most ``budget`` bytes.

    A core ends at the last segment end that keeps it within budget; if even the first
    segment does not fit, it ends at the last code point that fits (at least one).
    """
    # cum[i] is the UTF-8 length of text[:i]; strictly increasing, so bisectable.
    cum = [0, *accumulate(len(ch.encode("utf-8", "surrogatepass")) for ch in text)]
    ends = _segment_ends(text)
    cores: list[tuple[int, int]] = []
    start = 0
    while start < len(text):
        limit = cum[start] + budget
        first = bisect_right(ends, start)  # the segment end after ``start``
        fit = bisect_right(ends, limit, lo=first, key=cum.__getitem__) - 1
        # No segment end fits: the segment alone is over budget, so cut it hard at the
        # last code point within budget (at least one code point, so cores always advance).
        end = ends[fit] if fit >= first else max(bisect_right(cum, limit) - 1, start + 1)
        cores.append((start, end))
        start = end
    return cores


def _slices(text: str, budget: int, overlap: int) -> list[tuple[int, int]]:
    """Chunk ``(start, end)`` offsets within ``text``: cores widened by the overlap."""
    if not text.strip():
        return []
    if len(text.encode("utf-8", "surrogatepass")) <= budget:
        return [(0, len(text))]
    slices: list[tuple[int, int]] = []
    previous_start = -1
    for core_start, core_end in _cores(text, budget):
        start = core_start if previous_start < 0 else max(core_start - overlap, previous_start + 1)
        previous_start = start
        if text[start:core_end].strip():
            slices.append((start, core_end))
    return slices
