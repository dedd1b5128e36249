"""Full-warp masks are not widened in a kernel launched with blocks that leave lanes of a
64-lane wavefront empty.

HIP's ``*_sync`` mask check compares the mask with the lanes that run the call: in a 32-thread
block on a CDNA wavefront (64 lanes) the upper 32 lanes do not exist, so a 64-bit full mask
traps with no branch at all (ggml launches its reductions with ``block_dims(WARP_SIZE, 1, 1)``:
port D6). A block of ``x * y * z`` threads that is a whole number of wavefronts is fine; a size
that is unknown and made from a 32 is refused; one unknown and not made from a 32 is not.
Session 14, the launch class.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.port.helpers import fix_ids, project, run

HELPER = """\
#pragma once
#define WARP_SIZE 32
static __device__ __forceinline__ float warp_reduce_sum(float x) {
#pragma unroll
  for (int mask = 16; mask > 0; mask >>= 1) {
    x += __shfl_xor_sync(0xffffffff, x, mask, 32);
  }
  return x;
}
"""

KERNEL = """\
#include "common.cuh"
static __global__ void norm_f32(const float* x, float* dst, const int ncols) {
  const int row = blockIdx.x * blockDim.y + threadIdx.y;
  float tmp = 0.0f;
  for (int col = threadIdx.x; col < ncols; col += WARP_SIZE) tmp += x[row * ncols + col];
  tmp = warp_reduce_sum(tmp);
  dst[row] = tmp;
}

static void norm_f32_cuda(const float* x, float* dst, const int ncols, const int nrows,
                          cudaStream_t stream) {
  LAUNCH
}
"""


def _kernel(launch: str) -> str:
    return KERNEL.replace("  LAUNCH\n", launch)


def _reasons(report: object, path: str) -> list[str]:
    return [u.reason for u in report.unfixed if u.finding.path == path]  # type: ignore[attr-defined]


NARROW = {
    "a warp-size constant equal to 32": (
        "  const dim3 block_dims(WARP_SIZE, 1, 1);\n"
        "  norm_f32<<<nrows, block_dims, 0, stream>>>(x, dst, ncols);\n",
        "`norm_f32` is launched at k.cu:13 with `block_dims`",
        "32 threads",
    ),
    "a literal 32": (
        "  norm_f32<<<nrows, 32, 0, stream>>>(x, dst, ncols);\n",
        "with `32` threads per block",
        "32 threads",
    ),
    "a 2-D block of 96 threads": (
        "  dim3 block(32, 3);\n  norm_f32<<<nrows, block>>>(x, dst, ncols);\n",
        "with `block`",
        "96 threads, not whole 64-lane wavefronts",
    ),
    "an unknown size made from a 32": (
        "  const int ny = 2 / K_QUANTS_PER_ITERATION;\n"
        "  const dim3 block_nums(1, nrows / ny, 1);\n"
        "  const dim3 block_dims(32, ny, 1);\n"
        "  norm_f32<<<block_nums, block_dims, 0, stream>>>(x, dst, ncols);\n",
        "`(32, ny, 1)`",
        "made from a 32, its size unknown",
    ),
    "a pointer to the kernel": (
        "  auto kernel = &norm_f32;\n  kernel<<<nrows, WARP_SIZE, 0, stream>>>(x, dst, ncols);\n",
        "`norm_f32` is launched at k.cu:13 with `WARP_SIZE`",
        "32 threads",
    ),
    "hipLaunchKernelGGL with WARP_SIZE": (
        "  hipLaunchKernelGGL(norm_f32, dim3(nrows), dim3(WARP_SIZE), 0, stream, x, dst, ncols);\n",
        "`norm_f32` is launched at k.cu:12",
        "32 threads",
    ),
}


@pytest.mark.parametrize("case", sorted(NARROW))
def test_a_kernel_launched_narrower_than_a_wavefront_keeps_its_masks(
    tmp_path: Path, case: str
) -> None:
    launch, where, size = NARROW[case]
    root = project(tmp_path, {"common.cuh": HELPER, "k.cu": _kernel(launch)})
    report = run(root, apply=True, verify=False)
    assert "full-mask:common.cuh" not in fix_ids(report)
    assert (root / "common.cuh").read_text() == HELPER
    reasons = _reasons(report, "common.cuh")
    assert reasons, report.unfixed
    assert any(
        r.startswith("full mask left 32-bit: the call at common.cuh:6 may run on some lanes")
        and where in r
        and size in r
        for r in reasons
    ), reasons


WIDE = {
    "a 2-D block of 32 x 4": "  dim3 block(32, 4);\n  norm_f32<<<nrows, block>>>(x, dst, ncols);\n",
    "WARP_SIZE x 4 warps": (
        "  const dim3 block_dims(WARP_SIZE, 4, 1);\n"
        "  norm_f32<<<nrows, block_dims, 0, stream>>>(x, dst, ncols);\n"
    ),
    "256 threads": "  norm_f32<<<nrows, 256, 0, stream>>>(x, dst, ncols);\n",
    "a size from the caller": (
        "  const int threads = std::min(nrows, 1024);\n"
        "  norm_f32<<<nrows, threads, 0, stream>>>(x, dst, ncols);\n"
    ),
}


@pytest.mark.parametrize("case", sorted(WIDE))
def test_a_kernel_launched_with_whole_wavefronts_or_unknown_sizes_gets_the_mask(
    tmp_path: Path, case: str
) -> None:
    """Negative: whole wavefronts (``x * y * z`` counted), and a size that is not known and
    not made from a 32, keep today's widening."""
    root = project(tmp_path, {"common.cuh": HELPER, "k.cu": _kernel(WIDE[case])})
    report = run(root, apply=True, verify=False)
    assert "full-mask:common.cuh" in fix_ids(report, applied=True)
    assert "__shfl_xor_sync(GPUPORT_FULL_MASK, x, mask, 32)" in (root / "common.cuh").read_text()


