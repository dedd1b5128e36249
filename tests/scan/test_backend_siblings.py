"""Issue 24: a backend file beside its HIP counterpart is not compiled by the ROCm build (the
counterpart is); without the counterpart, or when a HIP file includes it, it stays a finding."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.models import Severity
from gpuport.scan import scan_path
from gpuport.scan.project.backend_siblings import backend_siblings

_SHFL = (
    "__device__ int sum(int v) {\n"
    "  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);\n"
    "  return v;\n}\n"
)


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _gp302(root: Path) -> dict[str, Severity]:
    return {f.location.path: f.severity for f in scan_path(root).findings if f.rule_id == "GP302"}


def test_a_cuda_backend_header_beside_its_hip_twin_is_not_built(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "include/lib/atomics/CAS_CUDA.hpp": _SHFL,
            "include/lib/atomics/CAS_HIP.hpp": "// the HIP side\n",
            "src/Cuda/Lib_Cuda_Team.hpp": _SHFL,
            "src/HIP/Lib_HIP_Team.hpp": "// the HIP side\n",
        },
    )
    found = _gp302(tmp_path)
    assert found == {
        "include/lib/atomics/CAS_CUDA.hpp": Severity.INFO,
        "src/Cuda/Lib_Cuda_Team.hpp": Severity.INFO,
    }
    report = scan_path(tmp_path)
    assert "include/lib/atomics/CAS_HIP.hpp" in report.not_built["include/lib/atomics/CAS_CUDA.hpp"]


def test_another_vendors_executor_beside_a_hip_one_is_not_built(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {"dpcpp/base/kernels.dp.cpp": _SHFL, "hip/base/kernels.hip.cpp": "// HIP executor\n"},
    )
    assert _gp302(tmp_path) == {"dpcpp/base/kernels.dp.cpp": Severity.INFO}


def test_names_that_only_look_like_a_vendor_are_no_backend() -> None:
    native = {"src/hipify_helpers.h": "", "src/cudart_wrap.h": "", "src/cuda_hip/common.hpp": ""}
    native |= {"src/hip/common.hpp": ""}
    # cudart/hipify are other words; a folder named cuda_hip is shared, not one vendor's
    assert backend_siblings(native, {}) == {}


#: Files that a HIP counterpart does not take out of the ROCm build: (files, GP302 severities)
_KEPT = {
    # no counterpart: only a SYCL twin; ggml-hip/ compiles ggml-cuda/*.cu itself
    "no HIP counterpart": (
        {
            "include/lib/atomics/CAS_CUDA.hpp": _SHFL,
            "include/lib/atomics/CAS_SYCL.hpp": "// SYCL only\n",
            "ggml-cuda/reduce.cu": _SHFL,
            "ggml-hip/CMakeLists.txt": 'file(GLOB SRCS "../ggml-cuda/*.cu")\n',
        },
        {
            "include/lib/atomics/CAS_CUDA.hpp": Severity.BLOCKER,
            "ggml-cuda/reduce.cu": Severity.BLOCKER,
        },
    ),
    "included by its HIP counterpart": (
        {"cuda/reduce.cu": _SHFL, "hip/reduce.hip.cpp": '#include "../cuda/reduce.cu"\n'},
        {"cuda/reduce.cu": Severity.BLOCKER},
    ),
    # tvm compiles its CUDA codegen in every build (it writes CUDA text); the CUDA runtime
    # only has its ROCm twin
    "named by the ROCm build": (
        {
            "src/backend/cuda/codegen/emit.cc": _SHFL,
            "src/backend/rocm/codegen/emit.cc": "// ROCm codegen\n",
            "src/backend/cuda/runtime/module.cc": _SHFL,
            "src/backend/rocm/runtime/module.cc": "// ROCm runtime\n",
            "CMakeLists.txt": (
                "project(t LANGUAGES CXX)\noption(USE_ROCM OFF)\n"
                "file(GLOB CODEGEN src/backend/cuda/codegen/*.cc src/backend/rocm/codegen/*.cc)\n"
                "add_library(t ${CODEGEN})\n"
                "if(USE_ROCM)\n  add_library(rt src/backend/rocm/runtime/module.cc)\nendif()\n"
            ),
        },
        {
            "src/backend/cuda/codegen/emit.cc": Severity.BLOCKER,
            "src/backend/cuda/runtime/module.cc": Severity.INFO,
        },
    ),
    # the dispatcher includes CAS_CUDA.hpp only under the CUDA macro (desul), but
    # Lock_CUDA.hpp outside any #if (its include guard aside): compiled everywhere
    "included by shared code": (
        {
            "atomics/CAS_CUDA.hpp": _SHFL,
            "atomics/CAS_HIP.hpp": "// the HIP side\n",
            "atomics/Lock_CUDA.hpp": _SHFL,
            "atomics/Lock_HIP.hpp": "// the HIP side\n",
            "atomics/All.hpp": (
                "#ifndef ALL_HPP\n#define ALL_HPP\n"
                "#ifdef HAVE_CUDA_ATOMICS\n#include <atomics/CAS_CUDA.hpp>\n#endif\n"
                "#ifdef HAVE_HIP_ATOMICS\n#include <atomics/CAS_HIP.hpp>\n#endif\n"
                '#include "Lock_CUDA.hpp"\n#endif\n'
            ),
        },
        {"atomics/CAS_CUDA.hpp": Severity.INFO, "atomics/Lock_CUDA.hpp": Severity.BLOCKER},
    ),
    # the ROCm build adds the CUDA folder itself, outside any CUDA option
    "a CUDA folder the ROCm build adds": (
        {
            "CMakeLists.txt": (
                "project(m LANGUAGES CXX)\noption(USE_HIP OFF)\n"
                "if(USE_HIP)\n  add_subdirectory(hip)\nendif()\nadd_subdirectory(cuda)\n"
            ),
            "cuda/reduce.cu": _SHFL,
            "hip/reduce.hip.cpp": "// HIP\n",
        },
        {"cuda/reduce.cu": Severity.BLOCKER},
    ),
}


@pytest.mark.parametrize("case", sorted(_KEPT))
def test_a_cuda_file_the_rocm_build_compiles_stays(tmp_path: Path, case: str) -> None:
    files, expected = _KEPT[case]
    _write(tmp_path, files)
    assert _gp302(tmp_path) == expected
