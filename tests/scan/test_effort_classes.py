"""Causes of inflated effort on ROCm-supporting projects (issue 13, DeepSpeed and torchao):
Triton PTX that only synchronizes, headers only CUDA-only files include, flags that keep
their default on ROCm, CUDA_HOME tests that are false there."""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.project.build_setup_ast import setup_uses
from gpuport.scan.project.on_route import OFF_ROUTE


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


ASM = '''import triton
import triton.language as tl


@triton.jit
def {name}():
    return tl.inline_asm_elementwise(
        """{asm}""", "=r", [], dtype=tl.int32, is_pure=False, pack=1
    )
'''
SIGNAL = """
{
    .reg .u32   %tmp32_<1>;
    .reg .pred  %p<1>;
    send_signal:
        atom.global.release.sys.cas.b32 %tmp32_0, [$1], 0, 1;
        setp.eq.u32 %p0, %tmp32_0, 0;
        @!%p0 bra send_signal;
}
"""


def test_synchronization_ptx_is_one_job_per_file(tmp_path: Path) -> None:
    sync = "\n".join(
        ASM.format(name=f"f{i}", asm=asm)
        for i, asm in enumerate(
            [SIGNAL, SIGNAL.replace("release", "relaxed"), "mov.u32 $0, %tid.x;"]
        )
    )
    other = ASM.format(name="g", asm="cvt.rn.satfinite.e2m1x2.f32 $0, $1, $2;")
    root = _write(tmp_path, {"pkg/__init__.py": "", "pkg/sync.py": sync, "pkg/fp4.py": other})
    report = scan_path(root, ScanOptions(jobs=1))
    asm = [f for f in report.findings if f.rule_id == "GP212"]
    assert {f.severity for f in asm} == {Severity.BLOCKER}  # still a blocker each
    sync_hits = [f for f in asm if f.location.path == "pkg/sync.py"]
    assert len(sync_hits) == 3
    assert all("tl.atomic_cas" in f.message for f in sync_hits)
    fp4 = [f for f in asm if f.location.path == "pkg/fp4.py"]
    assert "synchroniz" not in fp4[0].message
    # the three synchronizing snippets are one job; the FP4 conversion is one of its own
    assert {i.rule_id: i.count for i in report.effort.basis}["GP212"] == 2


ROCM_SETUP = """\
import torch
from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME, CUDAExtension
from setuptools import setup

use_cuda = torch.version.cuda and CUDA_HOME is not None
use_rocm = torch.version.hip and ROCM_HOME is not None
if CUDA_HOME is None and torch.version.cuda:
    print("no CUDA toolkit: skipping the CUDA extensions")
sources = ["csrc/ops.cpp"]
if use_cuda:
    sources += ["csrc/cuda/sparse/sparse.cu"]
if use_rocm:
    sources += ["csrc/rocm/ops.hip"]
setup(name="x", ext_modules=[CUDAExtension("x._C", sources)])
"""
CUTLASS_HEADER = "#pragma once\n#include <cutlass/cutlass.h>\n"
SPARSE = '#include "cutlass_extensions/common.h"\n__global__ void k() {}\n'


def test_a_header_only_cuda_only_files_include_is_not_built(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "setup.py": ROCM_SETUP,
            "csrc/ops.cpp": "int ops() { return 0; }\n",
            "csrc/cuda/sparse/sparse.cu": SPARSE,
            "csrc/cuda/cutlass_extensions/common.h": CUTLASS_HEADER,
        },
    )
    report = scan_path(root, ScanOptions(jobs=1))
    assert "csrc/cuda/cutlass_extensions/common.h" in report.not_built
    assert (
        "only csrc/cuda/sparse/sparse.cu includes it"
        in (report.not_built["csrc/cuda/cutlass_extensions/common.h"])
    )
    hits = [f for f in report.findings if f.location.path.endswith("common.h")]
    assert hits and {f.severity for f in hits} == {Severity.INFO}
    # the CUDA_HOME test is false on ROCm (`and torch.version.cuda`): it gates nothing there
    assert not [f for f in report.findings if f.rule_id == "GP409"]


def test_a_header_a_built_file_includes_is_still_judged(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "setup.py": ROCM_SETUP,
            "csrc/ops.cpp": '#include "common.h"\nint ops() { return 0; }\n',
            "csrc/cuda/sparse/sparse.cu": SPARSE,
            "csrc/cuda/cutlass_extensions/common.h": CUTLASS_HEADER,
        },
    )
    report = scan_path(root, ScanOptions(jobs=1))
    assert "csrc/cuda/cutlass_extensions/common.h" not in report.not_built


def test_a_cuda_home_test_true_on_rocm_is_still_reported(tmp_path: Path) -> None:
    text = ROCM_SETUP.replace("if CUDA_HOME is None and torch.version.cuda:", "if CUDA_HOME:")
    root = _write(tmp_path, {"setup.py": text, "csrc/ops.cpp": "int ops() { return 0; }\n"})
    report = scan_path(root, ScanOptions(jobs=1))
    assert [f.location.line for f in report.findings if f.rule_id == "GP409"] == [7]


