"""Start-up of ``gpuport hipify`` (issue 18, item 4): a process started for one command
imports that command only; every other command still works from ``main(argv)``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")
PROBE = """
import sys
sys.argv = ["gpuport", "hipify", "x.cu"]
import gpuport.cli.app as app
print(app._registered)
print("gpuport.cli.bench_cmd" in sys.modules, "gpuport.cli.assess_cmd" in sys.modules)
try:
    app.main(["cost", "--help"])
except SystemExit as exc:
    print("exit", exc.code)
"""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )


def test_hipify_process_imports_hipify_only_and_main_still_reaches_others() -> None:
    done = _run(PROBE)
    lines = done.stdout.splitlines()
    assert lines[0] == "['hipify']", done.stderr
    assert lines[1] == "False False"
    assert "Usage: gpuport cost" in done.stdout
    assert lines[-1] == "exit 0"


def test_plain_help_lists_every_command() -> None:
    done = _run(
        "import sys; sys.argv=['gpuport']; import gpuport.cli.app as a; print(a._registered)"
    )
    assert "'assess', 'scan', 'rules', 'hipify', 'port', 'bench'" in done.stdout, done.stderr


# A real run (a folder with a kernel, a header and a Makefile; JSON report), then what the
# process imported and whether it read the package catalog. Checked through sys.modules, not
# timed: the module list is what the start-up cost is made of (docs/PERFORMANCE.md).
RUN = """
import json, os, sys
sys.argv = ["gpuport", "hipify", sys.argv[1], "--hip-version", "5.2", "-o", sys.argv[2],
            "--format", "json", "--output", sys.argv[3]]
from gpuport.cli.entry import main
try:
    main()
except SystemExit as exc:
    code = exc.code
from gpuport.knowledge import load_packages
print(json.dumps({"code": code, "modules": sorted(sys.modules),
                  "packages_read": load_packages.cache_info().currsize}))
"""

KERNEL = """#include <cuda_runtime.h>
#include "util.h"
__global__ void k(float* x) {
  float v = x[threadIdx.x];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
  x[threadIdx.x] = v;
}
int main() { float* d; cudaMalloc(&d, 128); k<<<1, 32>>>(d); cudaFree(d); return 0; }
"""

# Modules a hipify run has no use for: the scanner's engine and project model (walk, routes,
# verdict), other commands, template and YAML engines, rich (a JSON report draws nothing),
# pathspec (no .gitignore here), the package catalog's reading, typer (a plain hipify
# command line is parsed by gpuport.cli.entry) and pydantic (hipify's report, findings, target
# and API map are plain dataclasses; ~0.2 s of every call).
NOT_ON_HIPIFY_PATH = (
    "typer",
    "click",
    "pydantic",
    "pydantic_core",
    "gpuport.scan.engine",
    "gpuport.scan.project.view",
    "gpuport.scan.project.routes",
    "gpuport.scan.verdict",
    "gpuport.scan.project.build_model",
    "gpuport.bench",
    "gpuport.assess",
    "gpuport.cost",
    "gpuport.validate",
    "gpuport.doctor",
    "gpuport.hipify.check",
    "jinja2",
    "rich",
    "pathspec",
)

# Rule families hipify's native hazard pass does not run: the scanner loads rule families on
# demand (gpuport.scan.rules.checkers_for), so none of these may load.
OTHER_RULE_FAMILIES = (
    "gpuport.scan.rules.python",
    "gpuport.scan.rules.deps",
    "gpuport.scan.rules.containers",
    "yaml",
    "packaging.markers",
)


def _hipify_run(tmp_path: Path) -> dict[str, object]:
    import json

    src = tmp_path / "bench-cuda"
    src.mkdir()
    (src / "main.cu").write_text(KERNEL, encoding="utf-8")
    (src / "util.h").write_text("#define WARP 32\n", encoding="utf-8")
    (src / "Makefile").write_text("all:\n\tnvcc -arch=sm_80 main.cu -o main\n", encoding="utf-8")
    out, report = tmp_path / "out", tmp_path / "report.json"
    done = _run_args(RUN, str(src), str(out), str(report))
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    assert result["code"] == 0, done.stderr
    # the run did its work: translated, reported
    assert "hipMalloc" in (out / "main.cu").read_text(encoding="utf-8")
    assert json.loads(report.read_text(encoding="utf-8"))["totals"]["files"] == 2
    return result


def _run_args(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, check=False
    )


def test_hipify_run_imports_only_what_it_uses(tmp_path: Path) -> None:
    result = _hipify_run(tmp_path)
    modules = set(result["modules"])  # type: ignore[call-overload]
    unneeded = [
        m for m in modules if any(m == n or m.startswith(n + ".") for n in NOT_ON_HIPIFY_PATH)
    ]
    assert not unneeded
    assert "gpuport.hipify.translate" in modules and "gpuport.scan.rules.native" in modules
    assert result["packages_read"] == 0  # the native rules never look a package up


def test_hipify_run_loads_no_other_rule_family(tmp_path: Path) -> None:
    modules = set(_hipify_run(tmp_path)["modules"])  # type: ignore[call-overload]
    assert not [m for m in OTHER_RULE_FAMILIES if m in modules]
