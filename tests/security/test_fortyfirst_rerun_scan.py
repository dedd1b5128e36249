"""Forty-first re-run (red team 41), the scan's project-model findings F3, F5, F6, F10, F12,
F13 and F15: a helper in an included header, a recent-generation file the HIP build compiles,
a one-helper HIP stub, an unconfigured header template and a source list read by configparser
must not hide real CUDA blockers; a data file named 20,000 times is read once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport import fileio
from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.model import ScanReport
from gpuport.scan.project import unnamed_sources as unnamed_module
from gpuport.scan.project.files import Candidate
from gpuport.scan.rules.base import FileKind
from tests.scan.project_files import write

_HIP_CMAKE = (
    "cmake_minimum_required(VERSION 3.21)\nproject(foo LANGUAGES CXX HIP)\n"
    "set_source_files_properties({srcs} PROPERTIES LANGUAGE HIP)\nadd_library(k {srcs})\n"
)
_BALLOT = "__global__ void k(unsigned *o){ o[0] = __ballot_sync(0xffffffff, threadIdx.x & 1); }\n"


def _scan(root: Path, files: dict[str, str]) -> ScanReport:
    return scan_path(write(root, files), ScanOptions(jobs=1))


def _severities(report: ScanReport, rule: str, path: str) -> list[str]:
    return [
        f.severity.value for f in report.findings if f.rule_id == rule and f.location.path == path
    ]


def test_f3_a_lane_a_helper_in_an_included_header_shuffles_is_a_hardware_lane(
    tmp_path: Path,
) -> None:
    """`lane = threadIdx.x % 32` passed to `read_lane`, which util.cuh defines with
    `__shfl_sync`: a hardware lane, not a logical 32-thread group (also through a second
    helper). Without any shuffle in the project the lane is still a logical group (info)."""
    util = (
        "#pragma once\n__device__ __forceinline__ float read_lane(float v, int src) {\n"
        "  return __shfl_sync(__activemask(), v, src);\n}\n"
    )
    kernel = (
        '#include "util.cuh"\n__global__ void rotate(const float* in, float* out) {\n'
        "  int lane = threadIdx.x % 32;\n  float v = in[threadIdx.x];\n"
        "  out[threadIdx.x] = {call}(v, (lane + 1) % 32);\n}\n"
    )
    cmake = _HIP_CMAKE.format(srcs="k.cu")
    files = {
        "util.cuh": util,
        "k.cu": kernel.replace("{call}", "read_lane"),
        "CMakeLists.txt": cmake,
    }
    report = _scan(tmp_path / "a", files)
    assert set(_severities(report, "GP304", "k.cu")) - {"info"}, report.findings
    assert report.verdict.value != "ready"
    # through a helper of a helper
    relay = util + "__device__ float relay(float v, int s) { return read_lane(v, s); }\n"
    files = {**files, "util.cuh": relay, "k.cu": kernel.replace("{call}", "relay")}
    assert set(_severities(_scan(tmp_path / "b", files), "GP304", "k.cu")) - {"info"}
    # no shuffle anywhere: logical 32-thread groups addressed through memory
    plain = "#pragma once\n__device__ float read_lane(float v, int s) { return v + s; }\n"
    files = {**files, "util.cuh": plain, "k.cu": kernel.replace("{call}", "read_lane")}
    assert set(_severities(_scan(tmp_path / "c", files), "GP304", "k.cu")) == {"info"}


def test_f5_a_recent_generation_header_the_hip_build_includes_is_compiled(tmp_path: Path) -> None:
    """kernels/sm90/gemm_utils.cuh, included by the ops.cu the HIP CMake build compiles, is
    compiled by the ROCm build: its 32-bit ballot mask stays a blocker."""
    body = "__device__ float gemm_tile(const float* a, int k) { return a[k]; }\n"
    files = {
        "kernels/sm80/gemm.cuh": "#pragma once\n" + body,
        "kernels/sm90/gemm.cuh": "#pragma once\n" + body,
        "kernels/sm90/gemm_utils.cuh": (
            "#pragma once\n__device__ unsigned gemm_vote(bool p) "
            "{ return __ballot_sync(0xffffffff, p); }\n"
        ),
        "ops.cu": (
            '#include "kernels/sm80/gemm.cuh"\n#include "kernels/sm90/gemm_utils.cuh"\n'
            "__global__ void op(const float* a, float* c, unsigned* v) "
            "{ c[threadIdx.x] = gemm_tile(a, 4); v[0] = gemm_vote(c[0] > 0); }\n"
        ),
        "CMakeLists.txt": _HIP_CMAKE.format(srcs="ops.cu"),
    }
    report = _scan(tmp_path, files)
    assert "kernels/sm90/gemm_utils.cuh" not in report.not_built
    assert "blocker" in _severities(report, "GP302", "kernels/sm90/gemm_utils.cuh")
    assert report.verdict.value == "blocked"


def test_f15_a_recent_generation_source_the_hip_build_lists_is_compiled(tmp_path: Path) -> None:
    """A HIP CMake build listing kernels/sm80/gemm.cu and kernels/sm90/gemm.cu compiles both:
    sm90/gemm.cu's blocker stays. A CUDA build naming both compiles both too."""
    sm80 = "__global__ void gemm_sm80(const float* a, float* c) { c[threadIdx.x] = a[0]; }\n"
    sm90 = (
        "__global__ void gemm_sm90(const float* a, float* c, unsigned* v) "
        "{ c[threadIdx.x] = a[0]; v[0] = __ballot_sync(0xffffffff, c[0] > 0); }\n"
    )
    srcs = "kernels/sm80/gemm.cu kernels/sm90/gemm.cu"
    files = {
        "kernels/sm80/gemm.cu": sm80,
        "kernels/sm90/gemm.cu": sm90,
        "CMakeLists.txt": _HIP_CMAKE.format(srcs=srcs),
    }
    report = _scan(tmp_path / "a", files)
    assert "kernels/sm90/gemm.cu" not in report.not_built
    assert report.verdict.value == "blocked"
    files["CMakeLists.txt"] = (
        "cmake_minimum_required(VERSION 3.18)\nproject(foo LANGUAGES CXX CUDA)\n"
        f"add_library(k {srcs})\n"
    )
    assert "kernels/sm90/gemm.cu" not in _scan(tmp_path / "b", files).not_built


