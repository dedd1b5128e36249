"""compare(): ratios oriented so > 1 is better, bootstrap intervals, verdicts, renderers.

Expected numbers are worked out by hand in the comments, never taken from the code.
"""

from __future__ import annotations

import csv
import io
import math
import random
import time
from collections import Counter
from typing import Any

import pytest
from rich.console import Console

from gpuport.bench import compare as compare_mod
from gpuport.bench.compare import compare
from gpuport.bench.model import BenchResult, BenchRun, CaseStatus, Comparison, DeviceInfo
from gpuport.models import EnvFingerprint, GpuportError
from gpuport.render.compare_render import (
    compare_csv,
    compare_json,
    compare_markdown,
    compare_terminal,
)

ENV = EnvFingerprint.collect()


def spread(center: float, n: int = 101, rel: float = 0.01) -> list[float]:
    """``n`` samples evenly spread over center ± rel, shuffled; for odd n the median is center."""
    xs = [center * (1 + rel * (2 * i / (n - 1) - 1)) for i in range(n)]
    random.Random(n).shuffle(xs)  # noqa: S311
    return xs


def result(
    case: str,
    value: float | None,
    *,
    workload: str = "gemm",
    samples: list[float] | None = None,
    unit: str = "GFLOP/s",
    higher: bool = True,
    **extra: Any,
) -> BenchResult:
    return BenchResult(
        workload=workload,
        case=case,
        unit=unit,
        value=value,
        higher_is_better=higher,
        samples=samples or [],
        **extra,
    )


def run(name: str, *results: BenchResult) -> BenchRun:
    return BenchRun(
        id=f"{name}-0123456789",
        label=name,
        suite="quick",
        env=ENV,
        device=DeviceInfo(backend="cpu", name="test cpu"),
        started="2026-01-01T00:00:00Z",
        duration_s=1.0,
        results=list(results),
    )


def test_twice_as_fast_throughput() -> None:
    # 1 GFLOP per iteration: 2.0 ms median -> 500 GFLOP/s, 1.0 ms -> 1000 GFLOP/s.
    a = run("A", result("big", 500.0, samples=spread(2.0e-3), work_per_iter=1.0))
    b = run("B", result("big", 1000.0, samples=spread(1.0e-3), work_per_iter=1.0))
    c = compare([a, b])
    row = c.rows[0]
    assert (row.workload, row.case, row.unit) == ("gemm", "big", "GFLOP/s")
    assert row.values == [500.0, 1000.0]
    assert row.ratios[0] == 1.0
    assert row.ratios[1] == pytest.approx(2.0, rel=0.01)
    low, high = row.ci_low[1], row.ci_high[1]
    assert low is not None and high is not None
    # Samples spread ±1% uniformly over 101 points: the median's standard error is
    # about 0.1% per run, so a 95% interval of the ratio is within ±0.5% of 2.
    assert 1.99 < low <= 2.0 <= high < 2.01
    assert row.verdicts == ["same", "faster"]
    assert c.runs == ["A", "B"] and c.devices == ["test cpu", "test cpu"]
    assert c.geomean[1] == pytest.approx(2.0)


def test_interval_is_seeded_and_deterministic() -> None:
    a = run("A", result("x", 500.0, samples=spread(2.0e-3, rel=0.2)))
    b = run("B", result("x", 1000.0, samples=spread(1.0e-3, rel=0.2)))
    first, again = compare([a, b], seed=7), compare([a, b], seed=7)
    assert first == again
    other = compare([a, b], seed=8)
    assert other.rows[0].ci_low[1] != first.rows[0].ci_low[1]


