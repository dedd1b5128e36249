"""CMake: CUDA enabled in ``project()`` (``gpuport.port.cmake_project``). CUDA leaves the call
and is enabled right after it on the CUDA build, the HIP shim on the opt-in HIP build; safe
only where a CUDA configure enables the same languages in the same order."""

from __future__ import annotations

from pathlib import Path

from gpuport.port.cmake_project import cuda_language_sources, find_project_cuda
from tests.port.helpers import project, run

KERN = """\
#include <cuda_runtime.h>
__global__ void k(float* x) { x[threadIdx.x] = 1.f; }
void go(float* x) { k<<<1, 32>>>(x); cudaDeviceSynchronize(); }
"""
HOST = "#include <cuda_runtime.h>\nvoid h() { cudaDeviceSynchronize(); }\n"


def _cmake_fix(report: object) -> object:
    return next(f for f in report.fixes if f.id == "cmake-hip:CMakeLists.txt")  # type: ignore[attr-defined]


def test_cuda_leaves_project_and_is_enabled_on_the_cuda_build(tmp_path: Path) -> None:
    """J21's form: ``project(NAME LANGUAGES CXX CUDA)``: safe; the CUDA configure runs
    ``project(NAME LANGUAGES CXX)`` then ``enable_language(CUDA)``, the HIP build the shim; a
    later CUDA lookup is the CUDA build's only; a second run changes nothing."""
    cm = (
        "cmake_minimum_required(VERSION 3.18)\n"
        'project(demo VERSION 1.2 DESCRIPTION "a CUDA demo" LANGUAGES CXX CUDA)\n'
        "find_package(CUDAToolkit REQUIRED)\n"
        "add_library(demo src/kern.cu)\n"
        "target_link_libraries(demo CUDA::cudart)\n"
    )
    root = project(tmp_path, {"CMakeLists.txt": cm, "src/kern.cu": KERN})
    fix = _cmake_fix(run(root))
    assert fix.safe and fix.applied, fix.why  # type: ignore[attr-defined]
    run(root, apply=True, verify=False)
    out = (root / "CMakeLists.txt").read_text()
    head = 'project(demo VERSION 1.2 DESCRIPTION "a CUDA demo" LANGUAGES CXX)\n'
    assert head in out
    block = (
        "if(GPUPORT_HIP)  # gpuport: GP401 HIP stands in for CUDA\n"
        "    include(${CMAKE_CURRENT_LIST_DIR}/cmake/gpuport_hip.cmake)\n"
        "else()\n    enable_language(CUDA)  # gpuport: was in project()\nendif()\n"
    )
    assert block in out
    assert out.index(head) < out.index("option(GPUPORT_HIP") < out.index(block)
    assert out.count("option(GPUPORT_HIP") == 1
    assert "if(NOT GPUPORT_HIP)\n    find_package(CUDAToolkit REQUIRED)\nendif()" in out
    assert "set_source_files_properties(src/kern.cu PROPERTIES LANGUAGE HIP)" in out
    assert (root / "cmake/gpuport_hip.cmake").exists()
    assert run(root).files == []  # idempotent


def test_the_old_signature_and_a_cuda_only_project(tmp_path: Path) -> None:
    """``project(NAME CXX CUDA)`` (sphexa's ryoanji) loses CUDA the same way; a project of
    CUDA alone becomes ``project(NAME NONE)``: an empty list would enable C and C++."""
    for name, call, want in (
        ("old", "project(ryoanji CXX CUDA)", "project(ryoanji CXX)\n"),
        ("alone", "project(demo LANGUAGES CUDA)", "project(demo LANGUAGES NONE)\n"),
    ):
        cm = f"cmake_minimum_required(VERSION 3.18)\n{call}\nadd_library(demo kern.cu)\n"
        root = project(tmp_path / name, {"CMakeLists.txt": cm, "kern.cu": KERN})
        assert _cmake_fix(run(root)).safe  # type: ignore[attr-defined]
        run(root, apply=True, verify=False)
        assert want in (root / "CMakeLists.txt").read_text(), name


