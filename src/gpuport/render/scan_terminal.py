"""The scan report as a person reads it in a terminal (rich)."""

from __future__ import annotations

from collections import Counter, defaultdict

from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from gpuport.models import Severity
from gpuport.render import effort_view
from gpuport.render.finding_groups import RuleGroup, by_scope, counts_text, group
from gpuport.render.text import clean, clean_line
from gpuport.scan.finding import Finding
from gpuport.scan.model import ScanReport, Verdict
from gpuport.scan.rules import RULES
from gpuport.scan.verdict import judged, top_blockers

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


def _header(report: ScanReport) -> Panel:
    t = report.target
    counts = _counts_markup(report)
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
        lines.append(
            Text(clean_line("ROCm route: " + route_summary(report, counted=True)), style="green")
        )
    elif report.routes:
        lines.append(
            Text(
                clean_line("ROCm route evidence, not counted: " + route_summary(report)),
                style="yellow",
            )
        )
    return Panel(Group(*lines), title="gpuport scan", title_align="left")


def _counts_markup(report: ScanReport) -> str:
    """The judged findings' counts by severity, the ones the verdict is made of
    (``core: blocker 2  major 1 ...``); the other scopes' are on the line below."""
    mine = judged(report.findings, report.scope)
    scope = "all scopes" if report.scope == "all" else "core"
    counts = "  ".join(
        f"[{SEV_STYLE[s]}]{s.value} {sum(1 for f in mine if f.severity is s)}[/]" for s in Severity
    )
    return f"{scope}: {counts}"


def route_summary(report: ScanReport, limit: int = 6, *, counted: bool = False) -> str:
    """The route evidence on one line: ``docker Dockerfile_amd:43, ci .github/...``; evidence
    that does not count says why (issue 24). ``counted``: only the evidence that counts, and
    how many other pieces there are (--verbose lists them with why)."""
    routes = [r for r in report.routes if r.counts] if counted else report.routes
    items = [
        f"{r.kind} {r.path}"
        + (f":{r.line}" if r.line else "")
        + ("" if r.counts else f" (not counted: {r.why})")
        for r in routes[:limit]
    ]
    more = len(routes) - limit
    text = ", ".join(items) + (f" and {more} more" if more > 0 else "")
    left = len(report.routes) - len(routes)
    if left:
        text += f"; {left} more not counted (--verbose says why)"
    return text


def _judged_line(report: ScanReport) -> str:
    basis = "every scope" if report.scope == "all" else "core code, packaging and build"
    others = []
    for scope, counts in report.scope_counts.items():
        if scope == "core" or report.scope == "all":
            continue
        above = sum(n for sev, n in counts.items() if sev is not Severity.INFO)
        if above:
            others.append(f"{scope} {above}")
    text = f"judged: {basis}"
    if others:
        text += "; not judged (above info): " + ", ".join(others) + " (--scope all)"
    if report.not_built:
        text += f"; {len(report.not_built)} file(s) the ROCm build does not compile"
    return text


def message_lead(message: str) -> str:
    """What a message is about, before its explanation: ``torchvision`` of ``torchvision:
    torchvision has ROCm builds ...``; the whole message when it has no such lead."""
    lead = message.split(": ", 1)[0]
    return lead if len(lead) < len(message) else message


#: Lines of messages and places one rule prints in the terminal before it sums up the rest
#: (a 400 KB kernel of 8,000 differently named masks printed 16,000 lines; --verbose: all)
LINES_PER_RULE = 60


