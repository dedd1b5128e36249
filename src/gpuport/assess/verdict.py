"""The decision engine: readiness, effort in engineer-days, conclusions and the one-line answer.

Readiness starts from the scan's verdict (blockers → blocked, majors → major work, ...) and is
only ever *lifted* by the other evidence, never lowered: CUDA APIs hipify cannot translate, a
translation hipcc refuses, or a validate report that says *wrong* each make it "major work" at
least. Performance and price do not change readiness: they change the decision.

Effort is the scan's (each rule's typical hours per occurrence, a dependency repeated in several
manifests counted once) plus :data:`UNSUPPORTED_API_HOURS` per use of a CUDA API with no HIP
equivalent. hipify's hazard pass runs the scanner's own GP3xx rules, so hazards are counted
once, from the scan. Every class of work lists its basis.
"""

from __future__ import annotations

from collections import defaultdict

from gpuport.assess import criteria, criteria_figures
from gpuport.assess.criteria import Criterion
from gpuport.assess.facts import WAVE_RULES, Facts, plural
from gpuport.assess.model import AssessEffort, Conclusion, EffortClass, Readiness
from gpuport.models import Severity
from gpuport.scan.verdict import HIGH, HOURS_PER_DAY, LOW

UNSUPPORTED_API_HOURS = 3.0  # rewrite one call of an API HIP lacks, and test it

#: Evaluated in this order; the report lists conclusions worst first, then in this order.
CRITERIA: tuple[Criterion, ...] = (
    criteria.cuda_only_packages,
    criteria.native_code,
    criteria.wave32_assumptions,
    criteria.hipify_gaps,
    criteria.other_findings,
    criteria.portable_stack,
    criteria_figures.memory_per_replica,
    criteria_figures.price_per_mtok,
    criteria_figures.bench_ratio,
    criteria_figures.numerics,
    criteria_figures.machine_health,
)

_FROM_SCAN = {
    "ready": Readiness.READY,
    "minor work": Readiness.MINOR_WORK,
    "major work": Readiness.MAJOR_WORK,
    "blocked": Readiness.BLOCKED,
}
_AREAS = {
    "GP1": ("dependencies", "Dependencies and packaging"),
    "GP2": ("python", "Python source"),
    "GP3": ("cuda-c++", "CUDA/C++ source"),
    "GP4": ("build", "Build files"),
    "GP5": ("containers", "Containers"),
    "GP6": ("environment", "Environment"),
}
_WAVE_AREA = ("wave64", "Wave-32 assumptions in kernels")


def conclusions(facts: Facts) -> list[Conclusion]:
    """Every criterion's conclusions, worst first (stable within a severity)."""
    out = [c for criterion in CRITERIA for c in criterion(facts)]
    return sorted(out, key=lambda c: -c.severity.rank)


def readiness(facts: Facts) -> tuple[Readiness, list[str]]:
    """The scan's verdict lifted by hipify and validate; the reasons, strongest first."""
    level = _FROM_SCAN.get(facts.scan.verdict, Readiness.MAJOR_WORK)
    reasons = [facts.scan.verdict_reason]
    lifts: list[str] = []
    hip = facts.hipify
    if hip.unsupported:
        lifts.append(f"{plural(len(hip.unsupported), 'use')} of CUDA APIs HIP lacks")
    failed = [c for c in hip.compile if c.status == "failed"]
    if failed:
        lifts.append(f"{plural(len(failed), 'translated file')} hipcc refuses")
    wrong = [r for r in facts.validate.reports if r.wrong]
    if wrong:
        lifts.append(f"validate: {', '.join(wrong[0].wrong[:3])} computes wrong numbers")
    if lifts and level.rank < Readiness.MAJOR_WORK.rank:
        level = Readiness.MAJOR_WORK
        reasons = [*lifts, *reasons]
    else:
        reasons += lifts
    return level, reasons


