"""The CMake HIP build reaches its sources: ``CMAKE_CUDA_COMPILER`` tests, globbed ``.cu``
sources, and ``.cu`` files named by sub-folder CMake files (``gpuport.port.cmake_reach``)."""

from __future__ import annotations

import json
from pathlib import Path

from gpuport.port.cmake_reach import glob_covers, reach_edits
from gpuport.render.port_render import render_markdown as port_markdown
from tests.port.helpers import created, fix_ids, project, run

KERN = """\
#include <cuda_runtime.h>
__global__ void k(float* x) { x[threadIdx.x] = 1.f; }
void go(float* x) { k<<<1, 32>>>(x); cudaDeviceSynchronize(); }
"""
GATED = """\
cmake_minimum_required(VERSION 3.21)
project(demo LANGUAGES CXX)
file(GLOB_RECURSE SOURCES "src/*.cpp")
include(CheckLanguage)
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
    message(STATUS "CUDA: ${CMAKE_CUDA_COMPILER}")
    enable_language(CUDA)
    add_definitions(-DUSE_CUDA)
    file(GLOB_RECURSE CUDA_SOURCES CONFIGURE_DEPENDS "src/cuda/*.cu")
else()
    message(WARNING "no CUDA: CPU build")
endif()
add_executable(demo ${SOURCES} ${CUDA_SOURCES})
if (CMAKE_CUDA_COMPILER AND BUILD_TESTS)
    add_subdirectory(tests)
endif()
"""


def test_a_gated_lookup_and_globbed_sources_become_a_reachable_hip_build(tmp_path: Path) -> None:
    """``check_language(CUDA)`` + ``if(CMAKE_CUDA_COMPILER)`` (a machine without nvcc never
    entered the branch) and ``.cu`` sources from ``file(GLOB_RECURSE ...)``: every truth test
    of CMAKE_CUDA_COMPILER also takes the option, the glob's .cu entries are HIP on that
    build. Safe: with the option OFF each test is the original."""
    files = {
        "CMakeLists.txt": GATED,
        "src/main.cpp": "int main() {}\n",
        "src/cuda/kern.cu": KERN,
        ".github/workflows/ci.yml": "on: push\n",
    }
    root = project(tmp_path, files)
    report = run(root)
    fix = next(f for f in report.fixes if f.id == "cmake-hip:CMakeLists.txt")
    assert fix.safe and fix.applied, fix.why
    assert "rocm-ci:.github/workflows/rocm.yml" in fix_ids(report, applied=True)
    run(root, apply=True, verify=False)
    cm = (root / "CMakeLists.txt").read_text()
    assert "\nif(GPUPORT_HIP OR CMAKE_CUDA_COMPILER)\n" in cm
    assert "if ((GPUPORT_HIP OR CMAKE_CUDA_COMPILER) AND BUILD_TESTS)" in cm
    assert 'message(STATUS "CUDA: ${CMAKE_CUDA_COMPILER}")' in cm  # a value, not a test
    assert "include(${CMAKE_CURRENT_LIST_DIR}/cmake/gpuport_hip.cmake)" in cm
    glob = cm.index('file(GLOB_RECURSE CUDA_SOURCES CONFIGURE_DEPENDS "src/cuda/*.cu")')
    mark = cm.index("set(_gpuport_hip_cuda_sources ${CUDA_SOURCES})")
    assert glob < mark < cm.index("else()\n    message(WARNING")
    assert 'list(FILTER _gpuport_hip_cuda_sources INCLUDE REGEX "\\\\.cu$")' in cm
    assert "set_source_files_properties(${_gpuport_hip_cuda_sources} PROPERTIES LANGUAGE HIP)" in cm
    # the .cpp glob gets no mark: its pattern takes no .cu file
    assert "_gpuport_hip_sources" not in cm
    assert run(root).files == []  # idempotent