def group_lines(
    g: RuleGroup,
    *,
    indent: int = 2,
    shown: set[str] | None = None,
    brief: bool = False,
    limit: int | None = LINES_PER_RULE,
) -> list[RenderableType]:
    """One rule's findings as a block that wraps to any width: a head line (rule, severity,
    title, how many), then each distinct message once with its places indented under it
    (one line per folder), then the fix once. A message or fix already printed (``shown``, updated
    here) is not printed again: the block says so in one line. ``brief`` (findings the verdict
    does not judge): each message's lead on one line, no fix; --verbose prints them whole.
    Past ``limit`` lines of messages and places, one line says how many messages and findings
    of the rule are not printed and where they are (``None``: no limit)."""
    shown = set() if shown is None else shown
    head = Text(g.rule_id, style="bold")
    head.append("  ")
    head.append(g.severity.value, style=SEV_STYLE[g.severity])
    head.append("  " + clean_line(g.title))
    if g.count > 1:
        head.append(f"  ×{g.count}", style="bold")
    out: list[RenderableType] = [Padding(head, (0, 0, 0, indent))]
    pad = (0, 0, 0, indent + 2)
    places = (0, 0, 0, indent + 4)
    left = limit if limit is not None else -1  # lines still to print (-1: no limit)
    cut_messages = cut_places = 0
    for x in g.fixes:
        if left == 0:
            cut_messages += len(x.messages)
            continue
        for m in x.messages:
            if left == 0:
                cut_messages += 1
                continue
            folders = m.by_folder()
            if left > 0:  # the message's line, then as many of its places as fit
                keep = max(1, left - 1)
                cut_places += max(0, len(folders) - keep)
                folders = folders[:keep]
                left = max(0, left - 1 - len(folders))
            lead = clean_line(message_lead(m.message))
            if brief and len(folders) == 1 and len(lead) <= 24:  # a name and its only place
                line = Text(lead + "  ")
                line.append(clean_line(folders[0]), style="cyan")
                out.append(Padding(line, pad))
                continue
            if brief:
                out.append(Padding(Text(lead, no_wrap=True, overflow="ellipsis"), pad))
            elif m.message in shown:
                out.append(Padding(Text("(message as above)", style="dim"), pad))
            else:
                shown.add(m.message)
                out.append(Padding(Text(clean(m.message)), pad))
            for item in folders:  # places: indented under their message
                out.append(Padding(Text(clean_line(item), style="cyan"), places))
        if brief or all(x.fix in m.message for m in x.messages):
            continue  # the message already says it, or --verbose will
        fix = Text("fix: ", style="bold")
        if x.fix in shown:
            fix.append("as above", style="dim")
        else:
            shown.add(x.fix)
            fix.append(clean(x.fix))
        out.append(Padding(fix, pad))
    if cut_messages or cut_places:
        what = [
            f"{n} more {word}{'s' if n > 1 else ''}"
            for n, word in ((cut_messages, "message"), (cut_places, "place"))
            if n
        ]
        more = Text(
            f"… {' and '.join(what)} of {g.rule_id} not printed: --verbose prints them, "
            "--format json or sarif lists every finding",
            style="dim",
        )
        out.append(Padding(more, pad))
    return out


def _section(
    console: Console,
    title: str,
    findings: list[Finding],
    report: ScanReport,
    order: list[str],
    shown: set[str],
    verbose: bool = False,
) -> None:
    """Findings of one kind, one heading per scope (core first), grouped by rule and fix.
    Blockers of every scope, and every finding the verdict judges, print whole; the other
    findings outside the judged scope print their messages' leads (``verbose``: whole)."""
    for scope, items in by_scope(findings):
        judged_here = report.scope == "all" or scope == "core"
        where = "core code" if scope == "core" else f"{scope} code"
        counts = counts_text(items) if title != "Blockers" else str(len(items))
        brief = not (judged_here or verbose or title == "Blockers")
        note = "" if judged_here else ", not judged"
        note += "; details: --verbose" if brief else ""
        console.print(Text(f"{title} in {where} ({counts}{note})", style="bold underline"))
        for g in group(items, order):
            limit = None if verbose else LINES_PER_RULE
            for part in group_lines(g, shown=shown, brief=brief, limit=limit):
                console.print(part)


def _per_file(report: ScanReport, console: Console) -> None:
    """Every file with findings, worst first, one line each (--verbose: the blocks above
    already name every place, folder by folder)."""
    per: dict[str, Counter[Severity]] = defaultdict(Counter)
    for f in report.findings:
        per[f.location.path][f.severity] += 1
    if not per:
        return
    ordered = sorted(per.items(), key=lambda kv: (*tuple(-kv[1][s] for s in Severity), kv[0]))
    console.print(Text("Findings per file", style="bold underline"))
    for path, counts in ordered:
        line = Text(clean_line(path) + "  ")
        line.append(", ".join(f"{counts[s]} {s.value}" for s in Severity if counts[s]), style="dim")
        console.print(Padding(line, (0, 0, 0, 2)))


