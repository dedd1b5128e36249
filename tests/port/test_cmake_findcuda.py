"""FindCUDA's commands on the opt-in CMake HIP build.

Session 15: the HIP shim stood in for ``find_package(CUDA)`` but defined none of FindCUDA's
commands, so ``-DGPUPORT_HIP=ON`` stopped at ``cuda_select_nvcc_arch_flags`` (J39) or
``cuda_add_library`` (J25) with "Unknown CMake command", and such a project got no HIP branch.
Session 18 (``gpuport.port.cmake_findcuda``): the shim defines FindCUDA's target commands in
their HIP form (the ``.cu`` sources compiled as HIP with the ``-D``/``-U``/``-I`` items of
``CUDA_NVCC_FLAGS`` and ``OPTIONS``); only the commands that make nvcc's objects by hand
(``cuda_compile``, ``cuda_wrap_srcs``...) still refuse the branch, the reason in ``unfixed``.
The CMake tests configure the shim's block with the real ``cmake``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.port.helpers import created, fix_ids, project, run

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

SHIM = "cmake/gpuport_hip.cmake"


def _gp401(report: object) -> list[str]:
    return [u.reason for u in report.unfixed if u.finding.rule_id == "GP401"]  # type: ignore[attr-defined]


def test_findcuda_arch_flags_get_their_hip_form(tmp_path: Path) -> None:
    """J39's class: cuda_select_nvcc_arch_flags beside the lookup the shim replaces. The safe
    HIP branch is written, and its shim defines the command (the GPU targets come from
    CMAKE_HIP_ARCHITECTURES), and no FindCUDA reason is left."""
    root = project(tmp_path, {"CMakeLists.txt": ARCH_FLAGS, "src/kern.cu": KERN})
    report = run(root)
    assert "cmake-hip:CMakeLists.txt" in fix_ids(report, applied=True)
    shim = created(report, SHIM)
    assert "function(cuda_select_nvcc_arch_flags out)" in shim
    assert "function(cuda_add_library" not in shim  # only the commands the project calls
    assert not any("FindCUDA" in r for r in _gp401(report))


def test_findcuda_targets_in_a_sub_folder_get_their_hip_form(tmp_path: Path) -> None:
    """J39's tutorial/ and J25's class: cuda_add_executable in a sub-folder CMake file the HIP
    build configures (no CUDA lookup of its own): the shim defines it."""
    files = {
        "CMakeLists.txt": SUB,
        "src/kern.cu": KERN,
        "tutorial/CMakeLists.txt": "cuda_add_executable(poisson poisson.cu)\n",
        "tutorial/poisson.cu": KERN,
    }
    report = run(project(tmp_path, files))
    assert "cmake-hip:CMakeLists.txt" in fix_ids(report, applied=True)
    shim = created(report, SHIM)
    assert "function(cuda_add_executable name)" in shim
    assert "function(_gpuport_cuda_split" in shim


def test_findcuda_object_commands_still_refuse_the_hip_branch(tmp_path: Path) -> None:
    """cuda_compile makes nvcc's objects by hand: no HIP form, so no HIP branch in either mode,
    the reason naming the file and the command."""
    files = {
        "CMakeLists.txt": SUB,
        "src/kern.cu": KERN,
        "tutorial/CMakeLists.txt": "cuda_compile(OBJS poisson.cu)\nadd_executable(p ${OBJS})\n",
        "tutorial/poisson.cu": KERN,
    }
    for unsafe in (False, True):
        report = run(project(tmp_path, files), unsafe_fixes=unsafe)
        ids = fix_ids(report)
        assert not any(i.startswith(("cmake-hip:", "hip-compat:")) for i in ids), ids
        reasons = _gp401(report)
        assert reasons and "tutorial/CMakeLists.txt calls cuda_compile" in reasons[0]
        assert "Unknown CMake command" in reasons[0]


def test_a_project_without_findcuda_commands_has_no_findcuda_block(tmp_path: Path) -> None:
    """Negative: FindCUDA's variables alone (CUDA_NVCC_FLAGS), a command named in a comment,
    and a vendored CMake file with a command of its own: the safe HIP branch is offered and
    its shim defines none of FindCUDA's commands."""
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
    assert "cuda_add_library" not in created(report, SHIM)


