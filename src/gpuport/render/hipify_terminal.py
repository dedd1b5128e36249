"""Terminal (rich) and Markdown views of a HipifyReport."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from gpuport.hipify.run import FileResult, HipifyReport, compile_reason


def _compile(f: FileResult) -> str:
    if f.compile is None:
        return "-"
    return "ok" if f.compile.ok else "failed"


def summary(report: HipifyReport) -> str:
    """One line for stderr."""
    t = report.totals
    line = (
        f"gpuport hipify: {t.get('files', 0)} file(s) for HIP {report.hip_version}, "
        f"{t.get('replacements', 0)} replacement(s), {t.get('unsupported', 0)} unsupported, "
        f"{t.get('hazards', 0)} hazard(s), {t.get('skipped', 0)} skipped"
    )
    if report.checked:
        line += f"; compile: {t.get('compiled_ok', 0)} ok, {t.get('compile_failed', 0)} failed"
    return line


def render(report: HipifyReport, console: Console) -> None:
    """The per-file counts table, then unsupported names, hazards and compile errors."""
    table = Table(title=f"gpuport hipify -> HIP {report.hip_version} ({report.target})")
    for col in ("file", "output", "replaced", "unsupported", "hazards", "compile"):
        table.add_column(
            col, justify="right" if col in ("replaced", "unsupported", "hazards") else "left"
        )
    for f in report.files:
        table.add_row(
            f.path,
            f.output or "-",
            str(sum(f.replacements.values())),
            str(len(f.unsupported)),
            str(len(f.hazards)),
            _compile(f),
        )
    console.print(table)
    _render_families(report, console)
    for f in report.files:
        for u in f.unsupported:
            console.print(
                f"{f.path}:{u.line}:{u.col}: unsupported {u.name} ({u.reason})",
                highlight=False,
                markup=False,
            )
        for h in f.hazards:
            console.print(
                f"{h.location.display()}: {h.rule_id} [{h.severity.value}] {h.title}",
                highlight=False,
                markup=False,
            )
        if f.compile is not None and not f.compile.ok:
            console.print(
                f"{f.path}: compile failed: {compile_reason(f.compile.error)}",
                highlight=False,
                markup=False,
            )
    for s in report.skipped:
        console.print(f"skipped {s.path}: {s.reason}", highlight=False, markup=False)
    console.print(summary(report), highlight=False, markup=False)


def _render_families(report: HipifyReport, console: Console) -> None:
    """Replacements per API family, then unsupported identifiers with their counts."""
    if report.by_family:
        fam = Table(title="by API family")
        fam.add_column("family")
        fam.add_column("replaced", justify="right")
        for name, n in sorted(report.by_family.items(), key=lambda kv: (-kv[1], kv[0])):
            fam.add_row(name, str(n))
        fam.add_row("total", str(sum(report.by_family.values())), style="bold")
        console.print(fam)
    if report.unsupported_counts:
        uns = Table(title="unsupported identifiers")
        uns.add_column("identifier")
        uns.add_column("count", justify="right")
        for name, n in sorted(report.unsupported_counts.items(), key=lambda kv: (-kv[1], kv[0])):
            uns.add_row(name, str(n))
        console.print(uns)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: HipifyReport) -> str:
    """A Markdown report: counts table, then the details."""
    lines = [
        f"# gpuport hipify: HIP {report.hip_version}, target {report.target}",
        "",
        "| file | output | replaced | unsupported | hazards | compile |",
        "|---|---|---:|---:|---:|---|",
    ]
    for f in report.files:
        lines.append(
            f"| `{_md(f.path)}` | {_md(f.output or '-')} | {sum(f.replacements.values())} "
            f"| {len(f.unsupported)} | {len(f.hazards)} | {_compile(f)} |"
        )
    details: list[str] = []
    for f in report.files:
        details += [
            f"* `{_md(f.path)}:{u.line}:{u.col}` unsupported `{u.name}`: {_md(u.reason)}"
            for u in f.unsupported
        ]
        details += [
            f"* `{_md(h.location.display())}` **{h.rule_id}** ({h.severity.value}): {_md(h.title)}"
            for h in f.hazards
        ]
        if f.compile is not None and not f.compile.ok:
            details.append(
                f"* `{_md(f.path)}` compile failed: `{_md(compile_reason(f.compile.error))}`"
            )
    details += [f"* skipped `{_md(s.path)}`: {_md(s.reason)}" for s in report.skipped]
    if details:
        lines += ["", "## Details", "", *details]
    lines += ["", summary(report), ""]
    return "\n".join(lines)
