"""CMake HIP build and compatibility header; Python gates and nvidia-smi; the ROCm CI job."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.port.helpers import created, fix_ids, project, run

CMAKE = """\
cmake_minimum_required(VERSION 3.21)
project(demo LANGUAGES CXX)
find_package(CUDAToolkit REQUIRED)
enable_language(CUDA)
add_library(demo SHARED src/kern.cu)
target_link_libraries(demo PRIVATE CUDA::cudart CUDA::cublas)
"""
KERN = """\
#include <cuda_runtime.h>
#include <cublas_v2.h>
void run(cublasHandle_t h, float* x) {
    float* d; cudaMalloc(&d, 4); cudaMemcpy(d, x, 4, cudaMemcpyHostToDevice);
    cublasSetStream(h, 0); cudaFree(d);
}
"""


def test_cmake_hip_build_and_compat_header(tmp_path: Path) -> None:
    root = project(tmp_path, {"CMakeLists.txt": CMAKE, "src/kern.cu": KERN})
    run(root, apply=True, verify=False)
    cm = (root / "CMakeLists.txt").read_text()
    assert 'option(GPUPORT_HIP "Build the CUDA sources with HIP for AMD GPUs" OFF)' in cm
    assert cm.index("option(GPUPORT_HIP") > cm.index("project(demo")
    assert "else()\n    find_package(CUDAToolkit REQUIRED)\nendif()" in cm
    assert "if(NOT GPUPORT_HIP)\n    enable_language(CUDA)\nendif()" in cm
    assert "set_source_files_properties(src/kern.cu PROPERTIES LANGUAGE HIP)" in cm
    shim = (root / "cmake/gpuport_hip.cmake").read_text()
    assert (
        "enable_language(HIP)" in shim
        and "target_link_libraries(CUDA::cublas INTERFACE roc::hipblas)" in shim
    )
    kern = (root / "src/kern.cu").read_text()
    assert '#include "gpuport_hip_compat.h"' in kern and "#include <cuda_runtime.h>" in kern
    compat = (root / "src/gpuport_hip_compat.h").read_text()
    for line in (
        "#define cudaMalloc hipMalloc",
        "#define cublasSetStream hipblasSetStream",
        "#include <hipblas/hipblas.h>",
    ):
        assert line in compat
    assert run(root).files == []  # idempotent


def test_a_hip_build_that_could_not_build_is_only_an_unsafe_fix(tmp_path: Path) -> None:
    """.cu sources globbed through a variable gpuport cannot read get no HIP language, and a
    library the sources call that no CUDA:: target links is not linked on the HIP build: the
    opt-in build would not build, so it is not offered as safe (the compat header, read only
    by HIP, still is). A glob gpuport can read is marked HIP (tests/port/test_cmake_reach.py)."""
    globbed = CMAKE.replace(
        "add_library(demo SHARED src/kern.cu)",
        "file(GLOB SRC ${KERNEL_DIR}/*.cu)\nadd_library(demo SHARED ${SRC})",
    )
    root = project(tmp_path / "glob", {"CMakeLists.txt": globbed, "src/kern.cu": KERN})
    report = run(root)
    fix = next(f for f in report.fixes if f.id == "cmake-hip:CMakeLists.txt")
    assert not fix.safe and not fix.applied and "file(GLOB" in fix.why
    assert "hip-compat:src/gpuport_hip_compat.h" in fix_ids(report, applied=True)
    assert "cmake-hip:CMakeLists.txt" in fix_ids(run(root, unsafe_fixes=True), applied=True)
    unlinked = CMAKE.replace(" CUDA::cublas)", ")")
    root = project(tmp_path / "lib", {"CMakeLists.txt": unlinked, "src/kern.cu": KERN})
    fix = next(f for f in run(root).fixes if f.id == "cmake-hip:CMakeLists.txt")
    assert not fix.safe and "cublas" in fix.why


def test_a_hip_build_taking_a_no_gpu_path_or_missing_sources_is_unsafe(tmp_path: Path) -> None:
    """A ``NOT CMAKE_CUDA_COMPILER`` test (the HIP build, without nvcc, takes the no-GPU
    path), and .cu files compiled by a sub-folder's CMake file with its own CUDA lookup (the
    fix leaves it) make the fix unsafe, and no CI job checks it."""
    gated = CMAKE.replace(
        "find_package(CUDAToolkit REQUIRED)\nenable_language(CUDA)\n",
        "check_language(CUDA)\nif(CMAKE_CUDA_COMPILER)\n  enable_language(CUDA)\nendif()\n"
        "if(NOT CMAKE_CUDA_COMPILER)\n  add_definitions(-DCPU_ONLY)\nendif()\n",
    )
    files = {
        "CMakeLists.txt": gated,
        "src/kern.cu": KERN,
        ".github/workflows/ci.yml": "on: push\n",
    }
    report = run(project(tmp_path / "gate", files))
    fix = next(f for f in report.fixes if f.id == "cmake-hip:CMakeLists.txt")
    assert not fix.safe and "NOT CMAKE_CUDA_COMPILER" in fix.why
    assert not any(i.startswith("rocm-ci") for i in fix_ids(report))
    sub = CMAKE.replace("add_library(demo SHARED src/kern.cu)", "add_subdirectory(src)")
    files = {
        "CMakeLists.txt": sub,
        "src/CMakeLists.txt": "enable_language(CUDA)\nadd_library(demo SHARED kern.cu)\n",
        "src/kern.cu": KERN,
    }
    fix = next(
        f for f in run(project(tmp_path / "sub", files)).fixes if f.id == "cmake-hip:CMakeLists.txt"
    )
    assert not fix.safe and "src/CMakeLists.txt" in fix.why
    # negative: the lookup outside any CUDA test, the sources named here: safe
    ok = {"CMakeLists.txt": CMAKE, "src/kern.cu": KERN, ".github/workflows/ci.yml": "on: push\n"}
    plain = run(project(tmp_path / "ok", ok))
    assert "cmake-hip:CMakeLists.txt" in fix_ids(plain, applied=True)
    assert "rocm-ci:.github/workflows/rocm.yml" in fix_ids(plain, applied=True)


HOST = """\
#include <cstdio>
#include <cuda_runtime.h>
void report() { size_t f, t; cudaMemGetInfo(&f, &t); std::printf("%zu\\n", f); }
"""


def test_host_sources_that_include_cuda_headers_get_the_compat_branch(tmp_path: Path) -> None:
    files = {"CMakeLists.txt": CMAKE, "src/kern.cu": KERN, "tools/server.cpp": HOST,
             "third_party/lib/x.cpp": HOST}  # fmt: skip
    root = project(tmp_path, files)
    run(root, apply=True, verify=False)
    host = (root / "tools/server.cpp").read_text()
    # one header where the sources meet (here the root), included by relative path
    assert '#include "../gpuport_hip_compat.h"' in host
    assert "#else\n#include <cuda_runtime.h>\n#endif" in host  # nvcc/g++ keep the original
    assert (root / "third_party/lib/x.cpp").read_text() == HOST  # not the project's own
    compat = (root / "gpuport_hip_compat.h").read_text()
    assert "#define cudaMemGetInfo hipMemGetInfo" in compat
    shim = (root / "cmake/gpuport_hip.cmake").read_text()
    assert "if(CMAKE_VERSION VERSION_LESS 3.21)" in shim  # HIP as a language needs 3.21
    assert shim.index("VERSION_LESS 3.21") < shim.index("enable_language(HIP)")
    assert run(root).files == []


def test_project_with_cuda_language_it_cannot_read_is_left(tmp_path: Path) -> None:
    """(``tests/port/test_cmake_project.py`` has the project() calls that are rewritten.)"""
    cm = "project(demo LANGUAGES CXX ${MORE} CUDA)\nadd_library(demo src/kern.cu)\n"
    report = run(project(tmp_path, {"CMakeLists.txt": cm, "src/kern.cu": KERN}))
    assert not any(f.path == "CMakeLists.txt" for f in report.files)


GATES = """\
import torch

