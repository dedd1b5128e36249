"""Readiness verdict, with its reason; the effort estimate is :mod:`gpuport.scan.effort`'s.

Every rule carries the hours one occurrence typically costs to fix (its ``effort_hours``):
the effort's listed changes, and with a ROCm route the gap its blockers leave. Findings
lowered to info by a ROCm guard cost nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from gpuport.models import Severity
from gpuport.scan.effort.items import HIGH, HOURS_PER_DAY, LOW  # noqa: F401 (re-exported)
from gpuport.scan.finding import Finding
from gpuport.scan.model import Effort, Verdict


class _HasEffort(Protocol):
    @property
    def title(self) -> str: ...

    @property
    def effort_hours(self) -> float: ...


def judged(findings: Sequence[Finding], scope: str = "core") -> list[Finding]:
    """The findings that decide the verdict and the effort: core ones, or all."""
    return list(findings) if scope == "all" else [f for f in findings if f.scope == "core"]


#: Rules whose findings are install steps, not porting work: the package has a ROCm build
#: that needs its own install route (ROCm torch). They weigh as minor in the verdict.
INSTALL_STEPS = frozenset({"GP102"})


def _weight(f: Finding) -> Severity:
    if f.rule_id in INSTALL_STEPS and f.severity.rank > Severity.MINOR.rank:
        return Severity.MINOR
    return f.severity


#: With a ROCm route, the gap (hours of the blockers' effort) that makes it major work.
GAP_HOURS = 30.0


def verdict_for(
    findings: Sequence[Finding], route: Sequence[str] = (), gap_hours: float = 0.0
) -> tuple[Verdict, str]:
    """The verdict from the judged findings.

    ``route`` names the evidence of the ROCm route the project already has; the project is
    then judged on what that route still lacks: blockers in core code are features it does
    not cover yet, major work when ``gap_hours`` (their effort) reaches a working week
    (:data:`GAP_HOURS`), else minor work; major and minor items are minor work there.
    """
    counts = Counter(_weight(f) for f in findings)
    b, m, n = counts[Severity.BLOCKER], counts[Severity.MAJOR], counts[Severity.MINOR]
    shown = ", ".join(route[:3]) + (f" and {len(route) - 3} more" if len(route) > 3 else "")
    if route and b and gap_hours >= GAP_HOURS:
        return Verdict.MAJOR_WORK, (
            f"the project already has a ROCm route ({shown}); {b} blocker"
            f"{'s' if b != 1 else ''} in core code it does not cover yet "
            f"({gap_hours:g} h, a week or more)"
        )
    if route and b:
        return Verdict.MINOR_WORK, (
            f"the project already has a ROCm route ({shown}); {b} blocker"
            f"{'s' if b != 1 else ''} in core code it does not cover yet, "
            f"{gap_hours:g} h of work (under a week)"
        )
    if route and (m or n):
        return Verdict.MINOR_WORK, (
            f"the project already has a ROCm route ({shown}); {m} major and {n} minor "
            "item(s) left in core code"
        )
    if route:
        return Verdict.READY, f"the project already has a ROCm route ({shown}); nothing left"
    if b:
        return Verdict.BLOCKED, (
            f"{b} blocker{'s' if b != 1 else ''} must be fixed before this project runs on ROCm"
        )
    if m:
        return Verdict.MAJOR_WORK, f"no blockers, but {m} major item{'s' if m != 1 else ''} to port"
    if n:
        return Verdict.MINOR_WORK, f"only {n} minor item{'s' if n != 1 else ''}; expected to run"
    return Verdict.READY, "nothing found that stands in the way of ROCm"


def estimate_effort(
    findings: Sequence[Finding],
    rules: Mapping[str, _HasEffort],
    component_of: Callable[[str], str] | None = None,
    replace_or_drop: Sequence[tuple[str, str]] = (),
    device_files: int = 0,
    knowledge_dir: Path | None = None,
) -> Effort:
    """The effort estimate (:mod:`gpuport.scan.effort`): ``component_of`` maps a path to its
    component; ``replace_or_drop`` lists NVIDIA-only components beside a working route (path,
    evidence); ``device_files`` counts the CUDA sources the ROCm build compiles;
    ``knowledge_dir`` is ``--knowledge`` (its ``kernel_families.toml``)."""
    from gpuport.scan.effort import EffortContext, estimate

    ctx = EffortContext(component_of, replace_or_drop, device_files, knowledge_dir)
    return estimate(findings, rules, ctx)


def top_blockers(
    findings: Sequence[Finding], rules: Mapping[str, _HasEffort], scope: str = "core"
) -> list[Finding]:
    """The judged blockers ranked by impact (the rule's hours per occurrence), taking one of
    each rule in turn so the top of the list shows the different kinds; never by path."""
    blockers = [f for f in judged(findings, scope) if f.severity is Severity.BLOCKER]
    by_rule: dict[str, list[Finding]] = {}
    for f in blockers:
        by_rule.setdefault(f.rule_id, []).append(f)
    order = sorted(by_rule, key=lambda r: (-rules[r].effort_hours, -len(by_rule[r]), r))
    out: list[Finding] = []
    depth = 0
    while len(out) < len(blockers):
        for r in order:
            if depth < len(by_rule[r]):
                out.append(by_rule[r][depth])
        depth += 1
    return out
