"""Kernel sources no build of the project names are not compiled (issue 24, twenty-first
sample: vattention's ``pod_attn`` kernel variants its setup.py does not list, 18 findings),
and nothing is said where a build may form source names at run time."""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from tests.scan.project_files import write

_KERNEL = (
    "#include <cuda_runtime.h>\n"
    '#include "{header}"\n'
    "__device__ float red(float v) {{ return v + __shfl_down_sync(0xffffffff, v, 16); }}\n"
)
_SETUP = (
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
    "setup(name='attn', ext_modules=[CUDAExtension(name='attn', sources=[\n"
    "    'csrc/api.cpp',\n"
    "    'csrc/fwd_hdim128_sm80.cu',\n"
    "    #'csrc/fwd_hdim64_sm80.cu',\n"
    "])], cmdclass={'build_ext': BuildExtension})\n"
)


def _files(**extra: str) -> dict[str, str]:
    files = {
        "setup.py": _SETUP,
        "csrc/api.cpp": "int api() { return 0; }\n",
        "csrc/fwd_hdim128_sm80.cu": _KERNEL.format(header="kernel.h"),
        "csrc/fwd_hdim64_sm80.cu": _KERNEL.format(header="variant.h"),
        "csrc/kernel.h": "#pragma once\n__device__ int lane() { return threadIdx.x % 32; }\n",
        "csrc/variant.h": (
            "#pragma once\n__device__ unsigned b(int p) { return __ballot_sync(0xffffffff, p); }\n"
        ),
    }
    files.update(extra)
    return files


def _severities(root: Path, files: dict[str, str], path: str) -> set[str]:
    r = scan_path(write(root, files), ScanOptions(jobs=1))
    got = {f.severity.value for f in r.findings if f.location.path == path}
    assert got, (path, [f.location.path for f in r.findings])
    return got


def test_a_source_the_setup_py_does_not_list_is_not_built(tmp_path: Path) -> None:
    files = _files()
    r = scan_path(write(tmp_path / "a", files), ScanOptions(jobs=1))
    by_path: dict[str, set[str]] = {}
    for f in r.findings:
        by_path.setdefault(f.location.path, set()).add(f.severity.value)
    # listed: its blocker stays; commented out of the list: not compiled, info with a reason
    assert "blocker" in by_path["csrc/fwd_hdim128_sm80.cu"], by_path
    assert by_path["csrc/fwd_hdim64_sm80.cu"] == {"info"}, by_path
    assert "no build of the project names" in r.not_built["csrc/fwd_hdim64_sm80.cu"]
    # and the header only that source includes is not compiled either
    assert by_path["csrc/variant.h"] == {"info"}, by_path
    assert "csrc/kernel.h" not in r.not_built


def test_a_source_any_build_script_or_include_names_stays(tmp_path: Path) -> None:
    path = "csrc/fwd_hdim64_sm80.cu"
    # a shell script that compiles it
    script = _files(**{"tools/build.sh": "nvcc -c csrc/fwd_hdim64_sm80.cu -o fwd64.o\n"})
    assert "blocker" in _severities(tmp_path / "s", script, path)
    # a Makefile's object list names it by its stem (`%.o: %.cu`)
    make = _files(Makefile="OBJS = fwd_hdim64_sm80.o\n%.o: %.cu\n\tnvcc -c $< -o $@\n")
    assert "blocker" in _severities(tmp_path / "m", make, path)
    # another source includes it (a unity build)
    unity = _files(**{"csrc/api.cpp": '#include "fwd_hdim64_sm80.cu"\n'})
    assert "blocker" in _severities(tmp_path / "u", unity, path)
    # a pattern rule that puts words around the stem (fastmoe: `test_% : %.cu` builds
    # prune_gate.cu for the target test_prune_gate)
    affixed = _files(
        **{"tests/Makefile": "all: test_fwd_hdim64_sm80\ntest_% : %.cu\n\tnvcc $< -o $@\n"}
    )
    moved = {
        k.replace("csrc/", "tests/"): v
        for k, v in affixed.items()
        if k.startswith("csrc/fwd_hdim64")
    }
    assert "blocker" in _severities(
        tmp_path / "a", {**affixed, **moved}, "tests/fwd_hdim64_sm80.cu"
    )
    # a Python JIT loader names it
    jit = _files(**{"attn/jit.py": "from torch.utils.cpp_extension import load\n"
                    "m = load('f', sources=['csrc/fwd_hdim64_sm80.cu'])\n"})  # fmt: skip
    assert "blocker" in _severities(tmp_path / "j", jit, path)


