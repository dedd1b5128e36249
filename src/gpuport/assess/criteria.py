"""The seeds' decision criteria, one small function each, evaluated on a project's evidence.

The articles end in rules of thumb: "choose CUDA if you need TensorRT-LLM (no ROCm
equivalent)", "custom CUDA kernels are the biggest pain point", "models that push past 80 GB
fit on one MI300X and avoid tensor parallelism", "the cost difference is real", "run your
experiments on ROCm to validate". Each criterion below states one of them as a test over the
:class:`~gpuport.assess.facts.Facts` and, when it applies, returns a :class:`Conclusion` that
names the cause and links to the findings and figures it rests on. A criterion with nothing to
say returns an empty list.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable

from gpuport import textre
from gpuport.assess.facts import (
    CUDA_ONLY_PACKAGE_RULES,
    INLINE_PTX_RULES,
    WAVE_RULES,
    Facts,
    anchor,
    finding_evidence,
    places,
    plural,
    worst,
)
from gpuport.assess.model import Conclusion, Evidence
from gpuport.models import Severity
from gpuport.scan.finding import Finding

Criterion = Callable[[Facts], list[Conclusion]]
PRICE_NOISE = 0.05  # $/Mtok within 5 % is not a reason to move
RATIO_NOISE = 0.02  # bench geomean within 2 % is "the same"
_GP201_PACKAGE = textre.compile(r"comes from ([\w.\-\[\]]+)")


def _package_of(f: Finding) -> str:
    if f.rule_id == "GP201":
        m = _GP201_PACKAGE.search(f.message)
        if m:
            return m.group(1)
    return f.message.split(":", 1)[0].strip().strip("`")


def cuda_only_packages(facts: Facts) -> list[Conclusion]:
    """Seed: "choose CUDA if you need TensorRT-LLM (no ROCm equivalent)": replace it or stay."""
    from gpuport.knowledge import load_packages

    groups: dict[str, list[tuple[str, Finding]]] = defaultdict(list)
    for a, f in facts.findings(rules=CUDA_ONLY_PACKAGE_RULES):
        groups[_package_of(f)].append((a, f))
    db = load_packages()
    out: list[Conclusion] = []
    for name, hits in groups.items():
        info = db.by_dist(name)
        sev = worst(hits)
        summary = hits[0][1].message.split(": ", 1)[-1] if hits[0][1].rule_id == "GP101" else ""
        summary = summary or (info.summary if info else hits[0][1].message)
        how = info.route.how if info else hits[0][1].fix
        replacement = info.route.replacement if info and info.route.kind == "replacement" else None
        statement = f"The project depends on {name} ({places(hits)}): {summary}"
        if info is not None and info.category == "inference" and sev is Severity.BLOCKER:
            statement += (
                " Replacing a serving engine is a project, not a configuration change: the "
                "seeds budget months for stacks built around TensorRT; the effort estimate "
                "counts only the listed edits."
            )
        if sev is Severity.BLOCKER:
            to = f"with {replacement} " if replacement else ""
            recommendation = f"Replace it {to}or stay on CUDA. {how}"
        else:
            recommendation = how
        out.append(
            Conclusion(
                id=f"no-rocm-package-{anchor(name)}",
                title=f"{name} has no ROCm build",
                statement=statement,
                recommendation=recommendation,
                severity=sev,
                leans="cuda" if sev is Severity.BLOCKER else "neutral",
                evidence=[finding_evidence(a, f) for a, f in hits],
            )
        )
    return out


def _off_route(facts: Facts) -> list[Finding]:
    """Core native findings lowered to info because the ROCm route is not shown to build their
    code (issue 24): not work hipify leaves, but not "nothing found" either."""
    from gpuport.scan.project.on_route import OFF_ROUTE

    return [
        f
        for f in facts.scan.findings
        if f.scope == "core"
        and f.rule_id.startswith("GP3")
        and f.rule_id not in WAVE_RULES
        and f.severity is Severity.INFO
        and OFF_ROUTE in f.message
    ]


def native_code(facts: Facts) -> list[Conclusion]:
    """Seed: "custom CUDA kernels are the biggest pain point": what hipify does, what is left."""
    from gpuport.scan.rules import RULES

    hits = [(a, f) for a, f in facts.findings(prefix="GP3") if f.rule_id not in WAVE_RULES]
    hits += list(facts.findings(rules=frozenset({"GP212"})))
    hip = facts.hipify
    if not hits and not hip.ran:
        return []
    ptx = [(a, f) for a, f in hits if f.rule_id in INLINE_PTX_RULES]
    evidence = [finding_evidence(a, f) for a, f in hits]
    parts: list[str] = []
    if hip.ran:
        parts.append(
            f"hipify translates {plural(hip.files, 'CUDA/C++ file')} "
            f"({plural(hip.replacements, 'API use')} rewritten automatically, "
            f"{plural(len(hip.unsupported), 'use')} of APIs with no HIP equivalent)."
        )
        evidence.append(
            Evidence(kind="hipify", ref="hipify", label="hipify dry run", anchor="hipify")
        )
    off = _off_route(facts)
    if not hits:
        found = (
            " The scan found nothing that hipify cannot fix in the code the ROCm route is shown "
            f"to build; {plural(len(off), 'site')} in code it is not shown to build "
            f"{'was' if len(off) == 1 else 'were'} not counted (info in the scan, such as "
            f"{off[0].location.path}:{off[0].location.line})."
            if off
            else " The scan found nothing in it that hipify cannot fix."
        )
        return [
            Conclusion(
                id="native-code",
                title="Custom CUDA code translates with hipify",
                statement=" ".join(parts) + found,
                recommendation="Translate with `gpuport hipify PATH -o OUT --check` and build.",
                severity=Severity.INFO,
                leans="neutral",
                evidence=evidence,
            )
        ]
    hours = sum(RULES[f.rule_id].effort_hours for _, f in hits)
    kinds = Counter(f.title for _, f in hits)
    listed = "; ".join(f"{title} x{n}" for title, n in kinds.most_common())
    parts.append(
        f"{plural(len(hits), 'site')} {'needs' if len(hits) == 1 else 'need'} hand work that "
        f"hipify cannot do ({listed}), "
        f"about {hours:g} h by the rules' estimates."
    )
    if ptx:
        parts.append(
            f"Inline PTX at {places(ptx)} is NVIDIA assembly: it does not compile for AMD GPUs."
        )
    recommendation = (
        "Rewrite these by hand first (each finding carries its fix"
        + (
            "; replace inline PTX with HIP intrinsics or guard it with __HIP_PLATFORM_AMD__"
            if ptx
            else ""
        )
        + "), then prove the translation compiles with `gpuport hipify PATH -o OUT --check`."
    )
    title = (
        f"Custom CUDA code with {plural(len(ptx), 'inline PTX site')}"
        if ptx
        else f"Custom CUDA code: {plural(len(hits), 'site')} to port by hand"
    )
    return [
        Conclusion(
            id="native-code",
            title=title,
            statement=" ".join(parts),
            recommendation=recommendation,
            severity=worst(hits),
            leans="neutral",
            evidence=evidence,
        )
    ]


def wave32_assumptions(facts: Facts) -> list[Conclusion]:
    """Kernels written for 32-lane warps: N hazards to fix first on a 64-lane target."""
    hits = list(facts.findings(rules=WAVE_RULES))
    if not hits:
        return []
    t = facts.scan.target
    kinds = Counter(f.title for _, f in hits)
    listed = "; ".join(f"{title} x{n}" for title, n in kinds.most_common())
    return [
        Conclusion(
            id="wave32-assumptions",
            title=f"{plural(len(hits), 'wave-32 assumption')} to fix first",
            statement=(
                f"{plural(len(hits), 'place')} in the kernels assume a 32-lane warp ({listed}). "
                f"On {t.name} ({t.generation}) a wavefront has {t.wave_size} lanes: such code "
                "fails to compile or silently combines the wrong lanes."
            ),
            recommendation=(
                "Fix these before anything else: use warpSize, 64-bit lane masks "
                "(__ballot returns 64 bits; __popcll), and reductions that start at "
                "warpSize / 2."
            ),
            severity=worst(hits),
            leans="neutral",
            evidence=[finding_evidence(a, f) for a, f in hits],
        )
    ]


def hipify_gaps(facts: Facts) -> list[Conclusion]:
    """APIs hipify leaves untranslated, and translations hipcc refuses."""
    hip = facts.hipify
    out: list[Conclusion] = []
    if hip.unsupported:
        names = ", ".join(f"{n} x{c}" for n, c in hip.unsupported_counts.items())
        out.append(
            Conclusion(
                id="hipify-unsupported",
                title=f"{plural(len(hip.unsupported), 'use')} of CUDA APIs with no HIP equivalent",
                statement=f"HIP {hip.hip_version} has no equivalent for: {names}.",
                recommendation="Rewrite these calls with HIP alternatives (see the reasons).",
                severity=Severity.MAJOR,
                leans="neutral",
                evidence=[
                    Evidence(
                        kind="hipify",
                        ref=u.name,
                        label=f"{u.name} {u.path}:{u.line}",
                        anchor="hipify-unsupported",
                    )
                    for u in hip.unsupported
                ],
            )
        )
    failed = [c for c in hip.compile if c.status == "failed"]
    unsure = [c for c in hip.compile if c.status == "inconclusive"]
    if failed:
        first = failed[0]
        out.append(
            Conclusion(
                id="hipify-compile",
                title=(
                    f"{plural(len(failed), 'translated file')} "
                    f"{'does' if len(failed) == 1 else 'do'} not compile for AMD"
                ),
                statement=f"hipcc refuses {first.path}: {first.error}",
                recommendation="Fix the errors listed under hipify, then re-run the check.",
                severity=Severity.MAJOR,
                leans="neutral",
                evidence=[
                    Evidence(kind="hipify", ref=c.path, label=c.path, anchor="hipify-compile")
                    for c in failed
                ],
            )
        )
    elif unsure:
        out.append(
            Conclusion(
                id="hipify-compile",
                title="Compile check inconclusive on this machine",
                statement="; ".join(f"{c.path}: {c.error}" for c in unsure),
                recommendation="Run the check where the project's build dependencies exist.",
                severity=Severity.INFO,
                leans="neutral",
                evidence=[
                    Evidence(
                        kind="hipify", ref="compile", label="compile check", anchor="hipify-compile"
                    )
                ],
            )
        )
    return out


_AREA_TITLES = {
    "GP1": "Dependencies",
    "GP2": "Python source",
    "GP4": "Build files",
    "GP5": "Containers",
    "GP6": "Environment",
}


def other_findings(facts: Facts) -> list[Conclusion]:
    """Everything else the scan found, one conclusion per area, so no cause goes unnamed."""
    covered = CUDA_ONLY_PACKAGE_RULES | INLINE_PTX_RULES
    by_area: dict[str, list[tuple[str, Finding]]] = defaultdict(list)
    for a, f in facts.findings():
        if f.rule_id in covered or f.rule_id.startswith("GP3"):
            continue
        by_area[f.rule_id[:3]].append((a, f))
    out: list[Conclusion] = []
    for prefix, hits in sorted(by_area.items()):
        area = _AREA_TITLES.get(prefix, prefix)
        kinds = Counter(f.title for _, f in hits)
        listed = "; ".join(f"{title} x{n}" for title, n in kinds.most_common())
        sev = worst(hits)
        out.append(
            Conclusion(
                id=f"area-{anchor(area)}",
                title=_area_title(area, hits),
                statement=f"{listed} ({places(hits)}).",
                recommendation=(
                    f"Apply each finding's fix; the first: {hits[0][1].fix}"
                    if sev.rank >= Severity.MAJOR.rank
                    else "The code runs on ROCm as it is; these change performance or tooling. "
                    f"First: {hits[0][1].fix}"
                ),
                severity=sev,
                leans="neutral",
                evidence=[finding_evidence(a, f) for a, f in hits],
            )
        )
    return out


def _area_title(area: str, hits: list[tuple[str, Finding]]) -> str:
    """``Dependencies: 7 items to change (2 blocker, 5 major)``; minor-only: "to tidy"."""
    counts = Counter(f.severity for _, f in hits)
    if set(counts) == {Severity.MINOR}:
        return f"{area}: {plural(len(hits), 'minor item')} to tidy"
    split = ", ".join(f"{counts[s]} {s.value}" for s in Severity if counts[s])
    return f"{area}: {plural(len(hits), 'item')} to change ({split})"


def portable_stack(facts: Facts) -> list[Conclusion]:
    """Seed: "choose ROCm if your stack is PyTorch plus vLLM/SGLang with no custom kernels"."""
    native_files = facts.scan.files_by_kind.get("cuda/c++", 0)
    if facts.scan.files_scanned == 0 or facts.scan.unread:
        return []  # nothing read, or not everything: no grounds for "no custom kernels"
    blocking = [
        f
        for _, f in facts.findings()
        if f.rule_id.startswith(("GP1", "GP3")) or f.rule_id in CUDA_ONLY_PACKAGE_RULES
    ]
    if native_files or any(f.severity.rank >= Severity.MAJOR.rank for f in blocking):
        return []
    return [
        Conclusion(
            id="portable-stack",
            title="Framework-level stack: no custom kernels, no CUDA-only packages",
            statement=(
                f"{plural(facts.scan.files_scanned, 'file')} scanned: no CUDA/C++ sources and no "
                "dependency without a ROCm build. This is the seeds' 'choose ROCm if' case: "
                "PyTorch, vLLM and SGLang have official ROCm builds."
            ),
            recommendation="Install the ROCm builds of the dependencies and validate numerics.",
            severity=Severity.INFO,
            leans="rocm",
            evidence=[
                Evidence(kind="finding", ref="scan", label="scan summary", anchor="findings")
            ],
        )
    ]


def unread_sources(facts: Facts) -> list[Conclusion]:
    """Source files the scan could not read: unknown ground, so the port is not ``ready``."""
    unread = facts.scan.unread
    if not unread:
        return []
    n = len(unread)
    shown = "; ".join(unread[:3]) + (f"; and {n - 3} more" if n > 3 else "")
    statement = (
        f"The scan could not read {plural(n, 'source file')} ({shown}): "
        "nothing in them is part of the findings or the effort"
    )
    if facts.scan.from_hipify:
        statement += (
            f", except {plural(facts.scan.from_hipify, 'hazard')} hipify's pass found in "
            "CUDA/C++ ones (counted)"
        )
    return [
        Conclusion(
            id="unread-sources",
            title=f"{plural(n, 'source file')} could not be read",
            statement=statement + ".",
            recommendation=(
                "Re-encode them as UTF-8 (or split files over the 5 MB limit) and assess again; "
                "until then the verdict cannot be ready."
            ),
            severity=Severity.MINOR,
            leans="neutral",
            evidence=[
                Evidence(
                    kind="finding",
                    ref="skipped",
                    label=entry.split(": ", 1)[0],
                    anchor="skipped-files",
                )
                for entry in unread
            ],
        )
    ]
