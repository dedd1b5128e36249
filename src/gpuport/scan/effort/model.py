"""The effort model: components, each with a regime and a range from that regime.

Public port histories (docs/effort.md) show three regimes whose cost barely follows the size
of the CUDA code: a build or thin shim (days), hipify plus real fixes (weeks: each kind of
construct in each file is a job), and a kernel family built on CUTLASS/CuTe, tensor-core PTX,
TMA or NVSHMEM (months to re-implement, weeks to integrate when an AMD library covers it).
So the estimate is a sum over components:

* **bring-up and validation** (:data:`BRING_UP`): building on ROCm, running the tests,
  fixing what they show; once per project that has GPU code or findings.
* **native code**, per component: regime *build* when every construct is mapped by hipify or
  a shim, *hipify* when some need a real fix; :data:`PER_FIX` per distinct construct and
  file, :data:`PER_MAPPED` per mapped library; beyond :data:`SHARED_AFTER` construct-files
  each costs half (one warp-size-agnostic helper serves many files).
* **kernel families** (:mod:`gpuport.knowledge.kernel_families`): *integration* when an AMD
  library covers the family, else *re-implement*; *drop* for an NVIDIA-only component
  beside a working ROCm route (:data:`DROP`).
* **Python layer**, **build**, **containers**: the listed hours of their rules (one job per
  package, library or file), as days x0.7..x1.6.

The constants are judgments from the dev part of the ports in
``benchmarks/effort_ports.toml`` and the regime bands the public histories show; the
held-out part checks them (docs/effort.md).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpuport.models import Severity
from gpuport.scan.effort.constructs import Constructs, FamilyWork, collect, describe_fixes
from gpuport.scan.effort.items import HasEffort, days_range, hours_of, listed_items
from gpuport.scan.finding import Finding
from gpuport.scan.model import Effort, EffortComponent, EffortItem

if TYPE_CHECKING:
    from gpuport.knowledge.kernel_families import KernelFamilyInfo

#: building on ROCm, a test run and what it shows: the whisper.cpp and fused-ssim ports
#: (a shim and flags) took half a day to a day and a half
BRING_UP = (0.5, 2.0)
#: one kind of construct in one file: find, change, test (causal-conv1d: 2 warp-size files,
#: 5-30 engineer-days with CUB and shared-memory settings)
PER_FIX = (0.5, 3.0)
#: a library hipify maps (cuBLAS -> hipBLAS): check the build and the call sites
PER_MAPPED = (0.05, 0.25)
#: construct-files beyond this many cost half each: fixes share helpers
SHARED_AFTER = 20
#: re-implementing a kernel family: per kernel file, up to the family's whole range
PER_KERNEL_FILE = (3.0, 15.0)
#: leave an NVIDIA-only component out of the ROCm build
DROP = (0.5, 2.0)
#: calendar time against engineer time (reviews, CI, hardware access, upstreaming)
CALENDAR = (2, 10)


@dataclass(frozen=True)
class EffortContext:
    """What the model knows about the project beyond its findings."""

    component_of: Callable[[str], str] | None = None
    #: (path, evidence) of NVIDIA-only components beside a working ROCm route
    replace_or_drop: Sequence[tuple[str, str]] = ()
    #: CUDA sources (.cu/.cuh) the ROCm build compiles: the project has GPU code to bring up
    device_files: int = 0
    knowledge_dir: Path | None = None


def estimate(
    findings: Sequence[Finding],
    rules: Mapping[str, HasEffort],
    context: EffortContext | None = None,
) -> Effort:
    """The effort estimate of the judged findings, by component."""
    ctx = context or EffortContext()
    live = [f for f in findings if f.severity is not Severity.INFO]
    items = listed_items(live, rules, ctx.component_of, ctx.replace_or_drop)
    found = collect(live, ctx.component_of)
    components = [
        *_native(found),
        *_families(found, ctx),
        *_listed(live, rules, ctx),
    ]
    if components or ctx.device_files:
        components.insert(0, _bring_up(ctx.device_files))
    low = round(sum(c.low_days for c in components), 1)
    high = round(sum(c.high_days for c in components), 1)
    return Effort(
        low_days=low,
        high_days=high,
        hours=hours_of(items),
        basis=items,
        components=components,
        note=NOTE,
        calendar=calendar_note(low, high),
    )


#: what `gpuport rules` says about the effort model (its "h each" column feeds it)
SUMMARY = (
    "Effort: 'h each' is one job's typical hours, the listed changes. The engineer-day range "
    "is the effort model's (docs/effort.md): bring-up and validation "
    f"{BRING_UP[0]:g}-{BRING_UP[1]:g} days; native code {PER_FIX[0]:g}-{PER_FIX[1]:g} days per "
    "kind of construct and file that needs a real fix (warp size, inline PTX, ...), a little "
    "per library hipify maps; a kernel family on CUTLASS/CuTe, tensor-core PTX, TMA or NVSHMEM "
    "at its integration range when an AMD library covers it (composable_kernel, aiter, "
    "hipBLASLt, rocSHMEM, MIOpen ...: `kernel_families.toml`), else its re-implementation "
    "range; the Python layer, build and containers from these hours. Calendar time is "
    f"typically {CALENDAR[0]}-{CALENDAR[1]}x engineer time."
)

NOTE = (
    "engineer-days by component (docs/effort.md): bring-up and validation once; native code "
    f"at {PER_FIX[0]:g}-{PER_FIX[1]:g} days per kind of construct and file that needs a real "
    f"fix (hipify regime) and {PER_MAPPED[0]:g}-{PER_MAPPED[1]:g} per library hipify maps; "
    "a kernel family at its integration range when an AMD library covers it, else its "
    "re-implementation range; the Python layer, build and containers from their listed hours "
    "(6 focused hours a day, x0.7..x1.6); guarded and info findings cost nothing"
)


def calendar_note(low: float, high: float) -> str:
    """What ``low``-``high`` engineer-days usually take on the calendar."""
    if not high:
        return ""
    a, b = CALENDAR
    return (
        f"calendar time is typically {a}-{b}x engineer time (reviews, CI, hardware access, "
        f"upstreaming): about {_weeks(low * a)} to {_weeks(high * b)}"
    )


def _weeks(days: float) -> str:
    if days < 5:
        return f"{days:g} working days"
    weeks = round(days / 5)
    if weeks < 52:
        return f"{weeks} week{'s' if weeks != 1 else ''}"
    return f"{days / 5 / 52:.1f} years"


def _bring_up(device_files: int) -> EffortComponent:
    what = (
        f"build on ROCm, run the tests, fix what they show ({device_files} CUDA source "
        f"file{'s' if device_files != 1 else ''})"
        if device_files
        else "install on ROCm, run the tests, fix what they show"
    )
    return EffortComponent(
        name="bring-up and validation",
        kind="bring-up",
        regime="bring-up",
        low_days=BRING_UP[0],
        high_days=BRING_UP[1],
        basis=what,
    )


def _shared(n: int) -> float:
    """Construct-files as full jobs: beyond :data:`SHARED_AFTER` each counts half."""
    return n if n <= SHARED_AFTER else SHARED_AFTER + (n - SHARED_AFTER) / 2


def _native(found: Constructs) -> list[EffortComponent]:
    out = []
    for comp, work in sorted(found.native.items()):
        n = work.fix_files
        jobs = _shared(n)
        low = jobs * PER_FIX[0] + len(work.mapped) * PER_MAPPED[0]
        high = jobs * PER_FIX[1] + len(work.mapped) * PER_MAPPED[1]
        regime = "hipify" if n else "build"
        names = ", ".join(sorted(work.mapped)[:4]) + (", ..." if len(work.mapped) > 4 else "")
        mapped = f"{len(work.mapped)} mapped by hipify or a shim ({names})"
        if n:
            basis = (
                f"{n} construct-file{'s' if n != 1 else ''} to fix x {PER_FIX[0]:g}-"
                f"{PER_FIX[1]:g} days"
                + (f" (beyond {SHARED_AFTER} at half)" if n > SHARED_AFTER else "")
                + (f"; {mapped}" if work.mapped else "")
            )
        else:
            basis = mapped
        out.append(
            EffortComponent(
                name=f"native code{f' ({comp}/)' if comp else ''}",
                kind="native",
                path=comp,
                regime=regime,
                low_days=round(low, 2),
                high_days=round(high, 2),
                basis=basis,
                constructs=describe_fixes(work) + ([mapped] if work.mapped and n else []),
                findings=work.findings,
            )
        )
    return out


def _families(found: Constructs, ctx: EffortContext) -> list[EffortComponent]:
    """One component per kind of family: two folders of attention kernels integrate the same
    AMD library (the catch-all kind stays one per folder: its folders are unrelated)."""
    from gpuport.knowledge.kernel_families import OTHER, classify, load_families

    families = load_families(ctx.knowledge_dir)
    drop = [p for p, _ in ctx.replace_or_drop]
    groups: dict[tuple[str, str], list[FamilyWork]] = defaultdict(list)
    kinds: dict[str, KernelFamilyInfo] = {}
    for folder, work in sorted(found.families.items()):
        kind = classify(_below_parent(folder, work.files), work.libraries, families)
        dropped = next((p for p in drop if folder == p or folder.startswith(p + "/")), "")
        key = folder if kind.name == OTHER or dropped else ""
        groups[(kind.name, key)].append(work)
        kinds[kind.name] = kind
    return [_family(works, kinds[name], drop) for (name, _), works in sorted(groups.items())]


def _below_parent(folder: str, files: set[str]) -> list[str]:
    """The family's paths from its own folder down (``fused_attn/x.cu``): the words of the
    folders above it (``transformer_engine``) say nothing about the family."""
    cut = len(folder.rsplit("/", 1)[0]) + 1 if "/" in folder else 0
    return sorted(p[cut:] for p in files)


def _reimplement(kind: KernelFamilyInfo, files: int) -> tuple[float, float]:
    """A whole family's re-implementation range, or :data:`PER_KERNEL_FILE` per file for a
    small one (a TMA transpose in three files is not a new attention library)."""
    lo, hi = kind.reimplement_days
    return min(lo, files * PER_KERNEL_FILE[0]), min(hi, files * PER_KERNEL_FILE[1])


def _family(works: list[FamilyWork], kind: KernelFamilyInfo, drop: list[str]) -> EffortComponent:
    folders = [w.folder or "." for w in works]
    n = sum(len(w.files) for w in works)
    constructs = sorted({c for w in works for c in w.constructs})
    built_on = ", ".join(constructs)
    where = f"{n} file{'s' if n != 1 else ''} in {', '.join(f + '/' for f in folders)}"
    first = works[0].folder
    dropped = next((p for p in drop if first == p or first.startswith(p + "/")), None)
    if dropped is not None:
        regime, (low, high) = "drop", DROP
        basis = f"NVIDIA-only component {dropped}/ beside a working ROCm route: leave it out"
    elif kind.has_equivalent:
        regime, (low, high) = "integration", kind.integration_days
        basis = f"{kind.name}: an AMD library covers it; integrate it ({where}; {built_on})"
    else:
        regime, (low, high) = "re-implement", _reimplement(kind, n)
        basis = f"{kind.name}: no AMD library covers it; re-implement ({where}; {built_on})"
    shown = ", ".join(f + "/" for f in folders[:3]) + (" ..." if len(folders) > 3 else "")
    return EffortComponent(
        name=f"kernel family: {kind.name} ({shown})",
        kind="kernel family",
        path=first,
        regime=regime,
        low_days=float(low),
        high_days=float(high),
        basis=basis,
        constructs=constructs,
        family=kind.name,
        amd_equivalent="; ".join(kind.equivalents) or None,
        findings=sum(w.findings for w in works),
    )


_AREAS = (
    ("python", "Python layer and dependencies", ("GP1", "GP2")),
    ("build", "build", ("GP4",)),
    ("containers", "containers", ("GP5",)),
)


def _listed(
    findings: Sequence[Finding], rules: Mapping[str, HasEffort], ctx: EffortContext
) -> list[EffortComponent]:
    """The Python layer, the build and the containers from their listed hours."""
    by_area: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        if f.rule_id == "GP212":
            continue  # Triton inline PTX is native work (constructs)
        for area, _, prefixes in _AREAS:
            if f.rule_id.startswith(prefixes):
                by_area[area].append(f)
    out = []
    for area, name, _ in _AREAS:
        if not by_area[area]:
            continue
        items = listed_items(by_area[area], rules, ctx.component_of)
        hours = hours_of(items)
        low, high = days_range(hours)
        out.append(
            EffortComponent(
                name=name,
                kind=area,
                regime="changes",
                low_days=low,
                high_days=high,
                basis=f"{hours:g} h of listed changes (" + _top(items) + ")",
                findings=len(by_area[area]),
            )
        )
    return out


def _top(items: Sequence[EffortItem], limit: int = 3) -> str:
    shown = [f"{i.rule_id} x{i.count}" for i in items[:limit]]
    if len(items) > limit:
        shown.append(f"{len(items) - limit} more rules")
    return ", ".join(shown)
