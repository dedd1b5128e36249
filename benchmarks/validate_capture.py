"""Benchmark: what `gpuport validate capture` adds to a forward pass of a ~100M-parameter model.

Budget (issue): capture takes at most 3x the time of a plain forward pass on the CPU.

Method: a Llama-style decoder (12 layers, d=768, MLP 2048, vocab 12k, ~103M parameters, fp32)
on one sequence of 256 tokens, CPU, torch's default threads. Timed, median of N runs each after
one warm-up:

* ``forward``: ``model(ids)`` under ``torch.no_grad()`` (the baseline);
* ``capture``: ``gpuport.validate.capture_model`` end to end: the parameter fingerprint
  (sha256 over all weights), the hooked forward that copies every module's inputs and outputs,
  the sha256 of every stored tensor, and writing the .gpv (safetensors) to disk.

Building the model and importing torch are not timed (they are the same with or without gpuport).
Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from gpuport.validate.capture import capture_model


class RMSNorm(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, hidden: int) -> None:
        super().__init__()
        self.heads = heads
        self.attn_norm = RMSNorm(dim)
        self.q = nn.Linear(dim, dim, bias=False)
        self.k = nn.Linear(dim, dim, bias=False)
        self.v = nn.Linear(dim, dim, bias=False)
        self.o = nn.Linear(dim, dim, bias=False)
        self.ffn_norm = RMSNorm(dim)
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.act = nn.SiLU()
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        h = self.attn_norm(x)
        shape = (b, s, self.heads, d // self.heads)
        q = self.q(h).view(shape).transpose(1, 2)
        k = self.k(h).view(shape).transpose(1, 2)
        v = self.v(h).view(shape).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(y.transpose(1, 2).reshape(b, s, d))
        h = self.ffn_norm(x)
        return x + self.down(self.act(self.gate(h)) * self.up(h))


class Decoder(nn.Module):
    def __init__(
        self, vocab: int = 12000, dim: int = 768, layers: int = 12, heads: int = 12
    ) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(Block(dim, heads, 8 * dim // 3) for _ in range(layers))
        self.norm = RMSNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seq", type=int, default=256)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = Decoder().eval()
    params = sum(p.numel() for p in model.parameters())
    ids = torch.randint(0, 12000, (1, args.seq), generator=torch.Generator().manual_seed(1))

    def forward() -> None:
        with torch.no_grad():
            model(ids)

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.gpv"
        summary = None

        def capture() -> None:
            nonlocal summary
            summary = capture_model(torch, model, (ids,), {}, out)

        timings: dict[str, list[float]] = {"forward": [], "capture": []}
        for fn in (forward, capture):  # warm-up
            fn()
        for _ in range(args.runs):  # interleaved, so drift hits both alike
            for name, fn in (("forward", forward), ("capture", capture)):
                t0 = time.perf_counter()
                fn()
                timings[name].append(time.perf_counter() - t0)
        size = out.stat().st_size
    fwd = statistics.median(timings["forward"])
    cap = statistics.median(timings["capture"])
    assert summary is not None
    print(
        json.dumps(
            {
                "benchmark": "validate_capture",
                "machine": f"{platform.machine()}, {torch.get_num_threads()} torch threads",
                "torch": torch.__version__,
                "parameters": params,
                "tokens": args.seq,
                "module_calls": summary.calls,
                "tensors": summary.tensors,
                "gpv_bytes": size,
                "forward_s_median": round(fwd, 3),
                "capture_s_median": round(cap, 3),
                "ratio": round(cap / fwd, 2),
                "budget_ratio": 3.0,
                "forward_s": [round(t, 3) for t in timings["forward"]],
                "capture_s": [round(t, 3) for t in timings["capture"]],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
