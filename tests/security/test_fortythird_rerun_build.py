"""Forty-third re-run (red team 43), findings F10, F11 and F12: a gfx word in a rejection test
or a denylist is no AMD target (F10), an option the project's own configure turns on is not
"OFF by default" (F11), and a Makefile combined with another by ``make -f a -f b`` (or one
with no rule of its own) is not "read by nothing" (F12).
"""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from tests.scan.project_files import write

_KERNEL = "__global__ void add(float* a, int n) { int i = threadIdx.x; if (i < n) a[i] += 1; }\n"
_CMAKE_HEAD = (
    "cmake_minimum_required(VERSION 3.18)\nproject(k LANGUAGES CXX CUDA)\n"
    'set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} -gencode arch=compute_80,code=sm_80")\n'
)


def _severities(root: Path, files: dict[str, str], rule: str, path: str) -> list[str]:
    r = scan_path(write(root, files), ScanOptions(jobs=1))
    return [f.severity.value for f in r.findings if f.rule_id == rule and f.location.path == path]


def _gp403_cmake(root: Path, extra: str) -> list[str]:
    files = {"CMakeLists.txt": _CMAKE_HEAD + extra + "add_library(k k.cu)\n", "k.cu": _KERNEL}
    return _severities(root, files, "GP403", "CMakeLists.txt")


def test_f10_a_gfx_word_in_a_rejection_test_or_a_denylist_is_no_amd_target(
    tmp_path: Path,
) -> None:
    assert _gp403_cmake(tmp_path / "base", "") == ["major"]
    rejected = 'if(GPU_ARCH STREQUAL "gfx906")\n  message(FATAL_ERROR "unsupported")\nendif()\n'
    assert _gp403_cmake(tmp_path / "if", rejected) == ["major"]
    assert _gp403_cmake(tmp_path / "deny", 'set(AMD_UNSUPPORTED "gfx906;gfx908")\n') == ["major"]
    assert _gp403_cmake(tmp_path / "rm", "list(REMOVE_ITEM ARCHS gfx906)\n") == ["major"]
    # a Makefile's ifeq + $(error) is a rejection too
    make = "all:\n\tnvcc -gencode arch=compute_80,code=sm_80 -c k.cu\n"
    reject = "ifeq ($(ARCH),gfx906)\n$(error unsupported)\nendif\n"
    base = _severities(tmp_path / "mb", {"Makefile": make, "k.cu": _KERNEL}, "GP403", "Makefile")
    got = _severities(
        tmp_path / "mr", {"Makefile": reject + make, "k.cu": _KERNEL}, "GP403", "Makefile"
    )
    assert base and got == base
    # a target list, or a branch the build takes for an AMD target, still names one
    assert _gp403_cmake(tmp_path / "list", "set(AMD_TARGETS gfx90a gfx942)\n") == []
    taken = 'if(GPU_ARCH STREQUAL "gfx90a")\n  set(BACKEND hip)\nendif()\n'
    assert _gp403_cmake(tmp_path / "taken", taken) == []


_OPT_IN = """\
cmake_minimum_required(VERSION 3.18)
project(k LANGUAGES CXX CUDA)
option(K_FAST_MATH "fast math" OFF)
if(K_FAST_MATH)
  set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} -use_fast_math -gencode arch=compute_80,code=sm_80")
endif()
add_library(k src/k.cu)
"""


def _gp403_opt_in(root: Path, **more: str) -> list[str]:
    files = {"CMakeLists.txt": _OPT_IN, "src/k.cu": _KERNEL, **more}
    r = scan_path(write(root, files), ScanOptions(jobs=1))
    return [f.severity.value for f in r.findings if f.rule_id == "GP403"]


