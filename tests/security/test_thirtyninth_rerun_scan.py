"""Thirty-ninth re-run (red team 39), the scan's verdict-skew and stall findings: a cheap
trick in a hostile project must not hide its real CUDA blockers, nor stall the scan.

F7: ``project(pybind11)``, an empty header and an empty LICENSE made the project's kernel
folder a "vendored copy" (BLOCKED -> READY). F22: candidate copies cost copies x depth^2.
"""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from tests.scan.project_files import write
from tests.security.test_stalls import _within

_PTX_KERNEL = (
    "#include <cuda_runtime.h>\n"
    "__global__ void k(unsigned* x){\n"
    "  unsigned v;\n"
    '  asm volatile("mov.u32 %0, %%laneid;" : "=r"(v));\n'
    "  x[threadIdx.x] = __shfl_sync(0xffffffff, v, 0) + __ballot_sync(0xffffffff, v > 3);\n"
    "}\n"
    "void run(unsigned* x){ k<<<1,32>>>(x); }\n"
)


def _verdict(root: Path) -> str:
    return scan_path(root, ScanOptions(jobs=1)).verdict.value


def _skipped(root: Path) -> dict[str, str]:
    return {s.path: s.reason for s in scan_path(root, ScanOptions(jobs=1)).skipped}


def _cmake_kernels(extra: dict[str, str]) -> dict[str, str]:
    return {
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.18)\nproject(app LANGUAGES CXX)\n"
        "add_subdirectory(kernels)\nadd_executable(app main.cpp)\n"
        "target_link_libraries(app k)\n",
        "main.cpp": "void run(unsigned*);\nint main(){ run(nullptr); }\n",
        "kernels/CMakeLists.txt": "project(pybind11)\nenable_language(CUDA)\nadd_library(k k.cu)\n",
        "kernels/k.cu": _PTX_KERNEL,
        **extra,
    }


def test_f7_empty_files_and_a_declaration_make_no_copy(tmp_path: Path) -> None:
    fake = {"kernels/include/pybind11/pybind11.h": "", "kernels/LICENSE": ""}
    root = write(tmp_path / "a", _cmake_kernels(fake))
    assert "kernels/" not in _skipped(root)
    assert _verdict(root) == "blocked"


def test_f7_a_copy_whose_own_build_compiles_its_sources_is_own_code(tmp_path: Path) -> None:
    """Even with a header with content and a licence naming pybind11's holder, a folder whose
    own CMakeLists.txt compiles its .cu file is the project's code."""
    real_looking = {
        "kernels/include/pybind11/pybind11.h": "#pragma once\n",
        "kernels/LICENSE": "Copyright (c) 2016 Wenzel Jakob <wenzel.jakob@epfl.ch>\n",
    }
    root = write(tmp_path / "b", _cmake_kernels(real_looking))
    assert "kernels/" not in _skipped(root)
    assert _verdict(root) == "blocked"
    # a glob of its own sources too
    globbed = _cmake_kernels(real_looking)
    globbed["kernels/CMakeLists.txt"] = (
        "project(pybind11)\nfile(GLOB S *.cu)\nadd_library(k ${S})\n"
    )
    assert "kernels/" not in _skipped(write(tmp_path / "g", globbed))


def test_f7_a_licence_that_does_not_name_the_library_makes_no_copy(tmp_path: Path) -> None:
    files = {
        "CMakeLists.txt": "project(app LANGUAGES CXX CUDA)\nadd_library(k src/k.cu)\n",
        "src/k.cu": "__global__ void k() {}\n",
        "ext/pybind11/CMakeLists.txt": "project(pybind11)\n",
        "ext/pybind11/include/pybind11/pybind11.h": "#pragma once\n",
        "ext/pybind11/tools/k.cuh": _PTX_KERNEL,
        "ext/pybind11/LICENSE": "Copyright (c) Example Corp.\n",
    }
    assert "ext/pybind11/" not in _skipped(write(tmp_path / "c", files))
    # the real licence names its holder: a copy, skipped as before
    files["ext/pybind11/LICENSE"] = "Copyright (c) 2016 Wenzel Jakob <wenzel.jakob@epfl.ch>\n"
    assert "a copy of pybind11" in _skipped(write(tmp_path / "d", files))["ext/pybind11/"]


