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
        "csrc/cutlass/include/cutlass/cutlass.h": "#pragma once\n",
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


def test_a_declaration_without_the_librarys_layout_or_named_by_the_build_is_no_copy(
    tmp_path: Path,
) -> None:
    """Two small files (a `project(CUTLASS)` line, a licence) do not make the project's own
    kernel folder a copy (thirty-sixth re-run F7): the library's main header must be there,
    and no build file around it may name its sources."""
    files = _project()
    del files["csrc/cutlass/include/cutlass/cutlass.h"]
    found, skipped = _paths(write(tmp_path / "l", files))
    assert "csrc/cutlass/" not in skipped and "csrc/cutlass/include/cutlass/arch/mma.cuh" in found
    # the project's setup.py compiles sources inside it (a glob or a path): its own code
    for setup in (
        "import glob\nsetup(name='x', ext_modules=[E('k', glob.glob('csrc/cutlass/*.cu'))])\n",
        "setup(name='x', ext_modules=[E('k', ['csrc/cutlass/k.cu'])])\n",
    ):
        named = {**_project(), "setup.py": "from setuptools import setup\n" + setup}
        found, skipped = _paths(write(tmp_path / f"n{len(setup)}", named))
        assert "csrc/cutlass/" not in skipped, skipped
    # an include folder inside it is no source: still a copy
    inc = "setup(name='x', include_dirs=['csrc/cutlass/include'])\n"
    named = {**_project(), "setup.py": "from setuptools import setup\n" + inc}
    _found, skipped = _paths(write(tmp_path / "inc", named))
    assert "csrc/cutlass/" in skipped
    # a pyproject name outside its [project] table declares nothing
    other = _project(copy_cmake="")
    del other["csrc/cutlass/CMakeLists.txt"]
    other["csrc/cutlass/pyproject.toml"] = '[tool.x]\nname = "nvidia-cutlass"\n'
    _found, skipped = _paths(write(tmp_path / "t", other))
    assert "csrc/cutlass/" not in skipped


def test_the_scanned_folder_itself_is_never_a_copy(tmp_path: Path) -> None:
    root = write(tmp_path / "cutlass", {
        "CMakeLists.txt": _CUTLASS_CMAKE, "LICENSE.txt": "Copyright (c) NVIDIA\n",
        "include/cutlass/arch/mma.cuh": _PTX,
    })  # fmt: skip
    found, _skipped = _paths(root)
    assert "include/cutlass/arch/mma.cuh" in found, found


_TORCHANI_SETUP = """\
import sys
from setuptools import setup

FLAGS = {"ext", "ext-all-sms"}


def collect_all_sms():
    sms = {"70", "80"}
    return sms


def setup_kwargs():
    if "dist_info" in sys.argv or "egg_info" in sys.argv:
        return dict()
    from torch.utils.cpp_extension import CUDAExtension
    sms: set = set()
    for sm in ("70", "80"):
        if f"ext-sm{sm}" in sys.argv:
            sms.add(sm)
    if "ext" in sys.argv:
        sms.update(collect_all_sms())
    if not sms:
        print("Will not install the extensions")
        return dict()
    return {"ext_modules": [CUDAExtension("cuaev", ["aev.cu"])]}


setup(name="ani", **setup_kwargs())
"""


def test_extensions_behind_an_early_return_no_default_flag_passes() -> None:
    """torchani builds its CUDA extensions only with a bare ``ext`` flag (pip's
    ``--global-option=ext``): ``sms`` stays empty by default and ``if not sms: return``."""
    from gpuport.scan.project.opt_in import opt_in_extensions

    assert (
        opt_in_extensions(_TORCHANI_SETUP)
        == _TORCHANI_SETUP.splitlines().index("    if not sms:") + 1
    )
    # filled outside any sys.argv test: built by default
    filled = _TORCHANI_SETUP.replace("    if not sms:", "    sms.add('90')\n    if not sms:")
    assert opt_in_extensions(filled) is None
    # a setuptools command is no user's flag: pip passes egg_info itself
    command = _TORCHANI_SETUP.replace('if "ext" in sys.argv', 'if "bdist_wheel" in sys.argv')
    command = command.replace('if f"ext-sm{sm}" in sys.argv', 'if "--never" in sys.argv')
    assert opt_in_extensions(command) is None
    # the early return does not exit (no return): the extensions are built
    no_exit = _TORCHANI_SETUP.replace(
        '        print("Will not install the extensions")\n        return dict()',
        '        print("Will not install the extensions")',
    )
    assert opt_in_extensions(no_exit) is None


