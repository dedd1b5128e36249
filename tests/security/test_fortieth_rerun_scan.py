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


def test_f7_a_lone_kernel_in_common_is_no_older_variant_of_sm90(tmp_path: Path) -> None:
    """kernels/sm90/gemm.cu beside an unrelated kernels/common/fill.cu, both compiled by a
    glob: gemm.cu is the project's kernel. A common/gemm.cu with device code is its variant."""
    setup = (
        "import glob\nfrom setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        'setup(name="g", ext_modules=[CUDAExtension("g_ext", glob.glob("kernels/**/*.cu",'
        ' recursive=True))], cmdclass={"build_ext": BuildExtension})\n'
    )
    fill = "__global__ void fill(float* x){ x[threadIdx.x] = 0; }\n"
    files = {"kernels/sm90/gemm.cu": _PTX_KERNEL, "kernels/common/fill.cu": fill}
    root = write(tmp_path / "a", {**files, "setup.py": setup})
    assert "kernels/sm90/gemm.cu" not in _not_built(root)
    assert _verdict(root) == "blocked"
    # headers too: a lone common/fill.cuh shares no name with sm90/gemm.cuh
    headers = {"kernels/sm90/gemm.cuh": _PTX_KERNEL, "kernels/common/fill.cuh": fill}
    main = '#include "kernels/sm90/gemm.cuh"\n#include "kernels/common/fill.cuh"\n'
    build = {"main.cu": main, "Makefile": "all:\n\tnvcc -o app main.cu\n"}
    assert _verdict(write(tmp_path / "h", {**headers, **build})) == "blocked"
    # the same kernel for the older generation: sm90/gemm.cu is the variant a ROCm build skips
    twin = {"kernels/common/gemm.cu": fill}
    root = write(tmp_path / "v", {**files, **twin, "setup.py": setup})
    assert "kernels/sm90/gemm.cu" in _not_built(root)


def test_f8_a_readme_comment_is_no_documented_route(tmp_path: Path) -> None:
    """Text inside an HTML comment (closed or not), an RST comment, or a TODO line is not
    documentation a user reads: no route. The same step shown is one."""
    base = {"k.cu": _PTX_KERNEL, "CMakeLists.txt": _CMAKE}
    step = "docker run --device=/dev/kfd rocm/pytorch"
    readmes = (
        ("README.md", f"# kdemo\n\nFast kernels.\n\n<!--\n{step}\n-->\n"),
        ("README.md", f"# kdemo\n\n<!-- {step}\n"),
        ("README.md", f"# kdemo\n\nTODO(someday): {step}\n"),
        ("README.rst", f"kdemo\n=====\n\n..\n   {step}\n\nFast kernels.\n"),
        ("README.rst", f"kdemo\n=====\n\n.. {step}\n"),
    )
    for i, (name, text) in enumerate(readmes):
        assert _verdict(write(tmp_path / f"p{i}", {**base, name: text})) == "blocked", text
    shown = f"# kdemo\n\n<!-- a note -->\n\n    {step}\n"
    assert _verdict(write(tmp_path / "s", {**base, "README.md": shown})) != "blocked"
    rst = f"kdemo\n=====\n\n.. code-block:: bash\n\n   {step}\n"
    assert _verdict(write(tmp_path / "r", {**base, "README.rst": rst})) != "blocked"


def test_f9_an_installer_comment_or_negation_is_no_route(tmp_path: Path) -> None:
    """install.py's comment or docstring naming a +rocm build, or a string that says AMD is
    not supported, is no route; a ROCm package the installer passes to pip is one."""
    base = {"k.cu": _PTX_KERNEL, "CMakeLists.txt": _CMAKE}
    pip = (
        "import subprocess, sys\n"
        'subprocess.check_call([sys.executable, "-m", "pip", "install", "-r", "r.txt"])\n'
    )
    decoys = (
        "# NOTE: AMD is NOT supported -- torch 2.3.0+rocm6.0 wheels crash on import\n",
        '"""Installs the CUDA build (the +rocm6.0 wheels are for later)."""\n',
        'print("AMD is not supported: torch 2.3.0+rocm6.0 crashes")\n',
    )
    for i, decoy in enumerate(decoys):
        root = write(tmp_path / f"p{i}", {**base, "install.py": decoy + pip})
        assert _verdict(root) == "blocked", decoy
    real = pip + 'subprocess.check_call(["pip", "install", "onnxruntime-rocm==1.22"])\n'
    assert _verdict(write(tmp_path / "r", {**base, "install.py": real})) != "blocked"


