"""The assessment in a terminal: verdict banner, conclusions, effort, one line per section.

The terminal view is the summary; the detail (every finding, every figure) is in the HTML,
Markdown or JSON report, whose path is printed at the end when one was written. Text from the
project is passed as :class:`rich.text.Text` (never markup) after
:func:`gpuport.render.text.clean`, so it cannot restyle or rewrite the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, Group
from rich.markup import escape
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from gpuport.assess.model import Assessment, Assumed, Evidence, Readiness
from gpuport.models import Severity
from gpuport.render import effort_view
from gpuport.render.text import clean, clean_line

SEV_STYLE = {
    Severity.BLOCKER: "bold red",
    Severity.MAJOR: "yellow",
    Severity.MINOR: "cyan",
    Severity.INFO: "dim",
}
VERDICT_STYLE = {
    Readiness.BLOCKED: "bold white on red",
    Readiness.MAJOR_WORK: "bold black on yellow",
    Readiness.MINOR_WORK: "bold black on cyan",
    Readiness.READY: "bold white on green",
}
LEANS = {"rocm": "[bold dark_orange]favours ROCm[/]", "cuda": "[bold green]favours CUDA[/]"}


def _banner(a: Assessment) -> Panel:
    t = a.scan.target
    judged = a.scan.judged_counts or a.scan.counts
    counts = "core: " + "  ".join(
        f"[{SEV_STYLE[s]}]{s.value} {judged.get(s, 0)}[/]" for s in Severity
    )
    others = a.scan.not_judged()
    if others:
        counts += f"  [dim](not judged: {escape(others)})[/]"
    lines = [
        Text.from_markup(
            f"[bold]{escape(clean_line(a.project))}[/]  target [bold]{t.name}[/] "
            f"({t.generation}, wave{t.wave_size})"
        ),
        Text.from_markup(
            f"[{VERDICT_STYLE[a.verdict]}] {a.verdict.label.upper()} [/]  "
            f"{escape(clean(a.verdict_reason))}"
        ),
        Text.from_markup(f"effort [bold]{escape(a.effort.days())}[/] · {counts}"),
        Text.from_markup(f"[bold]Decision:[/] {escape(clean(a.decision))}"),
    ]
    return Panel(Group(*lines), title="gpuport assess", title_align="left")


def origin_text(x: Assumed) -> str:
    """``detected: loss.backward() at train.py:88``, ``catalog: Lambda, 2026-10-01``,
    ``flag``, ``gpuport.toml: /p/gpuport.toml``, ``default``: one wording for every format."""
    return f"{x.origin}: {x.where}" if x.where else x.origin


def assumption_lines(a: Assessment) -> list[str]:
    """One line per assumption (plain text; the terminal wraps it): the same content the
    JSON's ``assumptions``, the Markdown table and the HTML table carry."""
    out = []
    for x in a.assumptions:
        line = f"{x.label}: {x.value} [{origin_text(x)}]"
        if x.detail:
            line += f"; {x.detail}"
        if x.offered:  # the Markdown and HTML tables list them all; the terminal, three
            more = f" and {len(x.offered) - 3} more" if len(x.offered) > 3 else ""
            head = "offered, not used" if x.value == "none" else "also named outside core code"
            line += f"; {head}: " + ", ".join(x.offered[:3]) + more
        if x.origin in ("default", "detected", "catalog") and x.change:
            line += f" (change: {x.change})"
        out.append(line)
    return out


def _assumptions(a: Assessment, console: Console) -> None:
    if not a.assumptions:
        return
    console.print(Text("Assumptions (each with where it came from)", style="bold underline"))
    for line in assumption_lines(a):
        console.print(Padding(Text(clean_line(line)), (0, 0, 0, 2)))


