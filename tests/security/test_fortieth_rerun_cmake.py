"""Fortieth re-run (red team 40), the CMake findings: text CMake reads otherwise than line by
line (a multi-line quoted argument, a ``)`` inside a quoted DESCRIPTION, a commented-out
``cmake_minimum_required``) made a safe fix break the CUDA configure or skewed the scan's
CMAKE_VERSION branches. Statements are now found with CMake's lexical rules
(``gpuport.scan.cmake_lex``); a statement gpuport reads but cannot edit line by line is
declined, with the reason."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gpuport.port import PortReport
from gpuport.scan.project.cmake_versions import cmake_dead_branches
from tests.port.helpers import project, run
from tests.security.test_stalls import _within

_KERN = "#include <cuda_runtime.h>\n__global__ void k(float* x){ x[0] = 1.0f; }\n"
_BODY = (
    "find_package(CUDAToolkit)\nif(CUDAToolkit_FOUND)\n  enable_language(CUDA)\n"
    "  add_library(k k.cu)\n  target_link_libraries(k CUDA::cudart)\nendif()\n"
)


def _unfixed(report: PortReport) -> str:
    return " ".join(u.reason for u in report.unfixed)


def _configures(root: Path, tmp: Path) -> bool:
    proc = subprocess.run(
        ["cmake", "-S", str(root), "-B", str(tmp / "build")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return proc.returncode == 0


def test_f3_a_lookup_line_inside_a_quoted_argument_is_string_text(tmp_path: Path) -> None:
    note = 'message(STATUS "Configure notes: the GPU build runs\nfind_package(CUDAToolkit) # ")\n'
    cmake = "cmake_minimum_required(VERSION 3.18)\nproject(demo LANGUAGES NONE)\n" + note + _BODY
    root = tmp_path / "p"
    project(root, {"CMakeLists.txt": cmake, "k.cu": _KERN})
    run(root, apply=True)
    text = (root / "CMakeLists.txt").read_text()
    assert note in text  # the string as it was: no endif() after its closing quote
    # the real lookup (after the string) is the one wrapped
    assert text.split(note, 1)[1].startswith("if(GPUPORT_HIP)")
    if shutil.which("cmake"):
        assert _configures(root, tmp_path)


def test_f3_a_string_holding_a_lookup_line_keeps_its_value(tmp_path: Path) -> None:
    data = 'set(HELP "To build:\nfind_package(CUDAToolkit REQUIRED)\nthen make")\n'
    cmake = "cmake_minimum_required(VERSION 3.18)\nproject(demo LANGUAGES CXX)\n" + data + _BODY
    project(tmp_path, {"CMakeLists.txt": cmake, "k.cu": _KERN})
    run(tmp_path, apply=True)
    assert data in (tmp_path / "CMakeLists.txt").read_text()


def test_f3_a_lookup_whose_end_the_lines_misread_is_declined() -> None:
    from gpuport.port.cmake_text import cuda_lookups  # new in this fix

    # the line pattern ends at the quoted ')' and takes `# "` for a comment; CMake reads on
    text = 'find_package(CUDAToolkit "\n) # "\n)\nenable_language(CUDA)\n'
    found, why = cuda_lookups(text)
    assert why and "line 1" in why
    assert [m.group(2) for m in found] == ["enable_language(CUDA)"]
    # escapes and bracket arguments do not end a command either
    found, why = cuda_lookups('message(STATUS \\" [=[ ) " ]=]\nfind_package(CUDA) # ")\n)\n')
    assert found == [] and why == ""


def test_f3_lines_of_a_string_are_no_statements_for_any_cmake_edit() -> None:
    from gpuport.port.cmake_flags import flag_edits
    from gpuport.port.cmake_project import find_project_cuda
    from gpuport.port.cmake_reach import cu_globs, reach_edits

    lines = (
        "project(x LANGUAGES CXX CUDA)\nif(CMAKE_CUDA_COMPILER)\n"
        "target_compile_options(k PRIVATE --expt-relaxed-constexpr)\nfile(GLOB S *.cu) # "
    )
    for text, live in ((f'message(STATUS "notes:\n{lines}")\n', False), (lines + "\n", True)):
        assert bool(reach_edits(text, "GPUPORT_HIP")[0]) is live
        assert bool(flag_edits(text, "GPUPORT_HIP", "\n", "# gpuport:")[0]) is live
        assert bool(cu_globs(text)) is live
        assert (find_project_cuda(text) is not None) is live


def test_f13_the_option_goes_after_project_as_cmake_reads_it(tmp_path: Path) -> None:
    head = (
        "cmake_minimum_required(VERSION 3.18)\n"
        'project(demo\n  DESCRIPTION "Fast kernels (GPU)"\n  LANGUAGES CXX)\n'
    )
    root = tmp_path / "p"
    project(root, {"CMakeLists.txt": head + _BODY, "k.cu": _KERN})
    run(root, apply=True)
    text = (root / "CMakeLists.txt").read_text()
    assert text.startswith(head + "option(GPUPORT_HIP ")
    if shutil.which("cmake"):
        assert _configures(root, tmp_path)
    from gpuport.port.cmake_text import after_head  # new in this fix

    # a comment's ')' and another statement on the closing line are read too
    assert after_head("project(a) # (x)\nset(x 1)\n", ("project",)) == len("project(a) # (x)\n")
    assert after_head('project(a "b)"\n) set(x 1)\nz()\n', ("project",)) == 0


@pytest.mark.parametrize(
    "decoy",
    [
        "# cmake_minimum_required(VERSION 3.30)  -- once every runner has it",
        "#[[\ncmake_minimum_required(VERSION 3.30)\n]]",
        'message(STATUS "later:\ncmake_minimum_required(VERSION 3.30)\n")',
        "if(WIN32)\n  cmake_minimum_required(VERSION 3.30)\nendif()",
    ],
)
def test_f5_only_a_minimum_every_configure_runs_decides_a_branch(decoy: str) -> None:
    body = (
        "project(demo LANGUAGES CXX)\nif(CMAKE_VERSION VERSION_LESS 3.30)\n"
        "  enable_language(CUDA)\n  add_library(k k.cu)\nendif()\n"
    )
    text = f"cmake_minimum_required(VERSION 3.18)\n{decoy}\n{body}"
    assert cmake_dead_branches({"CMakeLists.txt": text}) == {}
    live = "cmake_minimum_required(VERSION 3.18)\ncmake_minimum_required(VERSION 3.30)\n"
    assert cmake_dead_branches({"CMakeLists.txt": live + body})  # a real one still decides


def test_f5_an_if_inside_a_bracket_comment_is_no_branch() -> None:
    text = "if(CMAKE_VERSION VERSION_LESS 3.10)\n  a()\n#[[\nendif()\n]]\n  b()\nendif()\n"
    got = cmake_dead_branches({"CMakeLists.txt": "cmake_minimum_required(VERSION 3.20)\n",
                               "x.cmake": text})  # fmt: skip
    assert [(a, b) for a, b, _ in got["x.cmake"]] == [(1, 6)]


def test_f16_unclosed_if_lines_are_read_in_one_pass() -> None:
    files = {"CMakeLists.txt": "cmake_minimum_required(VERSION 3.18)\nproject(x LANGUAGES CXX)\n"}
    for i in range(5):
        files[f"cmake/m{i}.cmake"] = "# CMAKE_VERSION\n" + "if(\n" * 5000
    _within(lambda: cmake_dead_branches(files), 1.5)  # was ~8 s


def test_f19_a_version_of_thousands_of_digits_is_not_read() -> None:
    big = "9" * 5000
    text = (
        f"cmake_minimum_required(VERSION {big})\nif(CMAKE_VERSION VERSION_LESS {big})\n"
        "  a()\nendif()\n"
    )
    small = "cmake_minimum_required(VERSION 3.20)\n"
    assert cmake_dead_branches({"CMakeLists.txt": text}) == {}  # no ValueError (exit 4)
    assert cmake_dead_branches({"CMakeLists.txt": small, "x.cmake": text}) == {}
