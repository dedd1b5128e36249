"""``gemm``: maximum achievable matmul FLOPS (MAMF), in the manner of stas00's mamf-finder.

Why a sweep and not one shape: the best shape differs per GPU and per BLAS library
(cuBLAS, hipBLASLt), and the published "achievable" figures we compare against are
the best over a sweep. Each shape is its own case so that ``compare`` can join two
machines shape by shape; :func:`best_by_dtype` then picks the MAMF per dtype.

Protocol (research notes §1.1 and §5): ``torch.mm(A, B, out=C)`` with ``B`` built
(n, k) then transposed (the layout mamf-finder found best on MI300X), ``C``
re-randomised before every iteration so writes really happen and draw power, inputs
~N(0, 1) from a seeded generator, FLOPs = 2·M·N·K. FP8 goes through
``torch._scaled_mm`` with unit scales and a bf16 output, in the FP8 flavour the
device implements (``float8_e4m3fn`` on NVIDIA and OCP-FP8 AMD targets,
``float8_e4m3fnuz`` on MI300-class). After timing, two 64x64 blocks of ``C`` are
checked against a float64 reference: a BLAS that returns garbage fast is a failure,
not a record.

Durations on one H100, estimated from the kernel policies (quick: >= 100 samples and
0.1 s per case; full: >= 200 samples, 1 s warm-up, 1 s of samples per case): CPU quick
~2-5 s on two cores (256 and 512 cubes, 1024x1024x256; fp16 to 512); CPU full 27 shapes over
256...2048 per dtype; GPU quick ~7-10 s (3 shapes per dtype, 2 for plain fp32); GPU full ~12-15
minutes (M, N, K each over 2048...16384: 64 shapes per dtype, 27 up to 8192 for plain
fp32, whose 16384-cubed case alone would take ~10 s).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from gpuport import textre
from gpuport.bench.model import BenchResult, CaseStatus, DeviceInfo
from gpuport.bench.registry import BenchContext, Case, Measurement, Skip, Workload, register

DTYPES: tuple[str, ...] = ("bf16", "fp16", "fp32", "tf32", "fp8")
FP8_FORMATS: tuple[str, ...] = ("float8_e4m3fn", "float8_e4m3fnuz")
_TORCH_DTYPE = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "tf32": "float32"}
# Who uses which FP8 flavour, for the skip message when a user forces the other one.
_FP8_USERS = {
    "float8_e4m3fn": "NVIDIA and OCP-FP8 AMD targets use float8_e4m3fn",
    "float8_e4m3fnuz": "MI300-class uses float8_e4m3fnuz",
}
# Largest |C - reference| / sqrt(K) accepted. Entries of C are ~N(0, K) for N(0, 1)
# inputs, so this is an error relative to the typical output; the bounds are loose
# (output rounding is ~2^-9 for bf16) because the check hunts wrong kernels, not ulps.
_TOLERANCE = {"bf16": 5e-2, "fp16": 2e-2, "fp32": 1e-2, "tf32": 1e-2, "fp8": 5e-2}
_CHECK_BLOCK = 64

Shape = tuple[int, int, int]
# The CPU sweep, like the GPU one, looks for the best shape: small squares run from cache
# and pay the BLAS call overhead, larger and flatter ones reach the cores' FMA peak.
CPU_QUICK: tuple[Shape, ...] = ((256, 256, 256), (512, 512, 512), (1024, 1024, 256))
CPU_FULL_GRID: tuple[int, ...] = (256, 1024, 2048)
# fp16 matmul on x86 CPUs without AMX-FP16 is emulated and slow (a few GFLOP/s): its
# sweep stops at 512 so a quick suite stays seconds long.
CPU_FP16_MAX = 512
GPU_QUICK: tuple[Shape, ...] = ((4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 16384))
GPU_FULL_GRID: tuple[int, ...] = (2048, 4096, 8192, 16384)
GPU_FULL_GRID_FP32: tuple[int, ...] = (2048, 4096, 8192)


def flops(m: int, n: int, k: int) -> int:
    """Multiply-adds of an (m, k) @ (k, n) product, two FLOPs each."""
    return 2 * m * n * k


def case_name(dtype: str, shape: Shape) -> str:
    m, n, k = shape
    return f"{dtype} {m}x{n}x{k}"


def shapes_for(ctx: BenchContext, dtype: str) -> tuple[Shape, ...]:
    """The sweep for this suite and device."""
    if not ctx.on_gpu:
        grid = CPU_FULL_GRID
        sweep = CPU_QUICK if ctx.quick else tuple(itertools.product(grid, grid, grid))
        if dtype == "fp16":
            sweep = tuple(sh for sh in sweep if max(sh) <= CPU_FP16_MAX) or sweep[:1]
        return sweep
    if ctx.quick:
        # Plain fp32 runs on the vector units (~15x slower than tf32 on an H100):
        # its third shape alone would cost seconds of the quick budget.
        return GPU_QUICK[:2] if dtype == "fp32" else GPU_QUICK
    grid = GPU_FULL_GRID_FP32 if dtype == "fp32" else GPU_FULL_GRID
    return tuple(itertools.product(grid, grid, grid))


def fp8_problem(info: DeviceInfo, native: str | None, forced: str | None) -> str | None:
    """Why FP8 GEMM cannot run on this device with this format, or None if it can."""
    if info.backend == "cpu":
        return "fp8 GEMM needs a GPU with FP8 matrix units"
    where = info.arch or info.name
    if forced is not None and forced not in FP8_FORMATS:
        return f"unknown fp8_format {forced!r} (expected one of {', '.join(FP8_FORMATS)})"
    if native is None:
        return f"{where} has no FP8 matrix units (needs sm_89+ or MI300-class and newer)"
    if forced is not None and forced != native:
        return f"{forced} is not supported on {where} ({_FP8_USERS[native]})"
    return None


def _tf32_problem(info: DeviceInfo) -> str | None:
    if info.backend == "cpu":
        return "TF32 is a GPU tensor-core mode; CPU matmuls have no TF32"
    found = textre.match(r"sm_(\d+)", info.arch or "")
    if info.backend == "cuda" and found and int(found.group(1)) < 80:
        return f"TF32 needs sm_80 or newer (this GPU is {info.arch})"
    return None


def _native_fp8(info: DeviceInfo) -> str | None:
    """The FP8 flavour this device's matrix units implement (None: no FP8 units)."""
    from gpuport.platform import fp8_dtype_name

    return fp8_dtype_name(info)


