"""Arithmetic on a model's shape: parameters, weight bytes, KV-cache bytes, FLOPs.

Everything the memory, throughput and money models need comes from here, counted from
the shape rather than from a headline parameter count, because the headline hides what
matters: which parameters are quantised (linear layers, not embeddings), which are read
per token (an MoE reads only its routed experts), and how big the KV cache is (grouped-
query attention shares KV heads; MLA caches one latent per token per layer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from gpuport.knowledge.models import ModelShape

WeightDtype = Literal["bf16", "fp16", "fp8", "int8", "int4", "fp4", "mxfp4", "nvfp4"]
KvDtype = Literal["bf16", "fp16", "fp8"]
WEIGHT_DTYPES: tuple[WeightDtype, ...] = (
    "bf16", "fp16", "fp8", "int8", "int4", "fp4", "mxfp4", "nvfp4",
)  # fmt: skip
# Micro-scaled 4-bit floats (OCP MX and NVIDIA's NVFP4): 4-bit E2M1 values with one shared
# scale per block. MXFP4: an 8-bit power-of-two scale per 32 values (4.25 bits a weight);
# NVFP4: an 8-bit FP8 scale per 16 values (4.5 bits). "fp4" is the GPU vendor's own: NVFP4
# on NVIDIA, MXFP4 on AMD (``native_fp4``).
FP4_FORMATS: tuple[WeightDtype, ...] = ("fp4", "mxfp4", "nvfp4")
KV_DTYPES: tuple[KvDtype, ...] = ("bf16", "fp16", "fp8")

# Group-wise int4 (GPTQ, AWQ) stores a 16-bit scale and a 4-bit zero point per group of
# 128 weights: 20 extra bits per 128, i.e. 4.156 bits per weight instead of 4.
INT4_GROUP_SIZE = 128
INT4_GROUP_OVERHEAD_BITS = 16 + 4
_LINEAR_BYTES: dict[WeightDtype, float] = {
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,  # per-tensor or per-channel scales: negligible
    "int8": 1.0,
    "int4": (4 + INT4_GROUP_OVERHEAD_BITS / INT4_GROUP_SIZE) / 8,
    "mxfp4": (4 + 8 / 32) / 8,
    "nvfp4": (4 + 8 / 16) / 8,
    "fp4": (4 + 8 / 32) / 8,  # resolved per GPU (native_fp4) before any GPU is sized
}
KV_BYTES: dict[KvDtype, int] = {"bf16": 2, "fp16": 2, "fp8": 1}
# Embeddings, the LM head and norms stay in 16 bits in GPTQ/AWQ/FP8 checkpoints.
UNQUANTISED_BYTES = 2.0


@dataclass(frozen=True)
class ParamCount:
    """Parameters by role. ``linear`` ones are what weight quantisation shrinks."""

    embedding: int
    lm_head: int
    attention: int
    dense_mlp: int
    routed_experts: int
    expert_size: int  # one routed expert in one layer
    moe_layers: int
    always_on_moe: int  # shared experts and routers, all MoE layers
    norms: int
    experts_per_token: int
    num_experts: int

    @property
    def total(self) -> int:
        return (
            self.embedding
            + self.lm_head
            + self.attention
            + self.dense_mlp
            + self.routed_experts
            + self.always_on_moe
            + self.norms
        )

    @property
    def active(self) -> int:
        """Parameters one token passes through: all but the routed experts it skips."""
        if not self.num_experts:
            return self.total
        skipped = (self.num_experts - self.experts_per_token) * self.expert_size * self.moe_layers
        return self.total - skipped

    @property
    def embedding_read(self) -> int:
        """The input embedding, read every step only when it is tied to the LM head."""
        return self.embedding if not self.lm_head else 0

    @property
    def linear(self) -> int:
        return self.attention + self.dense_mlp + self.routed_experts + self.always_on_moe

    @property
    def unquantised(self) -> int:
        return self.embedding + self.lm_head + self.norms


def count_params(shape: ModelShape) -> ParamCount:
    """Count parameters from the shape (gated MLPs: gate, up and down projections)."""
    h, layers = shape.hidden_size, shape.num_layers
    embedding = shape.vocab_size * h
    lm_head = 0 if shape.tie_embeddings else shape.vocab_size * h
    attention = layers * _attention_params(shape)
    moe_layers = (layers - shape.dense_layers) if shape.is_moe else 0
    dense_layers = layers - moe_layers
    dense_mlp = dense_layers * 3 * h * shape.intermediate_size
    expert_size = 3 * h * shape.expert_width if shape.is_moe else 0
    routed = moe_layers * shape.num_experts * expert_size
    router = h * shape.num_experts
    always_on = moe_layers * (shape.shared_experts * expert_size + router)
    norms = layers * 2 * h + h
    return ParamCount(
        embedding=embedding,
        lm_head=lm_head,
        attention=attention,
        dense_mlp=dense_mlp,
        routed_experts=routed,
        expert_size=expert_size,
        moe_layers=moe_layers,
        always_on_moe=always_on,
        norms=norms,
        experts_per_token=shape.experts_per_token,
        num_experts=shape.num_experts,
    )


def _attention_params(shape: ModelShape) -> int:
    """One layer's attention projections (plus biases where the model has them)."""
    h, heads = shape.hidden_size, shape.num_heads
    if shape.is_mla:
        rope = shape.qk_rope_head_dim or 0
        nope = shape.qk_nope_head_dim or 0
        v_dim = shape.v_head_dim or 0
        rank = shape.kv_lora_rank or 0
        q_dim = heads * (nope + rope)
        q = (
            h * q_dim
            if shape.q_lora_rank is None
            else h * shape.q_lora_rank + (shape.q_lora_rank * q_dim + shape.q_lora_rank)
        )
        kv = h * (rank + rope) + rank + rank * heads * (nope + v_dim)
        return q + kv + heads * v_dim * h
    d = shape.head_size
    q_width, kv_width = heads * d, shape.num_kv_heads * d
    params = h * q_width + 2 * h * kv_width + q_width * h
    if shape.qkv_bias:
        params += q_width + 2 * kv_width
    return params


