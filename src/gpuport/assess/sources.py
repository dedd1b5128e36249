"""Adapters: each core's public function called the way an assessment needs, one per core.

Why adapters: the cores were written for their own commands (``scan`` prints a table,
``hipify`` writes an output tree, ``bench`` records history). An assessment needs each one's
answer as a small, frozen section of the :class:`~gpuport.assess.model.Assessment`, with no
side effects in the user's project. Keeping every call in the adapter modules means a change
in a core's signature is fixed in one place, and :mod:`gpuport.assess.run` only sequences the
steps. This module holds the scan's adapters; :mod:`gpuport.assess.sources_hipify` the hipify
dry run and its compile check; :mod:`gpuport.assess.sources_evidence` cost, bench, validate
and doctor.

Imports of the cores happen inside the functions: ``bench --run`` pulls in torch, and the
other paths must stay fast and torch-free.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gpuport import textre
from gpuport.assess.config import Settings
from gpuport.assess.model import ScanSection, TargetSummary
from gpuport.models import GpuportError, Severity
from gpuport.scan.finding import Finding, SkippedFile
from gpuport.scan.model import Effort

if TYPE_CHECKING:
    from gpuport.scan.model import ScanReport

FINDINGS_KEPT = 1000  # above-info findings the report carries; the criteria see all
_HF_ID = textre.compile(r"""["']([A-Za-z0-9][\w.-]{0,63}/[\w.-]{1,96})["']""")


# ------------------------------------------------------------------------------ scan


def run_scan(settings: Settings) -> tuple[ScanReport, ScanSection, list[Finding]]:
    """``gpuport scan`` on the project for the first target.

    Returns the report, its section (the first :data:`FINDINGS_KEPT` findings above info) and
    every finding above info, worst first: the criteria read all of them, only the report
    carries fewer.
    """
    from gpuport.scan import ScanOptions, scan_path
    from gpuport.scan.engine import NothingToScan

    try:
        opts = ScanOptions(target=settings.target, exclude=settings.exclude)
        report = scan_path(settings.root, opts)
    except NothingToScan:
        raise GpuportError(
            f"nothing to assess in {settings.root}: no source, dependency, build or "
            "container files found"
        ) from None
    above = worst_first(report.findings)
    t = report.target
    section = ScanSection(
        root=report.root,
        target=TargetSummary(
            name=t.name, generation=t.generation, wave_size=t.wave_size, fp8=t.fp8
        ),
        files_scanned=report.files_scanned,
        files_by_kind=report.files_by_kind,
        counts=report.counts,
        verdict=report.verdict.value,
        verdict_reason=report.verdict_reason,
        findings=above[:FINDINGS_KEPT],
        findings_above_info=len(above),
        findings_total=len(report.findings),
        skipped=[f"{s.path}: {s.reason}" for s in report.skipped],
        unread=[f"{s.path}: {s.reason}" for s in unread_sources(report, settings.root)],
        routes=[
            f"{r.kind} {r.path}" + (f":{r.line}" if r.line else "") + f": {r.detail}"
            for r in report.routes
        ],
        scope_counts={
            scope: sum(n for sev, n in counts.items() if sev is not Severity.INFO)
            for scope, counts in report.scope_counts.items()
        },
        not_built=len(report.not_built),
        duration_s=report.duration_s,
    )
    return report, section, above


def worst_first(findings: Sequence[Finding]) -> list[Finding]:
    """The findings above info, worst first, then by place (the report's order)."""
    kept = [f for f in findings if f.severity is not Severity.INFO]
    kept.sort(key=lambda f: (-f.severity.rank, f.location.path, f.location.line or 0))
    return kept


def unread_sources(report: ScanReport, root: Path) -> list[SkippedFile]:
    """The skipped entries that are files the scan would have read (not folders or links):
    source files whose text it could not get (not UTF-8, too large, binary, unreadable)."""
    from gpuport.scan.project.files import classify

    root_name = root.resolve().name
    return [
        s
        for s in report.skipped
        if not s.path.endswith("/")
        and classify(s.path if "/" in s.path else f"{root_name}/{s.path}") is not None
    ]


def with_unread_hazards(
    report: ScanReport, section: ScanSection, above: list[Finding], extra: Sequence[Finding]
) -> tuple[ScanSection, list[Finding], Effort]:
    """The scan's answer with hipify's hazards in files the scan could not read added.

    hipify reads a CUDA/C++ file that is not UTF-8 (keeping the odd bytes), where the scan
    skips it; its hazard pass runs the scan's own GP3xx rules, so those findings are what
    the scan would have said. Counts, verdict, findings and effort are made again from all.
    """
    if not extra:
        return section, above, report.effort
    from gpuport.scan.rules import RULES
    from gpuport.scan.verdict import decide, estimate_effort, judged

    every = [*report.findings, *extra]
    core = judged(every, report.scope)
    verdict, reason = decide(core, report.routes, RULES)
    combined = worst_first(every)
    counts = Counter(f.severity for f in every)
    merged = section.model_copy(
        update={
            "counts": {sev: counts.get(sev, 0) for sev in Severity},
            "verdict": verdict.value,
            "verdict_reason": reason,
            "findings": combined[:FINDINGS_KEPT],
            "findings_above_info": len(combined),
            "findings_total": len(every),
            "from_hipify": len(extra),
        }
    )
    # the scan's own context carried over: its components by folder, and whether it had GPU
    # code to bring up (the report does not list every CUDA source)
    folders = sorted((c.path for c in report.components), key=len, reverse=True)

    def component_of(path: str) -> str:
        return next((c for c in folders if path.startswith(c + "/")), "")

    bring_up = any(c.kind == "bring-up" for c in report.effort.components)
    effort = estimate_effort(core, RULES, component_of, device_files=int(bring_up))
    return merged, combined, effort


def detect_model(root: Path, exclude: tuple[str, ...]) -> tuple[str, str] | None:
    """A catalog model named in the project's Python code (a Hugging Face id literal).

    Why: a service usually names its checkpoint (``"meta-llama/Llama-3.1-8B-Instruct"``);
    pricing that model is a better default than pricing nothing. Only string literals that
    resolve to a catalog entry count, the first one wins, and the report marks the setting
    as detected so the reader knows to declare it. Nothing is imported or run.
    """
    from gpuport.knowledge.models import resolve_model
    from gpuport.scan.project.files import Candidate, read_text, walk
    from gpuport.scan.rules import FileKind

    for item in walk(root, exclude=exclude):
        if not isinstance(item, Candidate) or item.kind is not FileKind.PYTHON:
            continue
        text = read_text(item.path)
        if not isinstance(text, str):
            continue
        for no, line in enumerate(text.splitlines(), 1):
            for match in _HF_ID.finditer(line):
                try:
                    key = resolve_model(match.group(1)).key
                except GpuportError:
                    continue
                return key, f"found {match.group(1)!r} in {item.rel}:{no}"
    return None


__all__ = [
    "FINDINGS_KEPT",
    "detect_model",
    "run_scan",
    "unread_sources",
    "with_unread_hazards",
    "worst_first",
]
