"""Run a benchmark suite: detect the device, build the context, time every case, keep going.

One case's failure never ends the suite: out-of-memory, an unsupported dtype or a
missing backend becomes a *skipped* result with the reason; anything unexpected
becomes a *failed* result with the exception's first line. The run carries the
settings that change numbers (TunableOp, TF32, visible devices) so two runs can
be told apart later.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from gpuport.bench.model import (
    BenchResult,
    BenchRun,
    CaseStatus,
    DeviceInfo,
    Stats,
    Suite,
    Telemetry,
)
from gpuport.bench.registry import (
    WORKLOADS,
    BenchContext,
    Case,
    Measurement,
    Skip,
    TimingPolicy,
    Workload,
)
from gpuport.knowledge.gpus import GpuSpec
from gpuport.models import GpuportError
from gpuport.usercode import one_line

UNSTABLE_CV = 0.05
# Env vars that change benchmark numbers; recorded in every run (research notes §5.A).
SETTINGS_ENV = (
    "PYTORCH_TUNABLEOP_ENABLED",
    "PYTORCH_TUNABLEOP_TUNING",
    "TORCH_BLAS_PREFER_HIPBLASLT",
    "TORCH_BLAS_PREFER_CUBLASLT",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "CUDA_VISIBLE_DEVICES",
    "HSA_OVERRIDE_GFX_VERSION",
    "HIPBLASLT_ALLOW_TF32",
    "NVIDIA_TF32_OVERRIDE",
    "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
    "MIOPEN_FIND_MODE",
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_HIP_ALLOC_CONF",
    "NCCL_ALGO",
    "NCCL_PROTO",
    "NCCL_NVLS_ENABLE",
    "NCCL_P2P_DISABLE",
    "NCCL_P2P_LEVEL",
    "OMP_NUM_THREADS",
)

_POLICIES: dict[tuple[Suite, bool], tuple[TimingPolicy, TimingPolicy]] = {
    # (suite, on_gpu): (kernel policy, model policy)
    ("quick", True): (
        TimingPolicy(min_samples=100, min_time_s=0.1, max_time_s=2.0, warmup_iters=10),
        TimingPolicy(
            min_samples=20,
            min_time_s=0.5,
            max_time_s=8.0,
            warmup_iters=5,
            flush_cache=False,
            settle=False,
        ),
    ),
    ("full", True): (
        TimingPolicy(
            min_samples=200, min_time_s=1.0, max_time_s=10.0, warmup_iters=50, warmup_s=1.0
        ),
        TimingPolicy(
            min_samples=50,
            min_time_s=2.0,
            max_time_s=60.0,
            warmup_iters=30,
            flush_cache=False,
            settle=False,
        ),
    ),
    ("quick", False): (
        TimingPolicy(
            min_samples=10,
            min_time_s=0.01,
            max_time_s=0.3,
            warmup_iters=2,
            warmup_s=0.0,
            flush_cache=False,
        ),
        TimingPolicy(
            min_samples=3,
            min_time_s=0.0,
            max_time_s=1.0,
            warmup_iters=1,
            warmup_s=0.0,
            flush_cache=False,
            settle=False,
        ),
    ),
    ("full", False): (
        TimingPolicy(min_samples=100, min_time_s=0.2, max_time_s=3.0, flush_cache=False),
        TimingPolicy(
            min_samples=10,
            min_time_s=1.0,
            max_time_s=20.0,
            warmup_iters=3,
            flush_cache=False,
            settle=False,
        ),
    ),
}


def policies(suite: Suite, on_gpu: bool) -> tuple[TimingPolicy, TimingPolicy]:
    """The (kernel, model) timing policies for a suite on a GPU or a CPU."""
    return _POLICIES[(suite, on_gpu)]


@dataclass
class BenchOptions:
    suite: Suite = "quick"
    workloads: list[str] | None = None
    label: str | None = None
    device_index: int = 0
    seed: int = 0
    preheat_s: float | None = None  # None: 10 s quick / 30 s full on a GPU, 0 on CPU
    knowledge_dir: Path | None = None
    options: dict[str, Any] = field(default_factory=dict)  # passed to workloads as ctx.options


class Observer(Protocol):
    """Progress callbacks; the CLI wires them to a rich progress bar on stderr."""

    def planned(self, total: int) -> None: ...
    def case_started(self, workload: str, case: str) -> None: ...
    def case_finished(self, result: BenchResult) -> None: ...


def _load_workloads() -> dict[str, Workload]:
    """The registry in suite order (user-registered workloads after the built-in ones)."""
    from gpuport.bench.workloads import SUITE_ORDER

    rank = {name: i for i, name in enumerate(SUITE_ORDER)}
    ordered = sorted(WORKLOADS.values(), key=lambda w: rank.get(w.name, len(rank)))
    return {w.name: w for w in ordered}


def select_workloads(names: Sequence[str] | None) -> list[Workload]:
    """The workloads to run, in registry order; unknown names are a usage error."""
    registry = _load_workloads()
    if not names:
        return list(registry.values())
    chosen: list[Workload] = []
    for raw in names:
        for name in (n.strip() for n in raw.split(",")):
            if not name:
                continue
            if name not in registry:
                close = difflib.get_close_matches(name, registry, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                known = ", ".join(registry)
                raise GpuportError(f"unknown workload {name!r}{hint} (known: {known})")
            if registry[name] not in chosen:
                chosen.append(registry[name])
    return [w for w in registry.values() if w in chosen]


def settings_snapshot(torch: Any | None) -> dict[str, str]:
    """Env vars and torch flags that change numbers, read before anything runs."""
    out = {k: os.environ[k] for k in SETTINGS_ENV if k in os.environ}
    if torch is None:
        return out
    probes: dict[str, Callable[[], object]] = {
        "torch.backends.cuda.matmul.allow_tf32": lambda: torch.backends.cuda.matmul.allow_tf32,
        "torch.backends.cudnn.allow_tf32": lambda: torch.backends.cudnn.allow_tf32,
        "torch.backends.cudnn.benchmark": lambda: torch.backends.cudnn.benchmark,
        "torch.get_num_threads": lambda: torch.get_num_threads(),
    }
    for key, probe in probes.items():
        with contextlib.suppress(Exception):
            out[key] = str(probe())
    return out


def _peak_figures(case: Case, spec: GpuSpec | None) -> tuple[float | None, float | None]:
    """(spec peak, best published achieved) in the case's unit, when the catalog knows them."""
    if spec is None or case.peak is None:
        return None, None
    what, sub = case.peak
    if what == "tflops":
        peak = spec.peak_tflops.get(sub or "")
        ach = spec.achievable.get(f"gemm_{sub}")
    elif what == "bandwidth":
        peak = spec.bandwidth_gbs
        ach = spec.achievable.get(f"membw_{sub}")
    else:
        peak = spec.interconnect_gbs
        ach = spec.achievable.get(f"busbw_{sub}")
    return peak, (ach.value if ach is not None else None)


