"""``collectives``: all_reduce, all_gather and reduce_scatter bandwidth, nccl-tests style.

What is reported (nccl-tests doc/PERFORMANCE.md, research notes §1.4): for a
collective on ``S`` bytes taking ``t`` seconds, ``algbw = S / t`` and
``busbw = algbw * factor`` (:func:`busbw_factor`), the figure comparable with the
per-GPU link bandwidth whatever the rank count. ``S`` follows nccl-tests: the
per-rank buffer for all_reduce, and the size of the *whole* array, i.e. the
gathered output (``sendcount * n``) for all_gather and the full input
(``recvcount * n``) for reduce_scatter. The headline is busbw in GB/s (10^9),
compared with the catalog's interconnect bandwidth; algbw, the factor, the world
size and the backend are secondary metrics.

Cases: one per (op, dtype, size), named e.g. ``"all_reduce fp32 64MiB"``. A size in
the name (not only in metrics) keeps names stable across suites and machines, so
``compare`` joins the 64 MiB all_reduce of a quick run with that of a full run.
All cases from one ``_cases`` call share a single launch of the process group
(:class:`_Launch`): the first case to run times the whole sweep, the others read
their entry, and a launch that fails or times out fails or skips them all alike.

Launch model: ``world`` worker processes (``collectives_worker``), one per GPU with
the "nccl" backend (RCCL on ROCm), or 2 "gloo" processes on a CPU, rendezvous on
127.0.0.1 at a free port. Each rank times each blocking collective per iteration
(device events on a GPU, ``perf_counter`` on the CPU); the per-iteration maximum
over ranks is the sample, since the slowest rank sets the pace. Under
``torchrun`` (``WORLD_SIZE`` > 1 and ``RANK`` set) nothing is spawned: the sweep
runs in the current process group with the same timing code.

Sizes: CPU quick 4 KiB, 64 KiB, 1 MiB (the whole CPU quick sweep, process start
included, takes about 3 s on 2 cores); GPU quick 1 MiB to 1 GiB by 4 (6 sizes,
about 10-20 s on 8 H100s, mostly process and NCCL start-up); full 1 KiB to 8 GiB
by 2 on a GPU (24 sizes: about 5 min on 8 NVLink H100s, up to ~15 min where busbw
is low, bounded by the policy's ``max_time_s`` per size) and 1 KiB to 64 MiB by 4
on a CPU.

Options: ``world`` (GPU ranks, default all visible GPUs; GPUs 0..world-1 are used),
``dtypes`` (subset of fp32, bf16, fp16; default fp32 as nccl-tests), and
``collectives_timeout_s`` (whole launch; default 120 s quick, 1800 s full).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import gpuport
from gpuport import subproc
from gpuport.bench.registry import BenchContext, Case, Measurement, Skip, Workload, register
from gpuport.models import GpuportError

# The worker module is imported lazily: importing it here (when the workloads package
# registers this module) would make ``python -m`` warn that it was imported twice.
KIB, MIB, GIB = 1024, 1024**2, 1024**3
DEFAULT_DTYPES = ("fp32",)
WORKER_MODULE = "gpuport.bench.workloads.collectives_worker"
# Catalog key suffix of each op (gpus.toml ``achievable.busbw_allreduce`` etc.).
PEAK_KEYS = {
    "all_reduce": "allreduce",
    "all_gather": "allgather",
    "reduce_scatter": "reducescatter",
}
_UNAVAILABLE_HINTS = (
    "backend unavailable",
    "doesn't have nccl built in",
    "nccl is not available",
    "distributed package doesn't have",
)
_TAIL_LINES = 15


def busbw_factor(op: str, n: int) -> float:
    """nccl-tests' algbw→busbw correction for ``op`` over ``n`` ranks (doc/PERFORMANCE.md)."""
    if n < 1:
        raise ValueError(f"rank count must be positive, got {n}")
    if op == "all_reduce":
        return 2.0 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter", "alltoall"):
        return (n - 1) / n
    if op in ("broadcast", "reduce"):
        return 1.0
    raise ValueError(f"unknown collective {op!r}")


def in_torchrun() -> bool:
    """True when this process is one rank of a multi-process launch (torchrun and the like)."""
    try:
        return int(os.environ.get("WORLD_SIZE", "1")) > 1 and "RANK" in os.environ
    except ValueError:
        return False


def sweep_sizes(quick: bool, on_gpu: bool) -> list[int]:
    """Nominal ``S`` in bytes for a suite, smallest first (see the module docstring)."""
    if on_gpu:
        lo, hi, factor = (MIB, GIB, 4) if quick else (KIB, 8 * GIB, 2)
    else:
        lo, hi, factor = (4 * KIB, MIB, 16) if quick else (KIB, 64 * MIB, 4)
    sizes = []
    size = lo
    while size <= hi:
        sizes.append(size)
        size *= factor
    return sizes


def size_label(n: int) -> str:
    """``1048576`` → ``"1MiB"``: the largest binary unit that divides ``n``."""
    for unit, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if n >= unit and n % unit == 0:
            return f"{n // unit}{name}"
    return f"{n}B"


