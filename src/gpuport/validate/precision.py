"""Deployment-precision mode: ``validate check --precision bf16`` (or fp16).

The question is "is my bf16 deployment close enough to the fp32 reference?". B's model (with
A's weights, checked by checksum *before* the cast) and A's recorded inputs are cast to the
format, and every module is judged against what the format itself explains.

**What the format explains.** A module run in a format with unit roundoff ``u``
(bf16 2^-8, fp16 2^-11) rounds its inputs, its weights and its result: each rounding is a
relative error of at most ``u``, about ``u/sqrt(3)`` RMS, independent from element to element.
A reduction of depth K accumulated in fp32 (tensor cores, CPU bf16 GEMMs) adds nothing
measurable; accumulated in the format itself, with the blocked or pairwise sums libraries use,
it adds about one rounding per level of the tree, ``log2(K)`` of them. Independent roundings add
in quadrature, so the relative RMS error of the output (normwise: ``‖b - a‖ / ‖a‖``, as rocBLAS
``norm_check`` and hipBLASLt's fp8 tests do, because elementwise checks fail near zero) is about
``u · sqrt(r)`` for ``r`` roundings. The limit allows the worst case, accumulation in the
format, with a factor of 4 for the inputs, weights and output roundings and the data's
conditioning:

    max_rel_rms = 4 · u · sqrt(1 + log2(K))          (K = 1 for elementwise ops)

For bf16 that is 1.6e-2 for an elementwise op, which is torch.testing's bf16 rtol (1.6e-2, also
about 4u), and 5.6e-2 at K = 4096. A module beyond it computes worse than the format can
explain (another format inside it, a bad kernel, an overflow) and is **wrong**; errors that
arrive from upstream are judged by propagation as usual.

fp8 is refused: casting a model's weights to fp8 does not give a model that runs (fp8 GEMMs
need scaled kernels), and gpuport does not emulate them.
"""

from __future__ import annotations

import math
from typing import Any

from gpuport.models import GpuportError
from gpuport.validate.model import ModuleRecord, Tolerance

FORMATS: dict[str, tuple[str, float]] = {
    "bf16": ("bfloat16", 2.0**-8),
    "bfloat16": ("bfloat16", 2.0**-8),
    "fp16": ("float16", 2.0**-11),
    "float16": ("float16", 2.0**-11),
}
FACTOR = 4.0


def parse(value: str | None) -> str | None:
    """The canonical format name (bf16, fp16) or None; a clear error otherwise."""
    if value is None:
        return None
    key = value.strip().lower()
    if key in ("fp8", "float8", "e4m3", "e5m2"):
        raise GpuportError(
            "--precision fp8 is not supported: a model cast to fp8 does not run without scaled "
            "fp8 GEMM kernels, and gpuport does not emulate them; use bf16 or fp16"
        )
    if key not in FORMATS:
        raise GpuportError(f"--precision must be bf16 or fp16, not {value!r}")
    return "bf16" if FORMATS[key][0] == "bfloat16" else "fp16"


def dtype_of(torch: Any, fmt: str) -> Any:
    return getattr(torch, FORMATS[fmt][0])


def limit(fmt: str, k: int | None) -> float:
    """Relative RMS error the format explains for a reduction of depth ``k``."""
    u = FORMATS[fmt][1]
    depth = math.log2(k) if k and k > 1 else 0.0
    return FACTOR * u * math.sqrt(1.0 + depth)


def tolerance(fmt: str, rec: ModuleRecord) -> Tolerance:
    k = rec.k if rec.op_class in ("matmul", "conv", "attention", "norm", "softmax") else None
    name, u = FORMATS[fmt]
    bound = limit(fmt, k)
    depth = f", K={k}" if k else ""
    return Tolerance(
        atol=0.0,
        rtol=0.0,
        op_class=rec.op_class,
        k=k,
        max_rel_rms=bound,
        provenance=(
            f"--precision {fmt}: relative RMS error ‖b−a‖/‖a‖ ≤ 4·u·sqrt(1 + log2 K) = "
            f"{bound:.3g} (u = {u:.3g}, the unit roundoff of {name}{depth}): roundings of "
            "inputs, weights and result plus one per level of a blocked sum"
        ),
    )


def strip_dtypes(structure: dict[str, list[str]]) -> dict[str, list[str]]:
    """A module structure without dtypes ('w:[4, 4]:float32' → 'w:[4, 4]')."""
    return {k: [e.rsplit(":", 1)[0] for e in v] for k, v in structure.items()}


def cast(torch: Any, obj: Any, dtype: Any) -> Any:
    """Floating tensors → ``dtype``; everything else unchanged (containers recursively)."""
    if isinstance(obj, torch.Tensor):
        return obj.to(dtype) if obj.is_floating_point() else obj
    if isinstance(obj, tuple | list):
        return type(obj)(cast(torch, x, dtype) for x in obj)
    if isinstance(obj, dict):
        return {k: cast(torch, v, dtype) for k, v in obj.items()}
    return obj