def test_flags_set_only_in_cuda_branches_keep_their_default() -> None:
    text = """
import torch
use_cuda = torch.version.cuda is not None
extra_sources = None
build_sm90a = False
if use_cuda:
    extra_sources = ["a.cu"]
    build_sm90a, build_sm100a = get_flags()
if extra_sources is not None and build_sm90a:
    Extension("a", sources=["a90.cu"])
if build_sm90a:
    Extension("b", sources=["b90.cu"])
if extra_sources is None:
    Extension("c", sources=["c.cpp"])
varied = None
varied = pick()
if use_cuda:
    varied = ["d.cu"]
if varied is not None:
    Extension("d", sources=["d.cpp"])
if torch.version.hip:
    Extension("h", sources=["h.hip"])
"""
    uses, tested, _ = setup_uses(text)
    by = {u.pattern: u.cuda_only for u in uses}
    assert tested
    assert by["a90.cu"] is True and by["b90.cu"] is True
    assert by["c.cpp"] is False
    # set to something unknown outside the CUDA branch: its value on ROCm is unknown
    assert by["d.cpp"] is False


ROUTE = {
    "docker/Dockerfile.rocm": "FROM rocm/pytorch:latest\n",
    "requirements-rocm.txt": "--index-url https://download.pytorch.org/whl/rocm6.4\ntorch\n",
}
OP = {
    "csrc/evoformer/kernel_forward.h": (
        "#pragma once\n#include <cutlass/cutlass.h>\n"
        "template <int N> __device__ void fwd() { cutlass::arch::cp_async_wait<0>(); }\n"
    ),
    "csrc/evoformer/gemm/mma.h": "#pragma once\n#include <cutlass/gemm/gemm.h>\n",
    "csrc/evoformer/attention_cu.cu": (
        '#include "kernel_forward.h"\n#include "gemm/mma.h"\n__global__ void attn() { fwd<1>(); }\n'
    ),
    "csrc/evoformer/attention.cpp": (
        "#include <torch/extension.h>\nvoid attention(at::Tensor q);\n"
        'PYBIND11_MODULE(x, m) { m.def("attention", &attention); }\n'
    ),
    "csrc/other/softmax.cu": "__global__ void k(float* v) { v[threadIdx.x] = 0.f; }\n",
}


def test_a_folder_of_cutlass_kernels_is_one_replace_or_drop_item(tmp_path: Path) -> None:
    report = scan_path(_write(tmp_path, {**ROUTE, **OP}), ScanOptions(jobs=1))
    comps = {c.path: c for c in report.components if c.nvidia_only}
    assert "csrc/evoformer" in comps
    assert "all 4 of its C/C++ files build on CUTLASS" in comps["csrc/evoformer"].evidence
    inside = [f for f in report.findings if f.location.path.startswith("csrc/evoformer/")]
    assert inside and {f.severity for f in inside} == {Severity.INFO}
    items = [i.title for i in report.effort.basis]
    assert any(t.startswith("replace or drop csrc/evoformer/") for t in items)
    assert not any(i.rule_id == "GP315" for i in report.effort.basis)


def test_a_folder_with_a_raw_cuda_kernel_is_no_cutlass_component(tmp_path: Path) -> None:
    files = {**ROUTE, **OP}
    files["csrc/evoformer/plain.cu"] = "__global__ void k(float* v) { v[threadIdx.x] = 1.f; }\n"
    report = scan_path(_write(tmp_path, files), ScanOptions(jobs=1))
    assert not [c for c in report.components if c.nvidia_only]
    gp315 = [f for f in report.findings if f.rule_id == "GP315"]
    # not lowered as an NVIDIA-only component (the op's sources are built by the project's
    # Python at run time, which no build file shows the ROCm route doing: info for that)
    assert gp315 and all("NVIDIA-only component" not in f.message for f in gp315)
    assert all(f.severity is Severity.BLOCKER or OFF_ROUTE in f.message for f in gp315)


def test_a_setup_py_too_deeply_nested_to_parse_is_skipped_not_a_crash(tmp_path: Path) -> None:
    # CPython's parser raises MemoryError (not SyntaxError) on brackets nested this deep
    nested = "(" + "a, (" * 200 + "b" + ")" * 200 + ") = None\n"
    text = "import torch\nif torch.version.hip:\n    pass\n" + nested
    root = _write(tmp_path, {"setup.py": text, "pkg/__init__.py": "import torch\n"})
    report = scan_path(root, ScanOptions(jobs=1))
    reasons = {s.path: s.reason for s in report.skipped}
    assert "nested too deeply" in reasons["setup.py"]


def test_without_a_route_a_cutlass_folder_changes_nothing(tmp_path: Path) -> None:
    files = {**OP, "csrc/more/gemm.cu": "#include <cutlass/cutlass.h>\n__global__ void g() {}\n"}
    report = scan_path(_write(tmp_path, files), ScanOptions(jobs=1))
    gp315 = [f for f in report.findings if f.rule_id == "GP315"]
    assert gp315 and {f.severity for f in gp315} == {Severity.BLOCKER}
    basis = {i.rule_id: i for i in report.effort.basis}
    assert "component" not in basis
    assert basis["GP315"].count == 1  # CUTLASS ported once for the project, as before
