"""A Hugging Face-style decoder (Llama layout) for ``gpuport validate``, built in code.

No download and no ``transformers`` needed: a tiny random config, the module names of
``LlamaForCausalLM`` (``model.layers.N.self_attn.q_proj``, ``input_layernorm``, ``mlp.down_proj``,
``lm_head``), keyword inputs (``input_ids``, ``attention_mask``), and an attention module that
calls ``F.scaled_dot_product_attention`` *functionally*, the way HF's ``sdpa`` attention does.

Machine A::

    gpuport validate capture --model examples/validate/hf_style.py:build --out hf.gpv

Machine B, with the platform-like defect seeded (attention computed in bf16 on fp32 inputs)::

    gpuport validate check hf.gpv --model examples/validate/hf_style.py:build_bf16_attention

names ``model.layers.0.self_attn`` as the first divergence (wrong) and, inside it, the op
``scaled_dot_product_attention``. ``build_autocast`` runs B's forward under bf16 autocast.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class TinyConfig:
    vocab_size: int = 128
    hidden_size: int = 64
    intermediate_size: int = 176
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0


class LlamaRMSNorm(nn.Module):
    def __init__(self, size: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size) + 0.1 * torch.randn(size))
        self.variance_epsilon = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.variance_epsilon))


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def rope(x: torch.Tensor, theta: float) -> torch.Tensor:
    seq, dim = x.shape[-2], x.shape[-1]
    inv = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    freqs = torch.outer(torch.arange(seq, dtype=torch.float32), inv)
    emb = torch.cat((freqs, freqs), dim=-1).to(x.dtype)
    return x * emb.cos() + rotate_half(x) * emb.sin()


class LlamaSdpaAttention(nn.Module):
    """q/k/v/o projections are modules; RoPE, GQA repeat and SDPA are functional code."""

    def __init__(self, cfg: TinyConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.head_dim = cfg.hidden_size // cfg.num_attention_heads
        kv = cfg.num_key_value_heads * self.head_dim
        self.q_proj = nn.Linear(cfg.hidden_size, cfg.hidden_size, bias=False)
        self.k_proj = nn.Linear(cfg.hidden_size, kv, bias=False)
        self.v_proj = nn.Linear(cfg.hidden_size, kv, bias=False)
        self.o_proj = nn.Linear(cfg.hidden_size, cfg.hidden_size, bias=False)

    def forward(
        self, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        b, s, _ = hidden_states.shape
        cfg = self.cfg
        q = self.q_proj(hidden_states).view(b, s, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(hidden_states).view(b, s, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(hidden_states).view(b, s, -1, self.head_dim).transpose(1, 2)
        q, k = rope(q, cfg.rope_theta), rope(k, cfg.rope_theta)
        groups = cfg.num_attention_heads // cfg.num_key_value_heads
        k = k.repeat_interleave(groups, dim=1)
        v = v.repeat_interleave(groups, dim=1)
        mask = torch.ones(s, s, dtype=torch.bool).tril()
        if attention_mask is not None:
            mask = mask & attention_mask[:, None, None, :].bool()
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.o_proj(y.transpose(1, 2).reshape(b, s, -1))


class LlamaMLP(nn.Module):
    def __init__(self, cfg: TinyConfig) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, cfg: TinyConfig) -> None:
        super().__init__()
        self.input_layernorm = LlamaRMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = LlamaSdpaAttention(cfg)
        self.post_attention_layernorm = LlamaRMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = LlamaMLP(cfg)

    def forward(
        self, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        h = hidden_states + self.self_attn(
            self.input_layernorm(hidden_states), attention_mask=attention_mask
        )
        return h + self.mlp(self.post_attention_layernorm(h))


class LlamaModel(nn.Module):
    def __init__(self, cfg: TinyConfig) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(LlamaDecoderLayer(cfg) for _ in range(cfg.num_hidden_layers))
        self.norm = LlamaRMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            h = layer(h, attention_mask=attention_mask)
        return self.norm(h)


class LlamaForCausalLM(nn.Module):
    def __init__(self, cfg: TinyConfig) -> None:
        super().__init__()
        self.model = LlamaModel(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        for mod in self.modules():  # HF-like init: N(0, 0.02)
            if isinstance(mod, nn.Linear | nn.Embedding):
                nn.init.normal_(mod.weight, std=0.2 if isinstance(mod, nn.Embedding) else 0.08)

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None
    ) -> dict[str, torch.Tensor]:
        return {"logits": self.lm_head(self.model(input_ids, attention_mask=attention_mask))}


def build() -> tuple[nn.Module, Any]:
    """The reference (machine A): seeded random weights, keyword inputs."""
    cfg = TinyConfig()
    model = LlamaForCausalLM(cfg)
    gen = torch.Generator().manual_seed(5)
    ids = torch.randint(0, cfg.vocab_size, (2, 24), generator=gen)
    mask = torch.ones(2, 24, dtype=torch.long)
    mask[1, :3] = 0  # left padding in the second sequence
    return model, {"input_ids": ids, "attention_mask": mask}


# --- platform-like defects, for machine B --------------------------------------------------------

_SDPA = F.scaled_dot_product_attention


def sdpa_in_bf16(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *a: Any, **kw: Any) -> Any:
    """An attention kernel that computes fp32 attention in bf16 (float64 stays exact, as a
    reference implementation on the CPU would be)."""
    if q.dtype != torch.float32:
        return _SDPA(q, k, v, *a, **kw)
    return _SDPA(q.bfloat16(), k.bfloat16(), v.bfloat16(), *a, **kw).float()


def with_bf16_attention(module: nn.Module) -> None:
    """Make ``module``'s forward run with the bf16 attention kernel (also when replayed, and
    in copies of it: the patch calls the class's forward on whichever instance runs)."""

    def patched(self: nn.Module, *args: Any, **kwargs: Any) -> Any:
        original = F.scaled_dot_product_attention
        F.scaled_dot_product_attention = sdpa_in_bf16
        try:
            return type(self).forward(self, *args, **kwargs)
        finally:
            F.scaled_dot_product_attention = original

    module.forward = types.MethodType(patched, module)  # type: ignore[method-assign]


