"""Shared fixtures for the bench tests: a real quick-suite context on this machine's CPU."""

from __future__ import annotations

import pytest

from gpuport.bench.registry import BenchContext
from gpuport.bench.run import make_measure, policies
from gpuport.platform import detect


@pytest.fixture
def cpu_ctx() -> BenchContext:
    """A quick-suite CPU context wired to the real timing core (no GPU needed)."""
    import torch  # make test installs the CPU build; a missing torch must fail, not skip

    info = detect(0, torch)
    if info.backend != "cpu":  # a GPU machine: still test the CPU path here
        info = info.model_copy(update={"backend": "cpu", "spec_key": None})
    kernel, model = policies("quick", False)
    device = torch.device("cpu")
    return BenchContext(
        torch=torch,
        device=device,
        info=info,
        spec=None,
        suite="quick",
        kernel_policy=kernel,
        model_policy=model,
        measure=make_measure(torch, device, info, None),
        options={},
    )
