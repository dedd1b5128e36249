"""Issue 24 classes taken up in session 20 (the twenty-sixth held-out sample, MegEngine).

* ARM NEON inline assembly (``vadd.f16`` with ``"w"`` operands) read as a PTX video
  instruction: PTX's operand constraints are only ``h r l f d n C``, so an asm statement with
  any other operand constraint is host assembly (``scan.rules.native.ptx_text``).
* "Replace or drop" items for NVIDIA-only CUTLASS folders the ROCm build already leaves out
  (``dnn/src/cuda/rng/`` beside the ``dnn/src/rocm/rng/`` the ROCm build compiles), and a
  folder counted as "built on CUTLASS" only because a project-wide utility header it includes
  names ``cutlass::Status`` in an error-check macro (``scan.project.cutlass_folders``)."""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from tests.scan.project_files import write

_NEON = """\
#include <arm_neon.h>
inline float16x8_t vaddq_fix_f16(float16x8_t a, float16x8_t b) {
    float16x8_t ret;
    asm volatile("vadd.f16 %0, %1, %2\\n" : "+w"(ret) : "w"(a), "w"(b));
    return ret;
}
"""
_PTX = """\
__device__ unsigned vid(unsigned a, unsigned b) {
    unsigned r;
    asm("vadd.u32.u32.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ void st(__int128_t* p, __int128_t v) {
    asm volatile("st.shared.b128 [%0], %1;" :: "l"(p), "q"(v));
}
"""


def _gp301_lines(root: Path) -> list[tuple[str, int | None]]:
    report = scan_path(root, ScanOptions(jobs=1))
    return [(f.location.path, f.location.line) for f in report.findings if f.rule_id == "GP301"]


def test_arm_neon_asm_is_not_inline_ptx_but_a_ptx_video_instruction_is(tmp_path: Path) -> None:
    root = write(tmp_path, {"neon.h": _NEON, "k.cu": _PTX + '#include "neon.h"\n'})
    # the 128-bit "q" operand is PTX's too (DeepGEMM's st_shared)
    assert _gp301_lines(root) == [("k.cu", 3), ("k.cu", 7)]


_CMAKE = """\
cmake_minimum_required(VERSION 3.18)
project(m LANGUAGES CXX)
option(M_WITH_CUDA "cuda" ON)
option(M_WITH_ROCM "rocm" OFF)
if(M_WITH_CUDA)
  enable_language(CUDA)
  file(GLOB_RECURSE SRCS src/cuda/*.cpp src/cuda/*.cu)
  add_library(m ${SRCS})
endif()
if(M_WITH_ROCM)
  find_package(hip REQUIRED)
  file(GLOB_RECURSE SRCS src/rocm/*.cpp)
  add_library(m ${SRCS})
  target_link_libraries(m hip::device)
endif()
"""
_UTILS = """\
#pragma once
#include "cutlass/cutlass.h"
#define check(x) \\
  do { cutlass::Status e = (x); if (e != cutlass::Status::kSuccess) abort(); } while (0)
"""
_GEMM = """\
#include "cutlass/gemm/device/gemm.h"
using G = cutlass::gemm::device::Gemm<float, cutlass::layout::RowMajor, float,
    cutlass::layout::RowMajor, float, cutlass::layout::RowMajor>;
__global__ void {n}_k(float* x) {{ x[threadIdx.x] = 0.f; }}
"""
_RNG = '#include "../utils.cuh"\n__global__ void {n}_k(float* x) {{ x[threadIdx.x] = 0.f; }}\n'


def _components(report: object) -> list[str]:
    return [i.title for i in report.effort.basis if i.rule_id == "component"]  # type: ignore[attr-defined]


def test_no_replace_or_drop_for_cuda_folders_the_rocm_build_leaves_out(tmp_path: Path) -> None:
    files = {"CMakeLists.txt": _CMAKE, "src/cuda/utils.cuh": _UTILS}
    files["README.md"] = "# m\n\nBuild for AMD GPUs: `cmake -DM_WITH_ROCM=ON -DM_WITH_CUDA=OFF`\n"
    for n in ("a", "b", "c"):
        files[f"src/cuda/rng/{n}.cu"] = _RNG.format(n=n)
        files[f"src/rocm/rng/{n}.cpp"] = "#include <hip/hip_runtime.h>\n" + _RNG.format(n=n)[22:]
        files[f"src/cuda/gemm/{n}.cu"] = _GEMM.format(n=n)
    report = scan_path(write(tmp_path, files), ScanOptions(jobs=1))
    assert "src/cuda/rng/a.cu" in report.not_built
    assert _components(report) == [], _components(report)


def test_a_utility_header_naming_cutlass_does_not_make_its_includers_a_component(
    tmp_path: Path,
) -> None:
    files = {"common/utils.cuh": _UTILS}
    for n in ("a", "b", "c"):
        files[f"ops/rng/{n}.cu"] = '#include "../../common/utils.cuh"\n' + _RNG.format(n=n)[22:]
        files[f"ops/gemm/{n}.cu"] = _GEMM.format(n=n)
    report = scan_path(write(tmp_path, files), ScanOptions(jobs=1))
    paths = [c.path for c in report.components if c.nvidia_only]
    assert paths == ["ops/gemm"], paths


# The twenty-seventh sample: LC-framework defines its warp size from the wavefront size
# (`#if defined(__AMDGCN_WAVEFRONT_SIZE) && (__AMDGCN_WAVEFRONT_SIZE == 64)` / `#define WS 64`
# / `#else` / `#define WS 32`) and writes both sides of `#if defined(WS) && (WS == 64)`; ggml
# defines AMD_MFMA_AVAILABLE only in a HIP branch. A conditional on such a macro is a ROCm
# test: its branches are judged as the ROCm branches they are.
_WS = """\
#if defined(__AMDGCN_WAVEFRONT_SIZE) && (__AMDGCN_WAVEFRONT_SIZE == 64)
#define WS 64
#else
#define WS 32
#endif
"""
_SUM = """\
#include "ws.h"
__global__ void k(float* out, const float* in) {
  float v = in[threadIdx.x];
#if defined(WS) && (WS == 64)
  for (int o = 32; o > 0; o /= 2) v += __shfl_xor(v, o);
#else
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);
#endif
  if (threadIdx.x % WS == 0) out[blockIdx.x] = v;
}
"""


def _core(root: Path) -> list[tuple[str, str, int | None]]:
    report = scan_path(root, ScanOptions(jobs=1))
    return [
        (f.rule_id, f.location.path, f.location.line)
        for f in report.findings
        if f.severity.value in ("blocker", "major")
    ]


def test_a_conditional_on_a_macro_defined_from_the_wavefront_size_is_a_rocm_test(
    tmp_path: Path,
) -> None:
    assert _core(write(tmp_path / "ws", {"ws.h": _WS, "k.cu": _SUM})) == []
    # the same macro defined plainly (32 everywhere) is no ROCm test: the 32-lane side counts
    plain = write(tmp_path / "plain", {"ws.h": "#define WS 32\n", "k.cu": _SUM})
    assert ("GP302", "k.cu", 7) in _core(plain)
    # and one a build file defines is not either
    cmake = "project(k LANGUAGES CXX CUDA)\nadd_compile_definitions(WS=32)\nadd_library(k k.cu)\n"
    built = write(tmp_path / "built", {"ws.h": _WS, "k.cu": _SUM, "CMakeLists.txt": cmake})
    assert ("GP302", "k.cu", 7) in _core(built)
