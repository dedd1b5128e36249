"""``transformer``: one training step of a Llama-style decoder, in tokens/s, TFLOP/s and MFU.

A step is what a training loop does per batch: forward under autocast, causal LM
cross-entropy on random tokens, backward, AdamW update (fused where torch has it on
the device). The headline is tokens/s (``batch·seq`` tokens per step); the secondary
figures use the PaLM model-FLOPs convention (``llama.train_flops_per_token``) so MFU
is comparable with published numbers and across vendors, whatever kernels ran.

Weights are fp32 master weights with bf16 autocast on GPUs (the standard PyTorch AMP
recipe; fp16 runs without a GradScaler, which changes no timing), fp32 on CPU.

Sizes:

* CPU quick: hidden 64, 2 layers, seq 32, batch 2 (well under a second).
* GPU quick: a 0.89 B-parameter model (hidden 2048, 16 layers, 16 heads, 8 KV heads,
  ffn 5632, vocab 32000), seq 2048, batch 8: an estimated 0.2-0.25 s a step on an
  H100 (94 TFLOP per step), ~7 s in all.
* GPU full: that model at seq 2048 batch 8 and seq 4096 batch 4, plus a 3.2 B
  Llama-3.2-3B-shaped model at seq 2048 batch 1: an estimated minute on an H100. Memory is
  16 bytes per parameter (weights, grads, Adam m and v) plus activations; a GPU that is
  too small reports the case as skipped (out of memory).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gpuport.bench.registry import BenchContext, Case, Measurement, Workload, register
from gpuport.bench.workloads import llama
from gpuport.bench.workloads.llama import LlamaConfig


@dataclasses.dataclass(frozen=True)
class TrainShape:
    label: str  # short model label for the case name, e.g. "0.9B"
    cfg: LlamaConfig
    seq: int
    batch: int


TINY = LlamaConfig(vocab=256, hidden=64, layers=2, heads=4, kv_heads=2, ffn=176, max_seq=32)
# ~0.89 B parameters: a Llama-style 1B-class model with a 32k vocabulary.
ONE_B = LlamaConfig(
    vocab=32_000, hidden=2048, layers=16, heads=16, kv_heads=8, ffn=5632, max_seq=4096
)
# Llama-3.2-3B shape (tied embeddings): 3.21 B parameters.
THREE_B = LlamaConfig(
    vocab=128_256,
    hidden=3072,
    layers=28,
    heads=24,
    kv_heads=8,
    ffn=8192,
    max_seq=2048,
    tie_embeddings=True,
)


def shapes(ctx: BenchContext) -> list[TrainShape]:
    if not ctx.on_gpu:
        return [TrainShape("tiny", TINY, seq=32, batch=2)]
    if ctx.quick:
        return [TrainShape("0.9B", ONE_B, seq=2048, batch=8)]
    return [
        TrainShape("0.9B", ONE_B, seq=2048, batch=8),
        TrainShape("0.9B", ONE_B, seq=4096, batch=4),
        TrainShape("3.2B", THREE_B, seq=2048, batch=1),
    ]


def _cases(ctx: BenchContext) -> list[Case]:
    default = "bf16" if ctx.on_gpu else "fp32"
    cases = []
    for dtype in llama.model_dtypes(ctx, default):
        for shape in shapes(ctx):
            params = {
                "dtype": dtype,
                "model": shape.label,
                "seq": shape.seq,
                "batch": shape.batch,
                "params": llama.param_count(shape.cfg),
                "config": shape.cfg.describe(),
            }
            cases.append(
                Case(
                    name=f"{dtype} {shape.label} seq{shape.seq} batch{shape.batch}",
                    run=_runner(shape, dtype),
                    params=params,
                    unit="tokens/s",
                    scale=1.0,
                )
            )
    return cases


def _make_optimizer(ctx: BenchContext, params: list[Any]) -> tuple[Any, str]:
    """AdamW, fused on GPUs where this torch supports it (what a tuned training loop uses)."""
    adamw = ctx.torch.optim.AdamW
    if ctx.on_gpu:
        try:
            return adamw(params, lr=1e-4, weight_decay=0.1, fused=True), "AdamW fused"
        except (RuntimeError, TypeError, ValueError):
            pass
    return adamw(params, lr=1e-4, weight_decay=0.1, foreach=ctx.on_gpu), "AdamW"


def _runner(shape: TrainShape, dtype: str) -> Any:
    def run(ctx: BenchContext) -> Measurement:
        llama.check_dtype(ctx, dtype)
        return _train(ctx, shape, dtype)

    return run


def _train(ctx: BenchContext, shape: TrainShape, dtype: str) -> Measurement:
    try:
        m, notes = _measure_step(ctx, shape, dtype)
    finally:  # weights, grads, Adam state and activations died with _measure_step's frame
        if ctx.on_gpu:
            ctx.torch.cuda.empty_cache()
    return _with_metrics(ctx, m, shape, dtype, notes)


def _measure_step(
    ctx: BenchContext, shape: TrainShape, dtype: str
) -> tuple[Measurement, dict[str, str]]:
    """Build model, optimizer and batch here so they are freed when this returns."""
    torch, cfg = ctx.torch, shape.cfg
    F = torch.nn.functional
    use_autocast = dtype != "fp32"
    autocast_dtype = llama.torch_dtype(torch, dtype)
    model = llama.Llama(torch, cfg, device=ctx.device, dtype=torch.float32, seed=ctx.seed)
    model.requires_grad_(True)
    opt, opt_name = _make_optimizer(ctx, model.parameters())
    gen = llama.make_generator(torch, ctx.device, ctx.seed + 1)
    tokens = torch.randint(
        0, cfg.vocab, (shape.batch, shape.seq + 1), generator=gen, device=ctx.device
    )
    inputs, targets = tokens[:, :-1], tokens[:, 1:].reshape(-1)
    device_type = ctx.device.type

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type, dtype=autocast_dtype, enabled=use_autocast):
            logits = model.forward(inputs)
        loss = F.cross_entropy(logits.float().view(-1, cfg.vocab), targets)
        loss.backward()
        opt.step()

    m = ctx.measure(step, policy=ctx.model_policy, work_per_iter=shape.batch * shape.seq)
    return m, {"optimizer": opt_name, "attention": ", ".join(sorted(model.attention_paths))}


def _with_metrics(
    ctx: BenchContext, m: Measurement, shape: TrainShape, dtype: str, notes: dict[str, str]
) -> Measurement:
    flops_per_token = llama.train_flops_per_token(shape.cfg, shape.seq)
    tokens_per_s = shape.batch * shape.seq / m.stats.median
    tflops = flops_per_token * tokens_per_s / 1e12
    metrics: dict[str, float | str] = {
        **m.metrics,
        "tflops": round(tflops, 4),
        "step_ms": round(m.stats.median * 1e3, 4),
        "flops_per_token": flops_per_token,
        "flops_convention": "PaLM 6N+12LHT (N excludes the input embedding)",
        **notes,
    }
    peak = ctx.spec.peak_tflops.get(dtype) if ctx.spec is not None else None
    if peak:
        metrics["mfu"] = round(tflops / peak, 5)
        metrics["mfu_peak_tflops"] = peak
    params = {**m.params, "nonembedding_params": llama.nonembedding_param_count(shape.cfg)}
    return dataclasses.replace(m, metrics=metrics, params=params)


WORKLOAD = register(
    Workload(
        name="transformer",
        summary="Llama-style decoder training step (AdamW, causal LM loss): tokens/s, TFLOP/s, MFU",
        cases=_cases,
    )
)
