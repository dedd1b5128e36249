"""Issue 24, eighth round: in a project with a ROCm route, a finding keeps its severity only
where the route is shown to build its code; and the classes read in a file itself (run-time
vendor switches, preprocessor chains with a HIP branch, NVIDIA-library macros, backend macros
mapped from the compiler, the project's own ROCm intrinsics, Dockerfile stages). Each has a
positive case (lowered to info, saying why) and a negative one (kept)."""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from gpuport.scan.model import ScanReport, Verdict
from gpuport.scan.project.backend_choice import (
    docker_stage_off,
    hip_sibling_branch,
    vendor_case,
)
from gpuport.scan.project.include_paths import owners_by_name
from gpuport.scan.project.on_route import (
    OFF_ROUTE,
    on_route_files,
    open_branch,
    rocm_branch_defines,
    route_includes,
)
from tests.scan.project_files import scan_files

PTX = '__global__ void k(unsigned *o) { unsigned l; asm volatile("mov.u32 %0, %%laneid;" : "=r"(l)); o[0] = l; }\n'  # noqa: E501
CMAKE = (
    "project(p LANGUAGES CXX)\noption(P_HIP OFF)\n"
    "if(P_HIP)\n  enable_language(HIP)\n  add_library(ph src/shared.cu src/hip_only.cu)\n"
    "else()\n  add_library(pc src/shared.cu src/cuda_only.cu)\nendif()\n"
)


def _sev(report: ScanReport, path: str, rule: str = "GP301") -> list[Severity]:
    return [f.severity for f in report.findings if f.location.path == path and f.rule_id == rule]


def _msgs(report: ScanReport, path: str, rule: str = "GP301") -> list[str]:
    return [f.message for f in report.findings if f.location.path == path and f.rule_id == rule]


# --- native files: shown on the route or not ---------------------------------------------


def test_a_file_no_build_names_is_not_shown_on_the_route(tmp_path: Path) -> None:
    files = {
        "CMakeLists.txt": CMAKE,
        "src/shared.cu": '#include "util.cuh"\n',
        "src/util.cuh": PTX,  # included by a source the HIP branch compiles: on the route
        "src/hip_only.cu": "int h;\n",
        "src/cuda_only.cu": "int c;\n",
        "src/loose/kernel.cu": PTX,  # in no build file, included by nothing
    }
    r = scan_files(tmp_path, files)
    assert _sev(r, "src/util.cuh") == [Severity.BLOCKER]
    assert _sev(r, "src/loose/kernel.cu") == [Severity.INFO]
    msg = _msgs(r, "src/loose/kernel.cu")[0]
    assert OFF_ROUTE in msg and "route: CMakeLists.txt" in msg
    # listed, not dropped, and not claimed "not built"
    assert not [f for f in r.findings if f.not_built and f.location.path == "src/loose/kernel.cu"]


def test_without_a_route_nothing_is_lowered_for_it(tmp_path: Path) -> None:
    r = scan_files(tmp_path, {"src/loose/kernel.cu": PTX, "README.md": "Fast kernels.\n"})
    assert _sev(r, "src/loose/kernel.cu") == [Severity.BLOCKER]


def test_a_route_that_only_lowers_code_is_not_ready(tmp_path: Path) -> None:
    readme = "Install for AMD:\n\npip install torch --index-url https://download.pytorch.org/whl/rocm6.2\n"
    r = scan_files(tmp_path, {"README.md": readme, "lib/k.cu": PTX})
    assert _sev(r, "lib/k.cu") == [Severity.INFO]
    assert r.verdict is Verdict.MINOR_WORK and "not shown to build" in r.verdict_reason


def test_written_for_hip_too_and_setup_sources_are_on_the_route() -> None:
    native = {
        "a/both.cu": "#ifdef __HIP_PLATFORM_AMD__\n#include <hip/hip_runtime.h>\n#endif\n",
        "a/ext.cu": "int e;\n",
        "a/other.cu": "int o;\n",
        "a/gone.cu": "#include <hip/hip_runtime.h>\n",
    }
    shown = on_route_files(native, [], ["a/ext.cu"], {"a/gone.cu": "setup.py:3"})
    assert set(shown) == {"a/both.cu", "a/ext.cu"}  # not_built wins over a HIP mark


