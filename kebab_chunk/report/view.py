"""``kebab-chunk view``: a document drawn with its chunk boundaries, from the spans alone.

The page never searches for a chunk's text: every highlight is placed by the chunk's
``source_spans`` on a *canvas*, the text those spans index:

* ``lines`` spans (Markdown, text, HTML, CSV): the decoded source text, decoded exactly as
  the parser of that media type decodes it;
* ``page`` spans (PDF): one canvas per page, the page text of ``pdf-text-v1``;
* ``element`` spans (DOCX, docling JSON): one canvas per element (``ref``), the element's
  text as the parser rendered it.

So a misplaced span shows up as a visibly wrong highlight, and a span that does not fit
its canvas (out of range, unknown page or element, line numbers that disagree with the
character offsets) is listed as a *span problem* at the top of the page.

Each canvas is a table with one row per source line: line number, a margin holding one
label per chunk that starts on that line (position, short id, token estimate), and the
text. Highlights alternate between two colours in chunk order; text covered by more than
one chunk (overlap) has a third, hatched style. Every highlighted piece carries
``data-c`` (the chunk indices covering it), every label ``data-chunk``; the page's DOM text
of the canvases equals the canvas texts character for character.
"""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from kebab_chunk.model import CanonicalDocument, Chunk, ListBlock
from kebab_chunk.model.spans import ElementSpan, LineSpan, PageSpan
from kebab_chunk.parsers._source import newline_view
from kebab_chunk.parsers.decode import decode_text
from kebab_chunk.report._html import esc, esc_source, page

__all__ = ["Canvas", "ViewResult", "build_canvases", "render_view", "source_text"]

CanvasKey = tuple[str, str]


@dataclass
class Canvas:
    """A text that spans index: the source, one PDF page or one element."""

    key: CanvasKey
    title: str
    text: str | None  # None: the text could not be recovered (spans are then unverifiable)
    note: str = ""


@dataclass
class ViewResult:
    """The page and what it found: ``problems`` lists spans that do not fit their canvas."""

    html: str
    chunks: int
    canvases: int
    problems: list[str] = field(default_factory=list)


# --- canvases --------------------------------------------------------------------------------


def source_text(raw: bytes, media_type: str, source_uri: str) -> str:
    """The decoded text ``lines`` spans index, decoded the way that media type's parser does."""
    if media_type == "text/html":
        from kebab_chunk.parsers._html_charset import decode_html

        return decode_html(raw, source_uri)[0]
    if media_type in ("text/csv", "text/tab-separated-values"):
        from kebab_chunk.parsers.csv_v1 import decode_csv

        return decode_csv(raw, source_uri)[0]
    return decode_text(raw, source_uri)[0]


def _key(span: LineSpan | PageSpan | ElementSpan) -> CanvasKey:
    if isinstance(span, LineSpan):
        return ("source", "")
    if isinstance(span, PageSpan):
        return ("page", str(span.page))
    return ("element", span.ref)


def _element_texts(doc: CanonicalDocument) -> dict[str, str | None]:
    """Each element's text, recovered from the blocks that cite it (document order).

    A block citing one element has that element's text as its text; a list citing one
    element per item has the items; a block joining several elements (e.g. docling text
    items merged into one paragraph) is cut at the elements' lengths with one separator
    character between them. Anything else is unknown (``None``).
    """
    texts: dict[str, str | None] = {}
    for block in doc.blocks:
        spans = [s for s in block.spans if isinstance(s, ElementSpan)]
        refs = list(dict.fromkeys(s.ref for s in spans))
        if not refs:
            continue
        found: dict[str, str | None]
        if len(refs) == 1:
            found = {refs[0]: block.text}
        elif isinstance(block, ListBlock) and len(block.items) == len(refs):
            found = dict(zip(refs, block.items, strict=True))
        else:
            found = _split_joined(block.text, refs, spans)
        for ref, text in found.items():
            texts.setdefault(ref, text)
    return texts


