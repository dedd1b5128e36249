"""The roofline and the money formulas, against numbers worked by hand."""

from __future__ import annotations

import datetime as dt

import pytest

from gpuport.cost import CostOptions, estimate
from gpuport.cost.money import (
    breakeven_days,
    breakeven_hours,
    catalog_price,
    energy_usd_per_mtok,
    joules_per_token,
)
from gpuport.cost.shapes import count_params, decode_weight_bytes, prefill_flops
from gpuport.cost.throughput import Hardware, allreduce_s, decode_step, ttft_s
from gpuport.knowledge.gpus import GpuSpec, Price, resolve_gpu
from gpuport.knowledge.models import resolve_model

H100_SPEC = Hardware(bandwidth=3.35e12, flops=989.4e12, busbw=370e9, latency_s=10e-6)


def test_single_stream_decode_is_bandwidth_over_weights() -> None:
    """Research notes §3.3.5: Llama 3 8B bf16 at batch 1 ≈ BW/W (209 tok/s at H100 spec)."""
    shape = resolve_model("llama-3-8b")
    counts = count_params(shape)
    step = decode_step(shape, counts, "bf16", "bf16", 1, 1, 1, H100_SPEC)
    by_hand = 3.35e12 / (decode_weight_bytes(counts, "bf16", 1) + 131_072)
    assert step.per_user == pytest.approx(by_hand) and step.bound == "memory"
    # The notes divide by all 16.1 GB; we skip the 1.05 GB embedding lookup: within 8 %.
    assert step.per_user == pytest.approx(209, rel=0.08)


def test_batch_grows_aggregate_and_shrinks_per_user() -> None:
    shape = resolve_model("llama-3-8b")
    counts = count_params(shape)
    one = decode_step(shape, counts, "bf16", "bf16", 1, 2048, 1, H100_SPEC)
    many = decode_step(shape, counts, "bf16", "bf16", 64, 2048, 1, H100_SPEC)
    assert many.per_gpu > 20 * one.per_gpu and many.per_user < one.per_user
    kv = 64 * 2048 * 131_072
    by_hand = 64 / ((decode_weight_bytes(counts, "bf16", 64) + kv) / 3.35e12)
    assert many.per_gpu == pytest.approx(by_hand)


def test_tensor_parallel_adds_two_allreduces_per_layer() -> None:
    shape = resolve_model("llama-3-70b")
    assert allreduce_s(shape, 4, 1, H100_SPEC) == 0
    size = 4 * 8192 * 2
    assert allreduce_s(shape, 4, 2, H100_SPEC) == pytest.approx(
        2 * 80 * (10e-6 + 2 * 1 / 2 * size / 370e9)
    )


def test_ttft_is_compute_bound_for_a_long_prompt() -> None:
    shape = resolve_model("llama-3-70b")
    counts = count_params(shape)
    flops = prefill_flops(shape, counts, 1024)
    assert flops == pytest.approx(2 * counts.active * 1024 + 80 * 64 * 256 * 1024**2)
    assert ttft_s(shape, counts, "bf16", 1024, 1, H100_SPEC) == pytest.approx(flops / 989.4e12)


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
    base = resolve_gpu("h100-sxm")
    return base.model_copy(update={"prices": prices})


def _price(kind: str, usd: float, day: int) -> Price:
    return Price.model_validate(
        {"kind": kind, "usd": usd, "provider": f"p{usd}", "date": dt.date(2026, 5, day),
         "source": "https://x.example"}
    )  # fmt: skip


def test_catalog_price_is_the_newest_of_the_kind_first_listed_on_a_tie() -> None:
    gpu = _gpu_with([_price("on-demand", 3.0, 1), _price("on-demand", 2.5, 9),
                     _price("on-demand", 2.7, 9), _price("spot", 1.0, 20)])  # fmt: skip
    price, note = catalog_price(gpu, "on-demand")
    assert price is not None and price.usd_per_hour == 2.5 and note is None
    price, note = catalog_price(gpu, "reserved")
    assert price is not None and price.kind == "on-demand" and note and "reserved" in note
    assert catalog_price(_gpu_with([]), "on-demand") == (None, None)


def test_report_uses_catalog_prices_with_their_sources() -> None:
    (rec,) = estimate(resolve_model("llama-3-8b"), [resolve_gpu("mi300x")], CostOptions()).records
    assert rec.price is not None and rec.price.origin == "catalog"
    assert rec.price.kind == "on-demand" and rec.price.source.startswith("https://")
    assert rec.price.date is not None and rec.usd_per_hour == rec.price.usd_per_hour
    assert rec.usd_per_mtok_output == pytest.approx(
        rec.usd_per_hour / (rec.decode_tokens_per_s_per_gpu * 3600) * 1e6  # type: ignore[operator]
    )
    assert rec.purchase_usd is not None and rec.breakeven_hours is not None


def test_a_gpu_without_prices_still_sizes() -> None:
    (rec,) = estimate(resolve_model("llama-3-8b"), [resolve_gpu("mi250x")], CostOptions()).records
    assert rec.fits and rec.usd_per_hour is None and rec.usd_per_mtok_output is None
    assert any("--price mi250x=USD" in n for n in rec.notes)


def test_replicas_count_only_the_sequences_that_exist() -> None:
    """128 sequences on three H100 replicas: 43 + 43 + 42, not 3 × 43 = 129."""
    shape, h100 = resolve_model("llama-3-8b"), resolve_gpu("h100")
    (rec,) = estimate(shape, [h100], CostOptions(concurrency=128)).records
    assert (rec.replicas, rec.tp_degree, rec.concurrency) == (3, 1, 128)
    per_gpu, per_user = rec.decode_tokens_per_s_per_gpu, rec.decode_tokens_per_s_per_user
    assert per_gpu is not None and per_user is not None and rec.gpus_needed == 3
    # Every sequence makes one token per step of the busiest (43-sequence) replica.
    assert per_gpu * rec.gpus_needed == pytest.approx(128 * per_user)


def test_chart_points_count_only_the_sequences_that_exist() -> None:
    shape, h100 = resolve_model("llama-3-8b"), resolve_gpu("h100")
    report = estimate(shape, [h100], CostOptions())
    point = next(p for p in report.curves["h100-sxm"] if p.concurrency == 128)
    assert point.gpus == 3  # 128 over three replicas does not divide evenly
    (rec,) = estimate(shape, [h100], CostOptions(concurrency=128)).records
    assert rec.decode_tokens_per_s_per_user is not None
    assert point.tokens_per_s_per_gpu == pytest.approx(rec.decode_tokens_per_s_per_gpu)
    assert point.tokens_per_s_per_gpu * 3 == pytest.approx(128 * rec.decode_tokens_per_s_per_user)