def test_nothing_is_said_where_a_build_forms_source_names(tmp_path: Path) -> None:
    path = "csrc/fwd_hdim64_sm80.cu"
    # FlashAttention's setup.py forms every kernel's name in a loop
    formed = _SETUP.replace(
        "    #'csrc/fwd_hdim64_sm80.cu',\n",
        "] + [f'csrc/fwd_hdim{h}_sm80.cu' for h in (64, 128)] + [\n",
    )
    assert "blocker" in _severities(tmp_path / "f", _files(**{"setup.py": formed}), path)
    # a glob in the setup.py
    globbed = "import glob\n" + _SETUP.replace("'csrc/api.cpp',", "*glob.glob('csrc/*.cu'),")
    assert "blocker" in _severities(tmp_path / "g", _files(**{"setup.py": globbed}), path)
    # a name joined from a suffix
    joined = _SETUP.replace("'csrc/api.cpp',", "'csrc/' + NAME + '.cu',")
    assert "blocker" in _severities(tmp_path / "n", _files(**{"setup.py": joined}), path)
    # a Makefile's wildcard over the folder
    wild = _files(Makefile="SRC = $(wildcard csrc/*.cu)\nall:\n\tnvcc -c $(SRC)\n")
    assert "blocker" in _severities(tmp_path / "w", wild, path)
    # a script that compiles whatever the folder holds
    loop = _files(**{"build.sh": "for f in csrc/*.cu; do nvcc -c $f; done\n"})
    assert "blocker" in _severities(tmp_path / "l", loop, path)
    # the setup.py imports a generator that forms the names
    gen = "def names():\n    return [f'csrc/fwd_hdim{h}_sm80.cu' for h in (64, 128)]\n"
    imports = "from csrc_gen import names\n" + _SETUP
    files = _files(**{"setup.py": imports, "csrc_gen.py": gen})
    assert "blocker" in _severities(tmp_path / "i", files, path)
    # another build system gpuport does not read, a CMake build
    meson = _files(**{"meson.build": "project('a', 'cuda')\n"})
    assert "blocker" in _severities(tmp_path / "e", meson, path)
    cmake = _files(**{"CMakeLists.txt": "project(a CUDA)\n"})
    assert "blocker" in _severities(tmp_path / "c", cmake, path)
    # an include split across lines: its words are not the name the compiler reads
    spliced = _files(**{"csrc/api.cpp": '#include "fwd_hdim64_\\\nsm80.cu"\n'})
    assert "blocker" in _severities(tmp_path / "p", spliced, path)


def test_a_generator_nothing_imports_and_a_wildcard_elsewhere_keep_the_rule(
    tmp_path: Path,
) -> None:
    """vattention: generate_kernels.py writes variants (nothing imports it), and the NVIDIA
    driver's Makefiles use `$(shell` and `../../` within their own folder."""
    path = "csrc/fwd_hdim64_sm80.cu"
    gen = (
        "from pathlib import Path\n"
        "for h in (64, 128):\n"
        "    Path(f'fwd_hdim{h}_sm80.cu').write_text('// generated')\n"
    )
    driver = "SRC := $(shell ls ../../src/*.c)\nall:\n\tgcc -c $(SRC)\n"
    files = _files(**{"csrc/generate_kernels.py": gen, "driver/kbuild/x/Makefile": driver})
    assert _severities(tmp_path / "g", files, path) == {"info"}
    # a wildcard that reaches the kernels' folder from above: nothing said
    reach = _files(**{"driver/Makefile": "SRC := $(wildcard ../csrc/*.cu)\nall:\n\tnvcc $(SRC)\n"})
    assert "blocker" in _severities(tmp_path / "r", reach, path)
