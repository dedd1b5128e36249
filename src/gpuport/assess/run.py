"""``assess``: run every step on one project and assemble the :class:`Assessment`.

The order matters where one step feeds another: the scan first (it says whether there are CUDA
sources to hipify, and a model named in the code is priced when none is declared), bench
before cost (a measured run replaces a GPU's published efficiency), everything before the
decision engine. Each step's wall time is kept in ``timings``; progress goes to an optional
observer, never to stdout.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from gpuport.assess import assumptions, sources, sources_evidence, sources_hipify, verdict
from gpuport.assess.config import Settings, with_default_detail, with_detected
from gpuport.assess.detect import CodeFacts, detect
from gpuport.assess.facts import Facts
from gpuport.assess.model import Assessment, ScanSection, Setting
from gpuport.models import EnvFingerprint, GpuportError
from gpuport.scan.model import ScanReport

Observer = Callable[[str], None]
STEPS = ("scan", "hipify", "bench", "cost", "validate", "doctor", "verdict")


@dataclass(frozen=True)
class AssessOptions:
    """What is asked of this run rather than of the project (flags only, never settings)."""

    run_bench: str | None = None  # "quick" or "full": run the bench suite here
    require_hipcc: bool = False  # --hipify-check given on the command line
    doctor_snapshot: Path | None = None  # replay a doctor snapshot from the target machine
    project_given: bool = True  # PATH was given (else: the current folder)
    scan_jobs: int | None = None  # scan processes (None: all cores; 1 in a portfolio worker)


def assess(
    settings: Settings,
    options: AssessOptions | None = None,
    observer: Observer | None = None,
) -> Assessment:
    """Assess the project at ``settings.root``; see the module docstring for the order."""
    options = options or AssessOptions()
    timings: dict[str, float] = {}
    started = time.perf_counter()

    @contextmanager
    def step(name: str) -> Iterator[None]:
        if observer is not None:
            observer(name)
        t0 = time.perf_counter()
        yield
        timings[name] = round(time.perf_counter() - t0, 3)

    with step("scan"):
        scan_report, scan, above = sources.run_scan(settings, jobs=options.scan_jobs)
        unread = {s.path for s in sources.unread_sources(scan_report, settings.root)}
        if scan.files_scanned == 0 and not unread:
            raise GpuportError(
                f"nothing to assess in {settings.root}: no source, dependency, build or "
                "container files found"
            )
        scan = _with_port_counts(scan, scan_report, settings)
        code = detect(settings.root, settings.exclude)
        settings = with_code_facts(settings, code)
    with step("hipify"):
        settings = with_hip_version(settings, options.require_hipcc)
        hipify, extra = sources_hipify.run_hipify(
            settings, unread, settings.hipify_check, require_hipcc=options.require_hipcc
        )
        scan, above, scan_effort = sources.with_unread_hazards(scan_report, scan, above, extra)
    with step("bench"):
        runs, bench = sources_evidence.load_bench(settings.bench, options.run_bench)
    with step("cost"):
        cost = sources_evidence.run_cost(settings, runs)
    with step("validate"):
        validate = sources_evidence.load_validate(settings.validate)
    with step("doctor"):
        doctor = sources_evidence.run_doctor(
            settings.doctor, options.doctor_snapshot, project=settings.root
        )
    with step("verdict"):
        facts = Facts(
            settings=settings,
            scan=scan,
            scan_effort=scan_effort,
            hipify=hipify,
            cost=cost,
            bench=bench,
            validate=validate,
            doctor=doctor,
            above_info=tuple(above),
        )
        found_conclusions = verdict.conclusions(facts)
        level, reasons = verdict.readiness(facts)
        work = verdict.effort(facts)
        scan_level = verdict.readiness_of_scan(scan.verdict)
        lifted = level.rank > scan_level.rank and bool(verdict.lifts(facts))
        if lifted:  # `gpuport scan` alone says less: say so, or the two read as a contradiction
            reasons = [f"{reasons[0]} (scan alone: {scan.verdict})", *reasons[1:]]
        reason = verdict.verdict_reason(level, reasons, found_conclusions, lifted=lifted)
        answer = verdict.decision(level, work, found_conclusions, facts)
    notes = list(settings.notes)
    if scan.port_items:
        notes.append(
            f"gpuport port: {scan.port_safe_fix} of {scan.port_items} items have a safe fix "
            f"(`gpuport port {settings.root}` shows them as a diff; --apply writes them)"
        )
    if scan.from_hipify:
        notes.append(
            f"{scan.from_hipify} hazard(s) from hipify's pass over CUDA/C++ files the scan could "
            "not read are counted with the scan's findings"
        )
    snapshot = options.doctor_snapshot
    timings["total"] = round(time.perf_counter() - started, 3)
    return Assessment(
        project=str(settings.root),
        verdict=level,
        verdict_reason=reason,
        decision=answer,
        effort=work,
        conclusions=found_conclusions,
        scan=scan,
        hipify=hipify,
        cost=cost,
        doctor=doctor,
        bench=bench,
        validate_=validate,
        assumptions=assumptions.collect(
            settings, code, hipify, cost, project_given=options.project_given
        ),
        settings=[
            *settings.echo(),
            Setting(
                name="doctor_snapshot",
                value=str(snapshot) if snapshot is not None else None,
                origin="flag" if snapshot is not None else "default",
                detail="replayed: a snapshot saved on the target machine" if snapshot else "",
            ),
        ],
        notes=notes,
        env=EnvFingerprint.collect(),
        timings=timings,
    )


def with_code_facts(settings: Settings, code: CodeFacts) -> Settings:
    """The model and the workload from the project's core code, where nobody set them: a
    model named in core code is priced (marked detected, with its place); one named only in
    examples or tests is offered, not used; training code makes the workload training."""
    if not settings.models and settings.model_config is None:
        found = code.core_model()
        if found is not None:
            key, place = found
            settings = with_detected(settings, "models", (key,), f"{place.path}:{place.line}")
    if not settings.given("train"):
        training = code.core_training()
        if training:
            first = training[0]
            where = f"{first.what} at {first.path}:{first.line}" + (
                f" and {len(training) - 1} more" if len(training) > 1 else ""
            )
            settings = with_detected(settings, "train", True, where)
    return settings


def with_hip_version(settings: Settings, require_hipcc: bool = False) -> Settings:
    """The HIP version the translation is for: the one given, else the installed HIP's,
    else the default; the same assumption ``gpuport hipify`` makes
    (:func:`gpuport.hipify.run.resolve_hip_version`)."""
    if settings.given("hip_version"):
        return settings
    from gpuport.hipify.run import resolve_hip_version

    # no program started for it (only the install's headers and version files), unless the
    # compile check was asked for on the command line, which runs hipcc anyway
    version, how = resolve_hip_version(None, avoid=(settings.root,), run=require_hipcc)
    if how == "installed":
        return with_detected(settings, "hip_version", version, "the HIP installed here")
    detail = "gpuport's default: no HIP installed here"
    return with_default_detail(replace(settings, hip_version=version), "hip_version", detail)


def _with_port_counts(scan: ScanSection, report: ScanReport, settings: Settings) -> ScanSection:
    """How much of the work ``gpuport port`` takes off: items with a safe fix (read-only)."""
    from gpuport.port.engine import safe_fix_counts

    if not settings.root.is_dir():
        return scan
    try:
        items, safe, _ = safe_fix_counts(report, settings.root)
    except GpuportError:
        return scan
    return scan.model_copy(update={"port_items": items, "port_safe_fix": safe})


__all__ = ["STEPS", "AssessOptions", "Observer", "assess", "with_code_facts"]
