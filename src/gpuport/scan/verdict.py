"""Readiness verdict and effort estimate, with the basis shown.

The estimate is deliberately simple and explainable: every rule carries the
hours one occurrence typically costs to fix (its ``effort_hours``); findings
lowered to info by a ROCm guard cost nothing. The range turns hours into
working days (6 focused hours a day) and widens it, because such estimates
are rarely better than a factor of two.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Protocol

from gpuport.models import Severity
from gpuport.scan.model import Effort, EffortItem, Finding, Verdict

HOURS_PER_DAY = 6.0
LOW, HIGH = 0.7, 1.6


class _HasEffort(Protocol):
    @property
    def title(self) -> str: ...

    @property
    def effort_hours(self) -> float: ...


def verdict_for(findings: Sequence[Finding]) -> tuple[Verdict, str]:
    counts = Counter(f.severity for f in findings)
    b, m, n = counts[Severity.BLOCKER], counts[Severity.MAJOR], counts[Severity.MINOR]
    if b:
        return Verdict.BLOCKED, (
            f"{b} blocker{'s' if b != 1 else ''} must be fixed before this project runs on ROCm"
        )
    if m:
        return Verdict.MAJOR_WORK, f"no blockers, but {m} major item{'s' if m != 1 else ''} to port"
    if n:
        return Verdict.MINOR_WORK, f"only {n} minor item{'s' if n != 1 else ''}; expected to run"
    return Verdict.READY, "nothing found that stands in the way of ROCm"


def estimate_effort(findings: Sequence[Finding], rules: Mapping[str, _HasEffort]) -> Effort:
    counted: Counter[str] = Counter()
    seen_deps: set[tuple[str, str]] = set()
    for f in findings:
        if f.severity is Severity.INFO:
            continue
        if f.rule_id.startswith("GP1"):  # the same package declared in several files: fix once
            key = (f.rule_id, f.message)
            if key in seen_deps:
                continue
            seen_deps.add(key)
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
            "manifests counts once"
        ),
    )