def test_a_changed_language_order_or_a_project_hook_makes_it_unsafe(tmp_path: Path) -> None:
    """CUDA before another language (it would now be enabled after it) or a project-include
    hook (project() runs it after its languages): unsafe, with the reason, not applied by
    default."""
    for name, cm, why in (
        ("order", "project(demo LANGUAGES CUDA CXX)\n", "enables CUDA before CXX"),
        (
            "hook",
            "set(CMAKE_PROJECT_INCLUDE ${CMAKE_SOURCE_DIR}/cmake/after.cmake)\n"
            "project(demo LANGUAGES CXX CUDA)\n",
            "CMAKE_PROJECT_INCLUDE",
        ),
    ):
        files = {"CMakeLists.txt": cm + "add_library(demo kern.cu)\n", "kern.cu": KERN}
        root = project(tmp_path / name, files)
        fix = _cmake_fix(run(root))
        assert not fix.safe and not fix.applied and why in fix.why, name  # type: ignore[attr-defined]
        assert not any(f.path == "CMakeLists.txt" for f in run(root).files)
        assert _cmake_fix(run(root, unsafe_fixes=True)).applied  # type: ignore[attr-defined]


def test_a_cpp_source_compiled_as_cuda_is_hip_on_the_hip_build(tmp_path: Path) -> None:
    """J21: ``set_source_files_properties(... misc.cpp PROPERTIES LANGUAGE CUDA)``: with
    CUDA not enabled the HIP build has no compiler for misc.cpp unless it is HIP too; the
    marking comes after that statement, so it wins."""
    cm = (
        "project(demo LANGUAGES CXX CUDA)\n"
        "set_source_files_properties(kern.cu misc.cpp PROPERTIES LANGUAGE CUDA)\n"
        "add_executable(demo kern.cu misc.cpp)\n"
    )
    files = {"CMakeLists.txt": cm, "kern.cu": KERN, "misc.cpp": HOST}
    root = project(tmp_path, files)
    run(root, apply=True, verify=False)
    out = (root / "CMakeLists.txt").read_text()
    mark = "set_source_files_properties(kern.cu misc.cpp PROPERTIES LANGUAGE HIP)"
    assert mark in out
    assert out.index("PROPERTIES LANGUAGE CUDA)") < out.index(mark)


def test_reading_project_calls() -> None:
    assert find_project_cuda("project(a LANGUAGES CXX)\n") is None
    assert find_project_cuda("project(a LANGUAGES CXX # c\n CUDA)\n") is None
    got = find_project_cuda("  project(a\n  LANGUAGES C CXX\n  CUDA)\n")
    assert got is not None and got.without == "project(a\n  LANGUAGES C CXX)"
    assert got.indent == "  " and got.languages == ("C", "CXX", "CUDA") and not got.unsafe
    hooked = find_project_cuda("project(a CXX CUDA)\n", "set(CMAKE_PROJECT_a_INCLUDE x)")
    assert hooked is not None and "CMAKE_PROJECT_a_INCLUDE" in hooked.unsafe
    names, end = cuda_language_sources(
        "set_source_files_properties(a.cpp ${X} PROPERTIES LANGUAGE CUDA)\n"
        "set_source_files_properties(b.cpp PROPERTIES COMPILE_FLAGS -O2)\n"
    )
    assert names == ["a.cpp"] and end > 0


def test_a_cuda_source_without_a_cuda_header_makes_the_hip_build_unsafe(tmp_path: Path) -> None:
    """nvcc includes the CUDA runtime by itself: a ``.cu`` calling ``cudaDeviceSynchronize``
    that reaches no CUDA header (its own or a project header's, through ``#include "..."``)
    gets no compatibility branch, so the HIP build stops there (ryoanji, QuEST): unsafe,
    with the file and the name. Through a project header that includes the runtime, it is
    mapped: safe."""
    cm = "project(demo LANGUAGES CXX CUDA)\nadd_library(demo src/kern.cu)\n"
    bare = "__global__ void k() {}\nvoid go() { k<<<1, 1>>>(); cudaDeviceSynchronize(); }\n"
    root = project(tmp_path / "bare", {"CMakeLists.txt": cm, "src/kern.cu": bare})
    fix = _cmake_fix(run(root))
    assert not fix.safe  # type: ignore[attr-defined]
    assert "src/kern.cu calls cudaDeviceSynchronize" in fix.why  # type: ignore[attr-defined]
    files = {
        "CMakeLists.txt": cm,
        "src/kern.cu": '#include "util/check.cuh"\n' + bare,
        "src/util/check.cuh": '#pragma once\n#include "rt.h"\n',
        "src/util/rt.h": "#pragma once\n#include <cuda_runtime.h>\n",
    }
    fix = _cmake_fix(run(project(tmp_path / "header", files)))
    assert fix.safe, fix.why  # type: ignore[attr-defined]
