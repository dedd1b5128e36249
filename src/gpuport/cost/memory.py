"""Does it fit, and on how many GPUs: the memory side of ``gpuport cost``.

The rule is the one the seeds apply by hand, made explicit per GPU:

    weights/N + sequences × KV(tokens held)·copies/N + overhead ≤ capacity × usable

with N a tensor-parallel degree the model's heads divide into, ``overhead`` the reserve
vLLM's start-up profile takes before it sizes the KV cache (non-torch runtime memory, the
CUDA-graph pool, the activation peak of one ``max_num_batched_tokens`` prefill chunk and
the sampler's logits), and ``usable`` vLLM's ``--gpu-memory-utilization`` (0.9 by default).
Capacities are exact bytes where the catalog has them. Training replaces the weights with
mixed-precision Adam's 16 bytes per parameter, sharded as the ZeRO stage says.

vLLM's defaults, from ``vllm/engine/arg_utils.py`` (``EngineArgs._set_default_args``, the
OpenAI server's values, unchanged from v0.9 to the current release, checked 2026-11-25):
a GPU with at least 70 GiB that is not an A100 ("For GPUs like H100 and MI300x") gets
``max_num_seqs`` 1024 and ``max_num_batched_tokens`` 8192; any other GPU 256 and 2048.
Since v0.21 its memory profile also counts the CUDA-graph pool (``Estimated CUDA graph
memory: 0.36 GiB total`` for a TP2 model in a vLLM 0.27.1 log; ~1.3 GiB/GPU for a large
MoE at TP8, vllm-project/vllm PR #51590).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuport.cost.shapes import ParamCount, WeightDtype, weight_bytes
from gpuport.knowledge.gpus import GpuSpec
from gpuport.knowledge.models import ModelShape

GB = 1e9
GIB = 2**30
ACT_BYTES = 2  # bf16 activations
NODE_GPUS = 8  # GPUs one NVLink/xGMI node joins; wider TP groups cross the network


# vLLM's split between "large" and other GPUs (arg_utils.py, see the module docstring).
VLLM_LARGE_GPU_BYTES = 70 * GIB
VLLM_LARGE = (1024, 8192)  # (max_num_seqs, max_num_batched_tokens) on H100/MI300X-class
VLLM_OTHER = (256, 2048)
LOGIT_BYTES = 4  # vLLM's sampler profile: max_num_seqs rows of fp32 logits


def capacity_bytes(spec: GpuSpec) -> tuple[float, str]:
    """A GPU's memory in bytes, and what the figure rests on.

    The exact ``memory_bytes`` the device reports (torch ``total_memory``, rocm-smi) where
    the catalog has it: an MI300X holds 205,822,885,888 B, less than 192 GiB, and an H100
    81,559 MiB, less than 80 GiB, so a datasheet figure read as GiB overstates both by
    enough to call a knife-edge fit a fit. Without it the datasheet's GB are read as
    10^9 bytes, which understates every HBM part: the safe side for a "fits".
    """
    if spec.memory_bytes:
        return float(spec.memory_bytes), "exact bytes from the catalog"
    return spec.memory_gb * GB, "datasheet GB read as 10^9 bytes (no memory_bytes in the catalog)"


def vllm_defaults(spec: GpuSpec) -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens) vLLM's OpenAI server picks for this GPU."""
    capacity, _ = capacity_bytes(spec)
    name = f"{spec.name} {spec.key}".lower()
    return VLLM_LARGE if capacity >= VLLM_LARGE_GPU_BYTES and "a100" not in name else VLLM_OTHER


def sampler_bytes(shape: ModelShape, max_num_seqs: int) -> float:
    """vLLM's profile run samples ``max_num_seqs`` rows of fp32 logits over the vocabulary."""
    return float(max_num_seqs * shape.vocab_size * LOGIT_BYTES)


def valid_tp(shape: ModelShape, n: int) -> bool:
    """vLLM's rule: heads split evenly, and KV heads either split or replicate evenly."""
    if n < 1 or shape.num_heads % n:
        return False
    if shape.is_mla:
        return True
    kv = shape.num_kv_heads
    return kv % n == 0 if n <= kv else n % kv == 0


