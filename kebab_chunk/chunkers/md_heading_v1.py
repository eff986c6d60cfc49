"""``md-heading-v1``: heading-aware chunking of documents with line spans.

Why each rule: docs/internals/decisions.md.

Priority order: every heading starts a new chunk (its section's first chunk opens with the
heading's own block); a code block is never split; a table stays whole below twice the
target and otherwise splits only between rows; a section over budget splits between blocks,
then a paragraph or list over budget splits at blank lines, sentence ends, line breaks
(lists only), whitespace and finally hard (see :mod:`kebab_chunk.chunkers._split`). Budgets
use the byte proxy: ``target_tokens`` tokens are ``3 * target_tokens`` UTF-8 bytes.

Exactness: a chunk's text is ``source[first_span.char_start:last_span.char_end]``. The
document carries block texts but not the text between blocks, so the gap between two blocks
is rebuilt from their spans: ``line_start - line_end`` line breaks of the document's
line-break style. When the span geometry says the gap holds anything else (a thematic break,
a link reference definition, spaces on a blank line), or the style is mixed, the two blocks
never share a chunk, so no chunk can silently differ from its source. ``image_ref`` and
``audio_ref`` blocks become chunks of their own whose text is the alt text and caption: the
one documented exception to the exact-slice rule.

Overlap (``overlap_tokens``) only joins consecutive pieces of one section that are not
separated by a media block or an unknown gap: the next piece repeats the longest tail of the
previous one that starts at its cleanest boundary (block start, then blank line, sentence,
line in a list, word) and consists of paragraph and list text only, so headings, code and
tables are never repeated and every piece is still one exact slice.
"""

from __future__ import annotations

from collections.abc import Sequence

from kebab_chunk.chunkers._separators import (
    BLOCK,
    LINE,
    LINE_BREAK,
    BlockSlices,
    is_exact,
    join_gap,
    newline_style,
)
from kebab_chunk.chunkers._split import Atom, Piece, pack, split_atoms, utf8_len
from kebab_chunk.chunkers._standalone import standalone_text
from kebab_chunk.chunkers.base import LabelledChunker, make_chunk
from kebab_chunk.errors import UnsupportedDocumentError
from kebab_chunk.model import (
    AudioRefBlock,
    Block,
    CanonicalDocument,
    Chunk,
    ChunkPolicy,
    ImageRefBlock,
    SourceSpan,
)
from kebab_chunk.tokenizers import estimate_tokens
from kebab_chunk.tokenizers.bytes_proxy import BYTES_PER_TOKEN

__all__ = ["MdHeadingV1Chunker"]

_PROSE_KINDS = ("paragraph", "list")
_TABLE_SPLIT_FACTOR = 2
_MEDIA = (ImageRefBlock, AudioRefBlock)


class MdHeadingV1Chunker(LabelledChunker):
    """Heading-aware chunker for Markdown and other documents with ``lines`` spans, the
    engine of ``md-heading-v1`` only (it sizes by the byte proxy whatever the policy's
    tokenizer, its specification)."""

    def accepts(self, doc: CanonicalDocument) -> bool:
        """True when every span of every block is a ``lines`` span."""
        for block in doc.blocks:
            for span in block.spans:
                if span.kind != "lines":
                    return False
        return True

    def policy_hash(self, policy: ChunkPolicy) -> str:
        """The plain policy hash stored in every chunk (the same for every chunker)."""
        return policy.policy_hash

    def chunk(self, doc: CanonicalDocument, policy: ChunkPolicy) -> list[Chunk]:
        """All chunks of ``doc`` in document order, positions ``0..n-1``."""
        if not self.accepts(doc):
            kind = next(
                span.kind for block in doc.blocks for span in block.spans if span.kind != "lines"
            )
            raise UnsupportedDocumentError(
                f"md-heading-v1 needs blocks with line spans (Markdown, text, HTML, CSV) but "
                f"{doc.source_uri!r} has {kind} spans; use pdf-page-v1 for PDF documents or a "
                "chunker that accepts any document (such as hierarchical-v1) for the others."
            )
        return _Run(doc, policy, self.label).chunks()


