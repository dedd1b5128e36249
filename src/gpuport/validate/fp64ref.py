"""The float64 reference of one module: B's module run in float64 on A's recorded inputs.

Split from :mod:`gpuport.validate.arbitrate`, which holds the rule that compares A and B with
that reference (and which the op-level replay, :mod:`gpuport.validate.ops`, uses on its own):
the reference needs the op tracing (:func:`~gpuport.validate.ops.below_float64`) and the
module tracing (:func:`~gpuport.validate.trace.flatten_tensors`), the rule needs neither.
"""

from __future__ import annotations

from typing import Any

from gpuport.validate import gpv
from gpuport.validate.arbitrate import double_module, to_double
from gpuport.validate.model import ModuleRecord
from gpuport.validate.ops import below_float64
from gpuport.validate.trace import flatten_tensors

__all__ = ["NotFloat64", "fp64_outputs", "not_float64"]


def fp64_outputs(
    torch: Any, module: Any, rec: ModuleRecord, cap: gpv.GpvFile, nominal: Any = None
) -> list[Any]:
    """B's module in float64 on the CPU, on copies of A's recorded inputs (to_double copies:
    the reads share the file's memory, and the module may work in place). Raises
    :class:`NotFloat64` when the copy computes below ``nominal`` (A's precision) anyway: its
    own code casts, and its result would be no float64 reference."""
    args, kwargs = gpv.decode_call(rec.inputs, lambda n: cap.tensor(n))
    m64 = double_module(torch, module)
    watch = below_float64(torch, nominal if nominal is not None else torch.float32)
    args, kwargs = to_double(torch, args), to_double(torch, kwargs)
    with torch.no_grad(), watch:
        out = m64(*args, **kwargs)
    if watch.first is not None:
        raise NotFloat64(watch.first)
    return flatten_tensors(torch, out)


class NotFloat64(Exception):
    """The float64 copy of a module computed below A's precision (its code casts itself)."""


def not_float64(where: str) -> str:
    return (
        "fp64 arbitration cannot judge it: B's module converted to float64 still computes in "
        f"a lower precision than A's output ({where}: its own code casts), so that is no "
        "float64 reference"
    )