def test_lower_is_better_metric_is_inverted() -> None:
    # latency 2.0 ms -> 1.0 ms is twice as good: ratio 2.0 and "faster".
    a = run("A", result("lat", 2.0, unit="ms", higher=False, samples=spread(2.0e-3)))
    b = run("B", result("lat", 1.0, unit="ms", higher=False, samples=spread(1.0e-3)))
    row = compare([a, b]).rows[0]
    assert row.ratios[1] == pytest.approx(2.0)
    assert row.verdicts[1] == "faster"
    low, high = row.ci_low[1], row.ci_high[1]
    assert low is not None and high is not None and 1.99 < low <= 2.0 <= high < 2.01
    # 2.0 ms -> 3.0 ms is worse: ratio 2/3 and "slower".
    c = run("C", result("lat", 3.0, unit="ms", higher=False, samples=spread(3.0e-3)))
    row = compare([a, c]).rows[0]
    assert row.ratios[1] == pytest.approx(2 / 3)
    assert row.verdicts[1] == "slower"
    low, high = row.ci_low[1], row.ci_high[1]
    assert low is not None and high is not None and 0.66 < low <= 2 / 3 <= high < 0.673


def test_identical_distributions_are_the_same() -> None:
    samples = spread(1.0e-3, rel=0.3)
    a = run("A", result("x", 1000.0, samples=samples))
    b = run("B", result("x", 1000.0, samples=list(reversed(samples))))
    row = compare([a, b]).rows[0]
    assert row.ratios[1] == 1.0
    low, high = row.ci_low[1], row.ci_high[1]
    assert low is not None and high is not None and low < 1.0 < high
    assert row.verdicts[1] == "same"


def test_noise_threshold_without_samples() -> None:
    a = run("A", result("x", 100.0), result("y", 100.0), result("z", 100.0))
    b = run("B", result("x", 101.0), result("y", 105.0), result("z", 90.0))
    c = compare([a, b], noise=0.02)
    # 1.01 is within 2% of 1; 1.05 and 0.90 are not; no samples -> no interval
    assert [r.verdicts[1] for r in c.rows] == ["same", "faster", "slower"]
    assert [r.ci_low[1] for r in c.rows] == [None, None, None]
    assert [r.ratios[1] for r in c.rows] == pytest.approx([1.01, 1.05, 0.90])


def test_skipped_and_missing_cases_are_na_with_reason() -> None:
    a = run("A", result("x", 100.0), result("y", 100.0), result("z", 100.0))
    b = run(
        "B",
        result("x", 200.0),
        result("y", None, status=CaseStatus.SKIPPED, reason="out of memory"),
        result("w", 50.0),
    )
    c = compare([a, b])
    rows = {r.case: r for r in c.rows}
    assert [r.case for r in c.rows] == ["x", "y", "z", "w"]  # union, first-seen order
    assert rows["y"].ratios == [1.0, None]
    assert rows["y"].verdicts == ["same", "n/a"]
    assert "skipped on B: out of memory" in rows["y"].notes
    assert rows["z"].verdicts[1] == "n/a" and "missing on B" in rows["z"].notes
    assert rows["w"].ratios == [None, None] and "missing on A" in rows["w"].notes
    assert rows["w"].values == [None, 50.0]
    # geomean of B covers only x: 200/100
    assert c.geomean == [1.0, pytest.approx(2.0)]


def test_three_runs_and_geomean_by_hand() -> None:
    a = run("A", result("p", 100.0), result("q", 100.0))
    b = run("B", result("p", 200.0), result("q", 800.0))
    c = run("C", result("p", 50.0), result("q", 100.0))
    cmp = compare([a, b, c])
    assert [r.ratios for r in cmp.rows] == [[1.0, 2.0, 0.5], [1.0, 8.0, 1.0]]
    assert [r.verdicts for r in cmp.rows] == [
        ["same", "faster", "slower"],
        ["same", "faster", "same"],
    ]
    # geomean B = sqrt(2 * 8) = 4; C = sqrt(0.5 * 1) = 0.70711
    assert cmp.geomean == [1.0, pytest.approx(4.0), pytest.approx(math.sqrt(0.5))]
    md = compare_markdown(cmp)
    assert "| Workload | A | B | C | Δ B | Δ C |" in md
    assert "| gemm / p | 100.0 GFLOP/s | 200.0 GFLOP/s | 50.00 GFLOP/s | +100.0% faster |" in md
    assert "-50.0% slower |" in md