def _effort(report: ScanReport, console: Console) -> None:
    """Listed changes, hours per rule: a table on a wide console, else one line each."""
    title = "Listed changes (hours per rule)"
    if console.width < effort_view.TABLE_WIDTH:
        console.print(Text(title, style="bold underline"))
        for item in report.effort.basis:
            line = Text(f"{item.rule_id}  ", style="bold")
            line.append(clean_line(item.title))
            line.append(f": {item.count} × {item.hours_each:g} h = {item.hours:g} h", style="dim")
            console.print(Padding(line, (0, 0, 0, 2)))
        return
    table = Table(title=title, title_justify="left")
    table.add_column("rule", overflow="fold")
    table.add_column("what", overflow="fold")
    table.add_column("count", justify="right", overflow="fold")
    table.add_column("h each", justify="right", overflow="fold")
    table.add_column("hours", justify="right", overflow="fold")
    for item in report.effort.basis:
        table.add_row(
            item.rule_id,
            Text(clean_line(item.title)),
            str(item.count),
            f"{item.hours_each:g}",
            f"{item.hours:g}",
        )
    console.print(table)


def _routes(report: ScanReport, console: Console) -> None:
    console.print(Text("ROCm route (the project's own evidence)", style="bold underline"))
    for r in report.routes:
        line = Text(f"{r.kind}  ", style="green")
        line.append(clean_line(r.path + (f":{r.line}" if r.line else "")))
        line.append("  " + clean(r.detail), style="dim")
        if not r.counts:
            line.append(f"  (not counted: {clean_line(r.why)})", style="yellow")
        console.print(Padding(line, (0, 0, 0, 2)))


def _calendar_brief(calendar: str) -> str:
    """``calendar time is typically 2-10x engineer time (reviews, ...): about A to B`` as
    ``calendar about A to B (2-10x engineer time)``; the whole note with --verbose."""
    head, sep, span = calendar.partition("): ")
    factor = head.removeprefix("calendar time is typically ").split(" (")[0]
    return f"calendar {span} ({factor})" if sep and factor != head else calendar


def render(report: ScanReport, console: Console, *, verbose: bool = False) -> None:
    console.print(_header(report))
    order = [f.rule_id for f in top_blockers(report.findings, RULES, "all")]
    blockers = [f for f in report.findings if f.severity is Severity.BLOCKER]
    shown: set[str] = set()  # messages and fixes printed once
    if blockers:
        _section(console, "Blockers", blockers, report, order, shown, verbose)
    if report.routes and verbose:  # the header names each route and whether it counts
        _routes(report, console)
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
    rest = [
        f
        for f in report.findings
        if f.severity is not Severity.BLOCKER and (verbose or f.severity is not Severity.INFO)
    ]
    if rest:
        _section(console, "Other findings", rest, report, order, shown, verbose)
    hidden = sum(1 for f in report.findings if f.severity is Severity.INFO)
    if hidden and not verbose:
        console.print(
            f"[dim]{hidden} info finding(s) (incl. ROCm-guarded code) hidden; "
            "--verbose shows them[/]"
        )
    if verbose:
        _per_file(report, console)
    if report.effort.components:
        # the model's basis is the same on every run: --verbose prints it (and docs/effort.md)
        note = report.effort.note if verbose else "basis: --verbose"
        calendar = report.effort.calendar if verbose else _calendar_brief(report.effort.calendar)
        caption = "; ".join(x for x in (calendar, note) if x)
        effort_view.print_components(console, report.effort.components, caption, brief=not verbose)
    if report.effort.basis and (verbose or not report.effort.components):
        _effort(report, console)  # by default the components above give each one's hours
    if report.skipped:
        console.print(Text("Skipped files", style="bold underline"))
        for sk in report.skipped:
            line = Text(clean_line(sk.path) + "  ")
            line.append(clean_line(sk.reason), style="dim")
            console.print(Padding(line, (0, 0, 0, 2)))
