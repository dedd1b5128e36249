"""Forty-fourth re-run (red team 44), findings F4, F7 and F8: a placeholder HIP twin (its
kernel under a plain ``#if`` of a macro nothing defines, under a HIP-named switch with no ROCm
build, or with a stub body) stands in for nothing (F4); a pip freeze the installer names
through a variable (``requirements-${FLAVOR}.txt``, an f-string) stays core (F7); and kernel
code in a header template's macros or in a ``.cu.m4``/``.cu.gotmpl``/``.cu.tt`` template is
listed as not read, so the scan never says READY beside it (F8).
"""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.model import ScanReport
from tests.scan.project_files import write

_VOTE = (
    "__global__ void vote(int* out, const int* in) {\n"
    "  unsigned b = __ballot_sync(0xffffffff, in[threadIdx.x] > 0);\n"
    "  if (threadIdx.x == 0) out[0] = __popc(b);\n}\n"
)
_MAKE = "all: k.o\nk.o: cuda/k.cu\n\tnvcc -c cuda/k.cu -o k.o\n"
_KERNEL = "__global__ void vote(int* out, const int* in) { out[0] = in[0]; }\n"
_PACKAGE = {
    "pyproject.toml": '[project]\nname="pkg"\nversion="0.1"\n',
    "pkg/__init__.py": "x = 1\n",
}


def _scan(root: Path, files: dict[str, str]) -> ScanReport:
    return scan_path(write(root, files), ScanOptions(jobs=1))


def _gp302(report: ScanReport) -> list[str]:
    return [
        f.severity.value
        for f in report.findings
        if f.rule_id == "GP302" and f.location.path == "cuda/k.cu"
    ]


def test_f4_a_placeholder_hip_twin_under_plain_if_hip_switch_or_stub_stands_in_for_nothing(
    tmp_path: Path,
) -> None:
    """hip/k.cu, named by no build, with `vote` under `#if VOTE_PORTED`, under
    `#ifdef HIP_VOTE_PORTED` (nothing defines either, no ROCm build), or with a stub body of
    `(void)` casts or `;`, does not hide the blocker of the cuda/k.cu the only, CUDA, build
    compiles; a live twin, or one under a macro the project defines, still stands in."""
    files = {"cuda/k.cu": _VOTE, "Makefile": _MAKE}
    placeholders = {
        "plain_if": f"#if VOTE_PORTED\n{_KERNEL}#endif\n",
        "hip_named": f"#ifdef HIP_VOTE_PORTED\n{_KERNEL}#endif\n",
        "and_chain": f"#if defined(__HIPCC__) && VOTE_PORTED\n{_KERNEL}#endif\n",
        "void_stub": "__global__ void vote(int* out, const int* in) { (void)out; (void)in; }\n",
        "semicolon": "__global__ void vote(int* out, const int* in) { ; }\n",
    }
    for name, twin in placeholders.items():
        report = _scan(tmp_path / name, {**files, "hip/k.cu": twin})
        assert "cuda/k.cu" not in report.not_built, name
        assert _gp302(report) == ["blocker"], name
        assert report.verdict.value == "blocked", name
    for name, twin in {
        "live": _KERNEL,
        "defined_here": f"#define VOTE_PORTED 1\n#if VOTE_PORTED\n{_KERNEL}#endif\n",
        "compiler_macro": f"#ifdef __HIP_PLATFORM_AMD__\n{_KERNEL}#endif\n",
    }.items():
        report = _scan(tmp_path / name, {**files, "hip/k.cu": twin})
        assert "cuda/k.cu" in report.not_built, name
        assert _gp302(report) == ["info"], name


def test_f7_a_freeze_named_through_a_variable_stays_core(tmp_path: Path) -> None:
    """requirements-cuda.txt (a pip freeze with nvidia-*-cu12 pins), installed by
    `pip install -r requirements-${FLAVOR}.txt` in install.sh or by
    f"requirements-{flavor}.txt" in a Python installer, is maybe named: its blockers count and
    the scan is blocked, not READY. A variable whose pattern cannot match it moves it apart."""
    freeze = (
        "torch==2.1.0\nnvidia-cublas-cu12==12.1.3.1\nnvidia-cudnn-cu12==8.9.2.26\n"
        "nvidia-nccl-cu12==2.18.1\ntriton==2.1.0\n"
    ) + "".join(f"pkg{i}==1.{i}.0\n" for i in range(20))
    base = {
        "setup.py": 'from setuptools import setup\nsetup(name="pkg", packages=["pkg"])\n',
        "pkg/__init__.py": "",
        "requirements-cuda.txt": freeze,
    }
    installers = {
        "shell": {
            "install.sh": "#!/bin/sh\nFLAVOR=${1:-cuda}\n"
            "pip install -r requirements-${FLAVOR}.txt\n"
        },
        "python": {
            "tools/install.py": 'import subprocess\nflavor = "cuda"\n'
            'subprocess.run(["pip", "install", "-r", f"requirements-{flavor}.txt"])\n'
        },
    }
    for name, extra in installers.items():
        report = _scan(tmp_path / name, {**base, **extra})
        assert report.verdict.value == "blocked", name
    other = {"install.sh": "pip install -r reqs/${FLAVOR}.txt\npip install -e .\n"}
    assert _scan(tmp_path / "other", {**base, **other}).verdict.value == "ready"


def test_f8_kernel_code_in_header_template_macros_or_any_template_suffix_is_listed(
    tmp_path: Path,
) -> None:
    """A pure-Python package with a warp-32 reduction in a header template's `#define`
    (`reduce.cuh.in`, no build configures it), or a kernel in `add.cu.m4`, `.cu.gotmpl`,
    `.cu.tt` or `.cu.in.in`, is not READY: the file is listed as not read. A config
    header's qualifier alias and a backup copy (`.cu.bak`) are not listed."""
    cases = {
        "pkg/kernels/reduce.cuh.in": "#pragma once\n#define WARP_REDUCE(v) do { v += "
        "__shfl_xor_sync(0xffffffff, v, 16); } while (0)\n",
        "pkg/kernels/add.cu.m4": "__global__ void k(float* x) { x[threadIdx.x] = 1; }\n",
        "pkg/kernels/add.cu.gotmpl": "__global__ void k(float* x) { x[threadIdx.x] = 1; }\n",
        "pkg/kernels/add.cu.tt": "__global__ void k(float* x) { x[threadIdx.x] = 1; }\n",
        "pkg/kernels/add.cu.in.in": "__global__ void k(float* x) { x[threadIdx.x] = 1; }\n",
    }
    for i, (rel, text) in enumerate(cases.items()):
        report = _scan(tmp_path / str(i), {**_PACKAGE, rel: text})
        assert rel in {s.path for s in report.skipped}, rel
        assert report.verdict.value != "ready", rel
    plain = {
        "pkg/config.h.in": "#define PKG_EXEC __device__ __host__\n#define PKG_VERSION 1\n",
        "pkg/old/add.cu.bak": "__global__ void k(float* x) { x[threadIdx.x] = 1; }\n",
    }
    report = _scan(tmp_path / "plain", {**_PACKAGE, **plain})
    assert not {s.path for s in report.skipped} & set(plain)
    assert report.verdict.value == "ready"
