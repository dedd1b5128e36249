"""``membw``: achievable device-memory bandwidth with STREAM kernels, in the manner of BabelStream.

Why these kernels: they bracket what real code does (pure copy, read-modify-write
with one or two inputs, a pure read) and BabelStream's numbers for them are what
vendors and reviewers publish, so the "% of achievable" column means something.

Kernels and bytes counted per element (BabelStream's weights; ``sizeof`` = 4, fp32):

* ``copy``  c = a           2 arrays (read a, write c)
* ``scale`` b = s·c         2 arrays (BabelStream's "Mul")
* ``add``   c = a + b       3 arrays
* ``triad`` a = b + s·c     3 arrays
* ``read``  sum(a)          1 array. BabelStream's Dot reads two arrays; this is a
  pure read of one, the kernel a decode step's weight streaming resembles.

All use ``out=`` forms, so nothing is allocated in the timed region. The working set
defeats the caches by size rather than by flushing (``flush=False``): each array is at
least 4x (L2 + last-level cache) and at least 256 MiB on a GPU (1 GiB on the full
suite), so MI300X's 256 MB Infinity Cache cannot hold it; on the CPU each array is at
least 4x the last-level cache read from sysfs (64 MiB assumed where it says nothing);
three arrays must fit in 60% of device (or host) memory. ``working_set_bytes``,
``llc_multiple`` and ``array_llc_multiple`` in each case's params show how far beyond
the caches a result is. After timing, sampled elements are
checked against host arithmetic (the read against a float64 sum): a wrong kernel fails the
case.

Durations, estimated from the kernel policies: CPU quick ~2-4 s (32 MiB L3: 128 MiB
arrays); GPU quick ~1-2 s
(H100: 256 MiB arrays); GPU full ~15 s (1 GiB arrays, >= 1 s warm-up and 1 s of
samples per kernel).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpuport.bench.registry import BenchContext, Case, Measurement, Workload, register

MIB = 1 << 20
GIB = 1 << 30
ELEMENT_BYTES = 4  # fp32
SCALAR = 0.4  # BabelStream's startScalar
# Arrays moved per element: the bytes counted are ARRAYS[kernel] x N x sizeof.
ARRAYS: dict[str, int] = {"copy": 2, "scale": 2, "add": 3, "triad": 3, "read": 1}
_CPU_FLOOR = 4 * MIB  # a CPU whose caches are tiny still streams at least this per array
_CPU_UNKNOWN_CACHE = 64 * MIB  # the system did not say: assume a large server LLC
_SYS_CPU = Path("/sys/devices/system/cpu")
_GPU_FLOOR = {"quick": 256 * MIB, "full": GIB}
_CACHE_MULTIPLE = 4
_MEMORY_SHARE = 0.6  # the three arrays may take this share of device memory
_ASSUMED_INFINITY_CACHE = 256 * MIB  # CDNA3+ when no spec entry says otherwise
_SAMPLES = 4096  # elements copied to the host for the correctness check


def bytes_per_iter(kernel: str, elements: int) -> int:
    return ARRAYS[kernel] * elements * ELEMENT_BYTES


def cpu_cache_bytes(root: Path = _SYS_CPU) -> int | None:
    """The largest data or unified CPU cache, read from sysfs (Linux), else sysconf.

    ``/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}`` lists every cache
    cpu0 sees; the highest level is the last-level cache (L3 on x86 servers, shared by
    a core complex). None when the system does not say.
    """
    best: tuple[int, int] | None = None
    for index in sorted(root.glob("cpu0/cache/index*")):
        try:
            level = int((index / "level").read_text().strip())
            kind = (index / "type").read_text().strip()
            size = _parse_size((index / "size").read_text().strip())
        except (OSError, ValueError):
            continue
        if kind == "Instruction" or size is None:
            continue
        if best is None or (level, size) > best:
            best = (level, size)
    if best is not None:
        return best[1]
    for name in ("SC_LEVEL4_CACHE_SIZE", "SC_LEVEL3_CACHE_SIZE", "SC_LEVEL2_CACHE_SIZE"):
        try:
            value = os.sysconf(name)
        except (ValueError, OSError):
            continue
        if value > 0:
            return int(value)
    return None


def _parse_size(text: str) -> int | None:
    """sysfs cache sizes: "32768K", "1M", "512" (bytes)."""
    units = {"K": 1024, "M": MIB, "G": GIB}
    if not text:
        return None
    if text[-1].upper() in units:
        return int(text[:-1]) * units[text[-1].upper()]
    return int(text)


def cache_bytes(ctx: BenchContext) -> int | None:
    """L2 plus last-level cache of the device, from the spec entry or what torch reported;
    on the CPU, its last-level cache as the system reports it."""
    if not ctx.on_gpu:
        return cpu_cache_bytes()
    if ctx.spec is not None:
        return int((ctx.spec.l2_mb + ctx.spec.llc_mb) * MIB)
    if ctx.info.l2_bytes:
        extra = _ASSUMED_INFINITY_CACHE if ctx.info.backend == "rocm" else 0
        return ctx.info.l2_bytes + extra
    return None


def array_elements(ctx: BenchContext) -> int:
    """Elements per array: each array ≥ 4x the last-level cache (and ≥ a floor).

    On a GPU the caches come from the catalog; on the CPU from sysfs, so a 32 MiB L3
    gets 128 MiB arrays (BabelStream's default is 2^25 doubles, 268 MB, for the same
    reason): 4 MiB arrays there measured the L3 at ~184 GB/s, not memory.
    """
    floor = _GPU_FLOOR[ctx.suite] if ctx.on_gpu else _CPU_FLOOR
    target = max(_CACHE_MULTIPLE * (cache_bytes(ctx) or _CPU_UNKNOWN_CACHE), floor)
    chunk = MIB  # elements: keeps sizes a multiple of 1024 (HIP-friendly) and readable
    elements = -(-target // ELEMENT_BYTES // chunk) * chunk
    memory = ctx.info.memory_bytes if ctx.on_gpu else _host_memory()
    if memory:
        cap = int(memory * _MEMORY_SHARE / 3 / ELEMENT_BYTES) // chunk * chunk
        elements = max(chunk, min(elements, cap))
    return elements


def _host_memory() -> int | None:
    """Physical memory of the host, for the CPU arrays' cap (None when unknown)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError):
        return None


