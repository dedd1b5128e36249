"""Issue 24, thirteenth sample (jittor ``getitem_op.cc:205``): ``1 << tid`` in a host function
that numbers grid/block dimensions is no lane bit; the same shift in device code, or in a
device lambda written inside a host function, still is (GP307)."""

from __future__ import annotations

from pathlib import Path

from tests.scan.project_files import scan_files

_CU = """\
#include <cuda_runtime.h>
void launch_dims(int* tdims, int n) {
  for (int tid = 0; tid < 3; tid++) {
    int mask = 1 << tid;
    tdims[tid] = mask;
  }
}
__device__ unsigned lane_bit(int lane) {
  unsigned bit = 1u << lane;
  return bit;
}
void with_lambda(int* out) {
  auto f = [=] __device__ (int lane) { unsigned b = 1u << lane; out[0] = b; };
}
"""


def test_a_shift_in_host_launch_code_is_no_lane_bit(tmp_path: Path) -> None:
    r = scan_files(tmp_path, {"k.cu": _CU})
    lines = {f.location.line for f in r.findings if f.rule_id == "GP307"}
    assert 4 not in lines  # host code: tid numbers grid dimensions
    assert {9, 13} <= lines  # device code and a device lambda in a host function
