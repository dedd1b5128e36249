"""Forty-sixth re-run (red team 46), findings F11 and F9.

F11: each ``[!a]`` of a .gitignore became a class of 254 bytes written out, so a 132 KB nested
.gitignore spent the walk's ignore budget and gpuport stopped walking: the CUDA file walked
after it was never read and the verdict dropped from blocked to major work. Negated classes
are now compact, the patterns one .gitignore applies are bounded, and a spent budget fails
open (what the patterns would ignore is scanned, never hidden).

F9: a header template (``config.cuh.in``) whose PTX string and ``asm`` sit in two macros is
kernel code nothing judges: ``ready`` needs evidence, as with the one-macro spelling.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.model import Verdict
from tests.scan.project_files import write

_CMAKE = "cmake_minimum_required(VERSION 3.18)\nproject(x LANGUAGES CXX CUDA)\n"
_BLOCKED_KERNEL = (
    "#include <cuda_runtime.h>\n"
    "__global__ void k(int *a){ unsigned m = __ballot_sync(0xffffffff, a[threadIdx.x]); a[0]=m;"
    ' asm volatile("mov.u32 %0, %%laneid;" : "=r"(a[1])); }\n'
    "int main(){ k<<<1,32>>>(nullptr); return 0; }\n"
)


def test_f11_a_gitignore_of_negated_classes_is_cheap_and_hides_no_blocker(tmp_path: Path) -> None:
    """About 250 KB of ``x<i>[!a][!a]...`` lines in ``a/.gitignore`` (walked before ``src/``):
    compiled in well under the budget, ``src/k.cu`` is read and the scan stays blocked."""
    lines = "".join(f"x{i}" + "[!a]" * 40 + "\n" for i in range(1_500))
    assert len(lines) > 240_000
    root = write(
        tmp_path / "p",
        {
            "CMakeLists.txt": _CMAKE + "add_executable(x src/k.cu)\n",
            "src/k.cu": _BLOCKED_KERNEL,
            "a/.gitignore": lines,
            "a/x0bbbb.txt": "",
        },
    )
    started = time.process_time()
    report = scan_path(root, ScanOptions(jobs=1))
    took = time.process_time() - started
    assert report.verdict is Verdict.BLOCKED, (report.verdict, report.skipped[:3])
    assert any(f.location.path == "src/k.cu" for f in report.findings)
    assert not any("gitignore patterns took" in s.reason for s in report.skipped)
    assert took < 10.0, took


def test_f11_a_spent_ignore_budget_scans_the_rest_of_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the ignore budget runs out the walk fails open: the rest of the project is read
    (even what the patterns would ignore), and the spent budget is said, never a blocker
    hidden by it."""
    from gpuport.scan.project import files

    monkeypatch.setattr(files, "IGNORE_BUDGET_S", 0.0)
    root = write(
        tmp_path / "p",
        {
            ".gitignore": "gen/\n*.tmp\n",
            "CMakeLists.txt": _CMAKE + "add_executable(x src/k.cu)\n",
            "gen/g.cu": _BLOCKED_KERNEL,
            "src/k.cu": _BLOCKED_KERNEL,
        },
    )
    report = scan_path(root, ScanOptions(jobs=1))
    assert report.verdict is Verdict.BLOCKED, (report.verdict, report.skipped[:3])
    paths = {f.location.path for f in report.findings}
    assert {"src/k.cu", "gen/g.cu"} <= paths, paths
    spent = [s for s in report.skipped if "gitignore patterns took" in s.reason]
    assert spent and all(s.path.endswith((".gitignore", "--exclude")) for s in spent), spent


def test_f11_a_reinclusion_left_out_for_cost_hides_nothing(tmp_path: Path) -> None:
    """``*`` then, past the lines a .gitignore may apply, ``!*/`` and ``!*.cu`` (git keeps
    every ``.cu``): leaving the ``!`` lines out alone hid the whole project; the file is now
    left out whole and said, so the kernel is read."""
    gitignore = "*\n" + "\n" * 10_000 + "!*/\n!*.cu\n!CMakeLists.txt\n"
    root = write(
        tmp_path / "p",
        {
            ".gitignore": gitignore,
            "CMakeLists.txt": _CMAKE + "add_executable(x src/k.cu)\n",
            "src/k.cu": _BLOCKED_KERNEL,
        },
    )
    report = scan_path(root, ScanOptions(jobs=1))
    assert report.verdict is Verdict.BLOCKED, (report.verdict, report.skipped[:3])
    assert any(s.path == ".gitignore" for s in report.skipped), report.skipped


def test_f9_ptx_split_over_two_macros_of_a_header_template_keeps_ready_off(
    tmp_path: Path,
) -> None:
    """``#define PTX_LANEID "mov.u32 ..."`` and ``#define LANE_ID(x) asm volatile(PTX_LANEID
    ...)`` in ``config.cuh.in``: the template is listed as not judged and the scan is not
    ready."""
    root = write(
        tmp_path / "p",
        {
            "config.cuh.in": (
                '#pragma once\n#define VERSION "@PROJECT_VERSION@"\n'
                '#define PTX_LANEID "mov.u32 %0, %%laneid;"\n'
                '#define LANE_ID(x) asm volatile(PTX_LANEID : "=r"(x))\n'
            ),
            "k.cu": (
                '#include "config.cuh"\n__global__ void k(int *o){ int l; LANE_ID(l); o[0] = l; }\n'
            ),
            "CMakeLists.txt": (
                "cmake_minimum_required(VERSION 3.18)\nproject(x VERSION 1.0 LANGUAGES CXX)\n"
                "configure_file(config.cuh.in config.cuh)\nfind_package(hip REQUIRED)\n"
                "set_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\nadd_library(x k.cu)\n"
                "set(GPU_TARGETS gfx942)\n"
            ),
        },
    )
    report = scan_path(root, ScanOptions(jobs=1))
    assert report.verdict is not Verdict.READY, report.verdict_reason
    assert any(s.path == "config.cuh.in" for s in report.skipped), report.skipped
