"""Forty-third re-run (red team 43), findings F2 and F6: a placeholder HIP twin (an empty
body, or its kernel under a project macro nothing defines) stands in for nothing (F2), and
GPU kernel templates under any template engine's suffix, header templates a build configures
(``k.cuh.in``) and templates holding only warp intrinsics are listed as not read, so the scan
never says READY beside them (F6).
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
_KERNEL = "__global__ void vote(int* out, const int* in) { out[0] = in[threadIdx.x]; }\n"


def _scan(root: Path, files: dict[str, str]) -> ScanReport:
    return scan_path(write(root, files), ScanOptions(jobs=1))


def _gp302(report: ScanReport) -> list[str]:
    return [
        f.severity.value
        for f in report.findings
        if f.rule_id == "GP302" and f.location.path == "cuda/k.cu"
    ]


def test_f2_an_empty_or_never_compiled_hip_twin_stands_in_for_nothing(tmp_path: Path) -> None:
    """hip/k.cu, which no build names, holding `vote` with an empty body, or its real body
    under `#ifdef VOTE_PORTED` (defined nowhere), does not hide the blocker of the
    cuda/k.cu the only, CUDA, build compiles; the same kernel with a body, live, does."""
    files = {"cuda/k.cu": _VOTE, "Makefile": _MAKE}
    placeholders = {
        "empty": "__global__ void vote(int* out, const int* in) { /* TODO port */ }\n",
        "return": "__global__ void vote(int* out, const int* in) { return; }\n",
        "ifdef": f"#ifdef VOTE_PORTED\n{_KERNEL}#endif\n",
        "defined": f"#if defined(VOTE_PORTED)\n{_KERNEL}#endif\n",
    }
    for name, twin in placeholders.items():
        report = _scan(tmp_path / name, {**files, "hip/k.cu": twin})
        assert "cuda/k.cu" not in report.not_built, name
        assert _gp302(report) == ["blocker"], name
        assert report.verdict.value == "blocked", name
    # a real port stands in, and so does the macro branch once the project defines the macro
    for name, twin in {
        "live": _KERNEL,
        "defined_here": f"#define VOTE_PORTED 1\n#ifdef VOTE_PORTED\n{_KERNEL}#endif\n",
        "else_branch": f"#ifdef VOTE_PORTED\nint unused;\n#else\n{_KERNEL}#endif\n",
    }.items():
        report = _scan(tmp_path / name, {**files, "hip/k.cu": twin})
        assert "cuda/k.cu" in report.not_built, name
        assert _gp302(report) == ["info"], name


def test_f6_kernel_templates_of_any_engine_or_warp_only_are_listed_not_ready(
    tmp_path: Path,
) -> None:
    """A pure-Python package whose kernels are a configure_file header (`add.cuh.in`), a
    Mustache/Nunjucks/Tera/Handlebars/`.mak` template, or a Mako macro with only a warp-32
    shuffle and `warpSize`, is not READY: each template is listed as not read."""
    base = {
        "pyproject.toml": '[project]\nname="pkg"\nversion="0.1"\n',
        "pkg/__init__.py": "x = 1\n",
    }
    kernel = "__global__ void k(float* x) { x[threadIdx.x] = 1; }\n"
    shuffle = (
        '<%pyfr:macro name="reduce" params="v">\n'
        "    v += __shfl_xor_sync(0xffffffff, v, 16);\n"
        "    if ((tid % warpSize) == 0) atomicAdd(out, v);\n"
        "</%pyfr:macro>\n"
    )
    cases = {
        "pkg/kernels/add.cuh.in": kernel,
        "pkg/kernels/add.cu.mustache": kernel,
        "pkg/kernels/add.cu.njk": kernel,
        "pkg/kernels/add.cu.tera": kernel,
        "pkg/kernels/add.cu.hbs": kernel,
        "pkg/kernels/add.mak": kernel,
        "pkg/kernels/add.cpp.in": kernel,
        "pkg/kernels/reduce.mako": shuffle,
    }
    for i, (rel, text) in enumerate(cases.items()):
        report = _scan(tmp_path / str(i), {**base, rel: text})
        assert rel in {s.path for s in report.skipped}, rel
        assert report.verdict.value != "ready", rel
    # a configured header's macros alone are no kernel code, and a template with no GPU
    # code is no kernel: the package stays ready
    plain = {
        "pkg/config.h.in": "#define PKG_EXEC __device__ __host__\n#define PKG_VERSION 1\n",
        "pkg/page.mustache": "<p>{{title}}</p>\n",
    }
    report = _scan(tmp_path / "plain", {**base, **plain})
    assert not {s.path for s in report.skipped} & set(plain)
    assert report.verdict.value == "ready"
