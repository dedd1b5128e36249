"""Session 15: no CMake HIP branch for a project that calls FindCUDA's commands.

The HIP shim stands in for ``find_package(CUDA)`` but defines none of FindCUDA's commands, so
``-DGPUPORT_HIP=ON`` stopped at ``cuda_select_nvcc_arch_flags`` (J39) or ``cuda_add_library``
(J25) with "Unknown CMake command". The branch is now not offered at all (before: an unsafe
fix), and the reason is in ``unfixed``."""

from __future__ import annotations

from pathlib import Path

from tests.port.helpers import fix_ids, project, run

KERN = """\
#include <cuda_runtime.h>
__global__ void k(float* x) { x[threadIdx.x] = 0; }
void launch(float* x) { k<<<1, 32>>>(x); cudaDeviceSynchronize(); }
"""

ARCH_FLAGS = """\
cmake_minimum_required(VERSION 3.21)
project(solver CXX)
find_package(CUDA)
if (CUDA_FOUND)
    set(CUDA_TARGET_ARCH "Pascal" CACHE STRING "Target architecture(s) for CUDA")
    cuda_select_nvcc_arch_flags(CUDA_ARCH_FLAGS ${CUDA_TARGET_ARCH})
    list(APPEND CUDA_NVCC_FLAGS ${CUDA_ARCH_FLAGS})
    enable_language(CUDA)
    add_library(kern src/kern.cu)
endif()
"""

SUB = """\
cmake_minimum_required(VERSION 3.21)
project(app CXX)
find_package(CUDAToolkit REQUIRED)
enable_language(CUDA)
add_library(kern src/kern.cu)
add_subdirectory(tutorial)
"""


def _gp401(report: object) -> list[str]:
    return [u.reason for u in report.unfixed if u.finding.rule_id == "GP401"]  # type: ignore[attr-defined]


def test_findcuda_arch_flags_refuse_the_hip_branch(tmp_path: Path) -> None:
    """J39's class: cuda_select_nvcc_arch_flags beside the lookup the shim replaces. No
    cmake-hip fix (nor its shim or compatibility header) in either mode, the reason named."""
    root = project(tmp_path, {"CMakeLists.txt": ARCH_FLAGS, "src/kern.cu": KERN})
    for unsafe in (False, True):
        report = run(root, unsafe_fixes=unsafe)
        ids = fix_ids(report)
        assert not any(i.startswith(("cmake-hip:", "hip-compat:")) for i in ids), ids
        assert not any(f.path.endswith("gpuport_hip.cmake") for f in report.files)
        reasons = _gp401(report)
        assert reasons and "cuda_select_nvcc_arch_flags" in reasons[0]
        assert "FindCUDA" in reasons[0] and "Unknown CMake command" in reasons[0]


def test_findcuda_targets_in_a_sub_folder_refuse_the_hip_branch(tmp_path: Path) -> None:
    """J39's tutorial/ and J25's class: cuda_add_executable in a sub-folder CMake file the
    HIP build would configure (no CUDA lookup of its own): refused, naming that file."""
    files = {
        "CMakeLists.txt": SUB,
        "src/kern.cu": KERN,
        "tutorial/CMakeLists.txt": "cuda_add_executable(poisson poisson.cu)\n",
        "tutorial/poisson.cu": KERN,
    }
    report = run(project(tmp_path, files), unsafe_fixes=True)
    assert not any(i.startswith("cmake-hip:") for i in fix_ids(report))
    reasons = _gp401(report)
    assert reasons and "tutorial/CMakeLists.txt calls cuda_add_executable" in reasons[0]


def test_a_project_without_findcuda_commands_keeps_its_hip_branch(tmp_path: Path) -> None:
    """Negative: FindCUDA's variables alone (CUDA_NVCC_FLAGS), a command named in a comment,
    and a vendored CMake file with a command of its own: the safe HIP branch is offered."""
    text = (
        SUB.replace("add_subdirectory(tutorial)\n", "")
        + '# cuda_add_library(kern src/kern.cu) was the old way\nset(CUDA_NVCC_FLAGS "-O3")\n'
    )
    files = {
        "CMakeLists.txt": text,
        "src/kern.cu": KERN,
        "third_party/dep/CMakeLists.txt": "find_package(CUDA)\ncuda_add_library(d d.cu)\n",
    }
    report = run(project(tmp_path, files))
    assert "cmake-hip:CMakeLists.txt" in fix_ids(report, applied=True)
    assert not any("FindCUDA" in r for r in _gp401(report))
