"""Issue 26: the serving table is fitted on published measurements, and says how sure it is.

The calibration set (benchmarks/cost_calibration/measurements.toml) is split before any
fitting; these tests check that no held-out row reaches the fitted table, that the error the
table quotes (and that cost and assess print) is what the model makes on the held-out rows
today, and the issue's two named cases.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

from gpuport.cost import CostOptions, estimate
from gpuport.knowledge.gpus import resolve_gpu
from gpuport.knowledge.models import resolve_model
from gpuport.knowledge.serving import load_serving
from tests.cost.helpers import bench_run, run_cost

ROOT = Path(__file__).parents[2]
CALIBRATION = ROOT / "benchmarks" / "cost_calibration"


def _measurements() -> dict[str, dict[str, object]]:
    with (CALIBRATION / "measurements.toml").open("rb") as f:
        return {r["id"]: r for r in tomllib.load(f)["measurement"]}


def _held_out() -> set[str]:
    return set(json.loads((CALIBRATION / "split.json").read_text())["held_out"])


def _cost_fit() -> ModuleType:
    sys.path.insert(0, str(CALIBRATION))
    spec = importlib.util.spec_from_file_location("cost_fit", ROOT / "benchmarks" / "cost_fit.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_set_is_big_enough_and_covers_both_vendors() -> None:
    rows = _measurements()
    assert len(rows) >= 40
    gpus = {r["gpu"] for r in rows.values()}
    assert {"h100-sxm", "h200", "b200", "mi300x", "mi325x", "mi355x"} <= gpus
    models = {r["model"] for r in rows.values()}
    assert len(models) >= 3 and {"mixtral-8x7b", "deepseek-r1"} <= models  # MoE included
    for row in rows.values():
        assert str(row["source"]).startswith("https://") and row["date"]
        assert float(row["measured_tok_s_per_gpu"]) > 0  # type: ignore[arg-type]


def test_no_held_out_row_was_fitted_on() -> None:
    rows, held = _measurements(), _held_out()
    assert held and held < set(rows)
    table = load_serving()
    fitted = [m for p in table.profiles for m in p.measurements]
    fitted += [m for c in table.collectives for m in c.measurements]
    assert fitted and set(fitted) <= set(rows)
    assert not set(fitted) & held
    assert table.fit.fit_rows == len(rows) - len(held)


def test_the_quoted_error_is_what_the_model_makes_on_the_held_out_rows() -> None:
    """The held-out error in serving.toml (printed by cost and assess) is recomputed here."""
    cost_fit = _cost_fit()
    results = cost_fit.evaluate(list(_measurements().values()))
    stats = cost_fit.stats.summary([r for r in results if r["part"] == "held-out"])
    quoted = load_serving().fit.held_out
    assert stats["n"] == quoted.n
    assert stats["median_ratio"] == pytest.approx(quoted.median_ratio, abs=0.002)
    assert stats["within_1_5x"] == pytest.approx(quoted.within_1_5x, abs=0.002)
    assert stats["p90_factor"] == pytest.approx(quoted.p90_factor, abs=0.002)
    assert (stats["pairs"], stats["pairs_in_order"]) == (quoted.pairs, quoted.pairs_in_order)


def test_deepseek_r1_on_8_h200_vs_8_mi300x_at_64_keeps_the_measured_order() -> None:
    """Issue 26: InferenceX measured DeepSeek R1 fp8 (SGLang, 1k/1k) at concurrency 64."""
    rows = _measurements()
    h200 = rows["ix-dsr1-fp8-sglang-h200-1k1k-c64"]["measured_tok_s_per_gpu"]
    mi300x = rows["ix-dsr1-fp8-sglang-mi300x-1k1k-c64"]["measured_tok_s_per_gpu"]
    assert h200 > mi300x  # type: ignore[operator]
    res = run_cost("-m", "deepseek-r1", "--dtype", "fp8", "-g", "h200,mi300x", "--concurrency",
                   "64", "--tp", "8", "--engine", "sglang", "-f", "json")  # fmt: skip
    assert res.code == 0, res.err
    recs = {r["gpu"]: r for r in json.loads(res.out)["records"]}
    assert recs["h200"]["gpus_needed"] == recs["mi300x"]["gpus_needed"] == 8
    speed = {k: r["decode_tokens_per_s_per_gpu"] for k, r in recs.items()}
    assert speed["h200"] > speed["mi300x"]
    # At the catalog's on-demand medians the cheaper one per token is the MI300X, as the
    # measured figures give at the same prices.
    price = {k: r["usd_per_hour"] for k, r in recs.items()}
    measured_cost = {"h200": price["h200"] / h200, "mi300x": price["mi300x"] / mi300x}  # type: ignore[operator]
    modelled_cost = {k: r["usd_per_mtok_output"] for k, r in recs.items()}
    assert (measured_cost["mi300x"] < measured_cost["h200"]) == (
        modelled_cost["mi300x"] < modelled_cost["h200"]
    )
    assert all(r["price"]["kind"] == "on-demand" for r in recs.values())


def test_fp4_is_the_gpus_own_format_and_runs_where_there_are_fp4_units() -> None:
    shape = resolve_model("llama-3-70b")
    b200, mi355x, h100 = (resolve_gpu(k) for k in ("b200", "mi355x", "h100"))
    records = estimate(shape, [b200, mi355x, h100], CostOptions(dtype="fp4")).records
    by = {r.gpu: r for r in records}
    assert by["b200"].efficiency["dense_compute"].detail.startswith("0.")
    assert "fp4 GEMM" in by["b200"].efficiency["dense_compute"].detail
    assert "fp4 GEMM" in by["mi355x"].efficiency["dense_compute"].detail
    # NVFP4 carries a scale per 16 weights, MXFP4 one per 32: slightly more bytes on NVIDIA.
    assert by["b200"].weights_gb > by["mi355x"].weights_gb
    assert any("no fp4 matrix units" in n for n in by["h100-sxm"].notes)
    assert "bf16 GEMM" in by["h100-sxm"].efficiency["dense_compute"].detail


def test_the_engine_picks_the_profile_and_a_missing_one_is_borrowed_aloud() -> None:
    shape, mi300x = resolve_model("deepseek-r1"), resolve_gpu("mi300x")
    (sg,) = estimate(shape, [mi300x], CostOptions(dtype="fp8", engine="sglang")).records
    (vl,) = estimate(shape, [mi300x], CostOptions(dtype="fp8", engine="vllm")).records
    assert sg.serving is not None and vl.serving is not None
    assert (sg.serving.profile, vl.serving.profile) == ("gfx942/sglang", "gfx942/vllm")
    assert sg.decode_tokens_per_s_per_gpu != vl.decode_tokens_per_s_per_gpu
    (a100,) = estimate(resolve_model("llama-3-8b"), [resolve_gpu("a100-sxm-80gb")],
                       CostOptions()).records  # fmt: skip
    assert a100.serving is not None and a100.serving.borrowed
    assert any(n.startswith("serving factors: no profile for sm_80") for n in a100.notes)
    assert (
        "borrowed" in a100.provenance["decode_tokens_per_s_per_gpu"]
        or "(no profile" in (a100.provenance["decode_tokens_per_s_per_gpu"])
    )


def test_a_bench_run_replaces_the_hardware_figures_not_the_fitted_factors() -> None:
    shape, mi300x = resolve_model("llama-3-70b"), resolve_gpu("mi300x")
    run = bench_run(membw={"triad": 3000.0}, gemm={"bf16": 600.0})
    (base,) = estimate(shape, [mi300x], CostOptions(tp=1)).records
    (mine,) = estimate(shape, [mi300x], CostOptions(tp=1), runs={"mi300x": run}).records
    assert mine.efficiency["bandwidth"].basis == "measured"
    assert mine.efficiency["decode_bandwidth"].basis == "fitted"
    assert base.serving == mine.serving  # the same fitted factors
    ratio = mine.efficiency["decode_bandwidth"].value / base.efficiency["decode_bandwidth"].value
    assert ratio == pytest.approx(3000 / 4090)
