"""Issue 24, eighteenth sample's classes (development data since its before run, which is the
held-out figure for session 13's changes): a conda environment file no other file of an
installable package names (GroundingDINO's ``environment.yaml``, the documented install
being ``pip install -e .``; DROID-SLAM's in the seventeenth) is nobody's install route."""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from tests.scan.project_files import scan_files

_ENV = """\
name: dino
channels:
  - nvidia
  - pytorch
dependencies:
  - cuda-cudart=12.1.105=0
  - pytorch-cuda=12.1=ha16c6d3_5
"""
_SETUP = 'from setuptools import setup\nsetup(name="dino", install_requires=["numpy"])\n'
_CODE = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n"


def _env_findings(root: Path, files: dict[str, str]) -> list[tuple[Severity, str]]:
    r = scan_files(root, files)
    return [(f.severity, f.scope) for f in r.findings if f.location.path == "environment.yaml"]


def test_a_conda_file_no_file_names_is_nobodys_install(tmp_path: Path) -> None:
    files = {"setup.py": _SETUP, "dino/model.py": _CODE, "environment.yaml": _ENV,
             "README.md": "# dino\n\n    pip install -e .\n"}  # fmt: skip
    got = _env_findings(tmp_path / "a", files)
    assert got and all(sev is Severity.INFO and scope == "extra" for sev, scope in got), got
    # named by the README: an install route, so core
    named = {**files, "README.md": "# dino\n\n    conda env create -f environment.yaml\n"}
    got = _env_findings(tmp_path / "b", named)
    assert any(sev is not Severity.INFO and scope == "core" for sev, scope in got), got
    # no package to install otherwise: the conda file is the install
    bare = {k: v for k, v in files.items() if k != "setup.py"}
    got = _env_findings(tmp_path / "c", bare)
    assert any(sev is not Severity.INFO and scope == "core" for sev, scope in got), got


_MAKE = """\
NVCC ?= nvcc
HIPCC ?= hipcc
NVCCFLAGS := -O3 -Xcompiler -fopenmp
HIPCCFLAGS := -O3 {hipflags}
ifeq ($(shell which $(NVCC)),)
all: k-hip
else
all: k-cuda
endif
k-cuda: k.cu
\t$(NVCC) $(NVCCFLAGS) -o k k.cu
k-hip: k.cu
\t$(HIPCC) $(HIPCCFLAGS) -x hip -o k k.cu
"""


def _make_core(root: Path, makefile: str) -> set[tuple[str, int | None]]:
    r = scan_files(root, {"Makefile": makefile, "k.cu": "__global__ void k() {}\n"})
    return {
        (f.rule_id, f.location.line)
        for f in r.findings
        if f.severity in (Severity.BLOCKER, Severity.MAJOR) and f.scope == "core"
    }


def test_a_makefiles_cuda_side_beside_its_hip_build(tmp_path: Path) -> None:
    # qsim: NVCC's own variables and the nvcc probe of a Makefile that builds with hipcc too
    core = _make_core(tmp_path / "a", _MAKE.format(hipflags=""))
    assert not {c for c in core if c[1] in (1, 3, 5)}, core
    # the HIP side reads NVCCFLAGS: the CUDA flags reach hipcc, so they stay
    core = _make_core(tmp_path / "b", _MAKE.format(hipflags="$(NVCCFLAGS)"))
    assert ("GP402", 3) in core, core


_OPT_IN = """\
import sys
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

DISABLE_CUDA_EXTENSION = True
filtered = []
for arg in sys.argv:
    if arg == "--enable-cuda-ext":
        DISABLE_CUDA_EXTENSION = False
        continue
    filtered.append(arg)
sys.argv = filtered

ext_modules = []
if not DISABLE_CUDA_EXTENSION:
    ext_modules.append(CUDAExtension("fused", ["csrc/fused.cu"]))
setup(name="uc", ext_modules=ext_modules, cmdclass={"build_ext": BuildExtension})
"""
_FUSED = "__device__ float r(float v) { return __shfl_down_sync(0xffffffff, v, 1); }\n"


def test_blockers_only_in_extensions_a_default_install_skips(tmp_path: Path) -> None:
    files = {"setup.py": _OPT_IN, "csrc/fused.cu": _FUSED, "uc/model.py": _CODE}
    r = scan_files(tmp_path / "a", files)
    assert r.verdict.value == "major work", r.verdict_reason
    assert "native extensions a default install does not build (setup.py:15)" in r.verdict_reason
    # built by default: blocked
    always = _OPT_IN.replace("if not DISABLE_CUDA_EXTENSION:", "if True:")
    assert scan_files(tmp_path / "b", {**files, "setup.py": always}).verdict.value == "blocked"
    # the switch also set outside the argv loop (a default that can be on): blocked
    env = _OPT_IN.replace(
        "sys.argv = filtered\n",
        "sys.argv = filtered\nDISABLE_CUDA_EXTENSION = bool(sys.platform)\n",
    )
    assert scan_files(tmp_path / "c", {**files, "setup.py": env}).verdict.value == "blocked"