def weight_bytes(counts: ParamCount, dtype: WeightDtype) -> float:
    """Bytes of all weights held in memory (every expert of an MoE is resident)."""
    return counts.linear * _LINEAR_BYTES[dtype] + counts.unquantised * UNQUANTISED_BYTES


def bytes_per_param(dtype: WeightDtype) -> float:
    return _LINEAR_BYTES[dtype]


def native_fp4(dtype: WeightDtype, vendor: str) -> WeightDtype:
    """``fp4`` as the GPU's vendor stores it (NVFP4 on NVIDIA, MXFP4 on AMD); others as given."""
    if dtype != "fp4":
        return dtype
    return "nvfp4" if vendor == "nvidia" else "mxfp4"


def decode_weight_bytes(counts: ParamCount, dtype: WeightDtype, batch: int) -> float:
    """Weight bytes one decode step reads for ``batch`` tokens.

    A dense model reads every weight once per step. An MoE layer reads only the experts
    the step's tokens were routed to: with uniform routing, ``batch`` tokens choosing k of
    E experts touch E·(1 − (1 − k/E)^batch) distinct experts. Real routers are skewed,
    so this is the optimistic (fewest-bytes) case. The input embedding is a lookup, not a
    full read, and is left out, unless it is tied to the LM head: then the same matrix
    produces every step's logits and is read in full (Llama 3.2, Gemma).
    """
    lookup = counts.embedding if counts.lm_head else 0  # tied: lm_head is 0, matrix is read
    resident = weight_bytes(counts, dtype) - lookup * UNQUANTISED_BYTES
    if not counts.num_experts:
        return resident
    k, e = counts.experts_per_token, counts.num_experts
    touched = e * (1.0 - (1.0 - k / e) ** max(batch, 1))
    skipped = (e - touched) * counts.expert_size * counts.moe_layers
    return resident - skipped * _LINEAR_BYTES[dtype]


