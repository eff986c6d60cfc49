"""``kebab-chunk report``: one self-contained HTML file describing a pipeline output.

Charts are drawn with matplotlib's object API (no pyplot, no global backend) and inlined as
SVG, so the file needs no network, no CDN and no side files; without matplotlib (the
``report`` extra) the page is the same with a note in place of each chart; it opens the same from a
laptop, a CI artifact store or an e-mail. Contents: the accounting line of the manifest,
per-label statistics (:func:`kebab_chunk.report.inspect.summarize`), a histogram of chunk
sizes per label with the policy target marked, documents by media type, the largest
chunks, the error groups, the documents that gave zero chunks and those with parse
warnings (from the documents table), and, given a second output, a version comparison (chunk ids
added / removed / unchanged / modified and the tokens to re-embed, the figures of
``kebab-chunk diff``, with both histograms overlaid).

The SVGs are deterministic (fixed hash salt, no date), so the same output gives a
byte-identical report: the page shows the run's timestamps from the manifest, never the
time the report was made.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kebab_chunk.report._html import esc, page
from kebab_chunk.report.inspect import OutputData, compare_outputs, summarize, tokens_by_label

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["NO_CHARTS", "charts_available", "render_report"]

_COLOURS = ("#2f6db5", "#e08a1e", "#3a9a5b", "#b5412f", "#7a4fb0", "#5b6b7a")
_OLD, _NEW = "#9aa3ad", "#2f6db5"
_BUCKET_COLOURS = {"chunked": "#3a9a5b", "zero_chunks": "#c9b458", "errors": "#c0262d"}


#: What the page says in place of each chart when matplotlib is not installed.
NO_CHARTS = (
    "Chart left out: matplotlib is not installed "
    "(pip install 'kebab-chunk[report]' adds the charts)."
)


def charts_available() -> bool:
    """Whether matplotlib (the ``report`` extra) can be imported, so charts can be drawn."""
    try:
        import matplotlib.figure  # noqa: F401
    except ImportError:
        return False
    return True


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    # Fixed margins instead of a layout engine: a layout engine measures every tick label
    # first and costs more than the drawing itself.
    return Figure(figsize=(width, height))


def _svg(fig: Figure) -> str:
    """The figure as an inline ``<svg>`` element (no XML prolog, deterministic ids)."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "kebab-chunk", "svg.fonttype": "path"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    return text[text.index("<svg") :]


def _plain(label: object) -> str:
    """Text for a chart label: matplotlib treats ``$`` as mathtext, so escape it."""
    return str(label).replace("$", r"\$")


def _bins(values: Sequence[int], extra: Sequence[int] = ()) -> np.ndarray[Any, Any]:
    top = max([*values, *extra, 1])
    count = int(min(40, max(5, top)))
    return np.linspace(0, top, count + 1)


def _size_histograms(
    summary: Mapping[str, Any],
    tokens: Mapping[str, list[int]],
    old_tokens: Mapping[str, list[int]] | None = None,
) -> str:
    labels = [lab["label"] for lab in summary["labels"]]
    if old_tokens is not None:
        labels = sorted(set(labels) | set(old_tokens))
    if not labels:
        return '<p class="note">No chunker labels in this output.</p>'
    target = summary["policy"].get("target_tokens")
    max_tokens = summary["policy"].get("max_tokens")
    fig = _figure(8.0, 2.3 * len(labels))
    axes = fig.subplots(len(labels), 1, squeeze=False)[:, 0]
    for n, (ax, label) in enumerate(zip(axes, labels, strict=True)):
        values = tokens.get(label, [])
        olds = old_tokens.get(label, []) if old_tokens is not None else []
        bins = _bins(values, olds)
        # one outline per histogram ("step" types), not one patch per bar: small and fast SVG
        if old_tokens is not None:
            ax.hist(olds, bins=bins, histtype="step", color=_OLD, linewidth=1.6, label="old")
            ax.hist(values, bins=bins, histtype="stepfilled", color=_NEW, alpha=0.55, label="new")
        else:
            ax.hist(values, bins=bins, histtype="stepfilled", color=_COLOURS[n % len(_COLOURS)])
        _mark(ax, target, "target", "#c0262d")
        _mark(ax, max_tokens, "max", "#7a4fb0")
        ax.set_title(_plain(f"{label}: {len(values)} chunks"), fontsize=10, loc="left")
        ax.set_ylabel("chunks")
        ax.legend(fontsize=8, loc="upper right")
    axes[-1].set_xlabel("token estimate per chunk")
    height = fig.get_figheight()
    fig.subplots_adjust(
        left=0.08, right=0.98, top=1 - 0.35 / height, bottom=0.5 / height, hspace=0.3 * 2.3 / 2
    )
    return _svg(fig)


