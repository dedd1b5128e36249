"""Benchmark for issue 18, item 4: ``gpuport hipify`` called once per folder, against
hipify-perl called once per file, on the same files.

* gpuport: ``python -m gpuport hipify FOLDER -o OUT --hip-version V --format json --output
  TMP/report.json`` for each folder (``--report terminal``: without ``--format``/``--output``,
  so the default per-file table is drawn, with rich, into a pipe); one process per folder, as
  a shell loop over a project would; ``--hip-version`` given, so no hipcc is asked.
* hipify-perl: ``perl HIPIFY_PERL -quiet-warnings FILE -o OUT/FILE`` for each CUDA/C++ file
  gpuport translated in that folder (hipify-perl's own docs: one file per call). hipify-perl is
  not shipped by Debian: pass the path of a copy (e.g. ``git show 014177bc:bin/hipify-perl`` from
  github.com/ROCm/HIPIFY, the pinned 2024-10 snapshot); without it only gpuport is timed.
* Start-up: ``gpuport hipify TINY.cu --hip-version V`` (a 3-line file) against ``python -c
  pass``, ``--runs`` times each; the median difference is the process overhead of a call, in
  wall and in CPU time.
* Python runs as an installed package does, with its bytecode cached (``PYTHONDONTWRITEBYTECODE``
  dropped, ``PYTHONPYCACHEPREFIX`` in a temporary folder, one warm-up call).

The two tools run interleaved, folder by folder, so a busy machine slows both alike; the CPU
time (user + sys) of the child processes is reported too, as it depends less on the load.
Prints JSON.

    python benchmarks/hipify_startup.py HECBENCH/src [--folders 40] [--hipify-perl PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCES = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc")
TINY = "__global__ void k(float* x) { x[threadIdx.x] = 0; }\nint main() { return 0; }\n"


CPU = {"gp": 0.0, "perl": 0.0}


def _wall(cmd: list[str], env: dict[str, str], tool: str | None = None) -> float:
    """Wall time of ``cmd``; with ``tool``, its CPU time (user + sys) is added to CPU[tool]."""
    wall, cpu = _timed(cmd, env)
    if tool is not None:
        CPU[tool] += cpu
    return wall


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU time (user + sys, the child's) of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=False, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path, help="HeCBench's src folder")
    ap.add_argument("--folders", type=int, default=40)
    ap.add_argument("--hip-version", default="5.2")
    ap.add_argument("--hipify-perl", type=Path)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument(
        "--report",
        choices=("json", "terminal"),
        default="json",
        help="json: --format json --output TMP/report.json (the default); terminal: gpuport's "
        "default output, the per-file table drawn with rich, to a pipe",
    )
    args = ap.parse_args()
    folders = sorted(p for p in args.src.glob("*-cuda") if p.is_dir())[: args.folders]
    if len(folders) < args.folders:
        sys.exit(f"only {len(folders)} *-cuda folders under {args.src}")
    gp = [sys.executable, "-m", "gpuport", "hipify"]
    quiet = ["--hip-version", args.hip_version]
    with tempfile.TemporaryDirectory() as tmp:
        if args.report == "json":  # a regular file: gpuport refuses to replace a device node
            quiet += ["--format", "json", "--output", str(Path(tmp) / "report.json")]
        # as an installed package runs: bytecode cached (a dev shell may forbid writing it)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        tiny = Path(tmp) / "tiny.cu"
        tiny.write_text(TINY, encoding="utf-8")
        _wall([*gp, str(tiny), "--hip-version", args.hip_version], env)  # writes the bytecode
        bare, one, bare_cpu, one_cpu = [], [], [], []
        for _ in range(args.runs):
            wall, cpu = _timed([sys.executable, "-c", "pass"], env)
            bare.append(wall)
            bare_cpu.append(cpu)
            wall, cpu = _timed([*gp, str(tiny), "--hip-version", args.hip_version], env)
            one.append(wall)
            one_cpu.append(cpu)
        gp_total = perl_total = 0.0
        files = 0
        for i, folder in enumerate(folders):
            out = Path(tmp) / "gp" / str(i)
            gp_total += _wall([*gp, str(folder), "-o", str(out), *quiet], env, "gp")
            mine = [p for p in folder.rglob("*") if p.is_file() and p.suffix in SOURCES]
            files += len(mine)
            if args.hipify_perl is not None:
                for f in mine:
                    dest = Path(tmp) / "perl" / str(i) / f.relative_to(folder)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    cmd = [
                        "perl",
                        str(args.hipify_perl),
                        "-quiet-warnings",
                        str(f),
                        "-o",
                        str(dest),
                    ]
                    perl_total += _wall(cmd, env, "perl")
    result = {
        "benchmark": "hipify_startup",
        "report": args.report,
        "folders": len(folders),
        "files": files,
        "gpuport_per_folder_s": round(gp_total, 2),
        "hipify_perl_per_file_s": round(perl_total, 2) if args.hipify_perl else None,
        "gpuport_per_folder_cpu_s": round(CPU["gp"], 2),
        "hipify_perl_per_file_cpu_s": round(CPU["perl"], 2) if args.hipify_perl else None,
        "python_bare_median_s": round(statistics.median(bare), 3),
        "gpuport_tiny_file_median_s": round(statistics.median(one), 3),
        "overhead_median_s": round(statistics.median(one) - statistics.median(bare), 3),
        # CPU time depends less on the machine's load than wall time
        "overhead_cpu_median_s": round(statistics.median(one_cpu) - statistics.median(bare_cpu), 3),
        "load_average_1min_at_end": os.getloadavg()[0],
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