def check_kernel(torch: Any, kernel: str, a: Any, b: Any, c: Any, total: Any) -> None:
    """Redo the kernel's arithmetic on the host for a strided sample; raise if it differs.

    Every kernel writes an array it does not read, so its output after any number of
    iterations is a function of the untouched inputs and can be recomputed.
    """
    if kernel == "read":
        ref = float(torch.sum(a, dtype=torch.float64))
        # A summation error is bounded by (a small multiple of) eps·Σ|a|; 1e-6 is ~8 fp32
        # eps: far above a correct reduction, far below what skipping part of the array changes.
        l1 = torch.linalg.vector_norm(a, ord=1, dtype=torch.float64)  # no |a| temporary
        bound = 1e-6 * float(l1) + 1e-3
        if not abs(float(total) - ref) <= bound:
            raise RuntimeError(
                f"membw read: sum is {float(total):.6g}, float64 reference {ref:.6g}: "
                "the reduction kernel is wrong on this device"
            )
        return
    stride = max(1, a.numel() // _SAMPLES)
    ha, hb, hc = (x[::stride].cpu() for x in (a, b, c))
    got, want = {
        "copy": (hc, ha),
        "scale": (hb, hc * SCALAR),
        "add": (hc, ha + hb),
        "triad": (ha, hb + hc * SCALAR),
    }[kernel]
    if not torch.allclose(got, want, rtol=1e-5, atol=1e-6):
        bad = int((~torch.isclose(got, want, rtol=1e-5, atol=1e-6)).sum())
        raise RuntimeError(
            f"membw {kernel}: {bad} of {got.numel()} sampled elements differ from host "
            "arithmetic: the kernel is wrong on this device"
        )


def _measure(ctx: BenchContext, kernel: str, elements: int) -> Measurement:
    """Allocate, time and check one kernel; the arrays die with this frame."""
    torch = ctx.torch
    gen = torch.Generator(device=ctx.device)
    gen.manual_seed(ctx.seed)
    a, b, c = (torch.randn(elements, generator=gen, device=ctx.device) for _ in range(3))
    total = torch.empty((), dtype=torch.float32, device=ctx.device)
    kernels: dict[str, Callable[[], Any]] = {
        "copy": lambda: c.copy_(a),
        "scale": lambda: torch.mul(c, SCALAR, out=b),
        "add": lambda: torch.add(a, b, out=c),
        "triad": lambda: torch.add(b, c, alpha=SCALAR, out=a),
        "read": lambda: torch.sum(a, dim=0, out=total),
    }
    step = kernels[kernel]
    result = ctx.measure(
        step,
        policy=ctx.kernel_policy,
        work_per_iter=float(bytes_per_iter(kernel, elements)),
        flush=False,
    )
    step()
    check_kernel(torch, kernel, a, b, c, total)
    return result


def _params(ctx: BenchContext, kernel: str, elements: int) -> dict[str, Any]:
    working_set = bytes_per_iter(kernel, elements)
    cache = cache_bytes(ctx)
    return {
        "kernel": kernel,
        "dtype": "fp32",
        "elements": elements,
        "array_bytes": elements * ELEMENT_BYTES,
        "working_set_bytes": working_set,
        "llc_bytes": cache,
        "llc_multiple": round(working_set / cache, 2) if cache else None,
        "array_llc_multiple": round(elements * ELEMENT_BYTES / cache, 2) if cache else None,
    }


def _runner(kernel: str, elements: int) -> Callable[[BenchContext], Measurement]:
    def run(ctx: BenchContext) -> Measurement:
        try:
            result = _measure(ctx, kernel, elements)
        finally:
            if ctx.on_gpu:
                ctx.torch.cuda.empty_cache()
        return dataclasses.replace(
            result, params={**result.params, **_params(ctx, kernel, elements)}
        )

    return run


def _cases(ctx: BenchContext) -> list[Case]:
    elements = array_elements(ctx)
    # Names carry no size: the size depends on the device's caches, and compare joins
    # an MI300X run with an H100 run on the name.
    return [
        Case(
            name=kernel,
            run=_runner(kernel, elements),
            params=_params(ctx, kernel, elements),
            unit="GB/s",
            scale=1e9,
            peak=("bandwidth", kernel),
        )
        for kernel in ARRAYS
    ]


WORKLOAD = register(
    Workload(
        name="membw",
        summary="Device-memory bandwidth: BabelStream copy/scale/add/triad plus a pure read",
        cases=_cases,
        needs=(),
    )
)
