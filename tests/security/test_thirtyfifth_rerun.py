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
