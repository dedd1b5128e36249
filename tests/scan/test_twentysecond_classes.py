"""Issue 24, twenty-second sample's classes (development data since its before run, the
held-out figure for session 15's final code)."""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from tests.scan.project_files import write

_NVIDIA = (
    "# host configuration: cmake -C cmake/summit.cmake ..\n"
    'set(CMAKE_CUDA_COMPILER "nvcc" CACHE PATH "")\n'
    'set(AMReX_GPU_BACKEND CUDA CACHE STRING "")\n'
    'set(CMAKE_CUDA_ARCHITECTURES 70 CACHE STRING "")\n'
)
_AMD = (
    "# host configuration: cmake -C cmake/crusher.cmake ..\n"
    'set(AMReX_GPU_BACKEND HIP CACHE STRING "")\n'
    'set(AMReX_AMD_ARCH gfx90a CACHE STRING "") # MI250X\n'
)
_ROOT = "cmake_minimum_required(VERSION 3.20)\nproject(q LANGUAGES CXX)\nadd_executable(q q.cpp)\n"


def _summit(root: Path, files: dict[str, str]) -> set[tuple[str, str]]:
    r = scan_path(write(root, files), ScanOptions(jobs=1))
    got = {
        (f.severity.value, f.scope) for f in r.findings if f.location.path == "cmake/summit.cmake"
    }
    assert got, [f.location.path for f in r.findings]
    return got


def test_a_cuda_machine_configuration_beside_a_hip_one_is_the_cuda_alternative(
    tmp_path: Path,
) -> None:
    files = {"CMakeLists.txt": _ROOT, "q.cpp": "int main() { return 0; }\n",
             "cmake/summit.cmake": _NVIDIA, "cmake/crusher.cmake": _AMD}  # fmt: skip
    assert _summit(tmp_path / "a", files) == {("info", "extra")}
    r = scan_path(tmp_path / "a", ScanOptions(jobs=1))
    msgs = [f.message for f in r.findings if f.location.path == "cmake/summit.cmake"]
    assert all("cmake/crusher.cmake chooses HIP" in m for m in msgs), msgs


def test_without_a_hip_sibling_or_when_a_build_includes_it_the_file_counts(
    tmp_path: Path,
) -> None:
    base = {"CMakeLists.txt": _ROOT, "q.cpp": "int main() { return 0; }\n",
            "cmake/summit.cmake": _NVIDIA}  # fmt: skip
    # no sibling that chooses HIP: the only configuration there is
    alone = {**base, "cmake/gadi.cmake": _NVIDIA.replace("70", "80")}
    assert ("major", "core") in _summit(tmp_path / "n", alone)
    # included by the project's CMakeLists: part of every build, not a `cmake -C` choice
    included = {**base, "cmake/crusher.cmake": _AMD,
                "CMakeLists.txt": _ROOT + "include(cmake/summit.cmake)\n"}  # fmt: skip
    assert ("major", "core") in _summit(tmp_path / "i", included)
    # a module that does more than set values (it finds and builds): not a configuration
    module = {**base, "cmake/crusher.cmake": _AMD,
              "cmake/summit.cmake": _NVIDIA + "find_package(CUDAToolkit REQUIRED)\n"}  # fmt: skip
    assert ("major", "core") in _summit(tmp_path / "m", module)
    # a HIP sibling in another folder: not the same choice
    other = {**base, "machines/crusher.cmake": _AMD}
    assert ("major", "core") in _summit(tmp_path / "o", other)


_INSTALLER = (
    "import shutil, subprocess\n"
    "ONNXRUNTIME_SET = {'default': ('onnxruntime', '1.28.0')}\n"
    "ONNXRUNTIME_SET['cuda'] = ('onnxruntime-gpu', '1.24.4')\n"
    "ONNXRUNTIME_SET['rocm'] = ('onnxruntime-rocm', '1.22.2.post3')\n"
    "def run(choice):\n"
    "    name, version = ONNXRUNTIME_SET[choice]\n"
    "    subprocess.call([shutil.which('pip'), 'install', name + '==' + version])\n"
)
_PROVIDERS = (
    "execution_provider_set = {\n"
    "    'cuda': 'CUDAExecutionProvider',\n"
    "    'rocm': 'ROCMExecutionProvider',\n"
    "    'migraphx': 'MIGraphXExecutionProvider',\n"
    "}\n"
)


def test_an_installer_script_that_installs_a_rocm_build_is_a_route(tmp_path: Path) -> None:
    files = {"app/installer.py": _INSTALLER, "install.py": "from app import installer\n",
             "app/core.py": "import onnxruntime\n"}  # fmt: skip
    r = scan_path(write(tmp_path / "i", files), ScanOptions(jobs=1))
    got = [(x.kind, x.path, x.install) for x in r.routes]
    assert ("code", "app/installer.py", True) in got, got
    assert any("onnxruntime-rocm" in x.detail for x in r.routes), r.routes
    # the same table in a module that is no installer, or one that runs no pip: no route
    no_pip = _INSTALLER.split("    subprocess")[0] + "    print(name, version)\n"
    for name, text in (("app/choices.py", _INSTALLER), ("app/installer.py", no_pip)):
        r = scan_path(write(tmp_path / name.replace("/", "_"), {name: text}), ScanOptions(jobs=1))
        assert not [x for x in r.routes if x.kind == "code"], (name, r.routes)


