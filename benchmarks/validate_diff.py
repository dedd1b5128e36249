"""Benchmark: `gpuport validate diff` throughput on captures holding over 1 GB of activations.

Budget (issue): diff compares at least 1 GB of activations per 5 s on the 2-core dev machine.

Method: two synthetic captures with the same manifest layout as a real one (one "module call"
per tensor, transformer-like shapes: [batch, seq, hidden] fp32 plus a bf16 share), A random and
B = A + relative noise 1e-6 (so nothing is bitwise equal and every metric pass runs). Each file
holds ``--gb`` GB of activations (default 1.07 GB, i.e. 1 GiB). Timed: ``diff_files(A, B)``
end to end (open and validate both files, sha256 of every tensor of both files, all metrics
of every pair, the report), median of N runs with the files in the page cache. The figure is
GB of A's activations compared per second; reading B's and hashing both files is included.
Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path

import torch

from gpuport.models import EnvFingerprint
from gpuport.validate import env, gpv
from gpuport.validate.diff import diff_files
from gpuport.validate.model import CaptureManifest, ModuleRecord, TensorInfo

SHAPE = (4, 512, 2048)  # 16 MiB per fp32 tensor


def _write(path: Path, tensors: dict[str, torch.Tensor], records: list[ModuleRecord]) -> None:
    checksums = {name: gpv.sha256(torch, t) for name, t in tensors.items()}
    manifest = CaptureManifest(
        env=EnvFingerprint.collect(),
        settings=env.numeric_settings(torch, torch.device("cpu")),
        model_ref="benchmarks/validate_diff.py:synthetic",
        seed=0,
        signature="0" * 64,
        param_checksum="0" * 64,
        model_inputs={"args": [], "kwargs": []},
        modules=records,
        max_bytes=1 << 40,
        stored_bytes=sum(t.numel() * t.element_size() for t in tensors.values()),
        checksums=checksums,
    )
    gpv.write(path, tensors, manifest)


def make_pair(folder: Path, gigabytes: float) -> tuple[Path, Path, int]:
    """Two captures, A and B, of ``gigabytes`` each; returns their paths and A's bytes."""
    gen = torch.Generator().manual_seed(0)
    per = SHAPE[0] * SHAPE[1] * SHAPE[2] * 4
    count = max(1, round(gigabytes * 1e9 / per))
    a_tensors: dict[str, torch.Tensor] = {}
    b_tensors: dict[str, torch.Tensor] = {}
    records = []
    for i in range(count):
        half = i % 4 == 3  # a quarter bf16, twice as many elements for the same bytes
        shape = (SHAPE[0] * 2, *SHAPE[1:]) if half else SHAPE
        name = f"out/{i:06d}/layers.{i}.mlp/0"
        a = torch.randn(shape, generator=gen)
        b = a + a * 1e-6 * torch.randn(shape, generator=gen)
        if half:
            a, b = a.bfloat16(), b.bfloat16()
        a_tensors[name], b_tensors[name] = a, b
        dtype = str(a.dtype).removeprefix("torch.")
        info = TensorInfo(name=name, dtype=dtype, shape=list(shape))
        op = "Linear" if i % 2 else "SiLU"
        records.append(
            ModuleRecord(
                order=i,
                path=f"layers.{i}.mlp",
                op=op,
                op_class="matmul" if op == "Linear" else "elementwise",
                k=2048 if op == "Linear" else None,
                outputs=[info],
            )
        )
    pa, pb = folder / "a.gpv", folder / "b.gpv"
    _write(pa, a_tensors, records)
    _write(pb, b_tensors, records)
    return pa, pb, sum(t.numel() * t.element_size() for t in a_tensors.values())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gb", type=float, default=1.074)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        pa, pb, nbytes = make_pair(Path(tmp), args.gb)
        diff_files(pa, pb)  # warm-up: pages in the cache, torch kernels loaded
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            report = diff_files(pa, pb)
            times.append(time.perf_counter() - t0)
    best = statistics.median(times)
    print(
        json.dumps(
            {
                "benchmark": "validate_diff",
                "machine": f"{platform.machine()}, {torch.get_num_threads()} torch threads",
                "torch": torch.__version__,
                "tensors": len(report.rows),
                "bytes_per_capture": nbytes,
                "bytes_compared": report.bytes_compared,
                "verdict": report.verdict.value,
                "seconds_median": round(best, 3),
                "gb_per_s": round(nbytes / best / 1e9, 3),
                "seconds_per_gb": round(best / (nbytes / 1e9), 3),
                "budget_seconds_per_gb": 5.0,
                "seconds": [round(t, 3) for t in times],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