def _torch_has_fp8(torch: Any, name: str) -> bool:
    return hasattr(torch, name) and hasattr(torch, "_scaled_mm")


def _fp8_format(ctx: BenchContext) -> tuple[str | None, str | None]:
    """(the device's FP8 flavour, reason FP8 cannot run here or None)."""
    native = _native_fp8(ctx.info) if ctx.on_gpu else None
    forced = ctx.options.get("fp8_format")
    if forced is not None and not forced.startswith("float8_"):
        forced = "float8_" + forced  # the CLI's --fp8-format takes e4m3fn / e4m3fnuz
    problem = fp8_problem(ctx.info, native, forced)
    if problem is None and native is not None and not _torch_has_fp8(ctx.torch, native):
        problem = f"this torch ({ctx.torch.__version__}) has no {native} / torch._scaled_mm"
    return native, problem


@contextlib.contextmanager
def fp32_matmul_mode(torch: Any, tf32: bool) -> Iterator[None]:
    """Force TF32 on or off for CUDA/HIP matmuls for one case, then restore the user's setting.

    torch >= 2.9 has ``fp32_precision``; setting the legacy ``allow_tf32`` after it
    has been used makes torch raise ("mix of the legacy and new APIs"), so the new
    knob is preferred where it exists. Plain fp32 is forced to IEEE so a global
    TF32 setting cannot pass tf32 numbers off as fp32.
    """
    matmul = torch.backends.cuda.matmul
    old = getattr(matmul, "fp32_precision", None)
    if old is not None:
        matmul.fp32_precision = "tf32" if tf32 else "ieee"
        try:
            yield
        finally:
            matmul.fp32_precision = old
        return
    old_allow = matmul.allow_tf32
    matmul.allow_tf32 = tf32
    try:
        yield
    finally:
        matmul.allow_tf32 = old_allow