def use_fa3():
    return torch.cuda.get_device_capability() >= (9, 0)

def use_bf16():
    return torch.cuda.get_device_capability()[0] >= 8

def emulate():
    return torch.cuda.get_device_capability() < (9, 0)

def hopper():
    return (9, 0) <= torch.cuda.get_device_capability()
"""


def test_capability_gate_gets_a_rocm_branch_when_unsafe(tmp_path: Path) -> None:
    root = project(tmp_path, {"gates.py": GATES})
    assert run(root).files == []
    run(root, apply=True, verify=False, unsafe_fixes=True)
    text = (root / "gates.py").read_text()
    assert "(torch.cuda.get_device_capability() >= (9, 0) and torch.version.hip is None)" in text
    assert "get_device_capability()[0] >= 8\n" in text  # right on ROCm already: untouched
    # a gate whose True is the older path: ROCm must answer True (emulate, not Hopper)
    assert "(torch.cuda.get_device_capability() < (9, 0) or torch.version.hip is not None)" in text
    assert "((9, 0) <= torch.cuda.get_device_capability() and torch.version.hip is None)" in text
    second = run(root, unsafe_fixes=True)
    assert second.files == []  # idempotent


def test_nvidia_smi_display_call(tmp_path: Path) -> None:
    src = (
        'import os\nimport subprocess\nos.system("nvidia-smi")\n'
        'out = subprocess.check_output(["nvidia-smi", "-L"])\n'
    )
    root = project(tmp_path, {"info.py": src})
    report = run(root, unsafe_fixes=True)
    assert "nvidia-smi:info.py" in fix_ids(report, applied=True)
    run(root, apply=True, verify=False, unsafe_fixes=True)
    text = (root / "info.py").read_text()
    assert 'os.system(("nvidia-smi" if shutil.which("nvidia-smi") else "amd-smi"))' in text
    assert 'check_output(["nvidia-smi", "-L"])' in text  # parsed output: left to a person
    assert "import shutil" in text
    compile(text, "info.py", "exec")


def test_ci_job_for_an_extension_with_actions(tmp_path: Path) -> None:
    setup = (
        "import torch\nfrom setuptools import setup\n"
        "from torch.utils.cpp_extension import CUDAExtension\n"
        'setup(ext_modules=[CUDAExtension("k", ["k.cu"])])\n'
    )
    files = {
        "setup.py": setup,
        "k.cu": "__global__ void k() {}\n",
        ".github/workflows/ci.yml": "on: push\n",
    }
    report = run(project(tmp_path, files))
    wf = yaml.safe_load(created(report, ".github/workflows/rocm.yml"))
    job = wf["jobs"]["rocm-build"]
    run_ = job["steps"][-1]["run"]
    assert "rocm/pytorch:latest" in run_ and "pip install --no-build-isolation" in run_
    fix = next(f for f in report.fixes if f.id.startswith("rocm-ci"))
    assert fix.findings and fix.safe
    # a CI job checks; it does not count as fixing its findings
    assert report.findings_with_safe_fix < report.findings_total


def test_no_ci_job_without_actions(tmp_path: Path) -> None:
    setup = (
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        'setup(ext_modules=[CUDAExtension("k", ["k.cu"])])\n'
    )
    report = run(project(tmp_path, {"setup.py": setup, "k.cu": "__global__ void k() {}\n"}))
    assert not any(f.path.startswith(".github") for f in report.files)


def test_no_ci_job_whose_configure_cannot_reach_the_hip_build(tmp_path: Path) -> None:
    """J34 (eleventh held-out set): the CUDA lookup sits under the project's own device
    switch, which the job's configure does not pass, and libtorch is required but not in
    AMD's image: such a job fails on every push and checks nothing, so none is written."""
    actions = {".github/workflows/ci.yml": "on: push\n", "src/kern.cu": KERN}
    switch = CMAKE.replace(
        "find_package(CUDAToolkit REQUIRED)\nenable_language(CUDA)\n",
        'set(GPU_DEVICE NONE CACHE STRING "GPU")\nif(GPU_DEVICE STREQUAL "CUDA")\n'
        "  find_package(CUDAToolkit REQUIRED)\n  enable_language(CUDA)\nendif()\n",
    )
    report = run(project(tmp_path / "a", {"CMakeLists.txt": switch, **actions}))
    assert "cmake-hip:CMakeLists.txt" in fix_ids(report)
    assert not any(i.startswith("rocm-ci") for i in fix_ids(report))
    torch = CMAKE.replace(
        "find_package(CUDAToolkit", "find_package(Torch REQUIRED)\nfind_package(CUDAToolkit"
    )
    report = run(project(tmp_path / "b", {"CMakeLists.txt": torch, **actions}))
    assert not any(i.startswith("rocm-ci") for i in fix_ids(report))
    # the plain project: the job is written
    report = run(project(tmp_path / "c", {"CMakeLists.txt": CMAKE, **actions}))
    assert "rocm-ci:.github/workflows/rocm.yml" in fix_ids(report)