def _split_joined(text: str, refs: list[str], spans: list[ElementSpan]) -> dict[str, str | None]:
    lengths = [max(s.char_end for s in spans if s.ref == ref) for ref in refs]
    if sum(lengths) + len(refs) - 1 != len(text):
        return dict.fromkeys(refs)
    out: dict[str, str | None] = {}
    pos = 0
    for ref, length in zip(refs, lengths, strict=True):
        out[ref] = text[pos : pos + length]
        pos += length + 1
    return out


def _page_texts(doc: CanonicalDocument) -> dict[int, str | None]:
    """Page number -> page text: a block whose one page span covers all of its text."""
    pages: dict[int, str | None] = {}
    for block in doc.blocks:
        for span in block.spans:
            if isinstance(span, PageSpan):
                whole = len(block.spans) == 1 and span.char_start == 0
                whole = whole and span.char_end == len(block.text)
                if whole and span.page not in pages:
                    pages[span.page] = block.text
                else:
                    pages.setdefault(span.page, None)
    count = doc.metadata.get("page_count")
    if isinstance(count, int):
        for number in range(1, count + 1):
            pages.setdefault(number, "")
    return dict(sorted(pages.items()))


def build_canvases(doc: CanonicalDocument, raw: bytes, chunks: Sequence[Chunk]) -> list[Canvas]:
    """The canvases the document's and the chunks' spans index, in document order."""
    kinds = {s.kind for b in doc.blocks for s in b.spans} | {
        s.kind for c in chunks for s in c.source_spans
    }
    canvases: list[Canvas] = []
    if "lines" in kinds or not kinds:
        canvases.append(
            Canvas(("source", ""), "Source", source_text(raw, doc.media_type, doc.source_uri))
        )
    if "page" in kinds:
        for number, text in _page_texts(doc).items():
            note = "" if text else "no extractable text on this page"
            if text is None:
                note = "page text unknown: the parser does not give it as one block"
            canvases.append(Canvas(("page", str(number)), f"Page {number}", text, note))
    if "element" in kinds:
        for ref, text in _element_texts(doc).items():
            pages = sorted(
                {
                    s.page
                    for b in doc.blocks
                    for s in b.spans
                    if isinstance(s, ElementSpan) and s.ref == ref and s.page
                }
            )
            where = f" (page {', '.join(map(str, pages))})" if pages else ""
            note = "" if text is not None else "element text unknown"
            canvases.append(Canvas(("element", ref), f"Element {ref}{where}", text, note))
    return canvases


# --- layout ----------------------------------------------------------------------------------


def _line_starts(text: str) -> list[int]:
    view = newline_view(text)
    starts = [0]
    pos = view.find("\n")
    while pos != -1:
        if pos + 1 < len(view):
            starts.append(pos + 1)
        pos = view.find("\n", pos + 1)
    return starts


@dataclass
class _Placed:
    chunk: int
    start: int
    end: int
    first: bool  # the chunk's first span: carries the margin label


def _check_span(
    span: LineSpan | PageSpan | ElementSpan,
    canvas: Canvas | None,
    starts: list[int] | None,
    chunk: Chunk,
) -> str | None:
    who = f"chunk #{chunk.position} ({chunk.chunk_id[:12]})"
    if canvas is None:
        return f"{who}: span {span.model_dump_json()} names no page or element of the document"
    if canvas.text is None:
        return f"{who}: span {span.model_dump_json()} cannot be checked: {canvas.note}"
    if span.char_end > len(canvas.text):
        return (
            f"{who}: span [{span.char_start}:{span.char_end}] ends beyond {canvas.title} "
            f"({len(canvas.text)} characters)"
        )
    if isinstance(span, LineSpan) and starts is not None:
        first = bisect.bisect_right(starts, span.char_start)
        last = bisect.bisect_right(starts, max(span.char_start, span.char_end - 1))
        if (first, last) != (span.line_start, span.line_end):
            return (
                f"{who}: span says lines {span.line_start}-{span.line_end} but its characters "
                f"[{span.char_start}:{span.char_end}] are on lines {first}-{last}"
            )
    return None