def test_reach_edits_leave_values_negations_and_done_tests() -> None:
    """Only truth tests of the name change; operands of DEFINED/MATCHES/STREQUAL, values
    (``${...}``), other names (``_VERSION``) and tests already taking the option do not."""
    text = (
        "if(CMAKE_CUDA_COMPILER)\nendif()\n"
        "elseif(BUILD_GPU AND (CMAKE_CUDA_COMPILER))\n"
        "elseif(CMAKE_CUDA_COMPILER_VERSION VERSION_LESS 12)\n"
        'message("${CMAKE_CUDA_COMPILER}")\n'
        "if(NOT CMAKE_CUDA_COMPILER)\nendif()\n"
        "if(GPUPORT_HIP OR CMAKE_CUDA_COMPILER)\nendif()\n"
        "if(DEFINED CMAKE_CUDA_COMPILER AND X)\nendif()\n"
        'if(CMAKE_CUDA_COMPILER MATCHES "nvcc")\nendif()\n'
        'if("${X}" STREQUAL CMAKE_CUDA_COMPILER)\nendif()\n'
    )
    edits, negated = reach_edits(text, "GPUPORT_HIP")
    assert negated == 1
    out = text
    for start, end, new in sorted(edits, reverse=True):
        out = out[:start] + new + out[end:]
    assert out.startswith(
        "if(GPUPORT_HIP OR CMAKE_CUDA_COMPILER)\nendif()\n"
        "elseif(BUILD_GPU AND ((GPUPORT_HIP OR CMAKE_CUDA_COMPILER)))\n"
    )
    assert len(edits) == 2


def test_glob_covers_reads_patterns_relative_to_the_cmake_file() -> None:
    text = (
        'file(GLOB A "${CMAKE_CURRENT_SOURCE_DIR}/kernels/*.cu")\n'
        "file(GLOB_RECURSE B RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ops/*.cu)\n"
        "file(GLOB C ${SOMEWHERE}/*.cu)\n"
    )
    assert glob_covers(text, "lib", "lib/kernels/a.cu")
    assert not glob_covers(text, "lib", "lib/kernels/deep/a.cu")  # GLOB is one folder
    assert glob_covers(text, "lib", "lib/ops/x/y/b.cu")  # GLOB_RECURSE goes down
    assert not glob_covers(text, "lib", "other/a.cu")  # ${SOMEWHERE} is not guessed
    root = 'file(GLOB_RECURSE D "${PROJECT_SOURCE_DIR}/src/*.cu")\n'
    assert glob_covers(root, "", "src/a/b.cu")
    assert not glob_covers(root, "sub", "src/a/b.cu")  # another project's root may be meant


def test_sub_folder_cmake_files_get_their_sources_marked(tmp_path: Path) -> None:
    """A sub-folder CMake file without a CUDA lookup of its own (the top file enables CUDA)
    that names .cu files or tests CMAKE_CUDA_COMPILER is edited by the same fix."""
    top = (
        "cmake_minimum_required(VERSION 3.21)\nproject(demo LANGUAGES CXX)\n"
        "check_language(CUDA)\nif(CMAKE_CUDA_COMPILER)\n  enable_language(CUDA)\nendif()\n"
        "add_subdirectory(gpu)\n"
    )
    sub = "if(CMAKE_CUDA_COMPILER)\n  add_library(gpu gather.cu neighbors.cu)\nendif()\n"
    root = project(
        tmp_path,
        {"CMakeLists.txt": top, "gpu/CMakeLists.txt": sub, "gpu/gather.cu": KERN,
         "gpu/neighbors.cu": KERN},
    )  # fmt: skip
    report = run(root)
    fix = next(f for f in report.fixes if f.id == "cmake-hip:CMakeLists.txt")
    assert fix.safe and fix.applied and "gpu/CMakeLists.txt" in fix.files
    md = port_markdown(report)
    assert "gpu/CMakeLists.txt" in md and "GPUPORT_HIP OR CMAKE_CUDA_COMPILER" in md
    data = json.loads(report.model_dump_json())
    assert any(f["path"] == "gpu/CMakeLists.txt" for f in data["files"])
    run(root, apply=True, verify=False)
    text = (root / "gpu/CMakeLists.txt").read_text()
    assert text.startswith("if(GPUPORT_HIP OR CMAKE_CUDA_COMPILER)\n")
    assert "set_source_files_properties(gather.cu neighbors.cu PROPERTIES LANGUAGE HIP)" in text
    assert run(root).files == []


FLAGS = """\
cmake_minimum_required(VERSION 3.21)
project(demo LANGUAGES CXX)
find_package(CUDAToolkit REQUIRED)
enable_language(CUDA)
add_library(demo SHARED src/kern.cu)
target_compile_options(demo PRIVATE -O3 --expt-relaxed-constexpr --use_fast_math)
add_compile_options(-Xptxas -v -lineinfo)
target_compile_options(demo PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda> -Wall)
"""