def test_f22_many_deep_candidate_copies_take_linear_time(tmp_path: Path) -> None:
    root = tmp_path / "p"
    deep = root
    for i in range(60):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    (root / "CMakeLists.txt").write_text("project(app CUDA)\n")
    for i in range(400):
        c = deep / f"c{i}"
        (c / "include" / "pybind11").mkdir(parents=True)
        (c / "CMakeLists.txt").write_text("project(pybind11)\n")
        (c / "include" / "pybind11" / "pybind11.h").write_text("#pragma once\n")
        (c / "LICENSE").write_text("Copyright (c) 2016 Wenzel Jakob\n")
    _within(lambda: scan_path(root, ScanOptions(jobs=1)), 3.0)  # was ~16 s


_KERN_CUH = (
    "#pragma once\n"
    '__device__ unsigned lane(){ unsigned v; asm volatile("mov.u32 %0, %%laneid;" : "=r"(v));'
    " return v; }\n"
    "__global__ void k(unsigned* x){ x[threadIdx.x] = __shfl_sync(0xffffffff, lane(), 0); }\n"
)
_MAIN_BODY = "int main(){ unsigned* x; cudaMalloc(&x, 128); k<<<1,32>>>(x); return 0; }\n"


def test_f8_a_spliced_include_after_a_comment_keeps_the_header_built(tmp_path: Path) -> None:
    """`/**/#include "kern.cu\\` + `h"` includes kern.cuh (comments are spaces before
    directives are read, the splice joins the name): the header is built, its blockers stay."""
    for i, line in enumerate(
        (
            '/**/#include "kern.cu\\\nh"\n',
            '#/**/include "kern.cu\\\nh"\n',
            '/* a\n */ # include "kern.cu\\\nh"\n',
        )
    ):
        files = {
            "kern.cuh": _KERN_CUH,
            "Makefile": "all:\n\tnvcc -o app main.cu\n",
            "main.cu": line + _MAIN_BODY,
        }
        assert _verdict(write(tmp_path / f"p{i}", files)) == "blocked", line


_SHFL_CU = (
    "#include <cuda_runtime.h>\n"
    '__global__ void k(unsigned* x){ unsigned v; asm volatile("mov.u32 %0, %%laneid;" : "=r"(v));'
    " x[threadIdx.x] = __shfl_sync(0xffffffff, v, 0); }\n"
)
_LEGACY = (
    'if "--with-legacy" in sys.argv:\n'
    "    from setuptools import Extension\n"
    '    exts.append(Extension("legacy", ["legacy.c"]))\n'
)


def test_f9_an_aliased_extension_built_by_default_is_seen(tmp_path: Path) -> None:
    """`CUDAExtension as CE` (or `ext = CUDAExtension`, a subclass, `getattr`) built by
    default: one opt-in `Extension` does not make every extension opt-in."""
    heads = (
        "from torch.utils.cpp_extension import CUDAExtension as CE, BuildExtension\n",
        "from torch.utils.cpp_extension import CUDAExtension, BuildExtension\nCE = CUDAExtension\n",
        "from torch.utils.cpp_extension import CUDAExtension, BuildExtension\n"
        "class CE(CUDAExtension):\n    pass\n",
        "import torch.utils.cpp_extension as cx\n"
        "from torch.utils.cpp_extension import BuildExtension\n"
        'CE = getattr(cx, "CUDAExtension")\n',
    )
    for i, head in enumerate(heads):
        setup = (
            "import sys\nfrom setuptools import setup\n"
            + head
            + 'exts = [CE("k", ["k.cu"])]\n'
            + _LEGACY
            + 'setup(name="x", ext_modules=exts, cmdclass={"build_ext": BuildExtension})\n'
        )
        root = write(tmp_path / f"p{i}", {"k.cu": _SHFL_CU, "setup.py": setup})
        assert _verdict(root) == "blocked", head


def test_f19_a_recent_generation_folder_beside_any_folder_is_still_built(tmp_path: Path) -> None:
    """Kernels in sm90/ beside a one-line common/u.cpp (or a common/k.cpp with no device code)
    are the project's kernels; a common/k.cu variant of them makes sm90/ a variant."""
    base = {"sm90/k.cu": _PTX_KERNEL, "Makefile": "all:\n\tnvcc -o app sm90/k.cu\n"}
    for i, extra in enumerate(
        (
            {"common/u.cpp": "int helper(){return 1;}\n"},
            {"common/k.cpp": "int helper(){return 1;}\n"},
            {"common/k.cu": "// nothing here\n"},
        )
    ):
        assert _verdict(write(tmp_path / f"p{i}", {**base, **extra})) == "blocked", extra
    variant = {"common/k.cu": "__global__ void k(unsigned* x){ x[threadIdx.x] = 0; }\n"}
    assert _verdict(write(tmp_path / "v", {**base, **variant})) != "blocked"
    # mirage's layout: blackwell/ files named otherwise than ampere/'s, which holds kernels of
    # its own: blackwell/ is still the recent-generation variant (twentieth sample, 281 findings)
    kern = "__global__ void {n}(float* x){{ x[threadIdx.x] = 0; }}\n"
    tasks = {f"tasks/ampere/{n}.cuh": kern.format(n=n) for n in ("linear", "norm", "embed")}
    tasks["tasks/blackwell/attention_sm100.cuh"] = _PTX_KERNEL
    tasks["tasks/blackwell/linear_fp8_sm100.cuh"] = _PTX_KERNEL
    tasks["Makefile"] = "all:\n\tnvcc -o app main.cu\n"
    tasks["main.cu"] = (
        '#include "tasks/ampere/linear.cuh"\n#include "tasks/blackwell/attention_sm100.cuh"\n'
    )
    assert _verdict(write(tmp_path / "m", tasks)) != "blocked"


