"""The decision engine: readiness, effort in engineer-days, conclusions and the one-line answer.

Readiness starts from the scan's verdict (blockers → blocked, majors → major work, ...) and is
only ever *lifted* by the other evidence, never lowered: CUDA APIs hipify cannot translate, a
translation hipcc refuses, or a validate report that says *wrong* each make it "major work" at
least, and a source file the scan could not read makes it "minor work" at least. Performance,
price, numerics that merely differ and this machine's health do not change readiness: they
change the decision, and the verdict's reason names only code conclusions as its causes.

Effort is the scan's effort model (:mod:`gpuport.scan.effort`: components, each with its regime
and range) plus :data:`UNSUPPORTED_API_HOURS` per use of a CUDA API with no HIP equivalent as one
more component. hipify's hazard pass runs the scanner's own GP3xx rules, so hazards are counted
once, from the scan. The listed hours by area are the detail; each lists its basis.
"""

from __future__ import annotations

from collections import defaultdict

from gpuport.assess import criteria, criteria_figures
from gpuport.assess.criteria import Criterion
from gpuport.assess.facts import WAVE_RULES, Facts, plural
from gpuport.assess.model import AssessEffort, Conclusion, EffortClass, Readiness
from gpuport.models import Severity
from gpuport.scan.effort.items import days_range
from gpuport.scan.effort.model import calendar_note
from gpuport.scan.model import EffortComponent

UNSUPPORTED_API_HOURS = 3.0  # rewrite one call of an API HIP lacks, and test it

