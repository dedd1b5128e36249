"""`gpuport bench` and `gpuport compare` end to end, through the real CLI, on this CPU."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from gpuport.bench.history import History
from gpuport.bench.model import BenchResult, BenchRun, CaseStatus, DeviceInfo
from gpuport.bench.timing import summarize
from gpuport.bench.workloads import SUITE_ORDER
from gpuport.models import EnvFingerprint, load_result
from tests.conftest import run_subprocess


def test_quick_suite_runs_every_workload_and_records_the_run(tmp_path: Path) -> None:
    history = tmp_path / "h.sqlite"
    run_file = tmp_path / "run.json"
    res = run_subprocess(
        "bench", "--quick", "--save", str(run_file), "--label", "cpu-quick",
        "--format", "json", "--no-progress", env={"GPUPORT_HISTORY": str(history)},
        timeout=600,  # every workload, timed: over 120 s on a shared 2-core machine at load 8
    )  # fmt: skip
    assert res.code == 0, res.err
    assert "Traceback" not in res.err
    run = load_result(run_file, BenchRun)
    assert json.loads(res.out)["id"] == run.id  # stdout and the saved file are the same run
    ran = {r.workload for r in run.results}
    assert ran == set(SUITE_ORDER) - {"user"}  # user runs only with --step
    for workload in ran:
        ok = [r for r in run.results if r.workload == workload and r.status is CaseStatus.OK]
        assert ok, f"{workload}: no case ran"
        for r in ok:
            assert r.value is not None and r.value > 0
            assert r.time is not None and r.time.n == len(r.samples) >= 3
    for r in run.results:
        if r.status is not CaseStatus.OK:
            assert r.status is CaseStatus.SKIPPED and r.reason
    coll = [r for r in run.results if r.workload == "collectives" and r.status is CaseStatus.OK]
    assert all(r.metrics["world"] == 2 and r.metrics["backend"] == "gloo" for r in coll)
    assert run.device.backend == "cpu" and run.label == "cpu-quick"
    assert History(history).get("cpu-quick").id == run.id
    assert "cases ok" in res.err and run.id[:8] in res.err

    # The same run against itself: every ratio is 1 and every verdict "same".
    res = run_subprocess(
        "compare", str(run_file), "cpu-quick", "--format", "csv",
        env={"GPUPORT_HISTORY": str(history)},
    )  # fmt: skip
    assert res.code == 0, res.err
    rows = [r for r in csv.DictReader(io.StringIO(res.out)) if r["ratio"]]
    assert rows and all(float(r["ratio"]) == pytest.approx(1.0) for r in rows)
    assert {r["verdict"] for r in rows} == {"same"}


def _run(label: str, seconds: dict[str, float], unit: str = "TFLOPS") -> BenchRun:
    results = []
    for case, t in seconds.items():
        samples = [t * (1 + 0.001 * ((i % 7) - 3)) for i in range(200)]
        stats = summarize(samples)
        results.append(
            BenchResult(
                workload="gemm", case=case, unit=unit, value=2e12 / stats.median / 1e12,
                time=stats, samples=samples, work_per_iter=2e12,
            )
        )  # fmt: skip
    results.append(
        BenchResult(workload="gemm", case="fp8", status=CaseStatus.SKIPPED, reason="no fp8")
    )
    return BenchRun(
        id=label * 8, label=label, suite="quick", env=EnvFingerprint.collect(),
        device=DeviceInfo(backend="cuda", name=f"GPU {label}"), started="2026-11-22T00:00:00",
        duration_s=1.0, results=results,
    )  # fmt: skip


def test_compare_two_recorded_runs_by_hand(tmp_path: Path) -> None:
    # B is exactly twice as fast on bf16 (1 ms vs 2 ms) and 25 % slower on fp16 (4 ms vs 5 ms).
    a = _run("a", {"bf16": 2e-3, "fp16": 4e-3})
    b = _run("b", {"bf16": 1e-3, "fp16": 5e-3})
    fa, fb = tmp_path / "a.json", tmp_path / "b.json"
    fa.write_text(a.model_dump_json())
    fb.write_text(b.model_dump_json())
    res = run_subprocess("compare", str(fa), str(fb), "--format", "json")
    assert res.code == 0, res.err
    rows = {r["case"]: r for r in json.loads(res.out)["rows"]}
    assert rows["bf16"]["ratios"][1] == pytest.approx(2.0, rel=1e-3)
    assert rows["bf16"]["verdicts"][1] == "faster"
    assert rows["bf16"]["ci_low"][1] <= 2.0 <= rows["bf16"]["ci_high"][1]
    assert rows["fp16"]["ratios"][1] == pytest.approx(0.8, rel=1e-3)
    assert rows["fp16"]["verdicts"][1] == "slower"
    assert rows["fp8"]["verdicts"][1] == "n/a"
    md = run_subprocess("compare", str(fa), str(fb), "--format", "md")
    assert md.code == 0
    assert "| Workload | a | b | Δ |" in md.out
    assert "+100.0%" in md.out and "-20.0%" in md.out
    slower = run_subprocess("compare", str(fa), str(fb), "--fail-on-slower", "--format", "csv")
    assert slower.code == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bench", "--workload", "gem"], "did you mean 'gemm'"),
        (["bench", "--dtype", "fp4"], "unknown --dtype"),
        (["bench", "--fp8-format", "e5m2"], "--fp8-format"),
        (["bench", "--world", "1"], "--world"),
        (["bench", "--workload", "user"], "--step"),
        (["bench", "--step", "no_such_module_xyz:step"], "no_such_module_xyz"),
        (["compare", "only-one"], "at least two runs"),
        (["compare", "missing.json", "other.json"], "no such file"),
        (["compare", "a", "b", "--format", "xml"], "--format"),
    ],
)
def test_bad_input_is_one_line_exit_2(args: list[str], message: str) -> None:
    res = run_subprocess(*args, "--no-progress" if args[0] == "bench" else "--noise", *(
        [] if args[0] == "bench" else ["0.02"]))  # fmt: skip
    assert res.code == 2, (res.code, res.err)
    assert message in res.err
    assert "Traceback" not in res.err
    assert len(res.err.strip().splitlines()) == 1


def test_failed_case_sets_exit_1_but_the_run_is_still_written(tmp_path: Path) -> None:
    step = tmp_path / "step.py"
    step.write_text("def step():\n    raise RuntimeError('boom in user code')\n")
    out = tmp_path / "run.json"
    res = run_subprocess(
        "bench", "--step", f"{step}:step", "--save", str(out), "--no-progress", "--no-history"
    )
    assert res.code == 1, res.err
    run = load_result(out, BenchRun)
    (only,) = run.results
    assert only.status is CaseStatus.FAILED and "boom in user code" in (only.reason or "")
    assert "boom in user code" in res.out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--save", "."], "it is a folder"),
        (["--output", "no/such/folder/run.json"], "does not exist"),
        (["--history", "README.md"], "not a database"),
    ],
)
def test_unwritable_destinations_are_refused_before_the_suite_runs(
    extra: list[str], message: str
) -> None:
    # gemm on the CPU takes well under a second; the point is that nothing ran: no table,
    # no "cases ok" summary, only the one-line error.
    res = run_subprocess("bench", "-w", "gemm", "--no-progress", *extra)
    assert res.code == 2, res.err
    assert message in res.err
    assert "cases ok" not in res.err and res.out == ""
