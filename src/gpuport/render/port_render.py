"""``gpuport port`` for people: the diff in a terminal (rich) and as Markdown.

The diff text comes from the project: in the terminal and in Markdown every line is shown
through :func:`gpuport.render.text.clean` (no escape sequences reach a terminal that prints
either); in Markdown it goes in a fenced block whose fence is longer than any backtick run
inside, so it cannot end the block. File names in the diff's headers are quoted as git quotes
them (:func:`gpuport.port.model.diff_name`). The JSON keeps the hunks exact.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from gpuport import textre
from gpuport.port.model import PortReport
from gpuport.render.text import clean, clean_line, md

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["render_markdown", "render_terminal", "summary_line"]


def summary_line(report: PortReport) -> str:
    taken = [f for f in report.fixes if f.applied]
    unsafe_left = [f for f in report.fixes if not f.applied and not f.safe]
    verb = "written" if report.mode == "apply" else "in the diff"
    parts = [
        f"{len(taken)} fix(es) {verb} ({len(report.files)} file(s))",
        f"{report.findings_with_safe_fix} of {report.findings_total} finding(s) have a safe fix",
    ]
    if unsafe_left:
        parts.append(f"{len(unsafe_left)} unsafe fix(es) need --unsafe-fixes")
    if report.unfixed:
        parts.append(f"{len(report.unfixed)} left to a person")
    return "gpuport port: " + "; ".join(parts)


def _fence(text: str) -> str:
    longest = max((len(m.group()) for m in textre.finditer(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def render_markdown(report: PortReport) -> str:
    out = [
        "# gpuport port",
        "",
        f"* Project: {md(report.root)}",
        f"* Target: **{report.target.name}**; mode: {report.mode}"
        + ("; unsafe fixes included" if report.unsafe_fixes else "; safe fixes only"),
        f"* {report.findings_with_safe_fix} of {report.findings_total} findings have a safe fix; "
        f"{report.findings_with_fix} have a fix",
        "",
        "## Fixes",
        "",
        "| fix | family | safe | applied | findings | why |",
        "|---|---|---|---|---|---|",
    ]
    for f in report.fixes:
        names = ", ".join(x.label() for x in f.findings[:6]) + (
            " ..." if len(f.findings) > 6 else ""
        )
        out.append(
            f"| {md(f.title)} | {f.family} | {'yes' if f.safe else 'no'} | "
            f"{'yes' if f.applied else md(f.note or 'no')} | {md(names)} | {md(f.why)} |"
        )
    if report.files:
        diff = clean(report.diff())  # a Markdown file is read in terminals too: no escapes
        fence = _fence(diff)
        out += ["", "## Diff", "", f"{fence}diff", diff.rstrip("\n"), fence]
    if report.unfixed:
        out += ["", "## Left to a person", "", "| finding | why |", "|---|---|"]
        for u in report.unfixed:
            out.append(f"| {md(u.finding.label())} | {md(u.reason)} |")
    if report.verification is not None:
        v = report.verification
        out += [
            "",
            "## Scanned again",
            "",
            f"* {v.addressed} finding(s) addressed; {len(v.still_reported)} still reported; "
            f"{len(v.new_findings)} new",
        ]
        out += [f"* still: {md(x)}" for x in v.still_reported[:20]]
        out += [f"* new: {md(x)}" for x in v.new_findings[:20]]
    if report.checks:
        out += [
            "",
            "## Compile check",
            "",
            "| file | compiler | status | error |",
            "|---|---|---|---|",
        ]
        for c in report.checks:
            out.append(f"| {md(c.path)} | {c.compiler} | {c.status} | {md(c.error or '')} |")
    return "\n".join(out) + "\n"


def render_terminal(report: PortReport, console: Console, *, show_diff: bool = True) -> None:
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    taken = [f for f in report.fixes if f.applied]
    head = Text()
    head.append(f"{len(taken)} fix(es) ", style="bold")
    head.append("written" if report.mode == "apply" else "shown as a diff (nothing written)")
    head.append(
        f"  ·  {report.findings_with_safe_fix} of {report.findings_total} findings have a safe fix"
    )
    if not report.unsafe_fixes and any(not f.safe for f in report.fixes):
        head.append(
            f"  ·  {sum(1 for f in report.fixes if not f.safe)} unsafe fix(es): --unsafe-fixes"
        )
    console.print(Panel(head, title=f"gpuport port  {clean_line(report.root)}", expand=False))
    if show_diff:
        for fd in report.files:
            # one Text per file, printed once: a print per line cost 0.2 ms each (a 52,000-line
            # diff of a 250 KB compose file: 12 s; twentieth re-run F5b)
            diff = Text()
            for line in fd.unified().splitlines():
                style = (
                    "bold"
                    if line.startswith(("---", "+++"))
                    else "cyan"
                    if line.startswith("@@")
                    else "green"
                    if line.startswith("+")
                    else "red"
                    if line.startswith("-")
                    else ""
                )
                diff.append(clean(line) + "\n", style=style)
            diff.rstrip()
            console.print(diff, soft_wrap=True)
    if report.fixes:
        table = Table(title="fixes", show_lines=False)
        for col in ("fix", "safe", "applied", "findings"):
            table.add_column(col)
        for f in report.fixes:
            table.add_row(
                clean_line(f.title),
                "safe" if f.safe else "unsafe",
                "yes" if f.applied else clean_line(f.note or "no"),
                str(len(f.findings)),
            )
        console.print(table)
    if report.unfixed:
        by_rule = Counter(u.finding.rule_id for u in report.unfixed)
        console.print(
            "left to a person: "
            + ", ".join(f"{rule} ×{n}" for rule, n in sorted(by_rule.items()))
            + " (--format json lists each with the reason)",
            highlight=False,
        )
    v = report.verification
    if v is not None:
        console.print(
            f"scanned again: {v.addressed} addressed, {len(v.still_reported)} still reported, "
            f"{len(v.new_findings)} new",
            highlight=False,
        )
        for item in [*v.still_reported, *v.new_findings][:10]:
            console.print(f"  {clean_line(item)}", highlight=False)
    for c in report.checks:
        console.print(
            f"{c.compiler} {clean_line(c.path)}: {c.status}"
            + (f" ({clean_line(c.error)})" if c.error else ""),
            highlight=False,
        )
