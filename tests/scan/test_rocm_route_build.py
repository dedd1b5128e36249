"""Issue 24 (sixth round): what the project's own ROCm route compiles, per file and region.

Each kind of evidence has a positive case (the finding is lowered to info, naming why and
where) and negative ones (the finding stays): the CUDA side of the project's backend
switches (``P_CUDA_ACTIVE`` beside ``P_HIP_ACTIVE``) and headers included only under it; a
whole ``cuda/`` folder beside a ``hip/`` one; every command of a CMake branch the ROCm
build never takes; ``return()`` from a backend's CMake file on ROCm; ``@VAR@`` tests in
configure templates. A kernel the ROCm route compiles keeps its blocker.
"""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from gpuport.scan.model import ScanReport
from gpuport.scan.project.backend_switches import cuda_switches
from gpuport.scan.project.build_cmake_model import cmake_uses
from gpuport.scan.project.on_route import OFF_ROUTE
from tests.scan.project_files import scan_files

PTX = 'asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));'
KERNEL = "__global__ void k(unsigned *o) {{ unsigned lane; {ptx} o[0] = lane; }}\n"


def _severities(report: ScanReport, path: str, rule: str = "GP301") -> list[Severity]:
    return [f.severity for f in report.findings if f.location.path == path and f.rule_id == rule]


def _messages(report: ScanReport, path: str, rule: str = "GP301") -> list[str]:
    return [f.message for f in report.findings if f.location.path == path and f.rule_id == rule]


# --- the CUDA side of the project's backend switches -----------------------------------

CONFIG = (
    "#pragma once\n"
    "#if defined(P_ENABLE_CUDA) && defined(__CUDACC__)\n#define P_CUDA_ACTIVE\n#endif\n"
    "#if defined(P_ENABLE_HIP) && defined(__HIPCC__)\n#define P_HIP_ACTIVE\n#endif\n"
)
ARCH = (
    "#pragma once\n"
    '#include "p/config.hpp"\n'
    "#ifdef P_CUDA_ACTIVE\n#include <p/arch/nv/warp.hpp>\n#endif\n"
    "#ifdef P_HIP_ACTIVE\n#include <p/arch/amd/wave.hpp>\n#endif\n"
)
CMAKE = (
    "project(p LANGUAGES CXX)\n"
    'option(P_ENABLE_CUDA "CUDA" OFF)\noption(P_ENABLE_HIP "HIP" OFF)\n'
    "if(P_ENABLE_HIP)\n  enable_language(HIP)\nendif()\n"
    "add_library(p src/p.cpp)\n"
)


def _switch_project(arch: str = ARCH, cmake: str = CMAKE) -> dict[str, str]:
    return {
        "CMakeLists.txt": cmake,
        "include/p/config.hpp": CONFIG,
        "include/p/arch.hpp": arch,
        "include/p/arch/nv/warp.hpp": "#pragma once\n#include <p/arch/nv/ptx.hpp>\n",
        "include/p/arch/nv/ptx.hpp": "#pragma once\n" + KERNEL.format(ptx=PTX),
        "include/p/arch/amd/wave.hpp": "#pragma once\nint wave();\n",
        "src/p.cpp": '#include "p/arch.hpp"\n',
    }


def test_a_header_under_the_cuda_side_of_a_backend_switch_is_not_built(tmp_path: Path) -> None:
    report = scan_files(tmp_path, _switch_project())
    # the header included through the CUDA-only one goes with it
    got = _severities(report, "include/p/arch/nv/ptx.hpp")
    assert got and all(s is Severity.INFO for s in got)
    message = _messages(report, "include/p/arch/nv/ptx.hpp")[0]
    assert "not compiled by the ROCm build" in message
    assert "include/p/arch.hpp:4" in message


