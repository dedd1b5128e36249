"""The attention workload: FLOP conventions, case lists, backend choice, output check."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from gpuport.bench.model import DeviceInfo
from gpuport.bench.registry import BenchContext, TimingPolicy
from gpuport.bench.workloads import attention
from gpuport.bench.workloads.attention import Shape

torch = pytest.importorskip("torch")

BACKEND_NAMES = {"flash_attention", "efficient_attention", "cudnn_attention", "math"}


def gpu_ctx(suite: str = "quick", **options: Any) -> BenchContext:
    """A context shaped like a GPU machine, for case lists (never run here)."""
    return BenchContext(
        torch=torch,
        device=torch.device("cpu"),
        info=DeviceInfo(backend="cuda", name="NVIDIA H100 80GB HBM3", arch="sm_90"),
        spec=None,
        suite=suite,  # type: ignore[arg-type]
        kernel_policy=TimingPolicy(),
        model_policy=TimingPolicy(),
        measure=lambda *a, **k: None,
        options=options,
    )


def test_forward_flops_are_four_bhssd_and_causal_halves_them() -> None:
    full = Shape(batch=2, heads=16, seq=8192, head_dim=128, causal=False, backward=False)
    assert attention.flops(full) == 4 * 2 * 16 * 8192 * 8192 * 128 == 1_099_511_627_776
    causal = dataclasses.replace(full, causal=True)
    assert attention.flops(causal) == 549_755_813_888
    both = dataclasses.replace(causal, backward=True)
    assert attention.flops(both) == 3.5 * 549_755_813_888  # fwd + 2.5 x fwd


def test_cpu_quick_is_two_tiny_fp32_forward_cases(cpu_ctx: BenchContext) -> None:
    cases = attention.WORKLOAD.cases(cpu_ctx)
    assert [c.name for c in cases] == [
        "fp32 noncausal fwd B1 H2 S128 D64",
        "fp32 causal fwd B1 H2 S128 D64",
    ]
    assert all(c.peak == ("tflops", "fp32") and c.unit == "TFLOPS" for c in cases)
    assert cases[1].params == {
        "dtype": "fp32",
        "batch": 1,
        "heads": 2,
        "seq": 128,
        "head_dim": 64,
        "causal": True,
        "backward": False,
    }


@pytest.mark.parametrize("index", [0, 1])
def test_cpu_case_records_backend_flops_and_a_passing_check(
    cpu_ctx: BenchContext, index: int
) -> None:
    case = attention.WORKLOAD.cases(cpu_ctx)[index]
    result = case.run(cpu_ctx)
    expected = 4 * 1 * 2 * 128 * 128 * 64 / (2 if index else 1)
    assert result.work_per_iter == expected
    assert result.metrics["backend"] in BACKEND_NAMES
    assert float(result.metrics["check_error"]) < 1e-4  # fp32 on CPU: rounding only
    assert result.params["causal"] is bool(index)


def test_forward_backward_case_runs_on_cpu_full(cpu_ctx: BenchContext) -> None:
    ctx = dataclasses.replace(cpu_ctx, suite="full")
    cases = {c.name: c for c in attention.WORKLOAD.cases(ctx)}
    assert len(cases) == 2 * 2 * 3  # fwd and fwd+bwd, causal or not, S = 128/256/512
    case = cases["fp32 causal fwd+bwd B1 H2 S128 D64"]
    result = case.run(ctx)
    assert result.work_per_iter == 3.5 * (4 * 2 * 128 * 128 * 64 / 2)
    assert result.metrics["backend"] in BACKEND_NAMES


def test_gpu_quick_follows_the_flashattention_benchmark_shapes() -> None:
    names = [c.name for c in attention.WORKLOAD.cases(gpu_ctx())]
    assert names == [
        "bf16 noncausal fwd B16 H16 S1024 D128",
        "bf16 noncausal fwd B4 H16 S4096 D128",
        "bf16 noncausal fwd B2 H16 S8192 D128",
        "bf16 causal fwd B16 H16 S1024 D128",
        "bf16 causal fwd B4 H16 S4096 D128",
        "bf16 causal fwd B2 H16 S8192 D128",
    ]


def test_gpu_full_sweeps_512_to_16k_with_backward_in_two_dtypes() -> None:
    cases = attention.WORKLOAD.cases(gpu_ctx("full"))
    assert len(cases) == 2 * 2 * 2 * 6
    seqs = sorted({c.params["seq"] for c in cases})
    assert seqs == [512, 1024, 2048, 4096, 8192, 16384]
    assert all(c.params["batch"] * c.params["seq"] == 16384 for c in cases)
    assert {c.params["dtype"] for c in cases} == {"bf16", "fp16"}
    assert any(c.params["backward"] for c in cases)


def test_dtypes_option_restricts_and_ignores_unknown_names() -> None:
    cases = attention.WORKLOAD.cases(gpu_ctx(dtypes=["fp16", "fp8"]))
    assert {c.params["dtype"] for c in cases} == {"fp16"}


def _reference_inputs(causal: bool) -> tuple[Any, Any, Any, Any]:
    gen = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(1, 2, 96, 32, generator=gen) for _ in range(3))
    scores = q @ k.transpose(-1, -2) / math.sqrt(32)
    if causal:
        scores = scores.masked_fill(torch.ones(96, 96, dtype=torch.bool).triu(1), -math.inf)
    return q, k, v, torch.softmax(scores, dim=-1) @ v


@pytest.mark.parametrize("causal", [False, True])
def test_check_output_matches_a_hand_written_attention(causal: bool) -> None:
    q, k, v, out = _reference_inputs(causal)
    assert attention.check_output(torch, q, k, v, out, causal, "fp32") < 1e-5


def test_check_output_rejects_wrong_outputs() -> None:
    q, k, v, out = _reference_inputs(causal=True)
    with pytest.raises(RuntimeError, match="SDPA kernel is wrong"):
        attention.check_output(torch, q, k, v, torch.zeros_like(out), True, "fp32")
    # A non-causal result passed off as causal: the early rows see the future.
    _, _, _, noncausal = _reference_inputs(causal=False)
    with pytest.raises(RuntimeError, match="attention fp32: output differs"):
        attention.check_output(torch, q, k, v, noncausal, True, "fp32")
    with pytest.raises(RuntimeError, match="SDPA kernel is wrong"):
        attention.check_output(torch, q, k, v, torch.full_like(out, math.nan), True, "fp32")