_CUDA_IMAGE = "FROM pytorch/pytorch:2.5.1-cuda12.4-cudnn9-devel\nRUN pip install -e .\n"
_CI_BUILD = """\
on: pull_request
jobs:
  build-image:
    runs-on: [self-hosted]
    steps:
      - uses: docker/build-push-action@v5
        with:
          tags: ani-ci:latest
      - run: docker run --gpus all ani-ci:latest pytest .
"""


def _image_findings(root: Path, files: dict[str, str]) -> list[tuple[str, str]]:
    r = scan_path(write(root, files), ScanOptions(jobs=1))
    return [
        (f.severity.value, f.scope)
        for f in r.findings
        if f.location.path == "Dockerfile" and f.rule_id == "GP501"
    ]


def test_a_dockerfile_only_ci_builds_for_its_jobs_is_not_the_install(tmp_path: Path) -> None:
    base = {"setup.py": "from setuptools import setup\nsetup(name='ani')\n",
            "ani/__init__.py": "import torch\n", "Dockerfile": _CUDA_IMAGE,
            ".github/workflows/ci.yaml": _CI_BUILD}  # fmt: skip
    assert _image_findings(tmp_path / "ci", base) == [("info", "extra")]
    # no file names it at all: core (the sixteenth's "only its container images block")
    bare = {k: v for k, v in base.items() if not k.startswith(".github")}
    assert _image_findings(tmp_path / "bare", bare) == [("blocker", "core")]
    # CI pushes the image: users pull it, so it is an install route
    pushed = {**base, ".github/workflows/ci.yaml": _CI_BUILD.replace(
        "tags: ani-ci:latest", "push: true\n          tags: org/ani:latest")}  # fmt: skip
    assert _image_findings(tmp_path / "push", pushed) == [("blocker", "core")]
    # the README builds it: the documented install
    readme = {**base, "README.md": "# ani\n\n    docker build -t ani .\n"}
    assert _image_findings(tmp_path / "readme", readme) == [("blocker", "core")]
    # not an installable package: the image may be how the project runs
    app = {k: v for k, v in base.items() if k != "setup.py"}
    assert _image_findings(tmp_path / "app", app) == [("blocker", "core")]


def test_a_cmake_build_beside_the_opt_in_extension_sources_is_the_same_extension(
    tmp_path: Path,
) -> None:
    kernel = (
        "__global__ void k(float* x) {\n"
        "  float v = x[threadIdx.x];\n"
        "  v += __shfl_down_sync(0xFFFFFFFF, v, 16);\n"
        "  x[threadIdx.x] = v;\n}\n"
    )
    files = {
        "setup.py": _TORCHANI_SETUP.replace('"aev.cu"', '"ani/csrc/aev.cu"'),
        "ani/__init__.py": "import torch\n",
        "ani/csrc/aev.cu": kernel,
        "ani/csrc/CMakeLists.txt": "project(AniExt LANGUAGES CXX CUDA)\n"
        "add_library(aev SHARED aev.cu)\n",
    }
    r = scan_path(write(tmp_path / "a", files), ScanOptions(jobs=1))
    assert r.verdict.value == "major work", (r.verdict, r.verdict_reason)
    # a CMake build elsewhere (the project's own other native build): still blocked
    other = {**files, "tools/CMakeLists.txt": "project(T LANGUAGES CUDA)\nadd_executable(t t.cu)\n",
             "tools/t.cu": kernel}  # fmt: skip
    r = scan_path(write(tmp_path / "b", other), ScanOptions(jobs=1))
    assert r.verdict.value == "blocked", (r.verdict, r.verdict_reason)


_SHFL_HEADER = (
    "#pragma once\n"
    "__device__ float red(float v) { return v + __shfl_down_sync(0xffffffff, v, 16); }\n"
)


def _header_findings(root: Path, files: dict[str, str]) -> set[tuple[str, str]]:
    r = scan_path(write(root, files), ScanOptions(jobs=1))
    return {(f.severity.value, f.scope) for f in r.findings if f.location.path == "src/old.cuh"}