def test_f6_a_hip_stub_sharing_one_helper_does_not_stand_in(tmp_path: Path) -> None:
    """src/hip/k.cu, which no build names and which defines only the `ceil_div` helper the
    built src/cuda/k.cu also defines, is no HIP counterpart; one defining its kernel is."""
    cuda = (
        "static inline __host__ __device__ int ceil_div(int a, int b) "
        "{ return (a + b - 1) / b; }\n"
        "__global__ void vote(const float* x, unsigned* o) "
        "{ o[blockIdx.x] = __ballot_sync(0xffffffff, x[threadIdx.x] > 0); }\n"
        "void launch(const float* x, unsigned* o, int n) { vote<<<ceil_div(n, 32), 32>>>(x, o); }\n"
    )
    stub = (
        "// HIP port: work in progress\n"
        "static inline __host__ __device__ int ceil_div(int a, int b) "
        "{ return (a + b - 1) / b; }\n"
    )
    make = (
        "all: libk.so\nlibk.so: src/cuda/k.cu\n"
        "\tnvcc -shared -Xcompiler -fPIC -o libk.so src/cuda/k.cu\n"
    )
    files = {"src/cuda/k.cu": cuda, "src/hip/k.cu": stub, "Makefile": make}
    report = _scan(tmp_path / "a", files)
    assert "src/cuda/k.cu" not in report.not_built
    assert report.verdict.value == "blocked"
    port = (
        stub
        + "__global__ void vote(const float* x, unsigned long long* o) { o[blockIdx.x] = 0; }\n"
    )
    assert "src/cuda/k.cu" in _scan(tmp_path / "b", {**files, "src/hip/k.cu": port}).not_built


