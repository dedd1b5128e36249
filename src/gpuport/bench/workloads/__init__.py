"""Importing this package registers every built-in workload.

``SUITE_ORDER`` is the order a suite runs them in: the microbenchmarks first (they
set the ceilings the model-level figures are read against), the multi-process
collectives last.
"""

from gpuport.bench.workloads import (  # noqa: F401  (imported for their registration)
    attention,
    collectives,
    decode,
    gemm,
    membw,
    resnet,
    transformer,
    user,
)

SUITE_ORDER = (
    "gemm",
    "membw",
    "attention",
    "resnet50",
    "transformer",
    "decode",
    "collectives",
    "user",
)