def test_f20_an_empty_hip_twin_does_not_hide_a_compiled_cuda_file(tmp_path: Path) -> None:
    """An empty (comment-only) src/hip/k.cu beside the src/cuda/k.cu a build compiles is no
    HIP counterpart; one with code is."""
    builds = (
        {"Makefile": "all:\n\tnvcc -o app src/cuda/k.cu\n"},
        {"CMakeLists.txt": "project(app LANGUAGES CXX CUDA)\nadd_library(k src/cuda/k.cu)\n"},
    )
    for i, build in enumerate(builds):
        for j, hip in enumerate(
            ("// HIP port: todo\n", "#pragma once\n#include <hip/hip_runtime.h>\n")
        ):
            files = {"src/cuda/k.cu": _PTX_KERNEL, "src/hip/k.cu": hip, **build}
            assert _verdict(write(tmp_path / f"p{i}{j}", files)) == "blocked", (build, hip)
    hip_code = "__global__ void k(unsigned* x){ x[threadIdx.x] = 0; }\n"
    files = {"src/cuda/k.cu": _PTX_KERNEL, "src/hip/k.cu": hip_code, **builds[0]}
    assert _verdict(write(tmp_path / "real", files)) != "blocked"


def test_f14_a_hedged_or_asked_claim_is_no_documented_route(tmp_path: Path) -> None:
    """A README sentence that states support stays a documented route (issue 24, by design);
    one that hedges or asks states nothing and lowers no blocker."""
    base = {"k.cu": _PTX_KERNEL, "Makefile": "all:\n\tnvcc -o app k.cu\n"}
    for i, readme in enumerate(
        (
            "It should work on AMD GPUs too.\n",
            "In theory this runs on AMD GPUs as well.\n",
            "Does it run on AMD GPUs?\n",
        )
    ):
        root = write(tmp_path / f"p{i}", {**base, "README.md": readme})
        assert _verdict(root) == "blocked", readme
    stated = write(tmp_path / "s", {**base, "README.md": "Runs on AMD GPUs too.\n"})
    assert _verdict(stated) != "blocked"
    # a caveat beside stated support is no hedge of it (llamafile's README, tenth sample)
    caveat = "Multiple GPU support may be broken on AMD Radeon systems.\n"
    assert _verdict(write(tmp_path / "c", {**base, "README.md": caveat})) != "blocked"


def test_f26_a_whole_file_nvidia_branch_with_nothing_in_its_place_keeps_blockers(
    tmp_path: Path,
) -> None:
    """`#ifndef __HIP_PLATFORM_AMD__` ... `#endif` around the whole file (no #else): the ROCm
    build compiles an empty file, the kernels still need a port. With a ROCm side (an #else
    that defines the same), the NVIDIA branch is lowered as before."""
    cmake = "cmake_minimum_required(VERSION 3.18)\nproject(app LANGUAGES CXX CUDA)\n"
    cmake += "add_library(k src/k.cu)\n"
    for i, guard in enumerate(("#ifndef __HIP_PLATFORM_AMD__\n", "#if !defined(USE_ROCM)\n")):
        files = {"CMakeLists.txt": cmake, "src/k.cu": guard + _PTX_KERNEL + "#endif\n"}
        assert _verdict(write(tmp_path / f"p{i}", files)) == "blocked", guard
    rocm_side = "#else\nvoid run(unsigned* x){ (void)x; }\n"
    files = {
        "CMakeLists.txt": cmake,
        "src/k.cu": "#ifndef __HIP_PLATFORM_AMD__\n" + _PTX_KERNEL + rocm_side + "#endif\n",
    }
    assert _verdict(write(tmp_path / "else", files)) != "blocked"
