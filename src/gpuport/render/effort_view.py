"""The effort estimate's components, as every format shows them (scan and assess).

One row per component: its name, regime, engineer-day range, the basis it rests on and the
AMD library that covers it when there is one; then the total and the calendar note. Names and
folders come from the project: they pass through :func:`clean_line` or :func:`md`.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from gpuport.render.text import clean_line, md
from gpuport.scan.model import EffortComponent

TITLE = "Effort by component (engineer-days)"


def days(c: EffortComponent) -> str:
    return f"{c.low_days:g}–{c.high_days:g}"


def basis(c: EffortComponent) -> str:
    """The basis, then what the component rests on (constructs), in one line."""
    text = c.basis
    extra = [x for x in c.constructs if x not in text]
    if extra and c.kind != "kernel family":
        text += " — " + "; ".join(extra)
    return text


def rich_table(components: Sequence[EffortComponent], caption: str = "") -> Table:
    table = Table(title=TITLE, title_justify="left", caption=caption or None)
    table.add_column("component", overflow="fold")
    table.add_column("regime", no_wrap=True)
    table.add_column("days", justify="right", no_wrap=True)
    table.add_column("basis", overflow="fold", ratio=1)
    table.add_column("AMD equivalent", overflow="fold")
    for c in components:
        table.add_row(
            Text(clean_line(c.name)),
            c.regime,
            days(c),
            Text(clean_line(basis(c))),
            Text(clean_line(c.amd_equivalent or "")),
        )
    return table


#: Below this many columns a table of five columns squeezes its text to a word per line: the
#: components are printed as blocks instead (issue 29: output that fits any width).
TABLE_WIDTH = 100


#: Regimes a component's name already says (``bring-up and validation``, listed changes):
#: the one-line effort leaves them out
_NAMED_REGIMES = ("bring-up", "changes")


def headline(c: EffortComponent) -> str:
    """``native code (hipify) 1.5–9``: name, regime where the name does not say it, days."""
    regime = "" if c.regime in _NAMED_REGIMES else f" ({c.regime})"
    return f"{clean_line(c.name)}{regime} {days(c)}"


def one_line(width: int, components: Sequence[EffortComponent], total: str) -> str:
    """The effort in one line of ``width``: the total, then as many components (largest
    first) as fit, and ``+N more`` for the others (their days and basis: ``--verbose``)."""
    text = f"effort {total}"
    parts = [headline(c) for c in sorted(components, key=lambda c: -c.high_days)]
    for n in range(len(parts), -1, -1):
        more = f", +{len(parts) - n} more" if n < len(parts) else ""
        line = text + (": " + ", ".join(parts[:n]) if n else "") + more
        if len(line) <= width or n == 0:
            return line if len(line) <= width else line[: width - 1] + "…"
    return text


def print_headline(
    console: Console, components: Sequence[EffortComponent], total: str, *, single: bool = False
) -> None:
    """The effort in the verdict lines (issue 29): the total and every component on one
    wrapped line when that takes at most two lines, else the total, then one line per
    component (name, regime, days); the basis of each is in ``--verbose``. ``single``: one
    line whatever the width (:func:`one_line`; scan's default report)."""
    text = f"effort {total}"
    if single:
        single_line = one_line(console.width, components, total)
        out = Text(single_line[: len(text)], style="bold")
        out.append(single_line[len(text) :])
        console.print(out)
        return
    parts = [headline(c) for c in components]
    joined = text + (": " + ", ".join(parts) if parts else "")
    if len(joined) <= 2 * console.width:
        line = Text(joined[: len(text)], style="bold")
        line.append(joined[len(text) :])
        console.print(line)
        return
    console.print(Text(text + ", by component:", style="bold"))
    for part in parts:
        console.print(Padding(Text(part), (0, 0, 0, 2)))


def print_components(
    console: Console,
    components: Sequence[EffortComponent],
    caption: str = "",
) -> None:
    """The components as :func:`rich_table` on a wide console, else one block each (name,
    regime and days on one line, the basis and AMD equivalent wrapped under it); the short
    form is :func:`print_headline`."""
    if console.width >= TABLE_WIDTH:
        console.print(rich_table(components, caption))
        return
    console.print(Text(TITLE, style="bold underline"))
    for c in components:
        head = Text(clean_line(c.name), style="bold")
        head.append(f"  {c.regime}  {days(c)} days")
        console.print(Padding(head, (0, 0, 0, 2)))
        body = clean_line(basis(c))
        if c.amd_equivalent:
            body += f"; AMD equivalent: {clean_line(c.amd_equivalent)}"
        console.print(Padding(Text(body), (0, 0, 0, 4)))
    if caption:
        console.print(Padding(Text(clean_line(caption), style="dim"), (0, 0, 0, 2)))


def markdown(components: Sequence[EffortComponent], total: str, calendar: str) -> list[str]:
    """The Markdown table, its total line and the calendar note."""
    out = [
        "| component | regime | days | basis | AMD equivalent |",
        "|---|---|---:|---|---|",
    ]
    out += [
        f"| {md(c.name)} | {c.regime} | {days(c)} | {md(basis(c))} | {md(c.amd_equivalent or '')} |"
        for c in components
    ]
    out += ["", f"Total: **{md(total)}**" + (f"; {md(calendar)}." if calendar else ".")]
    return out