def test_only_the_kernels_that_run_the_call_count(tmp_path: Path) -> None:
    """A 32-thread launch of another kernel does not stop this one's mask; a macro helper
    and a named mask are judged by the kernels that use them."""
    other = (
        '#include "common.cuh"\n'
        '#include "mask.h"\n'
        "__global__ void fill(float* y) { y[threadIdx.x] = 0.0f; }\n"
        "#define RED(v) do { v += __shfl_xor_sync(0xffffffff, v, 16); } while (0)\n"
        "__device__ float red2(float v) { return v + __shfl_down_sync(FULL_MASK, v, 1); }\n"
        "__global__ void twice(float* y) { float v = y[threadIdx.x]; RED(v); y[0] = red2(v); }\n"
        "void go(float* y, int n) {\n"
        "  fill<<<n, 32>>>(y);\n"
        "  twice<float><<<n, WARP_SIZE>>>(y);\n"
        "}\n"
    )
    mask_h = "#pragma once\n#define FULL_MASK 0xffffffff\n"
    root = project(
        tmp_path,
        {
            "common.cuh": HELPER,
            "k.cu": _kernel("  norm_f32<<<nrows, 128, 0, stream>>>(x, dst, ncols);\n"),
            "other.cu": other,
            "mask.h": mask_h,
        },
    )
    report = run(root, apply=True, verify=False)
    assert "full-mask:common.cuh" in fix_ids(report, applied=True)
    assert "full-mask:other.cu" not in fix_ids(report)
    assert "full-mask:mask.h" not in fix_ids(report)
    assert (root / "mask.h").read_text() == mask_h
    launched = "`twice` is launched at other.cu:9 with `WARP_SIZE` threads per block"
    macro = _reasons(report, "other.cu")
    assert any("the call at other.cu:4" in r and launched in r for r in macro), macro
    named = _reasons(report, "mask.h")
    assert any(
        "FULL_MASK is the mask of the call at other.cu:5" in r and launched in r for r in named
    ), named
