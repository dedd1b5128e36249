"""A small transformer built from ``nn.MultiheadAttention`` blocks, for ``gpuport validate``.

``nn.MultiheadAttention`` is not a leaf module, and its ``out_proj`` is never called as a
module (its weights are used by ``F.multi_head_attention_forward``), so hooks on leaf modules
alone see no attention at all. gpuport traces it as a module of its own.

Machine A::

    gpuport validate capture --model examples/validate/mha.py:build --out mha.gpv

Machine B, with attention computed in bf16 on fp32 inputs (a platform-like defect)::

    gpuport validate check mha.gpv --model examples/validate/mha.py:build_bf16_attention

names ``blocks.0.attn`` as the first divergence (wrong), and the op
``scaled_dot_product_attention`` inside it.
"""

from __future__ import annotations

import types
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

DIM, HEADS, LAYERS, VOCAB, SEQ = 64, 4, 2, 100, 20


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(DIM)
        self.attn = nn.MultiheadAttention(DIM, HEADS, batch_first=True)
        self.ln2 = nn.LayerNorm(DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False)
        x = x + a
        return x + self.mlp(self.ln2(x))


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        mask = torch.ones(ids.shape[1], ids.shape[1], dtype=torch.bool).triu(1)  # causal
        for block in self.blocks:
            x = block(x, mask)
        return self.head(x)


def build() -> tuple[nn.Module, Any]:
    """The reference (machine A)."""
    model = Encoder()
    ids = torch.randint(0, VOCAB, (2, SEQ), generator=torch.Generator().manual_seed(6))
    return model, ids


_SDPA = F.scaled_dot_product_attention


def _sdpa_in_bf16(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *a: Any, **kw: Any) -> Any:
    """fp32 attention computed in bf16 (float64 stays exact, like a CPU reference kernel)."""
    if q.dtype != torch.float32:
        return _SDPA(q, k, v, *a, **kw)
    return _SDPA(q.bfloat16(), k.bfloat16(), v.bfloat16(), *a, **kw).float()


def _patched(self: nn.Module, *args: Any, **kwargs: Any) -> Any:
    original = F.scaled_dot_product_attention
    F.scaled_dot_product_attention = _sdpa_in_bf16  # MHA's slow path calls it from F
    try:
        return type(self).forward(self, *args, **kwargs)
    finally:
        F.scaled_dot_product_attention = original


def build_bf16_attention() -> tuple[nn.Module, Any]:
    """B: the attention kernel inside every nn.MultiheadAttention computes in bf16."""
    model, ids = build()
    for mod in model.modules():
        if isinstance(mod, nn.MultiheadAttention):
            mod.forward = types.MethodType(_patched, mod)  # type: ignore[method-assign]
    return model, ids