class _Run:
    """One chunking pass over one document (holds its budget, line-break style, caches)."""

    def __init__(self, doc: CanonicalDocument, policy: ChunkPolicy, label: str) -> None:
        self.label = label
        self.doc = doc
        self.policy = policy
        self.budget = policy.target_tokens * BYTES_PER_TOKEN
        self.overlap = policy.overlap_tokens * BYTES_PER_TOKEN
        self.exact = [is_exact(block.text, block.spans) for block in doc.blocks]
        self.style = newline_style(doc.blocks)
        self.out: list[Chunk] = []
        self._slices = BlockSlices(doc.blocks)
        self._gaps: dict[int, str | None] = {}  # block index -> _gap(previous block, it)

    def chunks(self) -> list[Chunk]:
        """Walk sections and runs of text blocks; media and opaque blocks stand alone."""
        run: list[int] = []
        for index, block in enumerate(self.doc.blocks):
            if block.kind == "heading":
                self._flush(run)
            if isinstance(block, _MEDIA) or not self.exact[index]:
                self._flush(run)
                self._emit_standalone(index)
            else:
                run.append(index)
        self._flush(run)
        return self.out

    # -- standalone blocks ------------------------------------------------------------

    def _emit_standalone(self, index: int) -> None:
        block = self.doc.blocks[index]
        text, captions = standalone_text(block)
        self.out.append(
            make_chunk(
                self.doc,
                chunker_version=self.label,
                policy=self.policy,
                position=len(self.out),
                text=text,
                block_ids=[block.block_id],
                spans=block.spans,
                heading_path=block.heading_path,
                captions=captions,
            )
        )

    # -- runs of exact text blocks ----------------------------------------------------

    def _flush(self, run: list[int]) -> None:
        if not run:
            return
        atoms = self._atoms(run)
        for piece in pack(atoms, self.budget, self.overlap):
            self._emit_piece(atoms, piece)
        run.clear()

    def _atoms(self, run: Sequence[int]) -> list[Atom]:
        atoms: list[Atom] = []
        prev: int | None = None
        for index in run:
            block = self.doc.blocks[index]
            text = block.text
            ranges, whole_bytes = self._block_ranges(block)
            gap: int | None = None
            if prev is not None:
                between = self._gap_before(prev, index)
                if between is not None:
                    prev_atom = atoms[-1]
                    gap = (
                        utf8_len(prev_atom.text[prev_atom.end :])
                        + len(between)
                        + utf8_len(text[: ranges[0][0]])
                    )
            prose = block.kind in _PROSE_KINDS
            line_cuts = block.kind == "list"
            ascii_only = text.isascii()
            last_end: int | None = None
            for start, end, level in ranges:
                if last_end is not None:
                    gap = start - last_end if ascii_only else utf8_len(text[last_end:start])
                if whole_bytes is not None:  # the whole block, already measured
                    nbytes = whole_bytes
                else:
                    nbytes = end - start if ascii_only else utf8_len(text[start:end])
                atoms.append(Atom(text, start, end, nbytes, gap, level, prose, index, line_cuts))
                last_end = end
            prev = index
        return atoms

    def _block_ranges(self, block: Block) -> tuple[list[tuple[int, int, int]], int | None]:
        """The atoms of one block (whole, table rows, or text cut to the budget), and the
        block's UTF-8 size when it is one whole atom (else None)."""
        text = block.text
        whole = [(0, len(text), BLOCK)]
        if block.kind == "code":
            return whole, utf8_len(text)
        if block.kind == "table":
            if estimate_tokens(text) < _TABLE_SPLIT_FACTOR * self.policy.target_tokens:
                return whole, utf8_len(text)
            return _table_rows(text), None
        nbytes = utf8_len(text)
        if nbytes <= self.budget:
            return whole, nbytes
        hard = self.budget - self.overlap
        line_cuts = block.kind == "list"
        cut = split_atoms(text, self.budget, hard, line_cuts=line_cuts)
        return (cut, None) if cut else (whole, nbytes)

    def _gap_before(self, prev: int, index: int) -> str | None:
        """``_gap(blocks[prev], blocks[index])``, computed once per block pair."""
        if index in self._gaps:
            return self._gaps[index]
        between = self._gaps[index] = self._gap(self.doc.blocks[prev], self.doc.blocks[index])
        return between

    def _gap(self, prev: Block, nxt: Block) -> str | None:
        """The source text between two blocks, when span geometry pins it down (when no
        block shows a line break, ``"\n"`` is assumed: docs/internals/decisions.md)."""
        return join_gap(prev.spans[0], nxt.spans[0], self.style)

    def _emit_piece(self, atoms: Sequence[Atom], piece: Piece) -> None:
        # One (block, start, end) segment per contributing block, in document order. A run
        # holds consecutive document blocks, so the piece's blocks are first..last owner.
        blocks = self.doc.blocks
        first_owner, last_owner = atoms[piece.first].owner, atoms[piece.last].owner
        segments = [(i, 0, len(blocks[i].text)) for i in range(first_owner, last_owner + 1)]
        segments[0] = (first_owner, piece.head, segments[0][2])
        segments[-1] = (last_owner, segments[-1][1], atoms[piece.last].end)
        parts: list[str] = []
        spans: list[SourceSpan] = []
        is_slice = False
        prev: Block | None = None
        for index, start, end in segments:
            block = blocks[index]
            if prev is not None:
                between = self._gap_before(index - 1, index)
                assert between is not None  # pack() never joins blocks across an unknown gap
                parts.append(between)
            parts.append(block.text[start:end])
            spans.append(self._slices.span(index, start, end))
            is_slice = is_slice or start != 0 or end != len(block.text)
            prev = block
        first = blocks[segments[0][0]]
        self.out.append(
            make_chunk(
                self.doc,
                chunker_version=self.label,
                policy=self.policy,
                position=len(self.out),
                text="".join(parts),
                block_ids=[blocks[s[0]].block_id for s in segments],
                spans=spans,
                heading_path=first.heading_path,
                is_slice=is_slice,
            )
        )


def _table_rows(text: str) -> list[tuple[int, int, int]]:
    """Row atoms of a table's source: header and delimiter rows together, then each row."""
    breaks = list(LINE_BREAK.finditer(text))
    starts = [0, *(m.end() for m in breaks)]
    ends = [*(m.start() for m in breaks), len(text)]
    rows = list(zip(starts, ends, strict=True))
    if len(rows) <= 2:
        return [(0, len(text), BLOCK)]
    atoms = [(0, rows[1][1], BLOCK)]
    atoms.extend((start, end, LINE) for start, end in rows[2:])
    return atoms
