"""The seeds' hand arithmetic, reproduced: fit, $/Mtok, KV bytes, $/GB, break-even."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuport.cost import CostOptions, estimate
from gpuport.cost.money import breakeven_hours, usd_per_gb_hour, usd_per_mtok
from gpuport.cost.shapes import count_params, kv_bytes_per_token, weight_bytes
from gpuport.knowledge.gpus import resolve_gpu
from gpuport.knowledge.models import resolve_model
from tests.cost.helpers import exact, exact_knowledge, run_cost


def test_llama3_70b_fp16_fits_one_mi300x_but_needs_two_h100s() -> None:
    """Seeds 000/001/002/004: 141 GB of weights fit a 192 GB MI300X, not an 80 GB H100.

    One full 8192-token sequence, 90 % of the exact device memory usable, and vLLM's
    reserve per GPU (1 GB runtime, 1 GB graphs, an 8192-token prefill chunk, the sampler).
    """
    model = resolve_model("llama-3-70b")
    report = estimate(
        model, [exact("h100-sxm"), exact("mi300x")], CostOptions(dtype="fp16", concurrency=1)
    )
    h100, mi300x = report.records
    assert h100.weights_gb == pytest.approx(141.1, abs=0.05)
    assert mi300x.fits and mi300x.gpus_needed == 1 and mi300x.tp_degree == 1
    assert not h100.fits and h100.gpus_needed == 2 and h100.tp_degree == 2
    assert h100.replicas == 1
    # Seed 004: "avoids ... splitting it across two 80 GB H100s"; memory per GPU within 90 %.
    assert h100.memory_gb_per_gpu is not None
    assert h100.memory_gb_per_gpu <= h100.usable_gb_per_gpu
    assert any("does not fit on one GPU" in n for n in h100.notes)


def test_the_same_fit_through_the_cli(tmp_path: Path) -> None:
    kb = exact_knowledge(tmp_path / "kb")
    res = run_cost("--model", "llama-3-70b", "--gpus", "h100-sxm,mi300x", "--dtype", "fp16",
                   "--concurrency", "1", "--knowledge", str(kb), "--format", "json")  # fmt: skip
    assert res.code == 0, res.err
    records = {r["gpu"]: r for r in json.loads(res.out)["records"]}
    assert records["mi300x"]["fits"] is True and records["mi300x"]["gpus_needed"] == 1
    assert records["h100-sxm"]["fits"] is False and records["h100-sxm"]["gpus_needed"] == 2


def test_dollars_per_million_tokens_by_hand() -> None:
    """Seed 002: $2.90/h at 19,500 tok/s → $0.041; $1.75/h at 18,000 tok/s → $0.027."""
    by_hand = 2.90 / (19500 * 3600) * 1e6
    assert by_hand == pytest.approx(0.0413, abs=5e-5)
    assert usd_per_mtok(2.90, 19500) == pytest.approx(0.0413, abs=5e-5)
    assert usd_per_mtok(1.75, 18000) == pytest.approx(0.0270, abs=5e-5)


def test_dollars_per_million_tokens_through_the_cli() -> None:
    res = run_cost(
        "--model", "llama-3-70b", "--gpus", "h100-sxm,mi300x", "--dtype", "fp16",
        "--price", "h100-sxm=2.90", "--price", "mi300x=1.75",
        "--throughput", "h100=19500,mi300x=18000", "--format", "json",
    )  # fmt: skip
    assert res.code == 0, res.err
    report = json.loads(res.out)
    records = {r["gpu"]: r for r in report["records"]}
    h100, mi300x = records["h100-sxm"], records["mi300x"]
    assert round(h100["usd_per_mtok_output"], 3) == 0.041
    assert round(mi300x["usd_per_mtok_output"], 3) == 0.027
    assert h100["throughput_source"] == mi300x["throughput_source"] == "flag"
    assert h100["price"]["origin"] == "flag" and h100["usd_per_hour"] == 2.90
    assigned = {a["name"]: a for a in report["assumptions"]}
    assert assigned["dtype"]["origin"] == "flag" and assigned["context"]["origin"] == "default"


@pytest.mark.parametrize(
    ("model", "layers", "kv_heads", "head_dim", "expected"),
    [("llama-3-8b", 32, 8, 128, 131_072), ("llama-3-70b", 80, 8, 128, 327_680)],
)
def test_kv_bytes_per_token_is_the_gqa_formula(
    model: str, layers: int, kv_heads: int, head_dim: int, expected: int
) -> None:
    """2 (K and V) × layers × kv_heads × head_dim × 2 bytes: 128 KiB and 320 KiB."""
    shape = resolve_model(model)
    assert (shape.num_layers, shape.num_kv_heads, shape.head_size) == (layers, kv_heads, head_dim)
    assert kv_bytes_per_token(shape, "bf16") == 2 * layers * kv_heads * head_dim * 2 == expected
    # Research notes §3.3: 1.00 GiB (8B) and 2.5 GiB (70B) per 8k-token sequence.
    assert expected * 8192 / 2**30 == pytest.approx(1.0 if model == "llama-3-8b" else 2.5)


def test_weights_of_the_two_llamas() -> None:
    """Research notes §3.3: P ≈ 8.03 B → 16.1 GB; P ≈ 70.55 B → 141 GB in bf16."""
    small, big = (
        count_params(resolve_model("llama-3-8b")),
        count_params(resolve_model("llama-3-70b")),
    )
    assert small.total / 1e9 == pytest.approx(8.03, abs=0.01)
    assert big.total / 1e9 == pytest.approx(70.55, abs=0.01)
    assert weight_bytes(small, "bf16") / 1e9 == pytest.approx(16.1, abs=0.05)
    assert weight_bytes(big, "fp16") / 1e9 == pytest.approx(141.1, abs=0.05)


def test_dollars_per_gb_of_memory() -> None:
    """Seed 004: MI300X at $1.99/h ≈ $0.010/GB, H100 at $1.74/h ≈ $0.022/GB — half."""
    mi300x = usd_per_gb_hour(1.99, resolve_gpu("mi300x").memory_gb)
    h100 = usd_per_gb_hour(1.74, resolve_gpu("h100").memory_gb)
    assert round(mi300x, 3) == 0.010 and round(h100, 3) == 0.022
    assert mi300x / h100 == pytest.approx(0.48, abs=0.01)
    res = run_cost("-m", "llama-3-8b", "--price", "mi300x=1.99,h100-sxm=1.74", "-f", "json")
    records = {r["gpu"]: r for r in json.loads(res.out)["records"]}
    assert round(records["mi300x"]["usd_per_gb"], 3) == 0.010
    assert round(records["h100-sxm"]["usd_per_gb"], 3) == 0.022


def test_dollars_per_gb_says_it_is_per_datasheet_gb() -> None:
    """The seeds divide by the sheet's "80 GB" (80 GiB); every other size here is 10^9 B."""
    md = run_cost("-m", "llama-3-8b", "-g", "h100", "--price", "h100=1.74", "-f", "markdown")
    assert "| $/GB-h (datasheet GB) |" in md.out
    term = run_cost("-m", "llama-3-8b", "-g", "h100", "--price", "h100=1.74")
    assert "$/GB-h (datasheet GB)" in term.out
    doc = (Path(__file__).parents[2] / "docs" / "cost.md").read_text()
    assert "$/GB·hour    = $/GPU-hour / memory GB as printed on the datasheet" in doc


def test_buying_breaks_even_after_1500_to_3000_hours() -> None:
    """Seed 004: a $900 RX 7900 XTX against $0.30-0.55/h rent (the seed counts no power)."""
    assert breakeven_hours(900, 0.30, 355, 0.0) == pytest.approx(3000)
    assert breakeven_hours(900, 0.55, 355, 0.0) == pytest.approx(1636, abs=1)
    # With the card's 355 W at $0.10/kWh, owning costs $0.0355 per hour of use.
    assert breakeven_hours(900, 0.30, 355, 0.10) == pytest.approx(900 / (0.30 - 0.0355))
    res = run_cost("-m", "llama-3-8b", "-g", "rx-7900-xtx", "--price", "rx-7900-xtx=0.30",
                   "--purchase", "rx-7900-xtx=900", "--power-cost", "0", "--utilization", "0.5",
                   "-f", "json")  # fmt: skip
    assert res.code == 0, res.err
    (rec,) = json.loads(res.out)["records"]
    assert rec["breakeven_hours"] == pytest.approx(3000)
    assert rec["breakeven_days"] == pytest.approx(3000 / 12)  # busy 12 hours a day
