"""Issue 23: the thirty-ninth re-run (on e3b526f), the CMake and C-preprocessor findings of
safe fixes: text CMake or the preprocessor reads otherwise than line by line (a bracket
comment, a generator expression over lines, a ``//`` comment or directive continued by a
backslash, a block comment in an ``#if``) made gpuport's edit live code or broke the CUDA
build. Where gpuport cannot be sure how the text is read, the fix is declined, with the
reason."""

from __future__ import annotations

from pathlib import Path

from gpuport.port import PortReport
from gpuport.port.cmake_flags import flag_edits
from tests.port.helpers import project, run

_KERN = "#include <cuda_runtime.h>\n__global__ void k(float* x){ x[0] = 1.0f; }\n"
_HEAD = (
    "cmake_minimum_required(VERSION 3.18)\nproject(demo LANGUAGES CXX)\n"
    "find_package(CUDAToolkit REQUIRED)\nenable_language(CUDA)\n"
)


def _unfixed(report: PortReport) -> str:
    return " ".join(u.reason for u in report.unfixed)


def test_f5_a_bracket_comment_body_never_reaches_the_hip_branch(tmp_path: Path) -> None:
    cmake = (
        _HEAD + "add_library(k kern.cu)\ntarget_link_libraries(k CUDA::cudart)\n"
        "target_compile_options(k PRIVATE --expt-relaxed-constexpr -O2 #[[ old flags:\n"
        "  $<1:-g)\nexecute_process(COMMAND ${CMAKE_COMMAND} -E touch ${MARKER})\n"
        "target_compile_options(k PRIVATE -g>\n]])\n"
    )
    project(tmp_path, {"CMakeLists.txt": cmake, "kern.cu": _KERN})
    report = run(tmp_path, apply=True)
    assert (tmp_path / "CMakeLists.txt").read_text() == cmake
    assert "bracket comment" in _unfixed(report)
    # the nvcc-flag rewrite, on its own, reads no statement it cannot split word by word
    for stmt in (
        "target_compile_options(k PRIVATE --expt-relaxed-constexpr #[[ c\n x ]] -O2)\n",
        "target_compile_options(k PRIVATE --expt-relaxed-constexpr $<1:-g\n)>)\n",
    ):
        edits, why = flag_edits(stmt, "GPUPORT_HIP", "\n", "# gpuport:")
        assert edits == [] and "cannot read" in why


def test_f6_a_trailing_bracket_comment_keeps_the_cuda_configure(tmp_path: Path) -> None:
    cmake = (
        "cmake_minimum_required(VERSION 3.18)\nproject(demo LANGUAGES CXX)\n"
        "find_package(CUDAToolkit REQUIRED) #[[ note\n]]\nadd_library(k kern.cu)\n"
    )
    project(tmp_path, {"CMakeLists.txt": cmake, "kern.cu": _KERN})
    report = run(tmp_path, apply=True)
    assert (tmp_path / "CMakeLists.txt").read_text() == cmake  # no endif() swallowed
    assert "bracket comment" in _unfixed(report)


def test_f23_the_hip_marks_go_after_the_statement_that_names_the_source(
    tmp_path: Path,
) -> None:
    body = 'add_library(k\n  kern.cu\n  "util(x).cpp"\n  other.cpp)\n'
    cmake = _HEAD + "# kern.cu holds the kernels\n" + body
    cmake += "target_link_libraries(k CUDA::cudart)\n"
    project(tmp_path, {"CMakeLists.txt": cmake, "kern.cu": _KERN})
    run(tmp_path, apply=True)
    text = (tmp_path / "CMakeLists.txt").read_text()
    assert body in text  # add_library's arguments as they were
    after = text.split(body, 1)[1]
    assert after.lstrip().startswith("if(GPUPORT_HIP)")
    assert "set_source_files_properties(kern.cu PROPERTIES LANGUAGE HIP)" in after


