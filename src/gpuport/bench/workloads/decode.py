"""``decode``: LLM inference on a Llama-style model: prefill (TTFT) and per-token decode.

Two cases per batch size, eager PyTorch under ``torch.inference_mode()`` (what a
``transformers``-style ``generate`` loop does, without CUDA graphs, so launch overhead
is part of the figure on both vendors):

* ``prefill``: the whole prompt for the batch through the model into a preallocated KV
  cache, plus the greedy first token; headline prompt tokens/s, ``ttft_ms`` = median
  time. Logits are computed for the last position only, as serving engines do.
* ``decode``: one step = one new token for every sequence in the batch. Headline
  tokens/s = batch / median step time; ``per_token_latency_ms`` = median step time.

How a decode sample is made realistic and repeatable: the case prefills the prompt and
runs ``steps // 2`` real greedy decode steps (untimed), so the cache holds the prompt
plus half a generation. Every timed iteration then decodes at that *fixed* position,
overwriting the same cache slot and feeding back its own argmax token. A step's cost
grows linearly with the context, so the step at the middle of a ``steps``-token
generation costs what the average step of that generation costs, and every sample
does identical work (no drift across samples, nothing can overflow the cache, no
``before`` reset is needed).

Sizes (bf16 on GPUs, fp32 on CPU; weights random normal, token ids random):

* CPU quick: a tiny config (hidden 64, 2 layers), batch 1 and 4, prompt 16, 8 steps.
* GPU quick: Llama-3-8B-shaped (hidden 4096, 32 heads, 8 KV heads, ffn 14336, vocab
  128256) with 8 of its 32 layers (2.8 B parameters, 5.6 GB), batch 1/8/32, prompt 512,
  64 steps: an estimated 7-8 s on an H100.
* GPU full: the full 32-layer Llama-3-8B shape, prompt 512 at batch 1/8/32/64/128 and
  prompt 2048 at batch 1/8/32, 128 steps: an estimated 5 minutes on an H100, mostly the large
  prefills.

Secondary figures use the decode roofline of the research notes (§3.3.5): the bytes a
step must read (matmul weights + the KV cache so far) over the step time give an
achieved bandwidth, and ``mbu`` against the spec bandwidth when the GPU is known.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from gpuport.bench.registry import BenchContext, Case, Measurement, Workload, register
from gpuport.bench.workloads import llama
from gpuport.bench.workloads.llama import LLAMA3_8B, LlamaConfig

# A prefill has no optimizer state to settle; 30 warm-up prefills of a 64k-token batch
# (the full suite's model policy) would cost a minute and change nothing.
PREFILL_WARMUP_ITERS = 5


@dataclasses.dataclass(frozen=True)
class DecodeShape:
    label: str
    cfg: LlamaConfig  # max_seq is set to prompt + steps
    prompt: int
    steps: int
    batches: tuple[int, ...]

    @property
    def position(self) -> int:
        """The fixed position every timed decode step writes (mid-generation)."""
        return self.prompt + self.steps // 2


TINY = LlamaConfig(vocab=256, hidden=64, layers=2, heads=4, kv_heads=2, ffn=176, max_seq=24)


def _llama8b(layers: int, prompt: int, steps: int) -> LlamaConfig:
    return dataclasses.replace(LLAMA3_8B, layers=layers, max_seq=prompt + steps)


def shapes(ctx: BenchContext) -> list[DecodeShape]:
    if not ctx.on_gpu:
        return [DecodeShape("tiny", TINY, prompt=16, steps=8, batches=(1, 4))]
    if ctx.quick:
        cfg = _llama8b(8, 512, 64)
        return [DecodeShape("llama3-8b-8L", cfg, prompt=512, steps=64, batches=(1, 8, 32))]
    return [
        DecodeShape(
            "llama3-8b", _llama8b(32, 512, 128), prompt=512, steps=128, batches=(1, 8, 32, 64, 128)
        ),
        DecodeShape(
            "llama3-8b", _llama8b(32, 2048, 128), prompt=2048, steps=128, batches=(1, 8, 32)
        ),
    ]


def _cases(ctx: BenchContext) -> list[Case]:
    default = "bf16" if ctx.on_gpu else "fp32"
    cases: list[Case] = []
    for dtype in llama.model_dtypes(ctx, default):
        for shape in shapes(ctx):
            for batch in shape.batches:
                params = {
                    "dtype": dtype,
                    "model": shape.label,
                    "batch": batch,
                    "prompt": shape.prompt,
                    "params": llama.param_count(shape.cfg),
                    "config": shape.cfg.describe(),
                }
                cases.append(
                    Case(
                        name=f"{dtype} {shape.label} prefill batch{batch} prompt{shape.prompt}",
                        run=_runner(_prefill, shape, dtype, batch),
                        params={**params, "phase": "prefill"},
                        unit="tokens/s",
                        scale=1.0,
                    )
                )
                cases.append(
                    Case(
                        name=f"{dtype} {shape.label} decode batch{batch} ctx{shape.position + 1}",
                        run=_runner(_decode, shape, dtype, batch),
                        params={
                            **params,
                            "phase": "decode",
                            "steps": shape.steps,
                            "position": shape.position,
                        },
                        unit="tokens/s",
                        scale=1.0,
                    )
                )
    return cases


Phase = Callable[[BenchContext, DecodeShape, str, int], Measurement]


def _runner(phase: Phase, shape: DecodeShape, dtype: str, batch: int) -> Any:
    def run(ctx: BenchContext) -> Measurement:
        llama.check_dtype(ctx, dtype)
        torch = ctx.torch
        try:
            with torch.inference_mode():
                return phase(ctx, shape, dtype, batch)
        finally:  # the phase's model and KV cache died with its frame
            if ctx.on_gpu:
                torch.cuda.empty_cache()

    return run


def _setup(ctx: BenchContext, shape: DecodeShape, dtype: str, batch: int) -> tuple[Any, Any]:
    """The model with a cache for ``batch`` sequences, and a random prompt."""
    torch = ctx.torch
    model = llama.Llama(
        torch, shape.cfg, device=ctx.device, dtype=llama.torch_dtype(torch, dtype), seed=ctx.seed
    )
    model.allocate_cache(batch)
    gen = llama.make_generator(torch, ctx.device, ctx.seed + 1)
    prompt = torch.randint(
        0, shape.cfg.vocab, (batch, shape.prompt), generator=gen, device=ctx.device
    )
    return model, prompt


def greedy(logits: Any) -> Any:
    """Next token per sequence: argmax of the last position's logits, shape [batch, 1]."""
    return logits[:, -1].argmax(-1, keepdim=True)


