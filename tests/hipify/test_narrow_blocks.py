"""hipify (HIP >= 6.2) does not widen a full mask in a kernel launched with blocks that leave
lanes of a 64-lane wavefront empty (a 32-thread block on CDNA: HIP's mask check traps with no
branch at all); the mask is left 32-bit and listed, as a divergent call's is. The same
analysis as ``port``'s (:mod:`gpuport.hipify.narrow_blocks` through
:class:`gpuport.hipify.divergence.Divergence`). Session 14, the launch class."""

from __future__ import annotations

from pathlib import Path

from gpuport.hipify.divergence import Divergence
from gpuport.hipify.run import hipify_path
from gpuport.hipify.translate import LEFT_32, translate
from gpuport.scan.cxx import lex

KERNEL = """\
#define WARP_SIZE 32
__global__ void k(float* y) {
  float v = y[threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  y[threadIdx.x] = v;
}
void run(float* y, int n) {
  BLOCK
  k<<<n, block>>>(y);
}
"""


def _with(block: str) -> str:
    return KERNEL.replace("  BLOCK\n", f"  {block}\n")


def test_a_32_thread_block_leaves_the_literal_mask_and_lists_it() -> None:
    done = translate(_with("dim3 block(WARP_SIZE, 1);"), hip_version="6.4")
    assert "__shfl_xor_sync(0xffffffff, v, o)" in done.text
    assert "0xffffffffffffffffull" not in done.text
    left = [u for u in done.unsupported if u.name == "__shfl_xor_sync"]
    assert len(left) == 1 and left[0].line == 4
    assert left[0].reason.startswith(LEFT_32)
    assert "`k` is launched at" in left[0].reason and "32 threads" in left[0].reason


def test_whole_wavefronts_and_unknown_sizes_are_widened() -> None:
    """Negative: 32 x 2 threads (counted as x * y), a size from a parameter."""
    for block in ("dim3 block(WARP_SIZE, 2);", "int block = n;"):
        done = translate(_with(block), hip_version="6.4")
        assert "__shfl_xor_sync(0xffffffffffffffffull, v, o)" in done.text, block
        assert not [u for u in done.unsupported if u.reason.startswith(LEFT_32)], block


def test_a_folder_run_reads_the_launch_in_another_file(tmp_path: Path) -> None:
    (tmp_path / "red.cuh").write_text(
        "__device__ float red(float v) {\n"
        "  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);\n"
        "  return v;\n}\n"
        "__global__ void k(float* y) { y[threadIdx.x] = red(y[threadIdx.x]); }\n"
    )
    (tmp_path / "host.cu").write_text(
        '#include "red.cuh"\nvoid go(float* y, int n, int ny) {\n'
        "  const dim3 b(32, ny);\n  k<<<n, b>>>(y);\n}\n"
    )
    report = hipify_path(tmp_path, hip_version="6.4")
    header = next(f for f in report.files if f.path == "red.cuh")
    assert "0xffffffffffffffffull" not in (header.text or "")
    reasons = [u.reason for u in header.unsupported]
    assert any("`k` is launched at host.cu:4" in r and "made from a 32" in r for r in reasons)


def test_the_analysis_counts_threads_and_reads_constants() -> None:
    header = "#define NWARPS 4\n#define WARP_SIZE 32\n#define WIDE 256\n"
    body = (
        "__device__ float red(float v) { return v + __shfl_xor_sync(0xffffffff, v, 1); }\n"
        "__global__ void K(float* y) { y[0] = red(y[0]); }\n"
        "void go(float* y, int n) {\n  LAUNCH;\n}\n"
    )
    at = body.index("__shfl")
    cases = {
        "K<<<n, WARP_SIZE * NWARPS>>>(y)": False,
        "K<<<n, dim3(WARP_SIZE, NWARPS, 1)>>>(y)": False,
        "K<<<n, WIDE / 2>>>(y)": False,
        "K<<<n, WARP_SIZE * 3>>>(y)": True,  # 96: the second wavefront is half empty
        "K<<<n, WIDE / 8>>>(y)": True,
        "K<<<n, WARP_SIZE * n>>>(y)": True,  # unknown, from a 32
        "hipLaunchKernelGGL(K, dim3(n), dim3(WARP_SIZE), 0, 0, y)": True,
        "K<<<n, n * 2>>>(y)": False,  # unknown, not from a 32
    }
    for launch, narrow in cases.items():
        files = {"h.cuh": lex(header), "k.cu": lex(body.replace("LAUNCH", launch))}
        why = Divergence(files).why("k.cu", at)
        assert (why is not None) == narrow, (launch, why)
        if narrow:
            assert "`K` is launched at k.cu:4" in (why or "")
