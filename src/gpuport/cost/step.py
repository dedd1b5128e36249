"""The step model of LLM serving: what one engine step costs, and the steady state it sets.

A serving engine (vLLM, SGLang, TensorRT-LLM) runs steps. Each step carries one token of
every sequence that is decoding plus a chunk of prompt tokens being prefilled, through every
layer. Per GPU, its time is the sum over the step's parts of the larger of their memory and
compute time (a roofline per part, not one for the whole step: attention reads the KV cache
while the MLP multiplies), plus a fixed cost per layer (kernel launches, scheduling,
sampling, routing, synchronisation) and the collectives that tie the GPUs of a replica
together:

    linear    max(weights read / BW,          2 · tokens · params / F)
    MoE       max(experts touched / BW,        2 · tokens · k · expert / F_moe)
    attention max(KV read / BW,                decode + prefill attention FLOPs / F_attn)
    overhead  layers · t_layer
    comm      2 all-reduces per layer · (α + bus factor · tokens · hidden · 2 B / busbw);
              with expert parallelism, an MoE layer's two all-to-alls instead of one

A replica serving ``C`` sequences in a closed loop (each finished request replaced by a new
one) needs ``C · isl / osl`` prompt tokens per decode step. They are prefilled in chunks
that ride along with the decodes, so a share of the steps is slower: prefill is charged in
the steps the decodes wait on (the interference a user sees as a slower TPOT). TPOT is the
mean step, TTFT half a step of waiting plus the steps that prefill the prompt, and each
sequence completes one request per TTFT + osl · TPOT:

    output tokens/s per replica = C · osl / (TTFT + osl · TPOT)

The achievable rates (BW, F, F_moe, t_layer, α) come from :mod:`gpuport.cost.rates`: a GPU's
measured or published hardware figures times the serving factors fitted on published
measurements (``knowledge/serving.toml``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from gpuport.cost.shapes import (
    UNQUANTISED_BYTES,
    KvDtype,
    ParamCount,
    WeightDtype,
    attention_dims,
    bytes_per_param,
    kv_bytes_per_layer_token,
)
from gpuport.knowledge.models import ModelShape

ACT_BYTES = 2  # bf16 activations on the wire
STEADY_ITERATIONS = 6  # fixed-point passes of the closed loop (converges in 3-4)


@dataclass(frozen=True)
class Rates:
    """Achievable per-GPU rates for one GPU kind, engine and weight format."""

    bandwidth: float  # bytes/s that decode reads (weights, KV) stream at
    flops: float  # FLOP/s of the dense linear layers in the compute dtype
    moe_flops: float  # FLOP/s of routed-expert GEMMs (grouped, smaller, less efficient)
    attn_flops: float  # FLOP/s of attention (16-bit)
    layer_s: float  # fixed cost per layer per step
    busbw: float  # bytes/s, all-reduce bus bandwidth
    collective_s: float  # fixed cost of one all-reduce
    alltoall_s: float  # fixed cost of one expert-parallel all-to-all (dispatch or combine)


@dataclass(frozen=True)
class Deployment:
    """How one replica is split: tensor, pipeline and expert parallel, DP attention."""

    tp: int = 1
    pp: int = 1
    ep: int = 1  # expert-parallel degree (MoE); 1: experts split like the other weights
    dp_attention: bool = False  # MLA/MoE: attention data-parallel, experts over the GPUs

    @property
    def gpus(self) -> int:
        return self.tp * self.pp


@dataclass(frozen=True)
class StepTime:
    """One engine step on one GPU of a replica, by part (seconds)."""

    linear: float
    moe: float
    attention: float
    overhead: float
    comm: float
    memory_bound: float  # the part of the time that is memory-bound
    pipeline: int = 1  # stages a token passes through (the step repeats per stage)

    @property
    def total(self) -> float:
        stage = self.linear + self.moe + self.attention + self.overhead + self.comm
        return stage * self.pipeline

    @property
    def bound(self) -> Literal["memory", "compute"]:
        work = self.linear + self.moe + self.attention
        return "memory" if self.memory_bound * 2 >= work else "compute"


@dataclass(frozen=True)
class Workload:
    """Mean prompt and output lengths of the requests (tokens)."""

    isl: float
    osl: float


@dataclass(frozen=True)
class Model:
    """Everything about the model a step needs, computed once."""

    shape: ModelShape
    counts: ParamCount
    dtype: WeightDtype
    kv_dtype: KvDtype


def _linear_bytes(m: Model) -> float:
    return bytes_per_param(m.dtype)


def _dense_params(m: Model) -> float:
    """Parameters every token passes through outside the routed experts (no embedding)."""
    c = m.counts
    return float(c.attention + c.dense_mlp + c.always_on_moe + c.lm_head + c.embedding_read)


def _touched_experts(m: Model, tokens: float) -> float:
    """Distinct routed experts ``tokens`` tokens reach per MoE layer (uniform routing)."""
    c = m.counts
    if not c.num_experts or tokens <= 0:
        return 0.0
    k, e = c.experts_per_token, c.num_experts
    return float(e * (1.0 - (1.0 - k / e) ** tokens))


def step_time(
    m: Model,
    dep: Deployment,
    rates: Rates,
    decode: float,
    prefill: float,
    kv_len: float,
    prompt: float,
) -> StepTime:
    """One step of ``decode`` decoding sequences (attending to ``kv_len`` tokens) and
    ``prefill`` prompt tokens (of prompts ``prompt`` long), per GPU of one replica.

    With ``pp`` pipeline stages, a stage holds ``layers / pp`` layers and works on a
    ``1 / pp`` micro-batch; a token passes all stages, so the step repeats ``pp`` times.
    """
    shape, c = m.shape, m.counts
    n = dep.gpus
    pp = dep.pp
    decode_mb, prefill_mb = decode / pp, prefill / pp  # one micro-batch per stage
    tokens = decode_mb + prefill_mb
    lin_b = _linear_bytes(m)
    # Weights one stage's GPU reads per step. Embedding lookups are not reads; norms are
    # small. Split n ways whatever the mix of TP and PP (each GPU holds 1/n).
    dense_bytes = (_dense_params(m) - c.lm_head - c.embedding_read) * lin_b + (
        c.lm_head + c.embedding_read
    ) * UNQUANTISED_BYTES
    dense_flops = 2.0 * tokens * _dense_params(m)
    if dep.dp_attention:
        # Attention weights on every GPU; each GPU runs attention for its share of tokens.
        attn_bytes_each = c.attention * lin_b
        dense_bytes = dense_bytes - attn_bytes_each + attn_bytes_each * n / pp
    linear = max(dense_bytes / n / rates.bandwidth, dense_flops / n / rates.flops)
    moe = 0.0
    if c.num_experts:
        touched = _touched_experts(m, tokens)
        moe_bytes = touched * c.expert_size * c.moe_layers * lin_b
        moe_flops = 2.0 * tokens * c.experts_per_token * c.expert_size * c.moe_layers
        moe = max(moe_bytes / n / rates.bandwidth, moe_flops / n / rates.moe_flops)
    # Attention: decode reads every decoding sequence's KV; prefill attends over its prompt.
    layers = shape.num_layers
    per_layer_token = kv_bytes_per_layer_token(shape, m.kv_dtype)
    kv_bytes = decode_mb * kv_len * per_layer_token * layers
    if shape.is_mla and not dep.dp_attention:
        kv_bytes *= dep.tp  # every TP rank reads the whole latent of every sequence
    elif not shape.is_mla:
        kv_bytes *= max(1.0, dep.tp / shape.num_kv_heads)  # KV heads replicated past kv_heads
    qk, v = attention_dims(shape, decode=True)
    qk_p, v_p = attention_dims(shape, decode=False)
    attn_flops = 2.0 * shape.num_heads * (qk + v) * kv_len * decode_mb * layers
    attn_flops += prefill_mb * layers * shape.num_heads * (qk_p + v_p) * prompt
    attention = max(kv_bytes / n / rates.bandwidth, attn_flops / n / rates.attn_flops)
    stage_layers = layers / pp
    overhead = rates.layer_s * stage_layers
    comm = _comm(m, dep, rates, tokens, stage_layers)
    memory_bound = sum(
        t
        for t, is_memory in (
            (linear, dense_bytes / rates.bandwidth >= dense_flops / rates.flops),
            (attention, kv_bytes / rates.bandwidth >= attn_flops / rates.attn_flops),
        )
        if is_memory
    )
    return StepTime(linear, moe, attention, overhead, comm, memory_bound, pipeline=pp)


def _comm(m: Model, dep: Deployment, rates: Rates, tokens: float, stage_layers: float) -> float:
    """Collectives of one stage's step.

    Tensor parallel: two all-reduces of the activations per layer (after attention, after
    the MLP). Expert parallel: an MoE layer dispatches its tokens to the experts' GPUs and
    combines them back (two all-to-alls) instead of the MLP's all-reduce. DP attention has no
    attention all-reduce; its MoE layers still dispatch and combine.
    """
    shape, c = m.shape, m.counts
    n = dep.gpus // dep.pp
    if n <= 1:
        return 0.0
    hidden_bytes = tokens * shape.hidden_size * ACT_BYTES
    allreduce = rates.collective_s + 2.0 * (n - 1) / n * hidden_bytes / rates.busbw
    moe_share = c.moe_layers / shape.num_layers if c.num_experts else 0.0
    moe_layers = stage_layers * moe_share
    dense_layers = stage_layers - moe_layers
    expert_parallel = c.num_experts and (dep.ep > 1 or dep.dp_attention)
    if not expert_parallel:
        return 2.0 * stage_layers * allreduce
    # Each token goes to k experts; a share (n - 1) / n of them lives on another GPU.
    routed = hidden_bytes * c.experts_per_token * (n - 1) / n
    alltoall = rates.alltoall_s + routed / rates.busbw
    attention = 0.0 if dep.dp_attention else allreduce
    return dense_layers * 2.0 * allreduce + moe_layers * (attention + 2.0 * alltoall)


@dataclass(frozen=True)
class Steady:
    """A replica serving ``concurrency`` sequences in a closed loop."""

    concurrency: float
    decode_step: StepTime  # a step that carries only decodes
    mixed_step: StepTime  # a step that carries the decodes and a prefill chunk
    mixed_share: float  # share of steps that carry a prefill chunk
    chunk: float  # prompt tokens in a prefill-carrying step
    tpot_s: float
    ttft_s: float
    tokens_per_s: float  # output tokens/s of the replica
    gpus: int

    @property
    def per_gpu(self) -> float:
        return self.tokens_per_s / self.gpus

    @property
    def per_user(self) -> float:
        return 1.0 / self.tpot_s

    @property
    def bound(self) -> Literal["memory", "compute"]:
        return self.mixed_step.bound if self.mixed_share >= 0.5 else self.decode_step.bound


def steady_state(
    m: Model, dep: Deployment, rates: Rates, work: Workload, concurrency: float, chunk: float
) -> Steady:
    """The closed loop of ``concurrency`` sequences on one replica (see the module doc).

    Prompts are not spread thinly over every step: an engine prefills them in chunks (up to
    ``chunk`` tokens, its ``max_num_batched_tokens``), and a step carrying a chunk is
    compute-bound and reaches every expert of an MoE while a decode-only step is not. The
    mean step is the mix of the two kinds in the proportion the prompts need: ``f`` of the
    steps carry a chunk of ``s`` tokens, with ``f · s`` the prompt tokens per decode step.
    """
    c = max(1.0, concurrency)
    isl, osl = work.isl, work.osl
    kv_len = isl + osl / 2.0
    decoding = c
    per_step = c * isl / osl  # prompt tokens needed per decode step (first guess)
    for _ in range(STEADY_ITERATIONS):
        size = max(min(chunk, max(isl, per_step)), per_step if per_step > chunk else 0.0)
        share = min(1.0, per_step / size) if size else 0.0
        dec = step_time(m, dep, rates, decoding, 0.0, kv_len, isl)
        mix = step_time(m, dep, rates, decoding, size, kv_len, isl)
        tpot = (1.0 - share) * dec.total + share * mix.total
        # The prompt's own chunks: the full ones, and the step that carries what is left.
        full = math.floor(isl / size + 1e-9)
        rest = isl - full * size
        tail = step_time(m, dep, rates, decoding, rest, kv_len, isl).total if rest > 1 else 0.0
        ttft = 0.5 * tpot + full * mix.total + tail
        decoding = c * osl * tpot / (osl * tpot + ttft)
        per_step = c * isl / (osl + ttft / tpot)
    out = c * osl / (ttft + osl * tpot)
    return Steady(c, dec, mix, share, size, tpot, ttft, out, dep.gpus)


def prefill_rate(m: Model, dep: Deployment, rates: Rates, prompt: float, chunk: float) -> float:
    """Prompt tokens/s per GPU when a replica does nothing but prefill, a chunk a step."""
    chunk = max(prompt, chunk)
    step = step_time(m, dep, rates, 0.0, chunk, 0.0, prompt)
    return chunk / step.total / dep.gpus
