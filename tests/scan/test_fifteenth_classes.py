"""Issue 24, fifteenth sample's classes (development data since its after run), each with the
case that must stay as it was:

* a source compiled once per backend with ``-D ARCH_<backend>`` (taichi's LLVM runtime:
  ``#if ARCH_cuda`` PTX beside ``#elif ARCH_amdgpu``): the CUDA branch is not ROCm's;
* one backend folder's build file included by a variable (TeaLeaf's
  ``src/${MODEL}/model.cmake``): the HIP folder's file is a route, the CUDA one's not read;
* a build flag's help string (``"Path to the CUDA nvcc compiler"``) is no nvcc call;
* a CMake ``function()`` whose only call is commented out never runs.
"""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from gpuport.scan.model import ScanReport
from tests.scan.project_files import scan_files


def _core(report: ScanReport, rule: str) -> list[tuple[str, int | None]]:
    """(file, line) of the blocker/major findings of ``rule`` still counted as core."""
    return [
        (f.location.path, f.location.line)
        for f in report.findings
        if f.rule_id == rule
        and f.severity in (Severity.BLOCKER, Severity.MAJOR)
        and f.scope == "core"
    ]


_RUNTIME = """\
#if ARCH_cuda
__device__ void stop() { asm("exit;"); }
#elif ARCH_amdgpu
__device__ void stop() { __builtin_amdgcn_endpgm(); }
#endif

#if ARCH_cuda
__device__ unsigned mask() { unsigned m; asm volatile("activemask.b32 %0;" : "=r"(m)); return m; }
#else
__device__ unsigned mask() { return 0; }
#endif
"""
_PER_ARCH_CMAKE = """\
cmake_minimum_required(VERSION 3.18)
project(rt CXX)
foreach(arch IN LISTS ARCHS)
  add_custom_command(OUTPUT runtime_${arch}.bc
    COMMAND ${CLANG} -c runtime.cpp -emit-llvm -D "ARCH_${arch}")
endforeach()
"""


def test_a_per_backend_arch_macro_branch_is_not_rocms(tmp_path: Path) -> None:
    files = {"CMakeLists.txt": _PER_ARCH_CMAKE, "runtime.cpp": _RUNTIME}
    assert _core(scan_files(tmp_path / "a", files), "GP301") == []
    # no AMD backend named anywhere: ARCH_cuda is just a switch; its PTX stays a blocker
    cuda_only = _RUNTIME.replace("#elif ARCH_amdgpu", "#elif ARCH_x64")
    found = _core(scan_files(tmp_path / "b", {**files, "runtime.cpp": cuda_only}), "GP301")
    assert ("runtime.cpp", 2) in found and ("runtime.cpp", 8) in found


_TOP = """\
cmake_minimum_required(VERSION 3.18)
project(app CXX)
macro(load_model MODEL)
  string(TOLOWER "${MODEL}" MODEL_LOWER)
  set(MODEL_FILE ${CMAKE_CURRENT_SOURCE_DIR}/src/${MODEL_LOWER}/model.cmake)
  include(${MODEL_FILE})
endmacro()
load_model(${MODEL})
setup()
"""
_CUDA_MODEL = """\
macro(setup)
  enable_language(CUDA)
  set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} -arch=sm_70 --use_fast_math")
endmacro()
"""
_HIP_MODEL = "macro(setup)\n  set(CMAKE_CXX_STANDARD 17)\nendmacro()\n"
_KERNEL = "__global__ void k(float* x) { x[threadIdx.x] = 0; }\n"


def test_the_hip_model_folder_chosen_by_a_variable_is_a_route(tmp_path: Path) -> None:
    files = {
        "CMakeLists.txt": _TOP,
        "src/cuda/model.cmake": _CUDA_MODEL,
        "src/cuda/kernels.cu": _KERNEL,
        "src/hip/model.cmake": _HIP_MODEL,
        "src/hip/kernels.cpp": _KERNEL,
    }
    r = scan_files(tmp_path / "a", files)
    assert [x.path for x in r.routes if x.kind == "build"] == ["src/hip/model.cmake"]
    cuda_file = [f for f in r.findings if f.location.path == "src/cuda/model.cmake"]
    assert cuda_file and all(f.scope != "core" or f.severity is Severity.INFO for f in cuda_file)
    assert all("src/hip/model.cmake is the HIP one" in (f.not_built or "") for f in cuda_file)
    # the same folders, but the build includes the CUDA file by name: it is read, no route
    named = _TOP.replace("src/${MODEL_LOWER}/model.cmake", "src/cuda/model.cmake")
    r = scan_files(tmp_path / "b", {**files, "CMakeLists.txt": named})
    assert not [x for x in r.routes if x.kind == "build"]
    assert _core(r, "GP402") or _core(r, "GP403") or _core(r, "GP401")
    # chosen by a variable, but no HIP folder to choose: nothing changes
    no_hip = {k: v for k, v in files.items() if not k.startswith("src/hip/")}
    r = scan_files(tmp_path / "c", no_hip)
    assert not [x for x in r.routes if x.kind == "build"]
    assert _core(r, "GP402") or _core(r, "GP403") or _core(r, "GP401")


_HELP = """\
cmake_minimum_required(VERSION 3.18)
project(app CXX CUDA)
register_flag_required(CMAKE_CUDA_COMPILER
        "Path to the CUDA nvcc compiler")
register_flag_required(CUDA_ARCH
        "Nvidia architecture, will be passed in via `-arch=` (e.g `sm_70`) for nvcc")
"""
_RUN = """\
cmake_minimum_required(VERSION 3.18)
project(app CXX CUDA)
add_custom_target(k ALL
  COMMAND sh -c "nvcc -arch=sm_70 -c k.cu -o k.o && echo the build is done")
"""


