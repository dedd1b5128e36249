"""Issue 23: the thirty-ninth re-run (full, on e3b526f, a nineteenth reviewer): the findings in
the port engine, assess's settings and hipify's annotations (the others: the
``test_thirtyninth_rerun_*.py`` files beside this one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.errors import GpuportError
from gpuport.hipify.annotate import annotate
from gpuport.models import Location, Severity
from gpuport.scan.finding import Finding
from tests.port.helpers import project, run

_CMAKE = (
    "cmake_minimum_required(VERSION 3.18)\nproject(demo LANGUAGES CXX)\n"
    "find_package(CUDAToolkit REQUIRED)\nenable_language(CUDA)\nadd_library(k kern.cu)\n"
    "target_link_libraries(k CUDA::cudart)\n"
)


def test_f21_a_file_where_a_created_files_folder_goes_stops_before_anything_is_written(
    tmp_path: Path,
) -> None:
    root = project(
        tmp_path,
        {
            "CMakeLists.txt": _CMAKE,
            "kern.cu": "#include <cuda_runtime.h>\n__global__ void k(){}\n",
            "cmake": "not a folder\n",
        },
    )
    with pytest.raises(GpuportError, match="cmake is a file, not a folder"):
        run(root, apply=True, verify=False)
    assert (root / "CMakeLists.txt").read_text() == _CMAKE  # nothing half-written
    assert not (root / "CMakeLists.txt.gpuport.bak").exists()


def test_f24_a_projects_own_exclude_is_said(tmp_path: Path) -> None:
    from gpuport.assess.config import load_settings

    (tmp_path / "gpuport.toml").write_text('exclude = ["src/"]\n')
    settings = load_settings(tmp_path)
    assert list(settings.exclude) == ["src/"]
    assert any("exclude = [src/]" in n and "gpuport.toml" in n for n in settings.notes), (
        settings.notes
    )


def test_f27_a_backslash_then_blanks_continues_the_line_for_annotations() -> None:
    text = (
        "#define UNUSED_HELPERS \\ \n"
        "__device__ int f(int v){ return __shfl_sync(0xffffffff, v, 0); }\n"
        "__global__ void k(int* x){ x[0] = 1; }\n"
    )
    hazard = Finding(
        rule_id="GP302",
        title="32-bit mask",
        severity=Severity.BLOCKER,
        location=Location(path="k.cu", line=2),
        message="m",
        fix="f",
    )
    out = annotate(text, [hazard])
    # the comment goes above the #define, never between it and its continuation
    assert out.startswith("// gpuport: GP302")
    assert "#define UNUSED_HELPERS \\ \n__device__ int f" in out
