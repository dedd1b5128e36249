"""The membw workload: bytes per kernel, array sizing against caches, no flush, validation."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from gpuport.bench.model import DeviceInfo
from gpuport.bench.registry import BenchContext, Measurement, TimingPolicy
from gpuport.bench.workloads import membw
from gpuport.knowledge.gpus import GpuSpec

torch = pytest.importorskip("torch")

MIB = 1 << 20
GIB = 1 << 30


def spec(l2_mb: float, llc_mb: float = 0.0) -> GpuSpec:
    return GpuSpec(
        key="test-gpu",
        name="Test GPU",
        vendor="amd" if llc_mb else "nvidia",
        arch="gfx942" if llc_mb else "sm_90",
        memory_gb=80,
        bandwidth_gbs=3350,
        peak_tflops={"bf16": 989},
        tdp_w=700,
        wave_size=64 if llc_mb else 32,
        l2_mb=l2_mb,
        llc_mb=llc_mb,
        sources=["https://example.com/spec"],
        checked=dt.date(2026, 1, 1),
    )


def gpu_ctx(
    suite: str = "quick",
    gpu_spec: GpuSpec | None = None,
    backend: str = "cuda",
    memory: int | None = 80 * GIB,
    l2: int | None = 50 * MIB,
) -> BenchContext:
    """A context shaped like a GPU machine, for sizing and case lists (never run here)."""
    info = DeviceInfo(backend=backend, name="GPU", arch="x", memory_bytes=memory, l2_bytes=l2)  # type: ignore[arg-type]
    return BenchContext(
        torch=torch,
        device=torch.device("cpu"),
        info=info,
        spec=gpu_spec,
        suite=suite,  # type: ignore[arg-type]
        kernel_policy=TimingPolicy(),
        model_policy=TimingPolicy(),
        measure=lambda *a, **k: None,
    )


def test_bytes_counted_per_kernel() -> None:
    n = 1 << 20
    assert membw.bytes_per_iter("copy", n) == 2 * n * 4 == 8 * MIB
    assert membw.bytes_per_iter("scale", n) == 8 * MIB
    assert membw.bytes_per_iter("add", n) == 12 * MIB
    assert membw.bytes_per_iter("triad", n) == 12 * MIB
    assert membw.bytes_per_iter("read", n) == 4 * MIB  # a pure read: 1 array, not Dot's 2


@pytest.fixture
def small_llc(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CPU whose last-level cache is 1 MiB: 4 MiB arrays, quick to run in a test."""
    monkeypatch.setattr(membw, "cpu_cache_bytes", lambda: 1 * MIB)


def test_cpu_arrays_follow_the_llc_and_every_kernel_is_a_case(
    cpu_ctx: BenchContext, small_llc: None
) -> None:
    cases = membw.WORKLOAD.cases(cpu_ctx)
    assert [c.name for c in cases] == ["copy", "scale", "add", "triad", "read"]
    for case in cases:
        assert case.params["elements"] == 1 << 20
        assert case.params["array_bytes"] == 4 * MIB
        assert case.unit == "GB/s" and case.scale == 1e9
        assert case.peak == ("bandwidth", case.name)


@pytest.mark.parametrize("kernel", ["copy", "scale", "add", "triad", "read"])
def test_each_kernel_runs_validates_and_counts_its_bytes(
    cpu_ctx: BenchContext, kernel: str, small_llc: None
) -> None:
    seen: dict[str, Any] = {}

    def spy(fn: Any, **kwargs: Any) -> Measurement:
        seen.update(kwargs)
        result: Measurement = cpu_ctx.measure(fn, **kwargs)
        return result

    ctx = dataclasses.replace(cpu_ctx, measure=spy)
    case = next(c for c in membw.WORKLOAD.cases(ctx) if c.name == kernel)
    result = case.run(ctx)
    assert seen["flush"] is False  # the working set defeats caches, not a flush
    assert result.work_per_iter == membw.ARRAYS[kernel] * (1 << 20) * 4
    assert result.params["working_set_bytes"] == result.work_per_iter
    assert result.stats.median > 0


def test_gpu_array_is_at_least_four_times_l2_plus_llc() -> None:
    # H100-like: 4 x 50 MiB = 200 MiB < 256 MiB floor.
    ctx = gpu_ctx(gpu_spec=spec(l2_mb=50))
    assert membw.array_elements(ctx) * 4 == 256 * MIB
    # MI300X-like: 4 x (4 + 256) MiB = 1040 MiB per array.
    ctx = gpu_ctx(gpu_spec=spec(l2_mb=4, llc_mb=256))
    assert membw.array_elements(ctx) * 4 == 1040 * MIB
    case = membw.WORKLOAD.cases(ctx)[0]
    assert case.params["working_set_bytes"] == 2 * 1040 * MIB
    assert case.params["llc_multiple"] == 8.0  # copy touches 2 arrays of 4x the caches each


def test_full_suite_uses_at_least_one_gib_per_array() -> None:
    assert membw.array_elements(gpu_ctx(suite="full", gpu_spec=spec(50))) == 1 << 28


def test_unknown_rocm_gpu_assumes_an_infinity_cache() -> None:
    ctx = gpu_ctx(backend="rocm", l2=4 * MIB)
    assert membw.cache_bytes(ctx) == 260 * MIB
    assert membw.array_elements(ctx) * 4 == 1040 * MIB


def test_three_arrays_fit_in_device_memory() -> None:
    ctx = gpu_ctx(suite="full", gpu_spec=spec(50), memory=2 * GIB)
    per_array = membw.array_elements(ctx) * 4
    assert 3 * per_array <= 0.6 * 2 * GIB
    assert per_array % (4 * MIB) == 0


