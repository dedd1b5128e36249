"""The suite runner: one failing case never ends a run, and the run file round-trips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuport.bench import run as runmod
from gpuport.bench.model import BenchRun, CaseStatus
from gpuport.bench.registry import BenchContext, Case, Measurement, Skip, Workload
from gpuport.bench.timing import summarize
from gpuport.knowledge.gpus import Achieved, GpuSpec
from gpuport.models import GpuportError, load_result


def _ok(ctx: BenchContext) -> Measurement:
    a = ctx.torch.randn(32, 32)
    return ctx.measure(lambda: a @ a, policy=ctx.kernel_policy, work_per_iter=2 * 32**3)


def _skip(ctx: BenchContext) -> Measurement:
    raise Skip("fp8 GEMM needs a GPU with FP8 matrix units")


def _oom(ctx: BenchContext) -> Measurement:
    raise RuntimeError("CUDA out of memory. Tried to allocate 80.00 GiB")


def _unsupported(ctx: BenchContext) -> Measurement:
    raise RuntimeError("\"addmm_impl_cpu_\" not implemented for 'Float8_e4m3fn'")


def _bug(ctx: BenchContext) -> Measurement:
    raise ValueError("shape mismatch\nsecond line is not shown")


FAKE = Workload(
    name="fake",
    summary="test workload",
    cases=lambda ctx: [
        Case("ok", _ok, params={"n": 32}),
        Case("skip", _skip),
        Case("oom", _oom),
        Case("unsupported", _unsupported),
        Case("bug", _bug),
        Case("ok-after", _ok),
    ],
)
NEEDS_MISSING = Workload(
    name="needs", summary="", cases=lambda ctx: [Case("x", _ok)], needs=("no_such_module_xyz",)
)
WHOLE_SKIP = Workload(name="whole", summary="", cases=lambda ctx: _raise(Skip("needs 2 GPUs")))


def _raise(exc: Exception) -> list[Case]:
    raise exc


@pytest.fixture
def fake_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = {w.name: w for w in (FAKE, NEEDS_MISSING, WHOLE_SKIP)}
    monkeypatch.setattr(runmod, "_load_workloads", lambda: registry)


@pytest.mark.usefixtures("fake_registry")
def test_failures_are_recorded_and_the_suite_goes_on(tmp_path: Path) -> None:
    seen: list[str] = []

    class Obs:
        def planned(self, total: int) -> None:
            seen.append(f"planned {total}")

        def case_started(self, workload: str, case: str) -> None:
            seen.append(f"start {case}")

        def case_finished(self, result: object) -> None:
            seen.append("end")

    run = runmod.run_suite(runmod.BenchOptions(label="t"), Obs())
    by_case = {r.case: r for r in run.results}
    assert by_case["ok"].status is CaseStatus.OK
    assert by_case["ok-after"].status is CaseStatus.OK  # ran after a bug in the same workload
    assert by_case["skip"].status is CaseStatus.SKIPPED
    assert by_case["skip"].reason == "fp8 GEMM needs a GPU with FP8 matrix units"
    assert by_case["oom"].status is CaseStatus.SKIPPED
    assert by_case["oom"].reason is not None and by_case["oom"].reason.startswith("out of memory")
    assert by_case["unsupported"].status is CaseStatus.SKIPPED
    assert by_case["bug"].status is CaseStatus.FAILED
    assert by_case["bug"].reason == "ValueError: shape mismatch"
    whole = [r for r in run.results if r.case == "(all)"]
    assert {r.workload for r in whole} == {"needs", "whole"}
    assert all(r.status is CaseStatus.SKIPPED for r in whole)
    assert any("no_such_module_xyz" in (r.reason or "") for r in whole)
    assert seen[0] == "planned 6" and seen.count("end") == 6
    ok = by_case["ok"]
    assert ok.time is not None and ok.value is not None
    assert ok.value == pytest.approx(2 * 32**3 / ok.time.median / 1e12)
    assert ok.samples and len(ok.samples) == ok.time.n
    assert run.device.backend == "cpu"
    assert run.env.gpuport_version and run.suite == "quick" and run.label == "t"


@pytest.mark.usefixtures("fake_registry")
def test_run_file_round_trip(tmp_path: Path) -> None:
    run = runmod.run_suite(runmod.BenchOptions(workloads=["fake"]))
    path = tmp_path / "run.json"
    path.write_text(run.model_dump_json(indent=2))
    again = load_result(path, BenchRun)
    assert again == run
    data = json.loads(path.read_text())
    assert data["kind"] == "gpuport.bench" and data["schema_version"].startswith("1.")
    data["schema_version"] = "9.0"
    path.write_text(json.dumps(data))
    with pytest.raises(GpuportError, match="schema version"):
        load_result(path, BenchRun)
    path.write_text(json.dumps({"kind": "gpuport.scan", "schema_version": "1.0"}))
    with pytest.raises(GpuportError, match=r"not a gpuport\.bench file"):
        load_result(path, BenchRun)


@pytest.mark.usefixtures("fake_registry")
def test_unknown_workload_suggests_the_close_one() -> None:
    with pytest.raises(GpuportError, match="did you mean 'fake'"):
        runmod.select_workloads(["fakee"])
    assert [w.name for w in runmod.select_workloads(["whole,fake"])] == ["fake", "whole"]


def _spec(**kw: object) -> GpuSpec:
    base: dict[str, object] = dict(
        key="x",
        name="X",
        vendor="nvidia",
        arch="sm_90",
        memory_gb=80,
        bandwidth_gbs=2000,
        peak_tflops={"bf16": 8.0},
        tdp_w=700,
        wave_size=32,
        l2_mb=50,
        interconnect_gbs=400,
        achievable={
            "gemm_bf16": Achieved(value=4.0, source="https://example.org/a"),
            "membw_copy": Achieved(value=1600, source="https://example.org/b"),
        },
        sources=["https://example.org"],
        checked="2026-11-22",
    )
    base.update(kw)
    return GpuSpec.model_validate(base)


def test_percent_of_peak_and_of_published_achievable() -> None:
    m = Measurement(samples=[0.5, 0.5, 0.5], stats=summarize([0.5, 0.5, 0.5]), work_per_iter=2e12)
    gemm = runmod.to_result(FAKE, Case("bf16", _ok, peak=("tflops", "bf16")), m, _spec())
    assert gemm.value == pytest.approx(4.0)  # 2e12 FLOP in 0.5 s
    assert gemm.peak_pct == pytest.approx(50.0)
    assert gemm.achievable_pct == pytest.approx(100.0)
    copy = runmod.to_result(
        FAKE,
        Case("copy", _ok, unit="GB/s", scale=1e9, peak=("bandwidth", "copy")),
        Measurement(samples=[1.0], stats=summarize([1.0]), work_per_iter=1.8e12),
        _spec(),
    )
    assert copy.value == pytest.approx(1800.0)
    assert copy.peak_pct == pytest.approx(90.0)
    assert copy.achievable_pct == pytest.approx(112.5)
    bus = runmod.to_result(
        FAKE,
        Case("ar", _ok, unit="GB/s", scale=1e9, peak=("busbw", "allreduce")),
        Measurement(samples=[1.0], stats=summarize([1.0]), work_per_iter=2e11),
        _spec(),
    )
    assert bus.peak_pct == pytest.approx(50.0) and bus.achievable is None
    no_spec = runmod.to_result(FAKE, Case("bf16", _ok, peak=("tflops", "bf16")), m, None)
    assert no_spec.peak_pct is None and no_spec.value == pytest.approx(4.0)
    noisy = Measurement(samples=[1.0, 2.0], stats=summarize([1.0, 2.0]), work_per_iter=1.0)
    assert runmod.to_result(FAKE, Case("n", _ok), noisy, None).unstable


def test_settings_record_env_that_changes_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTORCH_TUNABLEOP_ENABLED", "1")
    monkeypatch.setenv("UNRELATED_VAR", "x")
    snap = runmod.settings_snapshot(None)
    assert snap == {"PYTORCH_TUNABLEOP_ENABLED": "1"} | {
        k: v for k, v in snap.items() if k != "PYTORCH_TUNABLEOP_ENABLED"
    }
    assert "UNRELATED_VAR" not in snap


def test_telemetry_summary_keeps_the_worst_reading() -> None:
    from gpuport.bench.model import Telemetry

    readings = [
        Telemetry(sm_clock_mhz=1980, power_w=300, temperature_c=60),
        Telemetry(sm_clock_mhz=1410, power_w=690, temperature_c=81, throttle_reasons=["power"]),
        Telemetry(sm_clock_mhz=1750, power_w=650, temperature_c=78, throttle_reasons=["thermal"]),
    ]
    s = runmod.summarize_telemetry(readings)
    assert s is not None
    assert (s.sm_clock_mhz, s.power_w, s.temperature_c) == (1410, 690, 81)
    assert s.throttle_reasons == ["power", "thermal"]
    assert runmod.summarize_telemetry([]) is None


def test_telemetry_is_sampled_while_the_case_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    import time as _time

    from gpuport.bench.model import DeviceInfo, Telemetry

    calls: list[float] = []

    def fake_telemetry(info: object) -> Telemetry:
        calls.append(_time.perf_counter())
        return Telemetry(sm_clock_mhz=1000 + len(calls))

    monkeypatch.setattr("gpuport.platform.telemetry", fake_telemetry)
    gpu = DeviceInfo(backend="cuda", name="fake")
    with runmod.TelemetrySampler(gpu, interval=0.01) as sampler:
        _time.sleep(0.2)  # the "case"
    assert len(calls) >= 5  # readings were taken during the case, not after it
    summary = sampler.summary()
    assert summary is not None and summary.sm_clock_mhz == 1001
    with runmod.TelemetrySampler(DeviceInfo(backend="cpu", name="cpu")) as cpu_sampler:
        pass
    assert cpu_sampler.summary() is None
