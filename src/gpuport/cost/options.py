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
from gpuport.cost.shapes import INT4_GROUP_SIZE, KvDtype, WeightDtype
from gpuport.knowledge.models import ModelShape
from gpuport.models import GpuportError

PriceKind = Literal["on-demand", "spot", "reserved"]
# The default concurrency sizes each GPU for at least this many sequences before filling
# it: a deployment whose weights leave room for one or two sequences would be priced at
# batch 1, an order of magnitude above what the same GPUs cost when the model is split
# over enough of them to batch (70B fp8: 1 H100 at 1 sequence against 2 at 28).
MIN_BATCH = 8


class CostOptions(BaseModel):
    """The workload and money assumptions; every field is a ``gpuport cost`` flag."""

    model_config = ConfigDict(frozen=True)

    dtype: WeightDtype = "bf16"
    kv_dtype: KvDtype | None = Field(default=None, description="None: 16-bit, like vLLM 'auto'")
    context: int = 8192
    concurrency: int | None = Field(default=None, description="None: as many as fit")
    max_batch: int | None = Field(
        default=None, description="None: vLLM's max_num_seqs for each GPU (1024 or 256)"
    )
    input_tokens: int = 1024
    output_tokens: int = 1024
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
    allreduce_latency_us: float = 10.0
    given: frozenset[str] = Field(default_factory=frozenset, description="fields set by flags")


_POSITIVE_INT = ("context", "max_batch", "input_tokens", "output_tokens", "prefill_chunk")
# Far beyond any real workload, and small enough that no figure made from it overflows.
MAX_INT = 2**40
# Non-negative, finite: zero is meaningful (free power, no reserve, no latency).
_NON_NEGATIVE = ("overhead_gb", "graphs_gb", "power_cost", "allreduce_latency_us")
# Serving-only inputs that --train would silently ignore, so they are refused instead.
_SERVING_ONLY = ("kv_dtype", "input_tokens", "output_tokens", "max_batch")
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
    if opts.concurrency is not None and not 0 < opts.concurrency <= MAX_INT:
        raise GpuportError(f"--concurrency must be a positive integer, not {opts.concurrency}")
    if not 0 < opts.usable <= 1:
        raise GpuportError(f"--usable must be a fraction in (0, 1], not {opts.usable}")
    if not 0 < opts.utilization <= 1:
        raise GpuportError(f"--utilization must be a fraction in (0, 1], not {opts.utilization}")
    for name in _NON_NEGATIVE:
        value = getattr(opts, name)
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
        raise GpuportError(
            f"--dtype {opts.dtype} does not apply with --train: training is sized as "
            "16-bit mixed precision (bf16 or fp16)"
        )
    serving = [f"--{_flag(n)}" for n in _SERVING_ONLY if _is_set(opts, n)]
    if serving:
        verb = "does" if len(serving) == 1 else "do"
        raise GpuportError(f"{', '.join(serving)} {verb} not apply with --train: serving only")


def _is_set(opts: CostOptions, name: str) -> bool:
    """Given as a flag, or (through the API) changed from its default."""
    return name in opts.given or getattr(opts, name) != CostOptions.model_fields[name].default


def _flag(name: str) -> str:
    return name.replace("_", "-")


def assumptions(shape: ModelShape, opts: CostOptions) -> list[Assumption]:
    """Every input echoed with where it came from (a flag or a documented default)."""

    def item(name: str, value: Any, unit: str, detail: str) -> Assumption:
        origin: Literal["flag", "default"] = "flag" if name in opts.given else "default"
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
            opts.concurrency if opts.concurrency is not None else (1 if opts.train else "equal"),
            "sequences",
            "equal: the largest every GPU holds on its fewest GPUs for "
            f"{MIN_BATCH}+ sequences (each GPU's own maximum is a column of its own)"
            if not opts.train
            else "micro-batch sequences per GPU",
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
        item(
            "allreduce_latency_us",
            opts.allreduce_latency_us,
            "µs",
            "per tensor-parallel all-reduce",
        ),
    ]
    if opts.train:
        # The serving-only inputs play no part in a training estimate: not echoed.
        out = [a for a in out if a.name not in (*_SERVING_ONLY, "prefill_chunk", "graphs_gb")]
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
