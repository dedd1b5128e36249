"""The timing protocol every workload shares, so numbers are comparable across vendors.

What it does, and why (research notes, benchmarks.md §1 and §5):

* device events on GPUs (``torch.cuda.Event``, which is a hipEvent on ROCm), so the
  time is the device's, not Python's; ``perf_counter`` plus a synchronise on CPU;
* warm-up first, then "settle": keep running short timed batches until two in a
  row agree within 2 %, because a cold accelerator boosts and then throttles;
* a cache flush before every timed iteration, sized from the device (at least
  twice L2 plus the last-level cache: MI300X's 256 MB Infinity Cache defeats the
  usual 256 MB flush), so a small GEMM does not run from cache;
* enough samples: at least ``min_samples`` *and* ``min_time_s``, bounded by
  ``max_samples`` and ``max_time_s``; raw samples are kept, summaries are robust
  (median, quartiles, IQR-based CV, outliers counted, two modes found when the timing
  is bimodal) as well as classical (mean, stdev, CV). "Unstable" rests on the robust
  figures: one 10x sample does not make a tight 43-46 µs case unstable.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from typing import Any, Protocol

from gpuport.bench.model import Stats
from gpuport.bench.registry import Measurement, TimingPolicy

SETTLE_TOLERANCE = 0.02
SETTLE_BATCH = 5
MIN_SAMPLES = 3
MIN_FLUSH_BYTES = 512 * 1024 * 1024  # when the cache sizes are unknown, be generous
NORMAL_IQR = 1.349  # IQR of a unit normal: IQR / 1.349 estimates sigma robustly
OUTLIER_IQRS = 3.0  # Tukey's "far out" fence: beyond 3 IQR of the quartiles
MIN_MODE = 3  # a mode needs at least this many samples (and a tenth of them)
MODE_GAP = 1.25  # the slower mode starts at least this many times the faster one's end


def percentile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default method) of already sorted values."""
    if not sorted_values:
        raise ValueError("percentile of no values")
    pos = (len(sorted_values) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    frac = pos - lo
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac


def summarize(samples: list[float]) -> Stats:
    """Median, quartiles, p10/p90, mean, min/max, stdev and CV of seconds-per-iteration
    samples, plus what makes the dispersion mean something: the robust CV (IQR / 1.349 /
    median, which a single 10x outlier barely moves), the count of outliers and the two
    modes of a bimodal timing (which a median would hide).
    """
    if not samples:
        raise ValueError("no samples to summarize")
    ordered = sorted(samples)
    mean = statistics.fmean(ordered)
    stdev = statistics.stdev(ordered) if len(ordered) > 1 else 0.0
    median = statistics.median(ordered)
    q1, q3 = percentile(ordered, 0.25), percentile(ordered, 0.75)
    iqr = q3 - q1
    fence = OUTLIER_IQRS * iqr
    outliers = sum(1 for x in ordered if x < q1 - fence or x > q3 + fence)
    modes, counts = find_modes(ordered)
    return Stats(
        n=len(ordered),
        median=median,
        mean=mean,
        min=ordered[0],
        max=ordered[-1],
        p10=percentile(ordered, 0.10),
        p90=percentile(ordered, 0.90),
        stdev=stdev,
        cv=stdev / mean if mean > 0 else 0.0,
        q1=q1,
        q3=q3,
        robust_cv=iqr / NORMAL_IQR / median if median > 0 else 0.0,
        outliers=outliers if iqr > 0 else 0,
        modes=modes,
        mode_counts=counts,
    )


def find_modes(ordered: list[float]) -> tuple[list[float], list[int]]:
    """Two clusters' medians and sizes when sorted samples split in two, else ([], []).

    The split is at the widest gap in log time that leaves at least a tenth of the
    samples (and MIN_MODE of them) on each side, so one outlier is never a mode. It
    counts as bimodal when the gap is at least MODE_GAP (the slower cluster starts 25 %
    above the faster one ends) and wider than twice either cluster's own interquartile
    range: two tight groups far apart, not one broad smear.
    """
    n = len(ordered)
    least = max(MIN_MODE, math.ceil(0.1 * n))
    if n < 2 * least or ordered[0] <= 0:
        return [], []
    logs = [math.log(x) for x in ordered]
    cut = max(range(least, n - least + 1), key=lambda i: logs[i] - logs[i - 1])
    gap = logs[cut] - logs[cut - 1]
    low, high = logs[:cut], logs[cut:]

    def iqr(values: list[float]) -> float:
        return percentile(values, 0.75) - percentile(values, 0.25)

    if gap < math.log(MODE_GAP) or gap < 2 * max(iqr(low), iqr(high)):
        return [], []
    return (
        [statistics.median(ordered[:cut]), statistics.median(ordered[cut:])],
        [cut, n - cut],
    )


class Timer(Protocol):
    """Times intervals; ``collect`` waits for the device and returns seconds per interval."""

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def collect(self) -> list[float]: ...


class HostTimer:
    """perf_counter around each iteration, synchronising first so device work is included.

    ``clock`` and ``sync`` are parameters so tests can drive the protocol with a fake clock.
    """

    def __init__(
        self,
        sync: Callable[[], object] | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._sync = sync
        self._clock = clock
        self._open: float | None = None
        self._done: list[float] = []

    def start(self) -> None:
        if self._sync is not None:
            self._sync()
        self._open = self._clock()

    def stop(self) -> None:
        if self._sync is not None:
            self._sync()
        if self._open is None:
            raise RuntimeError("stop() without start()")
        self._done.append(self._clock() - self._open)
        self._open = None

    def collect(self) -> list[float]:
        out, self._done = self._done, []
        return out


class DeviceEventTimer:
    """CUDA/HIP events recorded on the current stream; one synchronise per batch, not per call."""

    def __init__(self, torch: Any) -> None:
        self._torch = torch
        self._pairs: list[tuple[Any, Any]] = []
        self._open: Any = None

    def start(self) -> None:
        event = self._torch.cuda.Event(enable_timing=True)
        event.record()
        self._open = event

    def stop(self) -> None:
        end = self._torch.cuda.Event(enable_timing=True)
        end.record()
        self._pairs.append((self._open, end))
        self._open = None

    def collect(self) -> list[float]:
        self._torch.cuda.synchronize()
        out = [start.elapsed_time(end) / 1e3 for start, end in self._pairs]
        self._pairs = []
        return out


def make_flush(torch: Any, device: Any, nbytes: int) -> Callable[[], None]:
    """A function that overwrites an ``nbytes`` buffer on the device, evicting L2 and LLC."""
    buf = torch.empty(max(nbytes // 4, 1), dtype=torch.int32, device=device)

    def flush() -> None:
        buf.zero_()

    return flush


def flush_bytes(l2_bytes: int | None, spec_flush_bytes: int | None) -> int:
    """≥ 2 × (L2 + LLC) from the catalog when the GPU is known, else a generous default."""
    if spec_flush_bytes:
        return max(spec_flush_bytes, 2 * (l2_bytes or 0))
    return max(MIN_FLUSH_BYTES, 2 * (l2_bytes or 0))


def _run(fn: Callable[[], object], before: Callable[[], object] | None) -> None:
    if before is not None:
        before()
    fn()


def _timed_batch(
    fn: Callable[[], object],
    *,
    timer: Timer,
    count: int,
    before: Callable[[], object] | None,
    flush: Callable[[], None] | None,
) -> list[float]:
    for _ in range(count):
        if before is not None:
            before()
        if flush is not None:
            flush()
        timer.start()
        fn()
        timer.stop()
    return timer.collect()


def measure(
    fn: Callable[[], object],
    *,
    timer: Timer,
    policy: TimingPolicy,
    flush: Callable[[], None] | None = None,
    before: Callable[[], object] | None = None,
    work_per_iter: float | None = None,
    clock: Callable[[], float] = time.perf_counter,
    sync: Callable[[], object] | None = None,
) -> Measurement:
    """Warm up, settle, then sample ``fn`` under ``policy``; see the module docstring.

    ``flush`` is used as given (the caller decides from the policy). ``sync`` waits for
    the device: without it, warm-up on a GPU would only fill the launch queue, and
    the host clock would say the warm-up was over before the device had started it.
    """
    begin = clock()
    warm = 0
    while warm < policy.warmup_iters or clock() - begin < policy.warmup_s:
        _run(fn, before)
        if sync is not None:
            sync()
        warm += 1
        if warm >= 1000 * max(policy.warmup_iters, 1):
            break
    # Settle: short timed batches until two consecutive medians agree.
    settle_deadline = clock() + max(2 * policy.warmup_s, 0.0)
    previous: float | None = None
    settled = False
    settle_iters = 0
    while policy.settle:
        batch = _timed_batch(fn, timer=timer, count=SETTLE_BATCH, before=before, flush=flush)
        settle_iters += SETTLE_BATCH
        current = statistics.median(batch)
        if (
            previous is not None
            and previous > 0
            and abs(current / previous - 1) <= SETTLE_TOLERANCE
        ):
            settled = True
            break
        if previous is not None and clock() >= settle_deadline:
            break  # two batches at least, so there was something to compare
        previous = current
    if previous is None:  # no settle phase: estimate the iteration time from one timed call
        current = statistics.median(
            _timed_batch(fn, timer=timer, count=1, before=before, flush=flush)
        )
        settle_iters += 1
    per_iter = max(current, 1e-9)
    chunk = max(1, min(50, int(0.05 / per_iter)))
    samples: list[float] = []
    start = clock()
    while True:
        want = policy.max_samples - len(samples)
        if want <= 0:
            break
        samples.extend(
            _timed_batch(fn, timer=timer, count=min(chunk, want), before=before, flush=flush)
        )
        elapsed = clock() - start
        if elapsed >= policy.max_time_s and len(samples) >= min(policy.min_samples, MIN_SAMPLES):
            break  # the time cap never leaves fewer than MIN_SAMPLES: one sample has no spread
        if len(samples) >= policy.min_samples and elapsed >= policy.min_time_s:
            break
    return Measurement(
        samples=samples,
        stats=summarize(samples),
        work_per_iter=work_per_iter,
        metrics={
            "warmup_iters": float(warm + settle_iters),
            "settled": "yes" if settled else ("no" if policy.settle else "off"),
        },
    )
