"""Issue 24: an include denotes the file its path resolves to (relative to the includer, then
a project include folder), not every file of that name: a header beside CUDA-only sources, or
in a CUDA backend folder beside its HIP twin, is not kept as built because a compiled file
includes another header of the same name; one a compiled file includes by its path stays."""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from gpuport.scan import scan_path
from gpuport.scan.project.include_paths import resolve_includes
from tests.scan.project_files import write

_PTX = '__device__ int lo(int v) { int r; asm("mov.b32 %0, %1;" : "=r"(r) : "r"(v)); return r; }\n'

_CMAKE = (
    "cmake_minimum_required(VERSION 3.18)\nproject(p LANGUAGES CXX)\n"
    "set(SRCS csrc/gptq/kernel.cu csrc/ops.cu)\n"
    "if(USE_ROCM)\n  find_package(hip REQUIRED)\n"
    "else()\n  list(APPEND SRCS csrc/dense/dense.cu)\nendif()\n"
    "add_library(p ${SRCS})\n"
)


def _gp301(root: Path) -> dict[str, Severity]:
    return {f.location.path: f.severity for f in scan_path(root).findings if f.rule_id == "GP301"}


def test_includes_resolve_by_path_before_name() -> None:
    native = {
        "src/tpl/hip/gemm.h": '#include "copy.h"\n#include <hip/hip_runtime.h>\n',
        "src/tpl/hip/copy.h": "",
        "src/tpl/cuda/copy.h": "",
        "src/op/x.cc": '#include <proj/api.hpp>\n#include "../tpl/cuda/copy.h"\n',
        "include/proj/api.hpp": "",
        "other/proj/api.hpp": "",
        "src/lone.cc": '#include "util.h"\n',
        "lib/util.h": "",
    }
    got = resolve_includes(native)
    assert got["src/tpl/hip/gemm.h"] == {"src/tpl/hip/copy.h"}  # the includer's folder first
    # by path: the relative one, and <proj/api.hpp> against the include folders (both match)
    assert got["src/op/x.cc"] == {
        "src/tpl/cuda/copy.h",
        "include/proj/api.hpp",
        "other/proj/api.hpp",
    }
    assert got["src/lone.cc"] == {"lib/util.h"}  # no path explains it: by name


def test_a_header_beside_cuda_only_sources_is_not_kept_by_a_namesake(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "CMakeLists.txt": _CMAKE,
            "csrc/gptq/kernel.cu": '#include "marlin.cuh"\n__global__ void k() {}\n',
            # as near to both headers of that name: a name alone cannot say which it is
            "csrc/ops.cu": '#include "gptq/marlin.cuh"\n',
            "csrc/gptq/marlin.cuh": "// the ROCm build's own header\n",
            "csrc/dense/dense.cu": '#include "marlin.cuh"\n__global__ void d() {}\n',
            "csrc/dense/marlin.cuh": _PTX,
        },
    )
    report = scan_path(tmp_path)
    assert _gp301(tmp_path) == {"csrc/dense/marlin.cuh": Severity.INFO}
    assert "CMakeLists.txt" in report.not_built["csrc/dense/marlin.cuh"]


def test_a_header_a_compiled_file_includes_by_path_stays(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "CMakeLists.txt": _CMAKE,
            "csrc/gptq/kernel.cu": '#include "../dense/marlin.cuh"\n__global__ void k() {}\n',
            "csrc/gptq/marlin.cuh": "// another header of that name\n",
            "csrc/dense/dense.cu": '#include "marlin.cuh"\n__global__ void d() {}\n',
            "csrc/dense/marlin.cuh": _PTX,
        },
    )
    assert _gp301(tmp_path) == {"csrc/dense/marlin.cuh": Severity.BLOCKER}


_ROCM_CMAKE = (
    "cmake_minimum_required(VERSION 3.18)\nproject(p LANGUAGES CXX)\n"
    "if(USE_ROCM)\n  find_package(hip REQUIRED)\n  add_library(p src/hip_rt.cc)\nendif()\n"
)


def test_a_cuda_template_beside_its_hip_namesake_is_not_kept_by_it(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "CMakeLists.txt": _ROCM_CMAKE,
            "src/hip_rt.cc": '#include "tpl/hip/gemm.h"\n',
            # shared code that includes another header of that name, its own
            "src/op/copy.cc": '#include "copy.h"\n',
            "src/op/copy.h": "// the copy operator\n",
            "src/tpl/hip/gemm.h": '#include "copy.h"\n',
            "src/tpl/hip/copy.h": "// HIP copy\n",
            "src/tpl/cuda/gemm.h": '#include "copy.h"\n',
            "src/tpl/cuda/copy.h": _PTX,
        },
    )
    assert _gp301(tmp_path) == {"src/tpl/cuda/copy.h": Severity.INFO}


def test_a_cuda_template_a_hip_file_includes_by_path_stays(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "CMakeLists.txt": _ROCM_CMAKE,
            "src/hip_rt.cc": '#include "tpl/hip/gemm.h"\n',
            "src/tpl/hip/gemm.h": '#include "../cuda/copy.h"\n',
            "src/tpl/hip/copy.h": "// HIP copy\n",
            "src/tpl/cuda/gemm.h": '#include "copy.h"\n',
            "src/tpl/cuda/copy.h": _PTX,
        },
    )
    assert _gp301(tmp_path) == {"src/tpl/cuda/copy.h": Severity.BLOCKER}
