"""The step model and the money formulas, against numbers worked by hand."""

from __future__ import annotations

import dataclasses
import datetime as dt
import math

import pytest

from gpuport.cost import CostOptions, estimate
from gpuport.cost.money import (
    breakeven_days,
    breakeven_hours,
    catalog_price,
    energy_usd_per_mtok,
    joules_per_token,
)
from gpuport.cost.plan import Fixed, Limits, Target, plan
from gpuport.cost.shapes import UNQUANTISED_BYTES, count_params, kv_bytes_per_token
from gpuport.cost.step import Deployment, Model, Rates, Workload, steady_state, step_time
from gpuport.knowledge.gpus import GpuSpec, Price, resolve_gpu
from gpuport.knowledge.models import resolve_model

# Round numbers: 3 TB/s, 1 PFLOP/s, no fixed costs.
BARE = Rates(bandwidth=3e12, flops=1e15, moe_flops=1e15, attn_flops=1e15, layer_s=0.0,
             busbw=400e9, collective_s=0.0, alltoall_s=0.0)  # fmt: skip


def _model(key: str, dtype: str = "bf16") -> Model:
    shape = resolve_model(key)
    return Model(shape, count_params(shape), dtype, "bf16")  # type: ignore[arg-type]


def _weights_read(m: Model) -> float:
    """Bytes a dense model's decode step reads: every linear weight and the LM head."""
    c = m.counts
    return (c.attention + c.dense_mlp) * 2.0 + (c.lm_head + c.embedding_read) * UNQUANTISED_BYTES


def test_single_stream_decode_reads_the_weights_once_per_token() -> None:
    """Llama 3 8B bf16, one sequence: a step is the weights and its KV over the bandwidth."""
    m = _model("llama-3-8b")
    step = step_time(m, Deployment(), BARE, decode=1, prefill=0, kv_len=1000, prompt=0)
    kv = 1000 * kv_bytes_per_token(m.shape, "bf16")
    assert step.linear == pytest.approx(_weights_read(m) / 3e12)
    assert step.attention == pytest.approx(kv / 3e12)
    assert step.bound == "memory" and step.comm == 0 and step.overhead == 0
    # ~15 GB at 3 TB/s: about 200 tokens/s for one user, the roofline everyone quotes.
    assert 1 / step.total == pytest.approx(197, rel=0.03)


def test_a_big_batch_is_compute_bound_at_two_flops_per_parameter() -> None:
    m = _model("llama-3-8b")
    step = step_time(m, Deployment(), BARE, decode=0, prefill=8192, kv_len=0, prompt=8192)
    c = m.counts
    dense = 2 * 8192 * (c.attention + c.dense_mlp + c.lm_head)
    assert step.linear == pytest.approx(dense / 1e15)
    assert step.bound == "compute"


def test_fixed_costs_per_layer_and_per_collective() -> None:
    m = _model("llama-3-70b")
    rates = dataclasses.replace(BARE, layer_s=20e-6, collective_s=10e-6)
    one = step_time(m, Deployment(tp=1), rates, 8, 0, 1000, 0)
    two = step_time(m, Deployment(tp=2), rates, 8, 0, 1000, 0)
    assert one.overhead == pytest.approx(80 * 20e-6) and one.comm == 0
    size = 8 * 8192 * 2
    assert two.comm == pytest.approx(2 * 80 * (10e-6 + 2 * 1 / 2 * size / 400e9))


def test_pipeline_stages_repeat_the_step() -> None:
    m = _model("llama-3-70b")
    rates = dataclasses.replace(BARE, layer_s=20e-6)
    step = step_time(m, Deployment(tp=1, pp=2), rates, 8, 0, 1000, 0)
    assert step.pipeline == 2 and step.overhead == pytest.approx(40 * 20e-6)
    assert step.total == pytest.approx(2 * (step.linear + step.attention + step.overhead))


def test_an_moe_step_reads_only_the_experts_its_tokens_reach() -> None:
    m = _model("mixtral-8x7b")
    c = m.counts
    one = step_time(m, Deployment(), BARE, decode=1, prefill=0, kv_len=0, prompt=0)
    # One token reaches 2 of 8 experts in each of the 32 layers.
    assert one.moe == pytest.approx(2 * c.expert_size * 32 * 2.0 / 3e12)
    chunk = step_time(m, Deployment(), BARE, decode=1, prefill=2048, kv_len=0, prompt=2048)
    assert chunk.moe >= 8 * c.expert_size * 32 * 2.0 / 3e12 * 0.99  # every expert


