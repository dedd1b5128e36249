"""``--bench RUN``: measured efficiency replaces the published one, for that GPU only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuport.bench.history import History
from gpuport.cost import CostOptions, estimate
from gpuport.cost.efficiency import (
    DEFAULT_BANDWIDTH_EFFICIENCY,
    gpu_of_run,
    measured,
    published,
)
from gpuport.knowledge.gpus import load_gpus, resolve_gpu
from gpuport.knowledge.models import resolve_model
from gpuport.models import GpuportError
from tests.cost.helpers import bench_run, run_cost


def test_published_efficiency_is_the_catalog_ratio() -> None:
    h100 = published(resolve_gpu("h100-sxm"), "bf16")
    assert h100["bandwidth"].basis == "published"
    assert h100["bandwidth"].value == pytest.approx(2970 / 3350)
    assert h100["compute"].value == pytest.approx(794.5 / 989.4)
    assert h100["compute"].source.startswith("https://")
    # No published bandwidth for the MI355X: the documented default, said to be one.
    mi355x = published(resolve_gpu("mi355x"), "bf16")
    assert mi355x["bandwidth"].basis == "default"
    assert mi355x["bandwidth"].value == DEFAULT_BANDWIDTH_EFFICIENCY


def test_measured_efficiency_from_a_hand_made_run() -> None:
    run = bench_run(membw={"copy": 4400.0, "triad": 4500.0}, gemm={"bf16": 900.0})
    gpu = resolve_gpu("mi300x")
    eff, notes = measured(run, gpu, "bf16")
    assert eff["bandwidth"].basis == "measured" and eff["bandwidth"].figure == 4500.0
    assert eff["bandwidth"].value == pytest.approx(4500 / 5300)
    assert eff["compute"].value == pytest.approx(900 / 1307.4)  # the best of the two shapes
    assert eff["compute"].source == run.id and not notes
    # fp8 asked, only bf16 measured: bf16's ratio, with a note.
    eff, notes = measured(run, gpu, "fp8")
    assert eff["compute"].value == pytest.approx(900 / 1307.4)
    assert any("no fp8 GEMM" in n for n in notes)


def test_measured_efficiency_changes_the_throughput() -> None:
    shape = resolve_model("llama-3-70b")
    gpu = resolve_gpu("mi300x")
    slow = bench_run(membw={"triad": 2650.0}, gemm={"bf16": 500.0})  # half the bandwidth
    (base,) = estimate(shape, [gpu], CostOptions()).records
    (mine,) = estimate(shape, [gpu], CostOptions(), runs={"mi300x": slow}).records
    assert base.efficiency["bandwidth"].basis == "published"
    assert mine.efficiency["bandwidth"].basis == "measured"
    assert mine.efficiency["compute"].basis == "measured"
    ratio = (2650 / 5300) / (4090 / 5300)
    assert mine.decode_tokens_per_s_per_gpu is not None and base.decode_tokens_per_s_per_gpu
    assert mine.decode_tokens_per_s_per_gpu < base.decode_tokens_per_s_per_gpu
    # Slower memory slows the memory-bound part of each step (most of it at this load).
    assert ratio * 0.95 < mine.decode_tokens_per_s_per_gpu / base.decode_tokens_per_s_per_gpu < 1
    assert mine.usd_per_mtok_output > base.usd_per_mtok_output  # type: ignore[operator]


def test_a_run_without_membw_keeps_the_published_bandwidth() -> None:
    run = bench_run(gemm={"bf16": 700.0})
    eff, notes = measured(run, resolve_gpu("mi300x"), "bf16")
    assert "bandwidth" not in eff and any("no membw" in n for n in notes)


def test_which_gpu_a_run_measured() -> None:
    gpus = load_gpus()
    assert gpu_of_run(bench_run(), gpus, None).key == "mi300x"
    by_name = bench_run(name="NVIDIA H100 80GB HBM3", arch="sm_90", spec_key=None, backend="cuda")
    assert gpu_of_run(by_name, gpus, None).key == "h100-sxm"
    with pytest.raises(GpuportError, match="ran on the CPU"):
        gpu_of_run(bench_run(name="cpu", arch=None, spec_key=None, backend="cpu"), gpus, None)  # type: ignore[arg-type]
    with pytest.raises(GpuportError, match="not in the GPU catalog"):
        gpu_of_run(bench_run(name="Acme X1", arch="gfx9999", spec_key=None), gpus, None)


def test_bench_through_the_cli_by_file_and_by_label(tmp_path: Path, _private_history: Path) -> None:
    run = bench_run(membw={"triad": 4500.0}, gemm={"bf16": 900.0}, label="my-mi300x")
    path = tmp_path / "run.json"
    path.write_text(run.model_dump_json())
    res = run_cost("-m", "llama-3-8b", "-g", "h100", "--bench", str(path), "-f", "json")
    assert res.code == 0, res.err
    records = {r["gpu"]: r for r in json.loads(res.out)["records"]}
    assert set(records) == {"h100-sxm", "mi300x"}  # the run's GPU joins the comparison
    assert records["mi300x"]["efficiency"]["bandwidth"]["basis"] == "measured"
    assert records["h100-sxm"]["efficiency"]["bandwidth"]["basis"] == "published"
    History(_private_history).add(run)
    res = run_cost("-m", "llama-3-8b", "--bench", "my-mi300x", "-f", "json")
    assert res.code == 0, res.err
    (rec,) = json.loads(res.out)["records"]  # only the measured GPU when --gpus is absent
    assert rec["gpu"] == "mi300x" and rec["efficiency"]["compute"]["basis"] == "measured"
    missing = run_cost("-m", "llama-3-8b", "--bench", str(tmp_path / "nope.json"))
    assert missing.code == 2 and "no such file" in missing.err


@pytest.mark.parametrize("bad", [0.0, -120.0, float("nan"), float("inf")])
def test_a_zero_negative_or_non_finite_figure_is_not_a_measurement(bad: float) -> None:
    """A broken case must not reach Efficiency(value > 0) and crash the whole command."""
    run = bench_run(membw={"triad": bad}, gemm={"bf16": bad})
    eff, notes = measured(run, resolve_gpu("mi300x"), "bf16")
    assert eff == {}
    assert any("no membw result" in n for n in notes) and any("no gemm result" in n for n in notes)
    # A good kernel next to a broken one is still used.
    run = bench_run(membw={"triad": bad, "copy": 4000.0}, gemm={"bf16": 700.0})
    eff, _notes = measured(run, resolve_gpu("mi300x"), "bf16")
    assert eff["bandwidth"].figure == 4000.0 and eff["compute"].figure == 700.0
    (rec,) = estimate(
        resolve_model("llama-3-8b"), [resolve_gpu("mi300x")], CostOptions(),
        runs={"mi300x": bench_run(membw={"triad": bad}, gemm={"bf16": bad})},
    ).records  # fmt: skip
    assert rec.efficiency["bandwidth"].basis == "published"


def test_a_figure_far_above_the_peak_is_refused_with_a_note() -> None:
    """130 % of the datasheet is a wrong GPU or unit, not a fast GPU: published is used."""
    gpu = resolve_gpu("mi300x")
    run = bench_run(membw={"triad": 5300 * 1.3}, gemm={"bf16": 1307.4 * 1.05})
    eff, notes = measured(run, gpu, "bf16")
    assert "bandwidth" not in eff and any("130% of the catalog peak" in n for n in notes)
    assert any("not used" in n for n in notes)
    # Just above the peak (boost clocks) is kept, with a warning.
    assert eff["compute"].value == pytest.approx(1.05)
    assert any("105% of the catalog peak" in n and "may not be" in n for n in notes)
    (rec,) = estimate(
        resolve_model("llama-3-8b"), [gpu], CostOptions(), runs={"mi300x": run}
    ).records
    assert rec.efficiency["bandwidth"].basis == "published"
    assert rec.efficiency["compute"].basis == "measured"
