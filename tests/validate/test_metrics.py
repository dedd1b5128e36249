"""Metrics computed by hand on small tensors: ULP in the tensor's own dtype, cosine, SQNR."""

from __future__ import annotations

import math

import pytest
import torch

from gpuport.validate import metrics
from gpuport.validate.metrics import compare_tensors


def m(a: torch.Tensor, b: torch.Tensor, atol: float = 1e-5, rtol: float = 1.3e-6):  # type: ignore[no-untyped-def]
    return compare_tensors(torch, a, b, atol, rtol)


def test_identical_tensors_are_exact() -> None:
    a = torch.randn(1000)
    r = m(a, a.clone())
    assert r.exact and r.within
    assert r.max_abs == 0 and r.max_ulp == 0 and r.sqnr_db is None
    assert r.cosine == pytest.approx(1.0)


def test_one_ulp_in_fp32() -> None:
    one = torch.tensor([1.0, 2.0, -3.0], dtype=torch.float32)
    nxt = torch.nextafter(one, torch.full_like(one, math.inf))
    r = m(one, nxt)
    assert r.max_ulp == 1
    assert r.max_abs == pytest.approx(2.0**-22)  # the ULP of 2.0 and of -3.0


def test_ulp_counted_in_bf16_and_fp16_not_after_upcast() -> None:
    for dtype, eps in ((torch.bfloat16, 2.0**-7), (torch.float16, 2.0**-10)):
        a = torch.tensor([1.0, 1.5], dtype=dtype)
        b = torch.tensor([1.0 + 3 * eps, 1.5], dtype=dtype)
        r = m(a, b, atol=1e-5, rtol=1e-3)
        assert r.max_ulp == 3, dtype
        assert r.max_abs == pytest.approx(3 * eps)


def test_ulp_only_where_both_are_normal_and_of_the_same_sign() -> None:
    a = torch.tensor([1.0], dtype=torch.bfloat16)
    b = torch.tensor([-1.0], dtype=torch.bfloat16)
    assert m(a, b).max_ulp is None  # a sign flip: no ULP figure (blank), max abs judges it
    a = torch.tensor([1e-3, -1e-3, 2.0, 1e-3])
    b = torch.tensor([-1e-3, 0.0, torch.nextafter(torch.tensor(2.0), torch.tensor(3.0)), 1e-40])
    r = m(a, b, atol=1e-5)
    assert r.max_ulp == 1  # only 2.0 counts: sign flip, zero and subnormal B are left out
    assert r.max_abs == pytest.approx(2e-3)


def test_ulp_ignores_elements_below_atol() -> None:
    a = torch.tensor([1e-9, 1.0])
    b = torch.tensor([2e-9, 1.0])  # millions of ULP apart, but far below atol
    r = m(a, b, atol=1e-5)
    assert r.max_ulp == 0
    assert r.within


def test_ulp_is_none_when_dtypes_differ() -> None:
    a = torch.ones(4)
    assert m(a, a.bfloat16()).max_ulp is None


def test_cosine_and_sqnr_of_a_known_noise_level() -> None:
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(100_000, generator=gen)
    noise = torch.randn(100_000, generator=gen) * 1e-3  # SNR 1e6 → 60 dB
    r = m(a, a + noise)
    assert r.sqnr_db == pytest.approx(60.0, abs=0.2)
    assert r.cosine == pytest.approx(1 - 0.5e-6, abs=2e-7)
    orth = torch.tensor([1.0, 0.0])
    assert m(orth, torch.tensor([0.0, 1.0])).cosine == pytest.approx(0.0)


def test_max_rel_and_minimum_passing_tolerances() -> None:
    a = torch.tensor([1.0, 2.0, 4.0])
    b = torch.tensor([1.0, 2.1, 4.0])
    r = m(a, b, atol=1e-5, rtol=1e-3)
    assert not r.within and r.mismatched == 1
    assert r.max_abs == pytest.approx(0.1, rel=1e-5)
    assert r.max_rel == pytest.approx(0.05, rel=1e-4)
    # near zero the denominator is floored at atol, so max_rel stays meaningful
    z = m(torch.tensor([0.0, 1.0]), torch.tensor([1e-6, 1.0]), atol=1e-5)
    assert z.max_rel == pytest.approx(0.1, rel=1e-3)
    assert r.min_atol == pytest.approx(0.1 - 2e-3, rel=1e-4)  # at rtol 1e-3
    assert r.min_rtol == pytest.approx((0.1 - 1e-5) / 2, rel=1e-4)  # at atol 1e-5
    # the minimum atol really is the boundary
    assert m(a, b, atol=r.min_atol * 1.001, rtol=1e-3).within


def test_nan_and_inf() -> None:
    a = torch.tensor([1.0, float("nan"), float("inf"), 2.0])
    b = torch.tensor([1.0, float("nan"), float("inf"), float("nan")])
    r = m(a, b)
    assert r.nonfinite_b == 1 and r.nonfinite_a == 0 and not r.within
    r = m(b, a)
    assert r.nonfinite_a == 1 and r.nonfinite_b == 0


