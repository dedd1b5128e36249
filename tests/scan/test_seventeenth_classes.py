"""Issue 24, seventeenth sample's classes (development data since its before run; there is no
held-out after run for them), each with the case that must stay:

* a CppExtension with CUDA sources built only ``if "CUDA_HOME" in os.environ`` (fairseq): a
  ROCm machine sets no CUDA_HOME, so the build leaves it out instead of failing (GP405 info;
  GP409, the GPU build depending on CUDA_HOME, stays);
* a warp helper with no kernel in its file that numbers its own lanes from ``threadIdx``
  (fairseq's blockReduce: ``tid / 32``, ``tid % 32``, xor shuffles 16..1) is right on a
  64-lane wavefront whoever calls it;
* a folder whose only ``add_subdirectory`` is commented out (cudpp's apps/satGL) is not built.
"""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from gpuport.scan.model import ScanReport
from tests.scan.project_files import scan_files


def _sev(report: ScanReport, rule: str) -> dict[tuple[str, int | None], Severity]:
    return {
        (f.location.path, f.location.line): f.severity for f in report.findings if f.rule_id == rule
    }


_SETUP = """\
import os
from setuptools import setup
from torch.utils import cpp_extension

extensions = [cpp_extension.CppExtension("a_cpu", sources=["a.cpp"])]
if {test}:
    extensions.append(
        cpp_extension.CppExtension("a_cuda", sources=["a_cuda.cu", "a_cuda.cpp"])
    )
setup(name="a", ext_modules=extensions, cmdclass={{"build_ext": cpp_extension.BuildExtension}})
"""
_KERNEL = "__global__ void k(float* x) { x[threadIdx.x] = 0; }\n"


def _gp405(tmp_path: Path, name: str, test: str) -> Severity:
    files = {"setup.py": _SETUP.format(test=test), "a.cpp": "int a;\n", "a_cuda.cu": _KERNEL,
             "a_cuda.cpp": "int b;\n"}  # fmt: skip
    return _sev(scan_files(tmp_path / name, files), "GP405")[("setup.py", 8)]


def test_a_cppextension_built_only_with_cuda_home_is_left_out_on_rocm(tmp_path: Path) -> None:
    assert _gp405(tmp_path, "a", '"CUDA_HOME" in os.environ') is Severity.INFO
    assert _gp405(tmp_path, "b", 'os.environ.get("CUDA_HOME")') is Severity.INFO
    # a default path, or a switch gpuport cannot read: the build may take it and fail
    assert _gp405(tmp_path, "c", 'os.getenv("CUDA_HOME", "/usr/local/cuda")') is Severity.BLOCKER
    assert _gp405(tmp_path, "d", 'os.environ.get("BUILD_EXT")') is Severity.BLOCKER


_HELPER = """\
#define SHFL_MASK 0xffffffffffffffffull
template <typename T>
__device__ T warpReduce(T data) {
  data += __shfl_xor_sync(SHFL_MASK, data, 16);
  data += __shfl_xor_sync(SHFL_MASK, data, 8);
  data += __shfl_xor_sync(SHFL_MASK, data, 4);
  data += __shfl_xor_sync(SHFL_MASK, data, 2);
  data += __shfl_xor_sync(SHFL_MASK, data, 1);
  return data;
}

template <typename T>
__device__ T blockReduce(T data) {
  static __shared__ T warpSum[32];
  const int tid = threadIdx.x;
  int wid = tid / 32;
  int lane = tid % 32;
  T sum = warpReduce(data);
  if (lane == 0) warpSum[wid] = sum;
  __syncthreads();
  T v = tid < blockDim.x / 32 ? warpSum[lane] : T(0);
  if (wid == 0) v = warpReduce(v);
  return v;
}
"""


def test_a_helper_that_numbers_its_own_lanes_is_right_whoever_calls_it(tmp_path: Path) -> None:
    r = scan_files(tmp_path / "a", {"reduce.cuh": _HELPER})
    got = _sev(r, "GP304")
    assert got and all(s is Severity.INFO for s in got.values()), got
    # the lane comes from the caller: what it means is the caller's, so the hazard stays
    given = _HELPER.replace("const int tid = threadIdx.x;", "const int tid = caller_lane;")
    given = given.replace(
        "__device__ T blockReduce(T data)", "__device__ T blockReduce(T data, int caller_lane)"
    )
    got = _sev(scan_files(tmp_path / "b", {"reduce.cuh": given}), "GP304")
    assert Severity.MAJOR in got.values(), got


_TOP = """\
cmake_minimum_required(VERSION 3.18)
project(lib CXX CUDA)
add_subdirectory(src)
{apps}
"""
_APP = "project(app CXX CUDA)\nfind_package(CUDAToolkit REQUIRED)\nadd_executable(app main.cu)\n"


def test_a_folder_whose_add_subdirectory_is_commented_out_is_not_built(tmp_path: Path) -> None:
    files = {"CMakeLists.txt": _TOP.format(apps="#add_subdirectory(apps/gl)"),
             "src/CMakeLists.txt": "add_library(lib k.cu)\n", "src/k.cu": _KERNEL,
             "apps/gl/CMakeLists.txt": _APP, "apps/gl/main.cu": _KERNEL}  # fmt: skip
    r = scan_files(tmp_path / "a", files)
    gl = [f for f in r.findings if f.location.path == "apps/gl/CMakeLists.txt"]
    assert gl and all(f.severity is Severity.INFO for f in gl)
    assert all("add_subdirectory(apps/gl) is commented out" in (f.not_built or "") for f in gl)
    # added outside the comment too (another build file): built
    live = {**files, "apps/CMakeLists.txt": "add_subdirectory(gl)\n"}
    r = scan_files(tmp_path / "b", live)
    assert Severity.MAJOR in _sev(r, "GP401").values()


def test_a_folder_another_build_compiles_is_built(tmp_path: Path) -> None:
    # QuaRot: CMake's add_subdirectory(quarot/kernels) is commented out, setup.py compiles it
    setup = (
        "from setuptools import setup\nfrom torch.utils import cpp_extension\n"
        'setup(name="q", ext_modules=[cpp_extension.CUDAExtension("q._C", '
        '["q/kernels/gemm.cu"])], cmdclass={"build_ext": cpp_extension.BuildExtension})\n'
    )
    ptx = '__device__ void f() { asm("exit;"); }\n'
    files = {"CMakeLists.txt": _TOP.format(apps="# add_subdirectory(q/kernels)"),
             "src/CMakeLists.txt": "add_library(lib k.cu)\n", "src/k.cu": _KERNEL,
             "setup.py": setup, "q/kernels/gemm.cu": ptx}  # fmt: skip
    r = scan_files(tmp_path, files)
    assert _sev(r, "GP301")[("q/kernels/gemm.cu", 1)] is Severity.BLOCKER