def check_result(torch: Any, a: Any, b: Any, c: Any, dtype: str) -> float:
    """Compare two corner blocks of ``c = a @ b`` with a float64 product; raise if wrong.

    Returns the normalised error (max |c - ref| / sqrt(K)). Two small blocks keep the
    check cheap for 16384-sized matrices while still catching a kernel that skips
    tiles or leaves the output as it was.
    """
    k = a.shape[1]
    worst = 0.0
    for rows, cols in (
        (slice(0, _CHECK_BLOCK), slice(0, _CHECK_BLOCK)),
        (slice(-_CHECK_BLOCK, None), slice(-_CHECK_BLOCK, None)),
    ):
        ref = a[rows].to(torch.float32).double() @ b[:, cols].to(torch.float32).double()
        got = c[rows, cols].to(torch.float32).double()
        error = float((got - ref).abs().max()) / math.sqrt(k)
        worst = math.inf if math.isnan(error) else max(worst, error)
    if worst > _TOLERANCE[dtype]:
        raise RuntimeError(
            f"gemm {dtype}: result differs from the float64 reference by {worst:.3g}·sqrt(K) "
            f"(tolerance {_TOLERANCE[dtype]}): the matmul kernel is wrong on this device"
        )
    return worst


# IEEE fp32 products land near 1e-6·sqrt(K) from float64, TF32 ones near 3e-3·sqrt(K) (10-bit
# mantissa inputs); 1e-4 splits the two with a wide margin on either side.
_TF32_SPLIT = 1e-4


def precision_mode_check(dtype: str, error: float) -> None:
    """Refuse a number labelled with a precision mode the hardware did not use.

    Some ROCm stacks honour TF32 only with ``HIPBLASLT_ALLOW_TF32=1``, and
    ``NVIDIA_TF32_OVERRIDE=1`` silently turns fp32 into TF32: either way the label
    and the peak it is compared with would be wrong.
    """
    if dtype == "tf32" and error < _TF32_SPLIT:
        raise Skip(
            "TF32 was requested but the result has full fp32 accuracy: this stack ignored it "
            "(on ROCm try HIPBLASLT_ALLOW_TF32=1)"
        )
    if dtype == "fp32" and error > _TF32_SPLIT:
        raise RuntimeError(
            f"fp32 GEMM ran at reduced precision (error {error:.2g}·sqrt(K), TF32-like): "
            "check NVIDIA_TF32_OVERRIDE / TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"
        )


def _randn(ctx: BenchContext, shape: tuple[int, ...], dtype: Any, gen: Any) -> Any:
    torch = ctx.torch
    if dtype.itemsize == 1:  # fp8: no randn kernel, draw in fp32 and round
        return torch.randn(shape, generator=gen, device=ctx.device).to(dtype)
    return torch.randn(shape, generator=gen, device=ctx.device, dtype=dtype)