def test_per_target_include_folders_and_cuda_side_includes() -> None:
    native = {
        "src/shared.cpp": (
            "#include <fast_div.h>\n"
            '#if defined(USE_CUDA) || defined(USE_CUDA_UVM)\n#include "vec_cuda.h"\n'
            '#elif defined(USE_HIP)\n#include "vec_hip.h"\n#else\n#include "vec_cpu.h"\n#endif\n'
        ),
        "include/targets/cuda/fast_div.h": PTX,
        "include/targets/generic/fast_div.h": "int d;\n",
        "src/vec_cuda.h": PTX,
        "src/vec_hip.h": "int h;\n",
        "src/vec_cpu.h": "int c;\n",
    }
    got = route_includes("src/shared.cpp", native["src/shared.cpp"], owners_by_name(native))
    assert got == {"include/targets/generic/fast_div.h", "src/vec_hip.h", "src/vec_cpu.h"}
    # a macro a build file defines on the ROCm side is no CUDA side
    got = route_includes(
        "src/shared.cpp", native["src/shared.cpp"], owners_by_name(native), frozenset({"USE_CUDA"})
    )
    assert got == {"include/targets/generic/fast_div.h", "src/vec_cuda.h", "src/vec_hip.h"}
    text = '#ifdef USE_CUDA\n#include "vec_cuda.h"\n#endif\n'
    assert route_includes("src/s.cpp", text, owners_by_name(native), frozenset({"USE_CUDA"})) == {
        "src/vec_cuda.h"
    }


# --- build-file lines: every branch around them taken on ROCm ----------------------------


def test_open_branch_of_cmake_and_make() -> None:
    cmake = (
        "set(CMAKE_CUDA_ARCHITECTURES 80)\n"  # 1: outside any branch
        "if(${MY_BACKEND} EQUAL 1)\n  set(CMAKE_CUDA_ARCHITECTURES 90)\n"  # 2-3: unknown
        'elseif(${MY_BACKEND} STREQUAL "hip")\n  set(X 1)\n'  # 4-5: HIP: taken
        "endif()\n"
        "if(USE_CUDA)\n  set(A 1)\nelse()\n  set(B 1)\nendif()\n"  # 7-11: else taken
        "if(build_cufft_bench)\n  set(C 1)\nendif()\n"  # 12-14: opt-in, unknown
    )
    assert open_branch("CMakeLists.txt", cmake, 1) is None
    assert open_branch("CMakeLists.txt", cmake, 3) == 2
    assert open_branch("CMakeLists.txt", cmake, 5) is None
    assert open_branch("CMakeLists.txt", cmake, 8) == 7  # if(USE_CUDA): false on ROCm
    assert open_branch("CMakeLists.txt", cmake, 10) is None
    assert open_branch("CMakeLists.txt", cmake, 13) == 12
    make = "ifdef USE_HIP\nA = 1\nelse\nB = 1\nendif\nifeq ($(OPT),fast)\nC = 1\nendif\n"
    assert open_branch("Makefile", make, 2) is None
    assert open_branch("Makefile", make, 4) == 3
    assert open_branch("Makefile", make, 7) == 6
    assert open_branch("setup.py", make, 7) is None


def test_a_build_finding_in_an_opt_in_branch_is_not_shown(tmp_path: Path) -> None:
    cmake = CMAKE + (
        'set(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} -Wall")\n'
        "if(build_cufft_benchmark)\n  set_target_properties(b PROPERTIES CUDA_ARCHITECTURES 80)\n"
        "endif()\n"
        "set_target_properties(ph PROPERTIES CUDA_ARCHITECTURES 80)\n"
    )
    files = {"CMakeLists.txt": cmake, "src/shared.cu": "int s;\n", "src/hip_only.cu": "int h;\n"}
    r = scan_files(tmp_path, files)
    gp403 = {f.location.line: f for f in r.findings if f.rule_id == "GP403"}
    assert gp403[11].severity is Severity.INFO and "CMakeLists.txt:10" in gp403[11].message
    assert gp403[13].severity is not Severity.INFO  # outside any branch: on the route


