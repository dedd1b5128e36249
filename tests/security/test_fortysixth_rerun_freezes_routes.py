"""Forty-sixth re-run (red team 46), findings F10, F7 and F6: a pip freeze installed through a
glob, a listing or a placeholder whose folder is a word of its own (``find requirements -name
"*.txt" -exec pip install -r {} \\;``, ``cd requirements && for f in *.txt``,
``Path("requirements").glob("*.txt")``) stays core (F10); a README claim that places ROCm
support in a repository of its own name or a downstream port is no route of this code (F7);
nor is support "using/via" a translation layer or compiler that is not ROCm/HIP's, even where
"(ROCm)" labels the hardware (F6).
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
_CUDA_ONLY = {
    "k.cu": _VOTE,
    "CMakeLists.txt": "cmake_minimum_required(VERSION 3.18)\nproject(x LANGUAGES CXX CUDA)\n"
    "add_library(x k.cu)\n",
}


def _scan(root: Path, files: dict[str, str]) -> ScanReport:
    return scan_path(write(root, files), ScanOptions(jobs=1))


def _readme_verdict(root: Path, sentence: str) -> tuple[str, bool]:
    report = _scan(root, {**_CUDA_ONLY, "README.md": f"# x\n\n{sentence}\n"})
    return report.verdict.value, any(r.counts for r in report.routes)


def test_f10_a_freeze_installed_through_a_glob_beside_its_folder_word_stays_core(
    tmp_path: Path,
) -> None:
    """requirements/cuda.txt (a freeze with nvidia-*-cu12 and cupy pins) installed by `find
    requirements -name "*.txt" -exec pip install -r {} \\;`, by `cd requirements && for f in
    *.txt`, or by Python's `Path("requirements").glob("*.txt")` / `os.path.join` is named: its
    blockers count (blocked). The same command over another folder still moves it apart."""
    freeze = (
        "nvidia-cublas-cu12==12.1.3.1\nnvidia-cudnn-cu12==8.9.2.26\nnvidia-nccl-cu12==2.18.1\n"
        "cupy-cuda12x==12.2.0\npynvml==11.5.0\n"
    ) + "".join(f"pkg{i}==1.{i}\n" for i in range(20))
    base = {
        "pyproject.toml": '[project]\nname="x"\nversion="0.1"\n',
        "x/__init__.py": "import numpy\n",
        "requirements/cuda.txt": freeze,
    }
    installers = {
        "find": {
            "install.sh": '#!/bin/sh\nfind requirements -name "*.txt" -exec pip install -r {} \\;\n'
        },
        "cd_loop": {
            "install.sh": "#!/bin/sh\ncd requirements && for f in *.txt; do\n"
            '  pip install -r "$f"\ndone\n'
        },
        "pathlib": {
            "tools/install.py": "import subprocess, sys\nfrom pathlib import Path\n"
            'for p in Path("requirements").glob("*.txt"):\n'
            '    subprocess.run([sys.executable, "-m", "pip", "install", "-r", str(p)])\n'
        },
        "os_path": {
            "tools/install.py": "import glob, os, subprocess\n"
            'for p in glob.glob(os.path.join("requirements", "*.txt")):\n'
            '    subprocess.run(["pip", "install", "-r", p])\n'
        },
    }
    for name, extra in installers.items():
        report = _scan(tmp_path / name, {**base, **extra})
        assert report.verdict.value == "blocked", name
    other = {"install.sh": '#!/bin/sh\nfind docs -name "*.txt" -exec pip install -r {} \\;\n'}
    assert _scan(tmp_path / "other", {**base, **other}).verdict.value == "ready"


def test_f7_rocm_support_in_a_named_repository_or_downstream_port_is_no_route(
    tmp_path: Path,
) -> None:
    """ "ROCm support: see the x-rocm repository." and "AMD GPUs (ROCm) are supported by
    x-rocm, our downstream port." place the code elsewhere: no route, GP302 stays a blocker.
    "This repository supports AMD GPUs through ROCm." still counts."""
    for i, sentence in enumerate(
        [
            "ROCm support: see the x-rocm repository.",
            "AMD GPUs (ROCm) are supported by x-rocm, our downstream port.",
            "ROCm support for AMD GPUs lives in its own repository.",
        ]
    ):
        verdict, route = _readme_verdict(tmp_path / f"e{i}", sentence)
        assert (verdict, route) == ("blocked", False), sentence
    for i, sentence in enumerate(
        [
            "This repository supports AMD GPUs through ROCm.",
            "x supports AMD GPUs (ROCm) for pretraining and downstream tasks.",
        ]
    ):
        verdict, route = _readme_verdict(tmp_path / f"ok{i}", sentence)
        assert route and verdict != "blocked", sentence


def test_f6_amd_support_using_a_translation_compiler_is_no_rocm_route(tmp_path: Path) -> None:
    """ "runs on AMD GPUs (ROCm) using the SCALE compiler" (or via ZLUDA, or through a CUDA
    translation layer) is no ROCm build of this code, "(ROCm)" being the hardware's label:
    GP302 stays a blocker. "using the hipcc compiler" or "with a JIT compiler" still count."""
    for i, sentence in enumerate(
        [
            "x runs on AMD GPUs (ROCm) using the SCALE compiler from Spectral Compute.",
            "x runs on AMD GPUs (ROCm) via ZLUDA.",
            "x runs on AMD Radeon GPUs (ROCm) through a CUDA translation layer.",
            "x runs on AMD GPUs (ROCm) using the foo-cc toolchain.",
        ]
    ):
        verdict, route = _readme_verdict(tmp_path / f"z{i}", sentence)
        assert (verdict, route) == ("blocked", False), sentence
    for i, sentence in enumerate(
        [
            "x runs on AMD GPUs (ROCm) using the hipcc compiler.",
            "x runs on AMD GPUs (ROCm) with a JIT compiler.",
            "x supports AMD GPUs via ROCm, with OpenCL as a fallback.",
        ]
    ):
        verdict, route = _readme_verdict(tmp_path / f"ok{i}", sentence)
        assert route and verdict != "blocked", sentence