def test_a_help_string_is_no_nvcc_call(tmp_path: Path) -> None:
    r = scan_files(tmp_path / "a", {"CMakeLists.txt": _HELP, "k.cu": _KERNEL})
    # line 3 asks for CMAKE_CUDA_COMPILER (the build wants nvcc); 4 and 6 are help strings
    assert _core(r, "GP408") == [("CMakeLists.txt", 3)] and _core(r, "GP403") == []
    # running text after a bare option runs: `sh -c "nvcc -arch=sm_70 ... the build is done"`
    r = scan_files(tmp_path / "b", {"CMakeLists.txt": _RUN, "k.cu": _KERNEL})
    assert ("CMakeLists.txt", 4) in _core(r, "GP402")  # nvcc, -arch, sm_70: one construct


_UNCALLED = """\
cmake_minimum_required(VERSION 3.18)
project(rt CXX)
function(COMPILE_CUSTOM_CUDA_LIBRARY)
  add_custom_command(OUTPUT lib.bc
    COMMAND ${CLANG} -c lib.cu --cuda-gpu-arch=sm_60 -emit-llvm)
endfunction()
# COMPILE_CUSTOM_CUDA_LIBRARY()
"""


def test_a_function_nothing_calls_never_runs(tmp_path: Path) -> None:
    files = {"CMakeLists.txt": _UNCALLED, "lib.cu": _KERNEL}
    assert _core(scan_files(tmp_path / "a", files), "GP403") == []
    called = _UNCALLED.replace("# COMPILE", "compile")  # CMake names are case-insensitive
    assert ("CMakeLists.txt", 5) in _core(
        scan_files(tmp_path / "b", {**files, "CMakeLists.txt": called}), "GP403"
    )
    # called by a computed name: whether it runs cannot be read
    dynamic = _UNCALLED + "cmake_language(CALL ${WHICH})\n"
    assert ("CMakeLists.txt", 5) in _core(
        scan_files(tmp_path / "c", {**files, "CMakeLists.txt": dynamic}), "GP403"
    )


_ROCM_IMAGE = """\
ARG BASE_IMAGE=rocm/pytorch:rocm7.2_ubuntu24.04_py3.12_pytorch_release_2.7.1
FROM ${BASE_IMAGE}
WORKDIR /app
COPY . /app
RUN pip install -e . && \\
    pip install -r requirements/deepspeed.txt -r requirements/metrics.txt
"""
_FEATURES = {
    "pyproject.toml": '[project]\nname = "app"\nversion = "1"\ndependencies = ["numpy"]\n',
    "app/__init__.py": "import torch\nx = torch.zeros(1).cuda()\n",
    "requirements/deepspeed.txt": "deepspeed\n",
    "requirements/metrics.txt": "-r common.txt\nnltk\n",
    "requirements/common.txt": "hqq\n",
    "requirements/hqq.txt": "hqq\n",
}


def _hqq(report: ScanReport) -> dict[str, tuple[Severity, str]]:
    """HQQ (GP103, major: its optional CUDA kernels) by requirements file."""
    return {
        f.location.path: (f.severity, f.scope)
        for f in report.findings
        if f.rule_id == "GP103" and f.message.startswith("hqq")
    }


def test_feature_requirement_files_the_rocm_image_leaves_out(tmp_path: Path) -> None:
    files = {**_FEATURES, "docker/docker-rocm/Dockerfile": _ROCM_IMAGE}
    r = scan_files(tmp_path / "a", files)
    # FROM ${BASE_IMAGE} with a ROCm default is the route's image
    assert [x.path for x in r.routes if x.kind == "docker"] == ["docker/docker-rocm/Dockerfile"]
    got = _hqq(r)
    assert got["requirements/hqq.txt"] == (Severity.INFO, "extra")
    # included (-r) by a file the image installs: installed, so it stays a blocker
    assert got["requirements/common.txt"][0] is Severity.MAJOR
    # the package manifest reads the file: every install has it
    reads = '[tool.setuptools.dynamic]\ndependencies = {file = ["requirements/hqq.txt"]}\n'
    r = scan_files(tmp_path / "b", {**files, "pyproject.toml": _FEATURES["pyproject.toml"] + reads})
    assert _hqq(r)["requirements/hqq.txt"][0] is Severity.MAJOR
    # an image that installs no file of the folder says nothing about it
    plain = _ROCM_IMAGE.replace("requirements/deepspeed.txt -r requirements/metrics.txt", "x.txt")
    r = scan_files(tmp_path / "c", {**files, "docker/docker-rocm/Dockerfile": plain})
    assert _hqq(r)["requirements/hqq.txt"][0] is Severity.MAJOR


def test_an_arg_default_that_is_not_rocm_is_no_route(tmp_path: Path) -> None:
    cuda = _ROCM_IMAGE.replace(
        "rocm/pytorch:rocm7.2_ubuntu24.04_py3.12_pytorch_release_2.7.1", "pytorch/pytorch:2.7.1"
    )
    r = scan_files(tmp_path / "a", {**_FEATURES, "docker/Dockerfile": cuda})
    assert not [x for x in r.routes if x.kind == "docker"]
    assert _hqq(r)["requirements/hqq.txt"][0] is Severity.MAJOR