def test_f12_no_mask_block_after_an_include_whose_comment_runs_on(tmp_path: Path) -> None:
    src = (
        "#include <cuda_runtime.h> // runtime \\\n   (see docs)\n"
        "__global__ void k(unsigned* x){ x[0] = __shfl_sync(0xffffffff, x[1], 0); }\n"
    )
    project(tmp_path, {"k.cu": src})
    report = run(tmp_path, apply=True)
    assert (tmp_path / "k.cu").read_text() == src
    assert "runs onto the next line" in _unfixed(report)
    # an open block comment on the include line: the same
    src2 = src.replace("// runtime \\\n   (see docs)", "/* runtime\n   (see docs) */")
    project(tmp_path / "b", {"k.cu": src2})
    run(tmp_path / "b", apply=True)
    assert (tmp_path / "b" / "k.cu").read_text() == src2


def test_f12_cub_include_block_continued_by_a_comment_is_left(tmp_path: Path) -> None:
    src = (
        "#include <cub/cub.cuh> // cub \\\n   (see docs)\n"
        "__global__ void k(float* x){ typedef cub::WarpReduce<float> R; }\n"
    )
    project(tmp_path, {"k.cu": src})
    run(tmp_path, apply=True)
    text = (tmp_path / "k.cu").read_text()
    assert "// cub \\\n#endif" not in text
    assert "#include <cub/cub.cuh> // cub \\\n   (see docs)\n" in text


def test_f13_a_comment_inside_an_arch_test_leaves_it(tmp_path: Path) -> None:
    src = (
        "#include <cuda_runtime.h>\n__device__ int f(){\n"
        "#if __CUDA_ARCH__ < 900 /* pre-Hopper */ && __CUDA_ARCH__ != 700\n"
        "  return 1;\n#else\n  return 2;\n#endif\n}\n"
        "__global__ void k(int* x){ x[0] = f(); }\n"
    )
    project(tmp_path, {"k.cu": src})
    report = run(tmp_path, apply=True, unsafe_fixes=True)
    text = (tmp_path / "k.cu").read_text()
    assert "#if __CUDA_ARCH__ < 900 /* pre-Hopper */ && __CUDA_ARCH__ != 700\n" in text
    assert "holds a comment" in _unfixed(report)
    # a comment that ends the line is no part of the test: the test is extended before it
    src2 = src.replace(" /* pre-Hopper */ && __CUDA_ARCH__ != 700", " /* c */")
    project(tmp_path / "b", {"k.cu": src2})
    run(tmp_path / "b", apply=True)
    text2 = (tmp_path / "b" / "k.cu").read_text()
    assert "#if __CUDA_ARCH__ < 900 || defined(__HIP_DEVICE_COMPILE__) /* c */\n" in text2


def test_f5_a_one_line_genex_with_a_plain_quoted_part_is_read(tmp_path: Path) -> None:
    """swaptube (J6): `$<$<COMPILE_LANGUAGE:CUDA>:"--diag_suppress=20012">` is one argument to
    CMake; refusing it took J6's acceptable safe HIP build. A quoted part with spaces, a
    parenthesis or a `#` is still refused."""
    ok = 'add_compile_options($<$<COMPILE_LANGUAGE:CUDA>:"--diag_suppress=20012">)\n'
    assert "cannot read" not in flag_edits(ok, "GPUPORT_HIP", "\n", "# gpuport:")[1]
    for bad in ('"--x y"', '"--x)"', '"#x"'):
        stmt = f"add_compile_options($<$<COMPILE_LANGUAGE:CUDA>:{bad}>)\n"
        assert "cannot read" in flag_edits(stmt, "GPUPORT_HIP", "\n", "# gpuport:")[1], bad
    cmake = _HEAD + "add_library(k kern.cu)\n" + ok
    report = run(project(tmp_path, {"CMakeLists.txt": cmake, "kern.cu": _KERN}))
    assert any(f.id == "cmake-hip:CMakeLists.txt" and f.safe for f in report.fixes)
