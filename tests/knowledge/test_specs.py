"""Peaks recomputed from their primary inputs (knowledge/specs.py, archs.toml).

The 2026-11-25 consistency test (fp8 = 2 x bf16) passed on the RX 9070 XT and the Radeon AI
PRO R9700 although both held the 2:4-sparse figures: a uniformly doubled entry is consistent
with itself. These tests recompute every stored peak from clock x units x FLOP per unit per
clock and compare the vendor's printed figures, dense or sparse, stated per entry.
"""

from __future__ import annotations

import pytest

from gpuport.knowledge.gpus import GpuSpec, load_gpus
from gpuport.knowledge.specs import (
    TOLERANCE,
    Derivation,
    Published,
    disagreements,
    load_archs,
    recompute,
)

FAMILIES = {
    "volta", "turing", "ampere-ga100", "ampere-ga10x", "ada", "hopper", "blackwell",
    "blackwell-ultra", "blackwell-rtx", "cdna1", "cdna2", "cdna3", "cdna4", "rdna3",
    "rdna3.5", "rdna4",
}  # fmt: skip


def test_one_row_per_family_and_every_row_is_used() -> None:
    archs = load_archs()
    assert set(archs) == FAMILIES
    used = {g.derive.arch for g in load_gpus().values() if g.derive is not None}
    assert used == FAMILIES
    covered = [a for row in archs.values() for a in row.archs]
    assert len(covered) == len(set(covered)), "an sm_/gfx name in two rows"
    for row in archs.values():
        assert row.sources and row.verified == ["specs"]
        assert {"fp16", "fp32"} <= set(row.flop_per_clk)


@pytest.mark.parametrize("key", sorted(load_gpus()))
def test_every_stored_peak_recomputes_from_its_inputs(key: str) -> None:
    gpu = load_gpus()[key]
    assert gpu.derive is not None, f"{key}: every bundled GPU names its primary inputs"
    assert disagreements(gpu) == []
    # exemptions are few, each with its reason, and never the headline bf16/fp16 figure
    assert not {"bf16", "fp16"} & set(gpu.derive.exempt)
    assert all(len(why) > 40 for why in gpu.derive.exempt.values())


def test_exemptions_are_only_where_vendor_figures_disagree() -> None:
    exempt = {(k, d) for k, g in load_gpus().items() if g.derive for d in g.derive.exempt}
    assert exempt == {("gb200", "fp64"), ("b300", "fp4"), ("b300", "fp64"), ("gb300", "fp64")}


@pytest.mark.parametrize(
    ("key", "bf16", "fp8"),
    [
        ("rx-9070-xt", 194.6, 389.3),  # 64 CUs x 2970 MHz x 1024 / 2048
        ("radeon-ai-pro-r9700", 191.4, 382.7),  # 64 CUs x 2920 MHz
        ("rx-9060-xt", 102.6, 205.1),  # 32 CUs x 3130 MHz
    ],
)
def test_rdna4_peaks_are_dense(key: str, bf16: float, fp8: float) -> None:
    gpu = load_gpus()[key]
    assert gpu.peak_tflops["bf16"] == gpu.peak_tflops["fp16"] == bf16
    assert gpu.peak_tflops["fp8"] == fp8
    assert gpu.derive is not None and gpu.derive.arch == "rdna4"
    # the product pages print the sparse figures, twice these
    assert gpu.derive.published["fp16"].sparse


@pytest.mark.parametrize(
    ("key", "bf16", "fp32"),
    [
        ("radeon-8060s", 59.4, 29.7),  # Strix Halo: 40 CUs x 2900 MHz
        ("radeon-890m", 23.8, 11.9),  # Strix Point: 16 CUs x 2900 MHz
        ("radeon-780m", 16.6, 8.3),  # Phoenix: 12 CUs x 2700 MHz
        ("mi300a", 980.6, 122.6),  # 228 CUs x 2100 MHz
        ("gb10", 124.9, 31.2),  # DGX Spark: 48 SMs, modelled from 1 PF sparse fp4
    ],
)
def test_apu_peaks(key: str, bf16: float, fp32: float) -> None:
    gpu = load_gpus()[key]
    assert gpu.peak_tflops["bf16"] == bf16
    assert gpu.peak_tflops["fp32"] == fp32
    assert disagreements(gpu) == []


