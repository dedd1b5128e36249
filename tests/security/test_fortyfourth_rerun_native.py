"""The forty-fourth re-run (on bc10c27), native port findings F9 and F18: the *safe* 64-bit
full-mask rewrite missed a data use of the mask constant in a kernel the project compiles at
run time from a string (a cupy ``RawKernel`` in a Python file, NVRTC source in a C++ string)
and in a file included through a macro (``#include CHECK_FILE``), so a kernel that ran on
ROCm would compare against another value (F9); the unsafe ``#ifdef __CUDA_ARCH__`` fix missed
a ``__CUDA_ARCH__`` alias defined in an included ``.def`` file (F18). Both now decline."""

from __future__ import annotations

from pathlib import Path

from gpuport.port import PortReport
from tests.port.helpers import fix_ids, project, run

_CMAKE = (
    "cmake_minimum_required(VERSION 3.18)\nproject(k LANGUAGES CXX CUDA)\nadd_library(k src/k.cu)\n"
)
_HEADER = "#pragma once\n#define FULL_MASK 0xffffffff\n"
_KERNEL = """\
#include "mask.h"
__global__ void red(float* a) {
  float v = a[threadIdx.x];
  v += __shfl_xor_sync(FULL_MASK, v, 16);
  a[threadIdx.x] = v;
}
EXTRA"""
_RAW = """\
import cupy

SRC = r'''
#include "mask.h"
extern "C" __global__ void all_set(const unsigned long long* b, int* out) {
  out[threadIdx.x] = (b[threadIdx.x] == FULL_MASK);
}
'''
all_set = cupy.RawKernel(SRC, "all_set", options=("-Isrc",))
"""
_NVRTC = """\
#include <nvrtc.h>
static const char* kSrc = R"(
#include "mask.h"
extern "C" __global__ void all_set(const unsigned long long* b, int* out) {
  out[threadIdx.x] = (b[threadIdx.x] == FULL_MASK);
}
)";
const char* source() { return kSrc; }
"""
_DATA = "__device__ bool all_set(unsigned long long b) { return b == FULL_MASK; }\n"


def _masks(root: Path, extra: str, files: dict[str, str]) -> PortReport:
    project(
        root,
        {
            "CMakeLists.txt": _CMAKE,
            "src/mask.h": _HEADER,
            "src/k.cu": _KERNEL.replace("EXTRA", extra),
            **files,
        },
    )
    return run(root, apply=True, verify=False)


def _declined(root: Path, report: PortReport, what: str) -> list[str]:
    assert "full-mask:src/mask.h" not in fix_ids(report), what
    assert (root / "src/mask.h").read_text() == _HEADER, what
    return [u.reason for u in report.unfixed if u.finding.path == "src/mask.h"]


def test_f9_a_mask_constant_named_in_run_time_kernel_source_or_a_macro_include_stays_32_bit(
    tmp_path: Path,
) -> None:
    # a cupy RawKernel (Python string) and NVRTC source in a C++ raw string
    for name, files in (
        ("raw", {"pkg/check.py": _RAW}),
        ("nvrtc", {"src/rtc.cpp": _NVRTC}),
    ):
        root = tmp_path / name
        reasons = _declined(root, _masks(root, "", files), name)
        assert any("compiled at run time" in r for r in reasons), (name, reasons)
    # a data use in a file included through a macro the project defines as its name
    root = tmp_path / "macro"
    extra = '#define CHECK_FILE "check.def"\n#include CHECK_FILE\n'
    reasons = _declined(root, _masks(root, extra, {"src/check.def": _DATA}), "macro")
    assert any("as data" in r for r in reasons), reasons
    # an include through a macro gpuport cannot resolve, compiled with the mask's header
    root = tmp_path / "unknown"
    extra = "#include KERNEL_CHECKS\n"
    data = "inline bool all_set(unsigned long long b) { return b == FULL_MASK; }\n"
    reasons = _declined(root, _masks(root, extra, {"src/check.def": data}), "unknown")
    assert any("KERNEL_CHECKS" in r for r in reasons), reasons
    # the rewrite still happens where every use is read and is a mask
    for name, files, extra in (
        ("plain", {"pkg/util.py": "FULL = 'FULL_MASK'\n"}, ""),
        (
            "macro_mask",
            {
                "src/more.def": "__device__ float f(float v) "
                "{ return __shfl_xor_sync(FULL_MASK, v, 1); }\n"
            },
            '#define MORE "more.def"\n#include MORE\n',
        ),
    ):
        root = tmp_path / name
        report = _masks(root, extra, files)
        assert "full-mask:src/mask.h" in fix_ids(report, applied=True), name
        assert "#define FULL_MASK GPUPORT_FULL_MASK" in (root / "src/mask.h").read_text()


_ARCH_KERNEL = """\
#include <cstdio>
#include INC
__global__ void add(float* a, int n) {
  int i = threadIdx.x;
#ifdef __CUDA_ARCH__
  if (i == 0) printf("arch %d\\n", ARCH_NOW);
#endif
  if (i < n) a[i] += 1;
}
"""


def test_f18_a_cuda_arch_alias_in_an_included_def_file_declines_the_branch_fix(
    tmp_path: Path,
) -> None:
    for name, inc, files in (
        ("def", '"arch.def"', {}),
        ("macro", "ARCH_FILE", {"src/cfg.h": '#define ARCH_FILE "arch.def"\n'}),
    ):
        root = tmp_path / name
        kernel = _ARCH_KERNEL.replace("INC", inc)
        if files:
            kernel = '#include "cfg.h"\n' + kernel
        project(
            root,
            {
                "CMakeLists.txt": _CMAKE,
                "src/arch.def": "#define ARCH_NOW __CUDA_ARCH__\n",
                "src/k.cu": kernel,
                **files,
            },
        )
        report = run(root, apply=True, unsafe_fixes=True, verify=False)
        assert "__HIP_DEVICE_COMPILE__" not in (root / "src/k.cu").read_text(), name
        reasons = [u.reason for u in report.unfixed if u.finding.path == "src/k.cu"]
        assert any("ARCH_NOW" in r for r in reasons), (name, reasons)
