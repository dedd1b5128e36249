"""Serving estimates for one GPU kind: deployment, fit margin, modelled speed and money.

Split from :mod:`gpuport.cost.estimate`, which decides the shared inputs (the one latency
target or concurrency every GPU is compared at, the one price kind) and calls :func:`serve`
per GPU. The deployment comes from :mod:`gpuport.cost.plan`, the speed from the step model
(:mod:`gpuport.cost.step`) at the rates of :mod:`gpuport.cost.rates`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuport.cost.memory import GB, NODE_GPUS, ServeMemory, serve_memory, tp_degrees
from gpuport.cost.model import CurvePoint, Efficiency, GpuCost, PriceUsed, ServingBasis
from gpuport.cost.money import (
    breakeven_days,
    breakeven_hours,
    energy_usd_per_mtok,
    joules_per_token,
    usd_per_gb_hour,
    usd_per_mtok,
)
from gpuport.cost.options import CostOptions, fixed_deployment, target_of
from gpuport.cost.plan import Candidate, Limits, Target, plan
from gpuport.cost.shapes import (
    KvDtype,
    ParamCount,
    WeightDtype,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    weight_bytes,
)
from gpuport.cost.step import Model, Rates, Workload, prefill_rate
from gpuport.cost.throughput import Hardware
from gpuport.knowledge.gpus import GpuSpec
from gpuport.knowledge.models import ModelShape

IMPLAUSIBLE = 2.0  # a --throughput this many times the model gets a warning note
CURVE_TOP = 1024  # the chart's largest concurrency


@dataclass(frozen=True)
class Gpu:
    """What one GPU brings to every estimate: rates, efficiencies, prices, engine limits."""

    spec: GpuSpec
    weight_dtype: WeightDtype  # --dtype as this GPU stores it (fp4: NVFP4 or MXFP4)
    compute_dtype: str
    efficiency: dict[str, Efficiency]
    rates: Rates
    serving: ServingBasis | None
    price: PriceUsed | None
    purchase: float | None
    notes: tuple[str, ...]
    capacity: float  # bytes
    capacity_basis: str
    max_seqs: int  # engine sequence cap per replica (vLLM max_num_seqs)
    chunk: int  # prefill chunk (vLLM max_num_batched_tokens)
    reserve: float  # bytes per GPU outside the weights, KV and chunk activations
    hw: Hardware  # training's roofline rates


def kv_dtype(opts: CostOptions) -> KvDtype:
    return opts.kv_dtype or ("fp16" if opts.dtype == "fp16" else "bf16")


def model_of(shape: ModelShape, counts: ParamCount, gpu: Gpu, opts: CostOptions) -> Model:
    return Model(shape, counts, gpu.weight_dtype, kv_dtype(opts))


def limits(gpu: Gpu, opts: CostOptions) -> Limits:
    return Limits(gpu.capacity, opts.usable, gpu.reserve, gpu.chunk, gpu.max_seqs,
                  float(opts.context))  # fmt: skip


def workload(opts: CostOptions) -> Workload:
    return Workload(float(opts.input_tokens), float(opts.output_tokens))


def memory(
    shape: ModelShape, counts: ParamCount, gpu: Gpu, opts: CostOptions, n: int
) -> ServeMemory:
    """Tensor-parallel group of ``n`` holding sequences of the full ``--context``."""
    kv_seq = kv_bytes_per_sequence(shape, opts.context, kv_dtype(opts))
    return serve_memory(
        shape, counts, gpu.weight_dtype, kv_seq, n, gpu.capacity, opts.usable, gpu.reserve,
        gpu.chunk,
    )  # fmt: skip


def best_plan(
    shape: ModelShape,
    counts: ParamCount,
    gpu: Gpu,
    opts: CostOptions,
    target: Target,
    conc: int | None,
) -> Candidate | None:
    m = model_of(shape, counts, gpu, opts)
    return plan(m, gpu.rates, workload(opts), limits(gpu, opts), target,
                fixed_deployment(opts), conc)  # fmt: skip


def serve(
    shape: ModelShape, counts: ParamCount, gpu: Gpu, opts: CostOptions, conc: int | None
) -> GpuCost:
    """One GPU kind: at ``conc`` sequences in all, or (None) filled to the latency target."""
    spec = gpu.spec
    notes = list(gpu.notes)
    one = memory(shape, counts, gpu, opts, 1)
    target = target_of(opts)
    fields: dict[str, Any] = {
        "gpu": spec.key,
        "name": spec.name,
        "memory_gb": round(gpu.capacity / GB, 3),
        "memory_basis": gpu.capacity_basis,
        "fits": one.max_sequences >= (opts.concurrency or 1),
        "weights_gb": weight_bytes(counts, gpu.weight_dtype) / GB,
        "kv_bytes_per_token": kv_bytes_per_token(shape, kv_dtype(opts)),
        "kv_gb_per_sequence": kv_bytes_per_sequence(shape, opts.context, kv_dtype(opts)) / GB,
        "usable_gb_per_gpu": one.usable / GB,
        "max_num_seqs": gpu.max_seqs,
        "prefill_chunk": gpu.chunk,
        "efficiency": gpu.efficiency,
        "engine": opts.engine,
        "serving": gpu.serving,
        "notes": notes,
    }
    seqs = opts.concurrency or 1
    fields["fits_on_tp"] = next(
        (n for n in tp_degrees(shape) if memory(shape, counts, gpu, opts, n).max_sequences >= seqs),
        None,
    )
    p = best_plan(shape, counts, gpu, opts, target, conc)
    if p is None:
        notes.append(never_fits(shape, counts, gpu, opts))
        fields |= {"gpus_needed": None, "tp_degree": None, "max_concurrency": 0}
        fields |= {"concurrency": 0, "weights_gb_per_gpu": None, "memory_gb_per_gpu": None}
        return GpuCost.model_validate(fields | money_fields(gpu, None, opts))
    if not fields["fits"]:
        target_seqs = opts.concurrency or 1
        notes.append(
            f"does not fit on one GPU at {target_seqs} sequence(s) of {opts.context} tokens: "
            f"weights {one.weights / GB:.1f} GB + {target_seqs} × {one.kv_per_sequence / GB:.2f} "
            f"GB KV + {one.overhead / GB:.2f} GB reserve = {one.need(target_seqs) / GB:.2f} GB "
            f"> {one.usable / GB:.2f} GB usable (margin {one.margin(target_seqs) / GB:+.2f} GB; "
            f"{gpu.capacity_basis})"
        )
    notes += plan_notes(shape, p, target, opts)
    s = p.steady
    per_gpu, per_user, source = p.per_gpu, s.per_user, "model"
    if spec.key in opts.throughputs:
        per_gpu, source = opts.throughputs[spec.key], "flag"
        notes += _quoted(spec.key, per_gpu, p, opts)
        quoted_user = per_gpu * p.gpus / max(p.total, 1)
        per_user = min(quoted_user, s.per_user)
    m = model_of(shape, counts, gpu, opts)
    prefill = prefill_rate(m, p.dep, gpu.rates, float(opts.input_tokens), float(gpu.chunk))
    per_replica = -(-p.per_replica // 1)
    fields |= {
        "gpus_needed": p.gpus,
        "tp_degree": p.dep.tp,
        "pp_degree": p.dep.pp,
        "ep_degree": p.dep.ep if counts.num_experts else None,
        "dp_attention": p.dep.dp_attention,
        "replicas": p.replicas,
        "max_concurrency": min(p.cap, gpu.max_seqs * (p.dep.gpus if p.dep.dp_attention else 1))
        * p.replicas,
        "concurrency": round(p.total),
        "weights_gb_per_gpu": p.memory.weights / GB,
        "memory_gb_per_gpu": p.memory.need(int(per_replica)) / GB,
        "reserve_gb_per_gpu": p.memory.overhead / GB,
        "margin_gb_per_gpu": p.memory.margin(int(per_replica)) / GB,
        "bound": s.bound,
        "tpot_ms": s.tpot_s * 1e3,
        "ttft_ms": s.ttft_s * 1e3,
        "target_met": p.meets if target.any else None,
        "decode_tokens_per_s_per_user": per_user,
        "decode_tokens_per_s_per_gpu": per_gpu,
        "prefill_tokens_per_s_per_gpu": prefill,
        "throughput_source": source,
    }
    fields |= _own_fields(shape, counts, gpu, opts)
    out = GpuCost.model_validate(fields | money_fields(gpu, (per_gpu, prefill), opts))
    return out.model_copy(update={"provenance": provenance(out, gpu, opts)})


def plan_notes(shape: ModelShape, p: Candidate, target: Target, opts: CostOptions) -> list[str]:
    notes: list[str] = []
    if p.dep.tp > NODE_GPUS:
        notes.append(
            f"a tensor-parallel group of {p.dep.tp} is wider than one {NODE_GPUS}-GPU node; "
            "real deployments add pipeline parallelism across nodes"
        )
    if p.replicas > 1:
        notes.append(f"{p.replicas} data-parallel replicas of {p.dep.gpus} GPU(s) each")
    if shape.is_mla and p.dep.tp > 1 and not p.dep.dp_attention:
        notes.append(
            "MLA keeps the whole KV latent on every tensor-parallel GPU: a wider TP adds room "
            "for weights only (--dp-attention splits the sequences instead)"
        )
    if target.any and not p.meets:
        notes.append(
            f"no deployment meets the latency target ({target.text()}): the one shown "
            f"is the fastest ({p.steady.tpot_s * 1e3:,.1f} ms per token, TTFT "
            f"{p.steady.ttft_s * 1e3:,.0f} ms)"
        )
    return notes


def _quoted(key: str, per_gpu: float, p: Candidate, opts: CostOptions) -> list[str]:
    """Notes on a --throughput figure against what the model gives at that load."""
    modelled = p.per_gpu
    notes = [
        f"throughput {per_gpu:,.0f} tokens/s per GPU from --throughput "
        f"(the model gives {modelled:,.0f} at {round(p.total)} sequences)"
    ]
    if per_gpu > IMPLAUSIBLE * modelled:
        notes.append(
            f"--throughput {key} is {per_gpu / modelled:.0f}× the model at this "
            "concurrency: check it is per GPU, output tokens only, at this batch"
        )
    quoted_user = per_gpu * p.gpus / max(p.total, 1)
    if quoted_user > p.steady.per_user:
        notes.append(
            f"tok/s/user stays the model's {p.steady.per_user:,.1f}: the quoted figure over "
            f"{round(p.total)} sequences would be {quoted_user:,.0f} per sequence, faster "
            "than one step can run"
        )
    return notes


def _own_fields(
    shape: ModelShape, counts: ParamCount, gpu: Gpu, opts: CostOptions
) -> dict[str, Any]:
    """This GPU kind at its highest throughput: memory filled, no latency target."""
    own = best_plan(shape, counts, gpu, opts, Target(), None)
    if own is None:
        return {}
    out: dict[str, Any] = {"own_max_concurrency": round(own.total), "own_max_gpus": own.gpus}
    if gpu.price is not None and gpu.spec.key not in opts.throughputs:
        out["usd_per_mtok_output_at_own_max"] = usd_per_mtok(gpu.price.usd_per_hour, own.per_gpu)
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


def provenance(rec: GpuCost, gpu: Gpu, opts: CostOptions) -> dict[str, str]:
    """Per figure: modelled, fitted, measured or given, and from what."""
    out: dict[str, str] = {}
    hw = gpu.efficiency
    hardware = ", ".join(f"{k} {e.basis}" for k, e in hw.items() if k in ("bandwidth", "compute"))
    if gpu.serving is not None:
        sb = gpu.serving
        fitted = (
            f"serving factors {sb.profile} fitted on {sb.fitted_on} published measurements"
            + (f" ({sb.borrowed})" if sb.borrowed else "")
            + f"; held-out error: median ×{sb.held_out_median_ratio:.2f}, "
            f"{sb.held_out_within_1_5x:.0%} within 1.5×, 90 % within ×{sb.held_out_p90_factor:.2f}"
        )
    else:
        fitted = "no serving factors"
    speed = f"modelled: step model on {opts.engine}; hardware {hardware}; {fitted}"
    out["decode_tokens_per_s_per_gpu"] = (
        "given: --throughput" if rec.throughput_source == "flag" else speed
    )
    for name in ("decode_tokens_per_s_per_user", "tpot_ms", "ttft_ms",
                 "prefill_tokens_per_s_per_gpu"):  # fmt: skip
        out[name] = speed
    out["gpus_needed"] = "modelled: the throughput-optimal deployment under the target " + (
        "(memory from the model's shape and the catalog's exact bytes)"
    )
    if rec.price is not None:
        p = rec.price
        out["usd_per_hour"] = (
            "given: --price"
            if p.origin == "flag"
            else f"catalog {p.kind} price: {p.provider}, newest quote {p.date}"
        )
        per = "given --throughput" if rec.throughput_source == "flag" else "modelled tokens/s"
        out["usd_per_mtok_output"] = f"{per} at the {p.kind} price"
    return out


def curve(shape: ModelShape, counts: ParamCount, gpu: Gpu, opts: CostOptions) -> list[CurvePoint]:
    """$/Mtok output at 1, 2, 4, … sequences, each on its throughput-optimal deployment."""
    top = max(min(gpu.max_seqs, CURVE_TOP), opts.concurrency or 0)
    price = gpu.price.usd_per_hour if gpu.price is not None else None
    points: list[CurvePoint] = []
    conc = 1
    while conc <= top:
        p = best_plan(shape, counts, gpu, opts, Target(), conc)
        if p is None:
            break
        points.append(
            CurvePoint(
                concurrency=conc,
                gpus=p.gpus,
                tokens_per_s_per_gpu=p.per_gpu,
                usd_per_mtok_output=usd_per_mtok(price, p.per_gpu) if price else None,
            )
        )
        conc *= 2
    return points
