"""Run against run: a ratio per workload case with a bootstrap confidence interval.

Why a bootstrap over the raw samples rather than the stored headline values:
two runs can differ by a few percent through noise alone, and a reader of a
side-by-side table needs to know whether +3 % is real. Each run keeps its raw
seconds-per-iteration samples for exactly this.

Every ratio is oriented so that > 1 means "this run is better than the
baseline" (the first run): ``value_B / value_A`` for throughput-like metrics,
``value_A / value_B`` for latency-like ones. "faster" therefore always means
better, also for a latency metric.

The bootstrap is exact and cheap. The median of a resample (with replacement)
of ``n`` sorted samples ``x_1 <= ... <= x_n`` is ``x[ceil(n * U_(k))]`` where
``U_(k)`` is the k-th order statistic of ``n`` uniforms, which is
``Beta(k, n + 1 - k)``; for even ``n`` the next order statistic follows from the
minimum of the remaining ``n - k`` uniforms. So one resampled median costs one
beta draw (two Marsaglia-Tsang gamma draws) instead of ``n`` draws and a sort,
and a 2-run x 100-case comparison with 10,000 samples per case takes about a
second in pure Python, with every sample used: no subsampling, no numpy. Draws
are seeded per (seed, workload, case, run), so a case's interval does not
depend on which other cases are compared.
"""

from __future__ import annotations

import bisect
import math
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from gpuport.bench.model import (
    BenchResult,
    BenchRun,
    CaseStatus,
    CompareRow,
    Comparison,
    FamilySummary,
    Verdict,
)
from gpuport.models import GpuportError

MIN_SAMPLES = 5  # fewer samples than this give no interval worth showing
# Workloads that measure the same kind of thing: a geomean is read per family, because
# one over everything lets 9 noisy 2-process gloo collectives cancel a +80 % GEMM gain.
FAMILIES: dict[str, str] = {
    "gemm": "compute",
    "attention": "compute",
    "membw": "memory",
    "decode": "model",
    "transformer": "model",
    "resnet50": "model",
    "llama": "model",
    "collectives": "communication",
    "user": "user",
}
FAMILY_ORDER = ("compute", "memory", "model", "communication", "user", "other")


def family_of(workload: str) -> str:
    return FAMILIES.get(workload, "other")


@dataclass(frozen=True)
class _Timing:
    """Sorted positive samples of one result and their median (the bootstrap's reference)."""

    sorted_samples: list[float]
    median: float


#: Bootstrap medians one compare may draw in all (resamples x cases x runs): 4,000 cases of 5
#: samples each, in a forged 251 KB run, took 26 s at 2,000 resamples (eighth review); past
#: it, each case gets fewer resamples (never below BOOTSTRAP_MIN), and the notes say so
BOOTSTRAP_BUDGET = 1_600_000
BOOTSTRAP_MIN = 200


