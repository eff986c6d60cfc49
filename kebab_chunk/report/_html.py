"""Shared HTML helpers of the report and the viewer: escaping and the page shell.

Every string that comes from a document, a file name or an error message is untrusted
and goes through :func:`esc` (text and attribute values alike). Pages are self-contained:
inline CSS, inline SVG, at most a small inline script; no URL is ever fetched.
"""

from __future__ import annotations

import html
import re

__all__ = ["BASE_CSS", "esc", "esc_source", "page"]

#: C0/C1 controls other than tab, line feed and carriage return, and DEL.
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def esc(value: object) -> str:
    """HTML-escape ``value`` for text or a double/single-quoted attribute."""
    return html.escape(str(value), quote=True)


def _control_picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    picture = chr(0x2400 + code) if code < 0x20 else ("\u2421" if code == 0x7F else "\ufffd")
    return f'<span class="ctl" title="U+{code:04X}">{picture}</span>'


def esc_source(text: str) -> str:
    """Escape document text for display inside a ``white-space: pre-wrap`` element.

    A carriage return is written as ``&#13;`` because the HTML parser would turn a raw one
    into a line feed, and CRLF must stay CRLF in the page's text (the viewer's DOM text
    equals the decoded source). Other control characters, which HTML cannot carry
    faithfully (NUL is dropped), are drawn as their Unicode control pictures.
    """
    escaped = html.escape(text, quote=False).replace("\r", "&#13;")
    return _CONTROLS.sub(_control_picture, escaped)


BASE_CSS = """
:root { --fg:#1d2330; --muted:#5c6573; --line:#d9dde3; --bg:#ffffff; --panel:#f5f7fa; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI",
  "DejaVu Sans", sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.sub { color: var(--muted); margin: 0 0 16px; }
table.grid { border-collapse: collapse; margin: 6px 0 12px; }
table.grid th, table.grid td { border: 1px solid var(--line); padding: 3px 8px;
  vertical-align: top; text-align: left; }
table.grid th { background: var(--panel); font-weight: 600; }
table.grid td.num, table.grid th.num { text-align: right; font-variant-numeric: tabular-nums; }
code, .mono { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
.ok { color: #1a7f37; } .bad { color: #c0262d; font-weight: 600; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 6px;
  padding: 10px 14px; margin: 8px 0 16px; }
"""


def page(title: str, body: str, css: str = "", script: str = "") -> str:
    """A complete HTML5 document; ``title`` is escaped, ``body``/``css``/``script`` are not."""
    script_tag = f"<script>{script}</script>" if script else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<title>{esc(title)}</title><style>{BASE_CSS}{css}</style></head>\n"
        f"<body>\n{body}\n{script_tag}</body></html>\n"
    )