def test_a_switch_without_a_rocm_twin_decides_nothing(tmp_path: Path) -> None:
    files = {rel: text.replace("_HIP", "_OMP") for rel, text in _switch_project().items()}
    report = scan_files(tmp_path, files)
    # not "not compiled": the switch has no HIP twin; but it is included only under a CUDA
    # macro, so nothing shows the ROCm route builds it (issue 24, eighth round)
    got = [f for f in report.findings if f.location.path == "include/p/arch/nv/ptx.hpp"]
    assert got and all(f.not_built is None and OFF_ROUTE in f.message for f in got)
    # included outside the CUDA macro, it is on the route and keeps its blocker
    files["include/p/arch.hpp"] += "#include <p/arch/nv/warp.hpp>\n"
    report = scan_files(tmp_path / "b", files)
    assert Severity.BLOCKER in _severities(report, "include/p/arch/nv/ptx.hpp")


def test_a_rocm_build_that_defines_the_cuda_switch_too_keeps_it(tmp_path: Path) -> None:
    # ggml's ggml-hip/CMakeLists.txt defines GGML_USE_CUDA: the HIP build compiles the CUDA
    # sources, so the CUDA switch is on there too
    cmake = CMAKE + "if(P_ENABLE_HIP)\n  add_compile_definitions(P_CUDA_ACTIVE)\nendif()\n"
    report = scan_files(tmp_path, _switch_project(cmake=cmake))
    assert Severity.BLOCKER in _severities(report, "include/p/arch/nv/ptx.hpp")


def test_switch_names() -> None:
    native = {
        "a.h": "#ifdef P_USE_CUDA\n#endif\n#ifdef P_USE_HIP\n#endif\n"
        "#ifndef P_CUDA_CONFIG_H\n#define P_CUDA_CONFIG_H\n#endif\n"
        "#ifndef P_HIP_CONFIG_H\n#define P_HIP_CONFIG_H\n#endif\n"
        "#if SYS == SYS_BACKEND_CUDA\n#elif SYS == SYS_BACKEND_HIP\n#endif\n"
        "#if defined(Q_WITH_CUDA) && defined(Q_WITH_ROCM)\n#endif\n"
        "#ifdef P_NO_CUDA\n#endif\n#ifdef P_NO_HIP\n#endif\n",
    }
    got = cuda_switches(native, {})
    # include guards, compared constants, switches wanted together and negations are not
    assert list(got) == ["P_USE_CUDA"]
    assert "P_USE_HIP (a.h:3)" in got["P_USE_CUDA"]


# --- a whole cuda/ folder beside a hip/ one --------------------------------------------

FOLDER_CMAKE = (
    "project(t LANGUAGES CXX)\n"
    'option(USE_ROCM "ROCm" OFF)\n'
    "if(USE_ROCM)\n  enable_language(HIP)\nendif()\n"
    "add_library(t src/t.cpp)\n"
)


def _folder_project() -> dict[str, str]:
    return {
        "CMakeLists.txt": FOLDER_CMAKE,
        "src/t.cpp": "int t();\n",
        "templates/cuda/copy.h": "#pragma once\n" + KERNEL.format(ptx=PTX),
        "templates/cuda/tma_only.h": "#pragma once\n" + KERNEL.format(ptx=PTX),
        "templates/hip/copy.h": "#pragma once\nint copy();\n",
    }


def test_a_cuda_folder_beside_a_hip_folder_is_the_cuda_backend(tmp_path: Path) -> None:
    report = scan_files(tmp_path, _folder_project())
    for path in ("templates/cuda/copy.h", "templates/cuda/tma_only.h"):
        got = _severities(report, path)
        assert got and all(s is Severity.INFO for s in got), path
    assert (
        "templates/hip/: the HIP side of the backend folder templates/cuda/"
        in (_messages(report, "templates/cuda/tma_only.h")[0])
    )


def test_a_cuda_folder_is_kept_without_a_rocm_build_or_when_used(tmp_path: Path) -> None:
    files = _folder_project() | {"CMakeLists.txt": "project(t LANGUAGES CXX CUDA)\n"}
    report = scan_files(tmp_path / "a", files)
    assert Severity.BLOCKER in _severities(report, "templates/cuda/tma_only.h")
    # a file the ROCm build compiles includes it: it is compiled too
    files = _folder_project() | {"src/t.cpp": '#include "../templates/cuda/tma_only.h"\n'}
    report = scan_files(tmp_path / "b", files)
    assert Severity.BLOCKER in _severities(report, "templates/cuda/tma_only.h")
    assert all(s is Severity.INFO for s in _severities(report, "templates/cuda/copy.h"))


