"""The inputs of ``gpuport cost``: options, their checks, and their echo in the report.

Every option is a flag of the command. The report repeats each one with where it came
from (a flag, or a documented default) so that a number in a shared report can be
traced back to what was assumed.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuport.cost.model import Assumption
from gpuport.cost.plan import Fixed, Target
from gpuport.cost.shapes import FP4_FORMATS, INT4_GROUP_SIZE, KvDtype, WeightDtype
from gpuport.knowledge.models import ModelShape
from gpuport.knowledge.serving import Engine
from gpuport.models import GpuportError

PriceKind = Literal["on-demand", "spot", "reserved"]
# Without --concurrency or a latency flag, every GPU kind is compared at the deployment that
# serves the most tokens per GPU while each user still gets 20 tokens/s (a mean TPOT of
# 50 ms): a chat-like pace, between MLPerf's Server (5 tokens/s) and Interactive (25) targets
# and on the interactivity axis InferenceX plots. Comparing each GPU at its own maximum
# batch instead compares how long users wait, not GPUs.
DEFAULT_MAX_TPOT_MS = 50.0


class CostOptions(BaseModel):
    """The workload and money assumptions; every field is a ``gpuport cost`` flag."""

    model_config = ConfigDict(frozen=True)

    dtype: WeightDtype = "bf16"
    engine: Engine = Field(default="vllm", description="serving engine: vllm, sglang, trtllm")
    tp: int | None = Field(default=None, description="tensor-parallel degree; None: planned")
    pp: int = Field(default=1, description="pipeline stages per replica")
    dp: int | None = Field(default=None, description="data-parallel replicas; None: planned")
    ep: int | None = Field(default=None, description="expert-parallel degree (MoE)")
    dp_attention: bool = Field(default=False, description="MoE: attention data-parallel")
    max_tpot_ms: float | None = Field(
        default=None, description="mean time per output token limit; 0: none; None: default"
    )
    max_ttft_ms: float | None = Field(default=None, description="mean time to first token limit")
    min_user_tok_s: float | None = Field(default=None, description="tokens/s each user gets")
    kv_dtype: KvDtype | None = Field(default=None, description="None: 16-bit, like vLLM 'auto'")
    context: int = 8192
    concurrency: int | None = Field(default=None, description="None: as many as fit")
    max_batch: int | None = Field(
        default=None, description="None: vLLM's max_num_seqs for each GPU (1024 or 256)"
    )
    input_tokens: int | float = 1024
    output_tokens: int | float = 1024
    usable: float = 0.9
    overhead_gb: float = 1.0
    graphs_gb: float = 1.0
    prefill_chunk: int | None = Field(
        default=None, description="None: vLLM's max_num_batched_tokens for each GPU"
    )
    price_kind: PriceKind = "on-demand"
    prices: dict[str, float] = Field(default_factory=dict)
    throughputs: dict[str, float] = Field(default_factory=dict)
    purchases: dict[str, float] = Field(default_factory=dict)
    utilization: float = 0.6
    power_cost: float = 0.10
    train: bool = False
    zero: int = 3
    given: frozenset[str] = Field(default_factory=frozenset, description="fields set by flags")


_POSITIVE_INT = ("context", "max_batch", "prefill_chunk", "tp", "pp", "dp", "ep")
_POSITIVE_LENGTH = ("input_tokens", "output_tokens")
# Far beyond any real workload, and small enough that no figure made from it overflows.
MAX_INT = 2**40
# Non-negative, finite: zero is meaningful (free power, no reserve, no latency).
_NON_NEGATIVE = ("overhead_gb", "graphs_gb", "power_cost", "max_tpot_ms", "max_ttft_ms")
# Serving-only inputs that --train would silently ignore, so they are refused instead.
_SERVING_ONLY = (
    "kv_dtype", "input_tokens", "output_tokens", "max_batch", "engine", "tp", "dp", "ep",
    "dp_attention", "max_tpot_ms", "max_ttft_ms", "min_user_tok_s",
)  # fmt: skip
TRAIN_DTYPES = ("bf16", "fp16")  # mixed precision: 16-bit weights and gradients


def check_options(opts: CostOptions) -> None:
    """Refuse impossible inputs with the flag's name, before any arithmetic.

    Floats are checked with ``isfinite`` as well as a range: ``nan < 0`` is false, so a
    plain range check lets NaN (and ``inf``) through into every sum.
    """
    for name in _POSITIVE_INT:
        value = getattr(opts, name)
        if value is not None and not 0 < value <= MAX_INT:
            raise GpuportError(f"--{_flag(name)} must be a positive integer, not {value}")
    for name in _POSITIVE_LENGTH:
        value = getattr(opts, name)
        if not (math.isfinite(value) and 0 < value <= MAX_INT):
            raise GpuportError(f"--{_flag(name)} must be a positive number of tokens, not {value}")
    if opts.min_user_tok_s is not None and not (
        math.isfinite(opts.min_user_tok_s) and opts.min_user_tok_s > 0
    ):
        raise GpuportError(f"--min-user-tok-s must be a positive number, not {opts.min_user_tok_s}")
    if opts.concurrency is not None and not 0 < opts.concurrency <= MAX_INT:
        raise GpuportError(f"--concurrency must be a positive integer, not {opts.concurrency}")
    if not 0 < opts.usable <= 1:
        raise GpuportError(f"--usable must be a fraction in (0, 1], not {opts.usable}")
    if not 0 < opts.utilization <= 1:
        raise GpuportError(f"--utilization must be a fraction in (0, 1], not {opts.utilization}")
    for name in _NON_NEGATIVE:
        value = getattr(opts, name)
        if value is None:
            continue
        if not math.isfinite(value) or value < 0:
            raise GpuportError(f"--{_flag(name)} cannot be negative, infinite or NaN, not {value}")
    if opts.zero not in (0, 1, 2, 3):
        raise GpuportError(f"--zero must be 0, 1, 2 or 3, not {opts.zero}")
    if opts.train:
        _check_training(opts)
    elif opts.input_tokens + opts.output_tokens > opts.context:
        raise GpuportError(
            f"--input-tokens {opts.input_tokens} + --output-tokens {opts.output_tokens} "
            f"exceed --context {opts.context}: raise --context"
        )
    for flag, values in (
        ("price", opts.prices),
        ("throughput", opts.throughputs),
        ("purchase", opts.purchases),
    ):
        for key, value in values.items():
            if not (math.isfinite(value) and value > 0):
                raise GpuportError(f"--{flag} {key}={value}: the value must be a positive number")


def _check_training(opts: CostOptions) -> None:
    """--train sizes bf16 mixed-precision training: serving-only flags are refused."""
    if opts.throughputs:
        raise GpuportError("--throughput is serving throughput: it does not apply with --train")
    if opts.dtype not in TRAIN_DTYPES:
        if opts.dtype in FP4_FORMATS:
            raise GpuportError(f"--dtype {opts.dtype} does not apply with --train: training is "
                               "sized as 16-bit mixed precision (bf16 or fp16)")  # fmt: skip
        raise GpuportError(
            f"--dtype {opts.dtype} does not apply with --train: training is sized as "
            "16-bit mixed precision (bf16 or fp16)"
        )
    serving = [f"--{_flag(n)}" for n in _SERVING_ONLY if _is_set(opts, n)]
    if serving:
        verb = "does" if len(serving) == 1 else "do"
        raise GpuportError(f"{', '.join(serving)} {verb} not apply with --train: serving only")


def check_deployment(shape: ModelShape, opts: CostOptions) -> None:
    """Refuse a deployment the model cannot take, naming the flag."""
    from gpuport.cost.memory import valid_tp

    if opts.tp is not None and not valid_tp(shape, opts.tp):
        raise GpuportError(
            f"--tp {opts.tp}: {shape.name}'s {shape.num_heads} attention heads and "
            f"{shape.num_kv_heads} KV heads do not split {opts.tp} ways"
        )
    if opts.pp > shape.num_layers:
        raise GpuportError(f"--pp {opts.pp}: {shape.name} has only {shape.num_layers} layers")
    moe = bool(shape.num_experts)
    if opts.ep is not None and not moe:
        raise GpuportError(f"--ep applies to mixture-of-experts models; {shape.name} is dense")
    if opts.ep is not None and shape.num_experts % opts.ep:
        raise GpuportError(
            f"--ep {opts.ep}: {shape.name}'s {shape.num_experts} experts do not split "
            f"{opts.ep} ways"
        )
    if opts.dp_attention and not moe:
        raise GpuportError(
            f"--dp-attention applies to mixture-of-experts models; {shape.name} is dense"
        )


def target_of(opts: CostOptions) -> Target:
    """The mean latency target: the flags, else the default unless a concurrency is given."""
    tpot = opts.max_tpot_ms
    if opts.min_user_tok_s is not None:
        per_user = 1000.0 / opts.min_user_tok_s
        tpot = per_user if tpot is None or tpot == 0 else min(tpot, per_user)
    explicit = tpot is not None or opts.max_ttft_ms is not None
    if tpot is None and not explicit and opts.concurrency is None:
        tpot = DEFAULT_MAX_TPOT_MS
    return Target(
        tpot_s=tpot / 1e3 if tpot else None,
        ttft_s=opts.max_ttft_ms / 1e3 if opts.max_ttft_ms else None,
    )


def fixed_deployment(opts: CostOptions) -> Fixed:
    return Fixed(tp=opts.tp, pp=opts.pp, ep=opts.ep, dp=opts.dp, dp_attention=opts.dp_attention)


def _is_set(opts: CostOptions, name: str) -> bool:
    """Given as a flag, or (through the API) changed from its default."""
    return name in opts.given or getattr(opts, name) != CostOptions.model_fields[name].default


_FROM_FLAGS = {
    "latency_target": ("max_tpot_ms", "max_ttft_ms", "min_user_tok_s", "concurrency"),
    "deployment": ("tp", "pp", "dp", "ep", "dp_attention"),
}


def _target_value(opts: CostOptions) -> str:
    return target_of(opts).text(le="<=") or "none"


def _deployment_value(opts: CostOptions) -> str:
    parts = [f"{k}={getattr(opts, k)}" for k in ("tp", "dp", "ep") if getattr(opts, k)]
    if opts.pp != 1:
        parts.append(f"pp={opts.pp}")
    if opts.dp_attention:
        parts.append("dp-attention")
    return ", ".join(parts) or "planned"


def _flag(name: str) -> str:
    return {"max_tpot_ms": "max-tpot", "max_ttft_ms": "max-ttft"}.get(name, name.replace("_", "-"))


def assumptions(shape: ModelShape, opts: CostOptions) -> list[Assumption]:
    """Every input echoed with where it came from (a flag or a documented default)."""

    def item(name: str, value: Any, unit: str, detail: str) -> Assumption:
        flags = _FROM_FLAGS.get(name, (name,))
        given = any(f in opts.given for f in flags)
        origin: Literal["flag", "default"] = "flag" if given else "default"
        return Assumption.model_validate(
            {"name": name, "value": value, "unit": unit, "origin": origin, "detail": detail}
        )

    out = [
        item(
            "dtype",
            opts.dtype,
            "",
            "16-bit mixed precision: fp32 master weights and Adam state"
            if opts.train
            else "weight format",
        ),
        item("kv_dtype", opts.kv_dtype or "16-bit", "", "KV-cache element type (vLLM 'auto')"),
        item("context", opts.context, "tokens", "every sequence may grow to this length"),
        item(
            "concurrency",
            opts.concurrency if opts.concurrency is not None else (1 if opts.train else "target"),
            "sequences",
            "micro-batch sequences per GPU"
            if opts.train
            else "in flight in all, on each GPU kind's throughput-optimal deployment"
            if opts.concurrency is not None
            else "target: each GPU kind filled to the most sequences the latency target allows",
        ),
        item(
            "max_batch",
            opts.max_batch if opts.max_batch is not None else "vLLM",
            "sequences",
            "per replica (vLLM max_num_seqs: 1024 on >= 70 GiB GPUs other than A100, else "
            "256; vllm/engine/arg_utils.py, v0.9 to current)",
        ),
        item(
            "input_tokens",
            opts.input_tokens,
            "tokens",
            "prompt length (prefill, TTFT, $/Mtok input)",
        ),
        item(
            "output_tokens",
            opts.output_tokens,
            "tokens",
            "decode attends to input + output/2 tokens on average",
        ),
        item(
            "usable",
            opts.usable,
            "fraction",
            "of GPU memory (vLLM --gpu-memory-utilization default 0.9)",
        ),
        item(
            "overhead_gb",
            opts.overhead_gb,
            "GB per GPU",
            "runtime outside torch: context, NCCL/RCCL buffers",
        ),
        item(
            "graphs_gb",
            opts.graphs_gb,
            "GB per GPU",
            "CUDA/HIP-graph pool, which vLLM's profile counts since v0.21",
        ),
        item(
            "prefill_chunk",
            opts.prefill_chunk if opts.prefill_chunk is not None else "vLLM",
            "tokens",
            "activation peak of one prefill chunk (vLLM max_num_batched_tokens: 8192 on "
            ">= 70 GiB GPUs other than A100, else 2048)",
        ),
        item("price_kind", opts.price_kind, "", "which catalog price (newest first)"),
        item(
            "utilization",
            opts.utilization,
            "fraction",
            "busy time of a bought GPU (break-even days)",
        ),
        item("power_cost", opts.power_cost, "USD/kWh", "electricity for energy $ and break-even"),
        item("engine", opts.engine, "", "serving engine whose fitted factors apply"),
        item(
            "latency_target",
            _target_value(opts),
            "",
            "mean TPOT/TTFT limits the deployment is chosen under (--max-tpot, --max-ttft, "
            "--min-user-tok-s; 0 for none)",
        ),
        item(
            "deployment",
            _deployment_value(opts),
            "",
            "tensor/pipeline/expert parallel and replicas fixed by flags; the rest is planned",
        ),
    ]
    if opts.train:
        # The serving-only inputs play no part in a training estimate: not echoed.
        out = [a for a in out if a.name not in (*_SERVING_ONLY, "prefill_chunk", "graphs_gb",
                                                "latency_target", "deployment")]  # fmt: skip
        out.append(item("zero", opts.zero, "stage", "optimizer/gradient/weight sharding"))
    if opts.dtype == "int4" and not opts.train:
        out.append(
            Assumption(
                name="int4_group_size",
                value=INT4_GROUP_SIZE,
                unit="weights",
                origin="default",
                detail="GPTQ/AWQ: 16-bit scale + 4-bit zero per group",
            )
        )
    if shape.is_moe and not opts.train:
        out.append(
            Assumption(
                name="moe_routing",
                value="uniform",
                origin="model",
                detail="decode reads the distinct experts a batch touches, routed uniformly",
            )
        )
    out.append(
        Assumption(
            name="memory_units",
            value="bytes",
            origin="model",
            detail="capacity is the catalog's exact memory_bytes where known, else the "
            "datasheet GB as 10^9 bytes (the safe side); reports use 10^9-byte GB",
        )
    )
    return out