def _pct(value: float | None, ref: float | None) -> float | None:
    if value is None or not ref:
        return None
    return round(100.0 * value / ref, 2)


def to_result(
    workload: Workload,
    case: Case,
    m: Measurement,
    spec: GpuSpec | None,
    telemetry: Telemetry | None = None,
) -> BenchResult:
    """Turn a case's Measurement into a result with its headline and % of peak."""
    value = None
    if m.work_per_iter is not None and m.stats.median > 0:
        value = m.work_per_iter / m.stats.median / case.scale
    peak, achievable = _peak_figures(case, spec)
    return BenchResult(
        workload=workload.name,
        case=case.name,
        params={**case.params, **m.params},
        unit=case.unit,
        value=value,
        higher_is_better=case.higher_is_better,
        time=m.stats,
        samples=m.samples,
        work_per_iter=m.work_per_iter,
        metrics=m.metrics,
        peak=peak,
        peak_pct=_pct(value, peak),
        achievable=achievable,
        achievable_pct=_pct(value, achievable),
        telemetry=telemetry,
        unstable=is_unstable(m.stats),
    )


def is_unstable(stats: Stats) -> bool:
    """Robust CV above UNSTABLE_CV, or two modes: what a single outlier cannot cause."""
    return stats.spread > UNSTABLE_CV or stats.bimodal


