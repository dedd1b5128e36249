"""The scan report for CI logs and pre-commit: one line per finding, each fix once.

``path:line:col: GP201 blocker message`` is what editors, CI log viewers and ``grep`` read
(ruff's and compilers' form), and it never wraps, whatever the width. The judged scope (core,
unless ``--scope all``) comes first, then each other scope's findings marked ``[example]``
and so on; each fix is printed once, after the findings, with the rules it fixes; the last
line is the verdict with the counts ``--fail-on`` gates on.
"""

from __future__ import annotations

from gpuport.models import Severity
from gpuport.render.finding_groups import by_scope, counts_text, group
from gpuport.render.text import clean_line
from gpuport.scan.finding import Finding
from gpuport.scan.model import ScanReport
from gpuport.scan.verdict import judged


def _line(f: Finding, judged_scope: bool) -> str:
    mark = "" if judged_scope else f" [{f.scope}]"
    if f.guarded:
        mark += " (ROCm-guarded)"
    place = f.location.display()
    if place.startswith(":"):
        # a file named `::error title=x::y.cu` would start a line a CI runner reads as a
        # workflow command (GitHub's `::add-mask::`, `::error::`); the path is the same file
        place = f"./{place}"
    return clean_line(f"{place}: {f.rule_id} {f.severity.value}{mark} {f.message}")


def render(report: ScanReport, *, verbose: bool = False) -> str:
    shown = [f for f in report.findings if verbose or f.severity is not Severity.INFO]
    out: list[str] = []
    fixes: dict[str, list[str]] = {}
    for scope, items in by_scope(shown):
        judged_scope = report.scope == "all" or scope == "core"
        for g in group(items):
            for f in g.findings:
                out.append(_line(f, judged_scope))
            for x in g.fixes:
                if all(x.fix in m.message for m in x.messages):
                    continue  # the message already says it
                ids = fixes.setdefault(x.fix, [])
                if g.rule_id not in ids:
                    ids.append(g.rule_id)
    out += [clean_line(f"fix ({', '.join(rules)}): {fix}") for fix, rules in fixes.items()]
    mine = judged(report.findings, report.scope)
    judged_ids = {id(f) for f in mine}
    others = [
        f for f in report.findings if id(f) not in judged_ids and f.severity is not Severity.INFO
    ]
    basis = "every scope" if report.scope == "all" else "core code"
    counts = counts_text([f for f in mine if f.severity is not Severity.INFO]) or "nothing"
    summary = (
        f"gpuport scan: {report.verdict.value} ({report.verdict_reason}); "
        f"{counts} above info in {basis}"
    )
    if others:
        summary += f"; not judged: {counts_text(others)} (--scope all judges them)"
    hidden = len(report.findings) - len(shown)
    if hidden:
        summary += f"; {hidden} info hidden (--verbose)"
    out.append(clean_line(summary))
    return "\n".join(out) + "\n"


__all__ = ["render"]