#: Evaluated in this order; the report lists conclusions worst first, then in this order.
CRITERIA: tuple[Criterion, ...] = (
    criteria.cuda_only_packages,
    criteria.native_code,
    criteria.wave32_assumptions,
    criteria.hipify_gaps,
    criteria.other_findings,
    criteria.unread_sources,
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
_OTHER = ("components", "NVIDIA-only components")


def conclusions(facts: Facts) -> list[Conclusion]:
    """Every criterion's conclusions, worst first (stable within a severity)."""
    out = [c for criterion in CRITERIA for c in criterion(facts)]
    return sorted(out, key=lambda c: -c.severity.rank)


def readiness_of_scan(scan_verdict: str) -> Readiness:
    """The scan's own verdict as a readiness."""
    return _FROM_SCAN.get(scan_verdict, Readiness.MAJOR_WORK)


def wrong_modules(facts: Facts) -> list[str]:
    """Modules a validate report judged wrong, across reports, first seen first."""
    return list(dict.fromkeys(m for r in facts.validate.reports for m in r.wrong))


def lifts(facts: Facts) -> list[str]:
    """The evidence beyond the scan that makes a port major work at least."""
    out: list[str] = []
    hip = facts.hipify
    if hip.unsupported:
        hip_name = f"HIP {hip.hip_version}" if hip.hip_version else "HIP"
        out.append(f"{plural(len(hip.unsupported), 'use')} of CUDA APIs {hip_name} lacks")
    failed = [c for c in hip.compile if c.status == "failed"]
    if failed:
        out.append(f"{plural(len(failed), 'translated file')} hipcc refuses")
    wrong = wrong_modules(facts)
    if wrong:
        more = f" and {len(wrong) - 3} more" if len(wrong) > 3 else ""
        verb = "computes" if len(wrong) == 1 else "compute"
        out.append(f"validate: {', '.join(wrong[:3])}{more} {verb} wrong numbers")
    return out


def unread_reason(facts: Facts) -> str | None:
    """``2 source files could not be read: a.py, k.cu``, or None when all were read."""
    unread = facts.scan.unread
    if not unread:
        return None
    names = [entry.split(": ", 1)[0] for entry in unread[:3]]
    more = f" and {len(unread) - 3} more" if len(unread) > 3 else ""
    return f"{plural(len(unread), 'source file')} could not be read: {', '.join(names)}{more}"


def readiness(facts: Facts) -> tuple[Readiness, list[str]]:
    """The scan's verdict lifted by hipify, validate and unread files; the reasons, strongest
    first (when a lift decides the level, all lifts make the first reason)."""
    level = readiness_of_scan(facts.scan.verdict)
    reasons = [facts.scan.verdict_reason]
    lifted = lifts(facts)
    if lifted and level.rank < Readiness.MAJOR_WORK.rank:
        level = Readiness.MAJOR_WORK
        reasons = ["; ".join(lifted), *reasons]
    else:
        reasons += lifted
    unread = unread_reason(facts)
    if unread is not None and level is Readiness.READY:
        level = Readiness.MINOR_WORK
        reasons = [unread, *reasons]
    elif unread is not None:
        reasons.append(unread)
    return level, reasons


def effort(facts: Facts) -> AssessEffort:
    """The scan's effort components plus hipify's untranslatable API uses as one more, and
    the listed hours by area (each with its basis) as the detail."""
    from gpuport.scan.rules import RULES

    grouped: dict[tuple[str, str], list[tuple[str, str, int, float, float]]] = defaultdict(list)
    for item in facts.scan_effort.basis:
        area = _WAVE_AREA if item.rule_id in WAVE_RULES else _AREAS.get(item.rule_id[:3], _OTHER)
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
    components = list(facts.scan_effort.components)
    api_hours = sum(count * UNSUPPORTED_API_HOURS for count in hip.unsupported_counts.values())
    if api_hours:
        low, high = days_range(api_hours)
        uses = sum(hip.unsupported_counts.values())
        components.append(
            EffortComponent(
                name="hipify: untranslatable CUDA APIs",
                kind="native",
                regime="hipify",
                low_days=low,
                high_days=high,
                basis=f"{uses} use(s) of CUDA APIs HIP lacks x {UNSUPPORTED_API_HOURS:g} h",
                constructs=sorted(hip.unsupported_counts)[:6],
            )
        )
    low = round(sum(c.low_days for c in components), 1)
    high = round(sum(c.high_days for c in components), 1)
    return AssessEffort(
        low_days=low,
        high_days=high,
        hours=round(sum(c.hours for c in classes), 2),
        classes=classes,
        components=components,
        calendar=calendar_note(low, high),
        note=(
            f"{facts.scan_effort.note}; plus {UNSUPPORTED_API_HOURS:g} h per use of a CUDA API "
            "hipify cannot translate; hipify's hazards are the scan's GP3xx findings, counted "
            "once; engineer-days"
        ),
    )


#: Conclusions about the code (scan and hipify): the only causes a verdict reason names.
#: Figures, numerics and this machine's health change the decision, not readiness.
CODE_CONCLUSIONS = (
    "no-rocm-package-",
    "native-code",
    "wave32-",
    "hipify-",
    "area-",
    "unread-sources",
)


def verdict_reason(
    level: Readiness, reasons: list[str], found: list[Conclusion], *, lifted: bool = False
) -> str:
    """The strongest reason, then what causes it: titles of the worst code conclusions.

    ``lifted``: the level comes from hipify or validate (their lifts are the first reason),
    so hipify's conclusions are not named again as causes.
    """
    code = [c for c in found if c.id.startswith(CODE_CONCLUSIONS)]
    if lifted:
        code = [c for c in code if not c.id.startswith("hipify-")]
    text = reasons[0]
    if level is Readiness.READY:
        return text
    if level is Readiness.MINOR_WORK:
        causes = [c.title for c in code if c.severity is Severity.MINOR]
    else:
        top = [c for c in code if c.severity.rank >= Severity.MAJOR.rank]
        worst_rank = max((c.severity.rank for c in top), default=-1)
        causes = [c.title for c in top if c.severity.rank == worst_rank]
    causes = [t for t in causes if t.lower() not in text.lower()][:4]
    if causes:  # what causes the level; beside a lift, what else weighs
        text += ("; also: " if lifted else ": ") + "; ".join(causes)
    return text


def decision(
    level: Readiness, work: AssessEffort, found: list[Conclusion], facts: Facts | None = None
) -> str:
    """The seeds' "choose ROCm if / choose CUDA if" answer for this project, in a few lines.

    Major work has a branch per cause: wrong numbers (do not move traffic), a translation
    that does not compile, else the listed work. ``facts`` names the modules and files; a
    decision without them still reads right.
    """
    days = work.days()
    wrong = _wrong_numbers(found, facts)
    stay = [c for c in found if c.leans == "cuda" and c.severity is Severity.BLOCKER]
    if level is Readiness.BLOCKED and stay:
        names = "; ".join(c.title for c in stay[:3])
        plus = f", plus {days} for the listed changes" if work.hours else ""
        text = f"Choose CUDA for now: {names}. Moving to ROCm means replacing that first{plus}."
    elif level is Readiness.BLOCKED:
        text = "Not runnable on ROCm yet, but nothing forces CUDA: fix the blockers first"
        text += f"; {days} for the listed changes." if work.hours else "."
    elif level is Readiness.MAJOR_WORK:
        text = _major_work(work, found, facts)
    elif level is Readiness.MINOR_WORK:
        if work.hours:
            text = f"Close to ready: {days} of small fixes; it runs on ROCm meanwhile."
        else:
            text = "Close to ready: the scan lists no code changes."
        if any(c.id == "unread-sources" for c in found):
            text += (
                " Some source files could not be read: assess again once they can be, "
                "before calling it ready."
            )
    else:
        text = "Ready for ROCm: nothing in the code stands in the way."
    if wrong and level is not Readiness.MAJOR_WORK:  # major work already leads with it
        text = f"{wrong} {text}"
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


def _major_work(work: AssessEffort, found: list[Conclusion], facts: Facts | None) -> str:
    """Major work: what holds the port, strongest first, then the listed work."""
    parts: list[str] = []
    wrong = _wrong_numbers(found, facts)
    if wrong:
        parts.append(wrong)
    failed = [c for c in facts.hipify.compile if c.status == "failed"] if facts is not None else []
    if failed or any(c.id == "hipify-compile" and c.severity is Severity.MAJOR for c in found):
        first = f" (first: {failed[0].path})" if failed else ""
        n = plural(len(failed), "translated file") if failed else "a translated file"
        parts.append(
            f"The translation does not compile: hipcc refuses {n}{first}; fix the errors and "
            "check again with --hipify-check."
        )
    if not parts:
        return f"Portable with real work: {work.days()} before it runs on ROCm."
    if work.hours:
        parts.append(f"Then {work.days()} for the listed changes.")
    else:
        parts.append("The scan lists no code changes beyond that.")
    return " ".join(parts)


def _wrong_numbers(found: list[Conclusion], facts: Facts | None) -> str:
    """ "Do not move traffic: module X computes wrong numbers ..." when validate said *wrong*.

    Whatever the readiness level: a blocked project with wrong numbers must still say so
    in its decision, or a reader of the decision alone would not know.
    """
    wrong = wrong_modules(facts) if facts is not None else []
    if not wrong and not any(c.id.startswith("numerics-") and c.leans == "cuda" for c in found):
        return ""
    if len(wrong) > 1:
        more = f" and {len(wrong) - 3} more" if len(wrong) > 3 else ""
        who, verb, it = f"modules {', '.join(wrong[:3])}{more}", "compute", "them"
    else:
        who, verb, it = (f"module {wrong[0]}" if wrong else "a module"), "computes", "it"
    return (
        f"Do not move traffic: {who} {verb} wrong numbers on ROCm; fix or work around "
        f"{it}, then re-run `gpuport validate check`."
    )


def _topic(cid: str) -> str:
    if cid.startswith("price-"):
        return "cost"
    if cid.startswith("memory-"):
        return "memory"
    return "speed"