def _label(i: int, chunk: Chunk) -> str:
    path = " > ".join(chunk.heading_path)
    title = f"chunk {chunk.chunk_id} · position {chunk.position} · {chunk.token_estimate} tokens"
    if path:
        title += f" · {path}"
    return (
        f'<a class="chunk-label c{i % 2}" data-chunk="{i}" href="#chunk-{i}" '
        f'title="{esc(title)}">#{chunk.position} <code>{esc(chunk.chunk_id[:8])}</code> '
        f"{chunk.token_estimate}&nbsp;tok</a>"
    )


def _render_canvas(index: int, canvas: Canvas, placed: list[_Placed], chunks: list[Chunk]) -> str:
    text = canvas.text or ""
    starts = _line_starts(text)
    begin: dict[int, list[int]] = defaultdict(list)
    finish: dict[int, list[int]] = defaultdict(list)
    empty: dict[int, list[int]] = defaultdict(list)
    labels: dict[int, list[str]] = defaultdict(list)
    for p in placed:
        if p.start == p.end:
            empty[p.start].append(p.chunk)
        else:
            begin[p.start].append(p.chunk)
            finish[p.end].append(p.chunk)
        line = bisect.bisect_right(starts, p.start) - 1
        if p.first:
            labels[line].append(_label(p.chunk, chunks[p.chunk]))
        else:
            labels[line].append(
                f'<span class="chunk-cont c{p.chunk % 2}" data-chunk="{p.chunk}">'
                f"↳ #{chunks[p.chunk].position}</span>"
            )
    points = sorted({0, len(text), *starts, *begin, *finish, *empty})
    rows: list[list[str]] = [[] for _ in starts]
    active: Counter[int] = Counter()
    line = 0
    for a, b in zip(points, [*points[1:], None], strict=True):
        for c in finish.get(a, ()):
            active[c] -= 1
            if not active[c]:
                del active[c]
        for c in begin.get(a, ()):
            active[c] += 1
        while line + 1 < len(starts) and starts[line + 1] <= a:
            line += 1
        for c in empty.get(a, ()):
            rows[line].append(f'<span class="hl empty c{c % 2}" data-c="{c}"></span>')
        if b is None or b == a:
            continue
        piece = esc_source(text[a:b])
        if not active:
            rows[line].append(piece)
            continue
        covering = sorted(active)
        style = "ov" if len(covering) > 1 else f"c{covering[0] % 2}"
        ids = " ".join(map(str, covering))
        rows[line].append(f'<span class="hl {style}" data-c="{ids}">{piece}</span>')
    body = "".join(
        f'<tr><td class="ln">{n + 1}</td><td class="mg">{"".join(labels.get(n, ()))}</td>'
        f'<td class="tx">{"".join(cells)}</td></tr>'
        for n, cells in enumerate(rows)
    )
    note = f'<p class="note">{esc(canvas.note)}</p>' if canvas.note else ""
    kind, name = canvas.key
    heading = "h3" if kind == "element" else "h2"  # many small elements: compact headings
    return (
        f'<section class="canvas" id="canvas-{index}" data-kind="{esc(kind)}" '
        f'data-name="{esc(name)}"><{heading}>{esc(canvas.title)}</{heading}>{note}'
        f'<table class="src"><tbody>{body}</tbody></table></section>'
    )