def test_a_header_no_source_includes_is_not_built(tmp_path: Path) -> None:
    main = '#include "kernels.cuh"\nint main() { return 0; }\n'
    files = {
        "Makefile": "align: src/main.cu\n\tnvcc -o align src/main.cu\n",
        "src/main.cu": main,
        "src/kernels.cuh": "#pragma once\n__global__ void k(float* x) { x[0] = 1.f; }\n",
        # named only by a line no compiler accepts (CUDASW4's gridsearch.cu)
        "src/grid.cu": '#include old.cuh"\nint grid() { return 1; }\n',
        "src/old.cuh": _SHFL_HEADER,
    }
    assert _header_findings(tmp_path / "a", files) == {("info", "core")}
    # included by a source, even through another header: built
    chained = {**files, "src/kernels.cuh": files["src/kernels.cuh"] + '#include "old.cuh"\n'}
    assert ("blocker", "core") in _header_findings(tmp_path / "b", chained)
    # a kernel file Python reads and compiles at run time: built
    runtime = {**files, "run.py": 'import cupy\nsrc = open("src/old.cuh").read()\n'}
    assert ("blocker", "core") in _header_findings(tmp_path / "c", runtime)
    # a JIT code generator writes an include of it into the code it compiles (jittor)
    jit = {**files, "src/jit.cpp": 'const char* head = R"(#include "old.cuh")";\n'}
    assert ("blocker", "core") in _header_findings(tmp_path / "j", jit)
    # a header-only library: no source, its headers are its product
    lib = {"src/old.cuh": _SHFL_HEADER, "Makefile": "all:\n\ttrue\n"}
    assert ("blocker", "core") in _header_findings(tmp_path / "d", lib)
    # a CMake build (its include folders may serve other builds): not judged
    cmake = "project(x CUDA)\ninstall(DIRECTORY src/ DESTINATION include)\n"
    installed = {**files, "CMakeLists.txt": cmake}
    assert ("blocker", "core") in _header_findings(tmp_path / "e", installed)
    # no build file at all: what is compiled is not known
    unbuilt = {k: v for k, v in files.items() if k != "Makefile"}
    assert ("blocker", "core") in _header_findings(tmp_path / "g", unbuilt)
    # an include of a macro's value: what it names is not known
    computed = {**files, "src/pick.cu": "#define H <old.cuh>\n#include KERNEL_HEADER\n"}
    assert ("blocker", "core") in _header_findings(tmp_path / "f", computed)


def test_the_vendored_projects_knowledge_validates_whole_and_reads_without_pydantic() -> None:
    from pydantic import TypeAdapter

    from gpuport.knowledge import _entries
    from gpuport.knowledge.vendored_projects import (
        VENDORED_TOML,
        VendoredProject,
        load_vendored_projects,
    )

    raw = _entries(VENDORED_TOML, "project")
    checked = [TypeAdapter(VendoredProject).validate_python(e) for e in raw]
    assert checked == load_vendored_projects() and all(p.sources for p in checked)


def test_a_setup_py_that_builds_no_extension_judges_no_header(tmp_path: Path) -> None:
    """jittor: a pure-Python package whose C++ its own JIT compiles at run time, including
    what it wants; nothing says which headers that is."""
    files = {
        "setup.py": "from setuptools import setup\nsetup(name='jit')\n",
        "jit/src/op.cc": "int op() { return 0; }\n",
        "jit/src/misc/old.cuh": _SHFL_HEADER,
    }
    r = scan_path(write(tmp_path / "j", files), ScanOptions(jobs=1))
    got = {f.severity.value for f in r.findings if f.location.path == "jit/src/misc/old.cuh"}
    assert "blocker" in got, got


def test_a_copy_named_in_quoted_parts_or_laid_out_through_a_link_is_no_copy(
    tmp_path: Path,
) -> None:
    """Thirty-seventh re-run F1 and F14: `os.path.join("kern", "k.cu")` names the folder's
    source as well as a path does; a layout file reached through a folder link out of the
    project does not count (its existence outside would show in the verdict)."""
    files = {
        "LICENSE": "Copyright (c) Example Corp.\n",
        "setup.py": "import os\nfrom setuptools import setup\n"
        "setup(name='x', ext_modules=[E('k', [os.path.join('kern', 'k.cu')])])\n",
        "kern/k.cu": _PTX,
        "kern/CMakeLists.txt": _CUTLASS_CMAKE,
        "kern/include/cutlass/cutlass.h": "#pragma once\n",
        "kern/LICENSE": "Copyright (c) NVIDIA\n",
    }
    found, skipped = _paths(write(tmp_path / "q", files))
    assert "kern/" not in skipped and "kern/k.cu" in found
    outside = write(tmp_path / "outside", {"cutlass/cutlass.h": "#pragma once\n"})
    linked = {k: v for k, v in files.items() if not k.startswith("kern/include")}
    linked["setup.py"] = "from setuptools import setup\nsetup(name='x')\n"
    root = write(tmp_path / "l", linked)
    (root / "kern" / "include").symlink_to(outside, target_is_directory=True)
    _found, skipped = _paths(root)
    assert "kern/" not in skipped
