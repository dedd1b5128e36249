"""The workload registry and the context every workload receives.

A workload is a name plus a function that, given a :class:`BenchContext`,
returns its :class:`Case`s for the chosen suite size. Each case is run on its
own by the runner: an exception in one case (out of memory, an unsupported
dtype, a missing backend) becomes a skipped or failed result and the suite goes
on. Workloads never print; they time through ``ctx.measure`` so the timing
protocol (warm-up, cache flush, sample count) is the same everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal

from gpuport.bench.model import DeviceInfo, Stats, Suite
from gpuport.knowledge.gpus import GpuSpec


class Skip(Exception):
    """Raised by a case that cannot run here; the message is the reason shown to the user."""


@dataclass(frozen=True)
class TimingPolicy:
    """How long to time one case.

    Sampling stops once both ``min_samples`` and ``min_time_s`` are reached, or
    at ``max_time_s`` / ``max_samples`` whichever comes first. Warm-up runs for at
    least ``warmup_iters`` iterations and ``warmup_s`` seconds.
    """

    min_samples: int = 100
    min_time_s: float = 0.1
    max_samples: int = 10_000
    max_time_s: float = 5.0
    warmup_iters: int = 5
    warmup_s: float = 0.05
    flush_cache: bool = True
    # Timed settle batches after warm-up until two agree within 2 %; off for long model steps,
    # where a fixed count of warm-up steps is the convention (SemiAnalysis: 32 steps).
    settle: bool = True


@dataclass(frozen=True)
class Measurement:
    """What a case returns: timed samples plus how much work one iteration does."""

    samples: list[float]
    stats: Stats
    work_per_iter: float | None = None
    metrics: dict[str, float | str] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    """One timed configuration of a workload (a shape, a dtype, a batch size...)."""

    name: str
    run: Callable[[BenchContext], Measurement]
    params: dict[str, Any] = field(default_factory=dict)
    unit: str = "TFLOPS"
    # Headline value = work_per_iter / median seconds, divided by ``scale``
    # (1e12 for TFLOPS, 1e9 for GB/s, 1 for items/s).
    scale: float = 1e12
    higher_is_better: bool = True
    # Which spec figure to compare against: ("tflops", "bf16"), ("bandwidth", None) or None.
    peak: tuple[Literal["tflops", "bandwidth", "busbw"], str | None] | None = None


@dataclass(frozen=True)
class Workload:
    name: str
    summary: str
    cases: Callable[[BenchContext], list[Case]]
    needs: tuple[str, ...] = ()  # optional modules, e.g. ("torchvision",): skip names them


@dataclass
class BenchContext:
    """Everything a workload needs to build and time its cases."""

    torch: ModuleType
    device: Any  # torch.device
    info: DeviceInfo
    spec: GpuSpec | None
    suite: Suite
    kernel_policy: TimingPolicy
    model_policy: TimingPolicy
    measure: Callable[..., Measurement]
    # measure(fn, *, policy, work_per_iter=None, setup=None) -> Measurement
    options: dict[str, Any] = field(default_factory=dict)
    seed: int = 0

    @property
    def on_gpu(self) -> bool:
        return self.info.backend != "cpu"

    @property
    def quick(self) -> bool:
        return self.suite == "quick"


WORKLOADS: dict[str, Workload] = {}


def register(workload: Workload) -> Workload:
    if workload.name in WORKLOADS:
        raise ValueError(f"workload {workload.name} registered twice")
    WORKLOADS[workload.name] = workload
    return workload
