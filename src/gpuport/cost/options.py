"""The inputs of ``gpuport cost``: options, their checks, and their echo in the report.

Every option is a flag of the command. The report repeats each one with where it came
from (a flag, or a documented default) so that a number in a shared report can be
traced back to what was assumed.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuport.cost.model import Assumption
from gpuport.cost.shapes import INT4_GROUP_SIZE, KvDtype, WeightDtype
from gpuport.knowledge.models import ModelShape
from gpuport.models import GpuportError

PriceKind = Literal["on-demand", "spot", "reserved"]


class CostOptions(BaseModel):
    """The workload and money assumptions; every field is a ``gpuport cost`` flag."""

    model_config = ConfigDict(frozen=True)

    dtype: WeightDtype = "bf16"
    kv_dtype: KvDtype | None = Field(default=None, description="None: 16-bit, like vLLM 'auto'")
    context: int = 8192
    concurrency: int | None = Field(default=None, description="None: as many as fit")
    max_batch: int = 256
    input_tokens: int = 1024
    output_tokens: int = 1024
    usable: float = 0.9
    overhead_gb: float = 1.0
    prefill_chunk: int = 2048
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


def check_options(opts: CostOptions) -> None:
    """Refuse impossible inputs with the flag's name, before any arithmetic."""
    for name in _POSITIVE_INT:
        if getattr(opts, name) <= 0:
            raise GpuportError(
                f"--{_flag(name)} must be a positive integer, not {getattr(opts, name)}"
            )
    if opts.concurrency is not None and opts.concurrency <= 0:
        raise GpuportError(f"--concurrency must be a positive integer, not {opts.concurrency}")
    if not 0 < opts.usable <= 1:
        raise GpuportError(f"--usable must be a fraction in (0, 1], not {opts.usable}")
    if not 0 < opts.utilization <= 1:
        raise GpuportError(f"--utilization must be a fraction in (0, 1], not {opts.utilization}")
    for name in ("overhead_gb", "power_cost", "allreduce_latency_us"):
        if getattr(opts, name) < 0:
            raise GpuportError(f"--{_flag(name)} cannot be negative, not {getattr(opts, name)}")
    if opts.zero not in (0, 1, 2, 3):
        raise GpuportError(f"--zero must be 0, 1, 2 or 3, not {opts.zero}")
    if opts.input_tokens + opts.output_tokens > opts.context and not opts.train:
        raise GpuportError(
            f"--input-tokens {opts.input_tokens} + --output-tokens {opts.output_tokens} "
            f"exceed --context {opts.context}: raise --context"
        )
    if opts.train and opts.throughputs:
        raise GpuportError("--throughput is serving throughput: it does not apply with --train")
    for flag, values in (("price", opts.prices), ("throughput", opts.throughputs)):
        for key, value in values.items():
            if not value > 0:
                raise GpuportError(f"--{flag} {key}={value}: the value must be positive")
    for key, value in opts.purchases.items():
        if not value > 0:
            raise GpuportError(f"--purchase {key}={value}: the value must be positive")


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
            "bf16" if opts.train else opts.dtype,
            "",
            "weight format; training is bf16 mixed precision",
        ),
        item("kv_dtype", opts.kv_dtype or "16-bit", "", "KV-cache element type (vLLM 'auto')"),
        item("context", opts.context, "tokens", "every sequence may grow to this length"),
        item(
            "concurrency",
            opts.concurrency if opts.concurrency is not None else (1 if opts.train else "auto"),
            "sequences",
            "auto: size for one sequence, run as many as fit (up to --max-batch)"
            if not opts.train
            else "micro-batch sequences per GPU",
        ),
        item(
            "max_batch", opts.max_batch, "sequences", "cap on auto concurrency (vLLM max_num_seqs)"
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
            "runtime: context, NCCL/RCCL buffers, graphs",
        ),
        item(
            "prefill_chunk",
            opts.prefill_chunk,
            "tokens",
            "activation workspace of one prefill chunk",
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
            value="GiB",
            origin="model",
            detail="catalog capacities are binary (80 GB H100 = 80 GiB); reports use 10^9-byte GB",
        )
    )
    return out
