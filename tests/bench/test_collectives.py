"""The collectives workload: nccl-tests bandwidth arithmetic, the real gloo launch, cleanup."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path

import pytest

from gpuport.bench.registry import BenchContext, Skip
from gpuport.bench.run import to_result
from gpuport.bench.workloads import collectives as coll
from gpuport.bench.workloads import collectives_worker as worker
from gpuport.models import GpuportError

MIB = 1024 * 1024


@pytest.fixture(autouse=True)
def _not_under_torchrun(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("WORLD_SIZE", "RANK", "LOCAL_RANK"):
        monkeypatch.delenv(var, raising=False)


def _gpu_ctx(ctx: BenchContext, count: int, **options: object) -> BenchContext:
    info = ctx.info.model_copy(update={"backend": "cuda", "count": count})
    return dataclasses.replace(ctx, info=info, options=dict(options))


@pytest.mark.parametrize(
    ("op", "n", "factor"),
    [
        ("all_reduce", 2, 1.0),  # 2*(2-1)/2
        ("all_reduce", 8, 1.75),  # 2*7/8
        ("all_reduce", 1, 0.0),
        ("all_gather", 8, 0.875),  # 7/8
        ("reduce_scatter", 4, 0.75),  # 3/4
        ("alltoall", 2, 0.5),
        ("broadcast", 8, 1.0),
        ("reduce", 8, 1.0),
    ],
)
def test_busbw_factor_matches_nccl_tests(op: str, n: int, factor: float) -> None:
    assert coll.busbw_factor(op, n) == pytest.approx(factor)


def test_busbw_factor_rejects_unknown_op_and_bad_rank_count() -> None:
    with pytest.raises(ValueError, match="unknown collective"):
        coll.busbw_factor("all_to_everyone", 2)
    with pytest.raises(ValueError, match="positive"):
        coll.busbw_factor("all_reduce", 0)


def test_s_is_the_whole_array_as_in_nccl_tests() -> None:
    # all_reduce: S is the per-rank buffer.
    assert worker.buffer_counts("all_reduce", MIB, 4, 2) == (262144, 262144, MIB)
    # all_gather: each rank sends S/n, S is the gathered output (sendcount * n).
    assert worker.buffer_counts("all_gather", MIB, 4, 2) == (131072, 262144, MIB)
    # reduce_scatter: each rank receives S/n, S is the full input (recvcount * n).
    assert worker.buffer_counts("reduce_scatter", MIB, 2, 8) == (524288, 65536, MIB)
    # A world that does not divide the count: rounded down to equal shards.
    assert worker.buffer_counts("all_gather", MIB, 4, 3) == (87381, 262143, 262143 * 4)


def test_sample_count_is_fixed_from_the_agreed_estimate() -> None:
    policy = {"min_samples": 10, "min_time_s": 0.05, "max_samples": 1000, "max_time_s": 0.3}
    assert worker.sample_count(1e-3, policy) == 50  # min_time_s / 1 ms
    assert worker.sample_count(1e-2, policy) == 10  # min_samples dominates
    assert worker.sample_count(0.1, policy) == 3  # max_time_s caps min_samples
    assert worker.sample_count(5.0, policy) == 1  # at least one sample
    assert worker.sample_count(1e-5, policy) == 1000  # max_samples caps the 5000 wanted


def test_sizes_and_labels() -> None:
    assert coll.sweep_sizes(quick=True, on_gpu=False) == [4096, 65536, MIB]
    gpu_quick = coll.sweep_sizes(quick=True, on_gpu=True)
    assert gpu_quick[0] == MIB and gpu_quick[-1] == 1024 * MIB and len(gpu_quick) == 6
    gpu_full = coll.sweep_sizes(quick=False, on_gpu=True)
    assert gpu_full[0] == 1024 and gpu_full[-1] == 8 * 1024 * MIB and len(gpu_full) == 24
    assert [coll.size_label(s) for s in (1024, 65536, MIB, 8 * 1024 * MIB, 1000)] == [
        "1KiB",
        "64KiB",
        "1MiB",
        "8GiB",
        "1000B",
    ]


def test_in_torchrun(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not coll.in_torchrun()
    monkeypatch.setenv("WORLD_SIZE", "8")
    assert not coll.in_torchrun()  # RANK missing
    monkeypatch.setenv("RANK", "3")
    assert coll.in_torchrun()
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert not coll.in_torchrun()
    monkeypatch.setenv("WORLD_SIZE", "eight")
    assert not coll.in_torchrun()


def test_cpu_quick_cases_are_stable_and_compare_with_busbw(cpu_ctx: BenchContext) -> None:
    cases = coll.WORKLOAD.cases(cpu_ctx)
    assert [c.name for c in cases] == [
        f"{op} fp32 {size}"
        for op in ("all_reduce", "all_gather", "reduce_scatter")
        for size in ("4KiB", "64KiB", "1MiB")
    ]
    assert all(c.unit == "GB/s" and c.scale == 1e9 for c in cases)
    assert cases[0].peak == ("busbw", "allreduce")
    assert cases[-1].params == {"op": "reduce_scatter", "dtype": "fp32", "size": MIB}


def test_dtypes_option_restricts_cases(cpu_ctx: BenchContext) -> None:
    ctx = dataclasses.replace(cpu_ctx, options={"dtypes": ["bf16", "fp8"]})
    names = [c.name for c in coll.WORKLOAD.cases(ctx)]
    assert names and all(" bf16 " in n for n in names)
    ctx = dataclasses.replace(cpu_ctx, options={"dtypes": ["fp8"]})
    assert coll.WORKLOAD.cases(ctx) == []


def test_one_gpu_skips_with_reason(cpu_ctx: BenchContext) -> None:
    ctx = _gpu_ctx(cpu_ctx, count=1)
    cases = coll.WORKLOAD.cases(ctx)
    assert cases[-1].name == "reduce_scatter fp32 1GiB"
    with pytest.raises(Skip, match="needs ≥ 2 GPUs; found 1"):
        cases[0].run(ctx)
    ctx = _gpu_ctx(cpu_ctx, count=2, world=4)
    with pytest.raises(Skip, match="needs 4 GPUs; found 2"):
        coll.WORKLOAD.cases(ctx)[0].run(ctx)


def test_bad_world_option_is_a_usage_error(cpu_ctx: BenchContext) -> None:
    with pytest.raises(GpuportError, match="world must be an integer"):
        coll.WORKLOAD.cases(_gpu_ctx(cpu_ctx, count=8, world="all"))
    with pytest.raises(GpuportError, match="at least 2"):
        coll.WORKLOAD.cases(_gpu_ctx(cpu_ctx, count=8, world=1))


def test_run_sweep_in_a_one_rank_group(cpu_ctx: BenchContext) -> None:
    """The shared timing loop, in-process (as under torchrun), on a trivial group."""
    torch = cpu_ctx.torch
    dist = torch.distributed
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        policy = {
            "warmup_iters": 2,
            "warmup_s": 0.0,
            "min_samples": 7,
            "min_time_s": 0.0,
            "max_samples": 7,
            "max_time_s": 10.0,
        }
        spec = {
            "entries": [{"op": op, "dtype": "fp32", "size": 4096} for op in worker.OPS],
            "policy": policy,
        }
        out = worker.run_sweep(torch, dist, spec, torch.device("cpu"))
    finally:
        dist.destroy_process_group()
    assert out["world"] == 1 and out["backend"] == "gloo"
    for r in out["results"]:
        assert r["bytes"] == 4096 and r["count"] == 1024
        assert len(r["samples"]) == 7 and all(s > 0 for s in r["samples"])


def test_real_two_rank_gloo_run(cpu_ctx: BenchContext, monkeypatch: pytest.MonkeyPatch) -> None:
    launches: list[int] = []
    real = coll.launch_workers

    def counting(spec: dict[str, object], world: int, timeout_s: float) -> dict[str, object]:
        launches.append(world)
        return real(spec, world, timeout_s)

    monkeypatch.setattr(coll, "launch_workers", counting)
    t0 = time.perf_counter()
    cases = coll.WORKLOAD.cases(cpu_ctx)
    results = [to_result(coll.WORKLOAD, c, c.run(cpu_ctx), None) for c in cases]
    elapsed = time.perf_counter() - t0
    assert launches == [2], "all cases share one launch of two gloo ranks"
    for case, r in zip(cases, results, strict=True):
        op = case.params["op"]
        factor = coll.busbw_factor(op, 2)
        assert r.metrics["world"] == 2 and r.metrics["backend"] == "gloo"
        assert r.params["size_bytes"] == case.params["size"]  # fp32 sizes divide evenly
        assert r.value is not None and r.value > 0
        assert r.time is not None and all(s > 0 for s in r.samples)
        # busbw = algbw * factor, algbw = S / median time.
        algbw = r.params["size_bytes"] / r.time.median / 1e9
        assert r.metrics["algbw_gbs"] == pytest.approx(algbw)
        assert r.value == pytest.approx(algbw * factor)
    assert elapsed < 60


def _fake_worker(monkeypatch: pytest.MonkeyPatch, code: str) -> None:
    monkeypatch.setattr(coll, "worker_command", lambda: [sys.executable, "-c", code])


def _gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"  # a zombie is dead, just not reaped


SLEEPER = """
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
folder = os.environ["GPUPORT_TEST_PIDS"]
for pid in (os.getpid(), child.pid):
    open(os.path.join(folder, str(pid)), "w").close()