def classify_failure(exc: BaseException) -> tuple[CaseStatus, str]:
    """Skipped (cannot run here) or failed (a bug or a broken stack), with a one-line reason."""
    if isinstance(exc, Skip):
        return CaseStatus.SKIPPED, str(exc)
    text = str(exc).lower()
    if type(exc).__name__ == "OutOfMemoryError" or "out of memory" in text:
        return CaseStatus.SKIPPED, "out of memory: " + one_line(exc)
    if isinstance(exc, NotImplementedError) or "not implemented for" in text:
        return CaseStatus.SKIPPED, "unsupported here: " + one_line(exc)
    if isinstance(exc, ImportError):
        return CaseStatus.SKIPPED, "missing module: " + one_line(exc)
    return CaseStatus.FAILED, one_line(exc)


class TelemetrySampler:
    """Reads clocks, power and temperature every ``interval`` s while a case runs.

    Read after the case, the GPU is idle and reports idle clocks; throttling during
    the measurement would never be seen. The summary keeps the lowest SM clock, the
    highest power and temperature, and every throttle reason observed.
    """

    def __init__(self, info: DeviceInfo, interval: float = 0.25) -> None:
        self.info = info
        self.interval = interval
        self.readings: list[Telemetry] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> TelemetrySampler:
        if self.info.backend != "cpu":
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _loop(self) -> None:
        from gpuport.platform import telemetry

        while not self._stop.is_set():
            reading = telemetry(self.info)
            if reading is None:
                return
            self.readings.append(reading)
            self._stop.wait(self.interval)

    def summary(self) -> Telemetry | None:
        return summarize_telemetry(self.readings)


def summarize_telemetry(readings: list[Telemetry]) -> Telemetry | None:
    if not readings:
        return None

    def pick(values: list[float | None], fn: Any) -> float | None:
        present = [v for v in values if v is not None]
        return fn(present) if present else None

    reasons: list[str] = []
    for r in readings:
        reasons += [x for x in r.throttle_reasons if x not in reasons]
    return Telemetry(
        sm_clock_mhz=pick([r.sm_clock_mhz for r in readings], min),
        mem_clock_mhz=pick([r.mem_clock_mhz for r in readings], min),
        power_w=pick([r.power_w for r in readings], max),
        temperature_c=pick([r.temperature_c for r in readings], max),
        power_limit_w=pick([r.power_limit_w for r in readings], min),
        throttle_reasons=reasons,
    )


def run_case(ctx: BenchContext, workload: Workload, case: Case) -> BenchResult:
    """Run one case; never raises for a case-level problem (GpuportError is the user's input)."""
    sampler = TelemetrySampler(ctx.info)
    try:
        with sampler:
            m = case.run(ctx)
    except GpuportError:
        raise
    except Exception as exc:
        status, reason = classify_failure(exc)
        _release(ctx)
        return BenchResult(
            workload=workload.name,
            case=case.name,
            params=case.params,
            status=status,
            reason=reason,
            unit=case.unit,
            higher_is_better=case.higher_is_better,
        )
    result = to_result(workload, case, m, ctx.spec, sampler.summary())
    _release(ctx)
    return result


def _release(ctx: BenchContext) -> None:
    if ctx.on_gpu:
        with contextlib.suppress(Exception):
            ctx.torch.cuda.empty_cache()


