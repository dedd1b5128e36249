"""Benchmark for issue 3: `gpuport hipify` over the CUDA headers of an installed torch.

Budget: translating every CUDA header under ``torch/include`` (each ``.h``/``.cuh``/``.cu`` whose
path contains ``cuda``) with the hazard pass on takes at most 1.5 s wall in one process on a
2-core machine. Each run does what ``gpuport hipify`` does per file (read, GP3xx hazard rules on
the original, translation) for all files in this one process; the API map, target and rule
packages are loaded once before the first run. Prints JSON.

    python benchmarks/hipify_torch.py [--runs 5] [--hip-version 6.4]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import statistics
import sys
import time
from pathlib import Path

from gpuport.hipify.translate import translate
from gpuport.knowledge import load_packages, resolve_target
from gpuport.scan.engine import check_text
from gpuport.scan.project.files import Skip, read_text
from gpuport.scan.rules import FileKind

SUFFIXES = (".h", ".cuh", ".cu")


def torch_include() -> Path:
    spec = importlib.util.find_spec("torch")  # locates the package without importing it
    if spec is None or spec.origin is None:
        sys.exit("torch is not installed here: `make bench-scan` installs torch==2.13.0")
    return Path(spec.origin).parent / "include"


def cuda_headers(include: Path) -> list[Path]:
    return sorted(
        p
        for p in include.rglob("*")
        if p.suffix in SUFFIXES and "cuda" in p.relative_to(include).as_posix() and p.is_file()
    )


def one_run(files: list[Path], include: Path, hip_version: str) -> tuple[float, int, int, int]:
    target = resolve_target("gfx942")
    packages = load_packages()
    start = time.perf_counter()
    lines = hazards = skipped = 0
    for path in files:
        text = read_text(path)
        if isinstance(text, Skip):
            skipped += 1
            continue
        rel = path.relative_to(include).as_posix()
        found, _ = check_text(rel, text, FileKind.NATIVE, target, packages)
        translate(text, hip_version=hip_version)
        hazards += len(found)
        lines += text.count("\n")
    return time.perf_counter() - start, lines, hazards, skipped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--hip-version", default="6.4")
    args = parser.parse_args()
    include = torch_include()
    files = cuda_headers(include)
    translate("cudaMalloc(0);", hip_version=args.hip_version)  # loads the API map once
    walls: list[float] = []
    lines = hazards = skipped = 0
    for _ in range(args.runs):
        wall, lines, hazards, skipped = one_run(files, include, args.hip_version)
        walls.append(wall)
    median = statistics.median(walls)
    print(
        json.dumps(
            {
                "files": len(files),
                "lines": lines,
                "skipped": skipped,
                "hazards": hazards,
                "hip_version": args.hip_version,
                "runs": args.runs,
                "wall_s_median": round(median, 3),
                "wall_s_min": round(min(walls), 3),
                "wall_s_max": round(max(walls), 3),
                "budget_s": 1.5,
                "within_budget": median <= 1.5,
                "python": platform.python_version(),
                "machine": platform.machine(),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
