"""Fortieth re-run (red team 40), the scan's project-model findings: a decoy in a hostile
project (a source list kept as data, a one-file sibling folder, a README comment, an
installer comment, a two-line HIP twin) must not hide its real CUDA blockers.
"""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from tests.scan.project_files import write

_PTX_KERNEL = (
    "#include <cuda_runtime.h>\n"
    "__global__ void k(unsigned* x){\n"
    "  unsigned v;\n"
    '  asm volatile("mov.u32 %0, %%laneid;" : "=r"(v));\n'
    "  x[threadIdx.x] = __shfl_sync(0xffffffff, v, 0) + __ballot_sync(0xffffffff, v > 3);\n"
    "}\n"
)
_CMAKE = (
    "cmake_minimum_required(VERSION 3.18)\nproject(k LANGUAGES CXX CUDA)\nadd_library(k k.cu)\n"
)


def _verdict(root: Path) -> str:
    return scan_path(root, ScanOptions(jobs=1)).verdict.value


def _not_built(root: Path) -> dict[str, str]:
    return dict(scan_path(root, ScanOptions(jobs=1)).not_built)


def test_f6_a_source_list_read_from_a_data_file_names_its_sources(tmp_path: Path) -> None:
    """setup.py compiles the sources kernels.txt lists: they are named. A file read whose
    name is not written (or not held) leaves the folder's sources unknown; a source no list
    names is still "not compiled" (vattention's pod_attn, which reads its README)."""
    head = (
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
    )
    tail = (
        'setup(name="attn", ext_modules=[CUDAExtension("attn_ext", srcs)],'
        ' cmdclass={"build_ext": BuildExtension})\n'
    )
    base = {"csrc/fused_reduce.cu": _PTX_KERNEL, "csrc/main.cu": "__global__ void m(){}\n"}
    reads = (
        'srcs = ["csrc/main.cu"] + [l.strip() for l in open("kernels.txt") if l.strip()]\n',
        'import json\nsrcs = ["csrc/main.cu"] + json.load(open("kernels.json"))\n',
        'import sys\nsrcs = ["csrc/main.cu"] + open(sys.argv[-1]).read().split()\n',
        'srcs = ["csrc/main.cu"] + open("gen/list.txt").read().split()\n',  # not held
    )
    data = {"kernels.txt": "csrc/fused_reduce.cu\n", "kernels.json": '["csrc/fused_reduce.cu"]'}
    for i, read in enumerate(reads):
        root = write(tmp_path / f"p{i}", {**base, **data, "setup.py": head + read + tail})
        assert "csrc/fused_reduce.cu" not in _not_built(root), read
        assert _verdict(root) == "blocked", read
    # a README read for the description names no source: the unlisted kernel is not built
    readme = 'long = open("README.md").read()\nsrcs = ["csrc/main.cu"]\n'
    files = {**base, "README.md": "# attn\n", "setup.py": head + readme + tail}
    assert "csrc/fused_reduce.cu" in _not_built(write(tmp_path / "r", files))