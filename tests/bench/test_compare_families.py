"""compare summarises honestly: family geomeans, verdicts that agree with the interval,
one summary line for the noisy cases (issue 17).

The fixture is shaped like the field trial's 2-thread vs 1-thread CPU runs: compute and
memory cases ~+60-98 % faster with tight timings, nine 2-process gloo collectives whose
timings scatter over an order of magnitude. An all-case geomean mixed them to +8.3 %.
"""

from __future__ import annotations

import io
import math
import random

from rich.console import Console

from gpuport.bench.compare import compare, family_of
from gpuport.bench.model import BenchResult, BenchRun, DeviceInfo
from gpuport.bench.run import is_unstable
from gpuport.bench.timing import summarize
from gpuport.models import EnvFingerprint
from gpuport.render.compare_render import compare_markdown, compare_terminal

ENV = EnvFingerprint.collect()


def _tight(center: float, seed: int, n: int = 61, rel: float = 0.02) -> list[float]:
    rng = random.Random(seed)  # noqa: S311 - reproducible test data
    return [center * (1 + rng.uniform(-rel, rel)) for _ in range(n)]


def _scattered(center: float, seed: int, n: int = 31) -> list[float]:
    """Log-uniform over center/8 ... center*8: an oversubscribed collective."""
    rng = random.Random(seed)  # noqa: S311
    return [center * math.exp(rng.uniform(-2.1, 2.1)) for _ in range(n)]


def _result(workload: str, case: str, samples: list[float], work: float) -> BenchResult:
    stats = summarize(samples)
    return BenchResult(
        workload=workload,
        case=case,
        unit="GB/s" if workload in ("membw", "collectives") else "TFLOPS",
        value=work / stats.median,
        samples=samples,
        time=stats,
        work_per_iter=work,
        unstable=is_unstable(stats),
    )


def _run(label: str, threads: int) -> BenchRun:
    speed = {1: 1.0, 2: 1.8}[threads]  # compute and memory: +80 % with the second thread
    results = []
    for i, case in enumerate(("bf16 256x256x256", "fp32 256x256x256", "fp32 512x512x512")):
        results.append(_result("gemm", case, _tight(1e-3 / speed, seed=10 * threads + i), 1e9))
    for i, case in enumerate(("copy", "triad")):
        results.append(_result("membw", case, _tight(5e-3 / speed, seed=20 * threads + i), 1e8))
    for i in range(9):  # gloo on 2 cores: slower with 2 threads each, and all over the place
        samples = _scattered(50e-6 * (2.5 if threads == 2 else 1.0), seed=30 * threads + i)
        results.append(_result("collectives", f"all_reduce {4 << i}KiB", samples, 4096.0))
    return BenchRun(
        id=f"run-{label}-0123456789",
        label=label,
        suite="quick",
        env=ENV,
        device=DeviceInfo(backend="cpu", name="AMD EPYC"),
        started="2026-11-25T08:00:00+00:00",
        duration_s=6.0,
        results=results,
    )


def test_compute_gains_are_reported_as_gains_and_collectives_do_not_drag_them() -> None:
    c = compare([_run("cpu-1t", 1), _run("cpu-2t", 2)], resamples=500)
    fams = {f.family: f for f in c.families}
    assert set(fams) == {"compute", "memory", "communication"}
    compute = fams["compute"].geomean[1]
    assert compute is not None and abs(compute - 1.8) < 0.05  # +80 %, not diluted
    memory = fams["memory"].geomean[1]
    assert memory is not None and abs(memory - 1.8) < 0.05
    assert fams["compute"].significant[1] == 3  # every GEMM case a significant gain
    gemm_rows = [r for r in c.rows if r.workload == "gemm"]
    assert all(r.verdicts[1] == "faster" for r in gemm_rows)
    # The all-case geomean is dragged far below the compute figure by the collectives.
    overall = c.geomean[1]
    assert overall is not None and overall < compute - 0.3
    text = compare_markdown(c)
    assert "compute (gemm, attention)" not in text  # only the workloads present are named
    line = next(x for x in text.splitlines() if x.startswith("* compute (gemm)"))
    assert "+80" in line or "+79" in line or "+81" in line
    assert "all cases, mixing the families" in text


def test_a_verdict_never_contradicts_its_interval() -> None:
    c = compare([_run("cpu-1t", 1), _run("cpu-2t", 2)], resamples=500)
    for row in c.rows:
        low, high, verdict = row.ci_low[1], row.ci_high[1], row.verdicts[1]
        assert low is not None and high is not None
        if low <= 1.0 <= high:
            assert verdict in ("same", "no significant change"), (row.case, low, high)
        elif verdict != "same":
            assert verdict == ("faster" if low > 1.0 else "slower"), (row.case, low, high)
    coll = [r for r in c.rows if r.workload == "collectives"]
    assert any(r.verdicts[1] == "no significant change" for r in coll)


def test_noisy_cases_get_one_summary_line_not_one_each() -> None:
    c = compare([_run("cpu-1t", 1), _run("cpu-2t", 2)], resamples=200)
    assert all(not any("unstable" in n for n in r.notes) for r in c.rows)
    noisy = [n for n in c.notes if "unstable" in n]
    assert len(noisy) == 2  # one per run, both runs have scattered collectives
    assert "9 communication" in noisy[0] and "of 14 cases unstable on cpu-1t" in noisy[0]
    buf = io.StringIO()
    compare_terminal(c, Console(file=buf, width=200))
    out = buf.getvalue()
    assert out.count("unstable on") == 2
    assert "geomean by workload family" in out


def test_families() -> None:
    assert family_of("gemm") == family_of("attention") == "compute"
    assert family_of("membw") == "memory"
    assert family_of("collectives") == "communication"
    assert family_of("resnet50") == family_of("decode") == "model"
    assert family_of("something-new") == "other"
