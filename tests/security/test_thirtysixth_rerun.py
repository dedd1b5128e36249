"""Issue 23: the thirty-sixth re-run (targeted at the session's new code, a sixteenth reviewer,
on d6e4b3a): 11 findings, no code run by gpuport, nothing read or written outside; two
injections into files ``port`` writes, seven stalls, two crashes (exit 4). Each test fails on
the code before (the timed ones took 6-30 s there); the vendored-copy trust (F7) is in
tests/scan/test_twentyfirst_classes.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.project.opt_in import opt_in_extensions
from tests.port.helpers import project, run
from tests.security.test_stalls import _within

_PTX = (
    "#include <cuda_runtime.h>\n"
    '__global__ void k(int*o){int x; asm volatile("mov.u32 %0, %%laneid;" : "=r"(x)); o[0]=x;}\n'
)


def _scan(root: Path) -> int:
    return len(scan_path(root, ScanOptions(jobs=1)).findings)


def test_f1_many_folders_with_a_dockerfile_and_a_readme(tmp_path: Path) -> None:
    project(tmp_path, {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n"})
    for i in range(2000):
        project(tmp_path / f"d{i}", {"Dockerfile": "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n",
                                     "README.md": "hi\n"})  # fmt: skip
    _within(lambda: _scan(tmp_path), 4.0)


def test_f2_many_statements_under_one_large_test() -> None:
    text = (
        "import sys\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "if f(" + "a," * 2000 + "):\n" + "".join(f"    x{i} = 1\n" for i in range(3000))
        + "    ext = CUDAExtension('a', ['csrc/k.cu'])\n"
    )  # fmt: skip
    assert opt_in_extensions(text) is None  # f(...) is not a flag: built by default
    _within(lambda: opt_in_extensions(text), 1.0)


def test_f11_a_deep_not_chain_is_unknown_not_a_crash(tmp_path: Path) -> None:
    setup = "from torch.utils.cpp_extension import CUDAExtension\nif " + "not " * 2000
    setup += "x:\n    e = CUDAExtension('a', ['csrc/k.cu'])\n"
    project(tmp_path, {"csrc/k.cu": _PTX, "setup.py": setup})
    assert opt_in_extensions((tmp_path / "setup.py").read_text()) is None
    assert scan_path(tmp_path, ScanOptions(jobs=1)).verdict.value == "blocked"


_WHEELS = """name: Build Wheels CUDA
on:
  push:
jobs:
  build:
    runs-on: ubuntu-22.04
    steps:
      - uses: actions/checkout@v4
      - name: Build
        run: |
          export CMAKE_ARGS="-DGGML_CUDA=on"
          python -m build --wheel
"""


def test_f3_a_workflow_name_with_a_newline_is_never_written(tmp_path: Path) -> None:
    bad = 'w\nz: "\npermissions: write-all\n#'
    project(tmp_path, {"CMakeLists.txt": "project(x LANGUAGES CXX CUDA)\n",
                       f".github/workflows/{bad}.yml": _WHEELS})  # fmt: skip
    report = run(tmp_path, unsafe_fixes=True, apply=True)
    for f in report.files:
        assert "\n" not in f.path and "permissions" not in f.path
    for path in (tmp_path / ".github" / "workflows").iterdir():
        if path.name.endswith("rocm.yml") or path.name.endswith("rocm.yaml"):
            assert "permissions" not in (yaml.safe_load(path.read_text()) or {})


def test_f4_a_compose_service_name_with_newlines_is_not_written(tmp_path: Path) -> None:
    compose = (
        "services:\n"
        '  "gpu:\\n    privileged: true\\n  trainer":\n'
        "    image: rocm/pytorch:latest\n"
        "    deploy:\n      resources:\n        reservations:\n          devices:\n"
        "            - driver: nvidia\n              count: all\n"
        "              capabilities: [gpu]\n"
    )
    project(tmp_path, {"docker-compose.yml": compose})
    run(tmp_path, apply=True)
    for name in os.listdir(tmp_path):
        if name.startswith(("docker-compose", "compose")) and name != "docker-compose.yml":
            services = (yaml.safe_load((tmp_path / name).read_text()) or {}).get("services", {})
            assert "gpu" not in services and all(
                "privileged" not in str(v) for v in services.values()
            )


def test_f5_many_headers_and_a_large_python_file(tmp_path: Path) -> None:
    project(tmp_path, {"Makefile": "all:\n\tnvcc -o a a.cu\n", "a.cu": "int main(){}\n",
                       "tool.py": "0" * 400_000 + "\n"})  # fmt: skip
    for i in range(16_000):
        (tmp_path / "inc").mkdir(exist_ok=True)
        (tmp_path / "inc" / f"a{i:05d}.h").write_text("")
    _within(lambda: _scan(tmp_path), 9.0)  # 3 s here (most of it the walk); 8.4 s before


def test_f6_many_imports_with_unicode_aliases(tmp_path: Path) -> None:
    text = "".join(f"import nvtx as \u00f1{i}\n" for i in range(10_000))
    (tmp_path / "m.py").write_text(text, encoding="utf-8")
    assert _scan(tmp_path) > 0  # nvtx is still found
    _within(lambda: _scan(tmp_path), 2.0)


def test_f8_many_runs_of_one_script(tmp_path: Path) -> None:
    project(tmp_path, {"Dockerfile": "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nCOPY . /app\n"
                       + "RUN ./b.sh\n" * 1000, "b.sh": "echo hi\n" * 25_000})  # fmt: skip
    _within(lambda: run(tmp_path), 4.0)


def test_f9_a_workflow_name_that_is_not_utf8(tmp_path: Path) -> None:
    from gpuport.scan.model import ScanReport

    project(tmp_path, {"setup.py": "from setuptools import setup\nsetup(name='p')\n",
                       "Dockerfile": "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n"})  # fmt: skip
    wf = os.fsencode(tmp_path / ".github" / "workflows")
    os.makedirs(wf)
    with open(os.path.join(wf, b"\xff.yml"), "w") as f:
        f.write("jobs:\n  b:\n    steps:\n      - run: docker build -t x .\n")
    report = scan_path(tmp_path, ScanOptions(jobs=1))
    ScanReport.model_validate_json(report.model_dump_json())  # serialises: no surrogate


@pytest.mark.parametrize("n", [1500])
def test_f10_a_cmake_file_listing_many_sources(tmp_path: Path, n: int) -> None:
    for i in range(n):
        (tmp_path / f"k{i}.cu").write_text("__global__ void k(float*o){o[0]=1;}\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(x LANGUAGES CXX CUDA)\nadd_library(k\n"
        + "".join(f"  k{i}.cu\n" for i in range(n)) + ")\n"
    )  # fmt: skip
    _within(lambda: run(tmp_path), 8.0)
