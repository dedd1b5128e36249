"""Issue 24: the ROCm side of every preprocessor conditional. Names only NVIDIA's toolchain
defines (CUDA_VERSION compared with a version, __CUDACC_VER_MAJOR__, __NVCC__) and project
macros the build defines only for CUDA are false on ROCm; their branches are not compiled."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.models import Severity
from gpuport.scan.cxx_cond import without_cuda_arch
from gpuport.scan.model import ScanReport
from tests.scan.project_files import scan_files

PTX = '  asm volatile("membar.gl;");\n'


@pytest.mark.parametrize(
    ("kind", "expr", "value"),
    [
        ("if", "CUDA_VERSION >= 11000", False),
        ("if", "defined(CUDA_VERSION) && CUDA_VERSION >= 12080", False),
        ("if", "CUDA_VERSION < 11000", True),
        ("if", "__CUDACC_VER_MAJOR__ >= 12", False),
        ("if", "!defined(__CUDACC_VER_MAJOR__) || __CUDACC_VER_MAJOR__ < 11", True),
        ("ifdef", "__NVCC__", False),
        ("ifndef", "__NVCC__", True),
        ("if", "defined(CUDA_VERSION)", None),  # hipify defines TORCH_HIP_VERSION for it
        ("if", "CUDA_VERSION >= 11000 || defined(USE_ROCM)", None),
        ("ifdef", "CUDA_VERSION", None),
        ("if", "MY_VERSION >= 11000", None),
    ],
)
def test_names_only_nvidia_defines(kind: str, expr: str, value: bool | None) -> None:
    assert without_cuda_arch(kind, expr) is value


def _ptx(r: ScanReport) -> list[Severity]:
    return [f.severity for f in r.findings if f.rule_id == "GP301"]


def test_a_cuda_version_gate_is_not_compiled_on_rocm(tmp_path: Path) -> None:
    cu = f"__global__ void k() {{\n#if CUDA_VERSION >= 12000\n{PTX}#endif\n}}\n"
    assert _ptx(scan_files(tmp_path, {"k.cu": cu})) == [Severity.INFO]
    cu_else = f"__global__ void k() {{\n#if CUDA_VERSION >= 12000\n#else\n{PTX}#endif\n}}\n"
    assert _ptx(scan_files(tmp_path / "b", {"k.cu": cu_else})) == [Severity.BLOCKER]


SETUP = (
    "import torch\nfrom setuptools import setup\n"
    "from torch.utils.cpp_extension import CUDAExtension\n"
    "flags = []\nif torch.version.hip:\n    flags += ['-DUSE_ROCM']\n"
    "else:\n    flags += ['-DKITTENS_HOPPER']\n"
    "setup(name='k', ext_modules=[CUDAExtension('k', ['k.cu'], extra_compile_args=flags)])\n"
)
KERNEL = (
    "__global__ void k() {\n#ifdef KITTENS_HOPPER\n"
    + PTX
    + "#else\n  __syncthreads();\n#endif\n}\n"
)


def test_a_macro_the_build_defines_only_for_cuda_is_false_on_rocm(tmp_path: Path) -> None:
    r = scan_files(tmp_path, {"setup.py": SETUP, "k.cu": KERNEL})
    assert _ptx(r) == [Severity.INFO]


def test_a_macro_also_defined_for_rocm_or_in_code_still_counts(tmp_path: Path) -> None:
    both = SETUP.replace("flags += ['-DUSE_ROCM']", "flags += ['-DUSE_ROCM', '-DKITTENS_HOPPER']")
    assert _ptx(scan_files(tmp_path / "a", {"setup.py": both, "k.cu": KERNEL})) == [
        Severity.BLOCKER
    ]
    header = "#pragma once\n#define KITTENS_HOPPER 1\n"
    files = {"setup.py": SETUP, "k.cu": '#include "cfg.h"\n' + KERNEL, "cfg.h": header}
    assert _ptx(scan_files(tmp_path / "b", files)) == [Severity.BLOCKER]


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("(__CUDACC_VER_MAJOR__ * 10000 + __CUDACC_VER_MINOR__ * 100 >= 120400)", False),
        ("!(__CUDACC_VER_MAJOR__ * 10000 + __CUDACC_VER_MINOR__ * 100 >= 120400)", True),
        (
            "__CUDACC_VER_MAJOR__ > 12 || "
            "(__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 8)",
            False,
        ),
        ("FOO * 2 > 3 && __CUDACC_VER_MAJOR__ >= 11", False),
        ("FOO * 2 > 3 || __CUDACC_VER_MAJOR__ >= 11", None),
    ],
)
def test_arithmetic_on_names_nvidia_alone_defines(expr: str, value: bool | None) -> None:
    assert without_cuda_arch("if", expr) is value


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("__has_include(<cuda/pipeline>)", False),
        ("__has_include(<cuda/barrier>) && X", False),
        ('__has_include("cutlass/gemm/device/gemm.h")', False),
        ("!__has_include(<cute/tensor.hpp>)", True),
        ("__has_include(<cuda_pipeline.h>) || defined(USE_ROCM)", None),
        # hipify maps these to HIP headers, or ROCm ships a header of that name
        ("__has_include(<cuda_fp8.h>)", None),
        ("__has_include(<cuda_runtime.h>)", None),
        ("__has_include(<thrust/device_vector.h>)", None),
    ],
)
def test_has_include_of_a_header_no_rocm_route_has(expr: str, value: bool | None) -> None:
    assert without_cuda_arch("if", expr) is value


def test_a_has_include_probe_of_a_cuda_only_header_is_the_cuda_side(tmp_path: Path) -> None:
    cu = (
        "#if __has_include(<cuda/pipeline>)\n#include <cuda/pipeline>\n"
        f"__global__ void k() {{\n{PTX}}}\n#else\n__global__ void k() {{}}\n#endif\n"
    )
    report = scan_files(tmp_path, {"k.cu": cu})
    assert _ptx(report) == [Severity.INFO]
    # the probe itself is no use of the header; the include under it is the CUDA side's
    assert [(f.location.line, f.severity) for f in report.findings if f.rule_id == "GP312"] == [
        (2, Severity.INFO)
    ]
    # the other side of the probe is what ROCm compiles
    swapped = cu.replace("#if __has_include", "#if !__has_include")
    assert _ptx(scan_files(tmp_path / "b", {"k.cu": swapped})) == [Severity.BLOCKER]