def build_bf16_attention() -> tuple[nn.Module, Any]:
    """B: every attention module's SDPA computes in bf16."""
    model, inputs = build()
    for mod in model.modules():
        if isinstance(mod, LlamaSdpaAttention):
            with_bf16_attention(mod)
    return model, inputs


def build_autocast() -> tuple[nn.Module, Any]:
    """B: the whole forward under bf16 autocast (A ran without)."""
    model, inputs = build()

    def patched(self: nn.Module, *args: Any, **kwargs: Any) -> Any:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return type(self).forward(self, *args, **kwargs)

    model.forward = types.MethodType(patched, model)  # type: ignore[method-assign]
    return model, inputs


def build_perturbed() -> tuple[nn.Module, Any]:
    """B: one weight changed by 1e-2 (another checkpoint)."""
    model, inputs = build()
    with torch.no_grad():
        model.model.layers[1].mlp.up_proj.weight[0, 0] += 1e-2  # type: ignore[index,union-attr]
    return model, inputs


def _fp8_linear(self: nn.Linear, x: torch.Tensor) -> torch.Tensor:
    """A deployment kernel that quantises bf16 activations to fp8 (e4m3) before the GEMM."""
    if x.dtype == torch.bfloat16:
        scale = x.abs().amax().clamp_min(1e-12) / 448.0
        x = ((x / scale).to(torch.float8_e4m3fn).to(torch.bfloat16)) * scale
    return F.linear(x, self.weight, self.bias)


def build_fp8_down_proj() -> tuple[nn.Module, Any]:
    """B for ``--precision bf16``: layer 1's down_proj quietly runs on fp8 activations."""
    model, inputs = build()
    down = model.model.layers[1].mlp.down_proj  # type: ignore[index,union-attr]
    down.forward = types.MethodType(_fp8_linear, down)  # type: ignore[method-assign]
    return model, inputs