def test_expert_parallel_adds_all_to_alls() -> None:
    m = _model("mixtral-8x7b")
    rates = dataclasses.replace(BARE, collective_s=10e-6, alltoall_s=30e-6)
    tp = step_time(m, Deployment(tp=2), rates, 4, 0, 0, 0)
    ep = step_time(m, Deployment(tp=2, ep=2), rates, 4, 0, 0, 0)
    # Every layer is MoE: one attention all-reduce and two all-to-alls instead of two all-reduces.
    assert ep.comm > tp.comm
    assert ep.comm == pytest.approx(32 * (tp.comm / 64 + 2 * (30e-6 + 4 * 4096 * 2 * 2 / 2
                                                              / 400e9)))  # fmt: skip


def test_prefill_is_charged_and_long_prompts_cost_output_speed() -> None:
    """Same concurrency, longer prompts: fewer output tokens/s (the roofline ignored this)."""
    m = _model("llama-3-70b", "fp8")
    short = steady_state(m, Deployment(tp=1), BARE, Workload(128, 1024), 32, 8192)
    long = steady_state(m, Deployment(tp=1), BARE, Workload(8192, 1024), 32, 8192)
    assert long.tokens_per_s < 0.8 * short.tokens_per_s
    # Steps carrying a prompt chunk are slower; 8 prompt tokens per decode step on 32
    # sequences with 8192-token prompts means one step in 32 carries a chunk.
    assert long.mixed_step.total > 2 * long.decode_step.total
    assert long.mixed_share == pytest.approx(32 * 8192 / (1024 + long.ttft_s / long.tpot_s)
                                             / 8192, rel=1e-3)  # fmt: skip


def test_the_closed_loop_relation() -> None:
    m = _model("llama-3-8b")
    s = steady_state(m, Deployment(), BARE, Workload(1000, 500), 16, 8192)
    assert s.tokens_per_s == pytest.approx(16 * 500 / (s.ttft_s + 500 * s.tpot_s))
    assert s.per_user == pytest.approx(1 / s.tpot_s)
    assert s.tpot_s >= s.decode_step.total


def _limits(gpu: GpuSpec) -> Limits:
    return Limits(capacity=float(gpu.memory_bytes or 0), usable=0.9, reserve=4e9, chunk=8192,
                  max_seqs=1024)  # fmt: skip


def test_a_latency_target_caps_the_batch_and_costs_throughput() -> None:
    m = _model("llama-3-70b", "fp8")
    lim = _limits(resolve_gpu("h100-sxm"))
    rates = dataclasses.replace(BARE, layer_s=15e-6, collective_s=10e-6)
    free = plan(m, rates, Workload(1024, 1024), lim, Target(), Fixed(tp=2), None)
    tight = plan(m, rates, Workload(1024, 1024), lim, Target(tpot_s=0.03), Fixed(tp=2), None)
    assert free is not None and tight is not None and tight.meets
    assert tight.steady.tpot_s <= 0.03 + 1e-9
    assert tight.per_replica < free.per_replica and tight.per_gpu < free.per_gpu
    # Without a target the replica is filled to its memory.
    assert free.per_replica == free.cap


def test_the_planner_honours_a_fixed_deployment() -> None:
    m = _model("llama-3-70b", "fp8")
    lim = _limits(resolve_gpu("h100-sxm"))
    p = plan(m, BARE, Workload(1024, 1024), lim, Target(), Fixed(tp=8, dp=2), 64)
    assert p is not None and (p.dep.tp, p.replicas, p.per_replica) == (8, 2, 32)


def test_replicas_count_only_the_sequences_that_exist() -> None:
    """100 sequences of Llama 3 8B on H100s capped at 64 per replica: 50 + 50 on two GPUs."""
    shape, h100 = resolve_model("llama-3-8b"), resolve_gpu("h100")
    (rec,) = estimate(shape, [h100], CostOptions(concurrency=100, max_batch=64)).records
    assert (rec.replicas, rec.tp_degree, rec.concurrency, rec.gpus_needed) == (2, 1, 100, 2)
    assert rec.decode_tokens_per_s_per_gpu is not None and rec.tpot_ms is not None
    # Output tokens/s of the deployment are the sequences over each one's request cycle.
    ttft = rec.ttft_ms / 1e3  # type: ignore[operator]
    cycle = ttft + 1024 * rec.tpot_ms / 1e3
    assert rec.decode_tokens_per_s_per_gpu * 2 == pytest.approx(100 * 1024 / cycle, rel=1e-6)


