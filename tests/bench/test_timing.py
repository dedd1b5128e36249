"""The timing protocol, driven by a fake clock so every number is known in advance."""

from __future__ import annotations

import statistics

import pytest

from gpuport.bench.registry import TimingPolicy
from gpuport.bench.timing import HostTimer, flush_bytes, measure, percentile, summarize


class FakeClock:
    """A clock that only moves when the fake workload 'runs'."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def fake_step(clock: FakeClock, durations: list[float], tail: float) -> tuple[list[int], object]:
    """A step whose i-th call takes durations[i] seconds, then ``tail`` forever."""
    calls = [0]

    def step() -> None:
        i = calls[0]
        clock.now += durations[i] if i < len(durations) else tail
        calls[0] += 1

    return calls, step


def test_summarize_by_hand() -> None:
    s = summarize([float(x) for x in range(10, 0, -1)])  # 10..1, unsorted on purpose
    assert s.n == 10
    assert s.median == 5.5
    assert s.mean == 5.5
    assert s.min == 1 and s.max == 10
    assert s.p10 == pytest.approx(1.9)  # position 0.9 between 1 and 2
    assert s.p90 == pytest.approx(9.1)
    assert s.stdev == pytest.approx(3.0276503540974917)
    assert s.cv == pytest.approx(3.0276503540974917 / 5.5)


def test_summarize_single_and_empty() -> None:
    one = summarize([2.0])
    assert (one.median, one.stdev, one.cv, one.p10, one.p90) == (2.0, 0.0, 0.0, 2.0, 2.0)
    with pytest.raises(ValueError):
        summarize([])
    assert percentile([1.0, 3.0], 0.5) == 2.0


def test_warmup_is_excluded_and_min_samples_reached() -> None:
    clock = FakeClock()
    # 5 cold calls at 10 ms, then steady 1 ms.
    calls, step = fake_step(clock, [0.010] * 5, 0.001)
    policy = TimingPolicy(min_samples=100, min_time_s=0.0, warmup_iters=5, warmup_s=0.0)
    m = measure(step, timer=HostTimer(clock=clock), policy=policy, clock=clock, work_per_iter=2e9)
    assert len(m.samples) >= 100
    assert all(s == pytest.approx(0.001) for s in m.samples)  # no cold call was kept
    assert m.stats.median == pytest.approx(0.001)
    assert m.work_per_iter == 2e9
    assert m.metrics["settled"] == "yes"
    assert calls[0] > len(m.samples) + 5  # warm-up and settle calls happened too


def test_min_time_extends_sampling() -> None:
    clock = FakeClock()
    _, step = fake_step(clock, [], 0.002)
    policy = TimingPolicy(
        min_samples=10, min_time_s=0.5, max_time_s=5, warmup_iters=1, warmup_s=0.0
    )
    m = measure(step, timer=HostTimer(clock=clock), policy=policy, clock=clock)
    # 10 samples would take 20 ms; 0.5 s of sampling needs 250, plus at most one batch of
    # 50 ms (25 samples) because the device is synchronised once per batch, not per call.
    assert 250 <= len(m.samples) <= 275


def test_max_time_bounds_slow_steps() -> None:
    clock = FakeClock()
    _, step = fake_step(clock, [], 1.0)
    policy = TimingPolicy(
        min_samples=100, min_time_s=0.0, max_time_s=3.0, warmup_iters=1, warmup_s=0.0, settle=False
    )
    m = measure(step, timer=HostTimer(clock=clock), policy=policy, clock=clock)
    assert 3 <= len(m.samples) <= 4
    assert m.metrics["settled"] == "off"


def test_time_cap_still_keeps_three_samples() -> None:
    clock = FakeClock()
    _, step = fake_step(clock, [], 5.0)  # a step far slower than the whole budget
    policy = TimingPolicy(
        min_samples=20, min_time_s=0.0, max_time_s=1.0, warmup_iters=1, warmup_s=0.0, settle=False
    )
    m = measure(step, timer=HostTimer(clock=clock), policy=policy, clock=clock)
    assert len(m.samples) == 3


def test_settle_waits_for_clocks_to_stabilise() -> None:
    clock = FakeClock()
    # Boost then throttle: 0.5 ms for 20 calls, then a steady 1 ms.
    _, step = fake_step(clock, [0.0005] * 20, 0.001)
    policy = TimingPolicy(min_samples=50, min_time_s=0.0, warmup_iters=1, warmup_s=1.0)
    m = measure(step, timer=HostTimer(clock=clock), policy=policy, clock=clock)
    assert statistics.median(m.samples) == pytest.approx(0.001)
    assert all(s == pytest.approx(0.001) for s in m.samples)


def test_before_and_flush_run_outside_the_timed_region() -> None:
    clock = FakeClock()
    _, step = fake_step(clock, [], 0.001)
    events: list[str] = []

    def before() -> None:
        clock.now += 0.5  # expensive untimed preparation
        events.append("before")

    def flush() -> None:
        clock.now += 0.25
        events.append("flush")

    policy = TimingPolicy(
        min_samples=20, min_time_s=0.0, warmup_iters=1, warmup_s=0.0, max_time_s=1e9
    )
    m = measure(
        step, timer=HostTimer(clock=clock), policy=policy, clock=clock, before=before, flush=flush
    )
    assert all(s == pytest.approx(0.001) for s in m.samples)
    assert events.count("flush") >= len(m.samples)
    events.clear()
    measure(step, timer=HostTimer(clock=clock), policy=policy, clock=clock, flush=None)
    assert "flush" not in events  # no flush given, none run (the caller decides)


def test_warmup_waits_for_the_device() -> None:
    clock = FakeClock()
    _, step = fake_step(clock, [], 0.001)
    syncs: list[int] = []
    policy = TimingPolicy(min_samples=5, min_time_s=0.0, warmup_iters=7, warmup_s=0.0)
    measure(
        step, timer=HostTimer(clock=clock), policy=policy, clock=clock, sync=lambda: syncs.append(1)
    )
    assert len(syncs) >= 7  # every warm-up call is waited for


def test_host_timer_synchronises_around_each_interval() -> None:
    syncs: list[int] = []
    clock = FakeClock()
    timer = HostTimer(sync=lambda: syncs.append(1), clock=clock)
    timer.start()
    clock.now += 0.25
    timer.stop()
    assert timer.collect() == [0.25]
    assert len(syncs) == 2
    assert timer.collect() == []


def test_flush_size_covers_l2_and_infinity_cache() -> None:
    mib = 1024 * 1024
    # MI300X: 256 MB Infinity Cache + 4 MB L2 -> at least 2 x 260 MiB.
    assert flush_bytes(4 * mib, int(2 * 260 * mib)) >= 520 * mib
    assert flush_bytes(50 * mib, None) >= 512 * mib  # unknown GPU: generous default
    assert flush_bytes(None, None) >= 512 * mib
