"""Serving estimates for one GPU kind: plan, fit margin, roofline speed and money.

Split from :mod:`gpuport.cost.estimate`, which decides the shared inputs (the one
concurrency every GPU is compared at, the one price kind) and calls :func:`serve` per GPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gpuport.cost.memory import (
    GB,
    NODE_GPUS,
    ServeMemory,
    ServePlan,
    plan_serving,
    serve_memory,
    tp_degrees,
)
from gpuport.cost.model import CurvePoint, Efficiency, GpuCost, PriceUsed
from gpuport.cost.money import (
    breakeven_days,
    breakeven_hours,
    energy_usd_per_mtok,
    joules_per_token,
    usd_per_gb_hour,
    usd_per_mtok,
)
from gpuport.cost.options import MIN_BATCH, CostOptions
from gpuport.cost.shapes import (
    KvDtype,
    ParamCount,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    weight_bytes,
)
from gpuport.cost.throughput import (
    DecodeStep,
    Hardware,
    decode_step,
    prefill_tokens_per_s,
    ttft_s,
)
from gpuport.knowledge.gpus import GpuSpec
from gpuport.knowledge.models import ModelShape

IMPLAUSIBLE = 2.0  # a --throughput this many times the roofline gets a warning note


@dataclass(frozen=True)
class Gpu:
    """What one GPU brings to every estimate: rates, efficiencies, prices, engine limits."""

    spec: GpuSpec
    compute_dtype: str
    efficiency: dict[str, Efficiency]
    hw: Hardware
    price: PriceUsed | None
    purchase: float | None
    notes: tuple[str, ...]
    capacity: float  # bytes
    capacity_basis: str
    max_seqs: int  # vLLM max_num_seqs per replica
    chunk: int  # vLLM max_num_batched_tokens: the profiled prefill chunk
    reserve: float  # bytes per GPU outside the weights, KV and chunk activations


def kv_dtype(opts: CostOptions) -> KvDtype:
    return opts.kv_dtype or ("fp16" if opts.dtype == "fp16" else "bf16")


def _kv_seq(shape: ModelShape, opts: CostOptions) -> float:
    return kv_bytes_per_sequence(shape, opts.context, kv_dtype(opts))


def memory(
    shape: ModelShape, counts: ParamCount, gpu: Gpu, opts: CostOptions, n: int
) -> ServeMemory:
    return serve_memory(
        shape, counts, opts.dtype, _kv_seq(shape, opts), n, gpu.capacity, opts.usable,
        gpu.reserve, gpu.chunk,
    )  # fmt: skip


def plan(
    shape: ModelShape, counts: ParamCount, gpu: Gpu, opts: CostOptions, sequences: int
) -> ServePlan | None:
    return plan_serving(
        shape, counts, opts.dtype, _kv_seq(shape, opts), sequences, gpu.capacity,
        opts.usable, gpu.reserve, gpu.chunk, gpu.max_seqs,
    )  # fmt: skip


def own_maximum(
    shape: ModelShape, counts: ParamCount, gpu: Gpu, opts: CostOptions
) -> ServePlan | None:
    """The deployment a GPU kind gets by default: the fewest GPUs holding MIN_BATCH
    full-context sequences (so a model that only just fits is split instead of being run
    one sequence at a time), filled up to what memory and max_num_seqs allow."""
    return plan(shape, counts, gpu, opts, MIN_BATCH)


def _step(
    shape: ModelShape, counts: ParamCount, gpu: Gpu, opts: CostOptions, p: ServePlan, conc: int
) -> tuple[DecodeStep, float, int]:
    """(decode step of the busiest replica, output tokens/s per GPU, that replica's batch)."""
    per_replica = math.ceil(conc / p.replicas)  # the busiest replica sets the pace
    kv_len = opts.input_tokens + opts.output_tokens / 2
    step = decode_step(shape, counts, opts.dtype, kv_dtype(opts), per_replica, kv_len, p.tp, gpu.hw)
    # conc sequences exist, not replicas × per_replica: count only those.
    return step, conc / step.step_s / p.gpus, per_replica


def serve(shape: ModelShape, counts: ParamCount, gpu: Gpu, opts: CostOptions, conc: int) -> GpuCost:
    """One GPU kind serving ``conc`` sequences (the report's common concurrency)."""
    spec = gpu.spec
    kv_seq = _kv_seq(shape, opts)
    notes = list(gpu.notes)
    one = memory(shape, counts, gpu, opts, 1)
    fields: dict[str, Any] = {
        "gpu": spec.key,
        "name": spec.name,
        "memory_gb": round(gpu.capacity / GB, 3),
        "memory_basis": gpu.capacity_basis,
        "fits": one.max_sequences >= (opts.concurrency or 1),
        "weights_gb": weight_bytes(counts, opts.dtype) / GB,
        "kv_bytes_per_token": kv_bytes_per_token(shape, kv_dtype(opts)),
        "kv_gb_per_sequence": kv_seq / GB,
        "usable_gb_per_gpu": one.usable / GB,
        "max_num_seqs": gpu.max_seqs,
        "prefill_chunk": gpu.chunk,
        "efficiency": gpu.efficiency,
        "notes": notes,
    }
    p = plan(shape, counts, gpu, opts, conc)
    if p is None:
        notes.append(never_fits(shape, counts, gpu, opts))
        fields |= {"gpus_needed": None, "tp_degree": None, "max_concurrency": 0}
        fields |= {"concurrency": 0, "weights_gb_per_gpu": None, "memory_gb_per_gpu": None}
        return GpuCost.model_validate(fields | money_fields(gpu, None, opts))
    if not fields["fits"]:
        target = opts.concurrency or 1
        notes.append(
            f"does not fit on one GPU at {target} sequence(s): weights {one.weights / GB:.1f} GB "
            f"+ {target} × {kv_seq / GB:.2f} GB KV + {one.overhead / GB:.2f} GB reserve = "
            f"{one.need(target) / GB:.2f} GB > {one.usable / GB:.2f} GB usable "
            f"(margin {one.margin(target) / GB:+.2f} GB; {gpu.capacity_basis})"
        )
    if p.tp > NODE_GPUS:
        notes.append(
            f"a tensor-parallel group of {p.tp} is wider than one {NODE_GPUS}-GPU node; "
            "real deployments add pipeline parallelism across nodes"
        )
    if p.replicas > 1:
        notes.append(f"{p.replicas} data-parallel replicas of {p.tp} GPU(s) each")
    if shape.is_mla and p.tp > 1:
        notes.append(
            "MLA keeps the whole KV latent on every GPU: a wider TP adds room for weights only"
        )
    step, modelled, per_replica = _step(shape, counts, gpu, opts, p, conc)
    margin = p.memory.margin(per_replica)
    per_gpu, per_user, source = modelled, step.per_user, "model"
    if spec.key in opts.throughputs:
        per_gpu, source = opts.throughputs[spec.key], "flag"
        quoted_user = per_gpu * p.gpus / conc
        per_user = min(quoted_user, step.per_user)
        notes.append(
            f"throughput {per_gpu:,.0f} tokens/s per GPU from --throughput "
            f"(the roofline gives {modelled:,.0f} at {conc} sequences)"
        )
        if per_gpu > IMPLAUSIBLE * modelled:
            notes.append(
                f"--throughput {spec.key} is {per_gpu / modelled:.0f}× the roofline at this "
                "concurrency: check it is per GPU, output tokens only, at this batch"
            )
        if quoted_user > step.per_user:
            notes.append(
                f"tok/s/user stays the roofline's {step.per_user:,.1f}: the quoted figure "
                f"over {conc} sequences would be {quoted_user:,.0f} per sequence, faster "
                "than one decode step can run"
            )
    prefill = prefill_tokens_per_s(shape, counts, opts.input_tokens, gpu.hw)
    fields |= {
        "gpus_needed": p.gpus,
        "tp_degree": p.tp,
        "replicas": p.replicas,
        "max_concurrency": p.max_sequences,
        "concurrency": conc,
        "weights_gb_per_gpu": p.memory.weights / GB,
        "memory_gb_per_gpu": p.memory.need(per_replica) / GB,
        "reserve_gb_per_gpu": p.memory.overhead / GB,
        "margin_gb_per_gpu": margin / GB,
        "bound": step.bound,
        "decode_tokens_per_s_per_user": per_user,
        "decode_tokens_per_s_per_gpu": per_gpu,
        "prefill_tokens_per_s_per_gpu": prefill,
        "ttft_ms": ttft_s(shape, counts, opts.dtype, opts.input_tokens, p.tp, gpu.hw) * 1e3,
        "throughput_source": source,
    }
    fields |= _own_fields(shape, counts, gpu, opts)
    return GpuCost.model_validate(fields | money_fields(gpu, (per_gpu, prefill), opts))


def _own_fields(
    shape: ModelShape, counts: ParamCount, gpu: Gpu, opts: CostOptions
) -> dict[str, Any]:
    """This GPU kind at its own maximum concurrency (its default deployment, filled)."""
    own = own_maximum(shape, counts, gpu, opts)
    if own is None:
        return {}
    conc = own.max_sequences
    _, per_gpu, _ = _step(shape, counts, gpu, opts, own, conc)
    out: dict[str, Any] = {"own_max_concurrency": conc, "own_max_gpus": own.gpus}
    if gpu.price is not None and gpu.spec.key not in opts.throughputs:
        out["usd_per_mtok_output_at_own_max"] = usd_per_mtok(gpu.price.usd_per_hour, per_gpu)
    return out


def never_fits(shape: ModelShape, counts: ParamCount, gpu: Gpu, opts: CostOptions) -> str:
    """Why no tensor-parallel degree holds one sequence: the term that overflows, by name.

    Every per-GPU term is smallest at the widest degree (one attention head per GPU), so
    that is where the terms are compared with the usable memory.
    """
    n = tp_degrees(shape)[-1]
    mem = memory(shape, counts, gpu, opts, n)
    usable = (
        f"{mem.usable / GB:.1f} GB usable (--usable {opts.usable:g} of {gpu.capacity / GB:.1f} GB)"
    )
    where = f"does not fit even split {n} ways (one attention head per GPU)"
    if mem.overhead >= mem.usable:
        return (
            f"{where}: the runtime reserve and prefill workspace alone take "
            f"{mem.overhead / GB:.1f} GB of the {usable}; lower --overhead-gb or raise --usable"
        )
    if mem.weights + mem.overhead >= mem.usable:
        return (
            f"{where}: weights {mem.weights / GB:.1f} GB + reserve {mem.overhead / GB:.1f} GB "
            f"per GPU exceed the {usable}; a smaller --dtype shrinks the weights"
        )
    fp8 = "" if kv_dtype(opts) == "fp8" else " or use --kv-dtype fp8"
    return (
        f"{where}: one {opts.context}-token sequence's KV cache needs "
        f"{mem.kv_per_sequence / GB:.2f} GB per GPU, more than the "
        f"{(mem.usable - mem.weights - mem.overhead) / GB:.2f} GB left of the {usable} "
        f"after the weights and reserve; lower --context{fp8}"
    )


def money_fields(gpu: Gpu, rates: tuple[float, float] | None, opts: CostOptions) -> dict[str, Any]:
    """Price-derived fields; ``rates`` is (output, input) tokens/s per GPU, if known."""
    spec, price = gpu.spec, gpu.price
    out: dict[str, Any] = {"price": price, "purchase_usd": gpu.purchase}
    if rates is not None:
        out["joules_per_token"] = joules_per_token(spec.tdp_w, rates[0])
        out["energy_usd_per_mtok"] = energy_usd_per_mtok(spec.tdp_w, rates[0], opts.power_cost)
    if price is None:
        return out
    hourly = price.usd_per_hour
    out["usd_per_hour"] = hourly
    out["usd_per_gb"] = usd_per_gb_hour(hourly, spec.memory_gb)
    if rates is not None:
        out["usd_per_mtok_output"] = usd_per_mtok(hourly, rates[0])
        out["usd_per_mtok_input"] = usd_per_mtok(hourly, rates[1])
    if gpu.purchase is not None:
        hours = breakeven_hours(gpu.purchase, hourly, spec.tdp_w, opts.power_cost)
        out["breakeven_hours"] = hours
        if hours is not None:
            out["breakeven_days"] = breakeven_days(hours, opts.utilization)
    return out


def curve(shape: ModelShape, counts: ParamCount, gpu: Gpu, opts: CostOptions) -> list[CurvePoint]:
    """$/Mtok output at 1, 2, 4, … sequences, each on the fewest GPUs that hold them."""
    top = max(gpu.max_seqs, opts.concurrency or 0)
    price = gpu.price.usd_per_hour if gpu.price is not None else None
    points: list[CurvePoint] = []
    conc = 1
    while conc <= top:
        p = plan(shape, counts, gpu, opts, conc)
        if p is None:
            break
        _, per_gpu, _ = _step(shape, counts, gpu, opts, p, conc)
        points.append(
            CurvePoint(
                concurrency=conc,
                gpus=p.gpus,
                tokens_per_s_per_gpu=per_gpu,
                usd_per_mtok_output=usd_per_mtok(price, per_gpu) if price else None,
            )
        )
        conc *= 2
    return points
