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
    Efficiency,
    GpuCost,
    ModelInfo,
    PriceUsed,
)
from gpuport.cost.money import (
    catalog_price,
    catalog_purchase,
    joules_per_token,
    usd_per_mtok,
)
from gpuport.cost.options import (
    CostOptions,
    assumptions,
    check_deployment,
    check_options,
    target_of,
)
from gpuport.cost.rates import (
    DEFAULT_COLLECTIVE_US,
    Factors,
    basis,
    busbw_gbs,
    factors,
    rates,
)
from gpuport.cost.serve import Gpu, curve, money_fields, serve
from gpuport.cost.shapes import (
    ParamCount,
    count_params,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    native_fp4,
    weight_bytes,
)
from gpuport.cost.step import Rates
from gpuport.cost.throughput import Hardware, train_tokens_per_s
from gpuport.knowledge.gpus import GpuSpec
from gpuport.knowledge.models import ModelShape, ModelSpec
from gpuport.knowledge.serving import load_serving
from gpuport.models import GpuportError

DEFAULT_ALLTOALL_US = 30.0


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
    if not opts.train:
        check_deployment(shape, opts)
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
    kind = opts.price_kind
    prepared = [_prepare(shape, spec, opts, kind, (runs or {}).get(spec.key)) for spec in gpus]
    basis_text = ""
    if opts.train:
        records = [_train(shape, counts, gpu, opts) for gpu in prepared]
    else:
        conc, basis_text = concurrency_basis(opts)
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
        concurrency_basis=basis_text,
    )


def concurrency_basis(opts: CostOptions) -> tuple[int | None, str]:
    """The load every GPU kind is compared at, and why.

    ``--concurrency N``: N sequences in flight in all, on each kind's throughput-optimal
    deployment. Otherwise every kind is filled to the most sequences its best deployment
    serves within the latency target (by default a mean TPOT of 50 ms): comparing GPUs at
    the same user experience, not at batch sizes that make users wait differently.
    """
    target = target_of(opts)
    if opts.concurrency is not None:
        extra = f", within {_target(opts)}" if target.any else ""
        return opts.concurrency, (
            f"--concurrency {opts.concurrency}: that many sequences in flight on every GPU "
            f"kind, each on its throughput-optimal deployment{extra}"
        )
    if not target.any:
        return None, (
            "no latency target (--max-tpot 0): every GPU kind at its highest throughput, "
            "memory filled; users may wait long"
        )
    flags = {"max_tpot_ms", "max_ttft_ms", "min_user_tok_s"}
    origin = "given" if flags & opts.given else "default"
    return None, (
        f"latency target {_target(opts)} ({origin}): every GPU kind on the deployment that "
        "serves the most tokens per GPU within it, filled to the most sequences it allows"
    )


def _target(opts: CostOptions) -> str:
    return "mean " + target_of(opts).text(joiner=" and mean ", per_user=True)


def _prepare(
    shape: ModelShape, spec: GpuSpec, opts: CostOptions, kind: str, run: BenchRun | None
) -> Gpu:
    weight_dtype = native_fp4(opts.dtype, spec.vendor)
    dtype = eff_mod.compute_dtype(spec, weight_dtype)  # training: bf16 or fp16 (checked)
    efficiency = eff_mod.published(spec, dtype)
    attention = eff_mod.published(spec, "bf16")["compute"]
    notes: list[str] = []
    if run is not None:
        measured, run_notes = eff_mod.measured(run, spec, dtype)
        efficiency |= measured
        notes += run_notes
        attention = eff_mod.measured(run, spec, "bf16")[0].get("compute", attention)
    if not opts.train:
        if opts.dtype == "fp8" and dtype != "fp8":
            notes.append(f"{spec.name} has no fp8 matrix units: fp8 weights run bf16 GEMMs")
        if weight_dtype in ("mxfp4", "nvfp4") and dtype != "fp4":
            notes.append(
                f"{spec.name} has no fp4 matrix units: {weight_dtype} weights are dequantised "
                "and run bf16 GEMMs (they still halve the bytes read)"
            )
    table = load_serving()
    f = factors(table, spec, opts.engine)
    if f.borrowed and not opts.train:
        notes.append(f"serving factors: {f.borrowed}")
    col = table.collective(spec.vendor)
    allreduce = col.latency_us if col is not None else DEFAULT_COLLECTIVE_US
    alltoall = col.alltoall_us if col is not None else DEFAULT_ALLTOALL_US
    serving_rates = rates(spec, dtype, efficiency, attention, f, allreduce, alltoall)
    if not opts.train:  # training is timed by the compute roofline: no serving rates
        efficiency = efficiency | _effective(spec, dtype, serving_rates, f)
    bw = spec.bandwidth_gbs * 1e9 * efficiency["bandwidth"].value
    flops = eff_mod.peak_tflops(spec, dtype) * 1e12 * efficiency["compute"].value
    hw = Hardware(bandwidth=bw, flops=flops, busbw=busbw_gbs(spec) * 1e9,
                  latency_s=allreduce * 1e-6)  # fmt: skip
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
    capacity, cap_basis = capacity_bytes(spec)
    seqs, chunk = vllm_defaults(spec)
    seqs = opts.max_batch or seqs
    chunk = opts.prefill_chunk or chunk
    reserve = (opts.overhead_gb + opts.graphs_gb) * GB + sampler_bytes(shape, seqs)
    return Gpu(
        spec, weight_dtype, dtype, efficiency, serving_rates,
        None if opts.train else basis(table, f, allreduce, alltoall), price, purchase,
        tuple(notes), capacity, cap_basis, seqs, chunk, reserve, hw,
    )  # fmt: skip


def _effective(spec: GpuSpec, dtype: str, r: Rates, f: Factors) -> dict[str, Efficiency]:
    """The serving rates as shares of the datasheet peaks (basis: fitted)."""
    peak = eff_mod.peak_tflops(spec, dtype)
    why = f"fitted factor × hardware figure (serving profile {f.profile})"
    return {
        "decode_bandwidth": Efficiency(
            value=r.bandwidth / (spec.bandwidth_gbs * 1e9), basis="fitted",
            figure=r.bandwidth / 1e9, peak=spec.bandwidth_gbs,
            detail=f"{f.bandwidth:.2f} of the triad: {why}", source="knowledge/serving.toml",
        ),
        "dense_compute": Efficiency(
            value=r.flops / (peak * 1e12), basis="fitted", figure=r.flops / 1e12, peak=peak,
            detail=f"{f.compute:.2f} of the best {dtype} GEMM: {why}",
            source="knowledge/serving.toml",
        ),
        "moe_compute": Efficiency(
            value=r.moe_flops / (peak * 1e12), basis="fitted", figure=r.moe_flops / 1e12,
            peak=peak, detail=f"{f.moe:.2f} of the best {dtype} GEMM: {why}",
            source="knowledge/serving.toml",
        ),
    }  # fmt: skip


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
