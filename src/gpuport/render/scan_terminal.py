"""The scan report as a person reads it in a terminal (rich)."""

from __future__ import annotations

from collections import Counter, defaultdict

from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from gpuport.models import Severity
from gpuport.render import effort_view
from gpuport.render.finding_groups import by_scope, counts_text, group
from gpuport.render.scan_blocks import (
    BRIEF_HEADING,
    LINES_PER_RULE,
    SEV_STYLE,
    brief_line,
    group_lines,
    trim,
)
from gpuport.render.text import clean, clean_line
from gpuport.scan.finding import Finding
from gpuport.scan.model import ScanReport, Verdict
from gpuport.scan.rules import RULES
from gpuport.scan.verdict import judged, top_blockers

VERDICT_STYLE = {
    Verdict.BLOCKED: "bold white on red",
    Verdict.MAJOR_WORK: "bold black on yellow",
    Verdict.MINOR_WORK: "bold black on cyan",
    Verdict.READY: "bold white on green",
}


def _header(
    report: ScanReport, console: Console, trimmed: set[str], *, verbose: bool = False
) -> None:
    """The verdict in two lines (issue 29: at most three lines per finding on a 500-file
    project): where and for what target; then the verdict, the effort's total and the
    reason, cut to one line (``trimmed`` gets the reason; --verbose: the reason whole and the
    effort by component); the route line only when the reason does not name the route. The
    judged counts head the findings below."""
    files = f"{report.files_scanned} file{'' if report.files_scanned == 1 else 's'}"
    if report.skipped:
        files += f" ({len(report.skipped)} skipped)"
    if report.not_built:
        files += f", {len(report.not_built)} not built on ROCm"
    console.print(Text(_where(report, files, console.width, verbose), style="bold"))
    total = f"{report.effort.low_days:g}–{report.effort.high_days:g} engineer-days"
    label = f"[{VERDICT_STYLE[report.verdict]}] {report.verdict.value.upper()} [/] "
    if verbose:
        console.print(Text.from_markup(label + escape(clean(report.verdict_reason))))
        effort_view.print_headline(console, report.effort.components, total)
    else:  # one line: the verdict, the effort's total, the reason cut to what fits
        head = Text.from_markup(label + f"{total} · ")
        reason = clean_line(short_reason(report.verdict_reason))
        room = console.width - head.cell_len
        if len(reason) > room:
            trimmed.add(report.verdict_reason)
            reason = trim(reason, max(room, 24))
        head.append(reason)
        console.print(head)
    if any(r.counts for r in report.routes):
        text = route_summary(report, counted=True)
        if verbose or not _reason_names_routes(report):
            console.print(Text(clean_line("ROCm route: " + text), style="green"))
    elif report.routes:
        console.print(
            Text(
                clean_line("ROCm route evidence, not counted: " + route_summary(report)),
                style="yellow",
            )
        )


def _where(report: ScanReport, files: str, width: int, verbose: bool) -> str:
    """The project line: its path, target and files; by default in one line of ``width``
    (the project's folder name for its path, then the target's name alone, when the whole
    does not fit)."""
    t = report.target
    name = clean_line(report.root)
    short = name.rstrip("/").rsplit("/", 1)[-1] or name
    detail = f"target {t.name} ({t.generation}, wave{t.wave_size}, fp8 {t.fp8})"
    tries = [f"{name} · {detail} · {files}"]
    if not verbose:
        tries += [f"{short} · {detail} · {files}", f"{short} · {t.name} · {files}"]
    return next((x for x in tries if len(x) <= width), tries[-1])


def short_reason(reason: str) -> str:
    """The verdict's reason with its list of route evidence cut to the first piece and a
    count: ``has a ROCm route (.github/workflows/build.yaml +2 more)`` (``--verbose`` and
    every other format: all of them)."""
    head = "ROCm route ("
    start = reason.find(head)
    end = reason.find(")", start) if start >= 0 else -1
    if end < 0:
        return reason
    start += len(head)
    items = reason[start:end].split(", ")
    extra = 0
    last, sep, count = items[-1].rpartition(" and ")
    if sep and count.endswith(" more") and count[: -len(" more")].isdigit():
        items[-1], extra = last, int(count[: -len(" more")])
    more = len(items) - 1 + extra
    if more <= 0:
        return reason
    return f"{reason[:start]}{items[0]} +{more} more{reason[end:]}"