time.sleep(120)
"""


def test_timeout_skips_and_leaves_no_process(
    cpu_ctx: BenchContext, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GPUPORT_TEST_PIDS", str(tmp_path))
    _fake_worker(monkeypatch, SLEEPER)
    ctx = dataclasses.replace(cpu_ctx, options={"collectives_timeout_s": 2})
    cases = coll.WORKLOAD.cases(ctx)
    with pytest.raises(Skip, match=r"collectives timed out after 2 s"):
        cases[0].run(ctx)
    pids = [int(p.name) for p in tmp_path.iterdir()]
    assert len(pids) == 4, "two ranks, each with a child of its own"
    deadline = time.monotonic() + 5
    while not all(_gone(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(_gone(p) for p in pids)
    # The other cases reuse the outcome instead of waiting again.
    t0 = time.perf_counter()
    with pytest.raises(Skip, match="timed out"):
        cases[1].run(ctx)
    assert time.perf_counter() - t0 < 0.5


def test_worker_failure_surfaces_the_log_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_worker(
        monkeypatch,
        "import os, sys\n"
        "print('starting rank', os.environ['RANK'], flush=True)\n"
        "sys.stderr.write('Traceback (most recent call last):\\n')\n"
        "sys.stderr.write('ValueError: gloo exploded on rank ' + os.environ['RANK'] + '\\n')\n"
        "sys.exit(1)\n",
    )
    spec = {"entries": [], "backend": "gloo", "seed": 0, "policy": {}}
    with pytest.raises(RuntimeError) as info:
        coll.launch_workers(spec, 2, 30)
    first, _, rest = str(info.value).partition("\n")
    assert "exited with code 1" in first
    assert "ValueError: gloo exploded on rank" in first
    assert "starting rank" in rest and "Traceback" in rest


def test_backend_unavailable_is_a_skip(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_worker(
        monkeypatch,
        "import sys\n"
        "sys.stderr.write('gpuport: backend unavailable: this torch build has no NCCL/RCCL\\n')\n"
        f"sys.exit({worker.EXIT_UNAVAILABLE})\n",
    )
    spec = {"entries": [], "backend": "nccl", "seed": 0, "policy": {}}
    with pytest.raises(Skip, match=r"^backend unavailable: this torch build has no NCCL/RCCL$"):
        coll.launch_workers(spec, 2, 30)


ENV_DUMP = """
import json, os, sys
spec = json.load(open(sys.argv[1]))
keys = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK")
env = {k: os.environ[k] for k in keys}
if env["RANK"] == "0":
    json.dump({"env": env, "spec": spec}, open(spec["output"], "w"))
