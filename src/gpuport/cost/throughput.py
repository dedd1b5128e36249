"""How fast: a roofline model of decode, prefill and training steps.

Decode is memory-bound until the batch is large: each step reads the (active) weights
and every sequence's KV cache once, so step time ≈ bytes / achievable bandwidth.
Prefill and training are compute-bound: time ≈ FLOPs / achievable FLOP/s. The
achievable figures are the spec peaks times efficiency factors: published
measurements (BabelStream, mamf-finder, AMD's MAF blog) by default, your own
``gpuport bench`` run when given. Tensor parallelism adds two all-reduces per layer
(after attention and after the MLP), each costing a latency plus size / bus bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpuport.cost.memory import kv_copies
from gpuport.cost.shapes import (
    KvDtype,
    ParamCount,
    WeightDtype,
    decode_flops_per_token,
    decode_weight_bytes,
    kv_bytes_per_sequence,
    prefill_flops,
    train_flops_per_token,
    weight_bytes,
)
from gpuport.knowledge.models import ModelShape

ACT_BYTES = 2


@dataclass(frozen=True)
class Hardware:
    """Achievable per-GPU rates the roofline divides by."""

    bandwidth: float  # bytes/s
    flops: float  # FLOP/s in the compute dtype
    busbw: float  # bytes/s, all-reduce bus bandwidth
    latency_s: float  # fixed cost of one small all-reduce


@dataclass(frozen=True)
class DecodeStep:
    step_s: float
    per_user: float  # tokens/s each sequence sees
    per_gpu: float  # aggregate tokens/s divided by the GPU count
    bound: Literal["memory", "compute"]


def allreduce_s(shape: ModelShape, tokens: float, gpus: int, hw: Hardware) -> float:
    """Tensor-parallel communication of one forward pass over ``tokens`` tokens.

    Two all-reduces of tokens × hidden bf16 values per layer; a ring moves
    2(n − 1)/n of the message per GPU (nccl-tests' bus-bandwidth factor).
    """
    if gpus <= 1:
        return 0.0
    size = tokens * shape.hidden_size * ACT_BYTES
    one = hw.latency_s + 2.0 * (gpus - 1) / gpus * size / hw.busbw
    return 2.0 * shape.num_layers * one


def decode_step(
    shape: ModelShape,
    counts: ParamCount,
    dtype: WeightDtype,
    kv_dtype: KvDtype,
    batch: int,
    kv_len: float,
    gpus: int,
    hw: Hardware,
) -> DecodeStep:
    """One decode step of ``batch`` sequences that each attend to ``kv_len`` tokens."""
    weights = decode_weight_bytes(counts, dtype, batch) / gpus
    kv = batch * kv_bytes_per_sequence(shape, kv_len, kv_dtype) * kv_copies(shape, gpus) / gpus
    t_mem = (weights + kv) / hw.bandwidth
    t_compute = batch * decode_flops_per_token(shape, counts, kv_len) / gpus / hw.flops
    step = max(t_mem, t_compute) + allreduce_s(shape, batch, gpus, hw)
    return DecodeStep(
        step_s=step,
        per_user=1.0 / step,
        per_gpu=batch / step / gpus,
        bound="memory" if t_mem >= t_compute else "compute",
    )


def ttft_s(
    shape: ModelShape,
    counts: ParamCount,
    dtype: WeightDtype,
    prompt: int,
    gpus: int,
    hw: Hardware,
) -> float:
    """Time to first token of one prompt on an idle deployment (no queueing).

    The prefill is compute-bound for prompts of more than a few hundred tokens; a short
    one still has to read every weight once, hence the max.
    """
    t_compute = prefill_flops(shape, counts, prompt) / (gpus * hw.flops)
    t_mem = weight_bytes(counts, dtype) / (gpus * hw.bandwidth)
    return max(t_compute, t_mem) + allreduce_s(shape, prompt, gpus, hw)


def prefill_tokens_per_s(shape: ModelShape, counts: ParamCount, prompt: int, hw: Hardware) -> float:
    """Prompt tokens/s per GPU when prefills are batched: the compute roofline."""
    return hw.flops * prompt / prefill_flops(shape, counts, prompt)


def train_tokens_per_s(shape: ModelShape, counts: ParamCount, seq_len: int, hw: Hardware) -> float:
    """Trained tokens/s per GPU at the compute roofline (communication not counted)."""
    return hw.flops / train_flops_per_token(shape, counts, seq_len)
