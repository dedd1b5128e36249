"""Issue 24, twenty-first sample's classes (development data since its before run, the
held-out figure for session 14's final code): a whole copy of another project kept in the
tree (vattention's ``pod_attn/csrc/cutlass``: all of CUTLASS, 542 of 720 findings) is
vendored code, recognised by its own build declaration and licence, not by its folder name."""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from tests.scan.project_files import write

_PTX = (
    "#include <cuda_runtime.h>\n"
    "__device__ float sum(float v) { return v + __shfl_down_sync(0xffffffff, v, 16); }\n"
)
_CUTLASS_CMAKE = (
    "cmake_minimum_required(VERSION 3.19)\n"
    "project(CUTLASS VERSION ${_CUTLASS_VERSION_MAJOR}.${_CUTLASS_VERSION_MINOR} LANGUAGES CXX)\n"
)
_OWN = (
    "#include <cutlass/gemm/device/gemm.h>\n"
    "using G = cutlass::gemm::device::Gemm<float, cutlass::layout::RowMajor>;\n"
    "__global__ void k(float* x) { x[threadIdx.x] = 1.f; }\n"
)


def _project(copy_cmake: str = _CUTLASS_CMAKE, licence: bool = True) -> dict[str, str]:
    files = {
        "LICENSE": "Copyright (c) Example Corp.\n",
        "setup.py": "from setuptools import setup\nsetup(name='x')\n",
        "csrc/kernel.cu": _OWN,
        "csrc/cutlass/CMakeLists.txt": copy_cmake,
        "csrc/cutlass/include/cutlass/arch/mma.cuh": _PTX,
        "csrc/cutlass/python/cutlass/backend.py": "import torch\ntorch.cuda.synchronize()\n",
    }
    if licence:
        files["csrc/cutlass/LICENSE.txt"] = "Copyright (c) NVIDIA CORPORATION & AFFILIATES.\n"
    return files


def _paths(root: Path, include_vendored: bool = False) -> tuple[set[str], dict[str, str]]:
    r = scan_path(root, ScanOptions(jobs=1, include_vendored=include_vendored))
    return {f.location.path for f in r.findings}, {s.path: s.reason for s in r.skipped}


def test_a_whole_copy_of_a_known_library_is_vendored_code(tmp_path: Path) -> None:
    found, skipped = _paths(write(tmp_path / "a", _project()))
    assert not any(p.startswith("csrc/cutlass/") for p in found), found
    assert "a copy of CUTLASS" in skipped["csrc/cutlass/"], skipped
    # the project's own use of the library is still said, on its own file
    assert "csrc/kernel.cu" in found, found
    # --include-vendored reads the copy as it reads third_party/
    found, skipped = _paths(tmp_path / "a", include_vendored=True)
    assert "csrc/cutlass/include/cutlass/arch/mma.cuh" in found, found
    assert "csrc/cutlass/" not in skipped


def test_a_pyproject_name_declares_the_copy_too(tmp_path: Path) -> None:
    files = _project(copy_cmake="")
    del files["csrc/cutlass/CMakeLists.txt"]
    files["csrc/cutlass/pyproject.toml"] = '[project]\nname = "nvidia-cutlass"\nversion = "3"\n'
    found, skipped = _paths(write(tmp_path / "p", files))
    assert "csrc/cutlass/" in skipped and not any(p.startswith("csrc/cutlass/") for p in found)


def test_without_its_licence_or_under_another_name_the_folder_is_the_projects(
    tmp_path: Path,
) -> None:
    # no licence file of its own: the project's own CUTLASS-based code, read
    found, skipped = _paths(write(tmp_path / "n", _project(licence=False)))
    assert "csrc/cutlass/include/cutlass/arch/mma.cuh" in found and "csrc/cutlass/" not in skipped
    # a project of its own name (the project's kernels in a folder named cutlass): read
    own = _project(copy_cmake="project(my_cutlass_kernels LANGUAGES CXX CUDA)\n")
    found, skipped = _paths(write(tmp_path / "o", own))
    assert "csrc/cutlass/include/cutlass/arch/mma.cuh" in found and "csrc/cutlass/" not in skipped
    # "project(CUTLASS" only in a comment or a later call of another name: not a declaration
    commented = _project(copy_cmake="# project(CUTLASS)\nproject(mine)\n")
    found, skipped = _paths(write(tmp_path / "c", commented))
    assert "csrc/cutlass/" not in skipped


def test_the_scanned_folder_itself_is_never_a_copy(tmp_path: Path) -> None:
    root = write(tmp_path / "cutlass", {
        "CMakeLists.txt": _CUTLASS_CMAKE, "LICENSE.txt": "Copyright (c) NVIDIA\n",
        "include/cutlass/arch/mma.cuh": _PTX,
    })  # fmt: skip
    found, _skipped = _paths(root)
    assert "include/cutlass/arch/mma.cuh" in found, found