def test_unknown_caches_fall_back_to_the_floor_and_say_so() -> None:
    ctx = gpu_ctx(l2=None)
    assert membw.cache_bytes(ctx) is None
    case = membw.WORKLOAD.cases(ctx)[0]
    assert case.params["array_bytes"] == 256 * MIB
    assert case.params["llc_multiple"] is None


def _arrays(n: int = 1 << 16) -> tuple[Any, Any, Any]:
    gen = torch.Generator().manual_seed(3)
    a, b, c = (torch.randn(n, generator=gen) for _ in range(3))
    return a, b, c


def test_check_kernel_accepts_right_results() -> None:
    a, b, c = _arrays()
    c.copy_(a)
    membw.check_kernel(torch, "copy", a, b, c, None)
    torch.mul(c, membw.SCALAR, out=b)
    membw.check_kernel(torch, "scale", a, b, c, None)
    torch.add(a, b, out=c)
    membw.check_kernel(torch, "add", a, b, c, None)
    torch.add(b, c, alpha=membw.SCALAR, out=a)
    membw.check_kernel(torch, "triad", a, b, c, None)
    membw.check_kernel(torch, "read", a, b, c, torch.sum(a))


def test_check_kernel_rejects_wrong_results() -> None:
    a, b, c = _arrays()
    torch.add(a, b, out=c)
    c[: len(c) // 2] = 0.0  # half the output never written
    with pytest.raises(RuntimeError, match=r"membw add: .* sampled elements differ"):
        membw.check_kernel(torch, "add", a, b, c, None)
    torch.add(b, c, out=a)  # alpha forgotten
    with pytest.raises(RuntimeError, match="membw triad"):
        membw.check_kernel(torch, "triad", a, b, c, None)
    with pytest.raises(RuntimeError, match=r"membw read: .* reduction kernel is wrong"):
        membw.check_kernel(torch, "read", a, b, c, torch.sum(a[: len(a) // 2]))


def _sysfs(root: Path, caches: list[tuple[int, str, str]]) -> Path:
    for i, (level, kind, size) in enumerate(caches):
        index = root / "cpu0" / "cache" / f"index{i}"
        index.mkdir(parents=True)
        (index / "level").write_text(f"{level}\n")
        (index / "type").write_text(f"{kind}\n")
        (index / "size").write_text(f"{size}\n")
    return root


def test_cpu_llc_is_read_from_sysfs(tmp_path: Path) -> None:
    """The field trial's Zen 5: 32K L1d/L1i, 1M L2, 32M L3 -> the L3 is the LLC."""
    root = _sysfs(
        tmp_path,
        [(1, "Data", "32K"), (1, "Instruction", "32K"), (2, "Unified", "1024K"),
         (3, "Unified", "32768K")],
    )  # fmt: skip
    assert membw.cpu_cache_bytes(root) == 32 * MIB
    # No L3 (a small Arm core): the L2 is the last level.
    root2 = _sysfs(tmp_path / "arm", [(1, "Data", "64K"), (2, "Unified", "1M")])
    assert membw.cpu_cache_bytes(root2) == 1 * MIB


def test_cpu_arrays_are_four_times_a_32_mib_l3(
    cpu_ctx: BenchContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(membw, "cpu_cache_bytes", lambda: 32 * MIB)
    (case,) = [c for c in membw.WORKLOAD.cases(cpu_ctx) if c.name == "triad"]
    assert case.params["array_bytes"] == 128 * MIB  # 4 MiB arrays measured the L3
    assert case.params["array_llc_multiple"] == 4.0 and case.params["llc_bytes"] == 32 * MIB


def _stream_triad_gbs(n: int, repeats: int = 9) -> float:
    """An independent STREAM triad, a = b + s*c, timed here with perf_counter: the median
    of ``repeats``, counted as STREAM counts it (3 arrays of 4-byte floats).

    torch's fused ``add(alpha=)`` with the same thread count as the bench: a numpy triad
    is two passes on one thread, which measures a different thing on a multi-core CPU.
    """
    import time

    a = torch.empty(n)
    b = torch.full((n,), 1.0)
    c = torch.full((n,), 2.0)
    torch.add(b, c, alpha=0.4, out=a)  # first touch: page faults are not bandwidth
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        torch.add(b, c, alpha=0.4, out=a)
        rates.append(3 * 4 * n / (time.perf_counter() - t0) / 1e9)
    assert float(a[n // 2]) == pytest.approx(1.8)
    return sorted(rates)[len(rates) // 2]


def test_cpu_membw_agrees_with_an_independent_large_array_triad(cpu_ctx: BenchContext) -> None:
    """Done-when of issue 17: membw's triad within 30 % of a STREAM-style triad timed here,
    both on arrays >= 4x this machine's last-level cache (read from the system).

    Each round times the independent triad before and after the bench case; the median
    ratio of five rounds is checked, so one round disturbed by another process on a
    shared machine does not decide it.
    """
    llc = membw.cpu_cache_bytes()
    assert llc, "this Linux machine's caches should be readable from sysfs"
    n = membw.array_elements(cpu_ctx)
    assert n * 4 >= 4 * llc
    (case,) = [c for c in membw.WORKLOAD.cases(cpu_ctx) if c.name == "triad"]
    ratios = []
    for _ in range(5):  # five: three gave 1.45, 0.82, 1.37 on a shared machine at load 8
        before = _stream_triad_gbs(n)
        result = case.run(cpu_ctx)
        after = _stream_triad_gbs(n)
        gbs = (result.work_per_iter or 0) / result.stats.median / 1e9
        ratios.append(gbs / ((before + after) / 2))
    ratio = sorted(ratios)[2]
    assert abs(ratio - 1) <= 0.30, ratios
