"""Issue 30 classes taken up in session 18 from the fifteenth held-out set (J51-J55).

A ``#define X 0xffffffff`` is a full-warp mask only where a ``*_sync`` call takes it: J55
(MD-Bench) has ``NBNXN_INTERACTION_MASK_ALL``, a cluster-pair interaction bitmask kept in an
``unsigned int`` and never given to a warp call; the GP302 fix made it 64-bit on HIP. A
constant a warp call takes *and* that is used as data (``x == FULL_MASK``) is left too: there
the 64-bit value changes what the HIP build computes."""

from __future__ import annotations

from pathlib import Path

from tests.port.helpers import fix_ids, project, run

NB_H = (
    "#define NBNXN_INTERACTION_MASK_ALL 0xffffffffU\n"
    "__device__ unsigned pack(unsigned bits, int i);\n"
)
DATA_MASK = """\
#include "nb.h"
__global__ void k(unsigned int* excl, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) excl[i] = pack(NBNXN_INTERACTION_MASK_ALL, i);
  float v = __shfl_down_sync(0xffffffff, 1.0f, 1);
  excl[0] += (unsigned)v;
}
"""

MASK_H = "#define FULL_MASK 0xffffffff\n"
WARP_MASK = """\
#include "mask.h"
__global__ void k(float* x) {
  float v = x[threadIdx.x];
  v += __shfl_down_sync(FULL_MASK, v, 16);
  x[threadIdx.x] = v;
}
"""


def _reasons(report: object) -> list[str]:
    return [u.reason for u in report.unfixed if u.finding.rule_id == "GP302"]  # type: ignore[attr-defined]


def _new_text(report: object, path: str) -> str:
    return "\n".join(
        ln
        for f in report.files  # type: ignore[attr-defined]
        if f.path == path
        for h in f.hunks
        for ln in h.lines
        if ln.startswith("+")
    )


def test_a_data_bitmask_no_warp_call_takes_stays_32_bit(tmp_path: Path) -> None:
    """Passed to a function of the project (so scan keeps its GP302: it cannot tell), but to
    no warp call: left, with the reason."""
    report = run(project(tmp_path, {"src/nb.cu": DATA_MASK, "src/nb.h": NB_H}))
    assert "NBNXN_INTERACTION_MASK_ALL GPUPORT_FULL_MASK" not in _new_text(report, "src/nb.h")
    added = _new_text(report, "src/nb.cu")
    # the literal mask of the real warp call is still widened
    assert "__shfl_down_sync(GPUPORT_FULL_MASK, 1.0f, 1)" in added, added
    assert any("NBNXN_INTERACTION_MASK_ALL is passed to no *_sync" in r for r in _reasons(report))


def test_a_warp_mask_also_used_as_data_stays_32_bit(tmp_path: Path) -> None:
    mixed = WARP_MASK.replace(
        "  x[threadIdx.x] = v;\n",
        "  unsigned m = __activemask();\n  if (m == FULL_MASK) x[threadIdx.x] = v;\n",
    )
    report = run(project(tmp_path, {"k.cu": mixed, "mask.h": MASK_H}))
    assert "FULL_MASK GPUPORT_FULL_MASK" not in _new_text(report, "mask.h")
    assert any("FULL_MASK is also used as data (k.cu:6)" in r for r in _reasons(report))


def test_a_mask_only_warp_calls_take_is_still_widened(tmp_path: Path) -> None:
    report = run(project(tmp_path, {"k.cu": WARP_MASK, "mask.h": MASK_H}))
    assert "full-mask:mask.h" in fix_ids(report)
    assert "#define FULL_MASK GPUPORT_FULL_MASK" in _new_text(report, "mask.h")


# --- CMake builds (J51, VisionPilot) --------------------------------------------------------

_CMAKE = """\
cmake_minimum_required(VERSION 3.21)
project(app CXX)
find_package(CUDAToolkit REQUIRED)
enable_language(CUDA)
add_library(kern src/kern.cu)
"""
_BLAS = """\
#include <cuda_runtime.h>
#include <cublas_v2.h>
__global__ void k(float* x) { x[threadIdx.x] = 0; }
void run(float* x) { cublasHandle_t h; cublasCreate(&h); k<<<1, 32>>>(x); }
"""


# --- a CUDA lookup that serves TensorRT (J51, VisionPilot) ----------------------------------

_TRT = """\
cmake_minimum_required(VERSION 3.21)
project(models CXX)
find_package(CUDA REQUIRED)
find_library(TENSORRT_LIBRARY nvinfer)
if(NOT TENSORRT_LIBRARY)
    message(FATAL_ERROR "Failed to find TensorRT.")
endif()
add_library(models src/kern.cu src/trt_backend.cpp)
target_link_libraries(models ${TENSORRT_LIBRARY} ${CUDA_LIBRARIES})
"""