def test_f12_a_hip_twin_no_build_compiles_and_that_defines_nothing_hides_nothing(
    tmp_path: Path,
) -> None:
    """cuda/k.cu compiled by the only (CUDA) build beside a hip/k.cu holding one variable:
    blocked. A twin that defines the kernel, or one a build names, stands in for it."""
    cmake = "cmake_minimum_required(VERSION 3.18)\nproject(k LANGUAGES CXX CUDA)\n"
    base = {"cuda/k.cu": _PTX_KERNEL, "CMakeLists.txt": cmake + "add_library(k cuda/k.cu)\n"}
    stub = "// HIP port: work in progress\nint hip_port_version = 0;\n"
    root = write(tmp_path / "a", {**base, "hip/k.cu": stub})
    assert "cuda/k.cu" not in _not_built(root)
    assert _verdict(root) == "blocked"
    kernel = "__global__ void k(unsigned* x){ x[threadIdx.x] = 0; }\n"
    root = write(tmp_path / "b", {**base, "hip/k.cu": kernel})
    assert "cuda/k.cu" in _not_built(root)


def test_f17_a_toolkit_home_the_setup_py_sets_itself_is_no_opt_in(tmp_path: Path) -> None:
    """`if "CUDA_HOME" in os.environ:` after the file sets CUDA_HOME itself (setdefault, an
    item, update, putenv, an alias) is always true: the extension is built by default. Read
    from the user's environment, it is opt-in (fairseq, seventeenth sample)."""
    head = (
        "import os\nfrom setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
    )
    tail = (
        'ext = []\nif "CUDA_HOME" in os.environ:\n    ext.append(CUDAExtension("kext", ["k.cu"]))\n'
        'setup(name="kpkg", ext_modules=ext, cmdclass={"build_ext": BuildExtension})\n'
    )
    writes = (
        'os.environ.setdefault("CUDA_HOME", "/usr/local/cuda")\n',
        'os.environ["CUDA_HOME"] = "/usr/local/cuda"\n',
        'os.environ.update({"CUDA_HOME": "/usr/local/cuda"})\n',
        'os.putenv("CUDA_HOME", "/usr/local/cuda")\n',
        'env = os.environ\nenv["CUDA_HOME"] = "/usr/local/cuda"\n',
    )
    for i, set_home in enumerate(writes):
        root = write(tmp_path / f"p{i}", {"k.cu": _PTX_KERNEL, "setup.py": head + set_home + tail})
        assert _verdict(root) == "blocked", set_home
    other = 'os.environ["MAX_JOBS"] = "4"\n'
    root = write(tmp_path / "o", {"k.cu": _PTX_KERNEL, "setup.py": head + other + tail})
    assert _verdict(root) != "blocked"


def _gpu_cmake_majors(root: Path) -> int:
    report = scan_path(root, ScanOptions(jobs=1))
    return sum(
        1
        for f in report.findings
        if f.location.path == "cmake/gpu.cmake" and f.severity.value == "major"
    )


