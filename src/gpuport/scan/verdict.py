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
from gpuport.scan.model import Effort, RouteEvidence, Verdict


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
#: Without blockers, major items whose effort stays under a working day are minor work: a
#: couple of nvidia-smi probes to replace is not a port (issue 24). Native majors (GP3xx,
#: GP4xx) never are: a kernel or a build with no HIP path is porting work.
MINOR_HOURS = 6.0


def decide(
    judged_findings: Sequence[Finding],
    routes: Sequence[RouteEvidence],
    rules: Mapping[str, _HasEffort],
    component_of: Callable[[str], str] | None = None,
) -> tuple[Verdict, str]:
    """The verdict of judged findings given the project's route evidence: the one place the
    engine and assess (which adds hipify's hazards) decide it."""
    route = list(dict.fromkeys(r.path for r in routes if r.counts))
    blockers = [f for f in judged_findings if f.severity is Severity.BLOCKER]
    majors = [f for f in judged_findings if f.severity is Severity.MAJOR]
    # native majors (kernels, a build with no HIP path) are a port however few: only
    # Python, dependency and container items can add up to minor work
    native = any(f.rule_id.startswith(("GP3", "GP4")) for f in majors)
    shown = [
        f"{r.path}" + (f":{r.line}" if r.line else "") + f" ({r.why})"
        for r in routes
        if not r.counts
    ]
    not_counted = "; ".join(shown[:3]) + (f" and {len(shown) - 3} more" if len(shown) > 3 else "")
    return verdict_for(
        judged_findings,
        route,
        estimate_effort(blockers, rules, component_of).hours,
        not_counted,
        frozenset(r.path for r in routes if r.counts and r.install),
        float("inf") if native else estimate_effort(majors, rules, component_of).hours,
    )


def verdict_for(
    findings: Sequence[Finding],
    route: Sequence[str] = (),
    gap_hours: float = 0.0,
    not_counted: str = "",
    route_files: frozenset[str] = frozenset(),
    major_hours: float = float("inf"),
) -> tuple[Verdict, str]:
    """The verdict and its reason; ``not_counted`` says why listed route evidence did not
    make a route (issue 24: a route shown under BLOCKED says why it did not count).
    ``route_files`` are the files that are the route's own install (a ROCm requirements file,
    a ROCm image): a dependency or image blocker there means the route as documented fails."""
    broken = [
        f
        for f in findings
        if f.severity is Severity.BLOCKER
        and f.location.path in route_files
        and f.rule_id.startswith(("GP1", "GP5"))
    ]
    if route and broken:
        f = broken[0]
        return Verdict.BLOCKED, (
            f"the ROCm route's own install fails: {f.location.path}:{f.location.line} "
            f"({f.message[:120]})"
        )
    verdict, reason = _verdict(findings, route, gap_hours, major_hours)
    if not route and not_counted:
        reason += f"; ROCm route evidence found but not counted: {not_counted}"
    return verdict, reason


def _verdict(
    findings: Sequence[Finding], route: Sequence[str], gap_hours: float, major_hours: float
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
            f"has a ROCm route ({shown}); {b} blocker"
            f"{'s' if b != 1 else ''} in core code it does not cover yet "
            f"({gap_hours:g} h, a week or more)"
        )
    if route and b:
        return Verdict.MINOR_WORK, (
            f"has a ROCm route ({shown}); {b} blocker"
            f"{'s' if b != 1 else ''} in core code it does not cover yet, "
            f"{gap_hours:g} h of work (under a week)"
        )
    if route and (m or n):
        return Verdict.MINOR_WORK, (
            f"has a ROCm route ({shown}); {m} major and {n} minor item(s) left in core code"
        )
    if route:
        return Verdict.READY, f"has a ROCm route ({shown}); nothing left"
    if b:
        return Verdict.BLOCKED, (
            f"{b} blocker{'s' if b != 1 else ''} must be fixed before this project runs on ROCm"
        )
    if m and major_hours < MINOR_HOURS:
        return Verdict.MINOR_WORK, (
            f"no blockers; {m} major item{'s' if m != 1 else ''} and {n} minor, "
            f"{major_hours:g} h of work on the majors (under a day)"
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
