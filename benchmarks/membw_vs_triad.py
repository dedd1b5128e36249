"""Benchmark for issue 17: does `gpuport bench --workload membw` measure memory on a CPU?

Runs the membw workload's triad case as ``gpuport bench`` does (quick suite, arrays sized
from the last-level cache the system reports), and around it an independent STREAM-style
triad (``a = b + s*c`` with torch's fused ``add(alpha=)``, same thread count, arrays of the
same size, timed with ``perf_counter``, median of 9, first touch excluded). Reports both in
GB/s and their ratio; the issue asks for agreement within 30 %. Prints JSON.

    python benchmarks/membw_vs_triad.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import torch

from gpuport.bench.registry import BenchContext
from gpuport.bench.run import make_measure, policies
from gpuport.bench.workloads import membw
from gpuport.platform import detect


def independent_triad(n: int, repeats: int = 9) -> float:
    a, b, c = torch.empty(n), torch.full((n,), 1.0), torch.full((n,), 2.0)
    torch.add(b, c, alpha=0.4, out=a)
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        torch.add(b, c, alpha=0.4, out=a)
        rates.append(3 * 4 * n / (time.perf_counter() - t0) / 1e9)
    return statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    info = detect(0, torch).model_copy(update={"backend": "cpu", "spec_key": None})
    kernel, model = policies("quick", False)
    device = torch.device("cpu")
    ctx = BenchContext(
        torch=torch,
        device=device,
        info=info,
        spec=None,
        suite="quick",
        kernel_policy=kernel,
        model_policy=model,
        measure=make_measure(torch, device, info, None),
        options={},
    )
    n = membw.array_elements(ctx)
    (triad,) = [c for c in membw.WORKLOAD.cases(ctx) if c.name == "triad"]
    rounds = []
    for _ in range(args.rounds):
        before = independent_triad(n)
        result = triad.run(ctx)
        after = independent_triad(n)
        bench = (result.work_per_iter or 0) / result.stats.median / 1e9
        reference = (before + after) / 2
        rounds.append({"bench_gbs": bench, "triad_gbs": reference, "ratio": bench / reference})
    print(
        json.dumps(
            {
                "machine": platform.machine(),
                "python": platform.python_version(),
                "torch": torch.__version__,
                "threads": torch.get_num_threads(),
                "llc_bytes": membw.cpu_cache_bytes(),
                "array_bytes": n * 4,
                "rounds": rounds,
                "median_ratio": statistics.median(r["ratio"] for r in rounds),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
