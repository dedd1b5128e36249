"""Counting from the shape: parameters, MoE active vs total, MLA and sliding-window KV."""

from __future__ import annotations

import pytest

from gpuport.cost.shapes import (
    count_params,
    decode_weight_bytes,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    weight_bytes,
)
from gpuport.knowledge.models import load_models, resolve_model


@pytest.mark.parametrize("key", sorted(load_models()))
def test_shape_reproduces_the_published_parameter_count(key: str) -> None:
    """A mistyped width or layer count shows up as a wrong total (Gemma 3 counts vision)."""
    model = load_models()[key]
    counts = count_params(model)
    assert model.params_b is not None
    assert counts.total / 1e9 == pytest.approx(model.params_b, rel=0.025)
    if model.active_params_b is not None:
        assert counts.active / 1e9 == pytest.approx(model.active_params_b, rel=0.025)


def test_deepseek_v3_mla_kv_is_one_latent_per_layer() -> None:
    """MLA caches kv_lora_rank + qk_rope_head_dim = 512 + 64 per token per layer."""
    v3 = resolve_model("deepseek-r1")
    assert v3.key == "deepseek-v3" and v3.is_mla
    assert kv_bytes_per_token(v3, "bf16") == 61 * (512 + 64) * 2 == 70_272
    assert kv_bytes_per_token(v3, "fp8") == 61 * 576
    # Were it plain multi-head attention with its 128 KV heads of 128 dims it would be
    # 2 × 61 × 128 × 128 × 2 = 3.9 MB per token, 57× more.
    assert 2 * 61 * 128 * 128 * 2 / kv_bytes_per_token(v3, "bf16") == pytest.approx(56.9, abs=0.1)


def test_moe_active_and_total_parameters() -> None:
    mixtral = count_params(resolve_model("mixtral-8x7b"))
    per_expert = 3 * 4096 * 14336
    assert mixtral.expert_size == per_expert and mixtral.moe_layers == 32
    # Two of eight experts run per token: six are skipped in each of the 32 layers.
    assert mixtral.total - mixtral.active == 6 * per_expert * 32
    assert mixtral.total / 1e9 == pytest.approx(46.7, abs=0.05)
    assert mixtral.active / 1e9 == pytest.approx(12.9, abs=0.05)
    v3 = count_params(resolve_model("deepseek-v3"))
    assert v3.moe_layers == 61 - 3  # first_k_dense_replace = 3
    assert v3.total / 1e9 == pytest.approx(671, abs=1)
    assert v3.active / 1e9 == pytest.approx(37, abs=1)


def test_moe_decode_reads_only_the_experts_a_batch_touches() -> None:
    mixtral = count_params(resolve_model("mixtral-8x7b"))
    all_resident = weight_bytes(mixtral, "bf16")
    one = decode_weight_bytes(mixtral, "bf16", 1)
    embedding = mixtral.embedding * 2
    # One token reads 2 of 8 experts; the embedding is a lookup, not a read.
    assert one == pytest.approx(all_resident - embedding - 6 * mixtral.expert_size * 32 * 2)
    # A big batch touches every expert: 8 × (1 − (6/8)^256) ≈ 8.
    assert decode_weight_bytes(mixtral, "bf16", 256) == pytest.approx(all_resident - embedding)
    dense = count_params(resolve_model("llama-3-8b"))
    assert decode_weight_bytes(dense, "bf16", 1) == decode_weight_bytes(dense, "bf16", 64)


def test_sliding_window_layers_keep_only_the_window() -> None:
    gemma = resolve_model("gemma-2-9b")
    per_layer = 2 * 8 * 256 * 2
    assert kv_bytes_per_token(gemma, "bf16") == 42 * per_layer
    # 8192 tokens: 21 global layers hold all of them, 21 local ones only 4096.
    assert kv_bytes_per_sequence(gemma, 8192, "bf16") == per_layer * (21 * 8192 + 21 * 4096)
    llama = resolve_model("llama-3-8b")
    assert kv_bytes_per_sequence(llama, 8192, "bf16") == 8192 * kv_bytes_per_token(llama, "bf16")


def test_quantised_weights_keep_embeddings_in_16_bits() -> None:
    counts = count_params(resolve_model("llama-3-70b"))
    head = (counts.embedding + counts.lm_head + counts.norms) * 2
    assert weight_bytes(counts, "fp8") == pytest.approx(counts.linear * 1 + head)
    # int4 with a 16-bit scale and 4-bit zero per 128 weights: 4.156 bits per weight.
    assert weight_bytes(counts, "int4") == pytest.approx(counts.linear * 4.15625 / 8 + head)
    assert weight_bytes(counts, "int4") / 1e9 == pytest.approx(39.8, abs=0.2)


def test_tied_embeddings_are_read_every_decode_step() -> None:
    """Tied: the embedding matrix is the LM head, so a decode step reads all of it.

    Llama 3.2 1B's 128256 × 2048 embedding is 0.53 GB of its 2.47 GB: leaving it out
    would overstate single-stream decode by 27 %.
    """
    tied = count_params(resolve_model("llama-3.2-1b"))
    assert tied.lm_head == 0 and tied.embedding == 128256 * 2048
    assert decode_weight_bytes(tied, "bf16", 1) == weight_bytes(tied, "bf16")
    assert decode_weight_bytes(tied, "int4", 1) == weight_bytes(tied, "int4")
    untied = count_params(resolve_model("llama-3-8b"))
    assert decode_weight_bytes(untied, "bf16", 1) == pytest.approx(
        weight_bytes(untied, "bf16") - untied.embedding * 2
    )
