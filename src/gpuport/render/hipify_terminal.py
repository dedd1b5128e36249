"""Terminal (rich) and Markdown views of a HipifyReport."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuport.hipify.run import unchecked
from gpuport.render.text import clean_line, md

if TYPE_CHECKING:  # rich is imported by the views that draw (start-up, issue 18)
    from rich.console import Console

    from gpuport.hipify.run import FileResult, HipifyReport

# Every name, reason and message below comes from the project (file names, code): shown
# through clean_line (terminal: no escape sequences, bidi overrides or forged lines; table
# cells as Text, so no rich markup either) or md (Markdown: no live HTML, links or new rows).


def _compile(f: FileResult) -> str:
    if f.compile is None:
        return "-"
    return f.compile.status


#: How the HIP version was chosen, as the summary says it (one assumption for every command).
HIP_ORIGIN = {
    "installed": " (the HIP installed here)",
    "default": " (gpuport's default: no HIP installed here; --hip-version picks one)",
}


def summary(report: HipifyReport) -> str:
    """One line for stderr."""
    t = report.totals
    line = (
        f"gpuport hipify: {t.get('files', 0)} file(s) for HIP {report.hip_version}"
        f"{HIP_ORIGIN.get(report.hip_version_origin, '')}, "
        f"{t.get('replacements', 0)} replacement(s), {t.get('unsupported', 0)} unsupported, "
        f"{t.get('hazards', 0)} hazard(s), {t.get('skipped', 0)} skipped"
    )
    if report.wave64 == "fix":
        line += (
            f"; wave64: {t.get('wave64_fixed', 0)} site(s) ported, "
            + (f"{t.get('wave64_unsafe', 0)} unsafe, " if report.unsafe_fixes else "")
            + f"{t.get('wave64_left', 0)} left"
        )
    if report.checked:
        line += f"; compile: {t.get('compiled_ok', 0)} ok, {t.get('compile_failed', 0)} failed"
        if t.get("compile_inconclusive"):
            line += f", {t['compile_inconclusive']} inconclusive"
        units = t.get("units_not_compiled", 0)
        if t.get("not_compiled", 0) - units:
            line += f", {t['not_compiled'] - units} header(s) checked through their includers"
        if units:
            line += f", {units} not compiled (see why above)"
    return line


def render(report: HipifyReport, console: Console) -> None:
    """The per-file counts table, then unsupported names, hazards and compile errors."""

    title = f"gpuport hipify -> HIP {report.hip_version} ({report.target})"
    if report.hip_headers:
        title += f", API names checked against the headers in {report.hip_headers}"
    if len(report.files) > TABLE_ROWS:  # one plain line per file: a table of thousands of
        # rows took rich 10 s of CPU to lay out (fourteenth/fifteenth re-run)
        lines = [clean_line(title)] + [
            clean_line(
                f"{f.path} -> {f.output or '-'}: replaced {sum(f.replacements.values())}, "
                f"unsupported {len(f.unsupported)}, hazards {len(f.hazards)}, "
                f"compile {_compile(f)}"
            )
            for f in report.files
        ]
        console.print("\n".join(lines), highlight=False, markup=False)
    else:
        _table(report, console, title)
    _render_families(report, console)
    for f in report.files:
        _print_capped(
            console,
            f.path,
            "unsupported uses",
            [
                f"{f.path}:{u.line}:{u.col}: unsupported {u.name} ({u.reason})"
                for u in f.unsupported
            ],
        )
        _print_capped(
            console,
            f.path,
            "wave64 ports",
            [
                f"{f.path}:{w.line}: wave64 {'unsafe ' if w.unsafe else ''}ported "
                f"({w.kind}): {w.detail}"
                for w in f.wave64
            ],
        )
        _print_capped(
            console,
            f.path,
            "wave64 sites left",
            [f"{f.path}:{w.line}: wave64 left ({w.kind}): {w.detail}" for w in f.wave64_left],
        )
        for shim in f.shims:
            console.print(
                clean_line(f"{f.path}: shim written: {shim}"), highlight=False, markup=False
            )
        _print_capped(
            console,
            f.path,
            "hazards",
            [
                f"{h.location.display()}: {h.rule_id} [{h.severity.value}] {h.title}"
                for h in f.hazards
            ],
        )
        if f.compile is not None and unchecked(f):
            why = f.compile.error or ""
            why = why if why.startswith("not compiled") else f"not compiled: {why}"
            console.print(clean_line(f"{f.path}: {why}"), highlight=False, markup=False)
        if f.compile is not None and f.compile.status in ("failed", "inconclusive"):
            console.print(
                clean_line(f"{f.path}: compile {f.compile.status}: {f.compile.error}"),
                highlight=False,
                markup=False,
            )
        for n in f.compile.notes if f.compile is not None else []:
            console.print(clean_line(f"{f.path}: {n}"), highlight=False, markup=False)
    for s in report.skipped:
        console.print(clean_line(f"skipped {s.path}: {s.reason}"), highlight=False, markup=False)
    console.print(summary(report), highlight=False, markup=False)


#: Files beyond which the per-file counts are plain lines, not a table
TABLE_ROWS = 300
#: Lines of one kind listed per file in the terminal (the json and markdown formats list all):
#: 800,000 unsupported uses in a generated file printed for minutes (thirty-third re-run F8)
MOST_LINES_PER_FILE = 60


def _print_capped(console: Console, path: str, what: str, lines: list[str]) -> None:
    for line in lines[:MOST_LINES_PER_FILE]:
        console.print(clean_line(line), highlight=False, markup=False)
    if len(lines) > MOST_LINES_PER_FILE:
        more = len(lines) - MOST_LINES_PER_FILE
        console.print(
            clean_line(f"{path}: {more:,} more {what} not listed (--format json lists all)"),
            highlight=False,
            markup=False,
        )


def _table(report: HipifyReport, console: Console, title: str) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(clean_line(title)))
    for col in ("file", "output", "replaced", "unsupported", "hazards", "compile"):
        table.add_column(
            col, justify="right" if col in ("replaced", "unsupported", "hazards") else "left"
        )
    for f in report.files:
        table.add_row(
            Text(clean_line(f.path)),
            Text(clean_line(f.output or "-")),
            str(sum(f.replacements.values())),
            str(len(f.unsupported)),
            str(len(f.hazards)),
            _compile(f),
        )
    console.print(table)


def _render_families(report: HipifyReport, console: Console) -> None:
    """Replacements per API family, then unsupported identifiers with their counts."""
    from rich.table import Table
    from rich.text import Text

    if report.by_family:
        fam = Table(title="by API family")
        fam.add_column("family")
        fam.add_column("replaced", justify="right")
        for name, n in sorted(report.by_family.items(), key=lambda kv: (-kv[1], kv[0])):
            fam.add_row(Text(clean_line(name)), str(n))
        fam.add_row("total", str(sum(report.by_family.values())), style="bold")
        console.print(fam)
    if report.unsupported_counts:
        uns = Table(title="unsupported identifiers")
        uns.add_column("identifier")
        uns.add_column("count", justify="right")
        for name, n in sorted(report.unsupported_counts.items(), key=lambda kv: (-kv[1], kv[0])):
            uns.add_row(Text(clean_line(name)), str(n))
        console.print(uns)


def render_markdown(report: HipifyReport) -> str:
    """A Markdown report: counts table, then the details."""
    lines = [
        f"# gpuport hipify: HIP {report.hip_version}, target {report.target}",
        "",
        *(
            [f"API names checked against the headers in {md(report.hip_headers)}.", ""]
            if report.hip_headers
            else []
        ),
        "| file | output | replaced | unsupported | hazards | compile |",
        "|---|---|---:|---:|---:|---|",
    ]
    for f in report.files:
        lines.append(
            f"| {md(f.path)} | {md(f.output or '-')} | {sum(f.replacements.values())} "
            f"| {len(f.unsupported)} | {len(f.hazards)} | {_compile(f)} |"
        )
    details: list[str] = []
    for f in report.files:
        details += [
            f"* {md(f.path)}:{u.line}:{u.col} unsupported {md(u.name)}: {md(u.reason)}"
            for u in f.unsupported
        ]
        details += [
            f"* {md(f.path)}:{w.line} wave64 {'unsafe ' if w.unsafe else ''}ported ({w.kind}): "
            f"{md(w.detail)}"
            for w in f.wave64
        ]
        details += [
            f"* {md(f.path)}:{w.line} wave64 left ({w.kind}): {md(w.detail)}" for w in f.wave64_left
        ]
        details += [f"* {md(f.path)} shim written: {md(shim)}" for shim in f.shims]
        details += [
            f"* {md(h.location.display())} **{h.rule_id}** ({h.severity.value}): {md(h.title)}"
            for h in f.hazards
        ]
        if f.compile is not None and (
            f.compile.status in ("failed", "inconclusive") or unchecked(f)
        ):
            details.append(
                f"* {md(f.path)} compile {f.compile.status}: {md(f.compile.error or '')}"
            )
        details += [f"* {md(f.path)}: {md(n)}" for n in (f.compile.notes if f.compile else [])]
    details += [f"* skipped {md(s.path)}: {md(s.reason)}" for s in report.skipped]
    if details:
        lines += ["", "## Details", "", *details]
    lines += ["", summary(report), ""]
    return "\n".join(lines)
