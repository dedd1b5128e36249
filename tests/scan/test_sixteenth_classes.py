"""Issue 24, sixteenth sample's classes (development data since its after run), each with the
case that must stay: ROCm builds on Linux, so a CMake branch only a Windows build takes
(FLAMEGPU2's MSVC warning suppressions passing ``-Xcompiler /wd4100``) and a Windows port
folder beside the project's own build (gpu-burn's ``win/``) are not the ROCm build's; a
``$<DEVICE_LINK:...>`` value reaches only nvcc's device link."""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from gpuport.scan.model import ScanReport
from tests.scan.project_files import scan_files

_KERNEL = "__global__ void k(float* x) { x[threadIdx.x] = 0; }\n"


def _core(report: ScanReport) -> list[tuple[str, str, int | None]]:
    """(rule, file, line) of the blocker/major findings still counted as core."""
    return [
        (f.rule_id, f.location.path, f.location.line)
        for f in report.findings
        if f.severity in (Severity.BLOCKER, Severity.MAJOR) and f.scope == "core"
    ]


def _lines(report: ScanReport, rule: str) -> list[int | None]:
    return [line for r, _, line in _core(report) if r == rule]


_CMAKE = """\
cmake_minimum_required(VERSION 3.18)
project(app CXX)
add_library(app k.cu)
if({cond})
  target_compile_options(app PRIVATE "-Xcompiler /wd4100")
else()
  target_compile_options(app PRIVATE "-Xcompiler -Wall")
endif()
"""


def test_a_windows_only_branch_is_not_the_rocm_builds(tmp_path: Path) -> None:
    for i, cond in enumerate(
        ["MSVC", "WIN32 AND BUILD_X", 'CMAKE_CXX_COMPILER_ID STREQUAL "MSVC"',
         '${CMAKE_SYSTEM_NAME} STREQUAL "Windows"']
    ):  # fmt: skip
        r = scan_files(
            tmp_path / str(i), {"CMakeLists.txt": _CMAKE.format(cond=cond), "k.cu": _KERNEL}
        )
        assert _lines(r, "GP402") == [7], cond  # the else() is the Linux build's: it stays
        lowered = [f for f in r.findings if f.location.line == 5 and f.rule_id == "GP402"]
        assert lowered and "Windows-only branch" in lowered[0].message
    # if(NOT WIN32): the if() body is Linux's, the else() Windows'
    r = scan_files(
        tmp_path / "n", {"CMakeLists.txt": _CMAKE.format(cond="NOT WIN32"), "k.cu": _KERNEL}
    )
    assert _lines(r, "GP402") == [5]
    # taken by Windows or not: both stay
    r = scan_files(
        tmp_path / "o", {"CMakeLists.txt": _CMAKE.format(cond="WIN32 OR UNIX"), "k.cu": _KERNEL}
    )
    assert _lines(r, "GP402") == [5, 7]


def test_a_device_link_value_reaches_only_nvcc(tmp_path: Path) -> None:
    cmake = (
        "cmake_minimum_required(VERSION 3.18)\nproject(app CXX)\nadd_library(app k.cu)\n"
        'target_link_options(app PRIVATE "$<DEVICE_LINK:SHELL:-Xcompiler -Werror>")\n'
        'target_link_options(app PRIVATE "SHELL:-Xcompiler -Werror")\n'
    )
    r = scan_files(tmp_path, {"CMakeLists.txt": cmake, "k.cu": _KERNEL})
    assert _lines(r, "GP402") == [5]


_WIN_CMAKE = """\
cmake_minimum_required(VERSION 3.18)
project(tool CXX CUDA)
find_package(CUDAToolkit REQUIRED)
add_executable(tool tool.cpp)
target_link_libraries(tool PRIVATE cuda cublas)
"""
_MAKEFILE = "tool: tool.cpp\n\tg++ -o tool tool.cpp -lcuda -lcublas\n"
_DRIVER = '#include <cuda.h>\nvoid f(CUmodule* m) { cuModuleLoad(m, "k.fatbin"); }\n'


def test_a_windows_port_folder_beside_the_projects_build(tmp_path: Path) -> None:
    files = {"Makefile": _MAKEFILE, "tool.cpp": _DRIVER, "win/CMakeLists.txt": _WIN_CMAKE,
             "win/build.bat": "cmake ..\n", "win/tool.cpp": _DRIVER}  # fmt: skip
    r = scan_files(tmp_path / "a", files)
    core = _core(r)
    assert core and not [c for c in core if c[1].startswith("win/")]
    assert ("GP407", "Makefile", 2) in core  # the Linux build's own links stay
    win = [f for f in r.findings if f.location.path == "win/CMakeLists.txt"]
    assert win and all("a Windows port's file (win/" in (f.not_built or "") for f in win)
    # the project's only build is the one in win/: nothing else builds it, so it stays
    only = {k: v for k, v in files.items() if k != "Makefile"}
    assert [c for c in _core(scan_files(tmp_path / "b", only)) if c[1].startswith("win/")]


_PYPROJECT = '[project]\nname = "app"\nversion = "1"\ndependencies = ["numpy"]\n'
_TRAIN = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n"
_IMAGE = "FROM nvcr.io/nvidia/pytorch:26.03-py3\nCOPY . /app\nRUN pip install -e /app\n"


def test_only_a_cuda_base_image_does_not_block_an_installable_package(tmp_path: Path) -> None:
    files = {"pyproject.toml": _PYPROJECT, "app/train.py": _TRAIN, "Dockerfile": _IMAGE}
    r = scan_files(tmp_path / "a", files)
    assert r.verdict.value == "major work", r.verdict_reason
    assert "only its container images block (Dockerfile:1" in r.verdict_reason
    # no package: the image is how the project runs, so it blocks
    r = scan_files(tmp_path / "b", {k: v for k, v in files.items() if k != "pyproject.toml"})
    assert r.verdict.value == "blocked"
    # another blocker beside the image: blocked
    r = scan_files(tmp_path / "c", {**files, "requirements.txt": "eetq\n"})
    assert r.verdict.value == "blocked"
