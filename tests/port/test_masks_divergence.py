"""Full-warp masks are not widened where the warp call may run with only some lanes.

HIP's ``*_sync`` functions check the mask against the lanes that run the call and trap when
they differ; a 64-bit full mask in a branch that only some of a wavefront's lanes take turns
the HIP build's compile error into a run-time trap (J31: vptq's ``warpReduceSum`` called
inside ``if (landid < kBlockSize / 32)``). Session 14.
"""

from __future__ import annotations

from pathlib import Path

from gpuport.hipify.divergence import Divergence, lane_named
from gpuport.scan.cxx import lex
from tests.port.helpers import fix_ids, project, run

HELPER = """\
#pragma once
namespace cuda {
template <int WarpSize = 32>
__device__ __forceinline__ float warpReduceSum(float sum) {
  if constexpr (WarpSize >= 32) sum += __shfl_down_sync(0xffffffff, sum, 16);
  if constexpr (WarpSize >= 16) sum += __shfl_down_sync(0xffffffff, sum, 8);
  if constexpr (WarpSize >= 2) sum += __shfl_down_sync(0xffffffff, sum, 1);
  return sum;
}
}  // namespace cuda
"""

#: J31's shape: the helper is called whole-warp first, then inside a lane branch
DIVERGENT_CALLER = """\
#include "utils.cuh"
__global__ void k(const float* x, float* out) {
  __shared__ float partial[8];
  int warpid = threadIdx.x / 32;
  int landid = threadIdx.x % 32;
  float v = cuda::warpReduceSum<32>(x[threadIdx.x]);
  if (landid == 0) partial[warpid] = v;
  __syncthreads();
  if (landid < 8) {
    float s = partial[landid];
    s = cuda::warpReduceSum<8>(s);
    if (landid == 0) out[blockIdx.x] = s;
  }
}
"""

UNIFORM_CALLER = """\
#include "utils.cuh"
__global__ void k(const float* x, float* out, int n) {
  if (blockIdx.x >= n) return;
  float v = cuda::warpReduceSum<32>(x[blockIdx.x * blockDim.x + threadIdx.x]);
  if (threadIdx.x % 32 == 0) atomicAdd(out, v);
}
"""


def _reasons(report: object, path: str) -> list[str]:
    return [u.reason for u in report.unfixed if u.finding.path == path]  # type: ignore[attr-defined]


def test_a_helper_called_in_a_lane_branch_keeps_its_32_bit_masks(tmp_path: Path) -> None:
    root = project(tmp_path, {"utils.cuh": HELPER, "k.cu": DIVERGENT_CALLER})
    report = run(root, apply=True, verify=False)
    assert "full-mask:utils.cuh" not in fix_ids(report)
    assert (root / "utils.cuh").read_text() == HELPER
    reasons = _reasons(report, "utils.cuh")
    assert any(r.startswith("full mask left 32-bit: the call at utils.cuh:") for r in reasons)
    assert any("`warpReduceSum` is called at k.cu:11" in r and "landid < 8" in r for r in reasons)
    assert any("run-time trap" in r for r in reasons)


def test_the_same_helper_called_by_every_lane_gets_the_mask(tmp_path: Path) -> None:
    """Negative: a condition on the block (uniform), an ``if constexpr`` on a template
    argument and a lane test *after* the call do not make the call divergent."""
    root = project(tmp_path, {"utils.cuh": HELPER, "k.cu": UNIFORM_CALLER})
    report = run(root, apply=True, verify=False)
    assert "full-mask:utils.cuh" in fix_ids(report, applied=True)
    text = (root / "utils.cuh").read_text()
    assert text.count("__shfl_down_sync(GPUPORT_FULL_MASK, sum,") == 3


EARLY_RETURN = """\
__global__ void row_sum(const float* x, float* y, int nrows) {
  int row = blockIdx.x * blockDim.y + threadIdx.y;
  if (row >= nrows) {
    return;
  }
  float v = x[row * 32 + threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  if (threadIdx.x == 0) y[row] = v;
}

__global__ void col_sum(const float* x, float* y, int n) {
  float v = x[blockIdx.x * 32 + threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  if (threadIdx.x == 0) y[blockIdx.x] = v;
}
"""


def test_after_a_return_that_depends_on_the_thread_the_mask_stays(tmp_path: Path) -> None:
    """ggml's ``if (row >= nrows) return;`` (``row`` from ``threadIdx.y``): a wavefront of
    two 32-thread rows can lose one of them. The other kernel's mask is still widened."""
    root = project(tmp_path, {"k.cu": EARLY_RETURN})
    report = run(root, apply=True, verify=False)
    text = (root / "k.cu").read_text()
    assert "__shfl_xor_sync(0xffffffff, v, o)" in text  # row_sum: left
    assert "__shfl_xor_sync(GPUPORT_FULL_MASK, v, o)" in text  # col_sum: widened
    assert any(
        "after the `return` taken `if (row >= nrows)`" in r for r in _reasons(report, "k.cu")
    )


NAMED = {
    "mask.h": "#pragma once\n#define FULL_MASK 0xffffffff\n",
    "k.cu": """\
#include "mask.h"
__global__ void k(float* y) {
  float v = y[threadIdx.x];
  if (threadIdx.x < 32) {
    for (unsigned s = 16; s > 0; s >>= 1) v += __shfl_down_sync(FULL_MASK, v, s);
  }
  y[threadIdx.x] = v;
}
""",
}


