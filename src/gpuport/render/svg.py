"""Small inline SVG bar charts for the HTML report: no matplotlib, no scripts, no network.

Why hand-written: the assessment report must open anywhere, offline, from one file, and a
forwarded report must not pull a plotting library into the install. A horizontal bar chart
(findings by severity, effort by area, $/Mtok by GPU, bench ratios with their confidence
interval) is a few rectangles and text elements. Every label is made visible
(:func:`gpuport.render.text.clean`: control and bidi characters as escapes) and then escaped
here, because some come from the scanned project or from a result file; callers insert the
returned markup as is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape as _html_escape

from gpuport.render.text import clean

WIDTH = 680
LABEL_W = 210
VALUE_W = 110
ROW_H = 26
BAR_H = 16
TOP = 24
BOTTOM = 22
MAX_LABEL = 32

#: Fill colours by tone; readable on white and distinguishable in greyscale by lightness.
PALETTE = {
    "blocker": "#b3261e",
    "major": "#d97706",
    "minor": "#0e7490",
    "info": "#9ca3af",
    "amd": "#c2410c",
    "nvidia": "#4d7c0f",
    "faster": "#15803d",
    "slower": "#b91c1c",
    "same": "#6b7280",
    "neutral": "#4b5563",
}


@dataclass(frozen=True)
class Bar:
    """One row of a chart: a label, a value and how to draw it."""

    label: str
    value: float
    tone: str = "neutral"
    text: str | None = None  # shown at the end of the bar; default: the value
    low: float | None = None  # confidence interval, drawn as a whisker
    high: float | None = None
    href: str | None = None  # "#finding-3": the label links into the report


def escape(text: str, quote: bool = True) -> str:
    """Text for SVG markup: control and bidi characters shown as escapes, then escaped."""
    return _html_escape(clean(text), quote=quote)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "\u2026"


def _fmt(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _nice_max(value: float) -> float:
    """The next 1, 2 or 5 times a power of ten at or above ``value`` (axis end)."""
    if value <= 0 or not math.isfinite(value):
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * power:
            return step * power
    return 10 * power


def bar_chart(
    bars: Sequence[Bar],
    *,
    title: str,
    chart_id: str,
    unit: str = "",
    reference: float | None = None,
    reference_label: str = "",
    unit_one: str | None = None,
    empty: str = "nothing to show",
) -> str:
    """A horizontal bar chart as an ``<svg>`` element (a string of escaped markup).

    ``title`` is the accessible name (the page shows its own caption); ``reference`` draws a
    dashed line, e.g. at 1.0 for ratios. ``unit_one`` is the unit after a value of exactly 1
    ("1 finding"); ``empty`` is shown when there are no bars.
    """

    def units(value: float) -> str:
        return unit_one if unit_one is not None and value == 1 else unit

    finite = [b for b in bars if math.isfinite(b.value)]
    top_value = max(
        [b.value for b in finite]
        + [b.high for b in finite if b.high is not None and math.isfinite(b.high)]
        + ([reference] if reference is not None else [])
        + [0.0]
    )
    axis_max = _nice_max(top_value)
    plot_w = WIDTH - LABEL_W - VALUE_W
    height = TOP + BOTTOM + ROW_H * max(len(finite), 1)

    def x(value: float) -> float:
        return LABEL_W + plot_w * max(0.0, min(value, axis_max)) / axis_max

    cid = escape(chart_id, quote=True)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="{cid}" role="img" '
        f'aria-labelledby="{cid}-title" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
        f'height="{height}" font-family="system-ui, sans-serif" font-size="12">',
        f'<title id="{cid}-title">{escape(title)}</title>',
    ]
    if not finite:
        out.append(f'<text x="{LABEL_W}" y="{TOP + 16}" fill="#6b7280">{escape(empty)}</text>')
    for i, bar in enumerate(finite):
        y = TOP + i * ROW_H
        mid = y + ROW_H / 2
        label = escape(_short(bar.label))
        full = escape(bar.label)
        text_el = (
            f'<text x="{LABEL_W - 8}" y="{mid + 4:.1f}" text-anchor="end">'
            f"<title>{full}</title>{label}</text>"
        )
        if bar.href:
            text_el = f'<a href="{escape(bar.href, quote=True)}">{text_el}</a>'
        out.append(text_el)
        fill = PALETTE.get(bar.tone, PALETTE["neutral"])
        w = max(x(bar.value) - LABEL_W, 1.0 if bar.value > 0 else 0.0)
        out.append(
            f'<rect x="{LABEL_W}" y="{mid - BAR_H / 2:.1f}" width="{w:.1f}" height="{BAR_H}" '
            f'fill="{fill}" rx="2"><title>{full}: {escape(_fmt(bar.value))} '
            f"{escape(units(bar.value))}</title></rect>"
        )
        if bar.low is not None and bar.high is not None:
            lo, hi = x(bar.low), x(bar.high)
            out.append(
                f'<path d="M{lo:.1f},{mid:.1f}H{hi:.1f}M{lo:.1f},{mid - 5:.1f}V{mid + 5:.1f}'
                f'M{hi:.1f},{mid - 5:.1f}V{mid + 5:.1f}" stroke="#111827" stroke-width="1.2" '
                'fill="none"/>'
            )
        value_text = (
            bar.text if bar.text is not None else f"{_fmt(bar.value)} {units(bar.value)}".strip()
        )
        end = max(x(bar.value), x(bar.high) if bar.high is not None else 0.0)
        out.append(f'<text x="{end + 6:.1f}" y="{mid + 4:.1f}">{escape(value_text)}</text>')
    base_y = TOP + ROW_H * max(len(finite), 1)
    out.append(
        f'<line x1="{LABEL_W}" y1="{TOP - 4}" x2="{LABEL_W}" y2="{base_y}" stroke="#9ca3af"/>'
    )
    out.append(
        f'<text x="{LABEL_W}" y="{base_y + 16}" fill="#6b7280">0</text>'
        f'<text x="{LABEL_W + plot_w}" y="{base_y + 16}" fill="#6b7280" text-anchor="end">'
        f"{escape(_fmt(axis_max))} {escape(units(axis_max))}</text>"
    )
    if reference is not None:
        rx = x(reference)
        out.append(
            f'<line x1="{rx:.1f}" y1="{TOP - 4}" x2="{rx:.1f}" y2="{base_y}" stroke="#111827" '
            'stroke-dasharray="4 3"/>'
            f'<text x="{rx:.1f}" y="{TOP - 8}" text-anchor="middle" fill="#111827">'
            f"{escape(reference_label or _fmt(reference))}</text>"
        )
    out.append("</svg>")
    return "\n".join(out)
