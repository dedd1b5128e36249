"""``attention``: ``torch.nn.functional.scaled_dot_product_attention`` over a sequence sweep.

Why it matters for a port: attention speed on ROCm depends on which SDPA backend
the torch build has (flash via AOTriton or CK, memory-efficient, or the slow math
path), so each case records the backend that ran (``metrics["backend"]``).
Backends are tried in the order FLASH_ATTENTION, EFFICIENT_ATTENTION,
CUDNN_ATTENTION (CUDA only), MATH; the first that accepts the case is what the
dispatcher would pick, and the case is timed with it forced.

Shapes follow FlashAttention's benchmark convention so results line up with the
published plots: head_dim 128, 16 heads (hidden 2048), batch x sequence = 16k
tokens, bf16; causal and non-causal. FLOPs (forward) = 4·B·H·S_q·S_k·D (QKᵀ and
PV, two FLOPs per multiply-add), halved for causal since half the score matrix is
masked; forward+backward counts 3.5x forward (backward = 2.5x forward, FlashAttention's
convention: five matmuls instead of two). The output of each case is checked
against a float64 reference on a few query rows.

Durations on one H100, estimated from the kernel policies: CPU quick < 0.3 s; GPU
quick ~3 s (6 forward cases, S = 1024, 4096, 8192); GPU full ~3 minutes (48 cases:
bf16 and fp16, S = 512...16384, forward and forward+backward, >= 1 s each).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable
from typing import Any

from gpuport.bench.registry import BenchContext, Case, Measurement, Skip, Workload, register

BACKENDS: tuple[str, ...] = ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH")
_TORCH_DTYPE = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
GPU_TOKENS = 16384  # batch x sequence
GPU_HEADS = 16
GPU_HEAD_DIM = 128
GPU_SEQ = {"quick": (1024, 4096, 8192), "full": (512, 1024, 2048, 4096, 8192, 16384)}
GPU_DTYPES = {"quick": ("bf16",), "full": ("bf16", "fp16")}
CPU_SEQ = {"quick": (128,), "full": (128, 256, 512)}
CPU_BATCH, CPU_HEADS, CPU_HEAD_DIM = 1, 2, 64
BACKWARD_FACTOR = 2.5  # backward = 2.5x forward FLOPs (FlashAttention's benchmark)
# Largest ||out - ref|| / ||ref|| accepted on the checked rows. The reference uses
# the same (already rounded) inputs, so only softmax/PV rounding shows: ~3e-3 in bf16,
# ~1e-3 in fp16 or in fp32 computed as TF32. A wrong kernel (zero output, a mask
# ignored) is off by order 1, so the bounds leave room for any sane backend.
_TOLERANCE = {"bf16": 3e-2, "fp16": 1e-2, "fp32": 1e-2}
_CHECK_ROWS = 64


@dataclasses.dataclass(frozen=True)
class Shape:
    batch: int
    heads: int
    seq: int
    head_dim: int
    causal: bool
    backward: bool


def flops(shape: Shape) -> float:
    """FLOPs of one iteration under the conventions in the module docstring."""
    forward = 4.0 * shape.batch * shape.heads * shape.seq * shape.seq * shape.head_dim
    if shape.causal:
        forward /= 2
    return forward * (1 + BACKWARD_FACTOR) if shape.backward else forward


def case_name(dtype: str, shape: Shape) -> str:
    mask = "causal" if shape.causal else "noncausal"
    direction = "fwd+bwd" if shape.backward else "fwd"
    dims = f"B{shape.batch} H{shape.heads} S{shape.seq} D{shape.head_dim}"
    return f"{dtype} {mask} {direction} {dims}"


def _sdpa(torch: Any, q: Any, k: Any, v: Any, causal: bool) -> Any:
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


def pick_backend(ctx: BenchContext, q: Any, k: Any, v: Any, shape: Shape) -> Any:
    """The first backend in priority order that runs this case (forward, and backward if timed)."""
    torch = ctx.torch
    attention = getattr(torch.nn, "attention", None)
    if attention is None or not hasattr(attention, "sdpa_kernel"):
        raise Skip(f"torch {torch.__version__} has no torch.nn.attention.sdpa_kernel (needs 2.3+)")
    for name in BACKENDS:
        if name == "CUDNN_ATTENTION" and ctx.info.backend != "cuda":
            continue
        backend = getattr(attention.SDPBackend, name, None)
        if backend is None:
            continue
        try:
            # A refusing backend warns about why before raising; the answer is the choice.
            with warnings.catch_warnings(), attention.sdpa_kernel([backend]):
                warnings.simplefilter("ignore")
                out = _sdpa(torch, q, k, v, shape.causal)
                if shape.backward:
                    torch.autograd.grad(out, (q, k, v), torch.ones_like(out))
        except RuntimeError:
            continue
        return backend
    raise Skip("no scaled_dot_product_attention backend accepts this shape and dtype")


def check_output(torch: Any, q: Any, k: Any, v: Any, out: Any, causal: bool, dtype: str) -> float:
    """Recompute the first and last query rows of batch 0, head 0 in float64; raise if off.

    Returns the relative error. Attention over random N(0, 1) inputs is nearly uniform,
    so outputs are small: an absolute tolerance would let a zero output pass.
    """
    seq, dim = q.shape[-2], q.shape[-1]
    keys, values = k[0, 0].double(), v[0, 0].double()
    worst = 0.0
    rows_n = min(_CHECK_ROWS, seq)
    for start in sorted({0, seq - rows_n}):
        rows = slice(start, start + rows_n)
        scores = q[0, 0, rows].double() @ keys.T / math.sqrt(dim)
        if causal:  # query i sees keys 0..i (S_q == S_k: the mask is top-left aligned)
            query = torch.arange(start, start + rows_n, device=q.device)[:, None]
            key = torch.arange(seq, device=q.device)[None, :]
            scores = scores.masked_fill(key > query, float("-inf"))
        ref = torch.softmax(scores, dim=-1) @ values
        got = out[0, 0, rows].double()
        error = float((got - ref).norm() / ref.norm())
        worst = math.inf if math.isnan(error) else max(worst, error)
    if worst > _TOLERANCE[dtype]:
        raise RuntimeError(
            f"attention {dtype}: output differs from the float64 reference by {worst:.3g} "
            f"(relative; tolerance {_TOLERANCE[dtype]}): the SDPA kernel is wrong on this device"
        )
    return worst


def _measure(ctx: BenchContext, dtype: str, shape: Shape) -> tuple[Measurement, str, float]:
    """Allocate, pick the backend, time and check; returns (timing, backend, check error)."""
    torch = ctx.torch
    gen = torch.Generator(device=ctx.device)
    gen.manual_seed(ctx.seed)
    size = (shape.batch, shape.heads, shape.seq, shape.head_dim)
    tdtype = getattr(torch, _TORCH_DTYPE[dtype])
    q, k, v = (
        torch.randn(size, generator=gen, device=ctx.device, dtype=tdtype).requires_grad_(
            shape.backward
        )
        for _ in range(3)
    )
    grad_out = torch.randn(size, generator=gen, device=ctx.device, dtype=tdtype)
    backend = pick_backend(ctx, q, k, v, shape)

    if shape.backward:

        def step() -> None:
            out = _sdpa(torch, q, k, v, shape.causal)
            torch.autograd.grad(out, (q, k, v), grad_out)

    else:

        def step() -> None:
            _sdpa(torch, q, k, v, shape.causal)

    with torch.nn.attention.sdpa_kernel([backend]):
        result = ctx.measure(step, policy=ctx.kernel_policy, work_per_iter=flops(shape))
        with torch.no_grad():
            out = _sdpa(torch, q, k, v, shape.causal)
    error = check_output(torch, q.detach(), k.detach(), v.detach(), out, shape.causal, dtype)
    return result, str(backend.name).lower(), error


def _params(dtype: str, shape: Shape) -> dict[str, Any]:
    return {"dtype": dtype, **dataclasses.asdict(shape)}


def _runner(dtype: str, shape: Shape) -> Callable[[BenchContext], Measurement]:
    def run(ctx: BenchContext) -> Measurement:
        try:
            result, backend, error = _measure(ctx, dtype, shape)
        finally:
            if ctx.on_gpu:
                ctx.torch.cuda.empty_cache()
        return dataclasses.replace(
            result,
            metrics={**result.metrics, "backend": backend, "check_error": error},
            params={**result.params, **_params(dtype, shape)},
        )

    return run


def shapes_for(ctx: BenchContext) -> list[Shape]:
    directions = (False,) if ctx.quick else (False, True)  # fwd+bwd: full suite only
    shapes: list[Shape] = []
    for backward in directions:
        for causal in (False, True):
            if ctx.on_gpu:
                shapes += [
                    Shape(GPU_TOKENS // s, GPU_HEADS, s, GPU_HEAD_DIM, causal, backward)
                    for s in GPU_SEQ[ctx.suite]
                ]
            else:
                shapes += [
                    Shape(CPU_BATCH, CPU_HEADS, s, CPU_HEAD_DIM, causal, backward)
                    for s in CPU_SEQ[ctx.suite]
                ]
    return shapes


def _cases(ctx: BenchContext) -> list[Case]:
    wanted = ctx.options.get("dtypes")
    if wanted is not None:
        dtypes = tuple(d for d in _TORCH_DTYPE if d in wanted)
    else:
        dtypes = GPU_DTYPES[ctx.suite] if ctx.on_gpu else ("fp32",)
    return [
        Case(
            name=case_name(dtype, shape),
            run=_runner(dtype, shape),
            params=_params(dtype, shape),
            unit="TFLOPS",
            scale=1e12,
            peak=("tflops", dtype),
        )
        for dtype in dtypes
        for shape in shapes_for(ctx)
    ]


WORKLOAD = register(
    Workload(
        name="attention",
        summary="scaled_dot_product_attention TFLOPS over sequence lengths, with the backend used",
        cases=_cases,
        needs=(),
    )
)