def test_a_kernel_the_rocm_route_compiles_keeps_its_blocker(tmp_path: Path) -> None:
    # listed for ROCm, PTX unguarded: a real blocker, whatever sits beside it
    files = _folder_project() | {"src/t.cpp": KERNEL.format(ptx=PTX)}
    report = scan_files(tmp_path, files)
    assert _severities(report, "src/t.cpp") == [Severity.BLOCKER]


# --- CMake branches and files the ROCm build never configures ------------------------------


def test_every_command_of_a_cuda_only_branch_is_not_configured() -> None:
    text = (
        "if(P_ENABLE_CUDA AND P_ENABLE_NVTX)\n"
        "  find_package(CUDAToolkit 10 REQUIRED)\n"
        '  message(STATUS "nvtx")\n'
        "endif()\n"
        "find_package(OpenMP)\n"
    )
    _, _, ranges = cmake_uses(text)
    assert [(a, b) for a, b, _ in ranges] == [(2, 2), (3, 3)]


def test_return_on_rocm_ends_the_cuda_backends_file() -> None:
    text = "set(ALWAYS a.cc)\nif(NOT USE_CUDA)\n  return()\nendif()\nfind_package(CUDAToolkit)\n"
    _, _, ranges = cmake_uses(text)
    assert [(a, b, t) for a, b, t in ranges] == [(5, 5, 2)]
    # inside a function, return() leaves the function only
    fn = "function(f)\n" + text.split("find_package")[0] + "endfunction()\nfind_package(X)\n"
    assert cmake_uses(fn)[2] == []
    # a return() ROCm does not take ends nothing
    assert cmake_uses(text.replace("NOT USE_CUDA", "USE_CUDA"))[2] == [(3, 3, 2)]


def test_configure_template_tests_read_the_variable() -> None:
    text = "if(@P_ENABLE_CUDA@)\n  find_dependency(CUDAToolkit)\nendif()\n"
    assert cmake_uses(text)[2] == [(2, 2, 1)]
    assert cmake_uses(text.replace("CUDA@", "HIP@"))[2] == []


def test_a_find_package_in_a_cuda_branch_is_lowered_in_a_rocm_project(tmp_path: Path) -> None:
    setup = (
        "if(P_ENABLE_CUDA AND P_ENABLE_NVTX)\n"
        "  find_package(CUDAToolkit 10 REQUIRED)\n"
        "endif()\n"
        "if(P_ENABLE_HIP)\n  find_package(hip REQUIRED)\nendif()\n"
    )
    files = {"CMakeLists.txt": CMAKE + "include(cmake/Setup.cmake)\n", "cmake/Setup.cmake": setup}
    report = scan_files(tmp_path, files)
    found = [f for f in report.findings if f.location.path == "cmake/Setup.cmake"]
    at2 = [f for f in found if f.location.line == 2]
    assert at2 and all(f.severity is Severity.INFO and f.not_built for f in at2)
    assert at2[0].not_built == "cmake/Setup.cmake:1"
    at5 = [f for f in found if f.location.line == 5]
    assert all(f.not_built is None for f in at5)


# --- setup.py: CUDA switches read from the environment, short-circuit tests -------------

SETUP_SWITCH = """
import os, subprocess
from setuptools import setup

def env_bool(name, default=None):
    v = os.environ.get(name)
    return default if v is None else v == "1"

def find_nvcc():
    return subprocess.check_output(["nvcc", "--version"])

BACKENDS = ("X_USE_CUDA", "X_USE_ROCM")
args = []
if env_bool("X_USE_CUDA", False):
    args.append(find_nvcc())
if env_bool("X_USE_ROCM", False):
    args.append("-DX_USE_ROCM=ON")
setup(name="x")
"""