def test_f18_a_cpu_cache_file_that_names_hip_in_a_message_chooses_no_hip(
    tmp_path: Path,
) -> None:
    """A sibling initial-cache file selects HIP by a set() value (AMReX_GPU_BACKEND HIP) or a
    HIP setting turned on, not by a word in message()."""
    cmake = (
        "cmake_minimum_required(VERSION 3.18)\nproject(sim LANGUAGES CXX)\n"
        'option(SIM_GPU "GPU build" OFF)\nif(SIM_GPU)\n  enable_language(CUDA)\nendif()\n'
        "add_executable(sim main.cpp)\n"
    )
    gpu = (
        'set(SIM_GPU ON CACHE BOOL "")\nset(CMAKE_CUDA_COMPILER nvcc CACHE STRING "")\n'
        'set(CMAKE_CUDA_ARCHITECTURES 80 CACHE STRING "")\n'
        'set(CMAKE_CUDA_FLAGS "-gencode arch=compute_80,code=sm_80" CACHE STRING "")\n'
    )
    base = {
        "CMakeLists.txt": cmake,
        "main.cpp": "int main() { return 0; }\n",
        "cmake/gpu.cmake": gpu,
    }
    plain = _gpu_cmake_majors(write(tmp_path / "plain", base))
    assert plain > 0
    decoys = (
        'set(SIM_GPU OFF CACHE BOOL "")\nmessage(STATUS "CPU-only build: no CUDA, no HIP")\n',
        'set(SIM_GPU OFF CACHE BOOL "")\nmessage(STATUS "ROCm/gfx90a: see docs/hip.md")\n',
    )
    for i, cpu in enumerate(decoys):
        root = write(tmp_path / f"d{i}", {**base, "cmake/cpu.cmake": cpu})
        assert _gpu_cmake_majors(root) == plain, cpu
    # quokka's layout: a machine file that sets the HIP backend is the AMD alternative
    hip = 'set(AMReX_GPU_BACKEND HIP CACHE STRING "")\nset(AMReX_AMD_ARCH gfx90a CACHE STRING "")\n'
    assert _gpu_cmake_majors(write(tmp_path / "h", {**base, "cmake/amd.cmake": hip})) == 0


def test_f20_a_readme_that_denies_retracts_or_wishes_is_no_route(tmp_path: Path) -> None:
    """Sentences that deny, retract, wish for or ask about AMD support state no support;
    a stated one still does, and so does llamafile's caveat beside it."""
    base = {"k.cu": _PTX_KERNEL, "CMakeLists.txt": _CMAKE}
    for i, line in enumerate(
        (
            "Does not yet support AMD GPUs.",
            "Support for ROCm was removed in v2.0.",
            "Support for ROCm was dropped in 2023.",
            "We would love support for AMD GPUs (PRs welcome).",
            "Support for AMD GPUs is wanted: see #123.",
            "It should support AMD GPUs via HIP, but nobody has tried.",
            "AMD GPUs are supported? No.",
            "Someone asked whether it runs on AMD Instinct; we don't know.",
        )
    ):
        root = write(tmp_path / f"p{i}", {**base, "README.md": f"# k\n\n{line}\n"})
        assert _verdict(root) == "blocked", line
    for i, line in enumerate(
        ("Runs on AMD GPUs too.", "Multiple GPU support may be broken on AMD Radeon systems.")
    ):
        root = write(tmp_path / f"s{i}", {**base, "README.md": f"# k\n\n{line}\n"})
        assert _verdict(root) != "blocked", line


def test_f22_a_page_named_for_amd_that_says_it_is_unsupported_is_no_route(
    tmp_path: Path,
) -> None:
    """docs/amd.md that only says AMD GPUs are not supported is no route by its name; a page
    so named that gives a step, or says nothing against it, still is."""
    base = {"k.cu": _PTX_KERNEL, "CMakeLists.txt": _CMAKE}
    no = "# AMD GPUs\n\nAMD GPUs are not supported. This library needs NVIDIA Hopper.\n"
    assert _verdict(write(tmp_path / "n", {**base, "docs/amd.md": no})) == "blocked"
    for i, page in enumerate(
        (
            "# AMD GPUs\n\nBuild with `cmake -DUSE_HIP=ON ..` on a ROCm machine.\n",
            "# AMD GPUs\n\nSee the build guide.\n",
        )
    ):
        root = write(tmp_path / f"y{i}", {**base, "docs/amd.md": page})
        assert _verdict(root) != "blocked", page
