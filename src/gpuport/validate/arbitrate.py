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

Non-finite values never make two sides "equivalent" (a NaN RMSE compares False with everything,
which used to fall through to equivalent). The RMSEs are taken over the elements where the
float64 result, A and B are all finite; separately, B NaN/Inf where float64 is finite → **wrong**;
A NaN/Inf where float64 is finite → A is the outlier; a reference with no finite element where A
or B has one → **undecided** (the row stays different).
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
    verdict: str  # "wrong", "a-outlier", "equivalent" or "undecided"


def rmse(torch: Any, x: Any, ref64: Any, mask: Any = None) -> float:
    """Root-mean-square error of ``x`` against a float64 reference, in float64, over ``mask``
    (all elements by default); scaled by the largest difference, so it cannot overflow."""
    d = x.to(torch.float64) - ref64
    if mask is not None:
        d = d[mask]
    if d.numel() == 0:
        return 0.0
    d = d.abs()
    top = float(d.max())
    if top == 0.0 or not math.isfinite(top):
        return top
    return top * math.sqrt(float(torch.mean((d / top) ** 2)))


def to_double(torch: Any, obj: Any) -> Any:
    """Floating tensors → float64 CPU copies; other tensors → CPU copies; containers
    recursively. Always copies: the fp64 module may work in place, and the tensors it gets may
    share memory with the capture file's other reads."""
    if isinstance(obj, torch.Tensor):
        cpu = obj.detach().to("cpu")
        dtype = torch.float64 if cpu.is_floating_point() else cpu.dtype
        return cpu.to(dtype, copy=True)
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
    a64 = a.to(torch.float64)
    b64 = b.to(torch.float64)
    fin_ref = torch.isfinite(ref64)
    fin_a = torch.isfinite(a64)
    fin_b = torch.isfinite(b64)
    bad_a = int((fin_ref & ~fin_a).sum())
    bad_b = int((fin_ref & ~fin_b).sum())
    mask = fin_ref & fin_a & fin_b
    err_a = rmse(torch, a64, ref64, mask)
    err_b = rmse(torch, b64, ref64, mask)
    floor = 0.0
    if a.is_floating_point():
        rounded = ref64.to(a.dtype).to(torch.float64)  # may overflow to inf: left out
        floor = rmse(torch, rounded, ref64, mask & torch.isfinite(rounded))
    # elements the reference cannot judge: float64 NaN/Inf where A or B is finite
    unjudged = int((~fin_ref & (fin_a | fin_b)).sum())
    mult, why = multiplier(dtype, ref64.numel())
    ratio = err_b / err_a if err_a > 0 else None
    if bad_b or math.isnan(err_b):
        verdict = "wrong"
    elif bad_a or math.isnan(err_a):
        verdict = "a-outlier"
    elif unjudged and not bool(mask.any()):
        verdict = "undecided"
    elif err_b > mult * err_a + floor:
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
        nonfinite_a=bad_a,
        nonfinite_b=bad_b,
        b_source="local" if b_source == "local" else "propagated",
        provenance=(
            f"TorchDynamo same(): RMSE vs float64 (CPU) over the elements finite on all three, "
            f"multiplier {mult:g} ({why}); floor = RMSE of the fp64 result rounded to {dtype}; "
            "NaN/Inf where float64 is finite: wrong on B, outlier on A"
        ),
    )
    return Decision(arb, verdict)
