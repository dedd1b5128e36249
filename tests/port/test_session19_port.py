"""Issue 30 classes taken up in session 19.

J46 (fangq/mcx #264): the unsafe run was not idempotent. The safe compatibility-header fix
puts the include of ``gpuport_hip_compat.h`` into the CUDA source, and scan counts a file that
includes the project's own portability header as built by the ROCm route, so a second run
judged its ``__CUDA_ARCH__`` tests (GP317) at their own severity and proposed the device-pass
fix the first run had not. The first run now takes what its own fixes put on the route.

The device-pass fix (``#ifdef __CUDA_ARCH__`` -> ``#if defined(__CUDA_ARCH__) ||
defined(__HIP_DEVICE_COMPILE__)``) is declined where the branch uses ``__CUDA_ARCH__``'s value
(mcx's ``#define __CUDA_ARCH_LIST__ __CUDA_ARCH__``): hip-clang never defines it, so the HIP
device pass would get an undefined name."""

from __future__ import annotations

import shutil
from pathlib import Path

from gpuport.port import PortOptions, port_path
from tests.port.helpers import fix_ids, project, run

README = "# k\n\nBuild for AMD GPUs with ROCm: `cmake -DGPU=hip .. && make`.\n"
CMAKE = """\
cmake_minimum_required(VERSION 3.18)
project(k LANGUAGES CXX CUDA)
find_package(CUDAToolkit REQUIRED)
add_executable(k main.cu)
target_link_libraries(k CUDA::cudart)
"""
MAIN = """\
#include <cstdio>
#include <cuda_runtime.h>

#ifdef __CUDA_ARCH__
#define FAST_PATH {value}
#else
#define FAST_PATH 0
#endif

__global__ void k(float *x) {{
  x[threadIdx.x] = FAST_PATH;
}}

int main() {{
  float *d;
  cudaMalloc(&d, 64 * sizeof(float));
  k<<<1, 64>>>(d);
  cudaDeviceSynchronize();
  cudaFree(d);
  return 0;
}}
"""


def _tree(root: Path, value: str) -> Path:
    return project(
        root,
        {"README.md": README, "CMakeLists.txt": CMAKE, "main.cu": MAIN.format(value=value)},
    )


def test_the_unsafe_run_takes_the_arch_fix_its_compat_include_puts_on_the_route(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path / "p", "1")
    first = run(root, unsafe_fixes=True)
    assert "hip-compat:gpuport_hip_compat.h" in fix_ids(first, applied=True)
    # the GP317 scan lowered (main.cu not shown on the route before the compat include)
    assert "cuda-arch-branch:main.cu" in fix_ids(first, applied=True)
    port_path(root, PortOptions(jobs=1, unsafe_fixes=True, apply=True))
    again = run(root, unsafe_fixes=True)
    assert again.files == [], [f.path for f in again.files]


def test_the_device_pass_fix_is_declined_where_the_branch_uses_cuda_arch_itself(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path / "p", "__CUDA_ARCH__")
    report = run(root, unsafe_fixes=True)
    assert "cuda-arch-branch:main.cu" not in fix_ids(report)
    reasons = [u.reason for u in report.unfixed if u.finding.rule_id == "GP317"]
    assert any("uses __CUDA_ARCH__'s value itself" in r for r in reasons), reasons
    # applied and run again: still nothing more to do (idempotent)
    copy = tmp_path / "c"
    shutil.copytree(root, copy)
    port_path(copy, PortOptions(jobs=1, unsafe_fixes=True, apply=True))
    assert run(copy, unsafe_fixes=True).files == []
