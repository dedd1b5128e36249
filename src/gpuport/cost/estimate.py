"""``estimate``: one model, some GPUs, a workload → a :class:`CostReport`.

Pure: shapes, catalog entries, options and bench runs in; a model out. The CLI does
the reading (catalogs, config.json, run files) and the writing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from gpuport.bench.model import BenchRun
from gpuport.cost import efficiency as eff_mod
from gpuport.cost.memory import (
    GB,
    capacity_bytes,
    model_state_bytes,
    plan_training,
    sampler_bytes,
    training_activations,
    unsharded_state_bytes,
    vllm_defaults,
)
from gpuport.cost.model import (
    CostReport,
    CurvePoint,
    GpuCost,
    ModelInfo,
    PriceUsed,
)
from gpuport.cost.money import (
    RENT_KINDS,
    catalog_price,
    catalog_purchase,
    joules_per_token,
    usd_per_mtok,
)
from gpuport.cost.options import MIN_BATCH, CostOptions, assumptions, check_options
from gpuport.cost.serve import Gpu, curve, money_fields, own_maximum, serve
from gpuport.cost.shapes import (
    ParamCount,
    count_params,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    weight_bytes,
)
from gpuport.cost.throughput import Hardware, train_tokens_per_s
from gpuport.knowledge.gpus import GpuSpec
from gpuport.knowledge.models import ModelShape, ModelSpec
from gpuport.models import GpuportError

PCIE_BUSBW_GBS = 25.0  # practical all-reduce bus bandwidth over PCIe Gen4/5 x16
LINK_EFFICIENCY = 0.8  # busbw / link rate where the catalog has no measured all-reduce


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
    kind, kind_note = common_price_kind(gpus, opts)
    if kind_note:
        notes.append(kind_note)
    prepared = [_prepare(shape, spec, opts, kind, (runs or {}).get(spec.key)) for spec in gpus]
    basis = ""
    if opts.train:
        records = [_train(shape, counts, gpu, opts) for gpu in prepared]
    else:
        conc, basis = common_concurrency(shape, counts, prepared, opts)
        for gpu in prepared:
            records.append(serve(shape, counts, gpu, opts, conc))
            curves[gpu.spec.key] = curve(shape, counts, gpu, opts)
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
        price_kind=kind,
        concurrency_basis=basis,
    )


def common_concurrency(
    shape: ModelShape, counts: ParamCount, gpus: Sequence[Gpu], opts: CostOptions
) -> tuple[int, str]:
    """The one concurrency every GPU kind is compared at, and why.

    ``--concurrency`` when given. Otherwise the largest every GPU kind holds on its
    default deployment (the fewest GPUs holding MIN_BATCH sequences, up to vLLM's
    max_num_seqs): comparing 1 sequence on one GPU with 41 on another compares batch
    sizes, not GPUs. Each GPU's own maximum is reported beside it.
    """
    if opts.concurrency is not None:
        return opts.concurrency, f"--concurrency {opts.concurrency} on every GPU"
    held: dict[str, int] = {}
    for gpu in gpus:
        own = own_maximum(shape, counts, gpu, opts)
        if own is not None:
            held[gpu.spec.key] = own.max_sequences
    if not held:
        return 1, "no GPU holds one sequence"
    conc = min(held.values())
    if len(gpus) == 1:
        return conc, f"as many as fit ({conc}, on the fewest GPUs holding {MIN_BATCH}+)"
    limit = min(held, key=lambda k: held[k])
    return conc, (
        f"equal concurrency {conc}: the most {limit} holds on its default deployment "
        f"(fewest GPUs holding {MIN_BATCH}+ sequences); each GPU's own maximum is shown beside"
    )


def common_price_kind(gpus: Sequence[GpuSpec], opts: CostOptions) -> tuple[str, str | None]:
    """One catalog price kind for every GPU priced from the catalog, and a note if moved.

    With ``--price-kind`` given, that kind (GPUs without it fall back, labelled per GPU).
    Otherwise on-demand, unless some GPU lacks it while another kind covers every GPU:
    then that kind, so a 3-year reserved figure is never set against on-demand medians.
    """
    want = opts.price_kind
    catalog = [g for g in gpus if g.key not in opts.prices]
    if "price_kind" in opts.given or not catalog:
        return want, None

    def has(gpu: GpuSpec, kind: str) -> bool:
        return any(p.kind == kind for p in gpu.prices)

    if all(has(g, want) for g in catalog if any(p.kind in RENT_KINDS for p in g.prices)):
        return want, None
    for kind in RENT_KINDS:
        priced = [g for g in catalog if any(p.kind in RENT_KINDS for p in g.prices)]
        if priced and all(has(g, kind) for g in priced):
            missing = ", ".join(g.key for g in priced if not has(g, want))
            return kind, (
                f"every GPU priced at its catalog {kind} price: {missing} has no {want} "
                "price, and mixing price kinds would compare unlike offers"
            )
    return want, None


def _prepare(
    shape: ModelShape, spec: GpuSpec, opts: CostOptions, kind: str, run: BenchRun | None
) -> Gpu:
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
        price, note = catalog_price(spec, kind)
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
    capacity, basis = capacity_bytes(spec)
    seqs, chunk = vllm_defaults(spec)
    seqs = opts.max_batch or seqs
    chunk = opts.prefill_chunk or chunk
    reserve = (opts.overhead_gb + opts.graphs_gb) * GB + sampler_bytes(shape, seqs)
    return Gpu(
        spec, dtype, efficiency, hw, price, purchase, tuple(notes), capacity, basis, seqs,
        chunk, reserve,
    )  # fmt: skip


def _train(shape: ModelShape, counts: ParamCount, gpu: Gpu, opts: CostOptions) -> GpuCost:
    spec = gpu.spec
    capacity = gpu.capacity
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
        return GpuCost.model_validate(fields | money_fields(gpu, None, opts))
    n, per_gpu_bytes = plan
    states = model_state_bytes(counts.total, opts.zero, n)
    per_seq = training_activations(shape, 1, opts.context)
    max_micro = max(0, int((capacity * opts.usable - overhead - states) // per_seq))
    tps = train_tokens_per_s(shape, counts, opts.context, gpu.hw)
    notes.append(
        f"data-parallel world of {n} GPU(s) with ZeRO-{opts.zero}; the roofline counts "
        "compute only (no gradient all-reduce), so it is an upper bound"
    )
    fields |= money_fields(gpu, None, opts)
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
    total = f"{usable / GB:.1f} GB usable (--usable {opts.usable:g} of {capacity / GB:.1f} GB)"
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
