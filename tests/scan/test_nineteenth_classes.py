"""Issue 24, nineteenth sample's classes (development data since its before run, the held-out
figure for session 13's and 14's first changes)."""

from __future__ import annotations

from pathlib import Path

from tests.scan.project_files import scan_files

_FLAGS = """\
#define FI_HMEM\t\t(1ULL << 47)
#define FI_SHARED_AV\t\t(1ULL << 53)
#define FI_RMA_EVENT\t\t(1ULL << 56)
"""


def _gp318_lines(root: Path, text: str) -> list[int]:
    r = scan_files(root, {"include/fabric.h": text, "src/k.cu": '#include "../include/fabric.h"\n'
                          "__global__ void k(float *x) { x[threadIdx.x] = 0; }\n"})  # fmt: skip
    return [f.location.line for f in r.findings if f.rule_id == "GP318"]


def test_a_flag_bit_named_shared_is_not_a_shared_memory_size(tmp_path: Path) -> None:
    """libfabric's ``FI_SHARED_AV (1ULL << 53)``: more than any NVIDIA GPU gives a block, so
    not a size in bytes; a size NVIDIA gives and the target does not stays a finding."""
    assert _gp318_lines(tmp_path / "a", _FLAGS) == []
    sized = _FLAGS + "#define MAX_SHARED_BYTES (160 * 1024)\n"
    assert _gp318_lines(tmp_path / "b", sized) == [4]


_CAPABILITY = (
    "import torch\n"
    "def pick():\n"
    "    if torch.cuda.get_device_capability()[0] >= 9:\n"
    "        return 'hopper'\n"
    "    return 'generic'\n"
)
_PROBE = "import subprocess\nOUT = subprocess.run(['nvidia-smi', '-L'], capture_output=True)\n"


def _core_majors(root: Path, files: dict[str, str], routes: list[str] | None = None) -> set[str]:
    r = scan_files(root, files)
    if routes is not None:
        routes += [f"{e.kind}:{e.path}" for e in r.routes if e.counts]
    return {
        f.location.path
        for f in r.findings
        if f.scope == "core" and f.severity.value in ("major", "blocker")
    }


def test_other_vendors_packages_beside_an_amd_one_are_not_loaded_on_rocm(tmp_path: Path) -> None:
    """FlagGems' ``runtime/backend/_kunlunxin`` and ``_nvidia`` beside ``_amd``: a ROCm run
    imports only the AMD package; shared code of the folder and the packages of a folder
    with no AMD package stay the ROCm run's."""
    base = "pkg/runtime/backend"
    files = {
        "setup.py": "from setuptools import setup\nsetup(name='pkg')\n",
        f"{base}/__init__.py": "",
        f"{base}/_amd/__init__.py": "QUERY = 'rocm-smi'\n",
        f"{base}/_nvidia/__init__.py": _PROBE,
        f"{base}/_kunlunxin/ops.py": _CAPABILITY,
        f"{base}/shared.py": _CAPABILITY,
        "pkg/other/_kunlunxin/ops.py": _CAPABILITY,
    }
    routes: list[str] = []
    got = _core_majors(tmp_path / "a", files, routes)
    assert routes == [f"code:{base}/_amd/"]  # the AMD package is a route of its own
    assert f"{base}/_kunlunxin/ops.py" not in got
    assert f"{base}/_nvidia/__init__.py" not in got
    assert f"{base}/shared.py" in got
    assert "pkg/other/_kunlunxin/ops.py" in got
    # no AMD package beside them: every vendor package may be the one a ROCm run loads
    del files[f"{base}/_amd/__init__.py"]
    routes = []
    got = _core_majors(tmp_path / "b", files, routes)
    assert f"{base}/_kunlunxin/ops.py" in got
    assert routes == []


_KERNEL = "__global__ void k(float *x) { x[threadIdx.x] = 0; }\n"


def _routes(root: Path, files: dict[str, str]) -> list[tuple[str, str]]:
    r = scan_files(root, {"src/k.cu": _KERNEL, **files})
    return [(e.kind, e.path) for e in r.routes if e.counts]


def test_an_autotools_rocm_option_is_a_route(tmp_path: Path) -> None:
    """libfabric's ``AC_ARG_WITH([rocr], ...)``, Grid's ``--enable-accelerator=cuda|sycl|hip``
    and ELPA's ``AC_ARG_ENABLE([amd-gpu], ...)`` configure a ROCm build."""
    for n, text in enumerate(
        (
            "AC_INIT([x], [1])\nAC_ARG_WITH([rocr],\n"
            "  [AS_HELP_STRING([--with-rocr=DIR], [ROCR])])\n",
            "AC_ARG_ENABLE([accelerator],\n"
            "    [AS_HELP_STRING([--enable-accelerator=cuda|sycl|hip|none], [acceleration])])\n",
            "AC_ARG_ENABLE([amd-gpu],\n  AS_HELP_STRING([--enable-amd-gpu], [AMD GPU kernels]))\n",
        )
    ):
        assert _routes(tmp_path / str(n), {"configure.ac": text}) == [("build", "configure.ac")]
    plain = "AC_INIT([x], [1])\nAC_ARG_WITH([cuda], [AS_HELP_STRING([--with-cuda=DIR], [CUDA])])\n"
    assert _routes(tmp_path / "plain", {"configure.ac": plain}) == []