def test_f10_an_unconfigured_header_template_is_no_rocm_shim(tmp_path: Path) -> None:
    """cmake/legacy/warp_compat.h.in, which no build configures and whose header nothing
    includes, supplies no shim; configured and included, it does."""
    shim = (
        "#pragma once\n#if defined(__HIP_PLATFORM_AMD__)\n"
        "#define __ballot_sync(mask, pred) __ballot(pred)\n#endif\n"
    )
    cmake = "cmake_minimum_required(VERSION 3.18)\nproject(foo LANGUAGES CXX CUDA)\n"
    files = {
        "k.cu": "#include <cuda_runtime.h>\n" + _BALLOT,
        "CMakeLists.txt": cmake + "add_library(k k.cu)\n",
        "cmake/legacy/warp_compat.h.in": shim,
    }
    report = _scan(tmp_path / "a", files)
    assert _severities(report, "GP302", "k.cu") == ["blocker"]
    assert report.verdict.value == "blocked"
    # configured but its header included by nothing: still no shim
    configure = "configure_file(cmake/legacy/warp_compat.h.in warp_compat.h)\n"
    files["CMakeLists.txt"] = cmake + configure + "add_library(k k.cu)\n"
    assert _severities(_scan(tmp_path / "b", files), "GP302", "k.cu") == ["blocker"]
    # configured and included: the project's ROCm shim
    files["k.cu"] = '#include "warp_compat.h"\n' + _BALLOT
    assert _severities(_scan(tmp_path / "c", files), "GP302", "k.cu") == ["info"]


_SETUP_HEAD = (
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
)


def test_f12_a_data_file_named_by_many_reads_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """setup.py with 300 `open("kernels.txt")` calls: kernels.txt is read once."""
    setup = _SETUP_HEAD + '_ = open("kernels.txt")\n' * 300
    setup += 'setup(name="x", ext_modules=[CUDAExtension("k", ["k.cu"])])\n'
    root = write(
        tmp_path,
        {"setup.py": setup, "kernels.txt": "other.cu\n", "k.cu": "__global__ void k(){}\n"},
    )
    reads: list[str] = []
    real = fileio.read_text_or_none

    def counting(path: Path, *args: object, **kwargs: object) -> str | None:
        reads.append(Path(path).name)
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(unnamed_module.fileio, "read_text_or_none", counting)
    candidates = [Candidate(root / "setup.py", "setup.py", FileKind.SETUP_PY, root)]
    native = {"k.cu": "__global__ void k(){}\n", "other.cu": "__global__ void o(){}\n"}
    got = unnamed_module.unnamed_sources(root, candidates, native, {"setup.py": setup})
    assert reads.count("kernels.txt") == 1
    assert "other.cu" not in got  # kernels.txt names it


def test_f13_a_source_list_read_with_configparser_names_its_sources(tmp_path: Path) -> None:
    """`cfg.read("build.cfg")` and the sources it lists: named, so the kernel's blocker
    stays; `cfg.read(path)` of a name not written leaves them unknown."""
    setup = (
        "import configparser\n" + _SETUP_HEAD + "cfg = configparser.ConfigParser()\n"
        'cfg.read("build.cfg")\nsources = cfg["extension"]["sources"].split()\n'
        'setup(name="fastops", ext_modules=[CUDAExtension("fastops._C", sources)],'
        ' cmdclass={"build_ext": BuildExtension})\n'
    )
    files = {
        "setup.py": setup,
        "build.cfg": "[extension]\nsources = csrc/bind.cpp csrc/warp_kernels.cu\n",
        "csrc/bind.cpp": "void vote();\nint main() { vote(); }\n",
        "csrc/warp_kernels.cu": "#include <cuda_runtime.h>\n" + _BALLOT + "void vote() {}\n",
    }
    report = _scan(tmp_path / "a", files)
    assert "csrc/warp_kernels.cu" not in report.not_built
    assert report.verdict.value == "blocked"
    files["setup.py"] = setup.replace('cfg.read("build.cfg")', "cfg.read(CFG_PATH)").replace(
        "import configparser\n", 'import configparser, os\nCFG_PATH = os.environ["CFG"]\n'
    )
    assert "csrc/warp_kernels.cu" not in _scan(tmp_path / "b", files).not_built
