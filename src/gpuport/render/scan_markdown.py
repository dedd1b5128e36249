"""The scan report as Markdown, for pull-request comments and wikis."""

from __future__ import annotations

from gpuport.models import Severity
from gpuport.render import effort_view
from gpuport.render.text import md
from gpuport.scan.model import ScanReport

_cell = md


def render(report: ScanReport) -> str:
    t = report.target
    out = [
        f"# gpuport scan: {report.verdict.value}",
        "",
        f"* Project: {md(report.root)}",
        f"* Target: **{t.name}** ({t.generation}, wave{t.wave_size}, FP8 {t.fp8})",
        f"* Verdict: **{report.verdict.value}**: {report.verdict_reason}",
        f"* Effort: **{report.effort.low_days:g}–{report.effort.high_days:g} engineer-days** "
        f"(by component below; {report.effort.hours:g} h of listed changes)",
        "* Findings: " + ", ".join(f"{report.counts.get(s, 0)} {s.value}" for s in Severity),
        f"* Files: {report.files_scanned} scanned, {len(report.skipped)} skipped, "
        f"{len(report.not_built)} not compiled by the ROCm build",
        f"* Judged: {'every scope' if report.scope == 'all' else 'core code, packaging and build'}"
        + "; by scope: "
        + "; ".join(
            f"{scope} " + ", ".join(f"{n} {sev.value}" for sev, n in counts.items() if n)
            for scope, counts in report.scope_counts.items()
        ),
        "",
    ]
    if report.routes:
        out += ["## ROCm route", "", "| kind | where | what | counts |", "|---|---|---|---|"]
        out += [
            f"| {r.kind} | {_cell(r.path + (f':{r.line}' if r.line else ''))} | {_cell(r.detail)}"
            f" | {'yes' if r.counts else _cell('no: ' + r.why)} |"
            for r in report.routes
        ]
        out.append("")
    else:
        out += ["No ROCm route found in the project (Dockerfile, requirements, extras, build, "
                "CI or README).", ""]  # fmt: skip
    nv = [c for c in report.components if c.nvidia_only]
    if nv and report.routes:
        out += ["NVIDIA-only components (replace or drop on ROCm): "
                + ", ".join(f"{_cell(c.path)}/ ({_cell(c.evidence)})" for c in nv), ""]  # fmt: skip
    parts = report.not_built_parts()
    if parts:
        out += ["## Not built on ROCm", "", "| where | files | evidence |", "|---|---:|---|"]
        out += [f"| {_cell(where)} | {n} | {_cell(ev)} |" for where, n, ev in parts]
        out.append("")
    out += ["## Findings", ""]
    if report.findings:
        out += ["| severity | scope | rule | where | what | fix |", "|---|---|---|---|---|---|"]
        for f in report.findings:
            sev = f.severity.value + (" (guarded)" if f.guarded else "")
            out.append(
                f"| {sev} | {f.scope} | {f.rule_id} | {_cell(f.location.display())} | "
                f"{_cell(f.message)} | {_cell(f.fix)} |"
            )
    else:
        out.append("Nothing found.")
    if report.effort.components:
        total = f"{report.effort.low_days:g}–{report.effort.high_days:g} engineer-days"
        out += ["", "## Effort", ""]
        out += effort_view.markdown(report.effort.components, total, report.effort.calendar)
    if report.effort.basis:
        out += [
            "",
            "## Listed changes",
            "",
            "| rule | what | count | h each | hours |",
            "|---|---|---:|---:|---:|",
        ]
        out += [
            f"| {i.rule_id} | {_cell(i.title)} | {i.count} | {i.hours_each:g} | {i.hours:g} |"
            for i in report.effort.basis
        ]
        out += ["", f"_{report.effort.note}_"]
    if report.skipped:
        out += ["", "## Skipped files", "", "| file | reason |", "|---|---|"]
        out += [f"| {_cell(s.path)} | {_cell(s.reason)} |" for s in report.skipped]
    return "\n".join(out) + "\n"
