"""Issue 30 classes taken up in session 19.

J46 (fangq/mcx #264): the unsafe run was not idempotent. The safe compatibility-header fix
puts the include of ``gpuport_hip_compat.h`` into the CUDA source, and scan counts a file that
includes the project's own portability header as built by the ROCm route, so a second run
judged its ``__CUDA_ARCH__`` tests (GP317) at their own severity and proposed the device-pass
fix the first run had not. The first run now takes what its own fixes put on the route.

The device-pass fix (``#ifdef __CUDA_ARCH__`` -> ``#if defined(__CUDA_ARCH__) ||
defined(__HIP_DEVICE_COMPILE__)``) is declined where the branch uses ``__CUDA_ARCH__``'s value
(mcx's ``#define __CUDA_ARCH_LIST__ __CUDA_ARCH__``): hip-clang never defines it, so the HIP
device pass would get an undefined name."""

from __future__ import annotations

import shutil
from pathlib import Path

from gpuport.port import PortOptions, port_path
from tests.port.helpers import created, fix_ids, project, run

README = "# k\n\nBuild for AMD GPUs with ROCm: `cmake -DGPU=hip .. && make`.\n"
CMAKE = """\
cmake_minimum_required(VERSION 3.18)
project(k LANGUAGES CXX CUDA)
find_package(CUDAToolkit REQUIRED)
add_executable(k main.cu)
target_link_libraries(k CUDA::cudart)
"""
MAIN = """\
#include <cstdio>
#include <cuda_runtime.h>

#ifdef __CUDA_ARCH__
#define FAST_PATH {value}
#else
#define FAST_PATH 0
#endif

__global__ void k(float *x) {{
  x[threadIdx.x] = FAST_PATH;
}}

int main() {{
  float *d;
  cudaMalloc(&d, 64 * sizeof(float));
  k<<<1, 64>>>(d);
  cudaDeviceSynchronize();
  cudaFree(d);
  return 0;
}}
"""


def _tree(root: Path, value: str) -> Path:
    return project(
        root,
        {"README.md": README, "CMakeLists.txt": CMAKE, "main.cu": MAIN.format(value=value)},
    )


def test_the_unsafe_run_takes_the_arch_fix_its_compat_include_puts_on_the_route(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path / "p", "1")
    first = run(root, unsafe_fixes=True)
    assert "hip-compat:gpuport_hip_compat.h" in fix_ids(first, applied=True)
    # the GP317 scan lowered (main.cu not shown on the route before the compat include)
    assert "cuda-arch-branch:main.cu" in fix_ids(first, applied=True)
    port_path(root, PortOptions(jobs=1, unsafe_fixes=True, apply=True))
    again = run(root, unsafe_fixes=True)
    assert again.files == [], [f.path for f in again.files]


def test_the_device_pass_fix_is_declined_where_the_branch_uses_cuda_arch_itself(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path / "p", "__CUDA_ARCH__")
    report = run(root, unsafe_fixes=True)
    assert "cuda-arch-branch:main.cu" not in fix_ids(report)
    reasons = [u.reason for u in report.unfixed if u.finding.rule_id == "GP317"]
    assert any("uses __CUDA_ARCH__'s value itself" in r for r in reasons), reasons
    # applied and run again: still nothing more to do (idempotent)
    copy = tmp_path / "c"
    shutil.copytree(root, copy)
    port_path(copy, PortOptions(jobs=1, unsafe_fixes=True, apply=True))
    assert run(copy, unsafe_fixes=True).files == []


# J57 (Azure/aks-rdma-infiniband #148): the nccl-tests image was copied for ROCm with only its
# FROM line changed; it still built NVIDIA's nccl-tests with nvcc (`make ...
# NVCC_GENCODE="$CUDA12_GENCODE"`) and installed NVIDIA's DCGM from the CUDA apt repository.
_NCCL_TESTS = """\
FROM nvidia/cuda:13.2.0-devel-ubuntu24.04 as base
RUN apt-get -qq update && apt-get -qq install -y build-essential wget {pkg} && \\
    apt-get clean
ENV CUDA12_GENCODE='-gencode=arch=compute_90,code=sm_90'
WORKDIR /opt/nccl-tests
RUN wget -q -O - https://github.com/NVIDIA/nccl-tests/archive/da0b547.tar.gz | tar -xzf - && \\
    make -j20 MPI=1 {make}
"""


