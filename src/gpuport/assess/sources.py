"""Adapters: each core's public function called the way an assessment needs, one per core.

Why adapters: the cores were written for their own commands (``scan`` prints a table,
``hipify`` writes an output tree, ``bench`` records history). An assessment needs each one's
answer as a small, frozen section of the :class:`~gpuport.assess.model.Assessment`, with no
side effects in the user's project. Keeping every call here means a change in a core's
signature is fixed in one place, and :mod:`gpuport.assess.run` only sequences the steps.

Imports of the cores happen inside the functions: ``bench --run`` pulls in torch, and the
other paths must stay fast and torch-free.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpuport import fileio, subproc
from gpuport.assess.config import Settings
from gpuport.assess.model import (
    BenchRunSummary,
    BenchSection,
    CompileOutcome,
    CostSection,
    DoctorProblem,
    DoctorSection,
    HipifySection,
    ScanSection,
    TargetSummary,
    UnsupportedUse,
    ValidateSection,
    ValidateSummary,
)
from gpuport.models import EnvironmentProblem, GpuportError, Severity
from gpuport.scan.model import Effort, Finding, SkippedFile

if TYPE_CHECKING:
    from gpuport.bench.model import BenchRun, Suite
    from gpuport.cost.model import CostReport
    from gpuport.knowledge.models import ModelShape
    from gpuport.scan.model import ScanReport
    from gpuport.validate.model import Row, Side, Status

FINDINGS_KEPT = 1000  # above-info findings the report carries; the criteria see all
HIPCC_FALLBACK_ARCH = "gfx90a"  # Debian's hipcc ships device libraries for this CDNA target
_HF_ID = re.compile(r"""["']([A-Za-z0-9][\w.-]{0,63}/[\w.-]{1,96})["']""")


# ------------------------------------------------------------------------------ scan


def run_scan(settings: Settings) -> tuple[ScanReport, ScanSection, list[Finding]]:
    """``gpuport scan`` on the project for the first target.

    Returns the report, its section (the first :data:`FINDINGS_KEPT` findings above info) and
    every finding above info, worst first: the criteria read all of them, only the report
    carries fewer.
    """
    from gpuport.scan import ScanOptions, scan_path
    from gpuport.scan.engine import NothingToScan

    try:
        opts = ScanOptions(target=settings.target, exclude=settings.exclude)
        report = scan_path(settings.root, opts)
    except NothingToScan:
        raise GpuportError(
            f"nothing to assess in {settings.root}: no source, dependency, build or "
            "container files found"
        ) from None
    above = worst_first(report.findings)
    t = report.target
    section = ScanSection(
        root=report.root,
        target=TargetSummary(
            name=t.name, generation=t.generation, wave_size=t.wave_size, fp8=t.fp8
        ),
        files_scanned=report.files_scanned,
        files_by_kind=report.files_by_kind,
        counts=report.counts,
        verdict=report.verdict.value,
        verdict_reason=report.verdict_reason,
        findings=above[:FINDINGS_KEPT],
        findings_above_info=len(above),
        findings_total=len(report.findings),
        skipped=[f"{s.path}: {s.reason}" for s in report.skipped],
        unread=[f"{s.path}: {s.reason}" for s in unread_sources(report, settings.root)],
        routes=[
            f"{r.kind} {r.path}" + (f":{r.line}" if r.line else "") + f": {r.detail}"
            for r in report.routes
        ],
        scope_counts={
            scope: sum(n for sev, n in counts.items() if sev is not Severity.INFO)
            for scope, counts in report.scope_counts.items()
        },
        not_built=len(report.not_built),
        duration_s=report.duration_s,
    )
    return report, section, above


def worst_first(findings: Sequence[Finding]) -> list[Finding]:
    """The findings above info, worst first, then by place (the report's order)."""
    kept = [f for f in findings if f.severity is not Severity.INFO]
    kept.sort(key=lambda f: (-f.severity.rank, f.location.path, f.location.line or 0))
    return kept


def unread_sources(report: ScanReport, root: Path) -> list[SkippedFile]:
    """The skipped entries that are files the scan would have read (not folders or links):
    source files whose text it could not get (not UTF-8, too large, binary, unreadable)."""
    from gpuport.scan.files import classify

    root_name = root.resolve().name
    return [
        s
        for s in report.skipped
        if not s.path.endswith("/")
        and classify(s.path if "/" in s.path else f"{root_name}/{s.path}") is not None
    ]


def with_unread_hazards(
    report: ScanReport, section: ScanSection, above: list[Finding], extra: Sequence[Finding]
) -> tuple[ScanSection, list[Finding], Effort]:
    """The scan's answer with hipify's hazards in files the scan could not read added.

    hipify reads a CUDA/C++ file that is not UTF-8 (keeping the odd bytes), where the scan
    skips it; its hazard pass runs the scan's own GP3xx rules, so those findings are what
    the scan would have said. Counts, verdict, findings and effort are made again from all.
    """
    if not extra:
        return section, above, report.effort
    from gpuport.scan.routes import working_route
    from gpuport.scan.rules import RULES
    from gpuport.scan.verdict import estimate_effort, judged, verdict_for

    every = [*report.findings, *extra]
    core = judged(every, report.scope)
    route = [r.path for r in report.routes] if working_route(report.routes) else []
    gap = estimate_effort([f for f in core if f.severity is Severity.BLOCKER], RULES).hours
    verdict, reason = verdict_for(core, list(dict.fromkeys(route)), gap)
    combined = worst_first(every)
    counts = Counter(f.severity for f in every)
    merged = section.model_copy(
        update={
            "counts": {sev: counts.get(sev, 0) for sev in Severity},
            "verdict": verdict.value,
            "verdict_reason": reason,
            "findings": combined[:FINDINGS_KEPT],
            "findings_above_info": len(combined),
            "findings_total": len(every),
            "from_hipify": len(extra),
        }
    )
    return merged, combined, estimate_effort(core, RULES)


def detect_model(root: Path, exclude: tuple[str, ...]) -> tuple[str, str] | None:
    """A catalog model named in the project's Python code (a Hugging Face id literal).

    Why: a service usually names its checkpoint (``"meta-llama/Llama-3.1-8B-Instruct"``);
    pricing that model is a better default than pricing nothing. Only string literals that
    resolve to a catalog entry count, the first one wins, and the report marks the setting
    as detected so the reader knows to declare it. Nothing is imported or run.
    """
    from gpuport.knowledge.models import resolve_model
    from gpuport.scan.files import Candidate, read_text, walk
    from gpuport.scan.rules import FileKind

    for item in walk(root, exclude=exclude):
        if not isinstance(item, Candidate) or item.kind is not FileKind.PYTHON:
            continue
        text = read_text(item.path)
        if not isinstance(text, str):
            continue
        for no, line in enumerate(text.splitlines(), 1):
            for match in _HF_ID.finditer(line):
                try:
                    key = resolve_model(match.group(1)).key
                except GpuportError:
                    continue
                return key, f"found {match.group(1)!r} in {item.rel}:{no}"
    return None


# ---------------------------------------------------------------------------- hipify


@dataclass(frozen=True)
class _Translated:
    """One CUDA/C++ file of the dry run: the original, its translation and what hipify saw."""

    path: str
    original: str
    text: str
    replacements: dict[str, int]
    by_family: dict[str, int]
    unsupported: tuple[UnsupportedUse, ...]
    hazards: tuple[Finding, ...]


def _translate_tree(
    settings: Settings, hip_version: str
) -> tuple[list[_Translated], list[tuple[str, str]]]:
    """Translate every CUDA/C++ file the scan's walk yields, ``exclude`` applied.

    The same per-file work as :func:`gpuport.hipify.run.hipify_path`
    (:func:`~gpuport.hipify.run.translate_source`), over the same files the scan saw: the
    project's ``exclude`` patterns leave a file out of both, and nothing is written.
    """
    from gpuport.hipify.io import read_source
    from gpuport.hipify.run import family_counts, translate_source
    from gpuport.knowledge import load_packages, resolve_target
    from gpuport.knowledge.api_map import load_api_map
    from gpuport.scan.files import Skip, walk
    from gpuport.scan.rules import FileKind

    target = resolve_target(settings.target)
    packages = load_packages()
    amap = load_api_map()
    files: list[_Translated] = []
    skipped: list[tuple[str, str]] = []
    for item in walk(settings.root, exclude=settings.exclude):
        if isinstance(item, Skip):
            continue  # the scan lists these
        if item.kind is not FileKind.NATIVE:
            continue
        got = read_source(item.path)
        if isinstance(got, Skip):
            skipped.append((item.rel, got.reason))
            continue
        hazards, done = translate_source(
            item.rel, got, target=target, packages=packages, hip_version=hip_version
        )
        files.append(
            _Translated(
                path=item.rel,
                original=got,
                text=done.text,
                replacements=dict(done.replacements),
                by_family=family_counts(done.replacements, amap),
                unsupported=tuple(
                    UnsupportedUse(name=u.name, path=item.rel, line=u.line, reason=u.reason)
                    for u in done.unsupported
                ),
                hazards=tuple(hazards),
            )
        )
    return files, skipped


def run_hipify(
    settings: Settings,
    unread: Collection[str],
    check: bool,
    *,
    require_hipcc: bool = False,
) -> tuple[HipifySection, list[Finding]]:
    """A dry run of ``gpuport hipify`` over the project: statistics, unsupported, hazards.

    The translation is always for the HIP the port targets (``hip_version``, 6.4 unless set),
    whether or not it is compiled, so the report does not depend on the machine. Nothing is
    written inside the project: translations stay in memory and, for the compile check, go
    to a temporary folder that is removed afterwards. A compile check asked for on the
    command line (``require_hipcc``) without hipcc is an environment problem (exit 3); asked
    for by the project's settings, it becomes a note, so the report still gets written on
    machines without hipcc.

    ``unread`` are the paths the scan could not read; the hazards hipify finds in them are
    returned so the verdict counts them (the second value).
    """
    hip_version = settings.hip_version
    files, skipped = _translate_tree(settings, hip_version)
    if not files:
        reason = "no CUDA/C++ sources in the project"
        if skipped:
            reason = f"no readable CUDA/C++ sources ({plural_files(len(skipped))} skipped)"
        return HipifySection(
            ran=False, reason=reason, skipped=[f"{p}: {why}" for p, why in skipped]
        ), []
    hipcc = subproc.which("hipcc", avoid=(settings.root,)) if check else None
    if check and hipcc is None and require_hipcc:
        raise EnvironmentProblem(
            "--hipify-check needs hipcc, which is not on PATH; install Debian's `hipcc` "
            "package (apt-get install hipcc) or a ROCm release, or drop --hipify-check"
        )
    if check and hipcc is None:
        check_note = "compile check asked for, but hipcc is not on PATH (apt-get install hipcc)"
    else:
        check_note = "" if check else "compile check not run (pass --hipify-check)"
    outcomes: list[CompileOutcome] = []
    local = ""
    if check and hipcc is not None:
        from gpuport.hipify.run import detect_hip_version

        local = detect_hip_version(avoid=(settings.root,)) or ""
        arch = _compile_arch(hipcc, settings.target)
        outcomes = _compile_all(files, hipcc, arch, hip_version, local, settings.root)
        check_note = f"hipcc (HIP {local or 'version unknown'}) -c for {arch}"
        if arch != settings.target:
            check_note += f": this hipcc cannot build for {settings.target}; {arch} stands in"
        if _older(local, hip_version):
            check_note += (
                f"; this hipcc is older than the HIP {hip_version} the translation is for: "
                f"a failure that goes away when the file is translated for HIP {local} is "
                "inconclusive"
            )
    extra = [h for f in files if f.path in unread for h in f.hazards]
    hazards: Counter[str] = Counter(h.rule_id for f in files for h in f.hazards)
    unsupported = [u for f in files for u in f.unsupported]
    return HipifySection(
        ran=True,
        reason=f"dry run over {plural_files(len(files))}; nothing written",
        hip_version=hip_version,
        files=len(files),
        replacements=sum(sum(f.replacements.values()) for f in files),
        by_family=_merged(f.by_family for f in files),
        unsupported=unsupported,
        unsupported_counts=dict(sorted(Counter(u.name for u in unsupported).items())),
        hazards=sum(hazards.values()),
        hazards_by_rule=dict(sorted(hazards.items())),
        unread_hazards=len(extra),
        local_hip_version=local,
        checked=bool(outcomes),
        check_note=check_note,
        compile=outcomes,
        skipped=[f"{p}: {why}" for p, why in skipped],
    ), extra


def plural_files(n: int) -> str:
    return f"{n} CUDA/C++ file{'' if n == 1 else 's'}"


def _merged(parts: Iterable[dict[str, int]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for part in parts:
        total.update(part)
    return dict(sorted(total.items()))


def _older(local: str, target: str) -> bool:
    """``local`` is a HIP version older than ``target`` (unknown: not older)."""
    from packaging.version import InvalidVersion, Version

    try:
        return bool(local) and Version(local) < Version(target)
    except InvalidVersion:
        return False


def _compile_arch(hipcc: str, target: str) -> str:
    """``target`` if this hipcc can build for it (a two-line probe), else the fallback."""
    with tempfile.TemporaryDirectory(prefix="gpuport-assess-") as tmp:
        src = Path(tmp) / "probe.hip"
        fileio.write_atomic(src, "__global__ void k(float* x) { x[0] = 1.0f; }\n")
        cmd = [hipcc, f"--offload-arch={target}", "-x", "hip", "-c", str(src), "-o", f"{tmp}/p.o"]
        try:
            done = subprocess.run(
                cmd, capture_output=True, timeout=60, check=False, env=_hip_env(), cwd=tmp
            )
        except (OSError, subprocess.SubprocessError):
            return HIPCC_FALLBACK_ARCH
    return target if done.returncode == 0 else HIPCC_FALLBACK_ARCH


def _hip_env() -> dict[str, str]:
    return subproc.safe_env({"HIP_PLATFORM": "amd"})


_UNITS = (".cu", ".cpp", ".cc", ".cxx", ".hip")  # headers compile through their includers


def _compile_all(
    files: Sequence[_Translated],
    hipcc: str,
    arch: str,
    hip_version: str,
    local: str,
    root: Path | None = None,
) -> list[CompileOutcome]:
    """Write every translation to a temporary tree (so includes resolve), compile each.

    With a hipcc older than the HIP the translation is for, a failure may be the old HIP's
    and not the port's: the file is then translated again for the local HIP (in a second
    tree) and compiled. If that translation leaves APIs the old HIP lacks, or compiles, the
    failure says nothing about ``hip_version``: inconclusive. If it fails as well, the error
    does not come from the version: failed.
    """
    from gpuport.hipify.io import encode
    from gpuport.hipify.run import compile_check

    outcomes: list[CompileOutcome] = []
    older = _older(local, hip_version)
    with tempfile.TemporaryDirectory(prefix="gpuport-assess-hip-") as tmp:
        base = Path(tmp) / "target"
        for f in files:
            dest = base / f.path
            dest.parent.mkdir(parents=True, exist_ok=True)
            fileio.write_atomic_bytes(dest, encode(f.text), root=base)
        again: dict[str, tuple[str, set[str]]] | None = None
        for f in files:
            if not f.path.endswith(_UNITS):
                continue
            result = compile_check(
                f.text,
                f.path,
                offload_archs=[arch],
                include_dir=(base / f.path).parent,
                hipcc=hipcc,
                avoid=(root,) if root is not None else (),
            )
            outcome = _outcome(f.path, result.ok, result.error)
            if outcome.status == "failed" and older:
                if again is None:
                    again = _retranslate(files, Path(tmp) / "local", local)
                text, lacking = again[f.path]
                lacks = sorted(lacking - {u.name for u in f.unsupported})
                if lacks:
                    why = (
                        f"HIP {local} here lacks {', '.join(lacks[:3])}, which the translation "
                        f"for HIP {hip_version} uses; check with HIP {hip_version} or newer"
                    )
                    outcome = CompileOutcome(path=f.path, status="inconclusive", error=why)
                else:
                    second = compile_check(
                        text,
                        f.path,
                        offload_archs=[arch],
                        include_dir=(Path(tmp) / "local" / f.path).parent,
                        hipcc=hipcc,
                        avoid=(root,) if root is not None else (),
                    )
                    retry = _outcome(f.path, second.ok, second.error)
                    if retry.status != "failed":
                        why = (
                            f"fails with HIP {local} when translated for HIP {hip_version} "
                            f"({outcome.error}); translated for HIP {local} it "
                            + ("compiles" if second.ok else f"is inconclusive: {retry.error}")
                            + f"; check with HIP {hip_version} or newer"
                        )
                        outcome = CompileOutcome(path=f.path, status="inconclusive", error=why)
            outcomes.append(outcome)
    return outcomes


def _retranslate(
    files: Sequence[_Translated], base: Path, hip_version: str
) -> dict[str, tuple[str, set[str]]]:
    """Every file translated for ``hip_version`` and written under ``base``: path -> (text,
    names left untranslated)."""
    from gpuport.hipify.io import encode
    from gpuport.hipify.translate import translate

    out: dict[str, tuple[str, set[str]]] = {}
    for f in files:
        done = translate(f.original, hip_version=hip_version)
        dest = base / f.path
        dest.parent.mkdir(parents=True, exist_ok=True)
        fileio.write_atomic_bytes(dest, encode(done.text), root=base)
        out[f.path] = (done.text, {u.name for u in done.unsupported})
    return out


def _outcome(path: str, ok: bool, error: str | None) -> CompileOutcome:
    """ok, failed or inconclusive, in the words ``gpuport hipify --check`` uses: one shared
    classification (:func:`gpuport.hipify.check.classify`), so a missing ``torch/extension.h``
    is "inconclusive" in both, with the header named."""
    from gpuport.hipify.check import classify

    if ok:
        return CompileOutcome(path=path, status="ok")
    status, why = classify(error)
    return CompileOutcome(
        path=path, status="failed" if status == "failed" else "inconclusive", error=why
    )


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
        History().add(run)  # like `gpuport bench`: reusable later by id (`gpuport compare`)
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


def run_doctor(enabled: bool, snapshot: Path | None) -> DoctorSection:
    """``gpuport doctor`` on this machine (``enabled``), or replayed from a saved snapshot.

    Off by default: it probes the local machine (seconds, and a GPU smoke test where there
    is a GPU), which says nothing about the project and is often not the target machine.
    A snapshot saved on the target machine (``gpuport doctor --save-snapshot``) is the
    better evidence, and replays here without touching anything.
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
        report = probe_and_diagnose()
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


__all__ = [
    "detect_model",
    "load_bench",
    "load_validate",
    "run_cost",
    "run_doctor",
    "run_hipify",
    "run_scan",
]
