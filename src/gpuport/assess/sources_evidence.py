"""Adapters for the evidence beyond the code: cost, bench, validate and doctor.

Split from :mod:`gpuport.assess.sources` (one adapter per core). Imports of the cores happen
inside the functions: ``bench --run`` pulls in torch, and the other paths must stay fast and
torch-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gpuport.assess.config import Settings
from gpuport.assess.model import (
    BenchRunSummary,
    BenchSection,
    CostSection,
    DoctorProblem,
    DoctorSection,
    ValidateSection,
    ValidateSummary,
)
from gpuport.models import GpuportError

if TYPE_CHECKING:
    from gpuport.bench.model import BenchRun, Suite
    from gpuport.cost.model import CostReport
    from gpuport.knowledge.models import ModelShape
    from gpuport.validate.model import Row, Side, Status


# ------------------------------------------------------------------------------ cost


def run_cost(settings: Settings, runs: Sequence[BenchRun]) -> CostSection:
    """``gpuport cost`` for each declared model on the candidate GPUs.

    Bench runs of a catalog GPU replace that GPU's published efficiency with the measured
    one, as ``gpuport cost --bench`` does. No model declared is not an error: the section
    says how to declare one.
    """
    from gpuport.cost import CostOptions, estimate
    from gpuport.knowledge.gpus import resolve_gpu
    from gpuport.knowledge.models import resolve_model, shape_from_hf_config

    shapes: list[tuple[ModelShape, str]] = [(resolve_model(m), "") for m in settings.models]
    if settings.model_config is not None:
        shapes.append((shape_from_hf_config(settings.model_config), str(settings.model_config)))
    if not shapes:
        return CostSection(
            status="no-model",
            message="no model declared; pass --model NAME (or set `model` in [tool.gpuport])",
        )
    specs = [resolve_gpu(g) for g in settings.gpus]
    measured, notes = _runs_by_gpu(runs, [s.key for s in specs])
    cost_fields = ("dtype", "context", "concurrency", "input_tokens", "output_tokens", "prices")
    given = {f for f in cost_fields if settings.given(f)}
    if settings.given("kv_dtype") and settings.kv_dtype != "auto":
        given.add("kv_dtype")
    opts = CostOptions(
        dtype=settings.dtype,
        kv_dtype=None if settings.kv_dtype == "auto" else settings.kv_dtype,
        context=settings.context,
        concurrency=settings.concurrency,
        input_tokens=settings.input_tokens,
        output_tokens=settings.output_tokens,
        prices=dict(settings.prices),
        train=settings.train,
        given=frozenset(given),
    )
    reports: list[CostReport] = []
    for shape, source in shapes:
        report = estimate(shape, specs, opts, measured, model_source=source)
        if notes:
            report = report.model_copy(update={"notes": [*report.notes, *notes]})
        reports.append(report)
    return CostSection(status="ok", reports=reports)


def _runs_by_gpu(
    runs: Sequence[BenchRun], keys: list[str]
) -> tuple[dict[str, BenchRun], list[str]]:
    from gpuport.cost.efficiency import gpu_of_run
    from gpuport.knowledge.gpus import load_gpus

    catalog = load_gpus()
    out: dict[str, BenchRun] = {}
    notes: list[str] = []
    for run in runs:
        if run.device.backend == "cpu":
            continue
        try:
            spec = gpu_of_run(run, catalog, None)
        except GpuportError:
            notes.append(
                f"bench run {run.display_name} ran on {run.device.name!r}, which is not in the "
                "GPU catalog: its measured efficiency is not used for cost"
            )
            continue
        if spec.key in keys and spec.key not in out:
            out[spec.key] = run
            notes.append(f"{spec.key}: efficiency measured by bench run {run.display_name}")
    return out, notes


# ----------------------------------------------------------------------------- bench


def load_bench(refs: Sequence[str], run_now: str | None) -> tuple[list[BenchRun], BenchSection]:
    """Attach bench runs (files, history ids or labels), or run the quick suite here."""
    from gpuport.bench.history import History, resolve_run

    runs: list[tuple[BenchRun, str]] = []
    notes: list[str] = []
    if refs:
        history = History()
        seen: dict[str, str] = {}
        for ref in refs:
            run = resolve_run(ref, history)
            if run.id in seen:  # the same run twice would compare it with itself
                notes.append(f"{ref} is the same run as {seen[run.id]}: attached once")
                continue
            seen[run.id] = ref
            runs.append((run, ref))
    if run_now is not None:
        from gpuport.bench.run import BenchOptions, run_suite

        if run_now not in ("quick", "full"):
            raise GpuportError(f"--run-bench takes quick or full, not {run_now!r}")
        suite: Suite = "quick" if run_now == "quick" else "full"
        run = run_suite(BenchOptions(suite=suite, label="assess"))
        history = History()
        if history.in_project():  # chosen by the project's environment: not written there
            notes.append(
                f"the run is not recorded: the history file {history.path} lies in the "
                "project being assessed (or is reached through it)"
            )
            runs.append((run, "run now (not recorded in the history)"))
        else:
            history.add(run)  # like `gpuport bench`: reusable later by id (`gpuport compare`)
            runs.append((run, f"run now (history id {run.id[:8]})"))
    if not runs:
        return [], BenchSection(
            note="no bench runs attached (pass --bench RUN or --run-bench quick)"
        )
    # CUDA first: the baseline of every ratio is the CUDA run, so > 1 means ROCm is faster.
    order = {"cuda": 0, "rocm": 1, "cpu": 2}
    runs.sort(key=lambda pair: order.get(pair[0].device.backend, 3))
    ordered = [run for run, _ in runs]
    summaries = [
        BenchRunSummary(
            id=run.id,
            label=run.label,
            device=run.device.name,
            backend=run.device.backend,
            suite=run.suite,
            started=run.started,
            cases_ok=sum(1 for r in run.results if r.status.value == "ok"),
            cases=len(run.results),
            source=source,
        )
        for run, source in runs
    ]
    if len(ordered) < 2:
        note = "one run: attach a run from the other platform for ratios"
        return ordered, BenchSection(runs=summaries, note="; ".join([note, *notes]))
    from gpuport.bench.compare import compare

    comparison = compare(ordered, resamples=1000)
    note = f"ratios against {comparison.runs[0]}; > 1 means faster than it"
    return ordered, BenchSection(
        runs=summaries, comparison=comparison, note="; ".join([note, *notes])
    )


# -------------------------------------------------------------------------- validate


def load_validate(paths: Sequence[str]) -> ValidateSection:
    """Summaries of ``gpuport validate check --format json`` reports."""
    from gpuport.models import load_result
    from gpuport.validate.model import ParityReport, Status

    out: list[ValidateSummary] = []
    for ref in paths:
        report = load_result(Path(ref), ParityReport)

        out.append(
            ValidateSummary(
                file=ref,
                model_ref=report.model_ref,
                verdict=report.verdict.value,
                verdict_reason=report.verdict_reason,
                first_divergence=report.first_divergence,
                counts={k.value: v for k, v in report.counts.items()},
                wrong=_labels(report.rows, Status.WRONG),
                different=_labels(report.rows, Status.DIFFERENT),
                machines=f"{_machine(report.a)} vs {_machine(report.b)}",
            )
        )
    return ValidateSection(reports=out)


# ---------------------------------------------------------------------------- doctor


def run_doctor(
    enabled: bool, snapshot: Path | None, *, project: Path | None = None
) -> DoctorSection:
    """``gpuport doctor`` on this machine (``enabled``), or replayed from a saved snapshot.

    Off by default: it probes the local machine (seconds, and a GPU smoke test where there
    is a GPU), which says nothing about the project and is often not the target machine.
    A snapshot saved on the target machine (``gpuport doctor --save-snapshot``) is the
    better evidence, and replays here without touching anything. No program inside
    ``project`` is run, whatever PATH or ROCM_PATH name (twentieth re-run F7: an absolute
    PATH entry of the project's ``bin/`` ran its own ``nvidia-smi``).
    """
    if not enabled and snapshot is None:
        return DoctorSection(
            status="not-run",
            message="not run (pass --doctor for this machine, or --doctor-snapshot FILE)",
        )
    from gpuport.doctor import diagnose, load_snapshot
    from gpuport.doctor import run_doctor as probe_and_diagnose

    if snapshot is not None:
        report = diagnose(load_snapshot(snapshot), replayed=True)
    else:
        from gpuport.doctor import DoctorOptions

        avoid = (project,) if project is not None else ()
        report = probe_and_diagnose(DoctorOptions(avoid=avoid))
    problems = [
        DoctorProblem(rule_id=d.rule_id, title=d.title, status=d.status.value, fix=d.fix)
        for d in report.diagnoses
        if d.status.value in ("fail", "warn")
    ]
    where = f"the target machine (snapshot {snapshot})" if snapshot is not None else "this machine"
    return DoctorSection(
        status="problems" if problems else "ok",
        message=f"{where}: {len(problems)} problem(s)",
        summary=report.summary,
        problems=problems,
        replayed=report.replayed,
    )


def _machine(side: Side) -> str:
    return f"{side.name} on {side.env.gpu_name or side.settings.device} ({side.settings.backend})"


def _labels(rows: Sequence[Row], status: Status) -> list[str]:
    return list(dict.fromkeys(r.label for r in rows if r.status is status))


__all__ = ["load_bench", "load_validate", "run_cost", "run_doctor"]