def evidence_text(evidence: Sequence[Evidence], limit: int = 6) -> str:
    """The first ``limit`` pieces of evidence, a rule's places in one folder written once:
    ``GP201 src/pkg/ops/: a.py:6:12, b.py:51:8 (+8)`` (a long folder repeated per place
    filled a narrow terminal with wrapped paths)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for e in evidence[:limit]:
        loc = e.location
        shown = loc.display() if loc is not None else ""
        if loc is None or "/" not in loc.path or not e.label.endswith(" " + shown):
            groups.setdefault((e.label, ""), [])
            continue
        folder, _, name = loc.path.rpartition("/")
        head = e.label.removesuffix(" " + shown)
        groups.setdefault((head, folder), []).append(name + shown.removeprefix(loc.path))
    parts = []
    for (head, folder), names in groups.items():
        if not folder:
            parts.append(head)
        elif len(names) == 1:
            parts.append(f"{head} {folder}/{names[0]}")
        else:
            parts.append(f"{head} {folder}/: {', '.join(names)}")
    more = f" (+{len(evidence) - limit})" if len(evidence) > limit else ""
    return "; ".join(parts) + more


#: Conclusions the terminal shows, worst first; the files (-f) hold every one (16,000 CUDA
#: wheels in one setup.cfg drew 16,000 table rows: 30 s; twentieth re-run F4)
MOST_CONCLUSIONS_SHOWN = 25


def _conclusions(a: Assessment) -> Table:
    table = Table(title="Conclusions", title_justify="left", expand=True, show_lines=True)
    table.add_column("", no_wrap=True)
    table.add_column("conclusion, and what to do", ratio=1, overflow="fold")
    left = len(a.conclusions) - MOST_CONCLUSIONS_SHOWN
    if left > 0:
        table.caption = (
            f"and {left} more conclusion{'s' if left != 1 else ''}, no worse than the last "
            "shown: the Markdown, HTML or JSON report (-f) lists every one"
        )
    for c in a.conclusions[:MOST_CONCLUSIONS_SHOWN]:
        head = Text(clean_line(c.title), style="bold")
        if c.leans in LEANS:
            head.append("  ")
            head.append_text(Text.from_markup(LEANS[c.leans]))
        body = Text()
        body.append_text(head)
        body.append("\n" + clean_line(c.statement))
        body.append("\n→ ", style="bold")
        body.append(clean_line(c.recommendation))
        if c.evidence:
            body.append(f"\nevidence: {clean_line(evidence_text(c.evidence))}", style="dim")
        table.add_row(Text(c.severity.value, style=SEV_STYLE[c.severity]), body)
    return table


def _effort(a: Assessment, console: Console) -> None:
    """The effort as scan prints it (issue 29: one line when small), the calendar, and the
    listed changes one line per area; each component's basis and each area's largest items
    are in the Markdown, HTML and JSON reports (and docs/effort.md)."""
    total = a.effort.days() + (
        f" ({a.effort.hours:g} h of listed changes)" if a.effort.hours else ""
    )
    effort_view.print_headline(console, a.effort.components, total)
    if a.effort.calendar:
        console.print(Padding(Text(clean_line(a.effort.calendar), style="dim"), (0, 0, 0, 2)))
    if a.effort.classes:
        areas = "; ".join(
            f"{c.title} {c.count} change{'s' if c.count != 1 else ''}, {c.hours:g} h"
            for c in a.effort.classes
        )
        # changes, not findings: one package imported from 14 files is one change
        console.print(Padding(Text(clean_line("listed changes: " + areas)), (0, 0, 0, 2)))
    console.print(
        Padding(
            Text("basis of each: the Markdown, HTML or JSON report (-f)", style="dim"),
            (0, 0, 0, 2),
        )
    )


def section_lines(a: Assessment) -> list[str]:
    """One plain line per section: what ran and what it said."""
    h, cost, bench, doctor = a.hipify, a.cost, a.bench, a.doctor
    lines = [
        f"scan: {a.scan.files_scanned} files, {a.scan.findings_above_info} findings above info"
        + (
            f", {a.scan.scope_counts.get('core', 0)} of them in core code"
            if a.scan.not_judged()
            else ""
        )
        + f" ({a.scan.verdict})"
        + (f"; {len(a.scan.unread)} source files not read" if a.scan.unread else ""),
        (
            f"hipify: {h.files} CUDA/C++ files for HIP {h.hip_version}, {h.replacements} API "
            f"uses rewritten, {len(h.unsupported)} untranslatable, {h.hazards} hazards; "
            f"{h.check_note}"
            if h.ran
            else f"hipify: not run ({h.reason})"
        ),
    ]
    if cost.status == "ok":
        for r in cost.reports:
            train = r.mode == "training"
            priced = [
                (g.usd_per_mtok_train if train else g.usd_per_mtok_output, g) for g in r.records
            ]
            shown = ", ".join(
                f"{g.name} ${u:.3g} {g.price.kind if g.price else ''} ({g.concurrency} seqs on "
                f"{g.gpus_needed} GPU{'s' if (g.gpus_needed or 0) > 1 else ''}, "
                f"{'given' if g.throughput_source == 'flag' else 'modelled'})"
                for u, g in priced
                if u is not None
            )
            lines.append(f"cost: {r.model.name}: $/Mtok {shown or 'no prices'}")
    else:
        lines.append(f"cost: {cost.message}")
    if bench.comparison is not None and len(bench.comparison.geomean) > 1:
        g = bench.comparison.geomean[1]
        lines.append(
            f"bench: {len(bench.runs)} runs; geomean ratio {g:.2f}x" if g else "bench: no ratio"
        )
    else:
        lines.append(f"bench: {bench.note}")
    reports = a.validate_.reports
    lines.append(
        "validate: " + "; ".join(f"{v.file}: {v.verdict}" for v in reports)
        if reports
        else "validate: no report attached"
    )
    lines.append(f"doctor: {doctor.message}")
    return lines


def render(a: Assessment, console: Console, *, written: str | None = None) -> None:
    console.print(_banner(a))
    _assumptions(a, console)
    if a.conclusions:
        console.print(_conclusions(a))
    _effort(a, console)
    for line in section_lines(a):
        console.print(Text(clean(line)))
    for note in a.notes:
        console.print(Text(f"note: {clean(note)}", style="dim"))
    if written:
        # never wrapped: the path is meant to be copied
        console.print(Text(f"report written to {clean(written)}", style="bold"), soft_wrap=True)
