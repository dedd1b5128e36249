"""kill -9 during ``gpuport hipify --in-place``: what is left behind, and does a re-run finish?

The field trial of issue 14 (20 trials on 3,000 files) found 0 sources lost but 2 trials with a
0-byte ``.gpuport.bak`` and 12 with a ``.tmp`` left in the source tree, and every re-run refused
("backup already exists"). This script repeats that experiment against the current code.

Each trial copies a pristine tree of N CUDA files (every 50th one 40x longer), starts the real
CLI in a subprocess, waits until the write phase has begun (the first backup appears) plus a
random delay, kills the whole process group with SIGKILL, then checks every file:

* source: byte-equal to the original or to the expected translation (anything else: corrupt);
* backup: absent, or byte-equal to the original (anything else: a wrong backup);
* temporary files (``*.tmp``) anywhere in the tree;
* a re-run of the same command: exit 0 and every source translated.

Usage: ``python benchmarks/kill_in_place.py [--trials 20] [--files 1000]``; prints a JSON summary.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CUDA = (
    "__global__ void k{i}(float* x, int n) {{\n"
    "  int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (t < n) x[t] = __shfl_xor_sync(0xffffffff, x[t], 1);\n"
    "}}\n"
    "void run{i}(float* d, int n) {{\n"
    "  cudaMalloc(&d, n * sizeof(float));\n"
    "  k{i}<<<(n + 255) / 256, 256>>>(d, n);\n"
    "  cudaDeviceSynchronize();\n"
    "  cudaFree(d);\n"
    "}}\n"
)


def _cmd(tree: Path) -> list[str]:
    return [sys.executable, "-m", "gpuport", "hipify", str(tree), "--in-place",
            "--hip-version", "6.4", "--format", "json"]  # fmt: skip


def _make_pristine(folder: Path, n: int) -> None:
    for i in range(n):
        sub = folder / f"d{i // 100:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        body = CUDA.format(i=i) * (40 if i % 50 == 0 else 1)
        (sub / f"k{i:04d}.cu").write_text(body)


def _expected(pristine: Path, work: Path, env: dict[str, str]) -> dict[str, bytes]:
    shutil.copytree(pristine, work)
    subprocess.run(_cmd(work), env=env, capture_output=True, check=True, timeout=600)
    return {p.relative_to(work).as_posix(): p.read_bytes() for p in work.rglob("*.cu")}


def trial(pristine: Path, expected: dict[str, bytes], work: Path, env: dict[str, str],
          rng: random.Random) -> dict[str, int | bool]:  # fmt: skip
    shutil.copytree(pristine, work)
    proc = subprocess.Popen(_cmd(work), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if next(work.rglob("*.gpuport.bak"), None) is not None:
            break
        time.sleep(0.005)
    time.sleep(rng.uniform(0.0, 1.0))
    killed = proc.poll() is None
    if killed:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(60)
    corrupt = wrong_backup = 0
    for src in pristine.rglob("*.cu"):
        rel = src.relative_to(pristine).as_posix()
        have = (work / rel).read_bytes()
        if have not in (src.read_bytes(), expected[rel]):
            corrupt += 1
        bak = work / (rel + ".gpuport.bak")
        if bak.exists() and bak.read_bytes() != src.read_bytes():
            wrong_backup += 1
    temps = [p.name for p in work.rglob("*.tmp")]
    again = subprocess.run(_cmd(work), env=env, capture_output=True, text=True, timeout=600,
                           check=False)  # fmt: skip
    finished = again.returncode == 0 and all(
        (work / rel).read_bytes() == data for rel, data in expected.items()
    )
    shutil.rmtree(work)
    return {"killed": killed, "corrupt": corrupt, "wrong_backup": wrong_backup,
            "temps": len(temps), "rerun_ok": finished}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=14)
    args = ap.parse_args()
    repo = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(repo / "src")}
    rng = random.Random(args.seed)  # noqa: S311 - kill timing, not cryptography
    with tempfile.TemporaryDirectory(prefix="gpuport-kill-") as tmp:
        pristine = Path(tmp) / "pristine"
        _make_pristine(pristine, args.files)
        expected = _expected(pristine, Path(tmp) / "expected", env)
        results = [
            trial(pristine, expected, Path(tmp) / f"t{i}", env, rng) for i in range(args.trials)
        ]
    summary = {
        "trials": len(results),
        "killed_in_write_phase": sum(bool(r["killed"]) for r in results),
        "corrupt_sources": sum(int(r["corrupt"]) for r in results),
        "wrong_backups": sum(int(r["wrong_backup"]) for r in results),
        "trials_with_temp_files": sum(bool(r["temps"]) for r in results),
        "reruns_completed": sum(bool(r["rerun_ok"]) for r in results),
        "files": args.files,
    }
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
