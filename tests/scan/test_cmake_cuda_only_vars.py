"""Issue 24 (fifth round): a CMake variable the project sets true only in a branch a ROCm
build never takes (hoomd-blue's CUSOLVER_AVAILABLE, set in its nvcc branch) is false on
ROCm, so what ``if(VAR)`` adds elsewhere is not configured there either."""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from gpuport.scan.model import ScanReport
from gpuport.scan.project.build_cmake_vars import cuda_only_vars, false_var_ranges
from gpuport.scan.project.on_route import OFF_ROUTE
from tests.scan.project_files import scan_files

SETUP = (
    'option(ENABLE_HIP "GPU" OFF)\n'
    'if (ENABLE_HIP AND HIP_PLATFORM STREQUAL "nvcc")\n'
    "    set(SOLVER_OK TRUE)\n"
    "else()\n"
    "    set(SOLVER_OK FALSE)\n"
    "endif()\n"
)
USE = (
    "add_library(md md.cc)\n"
    "if (SOLVER_OK)\n"
    "    target_link_libraries(md PUBLIC CUDA::cusolver)\n"
    "else()\n"
    "    target_link_libraries(md PUBLIC base)\n"
    "endif()\n"
    "if (ENABLE_HIP)\n    target_compile_definitions(md PRIVATE HAS_GPU)\nendif()\n"
)


def _links(report: ScanReport) -> list[Severity]:
    """GP407 on line 3; a finding lowered only because the ROCm route is not shown to take
    its branch (issue 24, eighth round; an ``if()`` of unknown value) counts as kept: no
    CUDA-only variable lowered it."""
    return [
        f.default_severity or f.severity
        if OFF_ROUTE in f.message and f.not_built is None
        else f.severity
        for f in report.findings
        if f.rule_id == "GP407" and f.location.line == 3
    ]


def test_a_branch_on_a_cuda_only_variable_is_not_configured_on_rocm(tmp_path: Path) -> None:
    files = {"cmake/Setup.cmake": SETUP, "md/CMakeLists.txt": USE, "md/md.cc": "int x;\n"}
    report = scan_files(tmp_path, files)
    found = [f for f in report.findings if f.rule_id == "GP407" and f.location.line == 3]
    assert found and all(f.severity is Severity.INFO for f in found)
    assert "SOLVER_OK is set true only at cmake/Setup.cmake:3" in found[0].message


def test_a_variable_also_set_elsewhere_or_by_the_user_still_counts(tmp_path: Path) -> None:
    elsewhere = SETUP + "if (WANT_SOLVER)\n    set(SOLVER_OK ON)\nendif()\n"
    files = {"cmake/Setup.cmake": elsewhere, "md/CMakeLists.txt": USE, "md/md.cc": "int x;\n"}
    assert Severity.MAJOR in _links(scan_files(tmp_path, files))
    user = SETUP + 'option(SOLVER_OK "use cuSOLVER" OFF)\n'
    files = {"cmake/Setup.cmake": user, "md/CMakeLists.txt": USE, "md/md.cc": "int x;\n"}
    assert Severity.MAJOR in _links(scan_files(tmp_path / "b", files))


def test_ranges_cover_the_false_branch_only() -> None:
    ranges = [(3, 3, "cmake/Setup.cmake:2")]
    got = cuda_only_vars({"cmake/Setup.cmake": SETUP}, {"cmake/Setup.cmake": ranges})
    assert list(got) == ["SOLVER_OK"]
    spans = false_var_ranges(USE, got)
    assert [(a, b) for a, b, _ in spans] == [(3, 3)]
    assert false_var_ranges(USE.replace("if (SOLVER_OK)", "if (NOT SOLVER_OK)"), got) == []
