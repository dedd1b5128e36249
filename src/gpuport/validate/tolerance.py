"""Tolerances per dtype and op class, each with the provenance a reviewer can check.

Elementwise ops get ``torch.testing.assert_close``'s per-dtype defaults
(``torch/testing/_comparison.py``, ``_DTYPE_PRECISIONS``; derivation in pytorch PR #32538):
a correct elementwise kernel rounds once, so differences stay within a few ULP of the result.

Reductions (Linear, Conv, matmul-like, attention, norms, softmax) add up K terms, and two
correct libraries add them in different orders (cuBLAS vs hipBLASLt tilings, split-K). The
rounding errors of a K-term sum are a random walk, so their typical size grows like sqrt(K)
times the rounding of one term: **atol** is scaled by sqrt(K). rocBLAS
(``near.hpp``: ``tol = K * sum_error_tolerance<T>``) and ROCm/rocmlirTriton
(``docs/allclose_comparator.md``: ``atol_eff = baseAtol + K_eff * sum_error_tolerance<T>``)
scale atol linearly with K, the worst case; that is 0.41 at K = 4096 for fp32, so loose it only
catches gross errors. sqrt(K) passes the research notes' split-K demo (fp32, N(0,1) data:
max abs 1.1e-4 at K = 4096 against a scaled atol of 6.4e-4) while staying ~600× tighter, and
whatever it flags is then settled by fp64 arbitration rather than by loosening it.
``K_eff`` follows rocmlirTriton: GEMM = K, conv = Cin/groups · ∏kernel, attention =
head_dim + seq_len_k.

**rtol is never scaled.** The result of a reduction is rounded once to the output dtype, so the
part of the error proportional to |a| stays a few ULP whatever K is; ROCm/pytorch PR #1255
(rocBLAS team) goes further: "rtol may cause false negatives ... atol should take the number of
FLOPs into consideration". Scaling rtol by sqrt(K) as well made bf16's 1.6e-2 into 1.02 at
K = 4096: a Linear returning zeros was "within tolerance".

A **cosine floor** is a gate on top (for a tensor whose RMS error is above atol): 0.99 for
16- and 8-bit floats, the threshold of TorchDynamo's ``same(cos_similarity=True)``, used for
fp16/bf16 (research notes A.4; Megatron-Bridge uses 0.98, Polygraphy 0.997), and 0.999 for
fp32/fp64, whose correct results differ by ~1e-6 relative (cosine 1 - 1e-12): 0.999 is a relative
RMS error of 4.5%, a guard against garbage that leaves every rounding difference alone.
"""

from __future__ import annotations

import math

from gpuport.validate.model import Tolerance

# (rtol, atol), as in torch.testing._comparison._DTYPE_PRECISIONS
ASSERT_CLOSE: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}
# (rtol, atol) for fp8, from ROCm/rocmlirTriton docs/allclose_comparator.md (rtol = eps(T),
# atol from JAX _default_tolerance); assert_close itself demands exact equality for them.
FP8: dict[str, tuple[float, float]] = {
    "float8_e4m3fn": (0.125, 0.1),
    "float8_e4m3fnuz": (0.125, 0.1),
    "float8_e5m2": (0.25, 0.1),
    "float8_e5m2fnuz": (0.25, 0.1),
}

# cosine floors: Dynamo same(cos_similarity=True) uses 0.99 (for fp16/bf16); fp32 and fp64 get
# 0.999, still four orders of magnitude above their rounding noise
COSINE_LOW = 0.99
COSINE_HIGH = 0.999
_HIGH_PRECISION = frozenset({"float32", "float64", "complex64", "complex128"})

REDUCTION_CLASSES = frozenset({"matmul", "conv", "attention", "norm", "softmax"})

_CLASS_BY_NAME: dict[str, str] = {
    "Linear": "matmul",
    "LazyLinear": "matmul",
    "Bilinear": "matmul",
    "NonDynamicallyQuantizableLinear": "matmul",
    "Conv1d": "conv",
    "Conv2d": "conv",
    "Conv3d": "conv",
    "ConvTranspose1d": "conv",
    "ConvTranspose2d": "conv",
    "ConvTranspose3d": "conv",
    "MultiheadAttention": "attention",
    "LayerNorm": "norm",
    "RMSNorm": "norm",
    "GroupNorm": "norm",
    "LocalResponseNorm": "norm",
    "Softmax": "softmax",
    "LogSoftmax": "softmax",
    "Softmin": "softmax",
    "Embedding": "gather",
    "EmbeddingBag": "matmul",
}


def op_class(name: str) -> str:
    """Tolerance class of a module class name; names of user classes are matched loosely."""
    if name in _CLASS_BY_NAME:
        return _CLASS_BY_NAME[name]
    lower = name.lower()
    for needle, cls in (
        ("attention", "attention"),
        ("norm", "norm"),
        ("softmax", "softmax"),
        ("conv", "conv"),
        ("linear", "matmul"),
        ("embedding", "gather"),
    ):
        if needle in lower:
            return cls
    return "elementwise"


def base(dtype: str) -> tuple[float, float, str]:
    """(rtol, atol, where they come from) for a dtype name like 'float32'."""
    if dtype in ASSERT_CLOSE:
        rtol, atol = ASSERT_CLOSE[dtype]
        return rtol, atol, f"torch.testing.assert_close {dtype} defaults"
    if dtype in FP8:
        rtol, atol = FP8[dtype]
        return rtol, atol, f"ROCm/rocmlirTriton allclose_comparator {dtype}"
    return 0.0, 0.0, f"torch.testing.assert_close: {dtype} compares exactly"


def min_cosine(dtype: str) -> float | None:
    """The cosine floor for a floating dtype (None for integers and booleans: exact)."""
    if dtype in _HIGH_PRECISION:
        return COSINE_HIGH
    if dtype in ASSERT_CLOSE or dtype in FP8:
        return COSINE_LOW
    return None


def _cosine_note(floor: float | None) -> str:
    if floor is None:
        return ""
    source = "TorchDynamo same(cos_similarity=True)" if floor == COSINE_LOW else "fp32/fp64"
    return f"; cosine ≥ {floor:g} above the atol noise floor ({source})"


def tolerance(dtype: str, cls: str, k: int | None) -> Tolerance:
    """The tolerance for one tensor of ``dtype`` produced by an op of class ``cls``."""
    rtol, atol, source = base(dtype)
    floor = min_cosine(dtype)
    if cls in REDUCTION_CLASSES and k is not None and k > 1 and (rtol or atol):
        scale = math.sqrt(k)
        return Tolerance(
            atol=atol * scale,
            rtol=rtol,
            op_class=cls,
            k=k,
            min_cosine=floor,
            provenance=(
                f"{source} (rtol {rtol:g}, atol {atol:g}), atol × sqrt(K={k}) for a {cls} "
                "reduction: reordered sums differ by a random walk ~sqrt(K) (rocBLAS near.hpp / "
                "rocmlirTriton scale by K, the worst case); rtol unscaled: the result is "
                f"rounded once{_cosine_note(floor)}"
            ),
        )
    if cls in ("elementwise", "gather"):
        what = "an elementwise op"
    elif cls == "grad":
        what = "a gradient (its reduction is not known)"
    else:
        what = f"a {cls} op whose K is not known"
    return Tolerance(
        atol=atol,
        rtol=rtol,
        op_class=cls,
        k=k,
        min_cosine=floor,
        provenance=f"{source} (rtol {rtol:g}, atol {atol:g}) for {what}{_cosine_note(floor)}",
    )