def compare(
    runs: list[BenchRun],
    *,
    confidence: float = 0.95,
    noise: float = 0.02,
    resamples: int = 2000,
    seed: int = 0,
) -> Comparison:
    """Compare ``runs[1:]`` with the baseline ``runs[0]``, case by case.

    ``noise`` is the relative difference below which a case counts as "same"
    even when its interval excludes 1 (clocks and thermals move results by
    about that much between otherwise equal runs). ``resamples=0`` skips the
    bootstrap: point ratios only, no intervals.
    """
    if len(runs) < 2:
        raise GpuportError("compare needs at least two runs (the first is the baseline)")
    if not 0.0 < confidence < 1.0:
        raise GpuportError(f"confidence must be between 0 and 1, not {confidence}")
    if not (math.isfinite(noise) and noise >= 0.0):
        raise GpuportError(f"noise threshold must be a non-negative number, not {noise}")
    if resamples < 0:
        raise GpuportError(f"resamples must be 0 or more, not {resamples}")
    names = _display_names(runs)
    by_key = [_index(run) for run in runs]
    keys: dict[tuple[str, str], None] = {}
    for index in by_key:
        keys.update(dict.fromkeys(index))
    asked = resamples
    boots = len(keys) * len(runs)  # bootstrap sample sets, at most one per case and run
    if boots and resamples * boots > BOOTSTRAP_BUDGET:
        resamples = min(resamples, max(BOOTSTRAP_MIN, BOOTSTRAP_BUDGET // boots))
    settings = _Settings(confidence, noise, resamples, seed)
    rows = [
        _compare_row(key, [index.get(key) for index in by_key], names, settings) for key in keys
    ]
    geomean = [_geomean([row.ratios[i] for row in rows]) for i in range(len(runs))]
    return Comparison(
        runs=names,
        run_ids=[run.id for run in runs],
        devices=[run.device.name for run in runs],
        confidence=confidence,
        noise_threshold=noise,
        rows=rows,
        geomean=geomean,
        families=_families(rows, len(runs)),
        notes=_summary_notes(rows, names)
        + (
            [
                f"bootstrap resamples per case lowered from {asked} to {resamples} for "
                f"{len(keys)} cases (a bound on compare's time); intervals are coarser"
            ]
            if resamples < asked
            else []
        ),
    )


def _families(rows: list[CompareRow], n_runs: int) -> list[FamilySummary]:
    """One geomean per workload family and run, with how many cases were significant."""
    grouped: dict[str, list[CompareRow]] = {}
    for row in rows:
        grouped.setdefault(row.family, []).append(row)
    out = []
    for family in sorted(grouped, key=lambda f: (FAMILY_ORDER.index(f), f)):
        members = grouped[family]
        out.append(
            FamilySummary(
                family=family,
                workloads=list(dict.fromkeys(r.workload for r in members)),
                cases=len(members),
                geomean=[_geomean([r.ratios[i] for r in members]) for i in range(n_runs)],
                significant=[
                    sum(r.verdicts[i] in ("faster", "slower") for r in members)
                    for i in range(n_runs)
                ],
                unstable=[
                    sum(bool(r.unstable[i]) for r in members if i < len(r.unstable))
                    for i in range(n_runs)
                ],
            )
        )
    return out


def _summary_notes(rows: list[CompareRow], names: list[str]) -> list[str]:
    """One line for the noisy cases of each run, instead of one line per case and run."""
    notes = []
    for i, name in enumerate(names):
        noisy = [r for r in rows if i < len(r.unstable) and r.unstable[i]]
        if not noisy:
            continue
        by_family: dict[str, int] = {}
        for r in noisy:
            by_family[r.family] = by_family.get(r.family, 0) + 1
        parts = ", ".join(f"{n} {f}" for f, n in by_family.items())
        notes.append(
            f"{len(noisy)} of {len(rows)} cases unstable on {name} (robust CV > 5 % or two "
            f"modes: {parts}); their intervals are wide, so many read 'no significant change'"
            " - rerun on an idle machine for a sharper answer"
        )
    return notes


@dataclass(frozen=True)
class _Settings:
    confidence: float
    noise: float
    resamples: int
    seed: int


def _display_names(runs: list[BenchRun]) -> list[str]:
    """Run names for column headers, made unique so two columns never read the same."""
    names = [run.display_name for run in runs]
    counts = Counter(names)
    names = [
        f"{name} ({run.id[:8]})" if counts[name] > 1 and run.label else name
        for name, run in zip(names, runs, strict=True)
    ]
    counts = Counter(names)
    return [f"{name} #{i + 1}" if counts[name] > 1 else name for i, name in enumerate(names)]


def _index(run: BenchRun) -> dict[tuple[str, str], BenchResult]:
    """Results by (workload, case) in run order; a repeated key keeps its first result."""
    index: dict[tuple[str, str], BenchResult] = {}
    for result in run.results:
        index.setdefault(result.key, result)
    return index


def _value(result: BenchResult | None) -> float | None:
    """The headline value of an ok result, or None when there is nothing to compare."""
    if result is None or result.status != CaseStatus.OK:
        return None
    value = result.value
    time = result.time
    if value is None and result.higher_is_better and result.work_per_iter and time and time.median:
        value = result.work_per_iter / time.median
    if value is None or not math.isfinite(value) or value <= 0:
        return None
    return value


def _timing(result: BenchResult | None) -> _Timing | None:
    if result is None:
        return None
    samples = result.samples
    if math.isfinite(sum(samples)):  # fast path: no NaN or inf (NaN would break sorting)
        xs = sorted(samples)
        if xs and xs[0] <= 0:
            xs = xs[bisect.bisect_right(xs, 0.0) :]
    else:
        xs = sorted(s for s in samples if math.isfinite(s) and s > 0)
    if len(xs) < MIN_SAMPLES:
        return None
    n = len(xs)
    median = xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
    return _Timing(xs, median)


def _compare_row(
    key: tuple[str, str],
    results: list[BenchResult | None],
    names: list[str],
    settings: _Settings,
) -> CompareRow:
    workload, case = key
    present = [r for r in results if r is not None]
    reference = next((r for r in present if r.status == CaseStatus.OK), present[0])
    notes: list[str] = []
    values = [_value(r) for r in results]
    for name, result, value in zip(names, results, values, strict=True):
        notes += _result_notes(name, result, value, reference)
    base, base_value = results[0], values[0]
    base_timing = _timing(base) if base_value is not None else None
    base_medians: list[float] | None = None
    ratios: list[float | None] = [1.0 if base_value is not None else None]
    lows: list[float | None] = [None]
    highs: list[float | None] = [None]
    verdicts: list[Verdict] = ["same" if base_value is not None else "n/a"]
    for i in range(1, len(results)):
        result, value = results[i], values[i]
        if base is None or result is None or base_value is None or value is None:
            ratios.append(None)
            lows.append(None)
            highs.append(None)
            verdicts.append("n/a")
            continue
        if result.unit != base.unit or result.higher_is_better != base.higher_is_better:
            ratios.append(None)  # the note was added above; a ratio would be meaningless
            lows.append(None)
            highs.append(None)
            verdicts.append("n/a")
            continue
        ratio = value / base_value if base.higher_is_better else base_value / value
        low = high = None
        timing = _timing(result)
        if base_timing is not None and timing is not None and settings.resamples > 0:
            if base_medians is None:
                rng = _rng(settings.seed, workload, case, 0)
                base_medians = _boot_medians(base_timing.sorted_samples, rng, settings.resamples)
            rng = _rng(settings.seed, workload, case, i)
            medians = _boot_medians(timing.sorted_samples, rng, settings.resamples)
            low, high = _interval(ratio, base_timing, base_medians, timing, medians, settings)
        ratios.append(ratio)
        lows.append(low)
        highs.append(high)
        verdicts.append(_verdict(ratio, low, high, settings.noise))
    return CompareRow(
        workload=workload,
        case=case,
        unit=reference.unit,
        higher_is_better=reference.higher_is_better,
        values=values,
        ratios=ratios,
        ci_low=lows,
        ci_high=highs,
        verdicts=verdicts,
        notes=notes,
        family=family_of(workload),
        unstable=[bool(r is not None and r.unstable) for r in results],
    )


def _result_notes(
    name: str, result: BenchResult | None, value: float | None, reference: BenchResult
) -> list[str]:
    """Why a case has no ratio on this run, or why its ratio should be read with care."""
    if result is None:
        return [f"missing on {name}"]
    if result.status != CaseStatus.OK:
        return [f"{result.status.value} on {name}: {result.reason or 'no reason given'}"]
    notes: list[str] = []
    if value is None:
        notes.append(f"no positive value on {name}")
    if result is not reference:
        if result.unit != reference.unit:
            notes.append(
                f"not comparable: unit on {name} is {result.unit or 'none'!r}, "
                f"not {reference.unit or 'none'!r}"
            )
        if result.higher_is_better != reference.higher_is_better:
            notes.append(f"not comparable: {name} counts the opposite direction as better")
        if result.params != reference.params:
            notes.append(f"params differ on {name}: {_params_diff(reference, result)}")
    return notes  # instability is summarised once per run (Comparison.notes), not per case


def _params_diff(reference: BenchResult, other: BenchResult) -> str:
    keys = sorted(set(reference.params) | set(other.params))
    diffs = [
        f"{k}={other.params.get(k, '-')!r} vs {reference.params.get(k, '-')!r}"
        for k in keys
        if reference.params.get(k) != other.params.get(k)
    ]
    more = f" (+{len(diffs) - 3} more)" if len(diffs) > 3 else ""
    return ", ".join(diffs[:3]) + more


def _rng(seed: int, workload: str, case: str, run_index: int) -> random.Random:
    # A str seed is hashed with SHA-512 by random.Random: stable across processes
    # and Python versions, unlike hash().
    return random.Random(f"{seed}\x00{workload}\x00{case}\x00{run_index}")  # noqa: S311


def _gamma_sampler(shape: float, rng: random.Random) -> Callable[[], float]:
    """Gamma(shape) draws for shape >= 1 by Marsaglia & Tsang (2000), an exact rejection method.

    About four times faster than ``random.gammavariate`` because almost every
    draw is accepted by the cheap squeeze test; that is what keeps a large
    comparison near a second in pure Python.
    """
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    gauss, uniform, log = rng.gauss, rng.random, math.log

    def draw() -> float:
        while True:
            z = gauss()
            v = 1.0 + c * z
            if v <= 0.0:
                continue
            v = v * v * v
            u = uniform()
            zz = z * z
            if u < 1.0 - 0.0331 * zz * zz:
                return d * v
            if u > 0.0 and log(u) < 0.5 * zz + d * (1.0 - v + log(v)):
                return d * v

    return draw


def _beta_sampler(a: float, b: float, rng: random.Random) -> Callable[[], float]:
    """Beta(a, b) draws for a, b >= 1 as X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b)."""
    x, y = _gamma_sampler(a, rng), _gamma_sampler(b, rng)

    def draw() -> float:
        gx = x()
        return gx / (gx + y())

    return draw


def _boot_medians(xs: list[float], rng: random.Random, resamples: int) -> list[float]:
    """Medians of ``resamples`` with-replacement resamples of sorted ``xs`` (exact, see module).

    ``int(u * n)`` maps a uniform in [0, 1) to the 0-based index of the draw
    ``x[ceil(n * u)]`` (they differ only on a set of probability zero).
    """
    n = len(xs)
    last = n - 1
    k = (n + 1) // 2  # the lower median's rank; the median itself for odd n
    beta = _beta_sampler(k, n + 1 - k, rng)
    if n % 2:
        return [xs[min(last, int(beta() * n))] for _ in range(resamples)]
    rest = n - k
    uniform = rng.random
    out: list[float] = []
    for _ in range(resamples):
        u = beta()
        # the smallest of the other n - k uniforms, which lie in (u, 1)
        v = u + (1.0 - u) * -math.expm1(math.log(1.0 - uniform()) / rest)
        out.append((xs[min(last, int(u * n))] + xs[min(last, int(v * n))]) / 2)
    return out


def _interval(
    ratio: float,
    base: _Timing,
    base_medians: list[float],
    other: _Timing,
    other_medians: list[float],
    settings: _Settings,
) -> tuple[float, float]:
    """Percentile interval of the ratio.

    The headline value is a constant times the median time (latency) or its
    inverse (throughput), so either way the oriented ratio scales as
    ``median_A / median_B``: each resample gives
    ``ratio * (m_A* / m_A) / (m_B* / m_B)``.
    """
    scale = ratio * other.median / base.median
    draws = sorted(scale * a / b for a, b in zip(base_medians, other_medians, strict=True) if b > 0)
    tail = (1.0 - settings.confidence) / 2
    return _quantile(draws, tail), _quantile(draws, 1.0 - tail)


def _quantile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default 'linear' method)."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _verdict(ratio: float, low: float | None, high: float | None, noise: float) -> Verdict:
    """A verdict that agrees with the interval.

    Within the noise threshold: "same". An interval that contains no change: "no
    significant change", however large the point estimate (−88 % [−91 %, +25 %] is not
    "same", and not "slower" either). Otherwise the direction of the change.
    """
    if abs(ratio - 1.0) < noise:
        return "same"
    if low is not None and high is not None and low <= 1.0 <= high:
        return "no significant change"
    return "faster" if ratio > 1.0 else "slower"


def _geomean(ratios: list[float | None]) -> float | None:
    logs = [math.log(r) for r in ratios if r is not None and r > 0]
    if not logs:
        return None
    return math.exp(sum(logs) / len(logs))