def _mark(ax: Axes, value: Any, name: str, colour: str) -> None:
    if isinstance(value, int):
        ax.axvline(value, color=colour, linestyle="--", linewidth=1.2, label=f"{name} {value}")


def _media_chart(by_media: Mapping[str, Mapping[str, int]]) -> str:
    if not by_media:
        return ""
    names = sorted(by_media)
    fig = _figure(8.0, 0.5 * len(names) + 1.2)
    ax = fig.subplots()
    left = np.zeros(len(names))
    for bucket, colour in _BUCKET_COLOURS.items():
        counts = np.array([by_media[m].get(bucket, 0) for m in names], dtype=float)
        ax.barh(
            [_plain(m) for m in names],
            counts,
            left=left,
            color=colour,
            label=bucket.replace("_", " "),
        )
        left += counts
    ax.set_xlabel("documents")
    ax.invert_yaxis()
    height = fig.get_figheight()
    fig.subplots_adjust(left=0.22, right=0.83, top=1 - 0.15 / height, bottom=0.55 / height)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _svg(fig)


def _num(value: Any) -> str:
    return f'<td class="num">{esc("-" if value is None else value)}</td>'


def _label_table(summary: Mapping[str, Any]) -> str:
    head = "".join(
        f'<th class="num">{h}</th>'
        for h in (
            "documents",
            "chunks",
            "tokens",
            "min",
            "mean",
            "p50",
            "p90",
            "p99",
            "max",
            "over target",
        )
    )
    rows = "".join(
        f"<tr><td><code>{esc(lab['label'])}</code></td>{_num(lab['documents'])}"
        f"{_num(lab['chunks'])}{_num(lab['tokens']['total'])}{_num(lab['tokens']['min'])}"
        f"{_num(lab['tokens']['mean'])}{_num(lab['tokens']['p50'])}{_num(lab['tokens']['p90'])}"
        f"{_num(lab['tokens']['p99'])}{_num(lab['tokens']['max'])}{_num(lab['over_target'])}</tr>"
        for lab in summary["labels"]
    )
    return f'<table class="grid labels"><tr><th>label</th>{head}</tr>{rows}</table>'


def _media_table(by_media: Mapping[str, Mapping[str, int]]) -> str:
    rows = "".join(
        f"<tr><td>{esc(m)}</td>{_num(v.get('files'))}{_num(v.get('chunked'))}"
        f"{_num(v.get('zero_chunks'))}{_num(v.get('errors'))}</tr>"
        for m, v in sorted(by_media.items())
    )
    return (
        '<table class="grid media"><tr><th>media type</th><th class="num">files</th>'
        '<th class="num">chunked</th><th class="num">zero chunks</th>'
        f'<th class="num">errors</th></tr>{rows}</table>'
    )


def _largest_tables(summary: Mapping[str, Any]) -> str:
    out = []
    for lab in summary["labels"]:
        if not lab["largest"]:
            continue
        rows = "".join(
            f"<tr>{_num(c['token_estimate'])}<td>{esc(c['source_uri'])}</td>"
            f'{_num(c["position"])}<td class="mono">{esc(c["location"])}</td>'
            f"<td><code>{esc(c['chunk_id'])}</code></td></tr>"
            for c in lab["largest"]
        )
        out.append(
            f"<h3><code>{esc(lab['label'])}</code></h3>"
            '<table class="grid largest"><tr><th class="num">tokens</th><th>source</th>'
            '<th class="num">position</th><th>location</th><th>chunk_id</th></tr>'
            f"{rows}</table>"
        )
    return "".join(out) or '<p class="note">No chunks.</p>'


