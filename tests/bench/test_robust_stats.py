"""Dispersion that means something: robust CV, outliers counted, bimodality found.

The field trial's cases: ``read`` with CV 461 % on a tight 43-46 µs spread (one slow
sample), and fp16 GEMM on a CPU with samples in two clusters (848 µs and 12 ms) whose
median hides both.
"""

from __future__ import annotations

import random

from gpuport.bench.model import BenchResult, CaseStatus
from gpuport.bench.run import is_unstable
from gpuport.bench.timing import find_modes, summarize
from gpuport.render.bench_render import render_markdown
from tests.cost.helpers import bench_run


def _tight(n: int, centre: float, spread: float, seed: int) -> list[float]:
    rng = random.Random(seed)  # noqa: S311 - reproducible test data
    return [centre * (1 + rng.uniform(-spread, spread)) for _ in range(n)]


def test_one_outlier_does_not_make_a_tight_case_unstable() -> None:
    samples = [*_tight(99, 44.5e-6, 0.03, seed=1), 20e-3]  # 43-46 µs and one 20 ms stall
    stats = summarize(samples)
    assert stats.cv > 4  # the classical CV is huge (~450 %), as in the trial
    assert stats.robust_cv is not None and stats.robust_cv < 0.05
    assert stats.outliers == 1
    assert not stats.bimodal
    assert not is_unstable(stats)


def test_a_broad_spread_is_unstable() -> None:
    rng = random.Random(2)  # noqa: S311
    stats = summarize([1e-3 * rng.uniform(0.6, 1.4) for _ in range(200)])
    assert stats.robust_cv is not None and stats.robust_cv > 0.1
    assert not stats.bimodal and is_unstable(stats)


def test_two_clusters_are_found_and_shown() -> None:
    samples = _tight(40, 848e-6, 0.02, seed=3) + _tight(25, 12e-3, 0.02, seed=4)
    random.Random(5).shuffle(samples)  # noqa: S311
    stats = summarize(samples)
    assert stats.bimodal and stats.mode_counts == [40, 25]
    assert abs(stats.modes[0] / 848e-6 - 1) < 0.03 and abs(stats.modes[1] / 12e-3 - 1) < 0.03
    assert is_unstable(stats)


def test_no_modes_in_one_cluster_or_too_few_samples() -> None:
    assert find_modes(sorted(_tight(100, 1e-3, 0.05, seed=6))) == ([], [])
    assert find_modes([1e-3, 1e-3, 5e-3, 5e-3]) == ([], [])  # 4 samples: too few


def test_the_report_shows_modes_outliers_and_the_iqr() -> None:
    run = bench_run()
    base = run.results[0].model_copy(update={"status": CaseStatus.OK, "reason": None})
    bimodal = summarize(_tight(40, 848e-6, 0.02, seed=7) + _tight(25, 12e-3, 0.02, seed=8))
    stalled = summarize([*_tight(99, 44.5e-6, 0.03, seed=9), 20e-3])
    results = [
        base.model_copy(update={"case": "fp16 bimodal", "time": bimodal, "unstable": True}),
        base.model_copy(update={"case": "read stall", "time": stalled, "unstable": False}),
    ]
    text = render_markdown(run.model_copy(update={"results": results}))
    row = next(line for line in text.splitlines() if "fp16 bimodal" in line)
    assert "bimodal:" in row and "×40" in row and "×25" in row and "unstable" in row
    row = next(line for line in text.splitlines() if "read stall" in line)
    assert "1 outlier" in row and "unstable" not in row
    assert "robust CV" in text and "| IQR |" in text


def test_old_run_files_without_robust_fields_still_load() -> None:
    run = bench_run()
    result = run.results[0].model_copy(update={"time": summarize([1e-3, 1.1e-3, 0.9e-3])})
    data = result.model_dump(mode="json")
    for key in ("q1", "q3", "robust_cv", "outliers", "modes", "mode_counts"):
        data["time"].pop(key, None)
    old = BenchResult.model_validate(data)
    assert old.time is not None and old.time.spread == old.time.cv
