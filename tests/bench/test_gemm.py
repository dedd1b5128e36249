"""The gemm workload: case lists per suite/device, FLOP counts, skips, validation, MAMF summary."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from gpuport.bench.model import BenchResult, CaseStatus, DeviceInfo
from gpuport.bench.registry import BenchContext, Skip, TimingPolicy
from gpuport.bench.workloads import gemm

torch = pytest.importorskip("torch")

H100 = DeviceInfo(backend="cuda", name="NVIDIA H100 80GB HBM3", arch="sm_90", count=1)
MI300X = DeviceInfo(backend="rocm", name="AMD Instinct MI300X", arch="gfx942", count=1)


def gpu_ctx(info: DeviceInfo, suite: str = "quick", **options: Any) -> BenchContext:
    """A context shaped like a GPU machine, for building case lists (never run here)."""

    def no_measure(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("case lists must not time anything")

    return BenchContext(
        torch=torch,
        device=torch.device("cpu"),
        info=info,
        spec=None,
        suite=suite,  # type: ignore[arg-type]
        kernel_policy=TimingPolicy(),
        model_policy=TimingPolicy(),
        measure=no_measure,
        options=options,
    )


@pytest.fixture
def native_fp8(monkeypatch: pytest.MonkeyPatch) -> None:
    """The FP8 flavour per device as gpuport.platform reports it (fixed here for the test)."""
    flavours = {"sm_90": "float8_e4m3fn", "gfx942": "float8_e4m3fnuz", "gfx950": "float8_e4m3fn"}
    monkeypatch.setattr(gemm, "_native_fp8", lambda info: flavours.get(info.arch or ""))


def by_name(ctx: BenchContext) -> dict[str, Any]:
    return {case.name: case for case in gemm.WORKLOAD.cases(ctx)}


def test_flops_are_two_mnk() -> None:
    assert gemm.flops(256, 256, 256) == 33_554_432
    assert gemm.flops(4096, 8192, 1024) == 2 * 4096 * 8192 * 1024 == 68_719_476_736


def test_cpu_quick_is_a_shape_sweep_like_the_gpu_one(cpu_ctx: BenchContext) -> None:
    """Three shapes for bf16/fp32 (the best of them is the MAMF), fp16 to 512 (emulated,
    slow on CPUs), one skipped row each for tf32 and fp8."""
    cases = gemm.WORKLOAD.cases(cpu_ctx)
    names = [c.name for c in cases]
    cubes = ["256x256x256", "512x512x512", "1024x1024x256"]
    assert names == (
        [f"bf16 {c}" for c in cubes]
        + [f"fp16 {c}" for c in cubes[:2]]
        + [f"fp32 {c}" for c in cubes]
        + ["tf32 256x256x256", "fp8 256x256x256"]
    )
    for case in cases:
        dtype = case.name.split()[0]
        assert case.params["dtype"] == dtype
        assert case.peak == ("tflops", dtype)
        assert case.unit == "TFLOPS" and case.scale == 1e12


def test_cpu_full_sweeps_27_shapes(cpu_ctx: BenchContext) -> None:
    import dataclasses

    full = dataclasses.replace(cpu_ctx, suite="full")
    assert len(gemm.shapes_for(full, "bf16")) == 27
    assert (256, 2048, 1024) in gemm.shapes_for(full, "fp32")
    assert all(max(s) <= gemm.CPU_FP16_MAX for s in gemm.shapes_for(full, "fp16"))


@pytest.mark.parametrize("dtype", ["fp32", "bf16", "fp16"])
def test_cpu_case_measures_two_mnk_flops_and_checks_the_product(
    cpu_ctx: BenchContext, dtype: str
) -> None:
    case = by_name(cpu_ctx)[f"{dtype} 256x256x256"]
    result = case.run(cpu_ctx)
    assert result.work_per_iter == 2 * 256**3
    assert result.params == {"m": 256, "n": 256, "k": 256, "dtype": dtype}
    assert result.stats.n == len(result.samples) >= 1
    assert result.stats.median > 0


def test_tf32_and_fp8_skip_on_cpu_with_a_reason(cpu_ctx: BenchContext) -> None:
    cases = by_name(cpu_ctx)
    with pytest.raises(Skip, match="TF32 is a GPU tensor-core mode"):
        cases["tf32 256x256x256"].run(cpu_ctx)
    with pytest.raises(Skip, match=r"^fp8 GEMM needs a GPU with FP8 matrix units$"):
        cases["fp8 256x256x256"].run(cpu_ctx)


def test_dtypes_option_restricts_the_sweep(cpu_ctx: BenchContext) -> None:
    ctx = dataclasses.replace(cpu_ctx, options={"dtypes": ["bf16", "fp8"]})
    names = [c.name for c in gemm.WORKLOAD.cases(ctx)]
    assert names == [f"bf16 {s}" for s in ("256x256x256", "512x512x512", "1024x1024x256")] + [
        "fp8 256x256x256"
    ]


@pytest.mark.usefixtures("native_fp8")
def test_gpu_quick_sweep_is_large_shapes_and_fp32_is_trimmed() -> None:
    names = list(by_name(gpu_ctx(H100)))
    for dtype in ("bf16", "fp16", "tf32", "fp8"):
        assert [n for n in names if n.startswith(dtype + " ")] == [
            f"{dtype} 4096x4096x4096",
            f"{dtype} 8192x8192x8192",
            f"{dtype} 8192x8192x16384",
        ]
    assert [n for n in names if n.startswith("fp32 ")] == [
        "fp32 4096x4096x4096",
        "fp32 8192x8192x8192",
    ]


@pytest.mark.usefixtures("native_fp8")
def test_gpu_full_sweep_is_a_grid() -> None:
    cases = gemm.WORKLOAD.cases(gpu_ctx(H100, suite="full"))
    per_dtype = {d: [c for c in cases if c.params["dtype"] == d] for d in gemm.DTYPES}
    assert len(per_dtype["bf16"]) == 4**3
    assert len(per_dtype["fp32"]) == 3**3
    shapes = {(c.params["m"], c.params["n"], c.params["k"]) for c in per_dtype["bf16"]}
    assert (2048, 16384, 4096) in shapes and (16384, 16384, 16384) in shapes


def test_fp8_flavour_mismatch_skips_with_the_right_format() -> None:
    reason = gemm.fp8_problem(MI300X, "float8_e4m3fnuz", "float8_e4m3fn")
    assert reason == ("float8_e4m3fn is not supported on gfx942 (MI300-class uses float8_e4m3fnuz)")
    reason = gemm.fp8_problem(H100, "float8_e4m3fn", "float8_e4m3fnuz")
    assert reason is not None and reason.startswith("float8_e4m3fnuz is not supported on sm_90")
    assert gemm.fp8_problem(MI300X, "float8_e4m3fnuz", None) is None
    assert gemm.fp8_problem(H100, "float8_e4m3fn", "float8_e4m3fn") is None
    a100 = H100.model_copy(update={"arch": "sm_80", "name": "NVIDIA A100"})
    assert "sm_80 has no FP8 matrix units" in str(gemm.fp8_problem(a100, None, None))
    assert "unknown fp8_format 'e5m2'" in str(gemm.fp8_problem(H100, "float8_e4m3fn", "e5m2"))


@pytest.mark.usefixtures("native_fp8")
def test_unrunnable_fp8_is_one_skipped_row_not_one_per_shape() -> None:
    ctx = gpu_ctx(MI300X, fp8_format="float8_e4m3fn")
    fp8 = [c for c in gemm.WORKLOAD.cases(ctx) if c.params["dtype"] == "fp8"]
    assert len(fp8) == 1
    with pytest.raises(Skip, match="MI300-class uses float8_e4m3fnuz"):
        fp8[0].run(ctx)


def test_tf32_skips_before_ampere() -> None:
    t4 = DeviceInfo(backend="cuda", name="Tesla T4", arch="sm_75")
    tf32 = [c for c in gemm.WORKLOAD.cases(gpu_ctx(t4, dtypes=["tf32"]))]
    assert len(tf32) == 1
    with pytest.raises(Skip, match=r"TF32 needs sm_80 or newer \(this GPU is sm_75\)"):
        tf32[0].run(gpu_ctx(t4))


def test_tf32_mode_is_set_for_the_case_and_restored() -> None:
    matmul = torch.backends.cuda.matmul
    knob = "fp32_precision" if getattr(matmul, "fp32_precision", None) is not None else None
    before = getattr(matmul, knob) if knob else matmul.allow_tf32
    with gemm.fp32_matmul_mode(torch, tf32=True):
        assert (getattr(matmul, knob) == "tf32") if knob else matmul.allow_tf32
    with gemm.fp32_matmul_mode(torch, tf32=False):
        assert (getattr(matmul, knob) == "ieee") if knob else not matmul.allow_tf32
    assert (getattr(matmul, knob) if knob else matmul.allow_tf32) == before


def test_check_result_accepts_a_product_and_rejects_a_wrong_one() -> None:
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(128, 96, generator=gen, dtype=torch.bfloat16)
    b = torch.randn(80, 96, generator=gen, dtype=torch.bfloat16).t()
    c = torch.mm(a, b)
    assert gemm.check_result(torch, a, b, c, "bf16") < 0.05
    stale = c.clone()
    stale[-5:, -5:] = torch.randn(5, 5, generator=gen, dtype=torch.bfloat16)  # an untouched tile
    with pytest.raises(RuntimeError, match="gemm bf16: result differs"):
        gemm.check_result(torch, a, b, stale, "bf16")
    with pytest.raises(RuntimeError, match="matmul kernel is wrong"):
        gemm.check_result(torch, a, b, torch.full_like(c, float("nan")), "bf16")


def test_check_result_handles_fp8_inputs() -> None:
    gen = torch.Generator().manual_seed(1)
    a = torch.randn(64, 64, generator=gen).to(torch.float8_e4m3fn)
    b = torch.randn(64, 64, generator=gen).to(torch.float8_e4m3fn).t()
    one = torch.ones((), dtype=torch.float32)
    c = torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16)
    assert gemm.check_result(torch, a, b, c, "fp8") < 0.05


def _result(case: str, value: float | None, status: CaseStatus = CaseStatus.OK) -> BenchResult:
    dtype = case.split()[0]
    return BenchResult(
        workload="gemm", case=case, params={"dtype": dtype}, value=value, status=status
    )


def test_best_by_dtype_picks_the_fastest_ok_case_per_dtype() -> None:
    results = [
        _result("fp8 4096x4096x4096", 1200.0),
        _result("bf16 4096x4096x4096", 610.0),
        _result("bf16 8192x8192x8192", 702.5),
        _result("bf16 8192x8192x16384", 650.0),
        _result("fp16 4096x4096x4096", None, CaseStatus.SKIPPED),
        _result("fp32 4096x4096x4096", 50.0, CaseStatus.FAILED),
        BenchResult(workload="attention", case="bf16 x", params={"dtype": "bf16"}, value=900.0),
    ]
    best = gemm.best_by_dtype(results)
    assert list(best) == ["bf16", "fp8"]  # DTYPES order, skipped/failed/other workloads out
    assert best["bf16"].case == "bf16 8192x8192x8192"
    assert best["fp8"].value == 1200.0


def test_fp8_flavour_comes_from_the_platform_layer() -> None:
    """Unpatched: gpuport.platform says which e4m3 flavour each device computes in."""
    h100 = gemm.WORKLOAD.cases(gpu_ctx(H100, dtypes=["fp8"]))
    assert len(h100) == 3  # runnable: the whole quick sweep
    for forced in ("float8_e4m3fn", "e4m3fn"):  # the CLI passes the short name
        ctx = gpu_ctx(MI300X, dtypes=["fp8"], fp8_format=forced)
        mi300 = gemm.WORKLOAD.cases(ctx)
        with pytest.raises(Skip, match="float8_e4m3fn is not supported on gfx942"):
            mi300[0].run(ctx)
    assert len(gemm.WORKLOAD.cases(gpu_ctx(MI300X, dtypes=["fp8"], fp8_format="e4m3fnuz"))) == 3


def test_precision_mode_mislabels_are_refused() -> None:
    import torch

    from gpuport.bench.registry import Skip
    from gpuport.bench.workloads.gemm import check_result, precision_mode_check

    a = torch.randn(256, 1024)
    b = torch.randn(256, 1024).t()

    def tf32(x: torch.Tensor) -> torch.Tensor:  # emulate TF32 inputs: keep 10 mantissa bits
        return (x.contiguous().view(torch.int32) & ~0x1FFF).view(torch.float32)

    ieee = check_result(torch, a, b, a @ b, "fp32")
    reduced = check_result(torch, a, b, tf32(a) @ tf32(b), "tf32")
    precision_mode_check("fp32", ieee)  # fine
    precision_mode_check("tf32", reduced)  # fine
    with pytest.raises(Skip, match="ignored"):
        precision_mode_check("tf32", ieee)  # "tf32" that was really fp32
    with pytest.raises(RuntimeError, match="reduced precision"):
        precision_mode_check("fp32", reduced)  # "fp32" that was really tf32
