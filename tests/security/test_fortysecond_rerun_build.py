"""Forty-second re-run (red team 42), findings F2, F3, F18 and F21: a configure call in a
comment configures no header template (F2), a HIP twin whose kernels sit under ``#if 0``
stands in for nothing (F3), a gfx word in a message is no AMD target (F18), and a chain of
configured header templates is followed in linear time (F21).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.model import ScanReport
from gpuport.scan.project import view
from tests.scan.project_files import write

_CMAKE = "cmake_minimum_required(VERSION 3.18)\nproject(x LANGUAGES CXX CUDA)\n"
_BALLOT = (
    "__global__ void vote(int *out, const int *in) {\n"
    "  unsigned b = __ballot_sync(0xffffffffu, in[threadIdx.x] > 0);\n"
    "  out[threadIdx.x] = b;\n}\n"
)
_SHIM = (
    "#pragma once\n#if defined(__HIP_PLATFORM_AMD__)\n"
    "#define __ballot_sync(m, p) __ballot(p)\n#endif\n"
)


def _scan(root: Path, files: dict[str, str]) -> ScanReport:
    return scan_path(write(root, files), ScanOptions(jobs=1))


def _gp302(report: ScanReport, path: str) -> list[str]:
    return [
        f.severity.value
        for f in report.findings
        if f.rule_id == "GP302" and f.location.path == path
    ]


def test_f2_a_configure_call_in_a_comment_configures_no_header_template(tmp_path: Path) -> None:
    files = {
        "src/kernel.cu": '#include "warp_compat.h"\n' + _BALLOT,
        "cmake/warp_compat.h.in": _SHIM,
    }
    live = "configure_file(cmake/warp_compat.h.in ${CMAKE_BINARY_DIR}/warp_compat.h)\n"
    for i, comment in enumerate(("# " + live, "#[[\n" + live + "]]\n")):
        cmake = _CMAKE + comment + "add_library(k src/kernel.cu)\n"
        report = _scan(tmp_path / f"c{i}", {**files, "CMakeLists.txt": cmake})
        assert _gp302(report, "src/kernel.cu") == ["blocker"], comment
    # configure.ac: a `dnl` or `#` comment is no AC_CONFIG_HEADERS either
    cmake = _CMAKE + "add_library(k src/kernel.cu)\n"
    call = "AC_CONFIG_HEADERS([warp_compat.h:cmake/warp_compat.h.in])"
    for i, line in enumerate(("dnl " + call, "# " + call)):
        ac = f"AC_INIT([x], [1])\n{line}\nAC_OUTPUT\n"
        got = {**files, "CMakeLists.txt": cmake, "configure.ac": ac}
        assert _gp302(_scan(tmp_path / f"a{i}", got), "src/kernel.cu") == ["blocker"], line
    # the live calls (a `#` inside m4 quotes is text) still configure the project's shim
    cmake_live = {**files, "CMakeLists.txt": _CMAKE + live + "add_library(k src/kernel.cu)\n"}
    assert _gp302(_scan(tmp_path / "live_cmake", cmake_live), "src/kernel.cu") == ["info"]
    ac = f"AC_INIT([x], [1])\nAC_MSG_NOTICE([# of warps]) {call}\nAC_OUTPUT\n"
    ac_live = {**files, "CMakeLists.txt": cmake, "configure.ac": ac}
    assert _gp302(_scan(tmp_path / "live_ac", ac_live), "src/kernel.cu") == ["info"]


def test_f3_a_hip_twin_whose_kernels_are_compiled_out_stands_in_for_nothing(
    tmp_path: Path,
) -> None:
    cmake = _CMAKE + "add_library(k cuda/k.cu)\n"
    kernel = "__global__ void vote(int *out, const int *in) { out[0] = in[0]; }\n"
    placeholder = f"// HIP port: not written yet\n#if 0\n{kernel}#endif\n"
    files = {"CMakeLists.txt": cmake, "cuda/k.cu": _BALLOT, "hip/k.cu": placeholder}
    report = _scan(tmp_path / "a", files)
    assert "cuda/k.cu" not in report.not_built
    assert _gp302(report, "cuda/k.cu") == ["blocker"]
    assert report.verdict.value == "blocked"
    # the same kernel in a live branch (the #else of an #if 0) is the port it names
    ported = f"#if 0\nint unused;\n#else\n{kernel}#endif\n"
    assert "cuda/k.cu" in _scan(tmp_path / "b", {**files, "hip/k.cu": ported}).not_built


def _gp403(root: Path, cmake: str) -> list[str]:
    report = _scan(root, {"CMakeLists.txt": cmake, "k.cu": "__global__ void k(float *x) {}\n"})
    return [f.severity.value for f in report.findings if f.rule_id == "GP403"]


def test_f18_a_gfx_word_in_a_message_is_no_amd_target(tmp_path: Path) -> None:
    head = _CMAKE + "set(CMAKE_CUDA_ARCHITECTURES 80 90)\nadd_library(k k.cu)\n"
    said = (
        'message(STATUS "AMD gfx942 is not supported by this project")\n',
        "MESSAGE(WARNING AMD gfx90a is not supported)\n",
        'option(K_AMD "Build for an AMD GPU such as gfx942 (not yet working)" OFF)\n',
    )
    for i, text in enumerate(said):
        assert _gp403(tmp_path / f"m{i}", head + text) == ["major"], text
    # a list of AMD targets the build can use still counts
    assert _gp403(tmp_path / "list", head + "set(K_AMD_TARGETS gfx90a gfx942)\n") == []


def test_f21_a_chain_of_configured_header_templates_is_followed_in_linear_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,500 templates, each including the next one's header, all configured: the chain is
    followed to its end (the last one's shim covers the blocker) in well under the seconds a
    pass per template took."""
    n = 2500
    files = {"k.cu": '#include "h0.h"\n' + _BALLOT}
    configure = "".join(f"configure_file(t/h{i}.h.in h{i}.h)\n" for i in range(n))
    files["CMakeLists.txt"] = _CMAKE + "add_library(k k.cu)\n" + configure
    for i in range(n):
        body = f'#include "h{i + 1}.h"\n' if i + 1 < n else _SHIM
        files[f"t/h{i}.h.in"] = f"#pragma once\n{body}#define V{i} {i}\n"
    spent: list[float] = []
    configured = view.configured_templates

    def timed(*args: object) -> object:
        start = time.perf_counter()
        out = configured(*args)  # type: ignore[arg-type]
        spent.append(time.perf_counter() - start)
        return out

    monkeypatch.setattr(view, "configured_templates", timed)
    report = _scan(tmp_path / "a", files)
    assert _gp302(report, "k.cu") == ["info"]
    assert spent and sum(spent) < 2.0, spent


def test_f18_a_gfx_word_in_a_setup_py_sentence_is_no_amd_target(tmp_path: Path) -> None:
    """The same class in setup.py, whose strings were joined before the gfx search."""
    setup = (
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        "print({said!r})\n"
        "setup(name='k', ext_modules=[CUDAExtension('k', ['k.cu'],\n"
        "      extra_compile_args={{'nvcc': ['-gencode=arch=compute_80,code=sm_80']}})],\n"
        "      cmdclass={{'build_ext': BuildExtension}})\n"
    )
    kernel = "__global__ void k(float* x) { x[threadIdx.x] = 0; }\n"

    def gp403(root: Path, said: str) -> list[str]:
        r = _scan(root, {"setup.py": setup.format(said=said), "k.cu": kernel})
        return [f.severity.value for f in r.findings if f.rule_id == "GP403"]

    # GP403 reported (folded into the line's GP402): the sentence names no target
    assert gp403(tmp_path / "s", "gfx942 is not supported by this build") != []
    assert gp403(tmp_path / "t", "gfx942") == []  # a bare target the build may use