def _reason_names_routes(report: ScanReport) -> bool:
    """Whether the verdict's reason already names every piece of route evidence that counts
    and there is none that does not (then a route line would say it twice)."""
    counted = [r for r in report.routes if r.counts]
    return len(counted) == len(report.routes) and all(
        r.path in report.verdict_reason for r in counted
    )


def _judged_heading(scope: str, findings: list[Finding]) -> Text:
    """``Core code (judged): blocker 0 · major 0 · minor 1 · info 6``: the counts the verdict
    and ``--fail-on`` rest on, at the head of the findings they count."""
    where = "Core code" if scope == "core" else f"{scope.capitalize()} code"
    head = Text(f"{where} (judged): ", style="bold underline")
    for i, s in enumerate(Severity):
        if i:
            head.append(" · ")
        n = sum(1 for f in findings if f.severity is s)
        head.append(f"{s.value} {n}", style=SEV_STYLE[s] if n else "dim")
    return head


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


def _whole(
    console: Console,
    heading: Text,
    findings: list[Finding],
    order: list[str],
    shown: set[str],
    verbose: bool,
    trimmed: set[str],
) -> None:
    """A heading, then the findings grouped by rule and fix, one block each; a message takes
    one line (a rule of one finding: two with its place and rule) unless it says its fix, a
    fix one (a longer one its command or first sentence or clause); ``verbose``: all
    whole."""
    console.print(heading)
    room = None if verbose else console.width - 2
    for g in group(findings, order):
        limit = None if verbose else LINES_PER_RULE
        for part in group_lines(g, shown=shown, limit=limit, room=room, trimmed=trimmed):
            console.print(part)


def _findings(
    console: Console,
    report: ScanReport,
    order: list[str],
    shown: set[str],
    verbose: bool,
    trimmed: set[str],
) -> bool:
    """The findings: the judged scope's whole under its counts; every other scope's blockers
    whole, one heading per scope; the rest of the other scopes one line per rule and scope
    (``verbose``: whole, and info findings too). Returns whether details were left out."""
    visible = [f for f in report.findings if verbose or f.severity is not Severity.INFO]
    mine_all = judged(report.findings, report.scope)
    mine = {id(f) for f in mine_all}
    if report.scope == "all":  # every scope judged: one heading each, core first
        for scope, items in by_scope(report.findings):
            heading = _judged_heading(scope, items)
            items = [f for f in items if verbose or f.severity is not Severity.INFO]
            _whole(console, heading, items, order, shown, verbose, trimmed)
    else:
        shown_mine = [f for f in visible if id(f) in mine]
        _whole(
            console, _judged_heading("core", mine_all), shown_mine, order, shown, verbose, trimmed
        )
    others = [f for f in visible if id(f) not in mine]
    brief: list[Finding] = []
    for scope, items in by_scope(others):
        blockers = [f for f in items if f.severity is Severity.BLOCKER]
        rest = [f for f in items if f.severity is not Severity.BLOCKER]
        if blockers:
            heading = Text(
                f"Blockers in {scope} code ({len(blockers)}, not judged)", style="bold underline"
            )
            _whole(console, heading, blockers, order, shown, verbose, trimmed)
        if rest and verbose:
            heading = Text(
                f"Other findings in {scope} code ({counts_text(rest)}, not judged)",
                style="bold underline",
            )
            _whole(console, heading, rest, order, shown, verbose, trimmed)
        elif rest:
            brief += rest
    if not brief:
        return False
    counts = ", ".join(f"{scope} {len(items)}" for scope, items in by_scope(brief))
    groups = group(brief, order)
    width = None if verbose else console.width
    if len(groups) < BRIEF_HEADING:  # a line or two: each says it is not judged
        for g in groups:
            console.print(brief_line(g, width, ", not judged"))
        return True
    console.print(Text(f"Not judged (--scope all): {counts}", style="bold underline"))
    for g in groups:
        console.print(brief_line(g, width))
    return True


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


def _notes(report: ScanReport, console: Console) -> None:
    """Why some code's findings are info: NVIDIA-only components, parts the ROCm build leaves
    out."""
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
        counted = sum(n for _, n, _ in parts)
        console.print(
            "Not built on ROCm (the route leaves it out; findings there are info): "
            + "; ".join(
                f"{where} ({n} file{'s' if n != 1 else ''}): {ev}" for where, n, ev in parts
            )
            + (
                f" and {len(report.not_built) - counted} more file(s)"
                if len(report.not_built) > counted
                else ""
            ),
            highlight=False,
            markup=False,
        )