def test_no_compat_include_under_a_test_no_rocm_build_passes(tmp_path: Path) -> None:
    """J44 (alpaka-group/llama): includes under `#if __has_include(<cuda_runtime.h>)` (false
    on a ROCm machine) or a multi-backend library's CUDA backend switch
    (`ALPAKA_ACC_GPU_CUDA_ENABLED`; the HIP build sets the HIP one) are never compiled by a
    ROCm build: no HIP branch there. The same include outside such a block gets it."""
    helper = (
        "#if __has_include(<cuda_runtime.h>)\n#include <cuda_runtime.h>\n"
        "inline void* dev_alloc(size_t n) { void* p; cudaMalloc(&p, n); return p; }\n#endif\n"
    )
    stream = (
        "#ifdef ALPAKA_ACC_GPU_CUDA_ENABLED\n#include <cuda_runtime.h>\n#endif\nvoid sync() {}\n"
    )
    files = {"CMakeLists.txt": CMAKE, "src/kern.cu": KERN, "src/alloc.cuh": helper,
             "src/stream.cu": stream}  # fmt: skip
    report = run(project(tmp_path / "g", files))
    edited = {f.path for f in report.files if f.action != "create"}
    assert "src/kern.cu" in edited, edited  # the plain include: a HIP branch
    assert "src/alloc.cuh" not in edited and "src/stream.cu" not in edited, edited


