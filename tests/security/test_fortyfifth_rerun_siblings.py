"""Forty-fifth re-run (red team 45), findings F13, F3, F4 and F11: a HIP twin stands in for a
CUDA file only with real ROCm code, also where the only build compiles the CUDA file through
``file(GLOB)`` (F13: a ``// TODO`` twin); a stub body spelled with commas, empty blocks or a
trap is no code (F3); a macro named only in a comment defines nothing, so ``#if NAME`` stays
dead (F4); and a ROCm target setting that is only refused, cleared or unset names no AMD
target, so GP403 stays (F11).
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
_NAMED = _CUDA_ONLY + "add_library(x src/cuda/k.cu)\n"
_GLOB = _CUDA_ONLY + "file(GLOB S src/cuda/*.cu)\nadd_library(x ${S})\n"


def _scan(root: Path, files: dict[str, str]) -> ScanReport:
    return scan_path(write(root, files), ScanOptions(jobs=1))


def _rules(report: ScanReport, rule: str) -> list[str]:
    return [f.severity.value for f in report.findings if f.rule_id == rule]


def test_a_comment_only_twin_does_not_stand_in_for_a_globbed_cuda_source(
    tmp_path: Path,
) -> None:
    report = _scan(
        tmp_path / "plain",
        {"src/cuda/k.cu": _VOTE, "src/rocm/k.cu": "// TODO\n", "CMakeLists.txt": _GLOB},
    )
    assert report.verdict.value == "blocked"
    assert "src/cuda/k.cu" not in report.not_built
    cutlass = {"CMakeLists.txt": _GLOB}
    for n in "abc":
        cutlass[f"src/cuda/{n}.cu"] = (
            "#include <cutlass/gemm/device/gemm.h>\n"
            f"__global__ void g_{n}(float* x) {{ x[0] = 1.f; }}\n"
        )
        cutlass[f"src/rocm/{n}.cu"] = "// TODO\n"
    assert _rules(_scan(tmp_path / "cutlass", cutlass), "GP315") == ["blocker"] * 3
    # a twin with a working kernel of its own still stands in for the globbed file
    ported = "#include <hip/hip_runtime.h>\n__global__ void vote(int *o, int n){ o[0] = n; }\n"
    report = _scan(
        tmp_path / "ported",
        {"src/cuda/k.cu": _VOTE, "src/rocm/k.cu": ported, "CMakeLists.txt": _GLOB},
    )
    assert "src/cuda/k.cu" in report.not_built


def test_a_stub_twin_with_commas_blocks_or_a_trap_is_no_rocm_code(tmp_path: Path) -> None:
    stubs = {
        "comma": "(void)o, (void)n;",
        "blocks": "{ {} }",
        "trap": "__builtin_trap();",
        "assert": 'assert(false && "not ported"); (void)o; (void)n;',
    }
    for name, body in stubs.items():
        hip = f"#include <hip/hip_runtime.h>\n__global__ void vote(int *o, int n){{ {body} }}\n"
        report = _scan(
            tmp_path / name,
            {"src/cuda/k.cu": _VOTE, "src/hip/k.cu": hip, "CMakeLists.txt": _NAMED},
        )
        assert report.verdict.value == "blocked", name
        assert "src/cuda/k.cu" not in report.not_built, name


def test_a_macro_named_only_in_a_comment_leaves_its_if_branch_dead(tmp_path: Path) -> None:
    for name, note in {
        "block": "/* TODO: build with VOTE_PORTED once the kernel is ported */\n",
        "trailing": "int ready = 0; // set VOTE_PORTED when ported\n",
        "string": 'const char* why = "VOTE_PORTED is not set";\n',
    }.items():
        hip = (
            f"#include <hip/hip_runtime.h>\n{note}#if VOTE_PORTED\n"
            "__global__ void vote(int *o, int n){ o[0] = n; }\n#endif\n"
        )
        report = _scan(
            tmp_path / name,
            {"src/cuda/k.cu": _VOTE, "src/hip/k.cu": hip, "CMakeLists.txt": _NAMED},
        )
        assert report.verdict.value == "blocked", name


def test_a_rocm_setting_only_refused_or_cleared_names_no_amd_target(tmp_path: Path) -> None:
    head = _CUDA_ONLY + "set(CMAKE_CUDA_ARCHITECTURES 80)\n"
    refusals = {
        "fatal": 'if(GPU_TARGETS)\n  message(FATAL_ERROR "AMD GPUs are not supported")\nendif()\n',
        "emptied": 'set(GPU_TARGETS "")\n',
        "unset": "unset(GPU_TARGETS)\n",
        "warned": 'if(DEFINED GPU_TARGETS)\n  message(WARNING "ignored")\nendif()\n',
        "loop": 'foreach(a IN LISTS GPU_TARGETS)\n  message(FATAL_ERROR "no ${a}")\nendforeach()\n',
    }
    kernel = "__global__ void k(float*x){x[0]=1;}\n"
    tail = "add_library(x k.cu)\n"
    for name, text in refusals.items():
        report = _scan(tmp_path / name, {"k.cu": kernel, "CMakeLists.txt": head + text + tail})
        assert _rules(report, "GP403"), name
    # a setting the build uses still names an AMD target
    used = "if(NOT DEFINED GPU_TARGETS)\n  set(GPU_TARGETS gfx942)\nendif()\n"
    report = _scan(tmp_path / "used", {"k.cu": kernel, "CMakeLists.txt": head + used + tail})
    assert not _rules(report, "GP403")
