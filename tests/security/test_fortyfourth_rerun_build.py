"""Forty-fourth re-run (red team 44), findings F10, F11 and F12: a gfx word only removed,
replaced or refused is no AMD target, in any of those shapes (F10); an option the project's
Dockerfile or a Python build helper turns on is not "never turned on" (F11); a Makefile
variable another Makefile reads without assigning it is not "read by nothing", whoever
combines the two (F12).
"""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from tests.scan.project_files import write

_KERNEL = "__global__ void add(float* a, int n) { int i = threadIdx.x; if (i < n) a[i] += 1; }\n"
_HEAD = "cmake_minimum_required(VERSION 3.18)\nproject(k LANGUAGES CXX CUDA)\n"


def _severities(root: Path, files: dict[str, str], rule: str, path: str) -> list[str]:
    r = scan_path(write(root, files), ScanOptions(jobs=1))
    return [f.severity.value for f in r.findings if f.rule_id == rule and f.location.path == path]


def _gp403_archs(root: Path, extra: str) -> list[str]:
    cmake = _HEAD + "set(CMAKE_CUDA_ARCHITECTURES 70 80)\n" + extra + "add_library(k k.cu)\n"
    return _severities(root, {"CMakeLists.txt": cmake, "k.cu": _KERNEL}, "GP403", "CMakeLists.txt")


def test_f10_a_gfx_word_only_removed_replaced_or_refused_is_no_amd_target(
    tmp_path: Path,
) -> None:
    base = _gp403_archs(tmp_path / "base", "")
    assert base, "GP403 expected for NVIDIA-only architectures"
    # a denylist whose name has no refusing word, used only to remove
    denied = "set(AMD_OLD_ARCHS gfx803 gfx900)\nlist(REMOVE_ITEM GPU_TARGETS ${AMD_OLD_ARCHS})\n"
    assert _gp403_archs(tmp_path / "deny", denied) == base
    # a branch that fails the build after a warning
    failing = (
        'if(ROCM_ARCH MATCHES "gfx906")\n  message(WARNING "old")\n'
        '  message(FATAL_ERROR "unsupported")\nendif()\n'
    )
    assert _gp403_archs(tmp_path / "fatal", failing) == base
    # a string(REPLACE) that removes a target
    replaced = 'string(REPLACE "gfx906" "" GPU_TARGETS "${GPU_TARGETS}")\n'
    assert _gp403_archs(tmp_path / "replace", replaced) == base
    # still an AMD target: a list the build also uses, a replacement that keeps one
    used = (
        "set(AMD_ARCHS gfx90a)\nlist(REMOVE_ITEM AMD_ARCHS gfx906)\nset(GPU_TARGETS ${AMD_ARCHS})\n"
    )
    assert _gp403_archs(tmp_path / "used", used) == []
    kept = 'string(REPLACE "gfx906" "gfx90a" ARCHS "${ARCHS}")\n'
    assert _gp403_archs(tmp_path / "kept", kept) == []


_OPT_IN = _HEAD + (
    'option(K_FAST_MATH "fast math" OFF)\nif(K_FAST_MATH)\n'
    '  set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} -use_fast_math '
    '-gencode arch=compute_80,code=sm_80")\nendif()\nadd_library(k src/k.cu)\n'
)


def _gp403_opt_in(root: Path, **more: str) -> list[str]:
    files = {"CMakeLists.txt": _OPT_IN, "src/k.cu": _KERNEL, **more}
    return _severities(root, files, "GP403", "CMakeLists.txt")


def test_f11_an_option_a_dockerfile_or_python_helper_turns_on_is_not_off_by_default(
    tmp_path: Path,
) -> None:
    docker = (
        "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nCOPY . /src\n"
        "RUN cmake -S /src -B /b -DK_FAST_MATH=ON && cmake --build /b\n"
    )
    assert _gp403_opt_in(tmp_path / "docker", Dockerfile=docker) == ["major"]
    helper = 'import subprocess\nsubprocess.check_call(["cmake", "-B", "b", "-DK_FAST_MATH=ON"])\n'
    assert _gp403_opt_in(tmp_path / "py", **{"tools/build.py": helper}) == ["major"]
    # a define computed by the helper cannot be ruled out either
    computed = 'import subprocess\nopt = "K_FAST_MATH"\nsubprocess.run(["cmake", f"-D{opt}=ON"])\n'
    assert _gp403_opt_in(tmp_path / "computed", **{"tools/build.py": computed}) == ["major"]
    # nothing turns it on: still lowered
    plain = "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nRUN cmake -S /src -B /b\n"
    assert _gp403_opt_in(tmp_path / "plain", Dockerfile=plain) == ["info"]


def _gp402_config(root: Path, **more: str) -> list[str]:
    files = {
        "kernels/k.cu": _KERNEL,
        "README.md": "# k\n\nIt supports AMD GPUs through ROCm.\n",
        "config.mk": 'GENCODE := -gencode arch=compute_80,code=sm_80\n\nhelp:\n\t@echo "all"\n',
        "kernels/Makefile": "all: k.o\nk.o: k.cu\n\tnvcc $(GENCODE) -c $< -o $@\n",
        **more,
    }
    return _severities(root, files, "GP402", "config.mk")


def test_f12_a_variable_another_makefile_reads_unassigned_is_not_read_by_nothing(
    tmp_path: Path,
) -> None:
    sh = {"build.sh": "#!/bin/sh\nmake -f config.mk -f kernels/Makefile\n"}
    assert _gp402_config(tmp_path / "script", **sh) == ["major"]
    # the other Makefile assigns it itself: config.mk's copy is read by nothing
    own = "GENCODE := -gencode arch=compute_80,code=sm_80\n"
    own += "all: k.o\nk.o: k.cu\n\tnvcc $(GENCODE) -c $<\n"
    assert _gp402_config(tmp_path / "own", **{"kernels/Makefile": own}) == ["info"]
