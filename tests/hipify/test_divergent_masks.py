"""hipify (HIP >= 6.2) does not widen a full mask where the warp call may run on some lanes
only: HIP checks a ``*_sync`` mask against the lanes that run the call and traps, so the
32-bit mask is left (the HIP build stops at it, as before) and listed with the reason.
Session 14 (J31's reduction tail)."""

from __future__ import annotations

from pathlib import Path

from gpuport.hipify.run import hipify_path
from gpuport.hipify.translate import LEFT_32, translate

TAIL = """\
__global__ void k(float* y) {
  float v = y[threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  if (threadIdx.x < 32) {
    v += __shfl_down_sync(0xffffffff, v, 1);
  }
  y[threadIdx.x] = v;
}
"""


def test_a_literal_mask_in_a_lane_branch_is_left_and_listed() -> None:
    done = translate(TAIL, hip_version="6.4")
    lines = done.text.splitlines()
    assert "__shfl_xor_sync(0xffffffffffffffffull, v, o)" in done.text  # every lane: widened
    assert any("__shfl_down_sync(0xffffffff, v, 1)" in ln for ln in lines)  # the tail: left
    left = [u for u in done.unsupported if u.name == "__shfl_down_sync"]
    assert len(left) == 1 and left[0].line == 5
    assert left[0].reason.startswith(LEFT_32)
    assert "`if (threadIdx.x < 32)`" in left[0].reason


def test_below_62_the_mask_is_dropped_as_before() -> None:
    """Negative: HIP < 6.2 has no mask check; the maskless form is what runs."""
    done = translate(TAIL, hip_version="6.1", shims=False)
    assert "0xffffffff" not in done.text.replace("mask dropped", "")
    assert not [u for u in done.unsupported if u.reason.startswith(LEFT_32)]


NAMED = """\
#define FULL_MASK 0xffffffff
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
  return v;
}
__global__ void k(float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = warp_sum(y[i]);
}
"""


def test_a_named_mask_a_divergent_call_uses_is_left_in_wave64_fix() -> None:
    done = translate(NAMED, hip_version="6.4", wave64="fix")
    assert "#define FULL_MASK 0xffffffff\n" in done.text
    reasons = [w.reason for w in done.wave64_left if w.kind == "mask"]
    assert any("FULL_MASK left 32-bit" in r and "`warp_sum` is called at" in r for r in reasons)
    uniform = translate(
        NAMED.replace("  if (i >= n) return;\n", ""), hip_version="6.4", wave64="fix"
    )
    assert "#define FULL_MASK 0xffffffffffffffffull" in uniform.text


def test_a_folder_run_judges_a_header_helper_by_its_callers(tmp_path: Path) -> None:
    (tmp_path / "red.cuh").write_text(
        "__device__ float red(float v) {\n"
        "  for (int o = 4; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);\n"
        "  return v;\n}\n"
    )
    (tmp_path / "k.cu").write_text(
        '#include "red.cuh"\n'
        "__global__ void k(float* y) {\n"
        "  int lane = threadIdx.x % 32;\n"
        "  if (lane < 8) y[lane] = red(y[lane]);\n}\n"
    )
    report = hipify_path(tmp_path, hip_version="6.4", wave64="report")
    header = next(f for f in report.files if f.path == "red.cuh")
    assert "0xffffffffffffffffull" not in (header.text or "")
    assert any("`red` is called at k.cu:4" in u.reason for u in header.unsupported)
    alone = translate((tmp_path / "red.cuh").read_text(), hip_version="6.4")
    assert "0xffffffffffffffffull" in alone.text  # read alone, nothing says it diverges
