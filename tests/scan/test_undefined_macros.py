"""Issue 24, eleventh sample (S-LoRA): code under ``#ifdef NAME`` where nothing in the project
defines NAME is compiled by no build; its findings are guarded, not blockers. Defined anywhere
(a ``#define``, a ``-D`` in a build file or a script), or a library's own switch, it counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.models import Severity
from gpuport.scan.finding import Finding
from gpuport.scan.project.undefined_macros import undefined_macros
from tests.scan.project_files import scan_files

_HEADER = (
    "#pragma once\n"
    "#ifdef PROJ_USE_FP8\n"
    "#include <cuda_fp8.h>\n"
    "#endif\n"
    "template <typename T> struct vec_t { T x; };\n"
    "#ifdef PROJ_USE_FP8\n"
    "template <> struct vec_t<__nv_fp8_e5m2> { __nv_fp8_e5m2 x; };\n"
    "#endif  // PROJ_USE_FP8\n"
)
_KERNEL = '#include "vec.cuh"\n__global__ void k(float* x) { x[threadIdx.x] = 1.f; }\n'


def _fp8(root: Path, extra: dict[str, str]) -> list[Finding]:
    report = scan_files(root, {"csrc/vec.cuh": _HEADER, "csrc/k.cu": _KERNEL, **extra})
    return [f for f in report.findings if f.rule_id == "GP320"]


def test_a_block_under_a_macro_nothing_defines_is_guarded(tmp_path: Path) -> None:
    hits = _fp8(tmp_path, {"setup.py": "from setuptools import setup\nsetup(name='p')\n"})
    assert hits and all(f.severity is Severity.INFO for f in hits)


@pytest.mark.parametrize(
    "extra",
    [
        {"CMakeLists.txt": "add_compile_definitions(PROJ_USE_FP8)\n"},
        {"setup.py": "nvcc_flags = ['-DPROJ_USE_FP8']\n"},
        {"build_ext.py": "load('k', ['csrc/k.cu'], extra_cuda_cflags=['-DPROJ_USE_FP8'])\n"},
        {"csrc/config.h": "#define PROJ_USE_FP8 1\n"},
    ],
    ids=["cmake", "setup.py", "jit-script", "define"],
)
def test_a_macro_the_project_defines_keeps_its_block(tmp_path: Path, extra: dict[str, str]) -> None:
    hits = _fp8(tmp_path, extra)
    assert hits and any(f.severity is not Severity.INFO for f in hits)


def test_toolkit_and_outside_library_macros_are_never_taken_for_undefined(tmp_path: Path) -> None:
    """Nor a developer's switch given with -D by hand (spconv's TV_DEBUG: port G3's fix of its
    device-side checks went when the block was taken for dead)."""
    native = {
        "a.cu": "#ifdef CUDART_VERSION\n#endif\n#ifdef FLASHX_ENABLE_FP8\n#endif\n"
        "#include <flashx/core.h>\n#ifdef MYLIB_FAST\n#endif\n#ifdef TV_DEBUG\n#endif\n",
    }
    got = undefined_macros(native, [], lambda _c: None, tmp_path)
    assert set(got) == {"MYLIB_FAST"}
    assert got["MYLIB_FAST"].startswith("a.cu:6:")
    # a file that cannot be read might define it: nothing is decided
    assert undefined_macros(native, ["x"], lambda _c: None, tmp_path) == {}


def test_a_commented_out_define_defines_nothing(tmp_path: Path) -> None:
    """KeyHunt-Cuda's GPUHash.h: `//#define ASSEMBLY_SIGMA` above `#ifdef ASSEMBLY_SIGMA`
    (PTX helpers): no build defines it (issue 24, twenty-second sample)."""
    header = "//#define ASSEMBLY_SIGMA\n#ifdef ASSEMBLY_SIGMA\nint a;\n#endif\n"
    got = undefined_macros({"h.h": header}, [], lambda _c: None, tmp_path)
    assert set(got) == {"ASSEMBLY_SIGMA"}
    # a live define, or a mention outside a whole-line comment, still counts
    for live in ("#define ASSEMBLY_SIGMA\n", "int x = 1; // ASSEMBLY_SIGMA on\n"):
        got = undefined_macros({"h.h": live + header}, [], lambda _c: None, tmp_path)
        assert got == {}, live