# --- classes read in the file itself -------------------------------------------------------

SWITCH = """void init(int vendor) {
  switch (vendor) {
  case 0x10DE:  // NVIDIA
    warpSize = 32;
    break;
  case 0x1002:  // AMD
    warpSize = 64;
    break;
  default:
    warpSize = 32;
  }
  switch (vendor) {
  case 0x8086:
  case 0x1002:
    lds = 1;
    break;
  }
}
"""


def test_vendor_switch() -> None:
    assert vendor_case(SWITCH, 4) == 6
    assert vendor_case(SWITCH, 7) is None  # AMD's own case
    assert vendor_case(SWITCH, 10) == 6  # default: the other vendors
    assert vendor_case(SWITCH, 15) is None  # falls through from another vendor into AMD's
    assert vendor_case(SWITCH.replace("0x1002", "0x1003"), 4) is None  # no AMD case: kept


def test_vendor_switch_in_a_scan(tmp_path: Path) -> None:
    code = "__device__ int warpSize;\n" + SWITCH
    r = scan_files(tmp_path, {"src/init.cu": code})
    got = [f for f in r.findings if f.rule_id == "GP303" and f.location.line == 5]
    assert got and got[0].severity is Severity.INFO and "AMD's case" in got[0].message


def test_hip_sibling_branch() -> None:
    text = (
        "#if (MY_BACKEND == 1)\n  nvrtcGetPTX(p, b);\n"
        "#elif (MY_BACKEND == 2)\n  hiprtcGetCode(p, b);\n#endif\n"
        "#if (MY_BACKEND == 3)\n  clBuild(p);\n#endif\n"
    )
    assert hip_sibling_branch(text, 2) == 3
    assert hip_sibling_branch(text, 4) is None  # the HIP branch itself
    assert hip_sibling_branch(text, 7) is None  # a chain without a HIP branch
    assert hip_sibling_branch(text.replace("hiprtcGetCode", "zeCompile"), 2) is None


def test_nvidia_library_macro_and_compiler_mapped_backend_macro(tmp_path: Path) -> None:
    platform = (
        "#pragma once\n#if defined(__CUDACC__)\n  #define P_COMPILE_CUDA\n#endif\n"
        "#if defined(__HIPCC__)\n  #define P_COMPILE_HIP\n#endif\n"
    )
    kernel = (
        '#include "platform.h"\n'
        "__device__ int shfl(int x, int id) {\n"
        "#if defined(P_COMPILE_CUDA)\n  return __shfl_sync(0xFFFFFFFF, x, id);\n"
        "#else\n  return __shfl(x, id);\n#endif\n}\n"
        "#ifdef P_NVSHMEM_COMMS\n#include <nvshmem.h>\n#endif\n"
    )
    r = scan_files(tmp_path, {"core/platform.h": platform, "core/kernel.cu": kernel})
    assert _sev(r, "core/kernel.cu", "GP302") == [Severity.INFO]
    assert _sev(r, "core/kernel.cu", "GP315") == [Severity.INFO]
    # a plain #define of the CUDA macro (no compiler test above it), or an NVSHMEM macro the
    # project defines itself, keeps them
    plain = platform.replace("#if defined(__CUDACC__)\n  #define P_COMPILE_CUDA\n#endif\n",
                             "#define P_COMPILE_CUDA\n")  # fmt: skip
    kernel2 = "#define P_NVSHMEM_COMMS\n" + kernel
    r = scan_files(tmp_path / "b", {"core/platform.h": plain, "core/kernel.cu": kernel2})
    assert _sev(r, "core/kernel.cu", "GP302") == [Severity.BLOCKER]
    assert _sev(r, "core/kernel.cu", "GP315") == [Severity.BLOCKER]


