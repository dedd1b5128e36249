"""The scan report as a person reads it in a terminal (rich)."""

from __future__ import annotations

from collections import Counter, defaultdict

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from gpuport.models import Severity
from gpuport.render import effort_view
from gpuport.render.text import clean, clean_line
from gpuport.scan.finding import Finding
from gpuport.scan.model import ScanReport, Verdict
from gpuport.scan.rules import RULES
from gpuport.scan.verdict import top_blockers

SEV_STYLE = {
    Severity.BLOCKER: "bold red",
    Severity.MAJOR: "yellow",
    Severity.MINOR: "cyan",
    Severity.INFO: "dim",
}
VERDICT_STYLE = {
    Verdict.BLOCKED: "bold white on red",
    Verdict.MAJOR_WORK: "bold black on yellow",
    Verdict.MINOR_WORK: "bold black on cyan",
    Verdict.READY: "bold white on green",
}
TOP_N = 10


def _header(report: ScanReport) -> Panel:
    t = report.target
    counts = "  ".join(f"[{SEV_STYLE[s]}]{s.value} {report.counts.get(s, 0)}[/]" for s in Severity)
    lines = [
        Text.from_markup(
            f"[bold]{escape(clean_line(report.root))}[/]  target [bold]{t.name}[/] "
            f"({t.generation}, wave{t.wave_size}, fp8 {t.fp8})"
        ),
        Text.from_markup(
            f"[{VERDICT_STYLE[report.verdict]}] {report.verdict.value.upper()} [/]  "
            f"{escape(clean(report.verdict_reason))}"
        ),
        Text.from_markup(
            f"effort [bold]{report.effort.low_days:g}–{report.effort.high_days:g} "
            f"engineer-days[/] (by component below; {report.effort.hours:g} h of listed changes)"
        ),
        Text.from_markup(
            f"{counts}   files {report.files_scanned} scanned, {len(report.skipped)} skipped"
        ),
        Text(clean(_judged_line(report)), style="dim"),
    ]
    if any(r.counts for r in report.routes):
        lines.append(Text(clean_line("ROCm route: " + route_summary(report)), style="green"))
    elif report.routes:
        lines.append(
            Text(
                clean_line("ROCm route evidence, not counted: " + route_summary(report)),
                style="yellow",
            )
        )
    return Panel(Group(*lines), title="gpuport scan", title_align="left")


def route_summary(report: ScanReport, limit: int = 6) -> str:
    """The route evidence on one line: ``docker Dockerfile_amd:43, ci .github/...``; evidence
    that does not count says why (issue 24)."""
    items = [
        f"{r.kind} {r.path}"
        + (f":{r.line}" if r.line else "")
        + ("" if r.counts else f" (not counted: {r.why})")
        for r in report.routes[:limit]
    ]
    more = len(report.routes) - limit
    return ", ".join(items) + (f" and {more} more" if more > 0 else "")


def _judged_line(report: ScanReport) -> str:
    judged = "every scope" if report.scope == "all" else "core code, packaging and build"
    others = []
    for scope, counts in report.scope_counts.items():
        if scope == "core" or report.scope == "all":
            continue
        above = sum(n for sev, n in counts.items() if sev is not Severity.INFO)
        if above:
            others.append(f"{scope} {above}")
    text = f"verdict and effort from {judged}"
    if others:
        text += "; not judged (above info): " + ", ".join(others) + " (--scope all judges them)"
    if report.not_built:
        text += f"; {len(report.not_built)} file(s) the ROCm build does not compile"
    return text


def _finding_table(findings: list[Finding], title: str) -> Table:
    table = Table(title=title, title_justify="left", expand=True, show_lines=False)
    table.add_column("severity", no_wrap=True, overflow="fold")
    table.add_column("rule", no_wrap=True, overflow="fold")
    table.add_column("where", overflow="fold")
    table.add_column("what, and the fix", ratio=3, overflow="fold")
    for f in findings:
        sev = f.severity.value + (" (guarded)" if f.guarded else "")
        if f.scope != "core":
            sev += f" [{f.scope}]"
        body = Text(clean(f.message))
        body.append("\nfix: ", style="bold")
        body.append(clean(f.fix))
        table.add_row(
            Text(sev, style=SEV_STYLE[f.severity]),
            f.rule_id,
            Text(clean_line(f.location.display())),
            body,
        )
    return table


