"""Issue 24, fourteenth sample (superlu_dist): CMake switches named ``TPL_ENABLE_CUDALIB`` /
``TPL_ENABLE_HIPLIB`` are the CUDA and HIP backends' switches as ``USE_CUDA``/``USE_HIP`` are:
a source added only under the CUDA one is not built by the ROCm build, and the HIP one makes
the CMake file a ROCm build."""

from __future__ import annotations

from pathlib import Path

from tests.scan.project_files import scan_files

_CMAKE = """\
cmake_minimum_required(VERSION 3.18)
project(x CXX)
option(TPL_ENABLE_CUDALIB "Enable the CUDA libraries" OFF)
option(TPL_ENABLE_HIPLIB "Enable the HIP libraries" OFF)
set(sources main.cpp)
if (TPL_ENABLE_CUDALIB)
  enable_language(CUDA)
  list(APPEND sources copy.cu)
endif()
if (TPL_ENABLE_HIPLIB)
  list(APPEND sources hip_copy.cpp)
endif()
add_library(x ${sources})
"""
_CU = "#define WARP_SIZE 32\n__global__ void k(float* x) { x[threadIdx.x % WARP_SIZE] = 0; }\n"


def test_lib_named_backend_switches_decide_what_rocm_builds(tmp_path: Path) -> None:
    r = scan_files(
        tmp_path,
        {"CMakeLists.txt": _CMAKE, "main.cpp": "int main() {}\n", "copy.cu": _CU,
         "hip_copy.cpp": "int y;\n"},
    )  # fmt: skip
    assert any(x.path == "CMakeLists.txt" and x.counts for x in r.routes), r.routes
    not_built = dict(r.not_built) if not isinstance(r.not_built, dict) else r.not_built
    assert "copy.cu" in not_built and "hip_copy.cpp" not in not_built