_VIEW_CSS = """
table.src { border-collapse: collapse; width: 100%; table-layout: fixed; }
table.src td { vertical-align: top; padding: 0 6px; }
td.ln { width: 3.5em; text-align: right; color: var(--muted); user-select: none;
  font: 12px/1.6 "DejaVu Sans Mono", monospace; border-right: 1px solid var(--line); }
td.mg { width: 17em; font-size: 11.5px; line-height: 1.6; }
td.tx { white-space: pre-wrap; overflow-wrap: anywhere;
  font: 12.5px/1.6 "DejaVu Sans Mono", Menlo, Consolas, monospace; }
.hl.c0, .swatch.c0 { background: #d6e9ff; } .hl.c1, .swatch.c1 { background: #ffe7c2; }
.hl.ov, .swatch.ov { background: repeating-linear-gradient(45deg, #f3c1f0 0 6px, #e39be0 6px 12px);
  box-shadow: inset 0 -2px #a43ca0; }
.hl.empty { display: inline-block; width: 2px; height: 1.2em; vertical-align: text-bottom;
  background: #c0262d; }
.hl.focus { outline: 2px solid #1d2330; }
.chunk-label, .chunk-cont, .chunk-key { display: inline-block; margin: 0 4px 2px 0; padding: 0 5px;
  border-radius: 4px; color: var(--fg); text-decoration: none; white-space: nowrap; }
.chunk-label.c0, .chunk-cont.c0, .chunk-key.c0 { background: #b9d8ff; }
.chunk-label.c1, .chunk-cont.c1, .chunk-key.c1 { background: #ffd490; }
.chunk-cont { opacity: .75; }
.ctl { color: #c0262d; }
.note { color: var(--muted); font-style: italic; margin: 0 0 6px; }
.legend span { display: inline-block; padding: 0 8px; margin-right: 8px; border-radius: 3px; }
ul.problems { color: #c0262d; }
details > summary { cursor: pointer; }
table.chunk-index { width: 100%; table-layout: auto; }
table.chunk-index td.mono { overflow-wrap: anywhere; word-break: break-all; max-width: 32em; }
table.chunk-index td:nth-child(5) { max-width: 22em; }
section.canvas h3 { font: 600 12.5px/1.4 "DejaVu Sans Mono", monospace; margin: 14px 0 4px;
  color: var(--muted); overflow-wrap: anywhere; }
pre.chunk-text { white-space: pre-wrap; background: var(--panel); padding: 6px; margin: 4px 0; }
"""

# Hovering a label or a highlight outlines every piece of that chunk. On load the page also
# records how many chunks have at least one highlight laid out on screen (data-visible-chunks
# on <body>), which the browser test compares with the number of chunks. No output, no network.
_VIEW_SCRIPT = """
(function () {
  var seen = {};
  document.querySelectorAll('.hl').forEach(function (e) {
    if (e.getClientRects().length === 0) { return; }
    e.getAttribute('data-c').split(' ').forEach(function (id) { seen[id] = true; });
  });
  document.body.setAttribute('data-visible-chunks', String(Object.keys(seen).length));
  var current = [];
  function clear() { current.forEach(function (e) { e.classList.remove('focus'); }); current = []; }
  document.addEventListener('mouseover', function (ev) {
    var t = ev.target.closest('[data-chunk], .hl');
    clear();
    if (!t) { return; }
    var ids = (t.getAttribute('data-chunk') || t.getAttribute('data-c') || '').split(' ');
    ids.forEach(function (id) {
      if (!id) { return; }
      document.querySelectorAll('.hl[data-c~="' + id + '"]').forEach(function (e) {
        e.classList.add('focus'); current.push(e);
      });
    });
  });
})();
"""


def _span_text(span: LineSpan | PageSpan | ElementSpan) -> str:
    if isinstance(span, LineSpan):
        where = f"lines {span.line_start}-{span.line_end}"
    elif isinstance(span, PageSpan):
        where = f"page {span.page}"
    else:
        where = span.ref + (f" (page {span.page})" if span.page else "")
    return f"{where} [{span.char_start}:{span.char_end}]"