def _error_table(errors: Mapping[str, Any]) -> str:
    if not errors["groups"]:
        return '<p class="ok">No error rows.</p>'
    rows = "".join(
        f"<tr><td>{esc(g['stage'])}</td><td><code>{esc(g['error_type'])}</code></td>"
        f"{_num(g['count'])}<td>{'<br>'.join(esc(e) for e in g['examples'])}"
        f"{esc(f' (+{more} more)') if (more := g['files'] - len(g['examples'])) > 0 else ''}"
        f"</td><td>{esc(g['message'])}</td></tr>"
        for g in errors["groups"]
    )
    return (
        '<table class="grid errors"><tr><th>stage</th><th>error type</th>'
        '<th class="num">rows</th><th>example files</th><th>first message</th></tr>'
        f"{rows}</table>"
    )


def _documents_section(documents: Mapping[str, Any] | None) -> str:
    """Zero-chunk documents and documents with warnings, each file in its own row."""
    if documents is None:
        return (
            '<section id="documents"><h2>Documents</h2><p class="note">This output has no '
            "documents table (it was written by an older version).</p></section>"
        )
    zero, warned = documents["zero_chunks"], documents["with_warnings"]

    def more(shown: int, total: int) -> str:
        return f'<p class="note">+{total - shown} more</p>' if total > shown else ""

    if zero["files"]:
        rows = "".join(f'<tr><td class="source">{esc(u)}</td></tr>' for u in zero["files"])
        zero_html = f'<table class="grid zero-chunks"><tr><th>source</th></tr>{rows}</table>'
    else:
        zero_html = '<p class="ok">Every parsed document gave chunks.</p>'
    if warned["documents"]:
        rows = "".join(
            f'<tr><td class="source">{esc(d["source_uri"])}</td><td><ul>'
            + "".join(f"<li>{esc(w)}</li>" for w in d["warnings"])
            + (
                f"<li>+{d['warnings_total'] - len(d['warnings'])} more</li>"
                if d["warnings_total"] > len(d["warnings"])
                else ""
            )
            + "</ul></td></tr>"
            for d in warned["documents"]
        )
        head = "<tr><th>source</th><th>warnings</th></tr>"
        warned_html = f'<table class="grid warnings">{head}{rows}</table>'
    else:
        warned_html = '<p class="ok">No document has warnings.</p>'
    return (
        '<section id="documents"><h2>Documents</h2>'
        f'<h3 id="zero-chunks">Zero chunks ({esc(zero["count"])})</h3>'
        '<p class="sub">Parsed without error, but no chunker produced a chunk (an empty '
        "file, a page-less PDF).</p>"
        f"{zero_html}{more(len(zero['files']), zero['count'])}"
        f'<h3 id="with-warnings">With warnings ({esc(warned["count"])})</h3>'
        f"{warned_html}{more(len(warned['documents']), warned['count'])}</section>"
    )


