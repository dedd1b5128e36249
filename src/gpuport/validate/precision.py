"""Deployment-precision mode: ``validate check --precision bf16`` (or fp16).

The question is "is my bf16 deployment close enough to the fp32 reference?". B's model (with
A's weights, checked by checksum *before* the cast) and A's recorded inputs are cast to the
format, and every module is judged against what the format itself explains.

**What the format explains.** A module run in a format with unit roundoff ``u``
(bf16 2^-8, fp16 2^-11) rounds its inputs, its weights, its intermediate results and its
output: each rounding is a relative error of at most ``u``, about ``u/sqrt(3)`` RMS, independent
from element to element, and independent roundings add in quadrature. Reductions (GEMMs,
attention, norms) accumulate in fp32 on every platform gpuport targets (tensor cores, MFMA, the
CPU's bf16 GEMMs), so the depth K of a sum adds nothing of the format's size: the error stays
a few roundings deep. The limit is on the normwise relative error ``‖b - a‖ / ‖a‖`` (as rocBLAS
``norm_check`` and hipBLASLt's fp8 tests use, because elementwise checks fail near zero):

    max_rel_rms = 4 · u        (1.6e-2 for bf16, torch.testing's bf16 rtol; 2.0e-3 for fp16)

which covers about 16 roundings in sequence (sqrt(16) · u/sqrt(3) = 2.3u) with room for the
data's conditioning. Measured on ``examples/validate/hf_style.py`` in bf16 (CPU): single
Linears and norms 0.0027–0.0041 (≈ 0.7–1.1 u), attention 0.0045, a whole decoder layer 0.0075
(1.9 u). A kernel that accumulates a K = 4096 sum in bf16 itself (≈ u·sqrt(K) = 0.25) or
quantises to fp8 on the way (0.028 measured) is beyond it and is **wrong**; errors that arrive
from upstream are judged by propagation as usual.

fp8 is refused: casting a model's weights to fp8 does not give a model that runs (fp8 GEMMs
need scaled kernels), and gpuport does not emulate them.
"""

from __future__ import annotations

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


def limit(fmt: str) -> float:
    """Relative RMS error the format explains for one module (see the module docstring)."""
    return FACTOR * FORMATS[fmt][1]


def tolerance(fmt: str, rec: ModuleRecord) -> Tolerance:
    name, u = FORMATS[fmt]
    bound = limit(fmt)
    return Tolerance(
        atol=0.0,
        rtol=0.0,
        op_class=rec.op_class,
        k=rec.k,
        max_rel_rms=bound,
        provenance=(
            f"--precision {fmt}: relative RMS error ‖b−a‖/‖a‖ ≤ 4·u = {bound:.3g} (u = "
            f"{u:.3g}, the unit roundoff of {name}): a few independent roundings of inputs, "
            "weights and results, sums accumulated in fp32"
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
