"""The portfolio (``gpuport assess A B C …``) in the terminal, as Markdown and as one HTML page.

The terminal view is one block per project (verdict, effort, top blockers, cost decision, the
model and workload assumed), so it fits any width; Markdown and HTML are one table. Text from
the projects goes through :func:`gpuport.render.text.clean_line` / :func:`md` / Jinja2's
autoescape, as in the single-project reports.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.padding import Padding
from rich.text import Text

from gpuport.assess.portfolio import Portfolio, PortfolioRow
from gpuport.render.assess_terminal import VERDICT_STYLE
from gpuport.render.text import clean_line, md


def summary(p: Portfolio) -> str:
    """``3 projects: 1 blocked, 1 minor-work, 1 ready; 45 h of listed work``."""
    counts = ", ".join(f"{n} {k}" for k, n in p.counts.items())
    return (
        f"{len(p.projects)} project{'s' if len(p.projects) != 1 else ''}: {counts}; "
        f"{p.hours:g} h of listed work"
    )


def _blockers(row: PortfolioRow) -> str:
    more = row.blocker_count - len(row.blockers)
    return "; ".join(row.blockers) + (f" (+{more} more)" if more > 0 else "")


def render_terminal(p: Portfolio, console: Console) -> None:
    console.print(
        Text(
            f"gpuport assess: portfolio of {summary(p)} "
            f"({p.workers} process{'es' if p.workers != 1 else ''}, {p.seconds:.0f} s)",
            style="bold",
        )
    )
    pad = (0, 0, 0, 4)
    for row in p.projects:
        head = Text()
        if row.verdict is None:
            head.append(" ERROR ", style="bold white on magenta")
        else:
            head.append(f" {row.verdict.label.upper()} ", style=VERDICT_STYLE[row.verdict])
        head.append("  " + clean_line(row.project), style="bold")
        if row.effort:
            head.append("  " + row.effort)
        console.print(Padding(head, (0, 0, 0, 2)))
        if row.error is not None:
            console.print(Padding(Text(clean_line(row.error)), pad))
            continue
        if row.blockers:
            console.print(Padding(Text("blockers: " + clean_line(_blockers(row))), pad))
        console.print(Padding(Text("cost: " + clean_line(row.cost)), pad))
        console.print(
            Padding(
                Text(f"model: {clean_line(row.model)}; workload: {clean_line(row.workload)}"),
                pad,
            )
        )


def render_markdown(p: Portfolio) -> str:
    out = [
        "# gpuport assess: portfolio",
        "",
        f"{md(summary(p))}; assessed in {p.workers} processes in {p.seconds:.0f} s.",
        "",
        "| project | verdict | effort | top blockers | cost decision | model | workload |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in p.projects:
        if row.error is not None:
            out.append(f"| {md(row.project)} | error | – | {md(row.error)} | – | – | – |")
            continue
        verdict = row.verdict.label if row.verdict is not None else "error"
        out.append(
            f"| {md(row.project)} | **{verdict}** | {md(row.effort)} | "
            f"{md(_blockers(row)) or '–'} | {md(row.cost)} | {md(row.model)} | "
            f"{md(row.workload)} |"
        )
    e = p.env
    out += ["", f"gpuport {e.gpuport_version}, Python {e.python}, {md(e.platform)}, {e.created}"]
    return "\n".join(out) + "\n"


def render_html(p: Portfolio) -> str:
    from gpuport.render.assess_html import _environment

    env = _environment()
    context: dict[str, Any] = {"p": p, "summary": summary(p), "blockers": _blockers}
    page: str = env.get_template("portfolio.html.j2").render(**context)
    return page


__all__ = ["render_html", "render_markdown", "render_terminal", "summary"]