def test_an_image_handing_nvcc_flags_to_make_gets_no_rocm_copy(tmp_path: Path) -> None:
    for i, make in enumerate(
        ('NVCC_GENCODE="$CUDA12_GENCODE"', "CUDA_FLAGS=-gencode=arch=compute_90,code=sm_90")
    ):
        df = _NCCL_TESTS.format(pkg="curl", make=make)
        report = run(project(tmp_path / str(i), {"Dockerfile": df}), unsafe_fixes=True)
        assert report.files == [], make
        reasons = [u.reason for u in report.unfixed if u.finding.rule_id == "GP501"]
        assert reasons and "builds or installs CUDA code" in reasons[0], reasons


def test_nvidia_dcgm_is_left_out_of_the_rocm_copy(tmp_path: Path) -> None:
    df = (
        "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\n"
        "RUN apt-get update && apt-get install -y curl datacenter-gpu-manager libdcgm-dev\n"
    )
    text = created(run(project(tmp_path, {"Dockerfile": df})), "Dockerfile.rocm")
    assert "dcgm" not in text and "datacenter-gpu-manager" not in text and "curl" in text


# J59 (Stability-AI/stable-fast-3d #76) and J12 (stable-point-aware-3d #30): a torch
# extension's setup.py adds `libraries += ["cudart", "c10_cuda"]`; ROCm torch has neither and
# links the HIP runtime and c10_hip itself. The real ports leave them out on ROCm.
_SETUP_LIBS = """\
import glob
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension


def get_extensions():
    libraries = []
    sources = glob.glob("csrc/*.cpp")
    sources += glob.glob("csrc/*.cu")
    libraries += {libs}
    return [CUDAExtension("baker._C", sources, libraries=libraries)]


setup(name="baker", ext_modules=get_extensions(), cmdclass={{"build_ext": BuildExtension}})
"""
_KERNEL = "__global__ void k(float* x) { x[threadIdx.x] = 0; }\n"


def _setup_project(root: Path, libs: str) -> Path:
    return project(
        root,
        {"setup.py": _SETUP_LIBS.format(libs=libs), "csrc/k.cu": _KERNEL, "csrc/b.cpp": "int b;\n"},
    )


def test_the_cuda_runtime_libraries_are_left_out_of_the_rocm_link_safely(tmp_path: Path) -> None:
    import ast

    root = _setup_project(tmp_path, '["cudart", "c10_cuda"]')
    report = run(root)
    assert "setup-hip-libs:setup.py" in fix_ids(report, applied=True)
    port_path(root, PortOptions(jobs=1, apply=True))
    text = (root / "setup.py").read_text()
    assert 'libraries += ([] if torch.version.hip else ["cudart", "c10_cuda"])' in text
    tree = ast.parse(text)  # `torch` is bound before the edit reads it
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.Import)]
    assert any(a.name == "torch" for n in imports for a in n.names), text
    # what a CUDA torch (torch.version.hip is None) evaluates: the original list
    ns: dict[str, object] = {}
    expr = text.split("libraries += ", 1)[1].split("\n", 1)[0]
    torch_stub = type("T", (), {"version": type("V", (), {"hip": None})})
    assert eval(expr, {"torch": torch_stub}, ns) == ["cudart", "c10_cuda"]  # noqa: S307
    assert run(root).files == []  # idempotent


def test_a_link_list_naming_a_library_that_needs_a_hip_twin_is_left(tmp_path: Path) -> None:
    report = run(_setup_project(tmp_path, '["cudart", "cublas"]'))
    assert "setup-hip-libs:setup.py" not in fix_ids(report)
    reasons = [u.reason for u in report.unfixed if u.finding.rule_id == "GP407"]
    assert any("also links cublas" in r for r in reasons), reasons
