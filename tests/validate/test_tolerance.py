"""Tolerances per dtype and op class, K-scaling, and the reduction length K of common ops."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from gpuport.validate.tolerance import op_class, tolerance
from gpuport.validate.trace import reduction_k


@pytest.mark.parametrize(
    ("dtype", "rtol", "atol"),
    [
        ("float32", 1.3e-6, 1e-5),
        ("float16", 1e-3, 1e-5),
        ("bfloat16", 1.6e-2, 1e-5),
        ("float64", 1e-7, 1e-7),
    ],
)
def test_elementwise_follows_assert_close(dtype: str, rtol: float, atol: float) -> None:
    t = tolerance(dtype, "elementwise", None)
    assert (t.rtol, t.atol) == (rtol, atol)
    assert "assert_close" in t.provenance


def test_reductions_scale_atol_with_sqrt_k_and_keep_rtol() -> None:
    t = tolerance("float32", "matmul", 4096)
    assert t.atol == pytest.approx(1e-5 * 64)
    assert t.rtol == 1.3e-6  # the result is rounded once: rtol does not grow with K
    assert "sqrt(K=4096)" in t.provenance and "rocBLAS" in t.provenance
    assert tolerance("bfloat16", "matmul", 4096).rtol == 1.6e-2
    small, big = tolerance("float32", "matmul", 256), tolerance("float32", "matmul", 16384)
    assert big.atol / small.atol == pytest.approx(math.sqrt(16384 / 256))
    # elementwise ops never scale, whatever K is
    assert tolerance("float32", "elementwise", 4096).atol == 1e-5


def test_split_k_demo_of_the_research_notes_passes() -> None:
    """fp32, N(0,1), K=4096: sequential vs split-K=8 differ by ~1e-4, inside sqrt(K)·atol."""
    gen = torch.Generator().manual_seed(0)
    k = 4096
    x, w = torch.randn(64, k, generator=gen), torch.randn(64, k, generator=gen)
    whole = x @ w.T
    split = sum(x[:, i : i + k // 8] @ w[:, i : i + k // 8].T for i in range(0, k, k // 8))
    assert isinstance(split, torch.Tensor)
    tol = tolerance("float32", "matmul", k)
    assert torch.allclose(split, whole, rtol=tol.rtol, atol=tol.atol)
    assert not torch.allclose(split, whole)  # the naive check fails correct code


def test_integers_and_fp8() -> None:
    assert (tolerance("int64", "elementwise", None).atol, tolerance("int64", "x", 3).rtol) == (
        0.0,
        0.0,
    )
    fp8 = tolerance("float8_e4m3fn", "elementwise", None)
    assert (fp8.rtol, fp8.atol) == (0.125, 0.1) and "rocmlirTriton" in fp8.provenance


def test_op_classes() -> None:
    assert op_class("Linear") == "matmul"
    assert op_class("Conv2d") == "conv"
    assert op_class("LayerNorm") == "norm"
    assert op_class("LlamaRMSNorm") == "norm"
    assert op_class("MyFlashAttention") == "attention"
    assert op_class("SiLU") == "elementwise"


def test_reduction_k_of_common_modules() -> None:
    x = torch.randn(2, 8, 16)
    lin = nn.Linear(16, 4)
    assert reduction_k(torch, lin, (x,), [lin(x)]) == 16
    conv = nn.Conv2d(6, 8, kernel_size=3, groups=2)
    img = torch.randn(1, 6, 9, 9)
    assert reduction_k(torch, conv, (img,), [conv(img)]) == 3 * 3 * 3
    ln = nn.LayerNorm(16)
    assert reduction_k(torch, ln, (x,), [ln(x)]) == 16
    mha = nn.MultiheadAttention(16, 4, batch_first=True)
    out, _ = mha(x, x, x)
    assert reduction_k(torch, mha, (x, x, x), [out]) == 16 // 4 + 8
    sm = nn.Softmax(dim=1)
    assert reduction_k(torch, sm, (x,), [sm(x)]) == 8
    assert reduction_k(torch, nn.SiLU(), (x,), [x]) is None


def test_bf16_reduction_of_zeros_is_not_within_tolerance() -> None:
    """rtol scaled by sqrt(K) made bf16's 1.6e-2 into 1.02 at K = 4096: zeros passed."""
    from gpuport.validate.metrics import compare_tensors

    tol = tolerance("bfloat16", "matmul", 4096)
    assert tol.rtol == 1.6e-2 and tol.atol == pytest.approx(1e-5 * 64)
    assert tol.min_cosine == 0.99 and "Dynamo" in tol.provenance
    a = torch.randn(8, 256, generator=torch.Generator().manual_seed(0)).bfloat16() * 60
    r = compare_tensors(torch, a, torch.zeros_like(a), tol.atol, tol.rtol, tol.min_cosine)
    assert not r.within and r.mismatched > 0.9 * a.numel() and r.cosine_failed
    # a correct bf16 result one ULP off here and there stays within
    b = torch.nextafter(a, torch.full_like(a, float("inf")))
    assert compare_tensors(torch, a, b, tol.atol, tol.rtol, tol.min_cosine).within


def test_cosine_floors_per_dtype() -> None:
    assert tolerance("float32", "elementwise", None).min_cosine == 0.999
    assert tolerance("float16", "matmul", 64).min_cosine == 0.99
    assert tolerance("float8_e4m3fn", "elementwise", None).min_cosine == 0.99
    assert tolerance("int64", "elementwise", None).min_cosine is None
