"""Models a user wrote, with defects seeded the way the 2026-11-25 trial did (tests only).

* ``gpt``: ``nn.TransformerEncoderLayer`` blocks with a causal mask. ``gpt_sdpa_bf16_in_forward``
  computes SDPA in bf16, but only while the model's own ``forward`` runs (a patch its caller
  installs, like an SDPA-backend context): every layer gets A's exact inputs, and replaying a
  layer alone does not reproduce B's run.
* ``cnn``: Conv + BatchNorm. ``cnn_conv_in_bf16`` has code that casts one convolution to bf16
  whatever the dtype, so even its float64 copy computes in bf16.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn


class GPT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(50, 32)
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True) for _ in range(2)
        )
        self.head = nn.Linear(32, 50)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.emb(ids)
        mask = nn.Transformer.generate_square_subsequent_mask(ids.shape[1])
        for layer in self.layers:
            x = layer(x, src_mask=mask, is_causal=True)
        return self.head(x)


def gpt() -> tuple[nn.Module, Any]:
    return GPT(), torch.randint(0, 50, (2, 12))


_SDPA = F.scaled_dot_product_attention


def _sdpa_bf16(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *a: Any, **kw: Any) -> Any:
    if q.dtype != torch.float32:
        return _SDPA(q, k, v, *a, **kw)
    return _SDPA(q.bfloat16(), k.bfloat16(), v.bfloat16(), *a, **kw).float()


class GPTPatched(GPT):
    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        F.scaled_dot_product_attention = _sdpa_bf16
        try:
            return super().forward(ids)
        finally:
            F.scaled_dot_product_attention = _SDPA


def gpt_sdpa_bf16_in_forward() -> tuple[nn.Module, Any]:
    model, ids = gpt()
    model.__class__ = GPTPatched
    return model, ids


class CNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.bn1(self.c1(x))), 2)
        x = F.relu(self.bn2(self.c2(x)))
        return self.fc(x.mean((2, 3)))


def cnn() -> tuple[nn.Module, Any]:
    model = CNN()
    with torch.no_grad():
        for bn in (model.bn1, model.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
    return model, torch.randn(2, 3, 12, 12)


class BF16Conv(nn.Conv2d):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w, b = self.weight.bfloat16(), self.bias.bfloat16() if self.bias is not None else None
        return F.conv2d(x.bfloat16(), w, b, padding=self.padding).to(x.dtype)


def cnn_conv_in_bf16() -> tuple[nn.Module, Any]:
    model, x = cnn()
    model.c2.__class__ = BF16Conv
    return model, x
