"""Recompute a bench run's derived figures from its raw samples, on load (issue 14).

A run file keeps every raw sample so ``compare`` can resample them; everything else about
timing is derived from them: the ``time`` statistics, the headline ``value`` (work per
iteration / median / the unit's scale), ``peak_pct``/``achievable_pct`` and ``unstable``.
:func:`run_problem` recomputes each and names the first that does not follow, together
with samples that cannot be times (NaN, infinite, zero or negative), a duplicated case,
and a duration that is not a time. It catches a consistent-looking edit of one figure;
the content digest (:mod:`gpuport.integrity`) catches the rest.
"""

from __future__ import annotations

import math

from gpuport.bench.model import BenchResult, BenchRun, CaseStatus, Stats
from gpuport.bench.timing import summarize

__all__ = ["UNIT_SCALE", "run_problem"]

#: The ``scale`` every workload divides its headline by, per unit (see the ``Case``
#: definitions in ``bench/workloads``): TFLOPS is FLOP/s / 1e12, GB/s is B/s / 1e9.
UNIT_SCALE: dict[str, float] = {
    "TFLOPS": 1e12,
    "GB/s": 1e9,
    "tokens/s": 1.0,
    "images/s": 1.0,
    "items/s": 1.0,
    "steps/s": 1.0,
}
_REL = 1e-9  # what float rounding can explain

#: a sample is seconds per iteration: anything past a year is not a measurement (and sums
#: of samples near the float limit overflow: fuzzing, session 8)
MOST_SAMPLE_S = 3.2e7


def _close(a: float, b: float, rel: float = _REL) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-300)


def run_problem(run: BenchRun) -> str | None:
    """The first figure of ``run`` that does not follow from its raw data, or None."""
    if not (math.isfinite(run.duration_s) and run.duration_s >= 0):
        return f"duration_s is {run.duration_s}, not a duration"
    seen: set[tuple[str, str]] = set()
    for result in run.results:
        name = f"{result.workload}/{result.case}"
        if result.key in seen:
            return f"{name} appears twice"
        seen.add(result.key)
        problem = _result_problem(result)
        if problem:
            return f"{name}: {problem}"
    return None


def _result_problem(r: BenchResult) -> str | None:
    if any(not (math.isfinite(s) and 0 < s < MOST_SAMPLE_S) for s in r.samples):
        bad = next(s for s in r.samples if not (math.isfinite(s) and 0 < s < MOST_SAMPLE_S))
        return f"a sample of {bad} s is not a time"
    if r.status is not CaseStatus.OK:
        return None
    if r.value is not None and not (math.isfinite(r.value) and r.value > 0):
        return f"value {r.value} is not a positive figure"
    if r.time is None:  # a summary-only result (no timing to check it against)
        return None
    if not r.samples:
        return f"time.n is {r.time.n} but there are no samples"
    problem = _stats_problem(r.time, summarize(r.samples))
    if problem:
        return problem
    median = r.time.median
    if r.value is not None and r.work_per_iter is not None:
        if not (math.isfinite(r.work_per_iter) and r.work_per_iter > 0):
            return f"work_per_iter {r.work_per_iter} is not a positive amount"
        scale = UNIT_SCALE.get(r.unit)
        implied = r.work_per_iter / median / r.value  # the scale this value was made with
        if scale is not None and not _close(implied, scale):
            expected = r.work_per_iter / median / scale
            return f"value {r.value:g} {r.unit} is not work/median ({expected:g})"
        if scale is None and not _close(implied, 10 ** round(math.log10(implied))):
            return f"value {r.value:g} {r.unit} is not work/median at any scale"
    for pct, ref, field in (
        (r.peak_pct, r.peak, "peak_pct"),
        (r.achievable_pct, r.achievable, "achievable_pct"),
    ):
        if (
            pct is not None
            and r.value is not None
            and ref
            and abs(pct - 100 * r.value / ref) > 0.006
        ):
            return f"{field} {pct} is not value/{field[:-4]} ({100.0 * r.value / ref:.2f})"
    return None


def _stats_problem(stored: Stats, fresh: Stats) -> str | None:
    if stored.n != fresh.n:
        return f"time.n is {stored.n} but there are {fresh.n} samples"
    for field in ("median", "mean", "min", "max", "p10", "p90", "stdev", "cv"):
        a, b = getattr(stored, field), getattr(fresh, field)
        if not (math.isfinite(a) and _close(a, b, 1e-6)):
            return f"time.{field} is {a:g}, but the samples give {b:g}"
    return None
