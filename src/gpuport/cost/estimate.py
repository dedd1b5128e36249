"""``estimate``: one model, some GPUs, a workload → a :class:`CostReport`.

Pure: shapes, catalog entries, options and bench runs in; a model out. The CLI does
the reading (catalogs, config.json, run files) and the writing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from gpuport.bench.model import BenchRun
from gpuport.cost import efficiency as eff_mod
from gpuport.cost.memory import (
    GB,
    NODE_GPUS,
    ServePlan,
    capacity_bytes,
    model_state_bytes,
    plan_serving,
    plan_training,
    serve_memory,
    tp_degrees,
    training_activations,
    unsharded_state_bytes,
)
from gpuport.cost.model import (
    CostReport,
    CurvePoint,
    Efficiency,
    GpuCost,
    ModelInfo,
    PriceUsed,
)
from gpuport.cost.money import (
    breakeven_days,
    breakeven_hours,
    catalog_price,
    catalog_purchase,
    energy_usd_per_mtok,
    joules_per_token,
    usd_per_gb_hour,
    usd_per_mtok,
)
from gpuport.cost.options import CostOptions, assumptions, check_options
from gpuport.cost.shapes import (
    KvDtype,
    ParamCount,
    count_params,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    weight_bytes,
)
from gpuport.cost.throughput import (
    Hardware,
    decode_step,
    prefill_tokens_per_s,
    train_tokens_per_s,
    ttft_s,
)
from gpuport.knowledge.gpus import GpuSpec
from gpuport.knowledge.models import ModelShape, ModelSpec
from gpuport.models import GpuportError

PCIE_BUSBW_GBS = 25.0  # practical all-reduce bus bandwidth over PCIe Gen4/5 x16
LINK_EFFICIENCY = 0.8  # busbw / link rate where the catalog has no measured all-reduce
IMPLAUSIBLE = 2.0  # a --throughput this many times the roofline gets a warning note


@dataclass(frozen=True)
class _Gpu:
    """What one GPU brings to every estimate: rates, efficiencies, prices."""

    spec: GpuSpec
    compute_dtype: str
    efficiency: dict[str, Efficiency]
    hw: Hardware
    price: PriceUsed | None
    purchase: float | None
    notes: tuple[str, ...]


def estimate(
    shape: ModelShape,
    gpus: Sequence[GpuSpec],
    opts: CostOptions,
    runs: Mapping[str, BenchRun] | None = None,
    model_source: str = "",
) -> CostReport:
    """Size, time and price ``shape`` on each of ``gpus``.

    ``runs`` maps GPU keys to bench runs whose measured efficiencies replace the
    published ones for that GPU.
    """
    check_options(opts)
    if not gpus:
        raise GpuportError("no GPUs to estimate: give --gpus")
    for flag, keys in (
        ("price", opts.prices),
        ("throughput", opts.throughputs),
        ("purchase", opts.purchases),
    ):
        for key in keys:
            if key not in {g.key for g in gpus}:
                raise GpuportError(f"--{flag} names {key}, which is not among --gpus")
    counts = count_params(shape)
    notes: list[str] = list(shape.assumed)
    records: list[GpuCost] = []
    curves: dict[str, list[CurvePoint]] = {}
    for spec in gpus:
        gpu = _prepare(spec, opts, (runs or {}).get(spec.key))
        if opts.train:
            records.append(_train(shape, counts, gpu, opts))
        else:
            records.append(_serve(shape, counts, gpu, opts))
            curves[spec.key] = _curve(shape, counts, gpu, opts)
    if opts.context > shape.max_context:
        notes.append(
            f"--context {opts.context} is longer than {shape.name}'s {shape.max_context}-token "
            "context window"
        )
    no_purchase = [r.gpu for r in records if r.purchase_usd is None]
    if no_purchase:
        notes.append(
            "break-even needs a purchase price (catalog or --purchase GPU=USD); none for "
            + ", ".join(no_purchase)
        )
    return CostReport(
        mode="training" if opts.train else "inference",
        model=_model_info(shape, counts, model_source),
        assumptions=assumptions(shape, opts),
        records=records,
        curves=curves,
        notes=notes,
    )


def _prepare(spec: GpuSpec, opts: CostOptions, run: BenchRun | None) -> _Gpu:
    dtype = eff_mod.compute_dtype(spec, opts.dtype)  # training: bf16 or fp16 (checked)
    efficiency = eff_mod.published(spec, dtype)
    notes: list[str] = []
    if run is not None:
        measured, run_notes = eff_mod.measured(run, spec, dtype)
        efficiency |= measured
        notes += run_notes
    if opts.dtype == "fp8" and dtype != "fp8" and not opts.train:
        notes.append(f"{spec.name} has no fp8 matrix units: fp8 weights run bf16 GEMMs")
    bw = spec.bandwidth_gbs * 1e9 * efficiency["bandwidth"].value
    flops = eff_mod.peak_tflops(spec, dtype) * 1e12 * efficiency["compute"].value
    bus = spec.achievable.get("busbw_allreduce")
    if bus is not None:
        busbw = bus.value
    elif spec.interconnect_gbs:
        busbw = spec.interconnect_gbs * LINK_EFFICIENCY
    else:
        busbw = PCIE_BUSBW_GBS
    hw = Hardware(
        bandwidth=bw, flops=flops, busbw=busbw * 1e9, latency_s=opts.allreduce_latency_us * 1e-6
    )
    price: PriceUsed | None
    if spec.key in opts.prices:
        price = PriceUsed(usd_per_hour=opts.prices[spec.key], kind="flag", origin="flag")
    else:
        price, note = catalog_price(spec, opts.price_kind)
        if note:
            notes.append(note)
        if price is None:
            notes.append(
                f"no rental price for {spec.key} in the catalog: give --price {spec.key}=USD"
            )
    purchase = opts.purchases.get(spec.key)
    if purchase is None:
        bought = catalog_purchase(spec)
        purchase = bought.usd if bought is not None else None
    return _Gpu(spec, dtype, efficiency, hw, price, purchase, tuple(notes))


def _kv_dtype(opts: CostOptions) -> KvDtype:
    return opts.kv_dtype or ("fp16" if opts.dtype == "fp16" else "bf16")


def _plan(
    shape: ModelShape, counts: ParamCount, spec: GpuSpec, opts: CostOptions, sequences: int
) -> ServePlan | None:
    kv_seq = kv_bytes_per_sequence(shape, opts.context, _kv_dtype(opts))
    return plan_serving(
        shape, counts, opts.dtype, kv_seq, sequences, capacity_bytes(spec.memory_gb),
        opts.usable, opts.overhead_gb * GB, opts.prefill_chunk,
    )  # fmt: skip


def _serve(shape: ModelShape, counts: ParamCount, gpu: _Gpu, opts: CostOptions) -> GpuCost:
    spec = gpu.spec
    kv_dtype = _kv_dtype(opts)
    kv_seq = kv_bytes_per_sequence(shape, opts.context, kv_dtype)
    target = opts.concurrency or 1
    notes = list(gpu.notes)
    one = serve_memory(
        shape, counts, opts.dtype, kv_seq, 1, capacity_bytes(spec.memory_gb),
        opts.usable, opts.overhead_gb * GB, opts.prefill_chunk,
    )  # fmt: skip
    plan = _plan(shape, counts, spec, opts, target)
    fields: dict[str, Any] = {
        "gpu": spec.key,
        "name": spec.name,
        "memory_gb": round(capacity_bytes(spec.memory_gb) / GB, 3),
        "fits": one.max_sequences >= target,
        "weights_gb": weight_bytes(counts, opts.dtype) / GB,
        "kv_bytes_per_token": kv_bytes_per_token(shape, kv_dtype),
        "kv_gb_per_sequence": kv_seq / GB,
        "usable_gb_per_gpu": one.usable / GB,
        "efficiency": gpu.efficiency,
        "notes": notes,
    }
    if plan is None:
        notes.append(_never_fits(shape, counts, spec, opts, kv_seq))
        fields |= {"gpus_needed": None, "tp_degree": None, "max_concurrency": 0}
        fields |= {"concurrency": 0, "weights_gb_per_gpu": None, "memory_gb_per_gpu": None}
        return GpuCost.model_validate(fields | _money_fields(gpu, None, opts))
    if not fields["fits"]:
        notes.append(
            f"does not fit on one GPU: weights {one.weights / GB:.1f} GB + {target} × "
            f"{kv_seq / GB:.2f} GB KV + {one.overhead / GB:.1f} GB overhead > "
            f"{one.usable / GB:.1f} GB usable"
        )
    if plan.tp > NODE_GPUS:
        notes.append(
            f"a tensor-parallel group of {plan.tp} is wider than one {NODE_GPUS}-GPU node; "
            "real deployments add pipeline parallelism across nodes"
        )
    if plan.replicas > 1:
        notes.append(f"{plan.replicas} data-parallel replicas of {plan.tp} GPU(s) each")
    if shape.is_mla and plan.tp > 1:
        notes.append(
            "MLA keeps the whole KV latent on every GPU: a wider TP adds room for weights only"
        )
    conc = opts.concurrency or min(plan.max_sequences, opts.max_batch)
    per_replica = math.ceil(conc / plan.replicas)  # the busiest replica sets the pace
    kv_len = opts.input_tokens + opts.output_tokens / 2
    step = decode_step(shape, counts, opts.dtype, kv_dtype, per_replica, kv_len, plan.tp, gpu.hw)
    # conc sequences exist, not replicas × per_replica: count only those.
    modelled = _per_gpu(conc, step.step_s, plan.gpus)
    per_gpu, per_user, source = modelled, step.per_user, "model"
    if spec.key in opts.throughputs:
        per_gpu, source = opts.throughputs[spec.key], "flag"
        per_user = per_gpu * plan.gpus / conc
        notes.append(
            f"throughput {per_gpu:,.0f} tokens/s per GPU from --throughput "
            f"(the roofline gives {modelled:,.0f} at {conc} sequences)"
        )
        if per_gpu > IMPLAUSIBLE * modelled:
            notes.append(
                f"--throughput {spec.key} is {per_gpu / modelled:.0f}× the roofline at this "
                "concurrency: check it is per GPU, output tokens only, at this batch"
            )
    prefill = prefill_tokens_per_s(shape, counts, opts.input_tokens, gpu.hw)
    fields |= {
        "gpus_needed": plan.gpus,
        "tp_degree": plan.tp,
        "replicas": plan.replicas,
        "max_concurrency": plan.max_sequences,
        "concurrency": conc,
        "weights_gb_per_gpu": plan.memory.weights / GB,
        "memory_gb_per_gpu": plan.memory.need(per_replica) / GB,
        "bound": step.bound,
        "decode_tokens_per_s_per_user": per_user,
        "decode_tokens_per_s_per_gpu": per_gpu,
        "prefill_tokens_per_s_per_gpu": prefill,
        "ttft_ms": ttft_s(shape, counts, opts.dtype, opts.input_tokens, plan.tp, gpu.hw) * 1e3,
        "throughput_source": source,
    }
    return GpuCost.model_validate(fields | _money_fields(gpu, (per_gpu, prefill), opts))


def _per_gpu(sequences: int, step_s: float, gpus: int) -> float:
    """Output tokens/s per GPU: every sequence makes one token per step, shared by all GPUs."""
    return sequences / step_s / gpus


def _never_fits(
    shape: ModelShape, counts: ParamCount, spec: GpuSpec, opts: CostOptions, kv_seq: float
) -> str:
    """Why no tensor-parallel degree holds one sequence: the term that overflows, by name.

    Every per-GPU term is smallest at the widest degree (one attention head per GPU), so
    that is where the terms are compared with the usable memory.
    """
    n = tp_degrees(shape)[-1]
    mem = serve_memory(
        shape, counts, opts.dtype, kv_seq, n, capacity_bytes(spec.memory_gb),
        opts.usable, opts.overhead_gb * GB, opts.prefill_chunk,
    )  # fmt: skip
    usable = f"{mem.usable / GB:.1f} GB usable (--usable {opts.usable:g} of {spec.memory_gb:g} GiB)"
    where = f"does not fit even split {n} ways (one attention head per GPU)"
    if mem.overhead >= mem.usable:
        return (
            f"{where}: the runtime reserve and prefill workspace alone take "
            f"{mem.overhead / GB:.1f} GB of the {usable}; lower --overhead-gb or raise --usable"
        )
    if mem.weights + mem.overhead >= mem.usable:
        return (
            f"{where}: weights {mem.weights / GB:.1f} GB + overhead {mem.overhead / GB:.1f} GB "
            f"per GPU exceed the {usable}; a smaller --dtype shrinks the weights"
        )
    fp8 = "" if _kv_dtype(opts) == "fp8" else " or use --kv-dtype fp8"
    return (
        f"{where}: one {opts.context}-token sequence's KV cache needs "
        f"{mem.kv_per_sequence / GB:.2f} GB per GPU, more than the "
        f"{(mem.usable - mem.weights - mem.overhead) / GB:.2f} GB left of the {usable} "
        f"after the weights and overhead; lower --context{fp8}"
    )


def _money_fields(
    gpu: _Gpu, rates: tuple[float, float] | None, opts: CostOptions
) -> dict[str, Any]:
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


def _train(shape: ModelShape, counts: ParamCount, gpu: _Gpu, opts: CostOptions) -> GpuCost:
    spec = gpu.spec
    capacity = capacity_bytes(spec.memory_gb)
    micro = opts.concurrency or 1
    overhead = opts.overhead_gb * GB
    act = training_activations(shape, micro, opts.context)
    plan = plan_training(counts.total, opts.zero, act, capacity, opts.usable, overhead)
    notes = list(gpu.notes)
    kv_dtype = opts.kv_dtype or "bf16"
    fields: dict[str, Any] = {
        "gpu": spec.key,
        "name": spec.name,
        "memory_gb": round(capacity / GB, 3),
        "weights_gb": weight_bytes(counts, "bf16") / GB,
        "kv_bytes_per_token": kv_bytes_per_token(shape, kv_dtype),
        "kv_gb_per_sequence": kv_bytes_per_sequence(shape, opts.context, kv_dtype) / GB,
        "usable_gb_per_gpu": capacity * opts.usable / GB,
        "efficiency": gpu.efficiency,
        "concurrency": micro,
        "price": gpu.price,
    }
    if plan is None:
        notes.append(_training_never_fits(counts, spec, opts, act, capacity))
        fields |= {"fits": False, "gpus_needed": None, "tp_degree": None, "max_concurrency": 0}
        fields |= {"weights_gb_per_gpu": None, "memory_gb_per_gpu": None, "notes": notes}
        return GpuCost.model_validate(fields | _money_fields(gpu, None, opts))
    n, per_gpu_bytes = plan
    states = model_state_bytes(counts.total, opts.zero, n)
    per_seq = training_activations(shape, 1, opts.context)
    max_micro = max(0, int((capacity * opts.usable - overhead - states) // per_seq))
    tps = train_tokens_per_s(shape, counts, opts.context, gpu.hw)
    notes.append(
        f"data-parallel world of {n} GPU(s) with ZeRO-{opts.zero}; the roofline counts "
        "compute only (no gradient all-reduce), so it is an upper bound"
    )
    fields |= _money_fields(gpu, None, opts)
    if gpu.price is not None:
        fields["usd_per_mtok_train"] = usd_per_mtok(gpu.price.usd_per_hour, tps)
    fields |= {
        "fits": n == 1,
        "gpus_needed": n,
        "tp_degree": None,
        "replicas": n,
        "max_concurrency": max_micro,
        "weights_gb_per_gpu": states / GB,
        "memory_gb_per_gpu": per_gpu_bytes / GB,
        "bound": "compute",
        "train_tokens_per_s_per_gpu": tps,
        "joules_per_token": joules_per_token(spec.tdp_w, tps),
        "notes": notes,
    }
    return GpuCost.model_validate(fields)


def _training_never_fits(
    counts: ParamCount, spec: GpuSpec, opts: CostOptions, act: float, capacity: float
) -> str:
    """Why no data-parallel world holds the training state: the term that overflows."""
    usable = capacity * opts.usable
    total = f"{usable / GB:.1f} GB usable (--usable {opts.usable:g} of {spec.memory_gb:g} GiB)"
    overhead = opts.overhead_gb * GB
    where = f"ZeRO-{opts.zero} never fits"
    if overhead >= usable:
        return f"{where}: --overhead-gb {opts.overhead_gb:g} alone exceeds the {total}"
    if overhead + act >= usable:
        return (
            f"{where}: the activations of {opts.concurrency or 1} × {opts.context} tokens "
            f"need {act / GB:.1f} GB, more than the {(usable - overhead) / GB:.1f} GB left of "
            f"the {total}; lower --context or --concurrency"
        )
    unsharded = unsharded_state_bytes(counts.total, opts.zero)
    hint = "; try a higher --zero stage" if opts.zero < 3 else ""
    return (
        f"{where}: the model state ZeRO-{opts.zero} keeps whole on every GPU "
        f"({unsharded / GB:.1f} GB) exceeds the {(usable - overhead - act) / GB:.1f} GB left "
        f"after activations and overhead{hint}"
    )


def _curve(shape: ModelShape, counts: ParamCount, gpu: _Gpu, opts: CostOptions) -> list[CurvePoint]:
    """$/Mtok output at 1, 2, 4, … sequences, each on the fewest GPUs that hold them."""
    kv_len = opts.input_tokens + opts.output_tokens / 2
    top = max(opts.max_batch, opts.concurrency or 0)
    price = gpu.price.usd_per_hour if gpu.price is not None else None
    points: list[CurvePoint] = []
    conc = 1
    while conc <= top:
        plan = _plan(shape, counts, gpu.spec, opts, conc)
        if plan is None:
            break
        batch = math.ceil(conc / plan.replicas)
        step = decode_step(
            shape, counts, opts.dtype, _kv_dtype(opts), batch, kv_len, plan.tp, gpu.hw
        )
        per_gpu = _per_gpu(conc, step.step_s, plan.gpus)
        points.append(
            CurvePoint(
                concurrency=conc,
                gpus=plan.gpus,
                tokens_per_s_per_gpu=per_gpu,
                usd_per_mtok_output=usd_per_mtok(price, per_gpu) if price else None,
            )
        )
        conc *= 2
    return points


def _model_info(shape: ModelShape, counts: ParamCount, model_source: str) -> ModelInfo:
    if shape.is_mla:
        attention: Literal["mha", "gqa", "mqa", "mla"] = "mla"
    elif shape.num_kv_heads == shape.num_heads:
        attention = "mha"
    elif shape.num_kv_heads == 1:
        attention = "mqa"
    else:
        attention = "gqa"
    catalog = isinstance(shape, ModelSpec)
    return ModelInfo(
        key=shape.key,
        name=shape.name,
        origin="catalog" if catalog else "config.json",
        sources=list(shape.sources) if isinstance(shape, ModelSpec) else [model_source],
        params_b=counts.total / 1e9,
        active_params_b=counts.active / 1e9,
        published_params_b=shape.params_b if isinstance(shape, ModelSpec) else None,
        layers=shape.num_layers,
        heads=shape.num_heads,
        kv_heads=shape.num_kv_heads,
        head_dim=(shape.qk_nope_head_dim or 0) + (shape.qk_rope_head_dim or 0)
        if shape.is_mla
        else shape.head_size,
        attention=attention,
        kv_latent=(shape.kv_lora_rank or 0) + (shape.qk_rope_head_dim or 0) or None,
        experts=shape.num_experts,
        experts_per_token=shape.experts_per_token,
        max_context=shape.max_context,
    )
