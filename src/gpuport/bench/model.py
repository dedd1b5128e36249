"""Result models of ``gpuport bench`` and ``gpuport compare``.

A run file is one :class:`BenchRun`: the machine it ran on, the settings that
change numbers (TunableOp, TF32, clocks), and one :class:`BenchResult` per
workload case with its raw samples, so that ``compare`` can resample them later
instead of trusting a summary.
"""

from __future__ import annotations

import enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from gpuport.models import SCHEMA_VERSION, EnvFingerprint, sealed_digest

Suite = Literal["quick", "full"]


class CaseStatus(enum.StrEnum):
    OK = "ok"
    SKIPPED = "skipped"  # the case cannot run here: OOM, unsupported dtype, missing backend
    FAILED = "failed"  # the case raised something unexpected; the suite went on


class Stats(BaseModel):
    """Summary of timed samples, in seconds per iteration."""

    model_config = ConfigDict(frozen=True)

    n: int
    median: float
    mean: float
    min: float
    max: float
    p10: float
    p90: float
    stdev: float
    cv: float = Field(description="coefficient of variation: stdev / mean")
    q1: float | None = Field(default=None, description="25th percentile")
    q3: float | None = Field(default=None, description="75th percentile")
    robust_cv: float | None = Field(
        default=None,
        description="IQR / 1.349 / median: the CV a normal sample would have, unmoved by "
        "a few outliers",
    )
    outliers: int = Field(default=0, description="samples beyond 3 IQR of the quartiles")
    modes: list[float] = Field(
        default_factory=list,
        description="medians of two separate clusters of samples when the timing is "
        "bimodal (empty: one mode)",
    )
    mode_counts: list[int] = Field(default_factory=list, description="samples in each mode")

    @property
    def bimodal(self) -> bool:
        return len(self.modes) > 1

    @property
    def spread(self) -> float:
        """Robust CV where recorded, else the classical CV (run files from before it)."""
        return self.robust_cv if self.robust_cv is not None else self.cv


class DeviceInfo(BaseModel):
    """What ``gpuport.platform.detect`` found about the device a run used."""

    model_config = ConfigDict(frozen=True)

    backend: Literal["cuda", "rocm", "cpu"]
    name: str
    arch: str | None = Field(default=None, description="sm_90, gfx942, ... (None on CPU)")
    index: int = 0
    count: int = Field(default=0, description="GPUs of this platform visible to the process")
    multiprocessors: int | None = Field(default=None, description="SMs or CUs")
    memory_bytes: int | None = None
    warp_size: int | None = None
    l2_bytes: int | None = None
    driver: str | None = None
    runtime: str | None = Field(default=None, description="'CUDA 12.4' or 'HIP 6.2.41133'")
    torch: str | None = None
    libraries: dict[str, str] = Field(
        default_factory=dict, description="cudnn/miopen, nccl/rccl, blas versions where readable"
    )
    spec_key: str | None = Field(default=None, description="key of the matching gpus.toml entry")


class Telemetry(BaseModel):
    """Clocks, power and temperature read from NVML or amdsmi (None where unreadable)."""

    model_config = ConfigDict(frozen=True)

    sm_clock_mhz: float | None = None
    mem_clock_mhz: float | None = None
    power_w: float | None = None
    temperature_c: float | None = None
    power_limit_w: float | None = None
    throttle_reasons: list[str] = Field(default_factory=list)


