"""Issue 24: `ready` needs positive evidence that nothing native is built unseen; code
generated at build time is a finding (GP410), never a silent READY."""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from gpuport.scan.model import Verdict
from tests.scan.project_files import scan_files

SETUP = (
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
    "setup(name='ops', ext_modules=[CUDAExtension('ops', {sources})],\n"
    "      cmdclass={{'build_ext': BuildExtension}})\n"
)
KERNEL = "__global__ void add(float* x) { x[threadIdx.x] += 1.0f; }\n"


def test_a_build_whose_sources_were_all_read_can_be_ready(tmp_path: Path) -> None:
    # with a ROCm route: without one, its own CUDA build makes it major work (test_routes)
    readme = "pip install torch --index-url https://download.pytorch.org/whl/rocm6.2\n"
    files = {"setup.py": SETUP.format(sources="['csrc/add.cu']"), "csrc/add.cu": KERNEL,
             "README.md": readme}  # fmt: skip
    r = scan_files(tmp_path, files)
    assert r.verdict in (Verdict.READY, Verdict.MINOR_WORK)
    assert "could not see" not in r.verdict_reason


def test_a_source_the_build_names_but_the_tree_lacks_is_not_ready(tmp_path: Path) -> None:
    files = {"setup.py": SETUP.format(sources="['csrc/add.cu', 'csrc/gen/gemm.cu']"),
             "csrc/add.cu": KERNEL}  # fmt: skip
    r = scan_files(tmp_path, files)
    assert r.verdict is not Verdict.READY
    assert "csrc/gen/gemm.cu" in r.verdict_reason and "not in the tree" in r.verdict_reason


def test_a_vendored_source_the_build_compiles_is_said(tmp_path: Path) -> None:
    files = {"setup.py": SETUP.format(sources="['csrc/add.cu', 'third_party/lib/k.cu']"),
             "csrc/add.cu": KERNEL, "third_party/lib/k.cu": KERNEL}  # fmt: skip
    r = scan_files(tmp_path, files)
    assert r.verdict is not Verdict.READY
    assert "third_party/lib/k.cu" in r.verdict_reason and "vendored" in r.verdict_reason


def test_pure_python_stays_ready(tmp_path: Path) -> None:
    r = scan_files(tmp_path, {"pkg/__init__.py": "import torch\nx = torch.ones(3)\n"})
    assert r.verdict is Verdict.READY


def test_a_known_generator_with_no_rocm_backend_blocks(tmp_path: Path) -> None:
    setup = (
        "import pccm\nfrom cumm.gemm.main import GemmMainUnitTest\n"
        "from setuptools import setup\nsetup(name='sp')\n"
    )
    r = scan_files(tmp_path, {"setup.py": setup, "sp/__init__.py": ""})
    gen = [f for f in r.findings if f.rule_id == "GP410"]
    assert {f.severity for f in gen} == {Severity.BLOCKER, Severity.MAJOR}
    assert r.verdict is Verdict.BLOCKED


def test_an_unknown_generator_is_said_not_ready(tmp_path: Path) -> None:
    setup = (
        "import subprocess, sys\nfrom setuptools import setup\n"
        "subprocess.check_call([sys.executable, 'kernels/generate_kernels.py'])\n"
        "setup(name='k')\n"
    )
    r = scan_files(tmp_path, {"setup.py": setup})
    gen = [f for f in r.findings if f.rule_id == "GP410"]
    assert gen and gen[0].severity is Severity.MAJOR and "unknown generator" in gen[0].message
    assert r.verdict is not Verdict.READY


def test_a_cmake_step_writing_cxx_only_is_minor_and_cuda_major(tmp_path: Path) -> None:
    """pbrt-v4 writes its spectrum tables as .cpp at build time: gpuport cannot see them (said,
    minor); a step writing .cu is GPU code it cannot see (major)."""
    cmake = (
        "add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/rgbspectrum_srgb.cpp\n"
        "  COMMAND rgb2spec_opt 64 ${CMAKE_BINARY_DIR}/rgbspectrum_srgb.cpp sRGB)\n"
        "add_custom_command(OUTPUT gemm.cu gemm.cpp COMMAND gen gemm.cu)\n"
    )
    r = scan_files(tmp_path, {"CMakeLists.txt": cmake, "src/a.cpp": "int main() {}\n"})
    gen = {f.location.line: f for f in r.findings if f.rule_id == "GP410"}
    assert gen[1].severity is Severity.MINOR and "no CUDA source" in gen[1].message
    assert gen[3].severity is Severity.MAJOR and "`gemm.cu`" in gen[3].message
