"""Where the start-up of ``gpuport hipify`` goes (issue 18, item 4), stage by stage.

A fresh Python process imports what a ``gpuport hipify FILE --hip-version V`` process imports,
in stages (gpuport's shared models; the knowledge loaders; the scanner pieces hipify uses, with
the rule families they pull in; the translator; the hipify core; the typer-free command line),
then runs the command on a 3-line file; each stage's CPU time (``time.process_time``) is
recorded. ``--runs`` processes; the median of each stage is printed as JSON with the rule
modules and heavy third-party packages the process had loaded at the end. Python runs with its
bytecode cached, as an installed package does.

    python benchmarks/hipify_startup_stages.py [--runs 7] [--hip-version 5.2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

TINY = "__global__ void k(float* x) { x[threadIdx.x] = 0; }\nint main() { return 0; }\n"

CHILD = r"""
import json, os, sys, time
T = [time.process_time()]
names = []
def mark(name):
    T.append(time.process_time()); names.append(name)
import gpuport.models; mark("gpuport.models")
import gpuport.knowledge, gpuport.knowledge.api_map; mark("gpuport.knowledge (+api_map)")
import gpuport.scan.cxx, gpuport.scan.project.files; mark("gpuport.scan.cxx/files (+rule families)")
import gpuport.scan.check; mark("gpuport.scan.check")
import gpuport.hipify.translate; mark("gpuport.hipify.translate (+wave64)")
import gpuport.hipify.run; mark("gpuport.hipify.run")
sys.argv = ["gpuport", "hipify", sys.argv[1], "--hip-version", sys.argv[2], "-o", sys.argv[3],
            "--format", "json", "--output", os.devnull]
import gpuport.cli.entry, gpuport.cli.hipify_run; mark("gpuport.cli.entry (+hipify_run)")
try:
    gpuport.cli.entry.main()
except SystemExit:
    pass
mark("the run (parse, load map/target/headers, translate, hazards, write, report)")
heavy = ("typer", "pydantic", "rich", "yaml", "jinja2", "pathspec", "packaging.markers",
         "importlib.metadata")
print(json.dumps({
    "stages": {n: T[i + 1] - T[i] for i, n in enumerate(names)},
    "total": T[-1],
    "rule_modules": sorted(m for m in sys.modules if m.startswith("gpuport.scan.rules.")),
    "heavy_loaded": [m for m in heavy if m in sys.modules],
}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--hip-version", default="5.2")
    args = ap.parse_args()
    runs: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        tiny = Path(tmp) / "tiny.cu"
        tiny.write_text(TINY, encoding="utf-8")
        for i in range(args.runs + 1):  # the first writes the bytecode
            out = Path(tmp) / f"out{i}"
            done = subprocess.run(
                [sys.executable, "-c", CHILD, str(tiny), args.hip_version, str(out)],
                capture_output=True,
                text=True,
                check=False,
                env=env,
            )
            if done.returncode != 0:
                sys.exit(f"the probe failed: {done.stderr.strip()[-500:]}")
            if i:
                runs.append(json.loads(done.stdout.splitlines()[-1]))
    stages = list(runs[0]["stages"])  # type: ignore[call-overload]
    result = {
        "benchmark": "hipify_startup_stages",
        "runs": args.runs,
        "cpu_ms_median": {
            s: round(1000 * statistics.median(r["stages"][s] for r in runs), 1)  # type: ignore[index]
            for s in stages
        },
        "total_cpu_ms_median": round(
            1000 * statistics.median(float(r["total"]) for r in runs),  # type: ignore[arg-type]
            1,
        ),
        "rule_modules_loaded": runs[-1]["rule_modules"],
        "heavy_modules_loaded": runs[-1]["heavy_loaded"],
        "load_average_1min_at_end": os.getloadavg()[0],
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