def test_a_hip_build_of_sources_using_a_type_gated_on_a_cuda_header_is_unsafe(
    tmp_path: Path,
) -> None:
    """J44 (llama's raw-CUDA examples): viewcopy.cu allocates with `CudaMalloc`, which the
    project's header declares only `#if __has_include(<cuda_runtime.h>)`: on a ROCm machine
    the test is false, so the opt-in HIP build would not compile; not offered as safe."""
    header = (
        "#pragma once\n#if __has_include(<cuda_runtime.h>)\n#include <cuda_runtime.h>\n"
        "struct CudaMalloc { void* operator()(size_t n) const; };\n#endif\n"
        "struct Vector {};\n"
    )
    user = '#include "alloc.hpp"\n' + KERN.replace("float* d;", "CudaMalloc m; float* d;")
    files = {"CMakeLists.txt": CMAKE, "src/kern.cu": user, "src/alloc.hpp": header}
    fix = next(f for f in run(project(tmp_path / "g", files)).fixes if f.id.startswith("cmake-hip"))
    assert not fix.safe and "CudaMalloc" in fix.why and "__has_include" in fix.why, fix.why
    # a type declared outside the gate: the build is offered as before
    plain = {
        **files,
        "src/kern.cu": '#include "alloc.hpp"\n' + KERN.replace("float* d;", "Vector v; float* d;"),
    }
    fix = next(f for f in run(project(tmp_path / "p", plain)).fixes if f.id.startswith("cmake-hip"))
    assert fix.safe, fix.why
