"""Issue 24: a ROCm route from one piece of evidence (docs pages, README support tables, a
single HIP build branch), with the reason when listed evidence does not count; advice never
above minor; one finding per construct per line."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.models import Severity
from gpuport.scan.model import Verdict
from gpuport.scan.project.routes import working_route
from gpuport.scan.project.routes_docs import doc_routes, rocm_settings
from tests.scan.project_files import scan_files, write

BLOCKER_PY = "import tensorrt\n"  # GP201: a blocker in core code (without a route)
BLOCKER_CU = '__global__ void k() { asm volatile("membar.gl;"); }\n'  # GP301


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "README.md",
            "## Install\n\npip install torch --index-url https://download.pytorch.org/whl/rocm6.2\n",
        ),
        ("README.md", "For AMD GPUs:\n\n    docker run --device=/dev/kfd --device=/dev/dri img\n"),
        ("README.md", "This library supports NVIDIA and AMD GPUs.\n"),
        ("README.md", "Tested on AMD EPYC CPUs with AMD Instinct MI250X GPUs.\n"),
        # a requirements row (thirteenth sample, jittor README.md:99)
        (
            "README.md",
            "| OS | CPU | Python | Compiler | (Optional) GPU platform |\n|---|---|---|---|---|\n"
            "| Linux | x86_64 | >= 3.7 | g++ >=5.4 | Nvidia CUDA >= 10.0, [cuDNN](https://x.y/a)"
            " <br> or [AMD ROCm](https://docs.amd.com/) >= 4.0 |\n",
        ),
        ("README.md", "Requirements: Python 3.10, ROCm 6.0+ or CUDA 12.\n"),
        ("README.md", "Build with `cmake -B build -DMYLIB_HIP=ON`.\n"),
        (
            "README.md",
            "| backend | NVIDIA | AMD GPU |\n|---|---|---|\n| GPU | ✅ CUDA | ✅ ROCm |\n",
        ),
        ("README.md", "| GPU | status |\n|---|---|\n| AMD Instinct | ✅ |\n"),
        (
            "README.md",
            "<table><tr><th>OS</th><th>AMD GPU</th></tr>\n<tr><td>Linux</td>\n"
            "<td>✅ Vulkan, ROCm</td></tr></table>\n",
        ),
        ("docs/get_started/install.md", "MYLIB_TARGET_DEVICE=rocm pip install .\n"),
        ("docs/amd.rst", "Notes.\n"),
    ],
)
def test_one_piece_of_documented_evidence_is_a_route(tmp_path: Path, name: str, text: str) -> None:
    write(tmp_path, {name: text})
    routes = doc_routes(tmp_path)
    assert routes and working_route(routes), routes
    assert all(r.path == name for r in routes)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("## AMD\n\nBenchmarks on other GPUs follow.\n", "a heading alone"),
        ("ROCm support is on hold.\n", "not supported"),
        ("AMD GPUs are not supported; this pip install needs rocm? no.\n", "not supported"),
        ("| GPU | status |\n|---|---|\n| AMD Instinct | ❌ |\n", "not supported"),
        ("- Works on Linux, Windows; NVIDIA GPUs, soon AMD & Intel setups\n", "promises it"),
        ("Support for AMD GPUs is upcoming.\n", "promises it"),
        ("Our CUDA kernels are fast.\n", ""),
        ("ROCm >= 6.0 is not supported yet.\n", "not supported"),
        # an AMD CPU is no GPU route (thirteenth sample, finufft docs/nfft_migr.rst:76)
        ("Both use a single thread, tested on the same AMD 5700U laptop.\n", ""),
        ("Tested on AMD EPYC 7763 and Intel Xeon nodes.\n", ""),
    ],
)
def test_evidence_that_is_not_a_route_says_why_or_is_not_listed(
    tmp_path: Path, text: str, why: str
) -> None:
    write(tmp_path, {"README.md": text})
    routes = doc_routes(tmp_path)
    assert not working_route(routes)
    if why:
        assert routes and all(why in r.why for r in routes), routes
    else:
        assert routes == []


def test_a_promise_about_something_else_on_the_line_keeps_the_route(tmp_path: Path) -> None:
    text = (
        "The Triton kernels support AMD's CDNA (MI200, MI300) GPUs in fp16 and bf16. "
        "Sliding window attention is currently a work in progress.\n"
    )
    write(tmp_path, {"README.md": text})
    assert working_route(doc_routes(tmp_path))


def test_a_route_not_counted_is_named_in_the_verdict_reason(tmp_path: Path) -> None:
    r = scan_files(tmp_path, {"README.md": "## ROCm\n\nNothing yet.\n", "lib/x.py": BLOCKER_PY})
    assert r.verdict is Verdict.BLOCKED
    assert "README.md:1" in r.verdict_reason and "not counted" in r.verdict_reason
    assert "a heading alone" in r.verdict_reason


def test_a_documented_route_judges_blockers_as_what_the_route_lacks(tmp_path: Path) -> None:
    readme = "Install for AMD:\n\npip install torch --index-url https://download.pytorch.org/whl/rocm6.2\n"
    with_route = scan_files(tmp_path / "a", {"README.md": readme, "lib/k.cu": BLOCKER_CU})
    without = scan_files(tmp_path / "b", {"README.md": "Fast kernels.\n", "lib/k.cu": BLOCKER_CU})
    assert without.verdict is Verdict.BLOCKED
    assert with_route.verdict is Verdict.MINOR_WORK
    assert "README.md" in with_route.verdict_reason


def test_a_single_hip_branch_in_setup_py_is_a_route(tmp_path: Path) -> None:
    setup = (
        "import torch\nfrom setuptools import setup\n"
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "if torch.version.hip:\n    flags = ['-DUSE_ROCM']\n"
        "else:\n    flags = ['--use_fast_math']\n"
        "setup(name='k', ext_modules=[CUDAExtension('k', ['k.cu'], extra_compile_args=flags)])\n"
    )
    r = scan_files(tmp_path, {"setup.py": setup, "k.cu": "__global__ void k() {}\n"})
    assert working_route(r.routes)
    assert [x.kind for x in r.routes] == ["build"]
    gp404 = [f for f in r.findings if f.rule_id == "GP404"]
    assert gp404 and all(f.severity is Severity.INFO for f in gp404)  # its own ROCm build


def test_advice_is_minor_at_most(tmp_path: Path) -> None:
    setup = (
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "setup(name='k', ext_modules=[CUDAExtension('k', ['k.cu'])])\n"
    )
    r = scan_files(tmp_path, {"setup.py": setup, "k.cu": "__global__ void k() {}\n",
                         "requirements.txt": "torch>=2.1\n"})  # fmt: skip
    by_rule = {f.rule_id: f.severity for f in r.findings}
    assert by_rule["GP404"] is Severity.MINOR
    assert by_rule["GP102"] is Severity.MINOR
    # the findings stay advice, but a project with no ROCm route whose own build compiles
    # CUDA has never been built for ROCm: major work (issue 24, eleventh and fifteenth)
    assert r.verdict is Verdict.MAJOR_WORK
    assert "no ROCm route, and its own build compiles 1 CUDA source file" in r.verdict_reason


def test_a_project_with_a_route_or_no_cuda_of_its_own_stays_minor(tmp_path: Path) -> None:
    setup = (
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "setup(name='k', ext_modules=[CUDAExtension('k', ['k.cu'])])\n"
    )
    readme = "pip install torch --index-url https://download.pytorch.org/whl/rocm6.2\n"
    routed = scan_files(
        tmp_path / "a",
        {
            "setup.py": setup,
            "k.cu": "__global__ void k() {}\n",
            "requirements.txt": "torch>=2.1\n",
            "README.md": readme,
        },
    )
    assert routed.verdict in (Verdict.READY, Verdict.MINOR_WORK)
    plain = scan_files(
        tmp_path / "b", {"requirements.txt": "torch>=2.1\n", "a.py": "import torch\n"}
    )
    assert plain.verdict in (Verdict.READY, Verdict.MINOR_WORK)
    # a kernel a module loads at run time as an optional fast path (peft's BOFT tuner:
    # `get_fbd_cuda()` loads it in a function, inside a try that falls back); one loaded at a
    # module's top level runs on import (tests/scan/test_session17_classes.py)
    jit = (
        "from torch.utils.cpp_extension import load\ndef get():\n    try:\n"
        "        return load('k', sources=['k.cu'])\n    except Exception:\n        return None\n"
    )
    lazy = scan_files(tmp_path / "c", {"pkg/fast.py": jit, "pkg/k.cu": "__global__ void k() {}\n",
                                       "requirements.txt": "torch>=2.1\n"})  # fmt: skip
    assert lazy.verdict in (Verdict.READY, Verdict.MINOR_WORK), lazy.verdict_reason


def test_install_steps_the_route_gives_are_info(tmp_path: Path) -> None:
    readme = "pip install torch --index-url https://download.pytorch.org/whl/rocm6.2\n"
    r = scan_files(tmp_path, {"README.md": readme, "requirements.txt": "torch>=2.1\n"})
    gp102 = [f for f in r.findings if f.rule_id == "GP102"]
    assert gp102 and gp102[0].severity is Severity.INFO
    assert "README.md:1" in gp102[0].message
    assert r.verdict is Verdict.READY


def test_one_finding_per_construct_per_line(tmp_path: Path) -> None:
    cu = (
        "__global__ void k(float* x) {\n"
        "  unsigned m = __ballot_sync(0xffffffff, x[0] > 0);\n"
        "  x[0] = m;\n}\n"
    )
    r = scan_files(tmp_path, {"k.cu": cu, "requirements.txt": "torch==2.3.1+cu121\n"})
    line2 = [f for f in r.findings if f.location.path == "k.cu" and f.location.line == 2]
    above = [f for f in line2 if f.severity is not Severity.INFO]
    assert [f.rule_id for f in above] == ["GP302"]
    assert "also GP307" in above[0].message
    folded = [f for f in line2 if f.rule_id == "GP307"]
    assert folded and folded[0].severity is Severity.INFO and "GP302" in folded[0].message
    req = [f for f in r.findings if f.location.path == "requirements.txt"]
    assert [f.rule_id for f in req if f.severity is not Severity.INFO] == ["GP105"]
    # the effort counts the construct once
    assert not any(b.rule_id in ("GP307", "GP102") for b in r.effort.basis)


def test_two_requirements_on_one_line_stay_two(tmp_path: Path) -> None:
    pyproject = '[project]\nname = "x"\ndependencies = ["tensorrt", "torch==2.3.1+cu121"]\n'
    r = scan_files(tmp_path, {"pyproject.toml": pyproject})
    line3 = {f.rule_id for f in r.findings if f.location.line == 3 and f.severity.rank > 1}
    assert {"GP101", "GP105"} <= line3


def test_rocm_settings_come_from_docs_and_recipes(tmp_path: Path) -> None:
    write(tmp_path, {"docs/install.md": "VLLMX_TARGET_DEVICE=rocm pip install -e .\n"})
    got = rocm_settings(tmp_path, {"docker/Dockerfile.amd": "ENV GPU_BACKEND=hip\n"})
    assert got == {"VLLMX_TARGET_DEVICE": "rocm", "GPU_BACKEND": "hip"}


def test_the_report_says_which_routes_counted_and_what_is_not_built(tmp_path: Path) -> None:
    from rich.console import Console

    from gpuport.render import scan_markdown, scan_terminal

    r = scan_files(
        tmp_path / "a", {"README.md": "## ROCm\n\nNothing yet.\n", "lib/k.cu": BLOCKER_CU}
    )
    console = Console(record=True, width=200)
    scan_terminal.render(r, console)
    text = console.export_text()
    assert "BLOCKED" in text and "not counted: a heading alone" in text
    setup = (
        "import torch\nfrom setuptools import setup\n"
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "src = ['csrc/common.cu']\nif not torch.version.hip:\n    src += ['csrc/hopper/a.cu', "
        "'csrc/hopper/b.cu']\n"
        "setup(name='k', ext_modules=[CUDAExtension('k', src)])\n"
    )
    files = {"setup.py": setup, "csrc/common.cu": "__global__ void c() {}\n",
             "csrc/hopper/a.cu": BLOCKER_CU, "csrc/hopper/b.cu": BLOCKER_CU}  # fmt: skip
    built = scan_files(tmp_path / "b", files)
    assert built.not_built_parts() == [("csrc/hopper/", 2, "setup.py:5")]
    console = Console(record=True, width=200)
    scan_terminal.render(built, console)
    assert "Not built on ROCm" in console.export_text()
    assert "| csrc/hopper/ | 2 | setup.py:5 |" in scan_markdown.render(built)
