"""fp64 arbitration with NaN/Inf: never "equivalent" because a NaN compared False."""

from __future__ import annotations

import math

import torch

from gpuport.validate.arbitrate import decide, rmse, to_double
from gpuport.validate.model import Metrics, Status
from gpuport.validate.report import judge


def _ref(n: int = 2000) -> torch.Tensor:
    return torch.randn(n, generator=torch.Generator().manual_seed(0), dtype=torch.float64)


def test_nan_in_b_where_float64_is_finite_is_wrong() -> None:
    ref = _ref()
    a, b = ref.float(), ref.float().clone()
    b[3] = float("nan")
    d = decide(torch, a, b, ref, "float32", "local")
    assert d.verdict == "wrong" and d.arbitration.nonfinite_b == 1
    assert not math.isnan(d.arbitration.err_b)


def test_nan_in_a_makes_a_the_outlier() -> None:
    ref = _ref()
    a, b = ref.float().clone(), ref.float()
    a[0] = float("nan")
    d = decide(torch, a, b, ref, "float32", "local")
    assert d.verdict == "a-outlier" and d.arbitration.nonfinite_a == 1


def test_masked_infinities_do_not_hide_a_bug() -> None:
    ref = _ref()
    ref[:100] = -math.inf  # a legitimate -inf mask, the same on both sides
    a = ref.float()
    b = a * 1.5  # B's real bug on every finite element
    d = decide(torch, a, b, ref, "float32", "local")
    assert d.verdict == "wrong" and d.arbitration.err_b > 100 * d.arbitration.err_a
    assert d.arbitration.nonfinite_a == d.arbitration.nonfinite_b == 0
    ok = decide(torch, a, a.clone(), ref, "float32", "local")
    assert ok.verdict == "equivalent"


def test_a_reference_without_finite_values_decides_nothing() -> None:
    ref = torch.full((50,), math.nan, dtype=torch.float64)
    a = torch.randn(50)
    d = decide(torch, a, a + 1, ref, "float32", "local")
    assert d.verdict == "undecided"
    local = Metrics(numel=50, max_abs=1.0, mean_abs=1.0, max_rel=1.0, mismatched=50)
    status, reason = judge(None, local, d, None)
    assert status is Status.DIFFERENT and "cannot arbitrate" in reason


def test_rmse_of_huge_values_does_not_overflow() -> None:
    x = torch.tensor([1e300, -1e300], dtype=torch.float64)
    assert rmse(torch, x, -x) == 2e300


def test_to_double_always_copies() -> None:
    x64 = torch.zeros(3, dtype=torch.float64)
    ids = torch.arange(3)
    to_double(torch, x64).add_(1)  # the fp64 module may work in place
    to_double(torch, [ids])[0].add_(1)
    assert float(x64.sum()) == 0.0 and ids.tolist() == [0, 1, 2]