_PROBE = r"""
cmake_minimum_required(VERSION 3.13)
project(probe NONE)
include(findcuda_block.cmake)
set(CUDA_NVCC_FLAGS -arch=sm_50 -DUSE_ATOMIC -D SAVE_DETECTORS -Xcompiler -fPIC
    "-g -DSPACED" -use_fast_math)
cuda_add_library(kern a.cu b.cpp EXCLUDE_FROM_ALL STATIC OPTIONS -DFROM_OPTIONS -lineinfo)
set(CUDA_SEPARABLE_COMPILATION ON)
cuda_add_executable(app main.cu)
cuda_select_nvcc_arch_flags(ARCH Pascal)
cuda_include_directories(inc)
get_source_file_property(L a.cu LANGUAGE)
get_source_file_property(LB b.cpp LANGUAGE)
get_source_file_property(O a.cu COMPILE_OPTIONS)
get_source_file_property(OM main.cu COMPILE_OPTIONS)
get_target_property(T kern TYPE)
get_target_property(X kern EXCLUDE_FROM_ALL)
get_target_property(LL kern LINK_LIBRARIES)
get_target_property(LO app LINK_OPTIONS)
get_directory_property(I INCLUDE_DIRECTORIES)
message(STATUS "PROBE L=${L} LB=${LB} O=${O} OM=${OM} T=${T} X=${X} LL=${LL} LO=${LO}")
message(STATUS "PROBE ARCH=[${ARCH}] I=${I}")
"""


def _probe(tmp: Path, shim: str) -> str:
    block = shim[shim.index("# FindCUDA's commands") :]
    d = project(tmp, {"CMakeLists.txt": _PROBE, "findcuda_block.cmake": block})
    for name in ("a.cu", "b.cpp", "main.cu"):
        (d / name).write_text("int x;\n")
    proc = subprocess.run(
        ["cmake", "-S", str(d), "-B", str(d / "build")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    return proc.stdout + proc.stderr


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
def test_the_findcuda_block_configures_as_findcuda_would(tmp_path: Path) -> None:
    """The shim's block run by CMake: the arguments split as FindCUDA splits them (kinds in
    any order, OPTIONS), .cu sources are HIP with the -D/-U/-I items only, .cpp ones are left
    to the C++ compiler, hip::host is linked, separable compilation gives -fgpu-rdc, the arch
    flags are empty and the include folder is added."""
    files = {
        "CMakeLists.txt": SUB,
        "src/kern.cu": KERN,
        "tutorial/CMakeLists.txt": (
            "cuda_add_library(a a.cu)\ncuda_add_executable(b b.cu)\n"
            "cuda_select_nvcc_arch_flags(F)\ncuda_include_directories(inc)\n"
        ),
        "tutorial/a.cu": KERN,
        "tutorial/b.cu": KERN,
    }
    shim = created(run(project(tmp_path / "p", files)), SHIM)
    out = _probe(tmp_path / "probe", shim)
    line = next((ln for ln in out.splitlines() if "PROBE L=" in ln), "")
    assert "L=HIP LB= O=" in line, out
    assert "O=-DUSE_ATOMIC;-D;SAVE_DETECTORS;-DSPACED;-ffast-math;-DFROM_OPTIONS OM=" in line, out
    assert "OM=-DUSE_ATOMIC;-D;SAVE_DETECTORS;-DSPACED;-ffast-math;-fgpu-rdc " in line, out
    assert "T=STATIC_LIBRARY X=TRUE LL=hip::host LO=-fgpu-rdc" in line, out
    assert "-arch" not in line and "lineinfo" not in line and "-fPIC" not in line
    assert "PROBE ARCH=[] I=" in out and out.split("PROBE ARCH=[] I=", 1)[1].startswith(
        str(tmp_path / "probe" / "inc")
    ), out
