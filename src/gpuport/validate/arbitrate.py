"""fp64 arbitration: when A and B disagree, which of them is further from the exact answer?

Neither CUDA nor ROCm is ground truth, so "B differs from A" cannot say who is wrong. TorchDynamo's
accuracy minifier settles it with a float64 reference (``torch/_dynamo/utils.py`` ``same()``):
the candidate passes when ``RMSE(res, fp64) <= multiplier · RMSE(ref, fp64) + tol/10``, with
multiplier 2.0, raised to 3.0 for fp16/bf16 and for tensors under 1000 elements ("noise
dominates small tensors"). We apply that rule per module: a deep copy of B's module converted to
float64 runs on the CPU on A's recorded inputs, and

* ``err_b > m · err_a + floor`` → B is **wrong** (further from fp64 than A by more than rounding
  noise allows);
* ``err_a > m · err_b + floor`` → A is the outlier: A computed something B's module does not
  (a different configuration, or A's platform is wrong) → **different**, never "equivalent";
* otherwise both are as close to fp64 as each other → **equivalent**.

``floor`` replaces Dynamo's absolute ``tol/10`` with a scale-aware one: the RMSE of rounding the
fp64 result itself to the tensor's dtype, i.e. the error of the best answer the dtype can hold,
so two exact results are never told apart by noise. The reference comes from *B's* module code:
it catches platform errors (kernels, precision, flags), while a changed configuration (an eps,
a size) shows up as A being the outlier.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any

from gpuport.validate.model import Arbitration

DYNAMO_BASE = 2.0
DYNAMO_RAISED = 3.0
SMALL_NUMEL = 1000


def multiplier(dtype: str, numel: int) -> tuple[float, str]:
    """Dynamo's multiplier for a tensor, with the reason it was chosen."""
    if dtype in ("float16", "bfloat16"):
        return DYNAMO_RAISED, f"{dtype}"
    if numel < SMALL_NUMEL:
        return DYNAMO_RAISED, f"numel {numel} < {SMALL_NUMEL}"
    return DYNAMO_BASE, "default"


@dataclass(frozen=True)
class Decision:
    arbitration: Arbitration
    verdict: str  # "wrong", "a-outlier" or "equivalent"


def rmse(torch: Any, x: Any, ref64: Any) -> float:
    """Root-mean-square error of ``x`` against a float64 reference, in float64."""
    if ref64.numel() == 0:
        return 0.0
    d = x.to(torch.float64) - ref64
    return math.sqrt(float(torch.mean(d * d)))


def to_double(torch: Any, obj: Any) -> Any:
    """Floating tensors → float64 on the CPU; integer tensors → CPU; containers recursively."""
    if isinstance(obj, torch.Tensor):
        cpu = obj.detach().to("cpu")
        return cpu.to(torch.float64) if cpu.is_floating_point() else cpu
    if isinstance(obj, tuple | list):
        return type(obj)(to_double(torch, x) for x in obj)
    if isinstance(obj, dict):
        return {k: to_double(torch, v) for k, v in obj.items()}
    return obj


def double_module(torch: Any, module: Any) -> Any:
    """A float64 CPU deep copy of ``module`` (the original is left alone)."""
    clone = copy.deepcopy(module)
    return clone.to(device="cpu", dtype=torch.float64)


def decide(torch: Any, a: Any, b: Any, ref64: Any, dtype: str, b_source: str) -> Decision:
    """Dynamo's ``same()`` rule for one output tensor; ``a`` and ``b`` on the CPU."""
    err_a = rmse(torch, a, ref64)
    err_b = rmse(torch, b, ref64)
    floor = rmse(torch, ref64.to(a.dtype), ref64) if a.is_floating_point() else 0.0
    mult, why = multiplier(dtype, ref64.numel())
    ratio = err_b / err_a if err_a > 0 else None
    if err_b > mult * err_a + floor:
        verdict = "wrong"
    elif err_a > mult * err_b + floor:
        verdict = "a-outlier"
    else:
        verdict = "equivalent"
    arb = Arbitration(
        err_a=err_a,
        err_b=err_b,
        ratio=ratio,
        multiplier=mult,
        floor=floor,
        b_source="local" if b_source == "local" else "propagated",
        provenance=(
            f"TorchDynamo same(): RMSE vs float64 (CPU), multiplier {mult:g} ({why}); floor = "
            f"RMSE of the fp64 result rounded to {dtype}"
        ),
    )
    return Decision(arb, verdict)