class BenchResult(BaseModel):
    """One workload case: e.g. ``gemm`` / ``bf16 8192x8192x8192``."""

    model_config = ConfigDict(frozen=True)

    workload: str
    case: str = Field(description="stable name of the case in its workload; compare joins on it")
    params: dict[str, Any] = Field(default_factory=dict)
    status: CaseStatus = CaseStatus.OK
    reason: str | None = Field(default=None, description="why a case was skipped or failed")
    unit: str = Field(default="", description="unit of `value`: TFLOPS, GB/s, images/s, ...")
    value: float | None = Field(default=None, description="headline figure from the median time")
    higher_is_better: bool = True
    time: Stats | None = None
    samples: list[float] = Field(default_factory=list, description="raw seconds per iteration")
    work_per_iter: float | None = Field(
        default=None, description="FLOPs, bytes or items per iteration: value = work / median"
    )
    metrics: dict[str, float | str] = Field(
        default_factory=dict, description="secondary figures: busbw, backend, mfu, latency_ms ..."
    )
    peak: float | None = Field(default=None, description="spec peak in `unit` from gpus.toml")
    peak_pct: float | None = None
    achievable: float | None = Field(default=None, description="best published achieved figure")
    achievable_pct: float | None = None
    telemetry: Telemetry | None = None
    unstable: bool = Field(
        default=False,
        description="robust CV (IQR/1.349/median) above the threshold, or bimodal timings",
    )

    @property
    def key(self) -> tuple[str, str]:
        return (self.workload, self.case)


class BenchRun(BaseModel):
    """A whole ``gpuport bench`` run: what ``--output`` writes and the history stores."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["gpuport.bench"] = "gpuport.bench"
    schema_version: str = SCHEMA_VERSION
    id: str = Field(description="random id, unique across machines")
    label: str | None = None
    suite: Suite
    env: EnvFingerprint
    device: DeviceInfo
    settings: dict[str, str] = Field(
        default_factory=dict, description="env vars and flags that change numbers"
    )
    started: str
    duration_s: float
    results: list[BenchResult] = Field(default_factory=list)

    def result(self, workload: str, case: str) -> BenchResult | None:
        for r in self.results:
            if r.workload == workload and r.case == case:
                return r
        return None

    @property
    def display_name(self) -> str:
        return self.label or f"{self.device.name} ({self.id[:8]})"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def digest(self) -> str:
        """Content digest written with the run, checked on load (:mod:`gpuport.integrity`)."""
        return sealed_digest(self)


Verdict = Literal["faster", "slower", "same", "no significant change", "n/a"]


class CompareRow(BaseModel):
    """One workload case across runs; ratios are relative to the first (baseline) run."""

    model_config = ConfigDict(frozen=True)

    workload: str
    case: str
    unit: str
    higher_is_better: bool = True
    values: list[float | None] = Field(description="headline value per run (None: missing/skipped)")
    ratios: list[float | None] = Field(description="value / baseline value per run")
    ci_low: list[float | None]
    ci_high: list[float | None]
    verdicts: list[Verdict]
    notes: list[str] = Field(default_factory=list)
    family: str = Field(default="", description="workload family: compute, memory, model, ...")
    unstable: list[bool] = Field(
        default_factory=list, description="per run: robust CV above 5 % or bimodal timings"
    )


class FamilySummary(BaseModel):
    """The geometric mean of one workload family's ratios, per run."""

    model_config = ConfigDict(frozen=True)

    family: str
    workloads: list[str]
    cases: int
    geomean: list[float | None] = Field(description="per run; the baseline's is 1")
    significant: list[int] = Field(
        default_factory=list, description="per run: cases whose interval excludes no change"
    )
    unstable: list[int] = Field(default_factory=list, description="per run: unstable cases")


class Comparison(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: Literal["gpuport.compare"] = "gpuport.compare"
    schema_version: str = SCHEMA_VERSION
    runs: list[str] = Field(description="display names, baseline first")
    run_ids: list[str]
    devices: list[str]
    confidence: float = 0.95
    noise_threshold: float = Field(default=0.02, description="|ratio-1| below this is 'same'")
    rows: list[CompareRow]
    geomean: list[float | None] = Field(
        default_factory=list,
        description="geometric mean of every ratio per run: mixes unlike workloads, so the "
        "per-family geomeans are the ones to read",
    )
    families: list[FamilySummary] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="summary notes for the whole table")