def test_the_rocm_provider_beside_migraphx_is_a_legacy_choice_not_a_blocker(
    tmp_path: Path,
) -> None:
    r = scan_path(write(tmp_path / "p", {"app/choices.py": _PROVIDERS}), ScanOptions(jobs=1))
    got = [(f.severity.value, f.message) for f in r.findings if f.rule_id == "GP214"]
    assert got and all(s == "info" and "offers MIGraphXExecutionProvider" in m for s, m in got), got
    # asked for alone (MIGraphX named elsewhere in the file): still the blocker
    alone = _PROVIDERS.replace("    'migraphx': 'MIGraphXExecutionProvider',\n", "")
    alone += "other = ['MIGraphXExecutionProvider']\n"
    r = scan_path(write(tmp_path / "a", {"app/choices.py": alone}), ScanOptions(jobs=1))
    assert {f.severity.value for f in r.findings if f.rule_id == "GP214"} == {"blocker"}


def test_a_continued_if_line_leaves_the_unincluded_header_rule_on(tmp_path: Path) -> None:
    """KeyHunt-Cuda: GMP's gmp.h continues `#if defined (FILE) \\` lines; only an include
    split across lines hides what is included (`GPUHash - Copy.h`, a stray copy)."""
    shfl = "__device__ float r(float v) { return __shfl_down_sync(0xffffffff, v, 1); }\n"
    files = {
        "Makefile": "all:\n\tnvcc -o k GPU/GPUEngine.cu main.cpp\n",
        "main.cpp": '#include "gmp.h"\nint main() { return 0; }\n',
        "gmp.h": "#if defined (FILE) \\\n  || defined (H_STDIO)\n#define X 1\n#endif\n",
        "GPU/GPUEngine.cu": '#include "GPUHash.h"\n',
        "GPU/GPUHash.h": shfl,
        "GPU/GPUHash - Copy.h": shfl,
    }
    r = scan_path(write(tmp_path / "k", files), ScanOptions(jobs=1))
    by = {f.location.path: f.severity.value for f in r.findings}
    assert by["GPU/GPUHash - Copy.h"] == "info" and by["GPU/GPUHash.h"] == "blocker", by
    # an include split across a backslash-newline: what it names is not known
    split = {**files, "main.cpp": '#include "GPUHash \\\n- Copy.h"\nint main() { return 0; }\n'}
    r = scan_path(write(tmp_path / "s", split), ScanOptions(jobs=1))
    assert {f.severity.value for f in r.findings if f.location.path == "GPU/GPUHash - Copy.h"} == {
        "blocker"
    }


def test_a_cmake_version_fallback_the_minimum_rules_out_is_not_built(tmp_path: Path) -> None:
    flags = (
        "if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.18)\n"
        '  set(ARCHS "80;70")\n'
        "else()\n"
        '  set(ARCHS " -gencode=arch=compute_80,code=sm_80")\n'
        "endif()\n"
        "if(NOT CMAKE_VERSION VERSION_LESS 3.30)\n"
        '  set(NEWER " -gencode=arch=compute_90,code=sm_90")\n'
        "endif()\n"
    )
    root = "cmake_minimum_required(VERSION {v})\nproject(n LANGUAGES CXX CUDA)\n"
    root += "include(cmake/flags.cmake)\nadd_library(n n.cu)\n"

    def lines(v: str) -> dict[int, str]:
        files = {"CMakeLists.txt": root.format(v=v), "cmake/flags.cmake": flags,
                 "n.cu": "__global__ void k() {}\n"}  # fmt: skip
        r = scan_path(write(tmp_path / v, files), ScanOptions(jobs=1))
        return {
            f.location.line or 0: f.severity.value
            for f in r.findings
            if f.location.path == "cmake/flags.cmake" and f.rule_id == "GP402"
        }

    got = lines("3.22.1")
    assert got[4] == "info" and got[7] != "info", got  # 3.22 rules out the else, not the >= 3.30
    got = lines("3.16")  # an older minimum decides nothing
    assert got[4] != "info" and got[7] != "info", got


def test_cmake_version_branches_follow_elseif_chains() -> None:
    from gpuport.scan.project.cmake_versions import cmake_dead_branches

    text = (
        "if(CMAKE_VERSION VERSION_LESS 3.10)\n"  # 1: false on >= 3.20
        "  a()\n"
        "elseif(${CMAKE_VERSION} VERSION_LESS 3.12)\n"  # 3: false
        "  b()\n"
        "elseif(CMAKE_VERSION VERSION_GREATER_EQUAL 3.14)\n"  # 5: true: taken
        "  c()\n"
        "else()\n"  # 7: never
        "  d()\n"
        "endif()\n"
        "if(USE_X)\n"  # 10: not known
        "  e()\n"
        "elseif(CMAKE_VERSION VERSION_LESS 3.0)\n"  # 12: false
        "  f()\n"
        "else()\n"  # 14: may be taken
        "  g()\n"
        "endif()\n"
    )
    got = cmake_dead_branches({"CMakeLists.txt": "cmake_minimum_required(VERSION 3.20)\n",
                               "x.cmake": text})  # fmt: skip
    assert [(a, b) for a, b, _ in got["x.cmake"]] == [(1, 2), (3, 4), (7, 8), (12, 13)]
    assert "3.20" in got["x.cmake"][0][2]
    # no minimum above the file: nothing decided
    assert cmake_dead_branches({"x.cmake": text}) == {}