def _with(gpu: GpuSpec, **peaks: float) -> GpuSpec:
    return gpu.model_copy(update={"peak_tflops": {**gpu.peak_tflops, **peaks}})


def test_the_old_rdna4_figures_fail() -> None:
    """The figures these entries held until 2026-11-27 (sparse, self-consistent) are caught."""
    gpus = load_gpus()
    old_9070 = _with(gpus["rx-9070-xt"], bf16=389, fp16=389, fp8=779)
    old_r9700 = _with(gpus["radeon-ai-pro-r9700"], bf16=383, fp16=383, fp8=766)
    for old in (old_9070, old_r9700):
        problems = disagreements(old)
        assert any("bf16" in p and "gives" in p for p in problems), problems
        assert any("sparse" in p for p in problems), problems
        # the ratio check of test_gpus.py passes on them: that is why this test exists
        assert old.peak_tflops["fp8"] == pytest.approx(2 * old.peak_tflops["bf16"], rel=0.02)


@pytest.mark.parametrize(
    ("key", "dtype", "old"),
    [("l40s", "bf16", 362.05), ("b200", "tf32", 1100.0), ("h100-sxm", "bf16", 1978.9)],
)
def test_a_peak_off_by_more_than_the_tolerance_fails(key: str, dtype: str, old: float) -> None:
    gpu = load_gpus()[key]
    assert disagreements(gpu) == []
    assert any(dtype in p for p in disagreements(_with(gpu, **{dtype: old})))


def test_recompute_uses_both_clocks_and_the_geforce_rate() -> None:
    gpus = load_gpus()
    h100 = recompute(gpus["h100-sxm"])
    assert h100["bf16"] == pytest.approx(1830e6 * 132 * 4096 / 1e12)
    assert h100["fp32"] == pytest.approx(1980e6 * 132 * 256 / 1e12)
    rtx = recompute(gpus["rtx-4090"])
    assert rtx["bf16"] == pytest.approx(2520e6 * 128 * 1024 * 0.5 / 1e12)
    assert rtx["fp32"] == pytest.approx(2520e6 * 128 * 256 / 1e12)  # CUDA cores: no halving
    gb10 = recompute(gpus["gb10"])
    assert gb10["fp4"] == pytest.approx(2 * gb10["fp8"])


def test_a_derivation_with_an_unknown_row_or_the_wrong_arch_is_reported() -> None:
    gpu = load_gpus()["mi300x"]
    assert gpu.derive is not None
    bad_row = gpu.model_copy(update={"derive": gpu.derive.model_copy(update={"arch": "cdna9"})})
    assert "not in archs.toml" in disagreements(bad_row)[0]
    wrong = gpu.model_copy(update={"derive": gpu.derive.model_copy(update={"arch": "cdna4"})})
    assert any("gfx942 is not one of cdna4" in p for p in disagreements(wrong))
    none = gpu.model_copy(update={"derive": None})
    assert "no [gpu.derive]" in disagreements(none)[0]


def test_published_sparse_figure_is_halved() -> None:
    gpu = load_gpus()["mi300x"]
    assert gpu.derive is not None
    dense_claim = gpu.derive.model_copy(
        update={"published": {"bf16": Published(tflops=2614.9, sparse=False)}}
    )
    problems = disagreements(gpu.model_copy(update={"derive": dense_claim}))
    assert problems and "dense" in problems[0]
    assert TOLERANCE <= 0.01


def test_derivation_schema_refuses_nonsense() -> None:
    with pytest.raises(ValueError):
        Derivation(arch="hopper", units=0, clock_mhz=1830, clock_basis="published")
    with pytest.raises(ValueError):
        Derivation(arch="hopper", units=132, clock_mhz=1830, clock_basis="guessed")
    with pytest.raises(ValueError):
        Derivation(arch="ada", units=128, clock_mhz=2520, clock_basis="published", tensor_rate=2)