def _skipped(report: ScanReport, console: Console, verbose: bool) -> None:
    """The skipped files with their reasons: one line each with ``verbose``, else one wrapped
    line per reason (its files, then why): a file not read is never left out silently."""
    if not report.skipped:
        return
    console.print(Text(f"Skipped files ({len(report.skipped)})", style="bold underline"))
    if verbose:
        for sk in report.skipped:
            line = Text(clean_line(sk.path) + "  ")
            line.append(clean_line(sk.reason), style="dim")
            console.print(Padding(line, (0, 0, 0, 2)))
        return
    by_reason: dict[str, list[str]] = {}
    for sk in report.skipped:
        by_reason.setdefault(sk.reason, []).append(sk.path)
    for reason, paths in by_reason.items():
        line = Text(clean_line(", ".join(paths)) + "  ")
        line.append(clean_line(reason), style="dim")
        console.print(Padding(line, (0, 0, 0, 2)))


def _footer(report: ScanReport, console: Console, left_out: list[str]) -> None:
    """One line: what the default report left out, and the flag that shows it."""
    if not left_out:
        return
    line = "--verbose: " + ", ".join(left_out)
    if len(line) > console.width:  # the same, in fewer words: the footer stays one line
        words = dict(_FOOTER_SHORT)
        line = "--verbose: " + ", ".join(
            next((short for long, short in words.items() if x.endswith(long)), x)
            if not x[0].isdigit() or x.endswith(" info")
            else x.replace(" full ", " ")
            for x in left_out
        )
    if len(line) > console.width:  # cut messages and fixes: one item
        cut = sum(int(x.split(" ", 1)[0]) for x in left_out if _counts_cut(x))
        rest = [x for x in left_out if not _counts_cut(x)]
        words = dict(_FOOTER_SHORT)
        line = "--verbose: " + ", ".join(
            [next((s for long, s in words.items() if x.endswith(long)), x) for x in rest[:1]]
            + [f"{cut} cut"]
            + [next((s for long, s in words.items() if x.endswith(long)), x) for x in rest[1:]]
        )
    console.print(Text(line, style="dim"))


def _counts_cut(item: str) -> bool:
    """Whether a footer item counts texts the default report cut (``2 full fixes``)."""
    n, full, what = [*item.split(" "), "", ""][:3]
    return n.isdigit() and full == "full" and what in ("message", "messages", "fix", "fixes")


#: The footer's words when they do not fit in one line
_FOOTER_SHORT = (
    ("details outside core", "non-core"),
    ("route evidence", "routes"),
    ("effort basis", "effort"),
)


def render(report: ScanReport, console: Console, *, verbose: bool = False) -> None:
    trimmed: set[str] = set()  # the reason, messages and fixes the default report cut
    _header(report, console, trimmed, verbose=verbose)
    order = [f.rule_id for f in top_blockers(report.findings, RULES, "all")]
    shown: set[str] = set()  # messages and fixes printed once
    briefed = _findings(console, report, order, shown, verbose, trimmed)
    _notes(report, console)
    if verbose:
        if report.routes:
            _routes(report, console)
        _per_file(report, console)
        if report.effort.components:
            caption = "; ".join(x for x in (report.effort.calendar, report.effort.note) if x)
            effort_view.print_components(console, report.effort.components, caption)
        if report.effort.basis:
            _effort(report, console)
    elif report.effort.basis and not report.effort.components:
        _effort(report, console)
    _skipped(report, console, verbose)
    if verbose:
        return
    left_out = []
    hidden = sum(1 for f in report.findings if f.severity is Severity.INFO)
    if hidden:
        left_out.append(f"{hidden} info")
    fixes = sum(1 for x in trimmed if x.startswith("fix: "))
    messages = len(trimmed) - fixes
    if messages:
        left_out.append(f"{messages} full message{'s' if messages != 1 else ''}")
    if fixes:
        left_out.append(f"{fixes} full fix{'es' if fixes != 1 else ''}")
    if short_reason(report.verdict_reason) != report.verdict_reason:
        left_out.append("route evidence")
    if briefed:
        left_out.append("details outside core")
    if report.effort.components:
        left_out.append("effort basis")
    _footer(report, console, left_out)