def test_nvcc_options_are_kept_from_the_hip_compiler(tmp_path: Path) -> None:
    """Compile options every compiler of a target gets: nvcc's own are not given to the HIP
    build (``--use_fast_math`` as clang's ``-ffast-math``); options already scoped to CUDA
    sources by a generator expression, and the compiler-neutral ones, are left."""
    root = project(tmp_path, {"CMakeLists.txt": FLAGS, "src/kern.cu": KERN})
    fix = next(f for f in run(root).fixes if f.id == "cmake-hip:CMakeLists.txt")
    assert fix.safe and fix.applied, fix.why
    run(root, apply=True, verify=False)
    cm = (root / "CMakeLists.txt").read_text()
    assert (
        "if(GPUPORT_HIP)  # gpuport: nvcc's own options are not given to the HIP compiler\n"
        "    target_compile_options(demo PRIVATE -O3 -ffast-math)\n"
        "else()\n"
        "    target_compile_options(demo PRIVATE -O3 --expt-relaxed-constexpr --use_fast_math)\n"
        "endif()"
    ) in cm
    assert (
        "if(NOT GPUPORT_HIP)  # gpuport: nvcc's own options\n"
        "    add_compile_options(-Xptxas -v -lineinfo)\nendif()"
    ) in cm
    scoped = "target_compile_options(demo PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>"
    assert f"\n{scoped} -Wall)\n" in cm  # untouched: hip-clang never sees the scoped option
    assert run(root).files == []


def test_an_nvcc_option_in_another_generator_expression_makes_the_build_unsafe(
    tmp_path: Path,
) -> None:
    text = FLAGS.replace(
        "-Wall)", "$<$<CONFIG:Release>:--use_fast_math>)"
    )  # every compiler of the target gets it in Release
    root = project(tmp_path, {"CMakeLists.txt": text, "src/kern.cu": KERN})
    fix = next(f for f in run(root).fixes if f.id == "cmake-hip:CMakeLists.txt")
    assert not fix.safe and "reaches the HIP compiler" in fix.why


def test_vendored_cmake_files_are_not_edited(tmp_path: Path) -> None:
    top = (
        "cmake_minimum_required(VERSION 3.21)\nproject(demo LANGUAGES CXX)\n"
        "find_package(CUDAToolkit REQUIRED)\nenable_language(CUDA)\n"
        "add_library(demo SHARED src/kern.cu)\nadd_subdirectory(third_party/lib)\n"
    )
    vendored = "if(CMAKE_CUDA_COMPILER)\n  add_definitions(-DLIB_GPU)\nendif()\n"
    root = project(
        tmp_path,
        {"CMakeLists.txt": top, "src/kern.cu": KERN, "third_party/lib/CMakeLists.txt": vendored},
    )
    fix = next(f for f in run(root).fixes if f.id == "cmake-hip:CMakeLists.txt")
    assert fix.safe and "third_party/lib/CMakeLists.txt" not in fix.files


LEGACY = """\
cmake_minimum_required(VERSION 3.7)
project(demo)
option(GPUACCELERATED "GPU build" 0)
if (GPUACCELERATED)
    find_package(CUDA REQUIRED)
    set(CUDA_NVCC_FLAGS "${CUDA_NVCC_FLAGS} -arch=compute_70")
    cuda_add_library(demo src/kern.cu)
else()
    add_library(demo src/cpu.c)
endif()
"""


def test_findcuda_commands_on_the_hip_build(tmp_path: Path) -> None:
    """FindCUDA's cuda_add_library (J20's CUDA_ADD_LIBRARY targets) is defined by the HIP
    shim since session 18 (before: no HIP branch, session 15; before that, an unsafe fix), so
    the safe branch is written; cuda_wrap_srcs, which makes nvcc's objects by hand, still
    refuses the branch even with --unsafe-fixes, the reason reported."""
    root = project(tmp_path, {"CMakeLists.txt": LEGACY, "src/kern.cu": KERN, "src/cpu.c": ""})
    report = run(root)
    assert "cmake-hip:CMakeLists.txt" in fix_ids(report, applied=True)
    assert "function(cuda_add_library name)" in created(report, "cmake/gpuport_hip.cmake")

    wrap = LEGACY.replace(
        "cuda_add_library(demo src/kern.cu)", "cuda_wrap_srcs(demo OBJ objs src/kern.cu)"
    )
    root2 = project(tmp_path / "wrap", {"CMakeLists.txt": wrap, "src/kern.cu": KERN})
    for report in (run(root2), run(root2, unsafe_fixes=True)):
        assert not any(f.startswith("cmake-hip:") for f in fix_ids(report))
        reasons = [u.reason for u in report.unfixed if u.finding.rule_id == "GP401"]
        assert reasons and all("cuda_wrap_srcs" in r for r in reasons)
