"""The ``resnet50`` workload: a faithful built-in ResNet-50 and an honest training step."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from gpuport.bench.registry import BenchContext, Skip
from gpuport.bench.workloads import resnet


@pytest.fixture(scope="module")
def builtin() -> torch.nn.Module:
    model, source = resnet.build_resnet50(torch, seed=0, prefer_torchvision=False)
    assert source == "gpuport builtin"
    return model


def test_builtin_has_torchvision_resnet50_parameter_count(builtin: torch.nn.Module) -> None:
    assert sum(p.numel() for p in builtin.parameters()) == 25_557_032 == resnet.RESNET50_PARAMS


def test_builtin_is_v1_5_with_blocks_3_4_6_3(builtin: torch.nn.Module) -> None:
    stages = [builtin.layer1, builtin.layer2, builtin.layer3, builtin.layer4]
    assert [len(s) for s in stages] == [3, 4, 6, 3]
    assert [s[-1].conv3.out_channels for s in stages] == [256, 512, 1024, 2048]
    first = builtin.layer2[0]
    assert first.conv1.stride == (1, 1)  # v1.5: the stride is on the 3x3 conv, not the 1x1
    assert first.conv2.stride == (2, 2)
    assert first.downsample[0].stride == (2, 2)
    assert builtin.fc.in_features == 2048 and builtin.fc.out_features == 1000
    # torchvision's init: kaiming-normal (fan_out) convs, BN weight 1 / bias 0.
    assert builtin.bn1.weight.min().item() == 1.0 and builtin.bn1.bias.abs().max().item() == 0.0
    fan_out = 64 * 7 * 7
    assert builtin.conv1.weight.std().item() == pytest.approx((2 / fan_out) ** 0.5, rel=0.05)


def test_builtin_forward_shape_at_small_resolution(builtin: torch.nn.Module) -> None:
    builtin.eval()
    with torch.inference_mode():
        out = builtin(torch.randn(2, 3, 64, 64, generator=torch.Generator().manual_seed(0)))
    assert out.shape == (2, 1000)
    assert torch.isfinite(out).all()


def test_build_is_seeded_and_leaves_the_global_rng_alone() -> None:
    state = torch.random.get_rng_state()
    a, _ = resnet.build_resnet50(torch, seed=4, prefer_torchvision=False)
    b, _ = resnet.build_resnet50(torch, seed=4, prefer_torchvision=False)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert torch.equal(a.conv1.weight, b.conv1.weight)


def test_train_flops_convention_by_hand() -> None:
    # 2 FLOPs per MAC x 3 (forward + backward) x 4.09 GMAC x batch 2 at 224 px.
    assert resnet.train_flops(2, 224) == pytest.approx(2 * 3 * 4.09e9 * 2)
    assert resnet.train_flops(2, 112) == pytest.approx(resnet.train_flops(2, 224) / 4)


def test_cpu_quick_case_is_tiny_and_reports_its_model(cpu_ctx: BenchContext) -> None:
    cases = resnet.WORKLOAD.cases(cpu_ctx)
    assert [c.name for c in cases] == ["fp32 batch2 64px"]
    case = cases[0]
    assert (case.unit, case.scale, case.peak) == ("images/s", 1.0, None)
    m = case.run(cpu_ctx)
    assert m.work_per_iter == 2  # images per step: headline = images/s
    source = m.metrics["model_source"]
    assert source == "gpuport builtin" or str(source).startswith("torchvision ")
    expected = resnet.train_flops(2, 64) / m.stats.median / 1e12
    assert m.metrics["tflops"] == pytest.approx(expected, rel=1e-3, abs=1e-4)


def test_fp16_skips_on_cpu_with_a_reason(cpu_ctx: BenchContext) -> None:
    ctx = dataclasses.replace(cpu_ctx, options={"dtypes": ["fp16"]})
    (case,) = resnet.WORKLOAD.cases(ctx)
    assert case.name == "fp16 batch2 64px"
    with pytest.raises(Skip, match="not benchmarked on CPU"):
        case.run(ctx)


def test_gpu_plans(cpu_ctx: BenchContext) -> None:
    gpu = dataclasses.replace(cpu_ctx, info=cpu_ctx.info.model_copy(update={"backend": "cuda"}))
    assert [c.name for c in resnet.WORKLOAD.cases(gpu)] == ["bf16 batch128 224px"]
    full = dataclasses.replace(gpu, suite="full")
    assert [c.params["batch"] for c in resnet.WORKLOAD.cases(full)] == [64, 128, 256]