def test_a_cuda_switch_read_from_the_environment_is_off_on_rocm() -> None:
    from gpuport.scan.project.build_setup_ast import setup_uses

    _, tested, ranges = setup_uses(SETUP_SWITCH)
    assert tested
    # the CUDA branch, and the helper only it calls
    assert (15, 15, 14) in ranges
    assert (9, 10, 14) in ranges
    # without the ROCm twin in the file, or with a default that turns it on: unknown
    alone = SETUP_SWITCH.replace('"X_USE_ROCM"', '"X_USE_CPU"')
    assert (15, 15, 14) not in setup_uses(alone)[2]
    on = SETUP_SWITCH.replace('env_bool("X_USE_CUDA", False)', 'env_bool("X_USE_CUDA", True)')
    assert (15, 15, 14) not in setup_uses(on)[2]


def test_a_call_after_a_false_test_in_an_and_is_not_made_on_rocm() -> None:
    from gpuport.scan.project.build_setup_ast import setup_uses

    text = (
        "import subprocess, torch\n"
        "def nvcc_version():\n"
        '    return subprocess.check_output(["nvcc", "-V"])\n'
        "if torch.version.cuda and nvcc_version():\n"
        "    pass\n"
        "if torch.version.hip:\n"
        "    pass\n"
    )
    assert (2, 3, 4) in setup_uses(text)[2]
    # called where ROCm does run it: not CUDA-only
    both = text.replace("torch.version.cuda and nvcc_version()", "nvcc_version()")
    assert all(r[:2] != (2, 3) for r in setup_uses(both)[2])


def test_a_cmake_branch_of_a_third_backend_is_not_configured_on_rocm() -> None:
    text = "if(P_USE_SYCL)\n  find_package(IntelSYCL REQUIRED)\nendif()\n"
    assert cmake_uses(text)[2] == [(2, 2, 1)]
    # a negated name is not the backend's switch
    assert cmake_uses(text.replace("P_USE_SYCL", "P_NO_SYCL"))[2] == []


# --- a makefile named for HIP beside the CUDA Makefile ----------------------------------

NVCC_MAKE = "app: k.cu\n\tnvcc -O3 -arch=sm_80 -o app k.cu\n"
SHFL = "__global__ void k(float* x) { x[0] = __shfl_down_sync(0xffffffff, x[1], 1); }\n"


def test_a_hip_makefile_is_a_rocm_build_of_its_own(tmp_path: Path) -> None:
    files = {
        "Makefile": NVCC_MAKE,
        "k.cu": SHFL,
        "k_hip.cpp": SHFL.replace("_sync(0xffffffff,", "("),
    }
    hip = "HIPCC = hipcc\napp: k_hip.cpp\n\t$(HIPCC) -O3 -o app k_hip.cpp\n"
    for name in ("makefile.hip", "Makefile_rocm", "amd.makefile"):
        report = scan_files(tmp_path / name.replace(".", "_"), {**files, name: hip})
        assert [(r.path, r.counts) for r in report.routes] == [(name, True)], name
        assert _severities(report, "k.cu", "GP302") == [Severity.INFO]  # not in its build
        # the CUDA Makefile's flags are the CUDA variant's
        assert {f.scope for f in report.findings if f.location.path == "Makefile"} == {"extra"}
    # the HIP makefile compiles the CUDA source itself: its blocker stays
    report = scan_files(
        tmp_path / "same", {**files, "makefile.hip": hip.replace("k_hip.cpp", "k.cu")}
    )
    assert _severities(report, "k.cu", "GP302") == [Severity.BLOCKER]


def test_a_makefile_variant_without_hip_or_not_named_for_rocm_is_no_route(tmp_path: Path) -> None:
    files = {"Makefile": NVCC_MAKE, "k.cu": SHFL}
    for name, text in (
        ("makefile.hip", "app: k.cu\n\tnvcc -o app k.cu\n"),  # named for HIP, builds with nvcc
        ("Makefile.cuda", "app: k.cu\n\thipcc -o app k.cu\n"),  # not a ROCm-named makefile
    ):
        report = scan_files(tmp_path / name.replace(".", "_"), {**files, name: text})
        assert not any(r.counts for r in report.routes), name
        assert _severities(report, "k.cu", "GP302") == [Severity.BLOCKER], name