def test_no_hip_branch_for_a_build_that_links_tensorrt(tmp_path: Path) -> None:
    files = {"CMakeLists.txt": _TRT, "src/kern.cu": _BLAS, "src/trt_backend.cpp": "int x;\n"}
    for unsafe in (False, True):
        report = run(project(tmp_path, files), unsafe_fixes=unsafe)
        assert not any(i.startswith(("cmake-hip:", "hip-compat:")) for i in fix_ids(report))
        reasons = [u.reason for u in report.unfixed if u.finding.rule_id == "GP401"]
        assert reasons and "requires TensorRT (message(FATAL_ERROR" in reasons[0], reasons
    # a REQUIRED lookup refuses it too
    req = _TRT.replace("find_library(TENSORRT_LIBRARY nvinfer)", "find_package(TensorRT REQUIRED)")
    req = req.replace('    message(FATAL_ERROR "Failed to find TensorRT.")\n', "")
    report = run(project(tmp_path / "r", {**files, "CMakeLists.txt": req}))
    assert not any(i.startswith("cmake-hip:") for i in fix_ids(report))
    # an optional TensorRT (found if present: HOT-Step-CPP, H2), or one named in a comment only,
    # does not refuse the branch
    optional = _TRT.replace('    message(FATAL_ERROR "Failed to find TensorRT.")\n', "")
    commented = optional.replace("find_library(TENSORRT_LIBRARY nvinfer)", "# TensorRT REQUIRED")
    for name, text in (("o", optional), ("c", commented)):
        report = run(project(tmp_path / name, {**files, "CMakeLists.txt": text}), unsafe_fixes=True)
        assert "cmake-hip:CMakeLists.txt" in fix_ids(report), name


def test_a_source_outside_the_cmake_folder_makes_the_hip_build_unsafe(tmp_path: Path) -> None:
    """J51's visualization/: a .cu named through ../ gets no compatibility include (that
    header reaches the sources under the CMake file's folder), so the HIP build would not
    compile it: not a safe fix, and neither is the header."""
    cmake = _CMAKE.replace("add_library(kern src/kern.cu)", "add_library(kern ../common/k.cu)")
    files = {"app/CMakeLists.txt": cmake, "common/k.cu": KERN_PLAIN, "app/src/a.cu": KERN_PLAIN}
    report = run(project(tmp_path, files))
    fix = next(f for f in report.fixes if f.id == "cmake-hip:app/CMakeLists.txt")
    assert not fix.safe and "compiles ../common/k.cu, outside its folder" in fix.why


KERN_PLAIN = """\
#include <cuda_runtime.h>
__global__ void k(float* x) { x[threadIdx.x] = 0; }
void launch(float* x) { k<<<1, 32>>>(x); cudaDeviceSynchronize(); }
"""


def test_a_cuda_header_hip_does_not_ship_makes_the_hip_build_unsafe(tmp_path: Path) -> None:
    """J46 (mcx, fresh13): ``mcx_utils.h`` includes ``<vector_types.h>``, which ROCm does not
    ship and the compatibility header does not map, so the opt-in HIP build stops there: not a
    safe fix, the include named. Inside a conditional (which side HIP takes is not read) or
    a project file of that name: the branch stays safe."""
    kern = '#include "utils.h"\n' + KERN_PLAIN
    utils = (
        "#ifndef UTILS_H\n#define UTILS_H\n#include <stdio.h>\n#include <vector_types.h>\n#endif\n"
    )
    files = {"CMakeLists.txt": _CMAKE, "src/kern.cu": kern, "src/utils.h": utils}
    fix = next(f for f in run(project(tmp_path / "a", files)).fixes if f.id.startswith("cmake-hip"))
    assert not fix.safe and "src/utils.h:4 includes <vector_types.h>" in fix.why, fix.why
    guarded = utils.replace(
        "#include <vector_types.h>\n", "#ifdef __CUDACC__\n#include <vector_types.h>\n#endif\n"
    )
    root = project(tmp_path / "g", {**files, "src/utils.h": guarded})
    assert next(f for f in run(root).fixes if f.id.startswith("cmake-hip")).safe
    own = {**files, "src/vector_types.h": "typedef struct { float x, y; } float2_t;\n"}
    assert next(
        f for f in run(project(tmp_path / "o", own)).fixes if f.id.startswith("cmake-hip")
    ).safe