def test_not_comparable_cases_are_flagged() -> None:
    a = run(
        "A",
        result("u", 100.0, unit="GB/s"),
        result("p", 100.0, params={"n": 4096}),
        result("s", 100.0, unstable=True),
    )
    b = run(
        "B",
        result("u", 100.0, unit="TFLOPS"),
        result("p", 100.0, params={"n": 8192}),
        result("s", 100.0),
    )
    c = compare([a, b])
    rows = {r.case: r for r in c.rows}
    assert rows["u"].ratios[1] is None and rows["u"].verdicts[1] == "n/a"
    assert any("unit" in n and "TFLOPS" in n for n in rows["u"].notes)
    assert rows["p"].ratios[1] == 1.0
    assert any("params differ on B" in n and "8192" in n for n in rows["p"].notes)
    assert rows["s"].unstable == [True, False]  # summarised once per run, not per case
    assert any("1 of" in n and "unstable on A" in n for n in c.notes)


def test_bad_arguments_are_refused() -> None:
    a = run("A", result("x", 1.0))
    with pytest.raises(GpuportError, match="at least two"):
        compare([a])
    with pytest.raises(GpuportError, match="confidence"):
        compare([a, a], confidence=1.5)
    with pytest.raises(GpuportError, match="noise"):
        compare([a, a], noise=-0.1)


def test_same_run_twice_gets_distinct_names() -> None:
    a = run("A", result("x", 1.0))
    assert compare([a, a]).runs == ["A (A-012345) #1", "A (A-012345) #2"]


@pytest.mark.parametrize(
    ("xs", "expected"),
    [
        # n=3 from {1,2,3}: median 1 needs >= 2 draws of 1: 3*(1/3)^2*(2/3) + (1/3)^3 = 7/27
        ([1.0, 2.0, 3.0], {1.0: 7 / 27, 2.0: 13 / 27, 3.0: 7 / 27}),
        # n=2 from {1,3}: (1,1) 1/4, (3,3) 1/4, mixed -> mean 2 with 1/2
        ([1.0, 3.0], {1.0: 0.25, 2.0: 0.5, 3.0: 0.25}),
    ],
)
def test_resampled_median_distribution_is_exact(
    xs: list[float], expected: dict[float, float]
) -> None:
    draws = 40_000
    medians = compare_mod._boot_medians(xs, random.Random(1), draws)  # noqa: S311
    freq = Counter(medians)
    assert set(freq) == set(expected)
    for value, p in expected.items():
        assert freq[value] / draws == pytest.approx(p, abs=0.01)


@pytest.mark.parametrize(("a", "b"), [(2.0, 5.0), (1.0, 1.0), (5000.0, 5001.0)])
def test_beta_draws_have_the_textbook_moments(a: float, b: float) -> None:
    # Beta(a, b): mean a / (a + b), variance ab / ((a + b)^2 (a + b + 1)).
    draws = 50_000
    beta = compare_mod._beta_sampler(a, b, random.Random(3))  # noqa: S311
    xs = [beta() for _ in range(draws)]
    mean = sum(xs) / draws
    var = sum((x - mean) ** 2 for x in xs) / (draws - 1)
    want_mean = a / (a + b)
    want_var = a * b / ((a + b) ** 2 * (a + b + 1))
    assert abs(mean - want_mean) < 5 * math.sqrt(want_var / draws)
    assert var == pytest.approx(want_var, rel=0.03)


def _two_runs_two_x() -> Comparison:
    a = run("A", result("big", 500.0, samples=spread(2.0e-3)), result("gone", 10.0))
    b = run(
        "B",
        result("big", 1000.0, samples=spread(1.0e-3)),
        result("gone", None, status=CaseStatus.SKIPPED, reason="no fp8 here"),
    )
    return compare([a, b])


