"""Training speed: a compute roofline (serving speed is :mod:`gpuport.cost.step`).

Training is compute-bound: trained tokens/s per GPU ≈ achievable FLOP/s over the FLOPs of
one token (forward, backward and the recomputed forward of activation checkpointing). The
achievable rate is the GPU's published or measured GEMM figure; gradient communication is
not counted, so the figure is an upper bound.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuport.cost.shapes import ParamCount, train_flops_per_token
from gpuport.knowledge.models import ModelShape


@dataclass(frozen=True)
class Hardware:
    """Achievable per-GPU rates of the training roofline."""

    bandwidth: float  # bytes/s
    flops: float  # FLOP/s in the compute dtype
    busbw: float  # bytes/s, all-reduce bus bandwidth
    latency_s: float  # fixed cost of one small all-reduce


def train_tokens_per_s(shape: ModelShape, counts: ParamCount, seq_len: int, hw: Hardware) -> float:
    """Trained tokens/s per GPU at the compute roofline (communication not counted)."""
    return hw.flops / train_flops_per_token(shape, counts, seq_len)
