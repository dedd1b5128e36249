"""Across devices: capture on the GPU and check on the CPU, and the other way round.

Runs only where torch sees a GPU (CUDA or ROCm); the CPU-only dev machines skip it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from gpuport.validate.capture import CaptureOptions, capture
from gpuport.validate.check import CheckOptions, check
from gpuport.validate.model import Status

from .conftest import ref

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA or ROCm GPU"),
]


@pytest.mark.parametrize(("a", "b"), [("cuda", "cpu"), ("cpu", "cuda")])
def test_gpu_and_cpu_are_not_wrong(tmp_path: Path, a: str, b: str) -> None:
    out = tmp_path / f"{a}.gpv"
    capture(CaptureOptions(model_ref=ref(), out=out, device=a))
    report = check(CheckOptions(path=out, model_ref=ref(), device=b, grafted=True))
    assert report.counts[Status.WRONG] == 0, report.verdict_reason
    assert report.a.settings.device.startswith(a) and report.b.settings.device.startswith(b)