def _per_file(report: ScanReport) -> Table:
    per: dict[str, Counter[Severity]] = defaultdict(Counter)
    for f in report.findings:
        per[f.location.path][f.severity] += 1
    table = Table(title="Findings per file", title_justify="left")
    table.add_column("file", overflow="fold")
    for sev in Severity:
        table.add_column(sev.value, justify="right", style=SEV_STYLE[sev], overflow="fold")
    ordered = sorted(per.items(), key=lambda kv: (*tuple(-kv[1][s] for s in Severity), kv[0]))
    for path, counts in ordered:
        table.add_row(Text(clean_line(path)), *(str(counts[s] or "") for s in Severity))
    return table


def _effort(report: ScanReport) -> Table:
    table = Table(title="Listed changes (hours per rule)", title_justify="left")
    table.add_column("rule", overflow="fold")
    table.add_column("what", overflow="fold")
    table.add_column("count", justify="right", overflow="fold")
    table.add_column("h each", justify="right", overflow="fold")
    table.add_column("hours", justify="right", overflow="fold")
    for item in report.effort.basis:
        table.add_row(
            item.rule_id, item.title, str(item.count), f"{item.hours_each:g}", f"{item.hours:g}"
        )
    return table


def _routes(report: ScanReport) -> Table:
    table = Table(title="ROCm route (the project's own evidence)", title_justify="left")
    table.add_column("kind", no_wrap=True)
    table.add_column("where", overflow="fold")
    table.add_column("what", overflow="fold")
    table.add_column("counts", overflow="fold")
    for r in report.routes:
        where = r.path + (f":{r.line}" if r.line else "")
        counts = "yes" if r.counts else f"no: {r.why}"
        table.add_row(r.kind, Text(clean_line(where)), Text(clean(r.detail)), Text(clean(counts)))
    return table


def render(report: ScanReport, console: Console, *, verbose: bool = False) -> None:
    console.print(_header(report))
    blockers = top_blockers(report.findings, RULES, report.scope)
    if blockers:
        shown = blockers[:TOP_N]
        more = f" (first {TOP_N} of {len(blockers)})" if len(blockers) > TOP_N else ""
        console.print(_finding_table(shown, f"Top blockers by impact{more}"))
    if report.routes:
        console.print(_routes(report))
    nv = [c for c in report.components if c.nvidia_only]
    if nv and report.routes:
        console.print(
            "NVIDIA-only components (replace or drop on ROCm; their findings are info): "
            + ", ".join(f"{c.path}/ ({c.evidence})" for c in nv),
            highlight=False,
            markup=False,
        )
    parts = report.not_built_parts()
    if parts:
        console.print(
            "Not built on ROCm (the route leaves it out; findings there are info): "
            + "; ".join(
                f"{where} ({n} file{'s' if n != 1 else ''}): {ev}" for where, n, ev in parts
            )
            + (
                f" and {len(report.not_built) - sum(n for _, n, _ in parts)} more file(s)"
                if len(report.not_built) > sum(n for _, n, _ in parts)
                else ""
            ),
            highlight=False,
            markup=False,
        )
    if report.findings:
        console.print(_per_file(report))
        rest = [
            f
            for f in report.findings
            if f.severity is not Severity.BLOCKER and (verbose or f.severity is not Severity.INFO)
        ]
        if rest:
            console.print(_finding_table(rest, "Other findings"))
        hidden = sum(1 for f in report.findings if f.severity is Severity.INFO)
        if hidden and not verbose:
            console.print(
                f"[dim]{hidden} info finding(s) (incl. ROCm-guarded code) hidden; "
                "--verbose shows them[/]"
            )
    if report.effort.components:
        caption = "; ".join(x for x in (report.effort.calendar, report.effort.note) if x)
        console.print(effort_view.rich_table(report.effort.components, caption))
    if report.effort.basis:
        console.print(_effort(report))
    if report.skipped:
        table = Table(title="Skipped files", title_justify="left")
        table.add_column("file", overflow="fold")
        table.add_column("reason", overflow="fold")
        for s in report.skipped:
            table.add_row(Text(clean_line(s.path)), Text(clean_line(s.reason)))
        console.print(table)