def kv_bytes_per_token(shape: ModelShape, kv_dtype: KvDtype) -> int:
    """KV-cache bytes one token adds across all layers, ignoring sliding windows.

    Grouped-query attention: 2 (K and V) × layers × kv_heads × head_dim × bytes.
    MLA: layers × (kv_lora_rank + qk_rope_head_dim) × bytes (one latent, no separate V).
    """
    return shape.num_layers * kv_bytes_per_layer_token(shape, kv_dtype)


def kv_bytes_per_layer_token(shape: ModelShape, kv_dtype: KvDtype) -> int:
    size = KV_BYTES[kv_dtype]
    if shape.is_mla:
        return ((shape.kv_lora_rank or 0) + (shape.qk_rope_head_dim or 0)) * size
    return 2 * shape.num_kv_heads * shape.head_size * size


def kv_bytes_per_sequence(shape: ModelShape, tokens: float, kv_dtype: KvDtype) -> float:
    """KV bytes of one sequence of ``tokens``: sliding-window layers keep only the window."""
    per_layer = kv_bytes_per_layer_token(shape, kv_dtype)
    full = shape.num_layers - shape.sliding_layers
    window = min(tokens, shape.sliding_window or tokens)
    return float(per_layer * (full * tokens + shape.sliding_layers * window))


def attention_dims(shape: ModelShape, decode: bool) -> tuple[int, int]:
    """(query-key, value) dims per head the attention FLOPs scale with.

    MLA decodes in the latent space (weight absorption): scores over the 512 + 64 latent,
    values over the 512 latent. Prefill uses the full per-head dims.
    """
    if shape.is_mla:
        rank, rope = shape.kv_lora_rank or 0, shape.qk_rope_head_dim or 0
        if decode:
            return rank + rope, rank
        return (shape.qk_nope_head_dim or 0) + rope, shape.v_head_dim or 0
    return shape.head_size, shape.head_size


def decode_flops_per_token(shape: ModelShape, counts: ParamCount, kv_len: float) -> float:
    """FLOPs to generate one token attending to ``kv_len`` cached tokens."""
    qk, v = attention_dims(shape, decode=True)
    full = shape.num_layers - shape.sliding_layers
    window = min(kv_len, shape.sliding_window or kv_len)
    attended = full * kv_len + shape.sliding_layers * window
    return 2.0 * counts.active + 2.0 * shape.num_heads * (qk + v) * attended


def prefill_flops(shape: ModelShape, counts: ParamCount, prompt: int) -> float:
    """FLOPs to prefill one prompt: 2·P_active per token plus causal attention.

    Causal attention computes half the score matrix: per layer and head that is
    prompt²·(d_qk + d_v) FLOPs for QKᵀ and AV together. Sliding windows are ignored here
    (prefill of a long prompt is slightly overestimated for Gemma).
    """
    qk, v = attention_dims(shape, decode=False)
    attention = shape.num_layers * shape.num_heads * (qk + v) * float(prompt) ** 2
    return 2.0 * counts.active * prompt + attention


def train_flops_per_token(shape: ModelShape, counts: ParamCount, seq_len: int) -> float:
    """FLOPs per trained token with full activation recomputation (8·P, not 6·P).

    PaLM's count is 6·P + 12·L·H·Q·T (forward, backward); recomputing the forward for
    activation checkpointing adds another forward: 8·P + 16·L·H·Q·T.
    """
    qk, _v = attention_dims(shape, decode=False)
    return 8.0 * counts.active + 16.0 * shape.num_layers * shape.num_heads * qk * seq_len


def ceil_div(a: float, b: float) -> int:
    return math.ceil(a / b - 1e-9)