def test_markdown_table() -> None:
    md = compare_markdown(_two_runs_two_x())
    assert "| Workload | A | B | Δ |" in md
    line = next(x for x in md.splitlines() if x.startswith("| gemm / big"))
    assert line.startswith("| gemm / big | 500.0 GFLOP/s | 1000.0 GFLOP/s | +100.0% [+")
    assert line.endswith("] faster |")
    assert "| gemm / gone | 10.00 GFLOP/s | - | n/a |" in md
    assert "**Geomean by workload family** against A:" in md
    assert "* compute (gemm): +100.0% (" in md
    assert "skipped on B: no fp8 here" in md


def test_markdown_escapes_labels() -> None:
    a = run("x|y<b>", result("c", 1.0))
    b = run("B", result("c", 1.0))
    md = compare_markdown(compare([a, b]))
    assert "| Workload | x\\|y&lt;b&gt; | B | Δ |" in md


def test_csv_parses_back() -> None:
    c = _two_runs_two_x()
    rows = list(csv.DictReader(io.StringIO(compare_csv(c))))
    assert len(rows) == 4  # 2 cases x 2 runs
    big_b = next(r for r in rows if r["case"] == "big" and r["run"] == "B")
    assert float(big_b["value"]) == 1000.0
    assert float(big_b["ratio"]) == pytest.approx(2.0)
    assert float(big_b["ci_low"]) <= 2.0 <= float(big_b["ci_high"])
    assert big_b["verdict"] == "faster" and big_b["baseline"] == "false"
    gone_b = next(r for r in rows if r["case"] == "gone" and r["run"] == "B")
    assert gone_b["ratio"] == "" and gone_b["verdict"] == "n/a"
    assert "no fp8 here" in gone_b["notes"]


def test_json_round_trips() -> None:
    c = _two_runs_two_x()
    text = compare_json(c)
    assert text.endswith("}\n")
    assert Comparison.model_validate_json(text) == c


def test_terminal_escapes_labels_and_shows_verdicts() -> None:
    a = run("[bold]evil[/]\x1b[31m", result("big", 500.0, samples=spread(2.0e-3)))
    b = run("B", result("big", 1000.0, samples=spread(1.0e-3)))
    buf = io.StringIO()
    compare_terminal(compare([a, b]), Console(file=buf, width=200, color_system=None))
    out = buf.getvalue()
    assert "[bold]evil[/]" in out and "\x1b" not in out
    assert "+100.0%" in out and "faster" in out


def test_large_comparison_finishes() -> None:
    """2 runs x 100 cases x 10,000 samples: a hang guard, not a benchmark."""
    base = spread(1.0e-3, n=10_000, rel=0.05)
    a = run("A", *(result(f"c{i}", 1000.0, samples=base) for i in range(100)))
    b = run("B", *(result(f"c{i}", 1100.0, samples=[x / 1.1 for x in base]) for i in range(100)))
    start = time.perf_counter()
    c = compare([a, b])
    elapsed = time.perf_counter() - start
    assert elapsed < 15
    assert all(r.verdicts[1] == "faster" for r in c.rows)
    assert c.geomean[1] == pytest.approx(1.1)


def test_interval_covers_the_true_ratio_about_as_often_as_promised() -> None:
    """Lognormal times with medians 2 ms and 1 ms: the true ratio is 2 by construction."""
    rng = random.Random(11)  # noqa: S311
    trials, covered = 200, 0
    for t in range(trials):
        xs_a = [2.0e-3 * math.exp(rng.gauss(0, 0.1)) for _ in range(51)]
        xs_b = [1.0e-3 * math.exp(rng.gauss(0, 0.1)) for _ in range(51)]
        med_a, med_b = sorted(xs_a)[25], sorted(xs_b)[25]
        a = run("A", result("x", 1.0 / med_a, samples=xs_a))
        b = run("B", result("x", 1.0 / med_b, samples=xs_b))
        row = compare([a, b], resamples=400, seed=t).rows[0]
        low, high = row.ci_low[1], row.ci_high[1]
        assert low is not None and high is not None
        covered += low <= 2.0 <= high
    # nominal 95%; a percentile bootstrap of a median at n=51 lands near it
    assert 0.85 <= covered / trials <= 0.995
