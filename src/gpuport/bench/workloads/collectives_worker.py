"""One rank of the ``collectives`` workload, and the timing loop every rank runs.

Why a separate process: a collective needs one process per rank, and a hung rank
(a dead peer, a wedged NCCL/RCCL communicator) must be killable without taking the
benchmark run down with it. The parent (``collectives.py``) starts ``world`` of these
with ``python -P -m gpuport.bench.workloads.collectives_worker SPEC.json``: ``-P``
keeps the current directory off ``sys.path``, so a worker only ever imports torch
and gpuport, never the user's project. Under ``torchrun`` the parent calls
:func:`run_sweep` in-process instead, so both paths time the same way.

The spec (JSON) holds ``entries`` (``{"op", "dtype", "size"}``: size is the
nominal bytes of the nccl-tests ``S``), ``backend`` ("nccl" or "gloo"), ``policy``
(warm-up and sample numbers of a :class:`~gpuport.bench.registry.TimingPolicy`),
``seed``, ``timeout_s``, ``output`` (where rank 0 writes the result JSON) and
``parent_pid`` (a worker whose parent dies exits instead of waiting forever in a
collective).

Exit codes: 0 done; 4 the backend cannot run here (the last stderr line says why:
the parent turns that into a skip); anything else is a failure whose stderr tail
the parent reports.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

EXIT_UNAVAILABLE = 4
DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}
OPS = ("all_reduce", "all_gather", "reduce_scatter")


def buffer_counts(op: str, size_bytes: int, elem_size: int, world: int) -> tuple[int, int, int]:
    """Per-rank (input, output) element counts and the nccl-tests ``S`` in bytes.

    nccl-tests (doc/PERFORMANCE.md) takes ``S`` as the size of the *whole* array:
    the per-rank buffer for all_reduce, the gathered output (``sendcount * n``) for
    all_gather and the full input (``recvcount * n``) for reduce_scatter. The count
    is rounded down to a multiple of ``world`` so every rank gets an equal shard.
    """
    if op not in OPS:
        raise ValueError(f"unknown collective {op!r}")
    count = max(world, size_bytes // elem_size // world * world)
    if op == "all_reduce":
        return count, count, count * elem_size
    shard = count // world
    if op == "all_gather":
        return shard, count, count * elem_size
    return count, shard, count * elem_size


def _agreed_max(torch: Any, dist: Any, values: list[float], device: Any) -> list[float]:
    """Element-wise maximum over ranks: the slowest rank defines each sample."""
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return [float(v) for v in t.tolist()]


def _collective(dist: Any, op: str) -> Callable[[Any, Any], object]:
    """The blocking collective for ``op`` as ``f(output, input)``; newest torch name first."""
    if op == "all_reduce":
        return lambda out, _inp: dist.all_reduce(out)
    if op == "all_gather":
        fn = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
    else:
        fn = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
    return lambda out, inp: fn(out, inp)


def _timer(torch: Any, on_gpu: bool) -> Callable[[Callable[[], object]], float]:
    """Seconds for one blocking call: device events on a GPU, perf_counter on the CPU."""
    if on_gpu:
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)

        def gpu_time(fn: Callable[[], object]) -> float:
            start.record()
            fn()
            end.record()
            end.synchronize()
            return float(start.elapsed_time(end)) / 1e3

        return gpu_time

    def cpu_time(fn: Callable[[], object]) -> float:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0

    return cpu_time


def _is_oom(torch: Any, exc: BaseException) -> bool:
    oom_type = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError
    text = str(exc).lower()
    if isinstance(exc, (oom_type, MemoryError)) or "out of memory" in text:
        return True
    return isinstance(exc, RuntimeError) and "can't allocate" in text


def _allocate(
    torch: Any, n_in: int, n_out: int, dtype: Any, device: Any, seed: int
) -> tuple[Any, Any] | None:
    """Random-normal input and an empty output, or None when this rank is out of memory."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    try:
        src = torch.randn(n_in, generator=gen, device=device, dtype=dtype)
        dst = torch.empty(n_out, device=device, dtype=dtype)
    except Exception as exc:
        if not _is_oom(torch, exc):
            raise
        return None
    return src, dst


def sample_count(estimate_s: float, policy: dict[str, Any]) -> int:
    """Timed iterations for a case whose iteration takes ``estimate_s`` (same on every rank).

    A time-based stop would let ranks disagree on the count and deadlock, so the count
    is fixed up front from the agreed warm-up estimate: enough for ``min_samples`` and
    ``min_time_s``, but never past ``max_time_s`` or ``max_samples``.
    """
    est = max(estimate_s, 1e-7)
    want = max(int(policy["min_samples"]), math.ceil(float(policy["min_time_s"]) / est))
    fits = int(float(policy["max_time_s"]) / est + 1e-9)  # 0.3 / 0.1 is 2.999...
    cap = min(int(policy["max_samples"]), max(1, fits))
    return max(1, min(want, cap))