def _chunk_index(chunks: list[Chunk]) -> str:
    rows = []
    for i, c in enumerate(chunks):
        spans = "<br>".join(esc(_span_text(s)) for s in c.source_spans)
        rows.append(
            f'<tr id="chunk-{i}"><td class="num">{c.position}</td>'
            f'<td><span class="chunk-key c{i % 2}" data-chunk="{i}"><code>{esc(c.chunk_id)}'
            f"</code></span></td>"
            f'<td class="num">{c.token_estimate}</td><td class="mono">{spans}</td>'
            f"<td>{esc(' > '.join(c.heading_path))}</td>"
            f"<td><details><summary>{len(c.text)} chars</summary>"
            f'<pre class="chunk-text">{esc_source(c.text)}</pre></details></td></tr>'
        )
    return (
        '<table class="grid chunk-index"><thead><tr><th class="num">position</th>'
        '<th>chunk_id</th><th class="num">tokens</th><th>spans</th><th>heading path</th>'
        f"<th>chunk text</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def render_view(
    doc: CanonicalDocument, raw: bytes, chunks: Sequence[Chunk], *, chunker: str
) -> ViewResult:
    """The self-contained viewer page of ``doc`` with ``chunks`` (of one chunker) drawn on it."""
    ordered = sorted(chunks, key=lambda c: (c.position, c.chunk_id))
    canvases = build_canvases(doc, raw, ordered)
    by_key = {c.key: c for c in canvases}
    starts = {c.key: _line_starts(c.text) for c in canvases if c.text is not None}
    placed: dict[CanvasKey, list[_Placed]] = defaultdict(list)
    problems: list[str] = []
    for i, chunk in enumerate(ordered):
        for n, span in enumerate(chunk.source_spans):
            key = _key(span)
            canvas = by_key.get(key)
            problem = _check_span(span, canvas, starts.get(key), chunk)
            if problem:
                problems.append(problem)
            if (
                canvas is not None
                and canvas.text is not None
                and not (problem and span.char_end > len(canvas.text))
            ):
                placed[key].append(_Placed(i, span.char_start, span.char_end, first=n == 0))
    sections = "".join(
        _render_canvas(n, c, placed.get(c.key, []), ordered) for n, c in enumerate(canvases)
    )
    policies = sorted({c.policy_hash for c in ordered})
    problem_html = (
        f'<div class="panel"><p class="bad">{len(problems)} span problem'
        f"{'s' if len(problems) != 1 else ''}: these spans do not fit the text they index.</p>"
        f'<ul class="problems">{"".join(f"<li>{esc(p)}</li>" for p in problems)}</ul></div>'
        if problems
        else '<p class="ok span-check">Every span fits its text.</p>'
    )
    warnings = (
        '<details class="panel"><summary>Document warnings</summary><ul>'
        + "".join(f"<li>{esc(w)}</li>" for w in doc.warnings)
        + "</ul></details>"
        if doc.warnings
        else ""
    )
    body = (
        f"<h1>{esc(doc.source_uri)}</h1>"
        f'<p class="sub">{esc(doc.media_type)} · parser <code>{esc(doc.parser_version)}</code>'
        f" · chunker <code>{esc(chunker)}</code> · policy "
        f"<code>{esc(', '.join(policies) or '-')}</code> · "
        f'<span id="chunk-count">{len(ordered)}</span> chunks on {len(canvases)} '
        f"{'canvas' if len(canvases) == 1 else 'canvases'}</p>"
        f"{problem_html}{warnings}"
        '<p class="legend">Highlights are placed from <code>source_spans</code> only: '
        '<span class="swatch c0">chunk</span><span class="swatch c1">next chunk</span>'
        '<span class="swatch ov">overlap (two or more chunks)</span>'
        "unhighlighted text is in no chunk.</p>"
        f"<h2>Chunks</h2>{_chunk_index(ordered)}{sections}"
    )
    title = f"{doc.source_uri} — {chunker}"
    return ViewResult(
        html=page(title, body, _VIEW_CSS, _VIEW_SCRIPT),
        chunks=len(ordered),
        canvases=len(canvases),
        problems=problems,
    )
