"""``resnet50``: one ResNet-50 training step (forward, cross-entropy, backward, SGD), images/s.

The conv-net counterpart of ``transformer``: it exercises the convolution libraries
(cuDNN on NVIDIA, MIOpen on AMD), batch norm and the channels-last path, which matmul
benchmarks never touch and where the two stacks differ most.

The model is ``torchvision.models.resnet50(weights=None)`` when torchvision imports;
otherwise (torchvision is an optional, version-locked companion of torch) the faithful
built-in definition below: torchvision's ResNet-50 v1.5 (bottleneck blocks [3, 4, 6, 3],
widths 64…2048, stride on the 3x3 conv, 25,557,032 parameters). ``model_source`` in
the metrics says which one ran. Random init, random normal images, random labels.

GPUs: channels_last memory format, bf16 autocast, ``cudnn.benchmark`` on for the step on
CUDA (as training scripts set it; restored afterwards; left off on ROCm, where it starts
MIOpen's exhaustive search), SGD with momentum. CPU: fp32.

Sizes: CPU quick batch 2 at 64x64 (about 1 s on 2 cores); GPU quick batch 128 at 224x224
(estimated 4-5 s on an H100 with cuDNN autotuning); GPU full batch 64, 128, 256 at 224x224
(estimated 20-30 s). GPU times are estimates from published ResNet-50 throughput, not measured.

``tflops`` in the metrics is approximate: ResNet-50 v1.5 does 4.09 G multiply-accumulates
per 224x224 image forward (the "4.1 GFLOPs" torchvision lists counts one multiply-add as one
operation). Here a multiply-add is 2 FLOPs, like every other gpuport TFLOPS figure, and a
training step is 3x the forward: ``2 x 3 x 4.09e9 x batch x (res/224)²``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
from typing import Any

from gpuport.bench.registry import BenchContext, Case, Measurement, Workload, register
from gpuport.bench.workloads import llama

FORWARD_MACS_224 = 4.09e9  # ResNet-50 v1.5 multiply-accumulates per 224x224 image
RESNET50_LAYERS = (3, 4, 6, 3)
RESNET50_PARAMS = 25_557_032


def train_flops(batch: int, resolution: int) -> float:
    """Approximate FLOPs of one training step (2 per MAC, backward = 2x forward)."""
    return 2.0 * 3.0 * FORWARD_MACS_224 * batch * (resolution / 224) ** 2


def _sizes(ctx: BenchContext) -> list[tuple[int, int]]:
    """(batch, resolution) pairs for this suite and device."""
    if not ctx.on_gpu:
        return [(2, 64)]
    if ctx.quick:
        return [(128, 224)]
    return [(64, 224), (128, 224), (256, 224)]


def _cases(ctx: BenchContext) -> list[Case]:
    default = "bf16" if ctx.on_gpu else "fp32"
    return [
        Case(
            name=f"{dtype} batch{batch} {res}px",
            run=_runner(dtype, batch, res),
            params={"dtype": dtype, "batch": batch, "resolution": res, "model": "resnet50"},
            unit="images/s",
            scale=1.0,
        )
        for dtype in llama.model_dtypes(ctx, default)
        for batch, res in _sizes(ctx)
    ]


def builtin_resnet50(torch: Any, num_classes: int = 1000) -> Any:
    """torchvision's ResNet-50 v1.5, layer for layer (same names, shapes and init)."""
    nn = torch.nn
    module: Any = nn.Module

    class Bottleneck(module):  # type: ignore[misc]
        expansion = 4

        def __init__(self, inplanes: int, planes: int, stride: int, downsample: Any) -> None:
            super().__init__()
            width = planes
            self.conv1 = nn.Conv2d(inplanes, width, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(width)
            self.conv3 = nn.Conv2d(width, planes * self.expansion, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(planes * self.expansion)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = downsample

        def forward(self, x: Any) -> Any:
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            return self.relu(out + identity)

    class ResNet(module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.inplanes = 64
            self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            self.layer1 = self._make_layer(64, RESNET50_LAYERS[0], 1)
            self.layer2 = self._make_layer(128, RESNET50_LAYERS[1], 2)
            self.layer3 = self._make_layer(256, RESNET50_LAYERS[2], 2)
            self.layer4 = self._make_layer(512, RESNET50_LAYERS[3], 2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512 * Bottleneck.expansion, num_classes)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)

        def _make_layer(self, planes: int, blocks: int, stride: int) -> Any:
            out = planes * Bottleneck.expansion
            downsample = None
            if stride != 1 or self.inplanes != out:
                downsample = nn.Sequential(
                    nn.Conv2d(self.inplanes, out, 1, stride=stride, bias=False),
                    nn.BatchNorm2d(out),
                )
            layers = [Bottleneck(self.inplanes, planes, stride, downsample)]
            self.inplanes = out
            layers += [Bottleneck(out, planes, 1, None) for _ in range(1, blocks)]
            return nn.Sequential(*layers)

        def forward(self, x: Any) -> Any:
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    return ResNet()


def build_resnet50(torch: Any, seed: int, *, prefer_torchvision: bool = True) -> tuple[Any, str]:
    """(model on CPU, source): torchvision's when it imports, else the built-in one.

    Init draws from the global RNG (torchvision's constructor does), so it runs inside
    ``fork_rng`` with the run's seed: repeatable, and the caller's RNG state is untouched.
    """
    torchvision = _torchvision() if prefer_torchvision else None
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if torchvision is not None:
            version = ".".join(torchvision.__version__.split("+")[0].split(".")[:2])
            return torchvision.models.resnet50(weights=None), f"torchvision {version}"
        return builtin_resnet50(torch), "gpuport builtin"


def _torchvision() -> Any | None:
    """torchvision if it imports; a wheel built for another torch fails at import, not later."""
    try:
        return importlib.import_module("torchvision")
    except Exception:
        return None


def _runner(dtype: str, batch: int, res: int) -> Any:
    def run(ctx: BenchContext) -> Measurement:
        llama.check_dtype(ctx, dtype)
        return _train(ctx, dtype, batch, res)

    return run


@contextlib.contextmanager
def _cudnn_benchmark(torch: Any, enabled: bool) -> Any:
    previous = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = enabled
    try:
        yield
    finally:
        torch.backends.cudnn.benchmark = previous


def _train(ctx: BenchContext, dtype: str, batch: int, res: int) -> Measurement:
    try:
        m, source = _measure_step(ctx, dtype, batch, res)
    finally:  # the model, optimizer state and batch died with _measure_step's frame
        if ctx.on_gpu:
            ctx.torch.cuda.empty_cache()
    metrics: dict[str, float | str] = {
        **m.metrics,
        "model_source": source,
        "step_ms": round(m.stats.median * 1e3, 4),
        "tflops": round(train_flops(batch, res) / m.stats.median / 1e12, 4),
        "tflops_convention": "2 x 3 x 4.09 GMAC x batch x (res/224)^2 per step (approximate)",
        "memory_format": "channels_last" if ctx.on_gpu else "contiguous",
    }
    return dataclasses.replace(m, metrics=metrics)


def _measure_step(ctx: BenchContext, dtype: str, batch: int, res: int) -> tuple[Measurement, str]:
    """Build the model, optimizer and batch here so they are freed when this returns."""
    torch = ctx.torch
    F = torch.nn.functional
    fmt = torch.channels_last if ctx.on_gpu else torch.contiguous_format
    model, source = build_resnet50(torch, ctx.seed)
    model = model.to(device=ctx.device, memory_format=fmt).train()
    opt = torch.optim.SGD(
        model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4, foreach=ctx.on_gpu
    )
    gen = llama.make_generator(torch, ctx.device, ctx.seed + 1)
    images = torch.randn((batch, 3, res, res), generator=gen, device=ctx.device)
    images = images.contiguous(memory_format=fmt)
    labels = torch.randint(0, 1000, (batch,), generator=gen, device=ctx.device)
    use_autocast = dtype != "fp32"
    autocast_dtype = llama.torch_dtype(torch, dtype)
    device_type = ctx.device.type

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type, dtype=autocast_dtype, enabled=use_autocast):
            loss = F.cross_entropy(model(images), labels)
        loss.backward()
        opt.step()

    # On ROCm, cudnn.benchmark makes MIOpen run an exhaustive search that can take minutes on
    # a machine without a tuned database (pytorch#145294); leave MIOpen's default find mode.
    with _cudnn_benchmark(torch, ctx.info.backend == "cuda"):
        m = ctx.measure(step, policy=ctx.model_policy, work_per_iter=batch)
    return m, source


WORKLOAD = register(
    Workload(
        name="resnet50",
        summary="ResNet-50 training step (SGD, cross-entropy): images/s, conv-library health",
        cases=_cases,
    )
)
