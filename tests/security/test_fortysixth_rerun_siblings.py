"""Forty-sixth re-run (red team 46), findings F5 and F8: a HIP twin stands in for a globbed
CUDA source only by defining its kernels (or a build naming it), not by holding as many
working functions (F5: a ``return HIP_VERSION;`` placeholder); and a ROCm target setting that
is refused and then unset, or only measured (``list(LENGTH ...)``) into a refusal, names no AMD
target, so GP403 stays (F8).
"""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.model import ScanReport
from tests.scan.project_files import write

_VOTE = (
    "__global__ void vote(int *o, int n){ unsigned b = __ballot_sync(0xffffffff, "
    "o[threadIdx.x] > n); o[0] = __popc(b); }\n"
)
_CUDA_ONLY = "cmake_minimum_required(VERSION 3.18)\nproject(x LANGUAGES CXX CUDA)\n"
_GLOB = _CUDA_ONLY + "file(GLOB S src/cuda/*.cu)\nadd_library(x ${S})\n"


def _scan(root: Path, files: dict[str, str]) -> ScanReport:
    return scan_path(write(root, files), ScanOptions(jobs=1))


def _rules(report: ScanReport, rule: str) -> list[str]:
    return [f.severity.value for f in report.findings if f.rule_id == rule]


def test_a_twin_with_unrelated_working_functions_does_not_stand_in_for_a_globbed_kernel(
    tmp_path: Path,
) -> None:
    placeholders = {
        "version": "static int unused_placeholder() { return HIP_VERSION; }\n",
        "two": (
            "int helper_a(int x) { return x + 1; }\n"
            "__global__ void other(int *o) { o[0] = helper_a(o[0]); }\n"
        ),
    }
    for name, body in placeholders.items():
        hip = f"#include <hip/hip_runtime.h>\n// TODO: port vote()\n{body}"
        report = _scan(
            tmp_path / name,
            {"src/cuda/k.cu": _VOTE, "src/rocm/k.cu": hip, "CMakeLists.txt": _GLOB},
        )
        assert report.verdict.value == "blocked", name
        assert "src/cuda/k.cu" not in report.not_built, name
        assert "blocker" in _rules(report, "GP302"), name
    # a twin that defines the kernel with a working body still stands in
    ported = "#include <hip/hip_runtime.h>\n__global__ void vote(int *o, int n){ o[0] = n; }\n"
    report = _scan(
        tmp_path / "ported",
        {"src/cuda/k.cu": _VOTE, "src/rocm/k.cu": ported, "CMakeLists.txt": _GLOB},
    )
    assert "src/cuda/k.cu" in report.not_built
    # so does one whose kernel differs only by its vendor word (kokkos' desul lock arrays)
    cuda = _VOTE.replace("void vote(", "void vote_cuda_kernel(")
    hip = ported.replace("void vote(", "void vote_hip_kernel(")
    report = _scan(
        tmp_path / "vendor",
        {"src/cuda/k.cu": cuda, "src/rocm/k.cu": hip, "CMakeLists.txt": _GLOB},
    )
    assert "src/cuda/k.cu" in report.not_built


def test_a_rocm_setting_refused_then_unset_or_only_measured_names_no_amd_target(
    tmp_path: Path,
) -> None:
    head = _CUDA_ONLY + "set(CMAKE_CUDA_ARCHITECTURES 80)\n"
    refusals = {
        "unset": (
            "if(GPU_TARGETS)\n"
            '  message(WARNING "GPU_TARGETS ignored: this project is CUDA only")\n'
            "  unset(GPU_TARGETS CACHE)\nendif()\n"
        ),
        "cleared": (
            'if(DEFINED AMDGPU_TARGETS)\n  set(AMDGPU_TARGETS "" CACHE STRING "" FORCE)\nendif()\n'
        ),
        "length": (
            "list(LENGTH GPU_TARGETS n)\nif(n GREATER 0)\n"
            '  message(FATAL_ERROR "AMD GPUs are not supported")\nendif()\n'
        ),
        "find": (
            "list(FIND GPU_TARGETS gfx942 i)\nif(NOT i EQUAL -1)\n"
            '  message(FATAL_ERROR "AMD GPUs are not supported")\nendif()\n'
        ),
    }
    kernel = "__global__ void k(float*x){x[0]=1;}\n"
    tail = "add_library(x k.cu)\n"
    for name, text in refusals.items():
        report = _scan(tmp_path / name, {"k.cu": kernel, "CMakeLists.txt": head + text + tail})
        assert _rules(report, "GP403"), name
    # a setting whose value the build uses still names an AMD target
    used = {
        "default": "if(NOT DEFINED GPU_TARGETS)\n  set(GPU_TARGETS gfx942)\nendif()\n",
        "flows": (
            "list(LENGTH GPU_TARGETS n)\nif(n GREATER 0)\n"
            "  set(CMAKE_HIP_ARCHITECTURES ${GPU_TARGETS})\nendif()\n"
        ),
    }
    for name, text in used.items():
        report = _scan(tmp_path / name, {"k.cu": kernel, "CMakeLists.txt": head + text + tail})
        assert not _rules(report, "GP403"), name