def effort(facts: Facts) -> AssessEffort:
    """Scan effort by area plus hipify's untranslatable API uses, each with its basis."""
    from gpuport.scan.rules import RULES

    grouped: dict[tuple[str, str], list[tuple[str, str, int, float, float]]] = defaultdict(list)
    for item in facts.scan_effort.basis:
        area = _WAVE_AREA if item.rule_id in WAVE_RULES else _AREAS[item.rule_id[:3]]
        title = RULES[item.rule_id].title if item.rule_id in RULES else item.title
        grouped[area].append((item.rule_id, title, item.count, item.hours_each, item.hours))
    hip = facts.hipify
    for name, count in hip.unsupported_counts.items():
        hours = count * UNSUPPORTED_API_HOURS
        row = (name, "CUDA API with no HIP equivalent", count, UNSUPPORTED_API_HOURS, hours)
        grouped[("hipify", "hipify: untranslatable APIs")].append(row)
    classes = [
        EffortClass(
            area=area,
            title=title,
            hours=round(sum(r[4] for r in rows), 2),
            count=sum(r[2] for r in rows),
            basis=[f"{rid} {what}: {n} x {each:g} h = {h:g} h" for rid, what, n, each, h in rows],
        )
        for (area, title), rows in grouped.items()
    ]
    classes.sort(key=lambda c: (-c.hours, c.area))
    hours = round(sum(c.hours for c in classes), 2)
    days = hours / HOURS_PER_DAY
    return AssessEffort(
        low_days=round(days * LOW, 1),
        high_days=round(days * HIGH, 1),
        hours=hours,
        classes=classes,
        note=(
            f"{facts.scan_effort.note}; plus {UNSUPPORTED_API_HOURS:g} h per use of a CUDA API "
            "hipify cannot translate; hipify's hazards are the scan's GP3xx findings, counted "
            "once; engineer-days"
        ),
    )


def verdict_reason(level: Readiness, reasons: list[str], found: list[Conclusion]) -> str:
    """The strongest reason, then what causes it (titles of the worst conclusions)."""
    top = [c for c in found if c.severity.rank >= Severity.MAJOR.rank]
    worst_rank = max((c.severity.rank for c in top), default=-1)
    causes = [c.title for c in top if c.severity.rank == worst_rank][:4]
    if level is Readiness.MINOR_WORK:
        causes = [c.title for c in found if c.severity is Severity.MINOR][:4]
    text = reasons[0]
    if causes and level is not Readiness.READY:
        text += ": " + "; ".join(causes)
    return text


def decision(level: Readiness, work: AssessEffort, found: list[Conclusion]) -> str:
    """The seeds' "choose ROCm if / choose CUDA if" answer for this project, in a few lines."""
    days = f"{work.low_days:g}-{work.high_days:g} engineer-days"
    stay = [c for c in found if c.leans == "cuda" and c.severity is Severity.BLOCKER]
    if level is Readiness.BLOCKED and stay:
        names = "; ".join(c.title for c in stay[:3])
        text = (
            f"Choose CUDA for now: {names}. Moving to ROCm means replacing that first, plus "
            f"{days} for the listed changes."
        )
    elif level is Readiness.BLOCKED:
        text = (
            f"Not runnable on ROCm yet, but nothing forces CUDA: fix the blockers first; "
            f"{days} for the listed changes."
        )
    elif level is Readiness.MAJOR_WORK:
        text = f"Portable with real work: {days} before it runs on ROCm."
    elif level is Readiness.MINOR_WORK:
        text = f"Close to ready: {days} of small fixes; it runs on ROCm meanwhile."
    else:
        text = "Ready for ROCm: nothing in the code stands in the way."
    figures = [
        c
        for c in found
        if c.id.startswith(("price-", "memory-", "bench-ratio")) and c.leans != "neutral"
    ]
    for c in figures[:3]:
        side = "ROCm" if c.leans == "rocm" else "CUDA"
        text += f" {side} wins on {_topic(c.id)}: {c.title}."
    if any(c.id == "numerics-unchecked" for c in found):
        text += " Validate numerics before moving traffic."
    return text


def _topic(cid: str) -> str:
    if cid.startswith("price-"):
        return "cost"
    if cid.startswith("memory-"):
        return "memory"
    return "speed"