def test_integers_compare_exactly() -> None:
    a = torch.tensor([1, 2, 3])
    assert m(a, a.clone()).within
    r = m(a, torch.tensor([1, 2, 4]))
    assert r.mismatched == 1 and r.max_abs == 1


def test_chunked_result_matches_one_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    gen = torch.Generator().manual_seed(3)
    a = torch.randn(10_007, generator=gen)
    b = a + torch.randn(10_007, generator=gen) * 1e-4
    whole = m(a, b)
    monkeypatch.setattr(metrics, "CHUNK", 1000)
    parts = m(a, b)
    assert parts.max_abs == whole.max_abs and parts.max_ulp == whole.max_ulp
    assert parts.mismatched == whole.mismatched
    assert parts.sqnr_db == pytest.approx(whole.sqnr_db, rel=1e-6)


# --- regressions from the review -------------------------------------------------------------


def test_overflowing_differences_are_measured_never_skipped() -> None:
    r = m(torch.tensor([1e20, 1.0]), torch.tensor([2e20, 1.0]))  # (b - a)² overflows fp32
    assert r.mismatched == 1 and not r.within
    assert r.max_abs == pytest.approx(1e20, rel=1e-6)
    assert r.sqnr_db == pytest.approx(0.0, abs=1e-6) and r.cosine == pytest.approx(1.0)
    r = m(torch.tensor([3e38, 0.5]), torch.tensor([-3e38, 0.5]))  # b - a overflows fp32
    assert r.mismatched == 1 and r.max_abs == pytest.approx(6e38, rel=1e-6)
    assert r.cosine == pytest.approx(-1.0) and r.mean_abs == pytest.approx(3e38, rel=1e-6)
    big = torch.tensor([3e38, 1.0], dtype=torch.bfloat16)
    r = m(big, -big, rtol=1.6e-2)
    assert r.mismatched == 2 and r.max_abs == pytest.approx(2 * float(big[0]), rel=1e-6)
    huge = torch.tensor([1e300, -1e300, 1.0], dtype=torch.float64)  # overflows even float64
    r = m(huge, -huge)
    assert r.mismatched == 3 and r.max_abs == pytest.approx(2e300, rel=1e-9)
    assert r.cosine == pytest.approx(-1.0) and math.isfinite(r.mean_abs)


def test_overflow_next_to_nan_is_still_measured() -> None:
    nan = float("nan")
    r = m(torch.tensor([nan, 1e20, 1.0]), torch.tensor([nan, 2e20, 1.0]))
    assert r.mismatched == 1 and r.max_abs == pytest.approx(1e20, rel=1e-6)


def test_overflowing_chunk_among_ordinary_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metrics, "CHUNK", 4)
    a = torch.ones(12)
    b = a.clone()
    a[5], b[5] = 1e20, 3e20
    b[10] = 2.0
    r = m(a, b)
    assert r.mismatched == 2 and r.max_abs == pytest.approx(2e20, rel=1e-6)
    assert r.mean_abs == pytest.approx((2e20 + 1.0) / 12, rel=1e-6)


def test_min_rtol_is_none_when_a_failing_element_of_a_is_zero() -> None:
    r = m(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 1.0]))
    assert r.mismatched == 1 and r.min_rtol is None  # no rtol passes 1 vs 0
    r = m(torch.tensor([0.0, 1.0]), torch.tensor([0.0, 2.0]))
    assert r.min_rtol == pytest.approx(1.0 - 1e-5, rel=1e-4)


def test_cosine_floor_is_a_gate_above_the_noise_floor() -> None:
    gen = torch.Generator().manual_seed(9)
    a = torch.randn(4096, generator=gen) * 2e-3
    sign = torch.randint(0, 2, (4096,), generator=gen) * 2 - 1
    atol, rtol = 6.4e-4, 1.6e-2  # bf16 at K = 4096
    b = a + sign * 0.99 * (atol + rtol * a.abs())  # every element just inside atol + rtol·|a|
    plain = compare_tensors(torch, a, b, atol, rtol)
    assert plain.mismatched == 0 and plain.within and plain.cosine is not None
    assert plain.cosine < 0.99
    gated = compare_tensors(torch, a, b, atol, rtol, min_cosine=0.99)
    assert gated.cosine_failed and not gated.within and gated.min_cosine == 0.99
    # below the noise floor (RMS error under atol) a cosine means nothing: no gate
    tiny = compare_tensors(torch, a * 1e-3, b * 1e-3, atol, rtol, min_cosine=0.99)
    assert tiny.within and not tiny.cosine_failed


def test_float_against_integer_cannot_be_compared() -> None:
    a = torch.tensor([0.7, 1.2])
    b = torch.tensor([0, 1])
    assert (
        metrics.kind_mismatch(a, b) == "dtype differs in kind: A float32 (float), B int64 (exact)"
    )
    with pytest.raises(ValueError, match="dtype differs in kind"):
        m(a, b)
    assert metrics.kind_mismatch(a, a.bfloat16()) is None
