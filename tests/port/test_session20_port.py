"""Issue 30 classes taken up in session 20.

F2 (AutoAWQ_kernels #5) was not idempotent since session 17: the scan folds a shuffle's
width finding (GP305) into the 32-bit mask finding (GP302) of the same call, so the first run
took only the full-mask fix; the second run, with the mask fixed and the width no longer
folded, proposed the safe wave64 width. The first run now takes the folded width too."""

from __future__ import annotations

from pathlib import Path

from gpuport.port import PortOptions, port_path
from tests.port.helpers import fix_ids, project, run

_KERNEL = """\
#include <cuda_runtime.h>
#define WARP_SIZE 32

template <int WARPS_PER_BLOCK>
__device__ float block_sum(float* red_smem, float sum) {
  int warp = threadIdx.x / WARP_SIZE;
  int lane = threadIdx.x % WARP_SIZE;
  for (int mask = WARP_SIZE / 2; mask >= 1; mask /= 2) {
    sum += __shfl_xor_sync(0xffffffff, sum, mask);
  }
  if (lane == 0) red_smem[warp] = sum;
  __syncthreads();
  if (lane < WARPS_PER_BLOCK) sum = red_smem[lane];
  for (int mask = WARPS_PER_BLOCK / 2; mask >= 1; mask /= 2) {
    sum += __shfl_xor_sync(0xffffffff, sum, mask);
  }
  return __shfl_sync(0xffffffff, sum, 0);
}

__global__ void k(float* out, const float* in) {
  __shared__ float red[4];
  out[blockIdx.x] = block_sum<4>(red, in[threadIdx.x]);
}
"""
_MAKE = "all: k.o\nk.o: k.cu\n\tnvcc -c k.cu -o k.o\n"


def test_a_broadcast_whose_mask_is_fixed_gets_its_width_in_the_same_run(tmp_path: Path) -> None:
    root = project(tmp_path / "p", {"k.cu": _KERNEL, "Makefile": _MAKE})
    first = run(root)
    applied = fix_ids(first, applied=True)
    assert any(i.startswith("full-mask") for i in applied), applied
    assert "wave64-safe:k.cu" in applied, applied
    port_path(root, PortOptions(jobs=1, apply=True))
    text = (root / "k.cu").read_text()
    assert "__shfl_sync(GPUPORT_FULL_MASK, sum, 0, 32)" in text, text
    again = run(root)
    assert again.files == [], [f.path for f in again.files]
