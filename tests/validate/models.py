"""A tiny Llama-like transformer and deliberately broken variants of it, for the validate tests.

Referenced by the tests as ``tests/validate/models.py:build`` (and ``build_*``), the way a user
names their own factory. Every variant starts from the same seeded weights; only its numerics
change, the way a different platform (or a bug) would change them.
"""

from __future__ import annotations

import types
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

DIM = 64
HEADS = 4
LAYERS = 2
VOCAB = 97
SEQ = 16


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim) + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        var = x.pow(2).mean(-1, keepdim=True)
        return x * torch.rsqrt(var + self.eps) * self.weight

    def extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, eps={self.eps}"


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q = nn.Linear(DIM, DIM, bias=False)
        self.k = nn.Linear(DIM, DIM, bias=False)
        self.v = nn.Linear(DIM, DIM, bias=False)
        self.o = nn.Linear(DIM, DIM, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        shape = (b, s, HEADS, DIM // HEADS)
        q = self.q(x).view(shape).transpose(1, 2)
        k = self.k(x).view(shape).transpose(1, 2)
        v = self.v(x).view(shape).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(y.transpose(1, 2).reshape(b, s, DIM))


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gate = nn.Linear(DIM, 4 * DIM, bias=False)
        self.up = nn.Linear(DIM, 4 * DIM, bias=False)
        self.act = nn.SiLU()
        self.down = nn.Linear(4 * DIM, DIM, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(self.act(self.gate(x)) * self.up(x))


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn_norm = RMSNorm(DIM)
        self.attn = Attention()
        self.ffn_norm = RMSNorm(DIM)
        self.mlp = MLP()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.attn_norm(x))
        return x + self.mlp(self.ffn_norm(x))


class TinyLlama(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = RMSNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x))


def build() -> tuple[nn.Module, Any]:
    """The reference: seeded init (gpuport seeds before calling build) and fixed token ids."""
    model = TinyLlama()
    ids = torch.randint(0, VOCAB, (2, SEQ), generator=torch.Generator().manual_seed(1))
    return model, ids


# --- numerics changed the way another platform (or a bug) would ------------------------------


def _bf16_linear(self: nn.Linear, x: torch.Tensor) -> torch.Tensor:
    """A matmul done in bf16 when asked for fp32 (a kernel that silently drops precision);
    exact in fp64, as a correct reference implementation would be."""
    if x.dtype == torch.float32:
        return F.linear(x.bfloat16(), self.weight.bfloat16()).float()
    return F.linear(x, self.weight, self.bias)


def _split_k_linear(self: nn.Linear, x: torch.Tensor) -> torch.Tensor:
    """The same matmul summed in 4 slices of K: correct, but in another order."""
    k = x.shape[-1]
    step = max(1, k // 4)
    out = sum(
        F.linear(x[..., i : i + step], self.weight[:, i : i + step]) for i in range(0, k, step)
    )
    assert isinstance(out, torch.Tensor)
    return out if self.bias is None else out + self.bias


def _noisy_linear(self: nn.Linear, x: torch.Tensor) -> torch.Tensor:
    """Adds fixed noise of at most 6e-5 in fp32 only: inside this Linear's K-scaled tolerance
    (atol 1e-5 · sqrt(64) = 8e-5), but enough to push later elementwise ops past theirs."""
    out = F.linear(x, self.weight, self.bias)
    if x.dtype == torch.float32:
        gen = torch.Generator().manual_seed(7)
        out = out + (torch.rand(out.shape, generator=gen) * 2 - 1) * 6e-5
    return out


def _patch(module: nn.Module, fn: Any) -> None:
    module.forward = types.MethodType(fn, module)  # type: ignore[method-assign]


def build_eps() -> tuple[nn.Module, Any]:
    """layers.1.ffn_norm with eps 1e-1 instead of 1e-6: a changed configuration."""
    model, ids = build()
    model.layers[1].ffn_norm.eps = 1e-1  # type: ignore[union-attr,index]
    return model, ids


def build_bf16() -> tuple[nn.Module, Any]:
    """layers.1.mlp.down computed in bf16: a platform-style precision bug."""
    model, ids = build()
    _patch(model.layers[1].mlp.down, _bf16_linear)  # type: ignore[union-attr,index]
    return model, ids


def build_reordered() -> tuple[nn.Module, Any]:
    """Every Linear summed in split-K order: different, not wrong."""
    model, ids = build()
    for mod in model.modules():
        if isinstance(mod, nn.Linear):
            _patch(mod, _split_k_linear)
    return model, ids


def build_noisy_then_bug() -> tuple[nn.Module, Any]:
    """Noise in layers.0.attn.o, and a real bug downstream in layers.1.mlp.down."""
    model, ids = build()
    _patch(model.layers[0].attn.o, _noisy_linear)  # type: ignore[union-attr,index]
    _patch(model.layers[1].mlp.down, _bf16_linear)  # type: ignore[union-attr,index]
    return model, ids


# --- a custom leaf module: gpuport cannot know it reduces, so it gets elementwise tolerances ---

MIX_K = 2048


class Mixer(nn.Module):
    """A user's own op with a matmul inside and a name that says nothing about it."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(MIX_K, 32))
        self.split = 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.split == 1:
            return x @ self.w
        step = MIX_K // self.split
        out = sum(x[:, i : i + step] @ self.w[i : i + step] for i in range(0, MIX_K, step))
        assert isinstance(out, torch.Tensor)
        return out


def build_mixer() -> tuple[nn.Module, Any]:
    model = nn.Sequential(Mixer(), nn.Tanh())
    x = torch.randn(64, MIX_K, generator=torch.Generator().manual_seed(2))
    return model, x


def build_mixer_reordered() -> tuple[nn.Module, Any]:
    """The same sum in 16 slices: beyond elementwise tolerance, equivalent against fp64."""
    model, x = build_mixer()
    model[0].split = 16  # type: ignore[assignment]
    return model, x


def build_other() -> tuple[nn.Module, Any]:
    """A different architecture altogether (wider MLP in every block)."""
    model, ids = build()
    for block in model.layers:  # type: ignore[union-attr]
        block.mlp.gate = nn.Linear(DIM, 5 * DIM, bias=False)
        block.mlp.up = nn.Linear(DIM, 5 * DIM, bias=False)
        block.mlp.down = nn.Linear(5 * DIM, DIM, bias=False)
    return model, ids


def build_reseeded() -> tuple[nn.Module, Any]:
    """Same architecture, other weights (build() that is not deterministic)."""
    torch.manual_seed(12345)
    return build()


# --- regression models for review findings ---------------------------------------------------


class Bump(nn.Module):
    """A leaf that modifies its input in place."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x.mul_(2.0)
        return x.sum(-1)


class InPlace(nn.Module):
    """In-place ops on tensors no traced module produced (functional intermediates)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.bump = Bump()
        self.after = nn.Tanh()
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        h = self.lin(x) * 1.0  # functional: h was never stored
        s = self.bump(h)  # doubles h in place
        y = self.after(h)  # gets the doubled h
        w = self.relu(self.lin(x) + 0.0)  # in-place ReLU on a first-seen tensor
        return y, s, w


def build_inplace() -> tuple[nn.Module, Any]:
    return InPlace(), torch.randn(4, 8, generator=torch.Generator().manual_seed(3))


class Func(nn.Module):
    """Two Linears with functional code between and after them, which no hook sees."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(16, 16)
        self.b = nn.Linear(16, 16)
        self.shift = 0.0  # a "platform bug" in the functional code between a and b
        self.poison = False  # NaN made there
        self.tail = 1.0  # a bug after the last module

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.sin(self.a(x)) + self.shift
        if self.poison:
            h = h * float("nan")
        return self.b(h) * self.tail


def build_func() -> tuple[nn.Module, Any]:
    return Func(), torch.randn(4, 16, generator=torch.Generator().manual_seed(4))


def build_func_shift() -> tuple[nn.Module, Any]:
    model, x = build_func()
    model.shift = 0.5  # type: ignore[assignment]
    return model, x


def build_func_nan() -> tuple[nn.Module, Any]:
    model, x = build_func()
    model.poison = True  # type: ignore[assignment]
    return model, x


def build_func_tail() -> tuple[nn.Module, Any]:
    model, x = build_func()
    model.tail = 1.5  # type: ignore[assignment]
    return model, x


class ZeroingLinear(nn.Linear):
    """A bf16 GEMM kernel that returns zeros (in bf16 only: float64 stays correct)."""

    zero = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = super().forward(x)
        return y * 0.0 if self.zero and y.dtype == torch.bfloat16 else y


def build_bf16_proj() -> tuple[nn.Module, Any]:
    model = nn.Sequential(ZeroingLinear(4096, 256, bias=False)).to(torch.bfloat16)
    x = torch.randn(8, 4096, generator=torch.Generator().manual_seed(5)).bfloat16()
    return model, x


def build_bf16_proj_zeros() -> tuple[nn.Module, Any]:
    model, x = build_bf16_proj()
    model[0].zero = True  # type: ignore[union-attr]
    return model, x


class Quant(nn.Module):
    """Returns floats, or (B's bug) the same values truncated to integers."""

    as_int = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 0.7
        return y.long() if self.as_int else y


def build_quant() -> tuple[nn.Module, Any]:
    x = 0.5 * torch.randn(2, 4, generator=torch.Generator().manual_seed(6))
    return nn.Sequential(nn.Linear(4, 4), Quant()), x


def build_quant_int() -> tuple[nn.Module, Any]:
    model, x = build_quant()
    model[1].as_int = True  # type: ignore[assignment]
    return model, x


class Skip(nn.Module):
    """B bypasses its only module (functional code instead); the output is a new tensor."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.bypass = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.bypass:
            return F.linear(x, self.a.weight, self.a.bias) * 7.0
        return self.a(x) * 1.0


def build_skip() -> tuple[nn.Module, Any]:
    return Skip(), torch.ones(2, 4)


def build_skip_bypass() -> tuple[nn.Module, Any]:
    model, x = build_skip()
    model.bypass = True  # type: ignore[assignment]
    return model, x


class Double(nn.Module):
    """Works in place on its (float64) input."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x.add_(1.0)
        return x * 2.0


def build_f64_inplace() -> tuple[nn.Module, Any]:
    x = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    return nn.Sequential(nn.Identity(), Double()), x


class Scale(nn.Module):
    factor = 2.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.factor


EVIL = "\x1b[31mred\x1b]0;title\x07"


class Evil(nn.Module):
    """A module path with terminal escape sequences in it."""

    def __init__(self) -> None:
        super().__init__()
        self.add_module(EVIL, Scale())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return getattr(self, EVIL)(x)


def build_evil() -> tuple[nn.Module, Any]:
    return Evil(), torch.ones(2, 4)


def build_evil_broken() -> tuple[nn.Module, Any]:
    model, x = build_evil()
    getattr(model, EVIL).factor = 3.0
    return model, x