def _measure(ctx: BenchContext, dtype: str, shape: Shape, in_name: str) -> Measurement:
    """Allocate, time and check one shape; the tensors die with this frame."""
    torch = ctx.torch
    m, n, k = shape
    gen = torch.Generator(device=ctx.device)
    gen.manual_seed(ctx.seed)
    in_dtype = getattr(torch, in_name)
    out_dtype = torch.bfloat16 if dtype == "fp8" else in_dtype
    a = _randn(ctx, (m, k), in_dtype, gen)
    b = _randn(ctx, (n, k), in_dtype, gen).t()
    c = torch.empty((m, n), dtype=out_dtype, device=ctx.device)
    c_rand = _randn(ctx, (m, n), out_dtype, gen)

    if dtype == "fp8":
        scale = torch.ones((), dtype=torch.float32, device=ctx.device)

        def step() -> None:
            torch._scaled_mm(a, b, scale, scale, out_dtype=out_dtype, out=c)

    else:

        def step() -> None:
            torch.mm(a, b, out=c)

    def rerandomise() -> None:
        c.copy_(c_rand)

    mode = fp32_matmul_mode(torch, dtype == "tf32") if dtype in ("fp32", "tf32") else None
    with mode or contextlib.nullcontext():
        result = ctx.measure(
            step, policy=ctx.kernel_policy, work_per_iter=float(flops(m, n, k)), before=rerandomise
        )
        step()  # the check must see a product, whatever the timing core ran last
        error = check_result(torch, a, b, c, dtype)
    precision_mode_check(dtype, error)
    return dataclasses.replace(result, metrics={**result.metrics, "check_error": error})


def _runner(
    dtype: str, shape: Shape, fp8_format: str | None
) -> Callable[[BenchContext], Measurement]:
    m, n, k = shape
    params: dict[str, Any] = {"m": m, "n": n, "k": k, "dtype": dtype}
    if dtype == "fp8":
        params["fp8_format"] = fp8_format
    in_name = fp8_format if dtype == "fp8" and fp8_format else _TORCH_DTYPE.get(dtype, "")

    def run(ctx: BenchContext) -> Measurement:
        try:
            result = _measure(ctx, dtype, shape, in_name)
        finally:
            if ctx.on_gpu:
                ctx.torch.cuda.empty_cache()
        return dataclasses.replace(result, params={**result.params, **params})

    return run


def _skipper(reason: str) -> Callable[[BenchContext], Measurement]:
    def run(ctx: BenchContext) -> Measurement:
        raise Skip(reason)

    return run


def _cases(ctx: BenchContext) -> list[Case]:
    wanted = ctx.options.get("dtypes")
    cases: list[Case] = []
    for dtype in DTYPES:
        if wanted is not None and dtype not in wanted:
            continue
        fp8_format: str | None = None
        problem: str | None = None
        if dtype == "fp8":
            fp8_format, problem = _fp8_format(ctx)
        elif dtype == "tf32":
            problem = _tf32_problem(ctx.info)
        shapes = shapes_for(ctx, dtype)
        if problem is not None:
            # One skipped row says it; a skipped row per shape of the sweep is noise.
            shapes = shapes[:1]
        for shape in shapes:
            run = _skipper(problem) if problem is not None else _runner(dtype, shape, fp8_format)
            m, n, k = shape
            cases.append(
                Case(
                    name=case_name(dtype, shape),
                    run=run,
                    params={"m": m, "n": n, "k": k, "dtype": dtype},
                    unit="TFLOPS",
                    scale=1e12,
                    peak=("tflops", dtype),
                )
            )
    return cases


def best_by_dtype(results: Iterable[BenchResult]) -> dict[str, BenchResult]:
    """The fastest successful ``gemm`` case per dtype: the MAMF the renderer shows.

    Keys follow :data:`DTYPES` order (unknown dtypes after them, alphabetically).
    """
    best: dict[str, BenchResult] = {}
    for result in results:
        if result.workload != "gemm" or result.status != CaseStatus.OK or result.value is None:
            continue
        dtype = str(result.params.get("dtype") or result.case.split(" ", 1)[0])
        current = best.get(dtype)
        if current is None or current.value is None or result.value > current.value:
            best[dtype] = result

    def order(dtype: str) -> tuple[int, str]:
        return (DTYPES.index(dtype) if dtype in DTYPES else len(DTYPES), dtype)

    return {dtype: best[dtype] for dtype in sorted(best, key=order)}


WORKLOAD = register(
    Workload(
        name="gemm",
        summary="Matmul TFLOPS over a shape sweep per dtype (mamf-finder style MAMF)",
        cases=_cases,
        needs=(),
    )
)