def test_f11_an_option_the_projects_configure_turns_on_is_not_off_by_default(
    tmp_path: Path,
) -> None:
    assert _gp403_opt_in(tmp_path / "off") == ["info"]  # opt-in only: still lowered
    # the project's own setup.py configures it ON
    setup = (
        "import subprocess\n"
        'subprocess.check_call(["cmake", "-S", ".", "-B", "build", "-DK_FAST_MATH=ON"])\n'
    )
    assert _gp403_opt_in(tmp_path / "setup", **{"setup.py": setup}) == ["major"]
    # scikit-build-core's cmake.define turns it on
    pyproject = (
        '[build-system]\nrequires = ["scikit-build-core"]\n'
        'build-backend = "scikit_build_core.build"\n[project]\nname = "k"\nversion = "1"\n'
        '[tool.scikit-build.cmake.define]\nK_FAST_MATH = "ON"\n'
    )
    assert _gp403_opt_in(tmp_path / "pyproject", **{"pyproject.toml": pyproject}) == ["major"]
    # a configure that passes it OFF leaves it off by default
    off = 'import subprocess\nsubprocess.check_call(["cmake", "-DK_FAST_MATH=OFF"])\n'
    assert _gp403_opt_in(tmp_path / "setoff", **{"setup.py": off}) == ["info"]


def _gp402_config(root: Path, config: str, **more: str) -> list[str]:
    files = {
        "kernels/k.cu": _KERNEL,
        "README.md": "# k\n\nIt supports AMD GPUs through ROCm.\n",
        "config.mk": "GENCODE := -gencode arch=compute_80,code=sm_80\n" + config,
        "kernels/Makefile": "all: k.o\nk.o: k.cu\n\tnvcc $(GENCODE) -c $< -o $@\n",
        **more,
    }
    return _severities(root, files, "GP402", "config.mk")


def test_f12_a_makefile_combined_by_make_f_is_not_read_by_nothing(tmp_path: Path) -> None:
    # a fragment with no rule of its own: only a combination reads it (build.sh's make -f)
    sh = {"build.sh": "#!/bin/sh\nmake -f config.mk -f kernels/Makefile\n"}
    assert _gp402_config(tmp_path / "frag", "", **sh) == ["major"]
    rule = "show:\n\t@true\n"
    # one with a rule, combined by another Makefile's make -f a -f b, or MAKEFILES=
    both = {"Makefile": "all:\n\t$(MAKE) -f config.mk -f kernels/Makefile\n"}
    assert _gp402_config(tmp_path / "f", rule, **both) == ["major"]
    var = {"Makefile": "all:\n\tMAKEFILES=config.mk $(MAKE) -C kernels\n"}
    assert _gp402_config(tmp_path / "v", rule, **var) == ["major"]
    # a Makefile run on its own (make -f config.mk) and nothing reads: still lowered
    alone = {"Makefile": "all:\n\t$(MAKE) -f config.mk\n"}
    assert _gp402_config(tmp_path / "alone", rule, **alone) == ["info"]


def test_f11_an_option_a_preset_or_script_turns_on_is_not_off_by_default(tmp_path: Path) -> None:
    """The scan passes the project's scripts and config files (read only when an OFF option is
    asked about) to the opt-in reading: CMakePresets.json or build.sh turning it on."""
    from gpuport.scan import ScanOptions, scan_path
    from tests.scan.project_files import write

    cmake = (
        "cmake_minimum_required(VERSION 3.18)\nproject(g LANGUAGES CXX CUDA)\n"
        'option(G_ALL_MODELS "all compute models" OFF)\n'
        "if (G_ALL_MODELS)\n"
        '    set(CUDA_NVCC_FLAGS ${CUDA_NVCC_FLAGS} "-gencode arch=compute_35,code=sm_35")\n'
        "endif ()\nadd_library(g k.cu)\n"
    )
    kernel = "__global__ void k(float* x) { x[threadIdx.x] = 0; }\n"
    turned_on = {
        "CMakePresets.json": '{"configurePresets": [{"name": "all", '
        '"cacheVariables": {"G_ALL_MODELS": "ON"}}]}\n',
        "build.sh": "cmake -B build -DG_ALL_MODELS=ON .\n",
    }
    for i, (name, text) in enumerate(turned_on.items()):
        files = {"CMakeLists.txt": cmake, "k.cu": kernel, name: text}
        r = scan_path(write(tmp_path / str(i), files), ScanOptions(jobs=1))
        got = [f.severity.value for f in r.findings if f.rule_id == "GP403"]
        assert got and "info" not in got, (name, got)
    r = scan_path(
        write(tmp_path / "off", {"CMakeLists.txt": cmake, "k.cu": kernel}), ScanOptions(jobs=1)
    )
    assert [f.severity.value for f in r.findings if f.rule_id == "GP403"] == ["info"]
