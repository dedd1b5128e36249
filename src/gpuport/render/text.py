"""Making text from a scanned project safe to show.

File names, code snippets and requirement lines come from the project, which
may be hostile: control characters could rewrite a terminal (ANSI, OSC-8
hyperlinks), and Markdown could turn them into links or HTML in a pull-request
comment. Everything from the project passes through these before rendering.
"""

from __future__ import annotations

import re

from gpuport import textre
from gpuport.models import HIDDEN_CHARS

#: :data:`gpuport.models.HIDDEN_CHARS`: each can hide or reorder what a reader sees.
_CONTROL = textre.compile(f"[{HIDDEN_CHARS}]")
_MD_SPECIAL = textre.compile(r"([\\`*_\[\]|~])")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean(text: str) -> str:
    """Replace control, bidi and zero-width characters with visible escapes: ``\\xNN``
    below U+0100 (``\\x1b``), else ``\\uXXXX`` (``\\u202e``)."""
    return _CONTROL.sub(_visible, text)


def json_safe(text: str) -> str:
    """JSON text with every hidden character of its strings written as a ``\\uXXXX`` escape
    (``json.dumps(..., ensure_ascii=False)`` and pydantic escape only C0 controls):
    the same document to a JSON reader, nothing a terminal acts on (a C1 ``CSI``, U+009B, is
    an escape sequence to xterm) or that reorders a line (U+202E) when it is printed. JSON's
    own structure is ASCII, so only string contents change."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def clean_line(text: str) -> str:
    """:func:`clean`, and newlines and tabs made visible too (``\\n``, ``\\t``): for a file
    name or a message that must stay on its one line (a name with a newline cannot forge a
    line of the report)."""
    return clean(text).replace("\n", "\\n").replace("\t", "\\t")


def md(text: str) -> str:
    """Text for a Markdown table cell: no HTML, links, emphasis, code spans or new rows."""
    out = clean(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    out = _MD_SPECIAL.sub(r"\\\1", out)
    return out.replace("\n", " ").replace("\r", " ")


def fmt_number(value: float | None, digits: int = 3) -> str:
    """A figure for a table: thousands separated, one decimal from 10, else ``digits`` figures."""
    if value is None:
        return "-"
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.{digits}g}"