def _prefill(ctx: BenchContext, shape: DecodeShape, dtype: str, batch: int) -> Measurement:
    torch = ctx.torch
    model, prompt = _setup(ctx, shape, dtype, batch)

    def step() -> None:
        with torch.inference_mode():
            greedy(model.forward(prompt, 0, use_cache=True, last_only=True))

    policy = ctx.model_policy
    policy = dataclasses.replace(
        policy, warmup_iters=min(policy.warmup_iters, PREFILL_WARMUP_ITERS)
    )
    m = ctx.measure(step, policy=policy, work_per_iter=batch * shape.prompt)
    cfg, p = shape.cfg, shape.prompt
    # Forward FLOPs of the batch: 2 per matmul weight per token (layers; the LM head only
    # for the last token) + causal attention, QKᵀ and AV over P²/2 pairs: 2·L·h·P².
    flops = batch * (
        2.0 * cfg.layers * llama.layer_param_count(cfg) * p
        + 2.0 * cfg.vocab * cfg.hidden
        + 2.0 * cfg.layers * cfg.hidden * p * p
    )
    metrics: dict[str, float | str] = {
        **m.metrics,
        "ttft_ms": round(m.stats.median * 1e3, 4),
        "attention": ", ".join(sorted(model.attention_paths)),
        "tflops": round(flops / m.stats.median / 1e12, 4),
    }
    return dataclasses.replace(m, metrics=metrics)


def step_bytes(cfg: LlamaConfig, batch: int, context: int, elem_bytes: int) -> int:
    """Bytes one decode step must read: every matmul weight once (the layers and the LM
    head; one embedding row per token is negligible) plus K and V of ``context`` positions
    for every sequence: the decode roofline's numerator (research notes §3.3.5)."""
    weights = cfg.layers * llama.layer_param_count(cfg) + cfg.hidden + cfg.vocab * cfg.hidden
    kv = 2 * cfg.layers * cfg.kv_heads * cfg.head_dim * context * batch
    return (weights + kv) * elem_bytes


def _decode(ctx: BenchContext, shape: DecodeShape, dtype: str, batch: int) -> Measurement:
    torch = ctx.torch
    model, prompt = _setup(ctx, shape, dtype, batch)
    pos = shape.prompt
    token = greedy(model.forward(prompt, 0, use_cache=True, last_only=True))
    while pos < shape.position:  # real greedy steps up to the timed position
        token = greedy(model.forward(token, pos, use_cache=True))
        pos += 1
    state = {"token": token}

    def step() -> None:
        with torch.inference_mode():
            state["token"] = greedy(model.forward(state["token"], pos, use_cache=True))

    model.attention_paths.clear()  # report the timed step's attention path, not prefill's
    m = ctx.measure(step, policy=ctx.model_policy, work_per_iter=batch)
    elem = model.weights["embed"].element_size()
    cache_bytes = model.cache.nbytes if model.cache is not None else 0
    context = pos + 1
    nbytes = step_bytes(shape.cfg, batch, context, elem)
    achieved_gbs = nbytes / m.stats.median / 1e9
    metrics: dict[str, float | str] = {
        **m.metrics,
        "per_token_latency_ms": round(m.stats.median * 1e3, 4),
        "attention": ", ".join(sorted(model.attention_paths)),
        "context": float(context),
        "kv_cache_bytes": float(cache_bytes),
        "bytes_per_step": float(nbytes),
        "achieved_gbs": round(achieved_gbs, 3),
    }
    if ctx.spec is not None:
        metrics["mbu"] = round(achieved_gbs / ctx.spec.bandwidth_gbs, 5)
    return dataclasses.replace(m, metrics=metrics)


WORKLOAD = register(
    Workload(
        name="decode",
        summary="LLM inference with a KV cache: prefill tokens/s + TTFT, decode tokens/s per batch",
        cases=_cases,
    )
)
