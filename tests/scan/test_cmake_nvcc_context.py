"""Issue 24: CMake text that tests for nvcc or its flags, or lists flags only nvcc reads, is
not a flag given to a ROCm compiler; a flag that does reach the compiler stays a finding."""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from gpuport.scan import scan_path


def _found(tmp_path: Path, text: str, rule: str) -> dict[int, Severity]:
    (tmp_path / "CMakeLists.txt").write_text(text)
    return {f.location.line: f.severity for f in scan_path(tmp_path).findings if f.rule_id == rule}


def _serious(found: dict[int, Severity]) -> set[int]:
    return {line for line, sev in found.items() if sev in (Severity.BLOCKER, Severity.MAJOR)}


def test_tests_and_removals_of_a_flag_are_not_flags(tmp_path: Path) -> None:
    found = _found(
        tmp_path,
        'if("-Xcompiler" IN_LIST FLAGS)\n'  # 1: a test
        '  list(REMOVE_ITEM FLAGS "-Xcompiler")\n'  # 2: a removal
        "endif()\n"
        "target_compile_options(lib PRIVATE -Xcompiler -fPIC)\n",  # 4: passed on
        "GP402",
    )
    assert _serious(found) == {4}
    assert 1 not in found and 2 not in found


def test_a_version_probe_is_not_an_nvcc_build(tmp_path: Path) -> None:
    found = _found(
        tmp_path,
        "execute_process(COMMAND ${CXX} --version OUTPUT_VARIABLE V)\n"
        'string(FIND "${V}" "nvcc" HAS_NVCC)\n'  # 2: looks for the word
        "set(CMAKE_CXX_COMPILER nvcc)\n",  # 3: chooses nvcc
        "GP408",
    )
    assert set(found) == {3}


def test_cuda_language_flags_are_guarded_other_flag_lists_are_not(tmp_path: Path) -> None:
    found = _found(
        tmp_path,
        'set(CMAKE_CUDA_FLAGS "-O2 -Xcompiler=-Wall ${CMAKE_CUDA_FLAGS}")\n'  # 1: nvcc only
        'string(APPEND CUDA_NVCC_FLAGS " --expt-relaxed-constexpr")\n'  # 2: nvcc only
        "list(APPEND MYLIB_XCOMPILER_OPTIONS -Xcompiler)\n"  # 3: named for nvcc
        'set(CMAKE_CXX_FLAGS "--expt-relaxed-constexpr")\n'  # 4: the C++ compiler's flags
        "set(MY_FLAGS --expt-relaxed-constexpr)\n"  # 5: a list of unknown use
        "target_compile_options(lib PRIVATE ${MY_FLAGS})\n",
        "GP402",
    )
    assert _serious(found) == {4, 5}
    assert {1, 2, 3} <= set(found)  # still said, as guarded


def test_a_helper_named_for_nvcc_and_a_flag_table_column(tmp_path: Path) -> None:
    found = _found(
        tmp_path,
        "function(GKO_XCOMPILER varname varlist)\n"
        '  set(tmp "${tmp} -Xcompiler ${item}")\n'  # 2: inside the nvcc helper
        "endfunction()\n"
        "compiler_specific_flags(Clang -fgpu-rdc NVIDIA --relocatable-device-code=true)\n"  # 4
        "compiler_specific_flags(NVIDIA -lineinfo Clang --expt-relaxed-constexpr)\n",  # 5
        "GP402",
    )
    assert _serious(found) == {5}  # the Clang column after NVIDIA's is a real flag


def test_check_language_is_a_probe_enable_language_is_not(tmp_path: Path) -> None:
    found = _found(
        tmp_path,
        "include(CheckLanguage)\ncheck_language(CUDA)\nif(CMAKE_CUDA_COMPILER)\n"
        "  enable_language(CUDA)\nendif()\n",
        "GP401",
    )
    assert set(found) == {4}
