"""Terminal and Markdown views of a :class:`DoctorReport` (JSON is the model itself).

Evidence lines quote the machine (tool output, environment values, file names), which a
snapshot from someone else's machine controls: all of it goes through ``clean`` (terminal)
or ``md`` (Markdown) before it is shown.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table

from gpuport.doctor.model import CheckStatus, Diagnosis, DoctorReport
from gpuport.doctor.snapshot import ProbeStatus
from gpuport.render.text import clean, md

_STYLE = {
    CheckStatus.OK: "green",
    CheckStatus.INFO: "cyan",
    CheckStatus.WARN: "yellow",
    CheckStatus.FAIL: "bold red",
    CheckStatus.SKIP: "dim",
}
_MARK = {
    CheckStatus.OK: "✔",
    CheckStatus.INFO: "i",
    CheckStatus.WARN: "!",
    CheckStatus.FAIL: "✘",
    CheckStatus.SKIP: "-",
}


def _safe(text: str) -> str:
    return escape(clean(text))


def header(report: DoctorReport) -> str:
    took = f" · {report.duration_s:.1f} s" if report.duration_s is not None else ""
    source = " · replayed snapshot" if report.replayed else ""
    return f"gpuport doctor · snapshot {report.snapshot_id}{source}{took}"


def render_terminal(report: DoctorReport, console: Console, *, verbose: bool = False) -> None:
    console.print(_safe(header(report)), style="dim", highlight=False)
    for line in report.summary:
        console.print(_safe(line), style="bold", highlight=False)
    console.print()
    table = Table(show_header=False, box=None, padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")
    for row in report.layers:
        style = _STYLE[row.status]
        table.add_row(
            f"[{style}]{_MARK[row.status]}[/]",
            row.layer.value,
            f"[{style}]{row.status.value}[/]",
            _safe(row.text),
        )
    console.print(table)
    for diag in report.diagnoses:
        console.print()
        _diagnosis_terminal(diag, console)
    if verbose:
        _probes_terminal(report, console)


def _diagnosis_terminal(d: Diagnosis, console: Console) -> None:
    style = _STYLE[d.status]
    console.print(
        f"[{style}]{d.status.value.upper()}[/] [bold]{d.rule_id}[/] {_safe(d.title)} "
        f"[dim]({d.layer.value}, {d.severity.value})[/]",
        highlight=False,
    )
    for line in d.evidence:
        console.print(f"  [dim]seen:[/]  {_safe(line)}", highlight=False, soft_wrap=True)
    # cause and fix wrap under their own start, not at column 0 below the label
    text = Table.grid(padding=(0, 1), pad_edge=False)
    text.add_column(no_wrap=True, style="dim", min_width=6)
    text.add_column(ratio=1)
    text.add_row("cause:", _safe(d.cause))
    text.add_row("fix:", _safe(d.fix))
    console.print(Padding(text, (0, 0, 0, 2)), highlight=False)
    if d.fix_command:
        console.print(f"  [bold]$ {_safe(d.fix_command)}[/]", highlight=False, soft_wrap=True)
    console.print(f"  [dim]more:  gpuport explain {d.rule_id}[/]", highlight=False)


def _probes_terminal(report: DoctorReport, console: Console) -> None:
    table = Table(title="probes", title_justify="left", show_edge=False)
    for col in ("probe", "layer", "status", "s", "message"):
        table.add_column(col, overflow="fold")
    for p in report.probes:
        style = "red" if p.status in (ProbeStatus.ERROR, ProbeStatus.TIMEOUT) else ""
        table.add_row(
            _safe(p.name),  # a replayed snapshot's text (thirty-second re-run F3)
            p.layer.value,
            f"[{style}]{p.status.value}[/]" if style else p.status.value,
            f"{p.duration_s:.2f}",
            _safe(p.message or ""),
        )
    console.print()
    console.print(table)


def _fence(command: str) -> str:
    """A command in a fenced block that its own content cannot close."""
    body = clean(command).replace("`", "'")
    return f"```console\n$ {body}\n```\n"


def render_markdown(report: DoctorReport, *, verbose: bool = False) -> str:
    out = [f"# gpuport doctor\n\n{md(header(report))}\n\n"]
    out += [f"* {md(line)}\n" for line in report.summary]
    out.append("\n| layer | status | |\n|---|---|---|\n")
    out += [
        f"| {md(row.layer.value)} | {row.status.value} | {md(row.text)} |\n"
        for row in report.layers
    ]
    if report.diagnoses:
        out.append("\n## Diagnoses\n")
    for d in report.diagnoses:
        out.append(
            f"\n### {d.status.value.upper()} {d.rule_id}: {md(d.title)}\n\n"
            f"*Layer:* {md(d.layer.value)} · *Severity:* {d.severity.value}\n\n"
        )
        out += [f"* seen: {md(line)}\n" for line in d.evidence]
        out.append(f"\n**Cause.** {md(d.cause)}\n\n**Fix.** {md(d.fix)}\n\n")
        if d.fix_command:
            out.append(_fence(d.fix_command) + "\n")
        refs = ", ".join(f"<{url}>" for url in d.references if url.startswith("https://"))
        out.append(f"Details: `gpuport explain {d.rule_id}`. Evidence: {refs}\n")
    if verbose:
        out.append(
            "\n## Probes\n\n| probe | layer | status | s | message |\n|---|---|---|---|---|\n"
        )
        out += [
            f"| {md(p.name)} | {md(p.layer.value)} | {p.status.value} | {p.duration_s:.2f} | "
            f"{md(p.message or '')} |\n"
            for p in report.probes
        ]
    return "".join(out)


def render_json(report: DoctorReport) -> str:
    return report.model_dump_json(indent=2) + "\n"