def test_energy_and_breakeven_by_hand() -> None:
    assert joules_per_token(700, 1000) == pytest.approx(0.7)
    # 700 W at $0.10/kWh is $0.07/h; over 1000 tok/s × 3600 s = 3.6 Mtok → $0.0194/Mtok.
    assert energy_usd_per_mtok(700, 1000, 0.10) == pytest.approx(0.07 / 3.6)
    # $30,000 against $2.95/h rent, 700 W at $0.10: 30000 / 2.88 = 10,417 hours.
    hours = breakeven_hours(30_000, 2.95, 700, 0.10)
    assert hours == pytest.approx(10_416.7, abs=0.1)
    assert breakeven_days(hours, 0.6) == pytest.approx(hours / 14.4)
    assert breakeven_hours(1000, 0.05, 700, 0.10) is None  # rent cheaper than the power


def _gpu_with(prices: list[Price]) -> GpuSpec:
    return resolve_gpu("h100-sxm").model_copy(update={"prices": prices})


def _price(kind: str, usd: float, date: dt.date, provider: str = "") -> Price:
    return Price.model_validate(
        {"kind": kind, "usd": usd, "provider": provider or f"p{usd}", "date": date,
         "source": "https://x.example"}
    )  # fmt: skip


def test_a_catalog_price_is_the_median_of_the_kinds_recent_quotes() -> None:
    may = dt.date(2026, 5, 1)
    gpu = _gpu_with([
        _price("on-demand", 3.0, may), _price("on-demand", 2.5, may.replace(day=9)),
        _price("on-demand", 2.7, may.replace(day=9)), _price("spot", 1.0, may.replace(day=20)),
        _price("on-demand", 9.0, dt.date(2024, 2, 1)),  # more than a year older: not counted
    ])  # fmt: skip
    price, note = catalog_price(gpu, "on-demand")
    assert price is not None and note is None
    assert price.usd_per_hour == 2.7 and price.kind == "on-demand"
    assert price.date == may.replace(day=9) and len(price.quotes) == 3
    assert "median of 3" in price.provider and all("$" in q for q in price.quotes)
    even = _gpu_with([_price("on-demand", 2.0, may), _price("on-demand", 3.0, may)])
    assert catalog_price(even, "on-demand")[0].usd_per_hour == 2.5  # type: ignore[union-attr]


def test_a_missing_kind_falls_back_labelled_and_never_switches_the_report() -> None:
    gpu = _gpu_with([_price("spot", 1.0, dt.date(2026, 5, 20))])
    price, note = catalog_price(gpu, "reserved")
    assert price is not None and price.kind == "spot" and note and "reserved" in note
    assert catalog_price(_gpu_with([]), "on-demand") == (None, None)


def test_report_uses_catalog_prices_with_their_sources() -> None:
    (rec,) = estimate(resolve_model("llama-3-8b"), [resolve_gpu("mi300x")], CostOptions()).records
    assert rec.price is not None and rec.price.origin == "catalog"
    assert rec.price.kind == "on-demand" and rec.price.source.startswith("https://")
    assert rec.price.date is not None and rec.usd_per_hour == rec.price.usd_per_hour
    assert rec.price.quotes
    assert rec.usd_per_mtok_output == pytest.approx(
        rec.usd_per_hour / (rec.decode_tokens_per_s_per_gpu * 3600) * 1e6  # type: ignore[operator]
    )
    assert rec.purchase_usd is not None and rec.breakeven_hours is not None


def test_a_gpu_without_prices_still_sizes() -> None:
    (rec,) = estimate(resolve_model("llama-3-8b"), [resolve_gpu("mi250x")], CostOptions()).records
    assert rec.fits and rec.usd_per_hour is None and rec.usd_per_mtok_output is None
    assert any("--price mi250x=USD" in n for n in rec.notes)


def test_chart_points_are_planned_like_the_table() -> None:
    shape, h100 = resolve_model("llama-3-8b"), resolve_gpu("h100")
    report = estimate(shape, [h100], CostOptions(max_tpot_ms=0))
    point = next(p for p in report.curves["h100-sxm"] if p.concurrency == 128)
    (rec,) = estimate(shape, [h100], CostOptions(concurrency=128)).records
    assert point.gpus == rec.gpus_needed
    assert point.tokens_per_s_per_gpu == pytest.approx(rec.decode_tokens_per_s_per_gpu)
    assert math.isfinite(point.usd_per_mtok_output or 0)