def make_measure(torch: Any, device: Any, info: DeviceInfo, spec: GpuSpec | None) -> Any:
    """Bind the timing core to this device: events and a sized cache flush on GPUs."""
    from gpuport.bench import timing

    on_gpu = info.backend != "cpu"
    flush_state: dict[str, Any] = {}

    def get_flush() -> Any:
        if "fn" not in flush_state:
            nbytes = timing.flush_bytes(info.l2_bytes, spec.flush_bytes if spec else None)
            flush_state["fn"] = timing.make_flush(torch, device, nbytes)
        return flush_state["fn"]

    def measure(
        fn: Any,
        *,
        policy: TimingPolicy,
        work_per_iter: float | None = None,
        before: Any = None,
        flush: bool | None = None,
    ) -> Measurement:
        want_flush = policy.flush_cache if flush is None else flush
        timer: timing.Timer = timing.DeviceEventTimer(torch) if on_gpu else timing.HostTimer()
        return timing.measure(
            fn,
            timer=timer,
            policy=policy,
            flush=get_flush() if (want_flush and on_gpu) else None,
            before=before,
            work_per_iter=work_per_iter,
            sync=torch.cuda.synchronize if on_gpu else None,
        )

    return measure


def preheat(torch: Any, device: Any, seconds: float) -> None:
    """Run bf16 matmuls for ``seconds`` so clocks and temperature reach steady state first."""
    if seconds <= 0:
        return
    a = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(10):
            torch.mm(a, a)
        torch.cuda.synchronize()
    del a
    torch.cuda.empty_cache()


def run_suite(opts: BenchOptions, observer: Observer | None = None) -> BenchRun:
    """Detect the device, then run every selected workload's cases in order."""
    from gpuport.optional import require
    from gpuport.platform import detect, fingerprint

    workloads = select_workloads(opts.workloads)
    torch = require("torch", "bench", "gpuport bench")
    info = detect(opts.device_index, torch, opts.knowledge_dir)
    spec = None
    if info.spec_key:
        from gpuport.knowledge.gpus import load_gpus

        spec = load_gpus(opts.knowledge_dir).get(info.spec_key)
    on_gpu = info.backend != "cpu"
    device = torch.device(f"cuda:{opts.device_index}" if on_gpu else "cpu")
    if on_gpu:
        torch.cuda.set_device(device)
    kernel_policy, model_policy = policies(opts.suite, on_gpu)
    ctx = BenchContext(
        torch=torch,
        device=device,
        info=info,
        spec=spec,
        suite=opts.suite,
        kernel_policy=kernel_policy,
        model_policy=model_policy,
        measure=make_measure(torch, device, info, spec),
        options=dict(opts.options),
        seed=opts.seed,
    )
    settings = settings_snapshot(torch)
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    plan: list[tuple[Workload, Case]] = []
    results: list[BenchResult] = []
    for wl in workloads:
        try:
            for mod in wl.needs:
                require(mod, "bench", f"the {wl.name} workload")
            plan.extend((wl, c) for c in wl.cases(ctx))
        except Skip as exc:
            results.append(_whole_workload_skip(wl, str(exc)))
        except GpuportError as exc:
            if exc.exit_code == 2:
                raise
            results.append(_whole_workload_skip(wl, str(exc)))
    if observer is not None:
        observer.planned(len(plan))
    if on_gpu and plan:
        default = 10.0 if opts.suite == "quick" else 30.0
        preheat(torch, device, default if opts.preheat_s is None else opts.preheat_s)
    torch.manual_seed(opts.seed)
    for wl, case in plan:
        if observer is not None:
            observer.case_started(wl.name, case.name)
        result = run_case(ctx, wl, case)
        results.append(result)
        if observer is not None:
            observer.case_finished(result)
    return BenchRun(
        id=uuid.uuid4().hex,
        label=opts.label,
        suite=opts.suite,
        env=fingerprint(info),
        device=info,
        settings=settings,
        started=started.isoformat(timespec="seconds"),
        duration_s=round(time.perf_counter() - t0, 3),
        results=results,
    )


def _whole_workload_skip(wl: Workload, reason: str) -> BenchResult:
    return BenchResult(workload=wl.name, case="(all)", status=CaseStatus.SKIPPED, reason=reason)
