"""Fortieth re-run (red team 40), the CMake findings: text CMake reads otherwise than line by
line (a multi-line quoted argument, a ``)`` inside a quoted DESCRIPTION, a commented-out
``cmake_minimum_required``) made a safe fix break the CUDA configure or skewed the scan's
CMAKE_VERSION branches. Statements are now found with CMake's lexical rules
(``gpuport.scan.cmake_lex``); a statement gpuport reads but cannot edit line by line is
declined, with the reason."""

from __future__ import annotations

import pytest

from gpuport.scan.project.cmake_versions import cmake_dead_branches
from tests.security.test_stalls import _within

_KERN = "#include <cuda_runtime.h>\n__global__ void k(float* x){ x[0] = 1.0f; }\n"
_BODY = (
    "find_package(CUDAToolkit)\nif(CUDAToolkit_FOUND)\n  enable_language(CUDA)\n"
    "  add_library(k k.cu)\n  target_link_libraries(k CUDA::cudart)\nendif()\n"
)


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