def tp_degrees(shape: ModelShape) -> list[int]:
    """Every valid tensor-parallel degree, smallest first (at most one head per GPU)."""
    heads = shape.num_heads
    small = [n for n in range(1, math.isqrt(heads) + 1) if heads % n == 0]
    divisors = sorted({*small, *(heads // n for n in small)})
    return [n for n in divisors if valid_tp(shape, n)]


def kv_copies(shape: ModelShape, n: int) -> float:
    """How many copies of each token's KV cache n tensor-parallel GPUs hold together.

    With more GPUs than KV heads, each KV head is replicated (n / kv_heads copies). MLA's
    latent is not split by head at all: every GPU keeps the whole latent (n copies), so
    adding GPUs to an MLA model buys room for weights, not for more sequences.
    """
    if shape.is_mla:
        return float(n)
    return max(1.0, n / shape.num_kv_heads)


def activation_workspace(shape: ModelShape, chunk_tokens: int) -> float:
    """Peak activation bytes of one prefill chunk through one layer (all GPUs together).

    Residual stream, attention input/output and the MLP's gate and up outputs, in bf16:
    tokens × (4·hidden + 2·mlp_width) × 2 bytes. An MoE layer's tokens run through
    experts_per_token (plus shared) experts.
    """
    if shape.is_moe:
        width = (shape.experts_per_token + shape.shared_experts) * shape.expert_width
        width = max(width, shape.intermediate_size if shape.dense_layers else 0)
    else:
        width = shape.intermediate_size
    return float(chunk_tokens * (4 * shape.hidden_size + 2 * width) * ACT_BYTES)


@dataclass(frozen=True)
class ServeMemory:
    """Per-GPU memory of an inference deployment on ``gpus`` tensor-parallel GPUs."""

    gpus: int
    weights: float
    kv_per_sequence: float
    overhead: float
    usable: float

    def need(self, sequences: int) -> float:
        return self.weights + sequences * self.kv_per_sequence + self.overhead

    def margin(self, sequences: int) -> float:
        """Usable bytes left per GPU with ``sequences`` full-context sequences (< 0: no fit)."""
        return self.usable - self.need(sequences)

    @property
    def max_sequences(self) -> int:
        room = self.usable - self.weights - self.overhead
        if room < 0:
            return 0
        return math.floor(room / self.kv_per_sequence + 1e-9) if self.kv_per_sequence else 10**9


def serve_memory(
    shape: ModelShape,
    counts: ParamCount,
    dtype: WeightDtype,
    kv_sequence_bytes: float,
    gpus: int,
    capacity: float,
    usable: float,
    overhead: float,
    chunk_tokens: int,
) -> ServeMemory:
    """Memory per GPU with the model split ``gpus`` ways (all weights sharded)."""
    return ServeMemory(
        gpus=gpus,
        weights=weight_bytes(counts, dtype) / gpus,
        kv_per_sequence=kv_sequence_bytes * kv_copies(shape, gpus) / gpus,
        overhead=overhead + activation_workspace(shape, chunk_tokens) / gpus,
        usable=capacity * usable,
    )


# ----------------------------------------------------------------------- training

# Mixed-precision Adam (ZeRO paper, Rajbhandari et al. 2020): bf16 weights (2) and
# gradients (2), fp32 master weights (4), Adam first and second moments (4 + 4).
WEIGHT_B, GRAD_B, OPTIMIZER_B = 2, 2, 12
TRAIN_BYTES_PER_PARAM = WEIGHT_B + GRAD_B + OPTIMIZER_B
# Korthikanti et al. 2022 (arXiv 2205.05198): one layer's activations are
# seq·batch·hidden·(34 + 5·heads·seq/hidden) bytes in 16 bits; FlashAttention never
# materialises the scores, which removes the second term.
LAYER_ACTIVATION_FACTOR = 34


def model_state_bytes(params: int, zero: int, gpus: int) -> float:
    """Per-GPU bytes of weights, gradients and optimizer state under a ZeRO stage.

    Stage 1 shards the optimizer state, stage 2 also the gradients, stage 3 also the
    weights; stage 0 is plain data parallelism (everything on every GPU).
    """
    p = float(params)
    if zero == 0:
        return TRAIN_BYTES_PER_PARAM * p
    if zero == 1:
        return (WEIGHT_B + GRAD_B) * p + OPTIMIZER_B * p / gpus
    if zero == 2:
        return WEIGHT_B * p + (GRAD_B + OPTIMIZER_B) * p / gpus
    return TRAIN_BYTES_PER_PARAM * p / gpus


def unsharded_state_bytes(params: int, zero: int) -> float:
    """The part of the model state a ZeRO stage keeps whole on every GPU (none at stage 3)."""
    return {0: TRAIN_BYTES_PER_PARAM, 1: WEIGHT_B + GRAD_B, 2: WEIGHT_B, 3: 0}[zero] * float(params)


def training_activations(shape: ModelShape, micro_batch: int, seq_len: int) -> float:
    """Activation bytes per GPU with full activation checkpointing.

    The checkpointed input of every layer (2 bytes × hidden per token per layer) plus one
    layer's full working set while it is recomputed for the backward pass.
    """
    tokens = micro_batch * seq_len
    saved = tokens * shape.hidden_size * ACT_BYTES * shape.num_layers
    return float(saved + tokens * shape.hidden_size * LAYER_ACTIVATION_FACTOR)


def plan_training(
    params: int, zero: int, activations: float, capacity: float, usable: float, overhead: float
) -> tuple[int, float] | None:
    """(fewest data-parallel GPUs, bytes per GPU) for the ZeRO stage, or None if none fit.

    Solved in closed form: stage s needs fixed + sharded/N ≤ room per GPU, so
    N = ceil(sharded / (room − fixed)) when room exceeds the unsharded part.
    """
    room = capacity * usable - activations - overhead
    fixed = unsharded_state_bytes(params, zero)
    sharded = TRAIN_BYTES_PER_PARAM * float(params) - fixed
    if room <= fixed:
        return None
    n = 1 if sharded == 0 else max(1, math.ceil(sharded / (room - fixed) - 1e-9))
    return n, model_state_bytes(params, zero, n) + activations + overhead