def test_a_conda_file_its_own_folders_readme_names_is_an_install(tmp_path: Path) -> None:
    # NeMo's examples/voice_agent/README.md: `conda env create -f environment.yml`
    files = {"setup.py": _SETUP, "dino/model.py": _CODE, "examples/agent/environment.yaml": _ENV,
             "examples/agent/README.md": "conda env create -f environment.yaml\n"}  # fmt: skip
    r = scan_files(tmp_path, files)
    got = [f.severity for f in r.findings if f.location.path == "examples/agent/environment.yaml"]
    assert got and any(sev is not Severity.INFO for sev in got), got


def test_a_conda_environment_another_file_names_is_an_install(tmp_path: Path) -> None:
    # relion: CMake finds the environment by its name, `set(CONDA_ENV_NAME "relion-5.0" ...)`
    files = {"setup.py": _SETUP, "dino/model.py": _CODE, "environment.yaml": _ENV,
             "CMakeLists.txt": 'set(CONDA_ENV_NAME "dino" CACHE STRING "env")\n'}  # fmt: skip
    r = scan_files(tmp_path, files)
    got = [f.severity for f in r.findings if f.location.path == "environment.yaml"]
    assert got and any(sev is not Severity.INFO for sev in got), got


# qsim's state-vector kernels: `warp_size` is a template parameter with the default 32, the
# stride of a layout of 32 real then 32 imaginary components, used only to index data
_LAYOUT = """\
template <typename FP, unsigned warp_size = 32>
__global__ void SetStateUniformKernel(FP v, unsigned long size, FP* state) {
  unsigned lane = threadIdx.x % warp_size;
  unsigned long k = 2 * (blockIdx.x * blockDim.x + threadIdx.x) - lane;
  state[k] = lane < size ? v : 0;
  state[k + warp_size] = 0;
}

template <typename FP, unsigned warp_size = 32>
__global__ void MultiplyKernel(FP a, FP* state) {
  unsigned long k = blockIdx.x * blockDim.x + threadIdx.x;
  state[k] *= a;
}
"""
# the same template constant next to a ballot kept in 32 bits: wrong as written on wave64
_BALLOT = """\
template <typename FP, unsigned warp_size = 32>
__global__ void CountKernel(const FP* x, unsigned* out) {
  unsigned lane = threadIdx.x % warp_size;
  unsigned b = __ballot_sync(0xffffffffu, x[threadIdx.x] > 0);
  if (lane == 0) out[threadIdx.x / warp_size] = __popc(b);
}
"""


def _gp303(root: Path, text: str) -> list[tuple[int, Severity, str]]:
    r = scan_files(root, {"src/k.cu": text})
    return [
        (f.location.line, f.severity, f.message)
        for f in r.findings
        if f.rule_id == "GP303" and f.location.path == "src/k.cu"
    ]


def test_a_template_default_of_32_is_judged_with_its_function(tmp_path: Path) -> None:
    got = _gp303(tmp_path / "a", _LAYOUT)
    assert [line for line, _s, _m in got] == [1, 9], got
    assert all(sev is Severity.INFO for _l, sev, _m in got), got
    assert "correct on a 64-lane wavefront" in got[0][2]
    assert "never uses it" in got[1][2]
    # next to a 32-bit ballot the same constant is a real hazard
    got = _gp303(tmp_path / "b", _BALLOT)
    assert got and got[0][1] is not Severity.INFO, got


# Uni-Core's rmsnorm: a struct's `static constexpr int WarpSize = 32;` (the finding is at the
# name, the unit is the 32 before the `;`), rows of 32 threads reduced with width-32 shuffles
_ROWS = """\
template <typename T>
__device__ T SHFL_XOR(T v, int m, int width) { return __shfl_xor_sync(0xffffffffu, v, m, width); }

struct Params {
    static constexpr int WarpSize = 32;
    static constexpr int Stride = WarpSize * 4;
};

template <typename P>
__global__ void rows(float *x) {
    float v = x[threadIdx.y * P::Stride + threadIdx.x];
    for (int offset = P::WarpSize / 2; offset > 0; offset /= 2) {
        v += SHFL_XOR(v, offset, P::WarpSize);
    }
    x[threadIdx.y] = v;
}
"""


def test_a_struct_member_warp_constant_is_judged_with_its_kernels(tmp_path: Path) -> None:
    got = _gp303(tmp_path / "a", _ROWS)
    assert [(line, sev) for line, sev, _m in got] == [(5, Severity.INFO)], got
    ballot = _ROWS.replace(
        "x[threadIdx.y] = v;", "x[threadIdx.y] = __popc(__ballot_sync(0xffffffffu, v > 0));"
    )
    got = _gp303(tmp_path / "b", ballot)
    assert got and got[0][1] is not Severity.INFO, got