def _compare_section(comparison: Mapping[str, Any], histograms: str) -> str:
    rows = "".join(
        f"<tr><td><code>{esc(c['label'])}</code></td>{_num(c['old_chunks'])}"
        f"{_num(c['new_chunks'])}{_num(c['added'])}{_num(c['removed'])}{_num(c['unchanged'])}"
        f"{_num(c['modified'])}{_num(c['relocated'])}{_num(c['documents_affected'])}"
        f"{_num(c['reembed_tokens'])}"
        f"{_num(c['old_tokens']['p50'])}{_num(c['new_tokens']['p50'])}</tr>"
        for c in comparison["labels"]
    )
    return (
        '<section id="compare"><h2>Version comparison</h2>'
        f'<p class="sub">old <code>{esc(comparison["old"])}</code> (policy '
        f"<code>{esc(comparison['old_policy_hash'])}</code>) → new "
        f"<code>{esc(comparison['new'])}</code> (policy "
        f"<code>{esc(comparison['new_policy_hash'])}</code>). Chunk ids are content-addressed: "
        "an unchanged id needs no re-embedding; modified chunks (same id, new text or "
        "heading context) and added ones do. The same figures as "
        "<code>kebab-chunk diff</code>.</p>"
        '<table class="grid compare"><tr><th>label</th><th class="num">old chunks</th>'
        '<th class="num">new chunks</th><th class="num">added</th><th class="num">removed</th>'
        '<th class="num">unchanged</th><th class="num">modified</th>'
        '<th class="num">relocated</th><th class="num">documents affected</th>'
        '<th class="num">tokens to re-embed</th><th class="num">old p50</th>'
        f'<th class="num">new p50</th></tr>{rows}</table>'
        f'<div class="chart">{histograms}</div></section>'
    )


def render_report(data: OutputData, other: OutputData | None = None, top: int = 10) -> str:
    """The report page of ``data``; with ``other``, a comparison of ``other`` (old) -> ``data``.

    ``other`` is the *old* output: the comparison reads "what changes if ``data`` replaces
    ``other``".
    """
    summary = summarize(data, top=top)
    tokens = tokens_by_label(data)
    draw = charts_available()
    no_chart = f'<p class="note">{esc(NO_CHARTS)}</p>'
    sizes = _size_histograms(summary, tokens) if draw else no_chart
    media = _media_chart(summary["by_media_type"]) if draw else no_chart
    files = summary["files"]
    policy = summary["policy"]
    closes = files["accounting_closes"]
    run = data.manifest.get("run_info", {})
    status = (
        '<span class="ok">closes</span>' if closes else '<span class="bad">DOES NOT CLOSE</span>'
    )
    compare_html = ""
    if other is not None:
        comparison = compare_outputs(other, data)
        histograms = (
            _size_histograms(summary, tokens, tokens_by_label(other)) if draw else no_chart
        )
        compare_html = _compare_section(comparison, histograms)
    body = (
        "<h1>kebab-chunk report</h1>"
        f'<p class="sub">output <code>{esc(data.path)}</code> · kebab-chunk '
        f"{esc(summary['package_version'])} · {esc(summary['schema_version'])} · run started "
        f"{esc(run.get('started_at', '?'))}</p>"
        '<div class="panel accounting">'
        f"<p><b>files matched {esc(files['matched'])}</b> = chunked {esc(files['chunked'])} + "
        f"zero chunks {esc(files['zero_chunks'])} + errors {esc(files['errors'])} "
        f"{'+ skipped ' + esc(files['skipped']) + ' ' if files.get('skipped') else ''}"
        f"({status}); {esc(files['with_warnings'])} documents with warnings.</p>"
        f"<p>policy <code>{esc(summary['policy_hash'])}</code>: target "
        f"{esc(policy.get('target_tokens'))} tokens, overlap {esc(policy.get('overlap_tokens'))}"
        f", max {esc(policy.get('max_tokens') or '-')}, tokenizer "
        f"<code>{esc(policy.get('tokenizer'))}</code></p></div>"
        "<h2>Chunks by label</h2>"
        '<p class="sub">Token estimates as stated by each chunker; percentiles are '
        "nearest-rank (always a size some chunk has).</p>"
        f"{_label_table(summary)}"
        f'<h2>Chunk sizes</h2><div class="chart sizes">{sizes}</div>'
        f"<h2>Documents by media type</h2>{_media_table(summary['by_media_type'])}"
        f'<div class="chart media">{media}</div>'
        f"<h2>Largest chunks</h2>{_largest_tables(summary)}"
        f"<h2>Errors</h2>{_error_table(summary['errors'])}"
        f"{_documents_section(summary['documents'])}"
        f"{compare_html}"
    )
    css = ".chart svg { max-width: 100%; height: auto; } ul { margin: 0; padding-left: 18px; }"
    return page(f"kebab-chunk report — {data.path}", body, css)