"""


def test_worker_gets_rendezvous_env_and_not_the_cwd(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Ranks see MASTER_*/RANK/WORLD_SIZE; a module in the user's cwd shadows nothing (-P)."""
    (tmp_path / "json.py").write_text("raise SystemExit('user code was imported')\n")
    monkeypatch.chdir(tmp_path)
    python, flag = coll.worker_command()[:2]
    monkeypatch.setattr(coll, "worker_command", lambda: [python, flag, "-c", ENV_DUMP])
    out = coll.launch_workers({"entries": [], "backend": "gloo"}, 3, 30)
    assert out["env"]["MASTER_ADDR"] == "127.0.0.1"
    assert out["env"]["WORLD_SIZE"] == "3" and out["env"]["LOCAL_RANK"] == "0"
    assert int(out["env"]["MASTER_PORT"]) > 0
    assert out["spec"]["parent_pid"] == os.getpid()


def test_under_torchrun_the_sweep_runs_in_this_process(
    cpu_ctx: BenchContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No spawn under torchrun: the existing process group times the sweep, and stays up."""
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setattr(coll, "launch_workers", lambda *a: pytest.fail("spawned under torchrun"))
    dist = cpu_ctx.torch.distributed
    # A one-rank group stands in for the one torchrun would have set up.
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        cases = coll.WORKLOAD.cases(cpu_ctx)
        m = cases[2].run(cpu_ctx)  # all_reduce 1MiB
        assert dist.is_initialized(), "a group gpuport did not create is left alone"
    finally:
        dist.destroy_process_group()
    assert m.params["size_bytes"] == MIB and m.metrics["world"] == 1
    assert m.metrics["backend"] == "gloo" and m.stats.n >= 1 and m.stats.median > 0
    assert m.work_per_iter == 0.0  # one rank moves no bytes over the bus: factor 2(n-1)/n = 0
