"""Benchmark for issue 18: does ``--wave64 fix`` keep real code compiling?

For each HeCBench benchmark given (``src/NAME-cuda``), runs ``gpuport hipify NAME-cuda -o OUT
--hip-version V`` twice, with ``--wave64 report`` and ``--wave64 fix``, then compiles every
translation unit of each output (``.cu``/``.cpp`` files) with ``hipcc --offload-arch=gfx90a
--offload-arch=gfx1030 -x hip -c -I OUT`` (a 64-lane and a 32-lane target). Prints a Markdown
table: files compiled per mode, and the files that compile in one mode only.

    python benchmarks/hipify_wave64_compile.py HECBENCH/src NAME ... [--hip-version 5.2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ARCHS = ("gfx90a", "gfx1030")
GPUPORT = (sys.executable, "-m", "gpuport", "hipify")
QUIET = ("--format", "json", "--output", os.devnull)


def hipify(src: Path, out: Path, version: str, mode: str) -> None:
    subprocess.run(
        [*GPUPORT, str(src), "-o", str(out), "--hip-version", version, "--wave64", mode, *QUIET],
        check=True,
        capture_output=True,
    )


def compiles(hipcc: str, root: Path, tu: Path) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [hipcc, *(f"--offload-arch={a}" for a in ARCHS), "-x", "hip", "-c", str(tu)]
        cmd += ["-I", str(tu.parent), "-I", str(root), "-o", str(Path(tmp) / "x.o")]
        done = subprocess.run(
            cmd,
            capture_output=True,
            env={**os.environ, "HIP_PLATFORM": "amd"},
            timeout=600,
            check=False,
        )
    return done.returncode == 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path)
    ap.add_argument("names", nargs="+")
    ap.add_argument("--hip-version", default="5.2")
    args = ap.parse_args()
    hipcc = shutil.which("hipcc")
    if hipcc is None:
        sys.exit("hipcc is not on PATH (apt-get install hipcc)")
    print("| benchmark | TUs | report: compiled | fix: compiled | fix only fails |")
    print("|---|---:|---:|---:|---|")
    totals = [0, 0, 0]
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.names:
            ok: dict[str, set[str]] = {}
            tus: list[str] = []
            for mode in ("report", "fix"):
                out = Path(tmp) / mode / name
                hipify(args.src / f"{name}-cuda", out, args.hip_version, mode)
                tus = sorted(
                    p.relative_to(out).as_posix()
                    for p in out.rglob("*")
                    if p.suffix in (".cu", ".cpp") and p.is_file()
                )
                ok[mode] = {t for t in tus if compiles(hipcc, out, out / t)}
            worse = sorted(ok["report"] - ok["fix"])
            print(
                f"| {name} | {len(tus)} | {len(ok['report'])} | {len(ok['fix'])} "
                f"| {', '.join(worse) or '-'} |",
                flush=True,
            )
            totals[0] += len(tus)
            totals[1] += len(ok["report"])
            totals[2] += len(ok["fix"])
    print(f"| **all** | {totals[0]} | {totals[1]} | {totals[2]} | |")


if __name__ == "__main__":
    main()
