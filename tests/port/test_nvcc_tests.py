"""``#ifdef __CUDACC__`` / ``#if defined(__NVCC__)`` branches the HIP build takes too
(``gpuport.port.nvcc_tests``): safe in gpuport's CMake HIP build, unsafe for a PyTorch
extension ROCm torch already compiles; every CUDA build keeps each test's value."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gpuport.port.nvcc_tests import test_edits as edits_of
from tests.port.helpers import fix_ids, project, run


def rewrite(text: str, names: tuple[str, ...] = ("__CUDACC__", "__NVCC__")) -> str:
    for start, end, new in sorted(edits_of(text, names), reverse=True):
        text = text[:start] + new + text[end:]
    return text


SHARED = """\
#pragma once
#ifdef __CUDACC__
#define HD __host__ __device__
#else
#define HD
#endif
"""


def test_the_simple_forms_also_take_hipcc() -> None:
    assert rewrite(SHARED) == SHARED.replace(
        "#ifdef __CUDACC__", "#if defined(__CUDACC__) || defined(__HIPCC__)"
    )
    assert rewrite("#if defined(__NVCC__) // nvcc\nint x;\n#endif\n") == (
        "#if defined(__NVCC__) || defined(__HIPCC__) // nvcc\nint x;\n#endif\n"
    )
    assert rewrite("# ifdef   __CUDACC__\n#  define api __host__ __device__\n# endif\n") == (
        "# if defined(__CUDACC__) || defined(__HIPCC__)\n"
        "#  define api __host__ __device__\n# endif\n"
    )
    # the nvcc branch of a negated test is its #else
    neg = "#ifndef __CUDACC__\n#define HD\n#else\n#define HD __device__\n#endif\n"
    assert rewrite(neg).startswith("#if !defined(__CUDACC__) && !defined(__HIPCC__)\n")
    chain = "#if defined(X_CPU)\nint a;\n#elif defined(__NVCC__)\nint b;\n#endif\n"
    assert "#elif defined(__NVCC__) || defined(__HIPCC__)\n" in rewrite(chain)


@pytest.mark.parametrize(
    "text",
    [
        # already HIP's, or a HIP branch beside it in the chain
        "#if defined(__CUDACC__) || defined(__HIPCC__)\nint a;\n#endif\n",
        "#ifdef __CUDACC__\nint a;\n#elif defined(__HIP_PLATFORM_AMD__)\nint b;\n#endif\n",
        "#if defined(USE_ROCM)\nint a;\n#elif defined(__CUDACC__)\nint b;\n#endif\n",
        # another condition beside it
        "#if defined(__CUDACC__) && defined(__CUDA_ARCH__)\nint a;\n#endif\n",
        "#if defined(__ARM_NEON) && defined(__CUDACC__)\nint a;\n#endif\n",
        # what hip-clang cannot take in the nvcc branch
        '#ifdef __CUDACC__\n__device__ int lane() { int r; asm("mov.u32 %0, %%laneid;" : "=r"(r)); '
        "return r; }\n#endif\n",
        "#ifdef __CUDACC__\n#include <cuda_fp16.h>\n#endif\n",
        "#if defined( __NVCC__ )\n# define V ( __CUDACC_VER_MAJOR__ * 10 )\n"
        "#else\n# define V 0\n#endif\n",
        "#ifdef __NVCC__\nint v = CUDA_VERSION;\n#endif\n",
        "#ifdef __CUDACC__\nint c = CUBLASLT_ALGO_CAP_ATOMIC_SYNC;\n#endif\n",
        # a negated test whose chain goes on with #elif
        "#ifndef __CUDACC__\nint a;\n#elif X\nint b;\n#endif\n",
        # nvcc's own diagnostic pragmas (J44, llama.hpp:34, macros.hpp:127): hip-clang warns
        # "unknown pragma ignored" in every unit
        "#ifdef __NVCC__\n#  pragma nv_diag_suppress 940\n#endif\n",
        "#if defined(__NVCC__)\n#pragma diag_suppress 940\n#else\n#endif\n",
        '#ifdef __NVCC__\n#define BEGIN_SUPPRESS _Pragma("nv_diag_suppress 20011")\n#endif\n',
        "#ifdef __CUDACC__\n#pragma hd_warning_disable\ntemplate <class F> void f(F g) {}\n"
        "#endif\n",
        # dead code, a ROCm branch
        "#if 0\n#ifdef __CUDACC__\nint a;\n#endif\n#endif\n",
        "#ifdef USE_ROCM\n#ifdef __CUDACC__\nint a;\n#endif\n#endif\n",
    ],
)
def test_tests_hip_clang_cannot_or_need_not_take_are_left(text: str) -> None:
    assert rewrite(text) == text


def test_cuda_names_with_a_hip_twin_and_project_includes_are_taken() -> None:
    text = '#ifdef __CUDACC__\n#include "cuda/utils.cuh"\n__device__ cuFloatComplex z;\n#endif\n'
    assert rewrite(text).startswith("#if defined(__CUDACC__) || defined(__HIPCC__)\n")


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor (cpp)")
def test_every_cuda_build_preprocesses_the_same_and_hipcc_takes_the_nvcc_branch() -> None:
    """Preprocessed as nvcc (``__CUDACC__`` and ``__NVCC__``), as a host compiler (neither) and
    as hip-clang (``__HIPCC__``): the first two see the original's output."""
    text = SHARED + "#ifndef __NVCC__\nint host_only;\n#else\nint nvcc;\n#endif\nHD void f();\n"
    new = rewrite(text)
    assert new != text

    def pp(src: str, *defs: str) -> str:
        out = subprocess.run(
            ["cpp", "-P", *(f"-D{d}" for d in defs)],
            input=src,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
        return " ".join(out.split())

    assert pp(new, "__CUDACC__", "__NVCC__") == pp(text, "__CUDACC__", "__NVCC__")
    assert pp(new) == pp(text)
    assert pp(new, "__HIPCC__") == pp(text, "__CUDACC__", "__NVCC__")


CMAKE = """\
cmake_minimum_required(VERSION 3.18)
project(demo LANGUAGES CXX)
find_package(CUDAToolkit REQUIRED)
enable_language(CUDA)
add_executable(demo src/main.cpp src/kern.cu)
target_link_libraries(demo CUDA::cudart)
"""
KERN = """\
#include <cuda_runtime.h>
#include "shared.h"
HD float twice(float x) { return 2.f * x; }
__global__ void k(float* x) { x[threadIdx.x] = twice(x[threadIdx.x]); }
void go(float* x) { k<<<1, 32>>>(x); cudaDeviceSynchronize(); }
"""
HOST = "#ifdef __CUDACC__\nint device_build;\n#endif\nint main() {}\n"


def test_the_cmake_hip_build_takes_the_shared_headers_nvcc_branch(tmp_path: Path) -> None:
    """A safe fix beside the ``hip-compat`` one: the header a ``.cu`` includes gets ``||
    defined(__HIPCC__)``; a host source (compiled by the C++ compiler on both builds) is
    left; a second run changes nothing."""
    root = project(
        tmp_path,
        {
            "CMakeLists.txt": CMAKE,
            "src/kern.cu": KERN,
            "src/shared.h": SHARED,
            "src/main.cpp": HOST,
        },
    )
    report = run(root)
    fix = next(f for f in report.fixes if f.id == "hip-compiler-tests:CMakeLists.txt")
    assert fix.safe and fix.applied
    assert "hip-compat:src/gpuport_hip_compat.h" in fix_ids(report, applied=True)
    shared = next(f for f in report.files if f.path == "src/shared.h")
    assert shared.hunks[0].fixes == ["hip-compiler-tests:CMakeLists.txt"]
    assert "src/main.cpp" not in {f.path for f in report.files}
    run(root, apply=True, verify=False)
    assert "#if defined(__CUDACC__) || defined(__HIPCC__)\n" in (root / "src/shared.h").read_text()
    assert (root / "src/main.cpp").read_text() == HOST
    assert not run(root).files


def test_no_cmake_hip_build_no_edit(tmp_path: Path) -> None:
    """A project with nothing that builds it for HIP (no CMake CUDA lookup, no extension)
    gets no edit of its tests: there is no finding the change would serve."""
    root = project(tmp_path, {"src/kern.cu": KERN, "src/shared.h": SHARED, "Makefile": "all:\n"})
    report = run(root, unsafe_fixes=True)
    assert "src/shared.h" not in {f.path for f in report.files}


SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="ext",
    ext_modules=[CUDAExtension("ext._C", ["csrc/ext.cpp", "csrc/kern.cu"])],
    cmdclass={"build_ext": BuildExtension},
)
"""
EXT_HEADER = """\
#pragma once
#if defined(__NVCC__)
#define HD __host__ __device__
#else
#define HD
#endif
#ifdef __CUDACC__
#define ON_GPU 1
#endif
"""


def test_a_torch_extensions_nvcc_tests_are_an_unsafe_fix(tmp_path: Path) -> None:
    """ROCm torch already compiles the extension (its hipify maps __CUDACC__, not
    __NVCC__): only the __NVCC__ test changes, and only with --unsafe-fixes."""
    root = project(
        tmp_path,
        {
            "setup.py": SETUP,
            "csrc/ext.cpp": "#include <torch/extension.h>\n",
            "csrc/kern.cu": '#include "ext.h"\n__global__ void k(float* x) { x[0] = 1.f; }\n',
            "csrc/ext.h": EXT_HEADER,
        },
    )
    safe = run(root)
    assert "hip-compiler-tests:setup.py" in fix_ids(safe, applied=False)
    assert "csrc/ext.h" not in {f.path for f in safe.files}
    unsafe = run(root, unsafe_fixes=True)
    fix = next(f for f in unsafe.fixes if f.id == "hip-compiler-tests:setup.py")
    assert not fix.safe and fix.applied and "__NVCC__" in fix.why
    run(root, unsafe_fixes=True, apply=True, verify=False)
    header = (root / "csrc/ext.h").read_text()
    assert "#if defined(__NVCC__) || defined(__HIPCC__)\n" in header
    assert "#ifdef __CUDACC__\n" in header  # hipify maps it already
    assert "csrc/ext.h" not in {f.path for f in run(root, unsafe_fixes=True).files}
