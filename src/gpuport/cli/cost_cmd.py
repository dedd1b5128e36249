"""``gpuport cost``: does a model fit, on how many GPUs, how fast, at what $ per million tokens.

Parses flags, reads the catalogs, the optional config.json and bench runs, calls the
pure core (:func:`gpuport.cost.estimate`) and renders. Nothing here reaches the network.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from gpuport.cli.common import emit, err_console, honours_accept_edited, refuse_through_cwd_project
from gpuport.cli.options import AcceptEditedOption, FormatOption, OutputOption
from gpuport.models import EnvFingerprint, GpuportError
from gpuport.render.interface import OutputFormat

DEFAULT_GPUS = ("h100-sxm", "mi300x")
DTYPES = ("bf16", "fp16", "fp8", "int8", "int4", "fp4", "mxfp4", "nvfp4")
ENGINES = ("vllm", "sglang", "trtllm")
KV_DTYPES = ("auto", "bf16", "fp16", "fp8")
PRICE_KINDS = ("on-demand", "spot", "reserved")


@honours_accept_edited
def cost(
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Model from the catalog, e.g. llama-3-70b.")
    ] = None,
    model_config: Annotated[
        Path | None,
        typer.Option("--model-config", help="A Hugging Face config.json on disk (never fetched)."),
    ] = None,
    gpus: Annotated[
        list[str] | None,
        typer.Option("--gpus", "-g", help="GPUs to compare (comma list; default h100-sxm,mi300x)."),
    ] = None,
    dtype: Annotated[
        str | None,
        typer.Option(
            "--dtype",
            help="Weights: bf16, fp16, fp8, int8, int4, fp4 (the GPU's own), mxfp4, nvfp4 (bf16).",
        ),
    ] = None,
    engine: Annotated[
        str | None,
        typer.Option("--engine", help="Serving engine: vllm, sglang, trtllm (vllm)."),
    ] = None,
    tp: Annotated[
        int | None, typer.Option("--tp", help="Tensor-parallel GPUs per replica (planned).")
    ] = None,
    pp: Annotated[int | None, typer.Option("--pp", help="Pipeline stages per replica (1).")] = None,
    dp: Annotated[
        int | None, typer.Option("--dp", help="Data-parallel replicas (planned).")
    ] = None,
    ep: Annotated[
        int | None, typer.Option("--ep", help="Expert-parallel degree of an MoE (1, or TP).")
    ] = None,
    dp_attention: Annotated[
        bool,
        typer.Option("--dp-attention", help="MoE: attention data-parallel, experts over the GPUs."),
    ] = False,
    max_tpot: Annotated[
        float | None,
        typer.Option(
            "--max-tpot", help="Mean ms per output token the plan must keep (50; 0 for none)."
        ),
    ] = None,
    max_ttft: Annotated[
        float | None,
        typer.Option("--max-ttft", help="Mean ms to the first token the plan must keep."),
    ] = None,
    min_user_tok_s: Annotated[
        float | None,
        typer.Option("--min-user-tok-s", help="Tokens/s each user must get (sets --max-tpot)."),
    ] = None,
    kv_dtype: Annotated[
        str | None, typer.Option("--kv-dtype", help="KV cache: auto, bf16, fp16, fp8 (auto).")
    ] = None,
    context: Annotated[
        int | None, typer.Option("--context", help="Tokens each sequence may reach (8192).")
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            help="Sequences in flight on each GPU kind's deployment (default: as many as the "
            "latency target allows).",
        ),
    ] = None,
    max_batch: Annotated[
        int | None,
        typer.Option(
            "--max-batch",
            help="Sequences per replica, vLLM max_num_seqs (vLLM's: 1024 on H100/MI300X-class).",
        ),
    ] = None,
    input_tokens: Annotated[
        int | None, typer.Option("--input-tokens", help="Mean prompt tokens per request (1024).")
    ] = None,
    output_tokens: Annotated[
        int | None,
        typer.Option("--output-tokens", help="Mean generated tokens per request (1024)."),
    ] = None,
    price: Annotated[
        list[str] | None,
        typer.Option("--price", help="GPU=USD per GPU-hour, replacing the catalog (repeatable)."),
    ] = None,
    price_kind: Annotated[
        str | None,
        typer.Option("--price-kind", help="Catalog price: on-demand, spot, reserved (on-demand)."),
    ] = None,
    throughput: Annotated[
        list[str] | None,
        typer.Option(
            "--throughput", help="GPU=TOKENS_PER_S per GPU, measured or quoted (repeatable)."
        ),
    ] = None,
    purchase: Annotated[
        list[str] | None,
        typer.Option("--purchase", help="GPU=USD to buy one, for break-even (repeatable)."),
    ] = None,
    bench: Annotated[
        list[str] | None,
        typer.Option("--bench", help="gpuport bench run (file, id or label): measured efficiency."),
    ] = None,
    history: Annotated[
        Path | None, typer.Option("--history", help="Bench history database for --bench.")
    ] = None,
    utilization: Annotated[
        float | None,
        typer.Option("--utilization", help="Busy fraction of a bought GPU, for break-even (0.6)."),
    ] = None,
    power_cost: Annotated[
        float | None, typer.Option("--power-cost", help="Electricity, USD per kWh (0.10).")
    ] = None,
    usable: Annotated[
        float | None, typer.Option("--usable", help="Usable fraction of GPU memory (0.9).")
    ] = None,
    overhead_gb: Annotated[
        float | None, typer.Option("--overhead-gb", help="Runtime reserve per GPU, GB (1.0).")
    ] = None,
    graphs_gb: Annotated[
        float | None, typer.Option("--graphs-gb", help="CUDA/HIP-graph pool per GPU, GB (1.0).")
    ] = None,
    prefill_chunk: Annotated[
        int | None,
        typer.Option(
            "--prefill-chunk",
            help="Prefill chunk, vLLM max_num_batched_tokens (vLLM's: 8192 on H100/MI300X-class).",
        ),
    ] = None,
    train: Annotated[
        bool, typer.Option("--train", help="Size full training (mixed-precision Adam) instead.")
    ] = False,
    zero: Annotated[
        int | None, typer.Option("--zero", help="With --train: ZeRO stage 0, 1, 2 or 3 (3).")
    ] = None,
    chart: Annotated[
        Path | None,
        typer.Option("--chart", help="Also write $/Mtok against concurrency to FILE.png or .svg."),
    ] = None,
    fmt: FormatOption = OutputFormat.TERMINAL,
    output: OutputOption = None,
    knowledge: Annotated[
        Path | None,
        typer.Option("--knowledge", help="Folder with gpus.toml / models.toml overriding ours."),
    ] = None,
    accept_edited: AcceptEditedOption = False,
) -> None:
    """Does a model fit, on how many GPUs, how fast, and at what $ per million tokens.

    Assumes, unless given: GPUs h100-sxm and mi300x; bf16 weights, KV cache as the weights;
    context 8192 and requests of 1024 + 1024 tokens; vLLM's defaults; the catalog's dated
    on-demand prices; throughput from published efficiency (--bench: measured). Each
    assumption is printed with its origin.
    """
    from gpuport.cost import CostOptions, estimate

    shape, source = _model(model, model_config, knowledge)
    specs = _gpus(gpus, knowledge, default=not bench)
    runs = _runs(bench, history, knowledge, specs)
    flags: dict[str, Any] = {
        "dtype": _choice(dtype, DTYPES, "--dtype"),
        "engine": _choice(engine, ENGINES, "--engine"),
        "tp": tp,
        "pp": pp,
        "dp": dp,
        "ep": ep,
        "dp_attention": dp_attention or None,
        "max_tpot_ms": max_tpot,
        "max_ttft_ms": max_ttft,
        "min_user_tok_s": min_user_tok_s,
        "kv_dtype": _kv(kv_dtype),
        "context": context,
        "concurrency": concurrency,
        "max_batch": max_batch,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "price_kind": _choice(price_kind, PRICE_KINDS, "--price-kind"),
        "prices": _pairs(price, "--price", knowledge) or None,
        "throughputs": _pairs(throughput, "--throughput", knowledge) or None,
        "purchases": _pairs(purchase, "--purchase", knowledge) or None,
        "utilization": utilization,
        "power_cost": power_cost,
        "usable": usable,
        "overhead_gb": overhead_gb,
        "graphs_gb": graphs_gb,
        "prefill_chunk": prefill_chunk,
        "zero": zero,
    }
    given = {k: v for k, v in flags.items() if v is not None}
    if zero is not None and not train:
        raise GpuportError("--zero applies to training: add --train")
    opts = CostOptions(**given, train=train, given=frozenset(given))
    report = estimate(shape, specs, opts, runs, model_source=source)
    report = report.model_copy(update={"env": EnvFingerprint.collect()})
    _deliver(report, fmt, output, chart)


def _model(name: str | None, config: Path | None, knowledge: Path | None) -> tuple[Any, str]:
    from gpuport.knowledge.models import resolve_model, shape_from_hf_config

    if name and config:
        raise GpuportError("give --model or --model-config, not both")
    if config is not None:
        return shape_from_hf_config(config), str(config)
    if not name:
        raise GpuportError(
            "give --model NAME (e.g. llama-3-70b) or --model-config path/to/config.json"
        )
    return resolve_model(name, knowledge), ""


def _gpus(values: list[str] | None, knowledge: Path | None, default: bool) -> list[Any]:
    from gpuport.knowledge.gpus import resolve_gpu

    names = [p.strip() for v in values or [] for p in v.split(",") if p.strip()]
    if values is not None and not names:
        raise GpuportError(f"--gpus {','.join(values)!r} names no GPU; e.g. --gpus h100,mi300x")
    if not names and default:
        names = list(DEFAULT_GPUS)
    out: dict[str, Any] = {}
    for name in names:
        spec = resolve_gpu(name, knowledge)
        out.setdefault(spec.key, spec)
    return list(out.values())


def _runs(
    refs: list[str] | None, history: Path | None, knowledge: Path | None, specs: list[Any]
) -> dict[str, Any]:
    """Bench runs by the GPU they measured; a GPU not in --gpus is added to the list."""
    if not refs:
        return {}
    from gpuport.bench.history import History, resolve_run
    from gpuport.cost.efficiency import gpu_of_run
    from gpuport.knowledge.gpus import load_gpus

    catalog = load_gpus(knowledge)
    runs: dict[str, Any] = {}
    for ref in refs:
        run = resolve_run(ref, History(history))
        spec = gpu_of_run(run, catalog, knowledge)
        if spec.key in runs:
            raise GpuportError(f"--bench {ref}: a second run for {spec.key}; give one run per GPU")
        runs[spec.key] = run
        if all(s.key != spec.key for s in specs):
            specs.append(spec)
    return runs


def _choice(value: str | None, allowed: tuple[str, ...], flag: str) -> str | None:
    if value is None:
        return None
    low = value.strip().lower()
    if low not in allowed:
        raise GpuportError(f"unknown {flag} {value!r}; choose one of: {', '.join(allowed)}")
    return low


def _kv(value: str | None) -> str | None:
    choice = _choice(value, KV_DTYPES, "--kv-dtype")
    return None if choice == "auto" else choice


def _pairs(values: list[str] | None, flag: str, knowledge: Path | None) -> dict[str, float]:
    """``GPU=NUMBER`` items (repeatable or comma-separated), keyed by catalog key."""
    from gpuport.knowledge.gpus import resolve_gpu

    out: dict[str, float] = {}
    for value in values or []:
        for item in (p.strip() for p in value.split(",")):
            if not item:
                continue
            name, sep, number = item.partition("=")
            if not sep or not name.strip():
                raise GpuportError(f"{flag} {item!r}: expected GPU=NUMBER, e.g. h100-sxm=2.90")
            try:
                parsed = float(number.strip().lstrip("$").replace("_", ""))
            except ValueError:
                raise GpuportError(f"{flag} {item!r}: {number!r} is not a number") from None
            if not math.isfinite(parsed) or parsed <= 0:
                raise GpuportError(f"{flag} {item!r}: the value must be a positive number")
            key = resolve_gpu(name.strip(), knowledge).key
            if key in out:
                # The second value would silently replace the first: say which GPU it is.
                raise GpuportError(
                    f"{flag} {item!r}: {key} already has a value ({out[key]:g}); give one per GPU"
                )
            out[key] = parsed
    return out


def _deliver(report: Any, fmt: OutputFormat, output: Path | None, chart: Path | None) -> None:
    from gpuport.render import cost_render
    from gpuport.render.text import clean

    def text() -> str:
        if fmt is OutputFormat.JSON:
            return str(report.model_dump_json(indent=2)) + "\n"
        return cost_render.render_markdown(report)

    def terminal(console: Console) -> None:
        cost_render.render_terminal(report, console)

    if chart is not None:
        refuse_through_cwd_project(chart, "--chart")
        cost_render.write_chart(report, chart)
    emit(fmt, output, text=text, terminal=terminal)
    summary = f"gpuport cost: {report.model.name} on {len(report.records)} GPU kind(s)"
    summary += cost_render.cheapest_phrase(report)
    if chart is not None:
        summary += f"; chart {chart}"
    # A model name comes from a config.json: no Rich markup, no control characters.
    err_console.print(clean(summary), markup=False, highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("cost")(cost)
