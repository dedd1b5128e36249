"""The scan report as Markdown, for pull-request comments and wikis."""

from __future__ import annotations

from gpuport.models import Severity
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
        f"* Effort: **{report.effort.low_days:g}–{report.effort.high_days:g} days** "
        f"({report.effort.hours:g} h of listed work)",
        "* Findings: " + ", ".join(f"{report.counts.get(s, 0)} {s.value}" for s in Severity),
        f"* Files: {report.files_scanned} scanned, {len(report.skipped)} skipped",
        "",
        "## Findings",
        "",
    ]
    if report.findings:
        out += ["| severity | rule | where | what | fix |", "|---|---|---|---|---|"]
        for f in report.findings:
            sev = f.severity.value + (" (guarded)" if f.guarded else "")
            out.append(
                f"| {sev} | {f.rule_id} | {_cell(f.location.display())} | "
                f"{_cell(f.message)} | {_cell(f.fix)} |"
            )
    else:
        out.append("Nothing found.")
    if report.effort.basis:
        out += [
            "",
            "## Effort basis",
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