def test_a_named_mask_any_divergent_call_uses_stays(tmp_path: Path) -> None:
    """kernel_tuner's ``if (ti < 32)`` reduction tail: on a 64-lane wavefront only half of
    wave 0 takes it. The constant (one value for every use) keeps its 32 bits."""
    root = project(tmp_path, NAMED)
    report = run(root, apply=True, verify=False)
    assert (root / "mask.h").read_text() == NAMED["mask.h"]
    reasons = _reasons(report, "mask.h")
    assert any("FULL_MASK is the mask of the call at k.cu:5" in r for r in reasons)
    assert any("`if (threadIdx.x < 32)`" in r for r in reasons)
    uniform = dict(NAMED, **{"k.cu": NAMED["k.cu"].replace("threadIdx.x < 32", "blockDim.x > 32")})
    root2 = project(tmp_path / "uniform", uniform)
    run(root2, apply=True, verify=False)
    assert "#define FULL_MASK GPUPORT_FULL_MASK" in (root2 / "mask.h").read_text()


def _why(files: dict[str, str], path: str, needle: str) -> str | None:
    lexed = {rel: lex(text) for rel, text in files.items()}
    return Divergence(lexed).why(path, files[path].index(needle))


def test_loops_break_continue_and_members() -> None:
    loop = """\
__device__ float f(const float* x, int n) {
  float v = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    v += __shfl_xor_sync(0xffffffff, x[i], 1);
  }
  for (int k = 0; k < 4; ++k) {
    int lane = threadIdx.x & 31;
    if (lane >= k) continue;
    v += __shfl_xor_sync(0xffffffff, v, 2);
  }
  for (int k = 0; k < 4; ++k) {
    switch (k) { case 0: break; default: v += 1; }
    v += __shfl_xor_sync(0xffffffff, v, 4);
  }
  return v;
}
"""
    files = {"a.cu": loop}
    assert "`for (int i = threadIdx.x;" in (
        _why(files, "a.cu", "__shfl_xor_sync(0xffffffff, x[i]") or ""
    )
    assert "after the `continue` taken" in (
        _why(files, "a.cu", "__shfl_xor_sync(0xffffffff, v, 2)") or ""
    )
    assert _why(files, "a.cu", "__shfl_xor_sync(0xffffffff, v, 4)") is None
    member = """\
struct Qk { static __device__ float dot(float a) { return __shfl_xor_sync(0xffffffff, a, 1); } };
__device__ float dot(float a, float b) { return a * b; }
__global__ void k(float* y) {
  if (threadIdx.x < 4) y[0] = dot(y[1], y[2]);
  y[3] = Qk::dot(y[4]);
}
"""
    files = {"m.cu": member}
    assert _why(files, "m.cu", "__shfl_xor_sync") is None  # the free dot is another function
    files = {"m.cu": member.replace("y[3] = Qk::dot", "if (threadIdx.x < 4) y[3] = Qk::dot")}
    assert "`Qk::dot`" not in (_why(files, "m.cu", "__shfl_xor_sync") or "x")
    assert "`dot` is called at m.cu:5" in (_why(files, "m.cu", "__shfl_xor_sync") or "")


def test_macro_helpers_are_judged_by_their_uses() -> None:
    src = """\
#define WARP_SUM(v) for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o)
__global__ void k(float* y) {
  float v = y[threadIdx.x];
  int lane = threadIdx.x % 32;
  if (lane < 16) { WARP_SUM(v); }
  y[threadIdx.x] = v;
}
"""
    assert "`WARP_SUM` is called at m.cu:5" in (_why({"m.cu": src}, "m.cu", "__shfl") or "")
    uniform = src.replace("if (lane < 16) { WARP_SUM(v); }", "WARP_SUM(v);")
    assert _why({"m.cu": uniform}, "m.cu", "__shfl") is None


def test_lane_names() -> None:
    for name in ("lane", "lane_id", "laneId", "warpLane", "tid", "thread_id", "threadIdx"):
        assert lane_named(name), name
    for name in ("plane", "num_lanes", "lane_count", "blockIdx", "thread_count", "kLanes"):
        assert not lane_named(name), name


def test_a_long_function_is_read_whole_and_fast() -> None:
    """A kernel longer than the lexer's bracket window (200,000 characters) is still one
    function, and thousands of branches, returns and warp calls in it are answered without a
    loop over every branch per question (each question walks up its enclosing branches)."""
    ifs = "".join(f"  if (t == {j}) {{ y[{j}] = 1; return; }}\n" for j in range(7000))
    calls = "".join(
        f"  if (n == {j}) y[{j}] = 2;\n  v += __shfl_xor_sync(0xffffffff, v, 1);\n"
        for j in range(3000)
    )
    text = (
        "__global__ void k(float* y, int n) {\n  float v = y[0];\n  int t = threadIdx.x;\n"
        + ifs
        + calls
        + "  y[0] = v;\n}\n"
    )
    assert len(text) > 200_000
    files = {"k.cu": lex(text)}
    div = Divergence(files)
    code = files["k.cu"].code
    offsets = [i for i in range(len(code)) if code.startswith("__shfl_xor_sync", i)]
    answers = [div.why("k.cu", at) for at in offsets]
    assert all(a is not None and "after the `return` taken `if (t == 0)`" in a for a in answers)
