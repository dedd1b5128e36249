"""A tiny Hugging Face Llama built from a config (transformers from PyPI, nothing downloaded),
for `gpuport validate` on the real thing: its default KV cache, its attention dispatch.

``build`` is machine A. Machine B's defects go into attention through transformers' own
attention interface (no global patch, so the process stays clean):

* ``build_bf16_attention``: the attention computed in bf16 on fp32 inputs (a platform kernel
  of lower precision);
* ``build_noisy_sdpa``: the SDPA's float32 result off by noise while its inputs are exactly
  right (a wrong kernel, as an op: torch's function protocol sees it as
  ``scaled_dot_product_attention``; its float64 path is correct).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch.overrides import handle_torch_function, has_torch_function
from transformers import AttentionInterface, LlamaConfig, LlamaForCausalLM
from transformers.integrations.sdpa_attention import sdpa_attention_forward


def _bf16(module: Any, query: Any, key: Any, value: Any, attention_mask: Any, **kw: Any) -> Any:
    out, weights = sdpa_attention_forward(
        module, query.bfloat16(), key.bfloat16(), value.bfloat16(), attention_mask, **kw
    )
    return out.to(query.dtype), weights


_SDPA = F.scaled_dot_product_attention


def scaled_dot_product_attention(q: Any, k: Any, v: Any, *args: Any, **kw: Any) -> Any:
    """F.scaled_dot_product_attention whose float32 result carries noise of 1e-2 relative."""
    if has_torch_function((q, k, v)):
        return handle_torch_function(scaled_dot_product_attention, (q, k, v), q, k, v, *args, **kw)
    out = _SDPA(q, k, v, *args, **kw)
    if out.dtype != torch.float32:
        return out
    gen = torch.Generator().manual_seed(7)
    noise = torch.randn(out.shape, generator=gen, dtype=out.dtype)
    return out + 1e-2 * out.abs().mean() * noise


def _noisy(module: Any, query: Any, key: Any, value: Any, attention_mask: Any, **kw: Any) -> Any:
    original = torch.nn.functional.scaled_dot_product_attention
    torch.nn.functional.scaled_dot_product_attention = scaled_dot_product_attention
    try:
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kw)
    finally:
        torch.nn.functional.scaled_dot_product_attention = original


AttentionInterface.register("gpuport_test_bf16", _bf16)
AttentionInterface.register("gpuport_test_noisy", _noisy)


def _model(attention: str = "sdpa") -> tuple[Any, dict[str, Any]]:
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=128,
        hidden_size=64,
        intermediate_size=176,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    config._attn_implementation = attention
    model = LlamaForCausalLM(config).eval()
    ids = torch.randint(0, 128, (2, 12), generator=torch.Generator().manual_seed(1))
    # the default: use_cache is not set, so the model builds its KV cache
    return model, {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def build() -> tuple[Any, dict[str, Any]]:
    return _model()


def build_bf16_attention() -> tuple[Any, dict[str, Any]]:
    return _model("gpuport_test_bf16")


def build_noisy_sdpa() -> tuple[Any, dict[str, Any]]:
    return _model("gpuport_test_noisy")