def test_the_projects_own_rocm_intrinsics_are_shims(tmp_path: Path) -> None:
    common = (
        "#pragma once\n#if defined(USE_ROCM)\n"
        "static __device__ __forceinline__ int __dp4a(const int a, const int b, int c) {\n"
        "  return __builtin_amdgcn_sdot4(a, b, c, false);\n}\n#endif\n"
    )
    use = '#include "common.h"\n__device__ int f(int a, int b) { return __dp4a(a, b, 0); }\n'
    r = scan_files(tmp_path, {"q/common.h": common, "q/dot.cu": use})
    got = [f for f in r.findings if f.location.path == "q/dot.cu" and f.rule_id == "GP314"]
    assert got and all(f.severity is Severity.INFO for f in got)
    r = scan_files(tmp_path / "b", {"q/dot.cu": use.replace('#include "common.h"\n', "")})
    got = [f for f in r.findings if f.location.path == "q/dot.cu" and f.rule_id == "GP314"]
    assert got and any(f.severity is not Severity.INFO for f in got)


DOCKERFILE = """FROM rocm/dev-ubuntu:6.2 AS base-amd64
FROM ubuntu:22.04 AS base-arm64
FROM base-${TARGETARCH} AS base
FROM base AS cuda-deps
RUN apt-get install -y cuda-toolkit-12-4
FROM base AS rocm-deps
RUN apt-get install -y rocm-dev
FROM rocm-deps AS server-rocm
COPY --from=base /x /x
"""


def test_docker_stages_no_rocm_stage_is_built_from() -> None:
    assert docker_stage_off(DOCKERFILE, 5) is not None  # the CUDA stage
    assert docker_stage_off(DOCKERFILE, 7) is None  # the ROCm stage
    assert docker_stage_off(DOCKERFILE, 1) is None  # the ROCm stage's base, through ${...}
    assert docker_stage_off("FROM nvidia/cuda:12.4 AS build\nRUN make\n", 2) is None


def test_macros_defined_in_a_rocm_branch() -> None:
    cmake = (
        "if(P_ENABLE_HIP)\n  add_compile_definitions(P_CUDA_ACTIVE)\nendif()\n"
        "if(BUILD_FUSED)\n  target_compile_definitions(f PRIVATE USE_CUDA)\nendif()\n"
        "if(USE_CUDA)\nelse()\n  add_definitions(-DP_PORTABLE)\nendif()\n"
    )
    got = rocm_branch_defines(
        {"CMakeLists.txt": cmake, "p-hip/CMakeLists.txt": "add_compile_definitions(P_USE_CUDA)\n"}
    )
    # the HIP branch, the else of a CUDA test, a HIP folder: on in the ROCm build; an opt-in
    # branch of unknown value (where USE_CUDA is defined) is not shown to be
    assert got >= {"P_CUDA_ACTIVE", "P_PORTABLE", "P_USE_CUDA"}
    assert "USE_CUDA" not in got


def test_code_written_against_a_hip_portability_header_is_on_the_route() -> None:
    gpu = (
        "#pragma once\n#ifdef O_HIP\n#include <hip/hip_runtime.h>\n"
        "#define cudaMalloc hipMalloc\n#define cudaFree hipFree\n"
        "#define cufftDestroy hipfftDestroy\n#endif\n"
    )
    native = {
        "src/utils/gpu.hpp": gpu,
        "src/global.h": '#include "utils/gpu.hpp"\n',
        "src/hydro/kernel.cu": '#include "../global.h"\n' + PTX,
        "src/other/lone.cu": PTX,
    }
    resolved = {
        "src/global.h": frozenset({"src/utils/gpu.hpp"}),
        "src/hydro/kernel.cu": frozenset({"src/global.h"}),
    }
    shown = on_route_files(native, [], [], {}, resolved=resolved)
    assert "portability header" in shown["src/hydro/kernel.cu"]
    assert "src/other/lone.cu" not in shown
    # two mapped names are not a portability header
    two = {**native, "src/utils/gpu.hpp": gpu.replace("#define cufftDestroy hipfftDestroy\n", "")}
    two["src/utils/gpu.hpp"] = two["src/utils/gpu.hpp"].replace(
        "#include <hip/hip_runtime.h>\n", ""
    )
    shown = on_route_files(two, [], [], {}, resolved=resolved)
    assert "src/hydro/kernel.cu" not in shown
