"""Readiness verdict and effort estimate, with the basis shown.

The estimate is deliberately simple and explainable: every rule carries the
hours one occurrence typically costs to fix (its ``effort_hours``); findings
lowered to info by a ROCm guard cost nothing. The range turns hours into
working days (6 focused hours a day) and widens it, because such estimates
are rarely better than a factor of two.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from gpuport import textre
from gpuport.models import Severity
from gpuport.scan.finding import Finding
from gpuport.scan.model import Effort, EffortItem, Verdict

HOURS_PER_DAY = 6.0
LOW, HIGH = 0.7, 1.6


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


_FAMILY = textre.compile(r"this file uses (CUTLASS|CuTe|the cuDNN frontend|NVSHMEM|TensorRT)")
_PACKAGE = textre.compile(r"comes from ([\w.-]+)")
_LIBRARY = textre.compile(r"this file uses ([\w+ .-]+?) \(|^`([^`]+)` ")
#: Import rules whose fix is per package (replace it, or install its ROCm build).
ONCE_PER_PACKAGE = frozenset({"GP201", "GP202"})
#: Rules whose fix is per library or per spelling in a component (hipify or a find-replace;
#: an FP8 dtype becomes one target-chosen constant, `torch.float8_e4m3fnuz` on gfx942; a
#: CUDA-graph API is validated against eager mode once per component).
ONCE_PER_LIBRARY = frozenset({"GP316", "GP319", "GP208", "GP215"})
DROP_HOURS = 8.0


def estimate_effort(
    findings: Sequence[Finding],
    rules: Mapping[str, _HasEffort],
    component_of: Callable[[str], str] | None = None,
    replace_or_drop: Sequence[tuple[str, str]] = (),
) -> Effort:
    """``component_of`` maps a path to its component (library families count once per
    component); ``replace_or_drop`` lists NVIDIA-only components (path, evidence)."""
    counted: Counter[str] = Counter()
    seen_deps: set[tuple[str, str]] = set()
    seen_family: set[tuple[str, str]] = set()
    for f in findings:
        if f.severity is Severity.INFO:
            continue
        if f.rule_id.startswith("GP1"):  # the same package declared in several files: fix once
            key = (f.rule_id, f.message)
            if key in seen_deps:
                continue
            seen_deps.add(key)
        if f.rule_id in ONCE_PER_PACKAGE:  # one job per package, however many imports
            pkg = _PACKAGE.search(f.message)
            key = (f.rule_id, pkg.group(1) if pkg else f.message)
            if key in seen_deps:
                continue
            seen_deps.add(key)
        if f.rule_id in ONCE_PER_LIBRARY:  # switching a library (or a spelling) is one job
            lib = _LIBRARY.search(f.message)  # per component, not one per file
            comp = component_of(f.location.path) if component_of else ""
            key = (f.rule_id, comp + "|" + ((lib.group(1) or lib.group(2)) if lib else f.message))
            if key in seen_deps:
                continue
            seen_deps.add(key)
        if f.rule_id == "GP212" and "(a PTX math approximation)" in f.message:
            # swapping PTX approximations for Triton's math is one job per component
            key = (f.rule_id, component_of(f.location.path) if component_of else "")
            if key in seen_deps:
                continue
            seen_deps.add(key)
        if f.rule_id == "GP212" and "(PTX synchronization)" in f.message:
            # a file's PTX barriers, atomics and thread indices move to Triton's primitives
            # together: one job per file
            key = (f.rule_id, "sync|" + f.location.path)
            if key in seen_deps:
                continue
            seen_deps.add(key)
        fam = _FAMILY.search(f.message) if f.rule_id == "GP315" else None
        if fam is not None:  # a library family is ported once per component, not per file
            comp = component_of(f.location.path) if component_of else ""
            family = "CUTLASS" if fam.group(1) in ("CUTLASS", "CuTe") else fam.group(1)
            if (comp, family) in seen_family:
                continue
            seen_family.add((comp, family))
        counted[f.rule_id] += 1
    basis: list[EffortItem] = []
    for rule_id, count in sorted(counted.items()):
        rule = rules[rule_id]
        basis.append(
            EffortItem(
                rule_id=rule_id,
                title=rule.title,
                count=count,
                hours_each=rule.effort_hours,
                hours=round(rule.effort_hours * count, 2),
            )
        )
    for path, evidence in replace_or_drop:
        basis.append(
            EffortItem(
                rule_id="component",
                title=f"replace or drop {path}/ on ROCm (NVIDIA-only component: {evidence})",
                count=1,
                hours_each=DROP_HOURS,
                hours=DROP_HOURS,
            )
        )
    basis.sort(key=lambda item: (-item.hours, item.rule_id))
    hours = round(sum(item.hours for item in basis), 2)
    days = hours / HOURS_PER_DAY
    return Effort(
        low_days=round(days * LOW, 1),
        high_days=round(days * HIGH, 1),
        hours=hours,
        basis=basis,
        note=(
            "sum over findings of the rule's typical hours per occurrence (see `gpuport rules`); "
            f"{HOURS_PER_DAY:g} focused hours a day, range x{LOW:g}..x{HIGH:g}; "
            "guarded and info findings cost nothing; a dependency finding repeated in several "
            "manifests counts once, and so does a package imported in several files or a "
            "library with a ROCm twin (or a CUDA-only type name, an FP8 dtype, a CUDA-graph "
            "API) used in several files of a component, and so do Triton PTX math "
            "approximations; Triton PTX that only synchronizes counts once per file; "
            "a library family (CUTLASS/CuTe, cuDNN frontend) counts "
            "once per component; an NVIDIA-only component is one 'replace or drop' item "
            f"({DROP_HOURS:g} h to take it out of the ROCm build; porting it is a project "
            "of its own)"
        ),
    )


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