def test_a_ci_step_that_only_names_rocm_is_not_a_route(tmp_path: Path) -> None:
    """libfabric's "Install ROCm" step echoes a line and leaves a TODO; a step that installs
    ROCm is a route."""
    echo = (
        "jobs:\n  build:\n    runs-on: ubuntu-22.04\n    steps:\n"
        "      - name: Install ROCm\n        run: |\n"
        '          echo "Installing ROCm SDK"\n'
        "          # TODO: install ROCm and add --with-rocm\n"
    )
    assert _routes(tmp_path / "a", {".github/workflows/ci.yml": echo}) == []
    real = echo + "          sudo apt-get install -y rocm-hip-sdk\n"
    assert _routes(tmp_path / "b", {".github/workflows/ci.yml": real}) == [
        ("ci", ".github/workflows/ci.yml")
    ]


_MAKE = """\
#AMD with openMP
#CXXFLAGS = -O2 -fopenmp-targets=amdgcn-amd-amdhsa -march=gfx90a -fopenmp

#AMD with HIP
CXX = mpicxx
CPPFLAGS = -DHAVE_MPI -DHAVE_HIP -x hip --offload-arch=gfx90a -fgpu-rdc
LDFLAGS = -fgpu-rdc --hip-link --offload-arch=gfx90a

# NVIDIA with CUDA
#CXX = nvcc
#CPPFLAGS = -DHAVE_CUDA -x cu

app: main.o
\t$(CXX) -o $@ $^ $(LDFLAGS)
"""


def test_a_makefile_whose_active_flags_compile_hip_is_a_rocm_build(tmp_path: Path) -> None:
    """Quicksilver's ``src/Makefile``: the HIP configuration block is the active one, the
    others commented out. With it commented out too, nothing builds HIP."""
    assert _routes(tmp_path / "a", {"src/Makefile": _MAKE}) == [("build", "src/Makefile")]
    commented = _MAKE.replace("CPPFLAGS = -DHAVE_MPI", "#CPPFLAGS = -DHAVE_MPI").replace(
        "LDFLAGS = -fgpu", "#LDFLAGS = -fgpu"
    )
    assert _routes(tmp_path / "b", {"src/Makefile": commented}) == []


_HOST_SHAPE = """\
__global__ void rope(float *x, int n) {
    int i = blockIdx.x * blockDim.y * blockDim.x + threadIdx.y * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
}

void launch(float *x, int n, int heads) {
    constexpr unsigned warp_size = 32;
    dim3 nthreads(warp_size, heads);
    rope<<<(n + 255) / 256, nthreads>>>(x, n);
}
"""


def test_a_warp_constant_set_in_host_code_shapes_a_launch(tmp_path: Path) -> None:
    """Nanoflow's ``constexpr uint32_t warp_size = 32;`` in a host function: the x-extent of
    a block; the kernel's lanes are the kernel's finding. In device code next to a 32-bit
    ballot, the same constant stays a hazard."""

    def gp303(root: Path, text: str) -> list[str]:
        r = scan_files(root, {"src/k.cu": text})
        return [f.severity.value for f in r.findings if f.rule_id == "GP303"]

    assert gp303(tmp_path / "a", _HOST_SHAPE) == ["info"]
    device = (
        "__global__ void count(const float *x, unsigned *out) {\n"
        "    constexpr unsigned warp_size = 32;\n"
        "    unsigned b = __ballot_sync(0xffffffffu, x[threadIdx.x] > 0);\n"
        "    if (threadIdx.x % warp_size == 0) out[threadIdx.x / warp_size] = __popc(b);\n"
        "}\n"
    )
    got = gp303(tmp_path / "b", device)
    assert got and got[0] != "info", got


_CMAKE = """\
cmake_minimum_required(VERSION 3.26)
project(gems LANGUAGES CXX)
option(GEMS_BUILD_C_EXTENSIONS "whether to build the C extension" OFF)

if(NOT GEMS_BUILD_C_EXTENSIONS)
  return()
endif()

find_package(CUDAToolkit REQUIRED)
add_library(ext SHARED src/ext.cpp)
"""


def _gp401(root: Path, cmake: str) -> list[str]:
    r = scan_files(root, {"CMakeLists.txt": cmake, "src/ext.cpp": "int f() { return 0; }\n"})
    return [f.severity.value for f in r.findings if f.rule_id == "GP401"]


def test_cmake_after_the_early_return_of_an_option_off_by_default(tmp_path: Path) -> None:
    """FlagGems: ``if(NOT FLAGGEMS_BUILD_C_EXTENSIONS) return() endif()`` before the CUDA
    lookup of an opt-in C extension: a default build configures none of it. ON by default,
    or a branch that does more than return, and it stays every build's."""
    assert _gp401(tmp_path / "a", _CMAKE) == ["info"]
    on = _CMAKE.replace('extension" OFF)', 'extension" ON)')
    assert _gp401(tmp_path / "b", on) not in ([], ["info"])
    more = _CMAKE.replace("  return()\n", '  message(STATUS "no ext")\n')
    assert _gp401(tmp_path / "c", more) not in ([], ["info"])
    # the switch of the GPU build itself (TurboTransformers' WITH_GPU): a ROCm build sets it
    gpu = _CMAKE.replace("GEMS_BUILD_C_EXTENSIONS", "WITH_GPU")
    assert _gp401(tmp_path / "d", gpu) not in ([], ["info"])