def _time_entry(
    torch: Any, dist: Any, entry: dict[str, Any], spec: dict[str, Any], device: Any
) -> dict[str, Any]:
    rank, world = dist.get_rank(), dist.get_world_size()
    on_gpu = device.type == "cuda"
    op, size = str(entry["op"]), int(entry["size"])
    dtype = getattr(torch, DTYPES[str(entry["dtype"])])
    elem = torch.empty((), dtype=dtype).element_size()
    n_in, n_out, s_bytes = buffer_counts(op, size, elem, world)
    out: dict[str, Any] = {**entry, "bytes": s_bytes, "count": s_bytes // elem}
    bufs = _allocate(torch, n_in, n_out, dtype, device, int(spec.get("seed", 0)) * 1000 + rank)
    # Every rank must take the same branch, or the others wait in a collective forever.
    any_oom = _agreed_max(torch, dist, [0.0 if bufs is not None else 1.0], device)[0] > 0
    if bufs is None or any_oom:
        del bufs
        if on_gpu:
            torch.cuda.empty_cache()
        return {**out, "skip": f"out of memory allocating {s_bytes} bytes on a rank"}
    src, dst = bufs
    out["samples"] = _time_op(torch, dist, op, src, dst, spec["policy"], on_gpu)
    del src, dst, bufs
    if on_gpu:
        torch.cuda.empty_cache()
    return out


def _time_op(
    torch: Any, dist: Any, op: str, src: Any, dst: Any, policy: dict[str, Any], on_gpu: bool
) -> list[float]:
    """Warm up, agree on a sample count, time; the per-iteration maximum over ranks."""
    device = dst.device
    call = _collective(dist, op)
    # all_reduce is in place: restore the random input before each iteration (untimed),
    # so values do not grow by ``world`` per call towards inf (mamf-finder's C.copy_).
    before = (lambda: dst.copy_(src)) if op == "all_reduce" else None
    timed = _timer(torch, on_gpu)

    def one() -> float:
        if before is not None:
            before()
        return timed(lambda: call(dst, src))

    warm = [one() for _ in range(max(1, int(policy["warmup_iters"])))]
    steady = warm[1:] or warm
    est = _agreed_max(torch, dist, [statistics.median(steady)], device)[0]
    extra = min(10_000, math.ceil(float(policy["warmup_s"]) / max(est, 1e-7)) - len(warm))
    for _ in range(max(0, extra)):
        one()
    mine = [one() for _ in range(sample_count(est, policy))]
    return _agreed_max(torch, dist, mine, device)


def run_sweep(torch: Any, dist: Any, spec: dict[str, Any], device: Any) -> dict[str, Any]:
    """Time every spec entry in an initialised process group; identical result on all ranks."""
    results = [_time_entry(torch, dist, e, spec, device) for e in spec["entries"]]
    return {
        "world": dist.get_world_size(),
        "backend": str(dist.get_backend()),
        "results": results,
    }


def _watch_parent(parent_pid: int | None) -> None:
    """Exit when the parent is gone, so no rank outlives a killed benchmark run."""
    if not parent_pid:
        return

    def watch() -> None:
        while True:
            if os.getppid() != parent_pid:
                os._exit(3)
            time.sleep(0.5)

    threading.Thread(target=watch, name="gpuport-parent-watch", daemon=True).start()


def _unavailable(reason: str) -> int:
    print(f"gpuport: backend unavailable: {reason}", file=sys.stderr, flush=True)
    return EXIT_UNAVAILABLE


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    spec = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    _watch_parent(spec.get("parent_pid"))
    import torch
    import torch.distributed as dist

    backend = str(spec["backend"])
    if not dist.is_available():
        return _unavailable("this torch build has no torch.distributed")
    if backend == "nccl" and not dist.is_nccl_available():
        return _unavailable("this torch build has no NCCL/RCCL")
    if backend == "gloo" and not dist.is_gloo_available():
        return _unavailable("this torch build has no gloo")
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    kwargs: dict[str, Any] = {"timeout": dt.timedelta(seconds=float(spec["timeout_s"]))}
    if backend == "nccl":
        if torch.cuda.device_count() <= local_rank:
            return _unavailable(f"rank {local_rank} has no GPU ({torch.cuda.device_count()} seen)")
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
        kwargs["device_id"] = device
    else:
        device = torch.device("cpu")
    dist.init_process_group(backend, **kwargs)
    try:
        result = run_sweep(torch, dist, spec, device)
        if dist.get_rank() == 0:
            target = Path(spec["output"])
            tmp = target.with_suffix(".tmp")
            tmp.write_text(json.dumps(result), encoding="utf-8")
            tmp.replace(target)
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