def worker_command() -> list[str]:
    """How a rank is started. ``-P``: the cwd (the user's project) is not on sys.path."""
    return [sys.executable, "-P", "-m", WORKER_MODULE]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the OS picks it), for the rendezvous store."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _worker_env(rank: int, world: int, port: int, backend: str) -> dict[str, str]:
    # no relative PATH entries, and nothing of the project the user runs bench in (its
    # PYTHONPATH would give the workers its torch.py: twenty-sixth re-run F5)
    env = subproc.safe_env(avoid=subproc.project_around(os.curdir))
    env.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        RANK=str(rank),
        WORLD_SIZE=str(world),
        LOCAL_RANK=str(rank),
        LOCAL_WORLD_SIZE=str(world),
    )
    # Import the same gpuport as this process even if it was found through the cwd.
    root = str(Path(gpuport.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    if backend == "gloo":
        env.setdefault("OMP_NUM_THREADS", "1")
    return env


def _tail(log: Path) -> list[str]:
    try:
        with log.open("rb") as fh:
            fh.seek(max(0, log.stat().st_size - 8192))
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip()][-_TAIL_LINES:]


def _kill_all(procs: list[subprocess.Popen[bytes]]) -> None:
    """Kill every still-running rank with its whole process group, then reap them all."""
    for proc in procs:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
    for proc in procs:
        proc.wait()


def _wait(procs: list[subprocess.Popen[bytes]], timeout_s: float) -> int | None:
    """Index of the first rank to fail, or None when all exited cleanly; Skip on timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        codes = [p.poll() for p in procs]
        for i, code in enumerate(codes):
            if code not in (None, 0):
                return i
        if all(code == 0 for code in codes):
            return None
        if time.monotonic() > deadline:
            raise Skip(f"collectives timed out after {timeout_s:g} s")
        time.sleep(0.05)


def _failure(rank: int, code: int, tail: list[str]) -> Exception:
    """Skip when the backend cannot run here, else a RuntimeError carrying the log tail."""
    from gpuport.bench.workloads import collectives_worker as worker

    last = tail[-1].strip() if tail else "(no output)"
    text = "\n".join(tail).lower()
    if code == worker.EXIT_UNAVAILABLE or any(h in text for h in _UNAVAILABLE_HINTS):
        return Skip(last.removeprefix("gpuport: "))
    body = "\n".join(tail)
    return RuntimeError(f"collectives rank {rank} exited with code {code}: {last}\n{body}")


def launch_workers(spec: dict[str, Any], world: int, timeout_s: float) -> dict[str, Any]:
    """Run ``world`` worker ranks on ``spec`` and return rank 0's result JSON.

    Every rank is its own session (process group), so a timeout or any exception
    here, KeyboardInterrupt included, kills each rank with whatever it started.
    """
    with tempfile.TemporaryDirectory(prefix="gpuport-collectives-") as tmp:
        folder = Path(tmp)
        output = folder / "result.json"
        full = {
            **spec,
            "output": str(output),
            "parent_pid": os.getpid(),
            "timeout_s": timeout_s + 30.0,
        }
        spec_path = folder / "spec.json"
        spec_path.write_text(json.dumps(full), encoding="utf-8")
        port = free_port()
        procs: list[subprocess.Popen[bytes]] = []
        logs: list[Path] = []
        try:
            for rank in range(world):
                log = folder / f"rank{rank}.log"
                logs.append(log)
                with log.open("wb") as fh:
                    procs.append(
                        subprocess.Popen(
                            [*worker_command(), str(spec_path)],
                            env=_worker_env(rank, world, port, str(spec["backend"])),
                            stdin=subprocess.DEVNULL,
                            stdout=fh,
                            stderr=subprocess.STDOUT,
                            start_new_session=True,
                            cwd=tmp,  # never the caller's folder
                        )
                    )
            failed = _wait(procs, timeout_s)
        finally:
            _kill_all(procs)
        if failed is not None:
            raise _failure(failed, int(procs[failed].returncode), _tail(logs[failed]))
        if not output.is_file():
            raise RuntimeError("collectives: rank 0 exited cleanly but wrote no result")
        result: dict[str, Any] = json.loads(output.read_text(encoding="utf-8"))
        return result


def _run_in_process(ctx: BenchContext, spec: dict[str, Any]) -> dict[str, Any]:
    """The torchrun path: this process is already one rank; time the sweep here."""
    from gpuport.bench.workloads import collectives_worker as worker

    torch = ctx.torch
    dist = torch.distributed
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local_rank) if ctx.on_gpu else torch.device("cpu")
    created = False
    if not dist.is_initialized():
        if ctx.on_gpu:
            torch.cuda.set_device(device)
            dist.init_process_group("nccl", device_id=device)
        else:
            dist.init_process_group("gloo")
        created = True
    try:
        return worker.run_sweep(torch, dist, spec, device)
    finally:
        if created:
            dist.destroy_process_group()


class _Launch:
    """One timed sweep shared by every case of one ``_cases`` call; runs on first use."""

    def __init__(self, spec: dict[str, Any], world: int | str, timeout_s: float) -> None:
        self.spec = spec
        self.world = world  # an int, or the reason this machine cannot run collectives
        self.timeout_s = timeout_s
        self._result: dict[str, Any] | None = None
        self._error: tuple[bool, str] | None = None  # (is_skip, message)

    def _execute(self, ctx: BenchContext) -> dict[str, Any]:
        if in_torchrun():
            return _run_in_process(ctx, self.spec)
        if isinstance(self.world, str):
            raise Skip(self.world)
        return launch_workers(self.spec, self.world, self.timeout_s)

    def result(self, ctx: BenchContext) -> dict[str, Any]:
        if self._error is not None:
            is_skip, message = self._error
            raise Skip(message) if is_skip else RuntimeError(message)
        if self._result is None:
            try:
                self._result = self._execute(ctx)
            except Exception as exc:
                self._error = (isinstance(exc, Skip), str(exc))
                raise
        return self._result

    def measurement(self, ctx: BenchContext, entry: dict[str, Any]) -> Measurement:
        from gpuport.bench.timing import summarize

        result = self.result(ctx)
        key = (entry["op"], entry["dtype"], entry["size"])
        found = [r for r in result["results"] if (r["op"], r["dtype"], r["size"]) == key]
        if not found:
            raise RuntimeError(f"collectives: no result for {key} in the sweep output")
        r = found[0]
        if "skip" in r:
            raise Skip(str(r["skip"]))
        samples = [float(s) for s in r["samples"]]
        stats = summarize(samples)
        world = int(result["world"])
        factor = busbw_factor(str(r["op"]), world)
        s_bytes = int(r["bytes"])
        algbw = s_bytes / stats.median / 1e9 if stats.median > 0 else 0.0
        return Measurement(
            samples=samples,
            stats=stats,
            work_per_iter=s_bytes * factor,  # "bus bytes": value = busbw
            metrics={
                "algbw_gbs": algbw,
                "busbw_factor": factor,
                "world": world,
                "backend": str(result["backend"]),
            },
            params={"size_bytes": s_bytes, "count": int(r["count"]), "world": world},
        )


def _dtypes(ctx: BenchContext) -> list[str]:
    from gpuport.bench.workloads import collectives_worker as worker

    wanted = ctx.options.get("dtypes")
    if not wanted:
        return list(DEFAULT_DTYPES)
    return [d for d in wanted if d in worker.DTYPES]


def _world(ctx: BenchContext) -> int | str:
    """Rank count, or the reason (a Skip message) there cannot be one here."""
    if not ctx.on_gpu:
        return 2
    visible = ctx.info.count
    raw = ctx.options.get("world")
    if raw is None:
        return visible if visible >= 2 else f"needs ≥ 2 GPUs; found {visible}"
    try:
        asked = int(raw)
    except (TypeError, ValueError):
        raise GpuportError(f"collectives: world must be an integer, got {raw!r}") from None
    if asked < 2:
        raise GpuportError(f"collectives: world must be at least 2, got {asked}")
    if asked > visible:
        return f"needs {asked} GPUs; found {visible}"
    return asked


def _timeout(ctx: BenchContext) -> float:
    raw = ctx.options.get("collectives_timeout_s")
    if raw is None:
        return 120.0 if ctx.quick else 1800.0
    try:
        return float(raw)
    except (TypeError, ValueError):
        raise GpuportError(f"collectives: timeout must be a number, got {raw!r}") from None


def _cases(ctx: BenchContext) -> list[Case]:
    from gpuport.bench.workloads import collectives_worker as worker

    policy = ctx.kernel_policy
    entries: list[dict[str, Any]] = [
        {"op": op, "dtype": dtype, "size": size}
        for dtype in _dtypes(ctx)
        for op in worker.OPS
        for size in sweep_sizes(ctx.quick, ctx.on_gpu)
    ]
    spec = {
        "entries": entries,
        "backend": "nccl" if ctx.on_gpu else "gloo",
        "seed": ctx.seed,
        "policy": {
            "warmup_iters": policy.warmup_iters,
            "warmup_s": policy.warmup_s,
            "min_samples": policy.min_samples,
            "min_time_s": policy.min_time_s,
            "max_samples": policy.max_samples,
            "max_time_s": policy.max_time_s,
        },
    }
    launch = _Launch(spec, _world(ctx), _timeout(ctx))

    def runner(entry: dict[str, Any]) -> Any:
        return lambda c: launch.measurement(c, entry)

    return [
        Case(
            name=f"{e['op']} {e['dtype']} {size_label(int(e['size']))}",
            run=runner(e),
            params={"op": e["op"], "dtype": e["dtype"], "size": e["size"]},
            unit="GB/s",
            scale=1e9,
            peak=("busbw", PEAK_KEYS[str(e["op"])]),
        )
        for e in entries
    ]


WORKLOAD = register(
    Workload(
        name="collectives",
        summary="all_reduce / all_gather / reduce_scatter bus bandwidth (nccl-tests busbw)",
        cases=_cases,
        needs=(),
    )
)
