"""The listed changes: each rule's typical hours, with one job counted once.

These hours are the basis table of every report and the verdict's gap (a route's blockers
that reach a working week). The effort *range* comes from the component model
(:mod:`gpuport.scan.effort.model`); the Python layer, the build and the containers are costed
from these hours there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from gpuport import textre
from gpuport.models import Severity
from gpuport.scan.finding import Finding
from gpuport.scan.model import EffortItem

HOURS_PER_DAY = 6.0
#: hours become a range of days: such estimates are rarely better than a factor of two
LOW, HIGH = 0.7, 1.6


class HasEffort(Protocol):
    @property
    def title(self) -> str: ...

    @property
    def effort_hours(self) -> float: ...


_FAMILY = textre.compile(r"this file uses (CUTLASS|CuTe|the cuDNN frontend|NVSHMEM|TensorRT)")
_PACKAGE = textre.compile(r"comes from ([\w.-]+)")
_LIBRARY = textre.compile(r"this file uses ([\w+ .-]+?) \(|^`([^`]+)` ")
#: Import rules whose fix is per package (replace it, or install its ROCm build).
ONCE_PER_PACKAGE = frozenset({"GP201", "GP202"})
#: Rules whose fix is per library or per spelling in a component (hipify or a find-replace;
#: an FP8 dtype becomes one target-chosen constant, `torch.float8_e4m3fnuz` on gfx942; a
#: CUDA-graph API is validated against eager mode once per component).
ONCE_PER_LIBRARY = frozenset({"GP316", "GP319", "GP208", "GP215"})
#: Rule families whose findings are one job per rule and file: a build file's nvcc flags,
#: a Dockerfile's CUDA base image (the same fix wherever the file repeats it).
ONCE_PER_FILE = ("GP4", "GP5")
DROP_HOURS = 8.0


def _key(f: Finding, component_of: Callable[[str], str] | None) -> tuple[str, ...] | None:
    """The job a finding belongs to when several findings are one job, else None."""
    comp = component_of(f.location.path) if component_of else ""
    if f.rule_id.startswith("GP1"):  # the same package declared in several files: fix once
        return (f.rule_id, f.message)
    if f.rule_id.startswith(ONCE_PER_FILE):
        return (f.rule_id, f.location.path)
    if f.rule_id in ONCE_PER_PACKAGE:  # one job per package, however many imports
        pkg = _PACKAGE.search(f.message)
        return (f.rule_id, pkg.group(1) if pkg else f.message)
    if f.rule_id in ONCE_PER_LIBRARY:  # switching a library (or a spelling) is one job
        lib = _LIBRARY.search(f.message)  # per component, not one per file
        return (f.rule_id, comp, (lib.group(1) or lib.group(2)) if lib else f.message)
    if f.rule_id == "GP212" and "(a PTX math approximation)" in f.message:
        return (f.rule_id, comp)  # Triton's own math replaces them: one job per component
    if f.rule_id == "GP212" and "(PTX synchronization)" in f.message:
        return (f.rule_id, "sync", f.location.path)  # moved to Triton's primitives per file
    fam = _FAMILY.search(f.message) if f.rule_id == "GP315" else None
    if fam is not None:  # a library family is ported once per component, not per file
        family = "CUTLASS" if fam.group(1) in ("CUTLASS", "CuTe") else fam.group(1)
        return (f.rule_id, comp, family)
    return None


def listed_items(
    findings: Sequence[Finding],
    rules: Mapping[str, HasEffort],
    component_of: Callable[[str], str] | None = None,
    replace_or_drop: Sequence[tuple[str, str]] = (),
) -> list[EffortItem]:
    """One item per rule (how many jobs, hours each) plus one per NVIDIA-only component to
    replace or drop; findings at info cost nothing. Largest first."""
    counted: Counter[str] = Counter()
    seen: set[tuple[str, ...]] = set()
    for f in findings:
        if f.severity is Severity.INFO:
            continue
        key = _key(f, component_of)
        if key is not None:
            if key in seen:
                continue
            seen.add(key)
        counted[f.rule_id] += 1
    basis = [
        EffortItem(
            rule_id=rule_id,
            title=rules[rule_id].title,
            count=count,
            hours_each=rules[rule_id].effort_hours,
            hours=round(rules[rule_id].effort_hours * count, 2),
        )
        for rule_id, count in sorted(counted.items())
    ]
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
    return basis


def hours_of(items: Sequence[EffortItem]) -> float:
    return round(sum(item.hours for item in items), 2)


def days_range(hours: float) -> tuple[float, float]:
    """Listed hours as engineer-days: 6 focused hours a day, x0.7..x1.6."""
    days = hours / HOURS_PER_DAY
    return round(days * LOW, 2), round(days * HIGH, 2)
