"""Issue 23: the thirty-fifth re-run (full, a fifteenth reviewer, on f775a17). Stalls in code
of the last sessions, each quadratic in one small file:

* F1: ``port``/``hipify``'s launch check searched the launching function's body for each
  block-size name once per launch (10,000 launches of one kernel in one function, 280 KB:
  > 60 s); each pattern now runs once per function and the last match before a launch is a
  look-up;
* F2: the Dockerfile route reader searched the text before each ``FROM $V`` for the
  variable's ``ARG`` default (60,000 lines, 480 KB: > 60 s); the ROCm ``ARG`` defaults are read
  once;
* F3: the lane analysis compiled a pattern per called function and searched every file with
  it (12,000 device functions with warp calls, 877 KB: > 60 s); each file's calls are indexed
  once.

Each bound is the stall tests' CPU-time bound; the inputs took 2-10 s on the code before."""

from __future__ import annotations

from pathlib import Path

from gpuport.hipify.divergence import Divergence
from gpuport.scan.cxx import lex
from gpuport.scan.project.routes import _rocm_base
from tests.security.test_stalls import _within

_KERNEL = (
    "__global__ void k(float* x) {\n  float v = x[threadIdx.x];\n"
    "  v += __shfl_xor_sync(0xffffffff, v, 1);\n  x[threadIdx.x] = v;\n}\n"
)


def test_f1_many_launches_in_one_function() -> None:
    text = (
        _KERNEL
        + "void run(float* x, int a, int b, int c, int d) {\n"
        + "k<<<1, a*b*c*d>>>(x);\n" * 3000
        + "}\n"
    )

    def judge() -> str | None:
        files = {"a.cu": lex(text)}
        return Divergence(files).why("a.cu", files["a.cu"].code.find("__shfl"))

    assert judge() is None  # a*b*c*d: parameters, not known to leave lanes empty
    _within(judge, 1.5)


def test_f1_the_last_definition_before_each_launch_still_decides() -> None:
    text = (
        _KERNEL
        + "void run(float* x) {\n  int n = 256;\n  k<<<1, n>>>(x);\n"
        + "  n = 32;\n  k<<<1, n>>>(x);\n}\n"
    )
    files = {"a.cu": lex(text)}
    why = Divergence(files).why("a.cu", files["a.cu"].code.find("__shfl"))
    assert why is not None and "32" in why  # the second launch: a 32-thread block


def test_f2_many_from_lines_of_a_variable() -> None:
    text = "ARG X=1\n" + "FROM $V\n" * 40_000
    assert _rocm_base(text) is None
    _within(lambda: _rocm_base(text), 0.5)
    # an ARG with a ROCm default before the FROM that uses it: still a ROCm image
    rocm = "ARG BASE=rocm/pytorch:latest\nFROM ${BASE}\n"
    got = _rocm_base(rocm)
    assert got is not None and "BASE=rocm/pytorch:latest" in got[1]
    assert _rocm_base("FROM ${BASE}\nARG BASE=rocm/pytorch:latest\n") is None  # after: not


def test_f3_many_device_functions_with_warp_calls() -> None:
    text = "".join(
        f"__device__ float f{i}(float v){{return __shfl_xor_sync(0xffffffff,v,1);}}\n"
        for i in range(6000)
    )

    def judge_all() -> int:
        files = {"a.cu": lex(text)}
        div, code, at, n = Divergence(files), files["a.cu"].code, 0, 0
        while (at := code.find("__shfl_xor_sync", at + 1)) != -1:
            div.why("a.cu", at)
            n += 1
        return n

    assert judge_all() == 6000
    _within(judge_all, 2.5)


def test_f3_a_caller_in_a_lane_branch_is_still_found() -> None:
    text = (
        "__device__ float red(float v){return __shfl_xor_sync(0xffffffff,v,1);}\n"
        "__global__ void k(float* x){ float v = x[0];\n"
        "  if (threadIdx.x < 16) { v = red(v); }\n  x[0] = v; }\n"
    )
    files = {"a.cu": lex(text)}
    why = Divergence(files).why("a.cu", files["a.cu"].code.find("__shfl"))
    assert why is not None and "red" in why


# F4-F6: found by the same reviewer (its report was cut short; the repros were complete):
# a pattern per mask name (scan's GP302 mask constants, hipify's 64-bit mask plan), a search
# per `v += 32` statement and lane name (the stride check), a pattern per `#define`d name
# (the macros a ROCm build leaves 0) -- each over the whole file or function.


def _scan_one(tmp_path: Path, name: str, text: str) -> int:
    from gpuport.scan import ScanOptions, scan_path

    (tmp_path / name).write_text(text)
    return len(scan_path(tmp_path, ScanOptions(jobs=1)).findings)


def test_f4_many_mask_defines(tmp_path: Path) -> None:
    from gpuport.hipify.run import hipify_path

    text = "".join(f"#define FULL_MASK_{i} 0xffffffff\n" for i in range(16_000))
    assert _scan_one(tmp_path, "m.cuh", text) > 0
    _within(lambda: _scan_one(tmp_path, "m.cuh", text), 6.0)
    used = text + "__device__ float f(float v){return __shfl_xor_sync(FULL_MASK_7, v, 1);}\n"
    (tmp_path / "u.cuh").write_text(used)
    out = hipify_path(tmp_path / "u.cuh", target="gfx942", hip_version="6.4")
    text_out = out.files[0].text or ""
    assert "#define FULL_MASK_7 0xffffffffffffffff" in text_out  # the used one: 64-bit
    assert "#define FULL_MASK_8 0xffffffff\n" in text_out  # an unused one: as it was
    _within(lambda: hipify_path(tmp_path / "u.cuh", target="gfx942", hip_version="6.4"), 6.0)


def test_f5_many_strides_beside_many_lane_names(tmp_path: Path) -> None:
    text = (
        "__global__ void k(float* x) {\n"
        + "".join(f"  int l{i} = threadIdx.x % 32;\n" for i in range(100))
        + "  int o = 0;\n"
        + "  o += 32;\n" * 3000
        + "  x[l0 + l1] = __shfl_xor_sync(0xffffffff, x[o], 1);\n}\n"
    )
    _within(lambda: _scan_one(tmp_path, "k.cu", text), 2.0)


def test_f6_many_arch_gated_defines(tmp_path: Path) -> None:
    text = "".join(
        f"#if __CUDA_ARCH__ >= 900\n#define X_{i} 1\n#else\n#define X_{i} 0\n#endif\n"
        for i in range(4000)
    )
    _within(lambda: _scan_one(tmp_path, "k.cu", text + "__global__ void k() {}\n"), 3.0)
