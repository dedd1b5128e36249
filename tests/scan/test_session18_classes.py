"""Issue 24 classes taken up in session 18 from the held-out samples' judgments.

A GPU-monitoring dependency nothing imports (the twenty-third sample's FoundationPose:
``GPUtil==1.4.0`` in a kitchen-sink requirements.txt, no file naming GPUtil): the library
installs on an AMD host and only its calls fail, so with no Python file naming it nothing
fails there; its GP101 is info with that reason (``scan.project.after_rules``)."""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.rules import FileKind
from tests.scan.project_files import write

_REQS = "jupyterlab\nGPUtil==1.4.0\nnumpy\n"


def _gp101(root: Path, files: dict[str, str], **opts: object) -> list[tuple[str, str]]:
    r = scan_path(write(root, files), ScanOptions(jobs=1, **opts))  # type: ignore[arg-type]
    return [(f.severity.value, f.message) for f in r.findings if f.rule_id == "GP101"]


def test_a_monitoring_requirement_nothing_imports_is_info(tmp_path: Path) -> None:
    files = {"requirements.txt": _REQS, "run.py": "import numpy\nprint(numpy.zeros(3))\n"}
    got = _gp101(tmp_path / "a", files)
    assert len(got) == 1 and got[0][0] == "info", got
    assert "no Python file of the project names GPUtil" in got[0][1]


def test_a_monitoring_requirement_the_project_imports_keeps_its_severity(tmp_path: Path) -> None:
    for name, code in {
        "top": "import GPUtil\n",
        "from": "from GPUtil import getGPUs\n",
        "dynamic": "import importlib\nmod = importlib.import_module('GPUtil')\n",
    }.items():
        files = {"requirements.txt": _REQS, "tools/mon.py": code}
        got = _gp101(tmp_path / name, files)
        assert [s for s, _ in got] == ["major"], (name, got)


def test_not_lowered_when_python_files_were_not_scanned_or_read(tmp_path: Path) -> None:
    """Only requirements scanned (--kind): whether something imports it is unknown, so the
    finding keeps its severity; a non-monitoring NVIDIA-only package (it fails to install)
    is never lowered by this."""
    files = {"requirements.txt": _REQS, "run.py": "import GPUtil\n"}
    got = _gp101(tmp_path / "k", files, kinds=frozenset({FileKind.REQUIREMENTS}))
    assert [s for s, _ in got] == ["major"], got
    reqs = "nvidia-dali-cuda120==1.30\n"
    got = _gp101(tmp_path / "n", {"requirements.txt": reqs, "run.py": "print(1)\n"})
    assert got and all(s != "info" for s, _ in got), got


def test_a_manifest_without_python_code_is_not_judged(tmp_path: Path) -> None:
    """No Python file at all (a manifest-only project): nothing to judge imports by."""
    got = _gp101(tmp_path / "m", {"requirements.txt": _REQS})
    assert [s for s, _ in got] == ["major"], got


# --- a 0xffffffff "mask" macro no call takes: data, not a lane mask (J55, MD-Bench) ---------

_NB_H = "#define NBNXN_INTERACTION_MASK_ALL 0xffffffffU\n#define FULL_WARP_MASK 0xffffffff\n"
_NB_CU = (
    '#include "nb.h"\n'
    "#define SHFL(m, v, o) __shfl_down_sync(m, v, o)\n"
    "__global__ void k(float* x) { x[threadIdx.x] += SHFL(FULL_WARP_MASK, x[0], 1); }\n"
)
_NB_DATA = (
    '#include "nb.h"\n'
    "void fill(unsigned int* excl, int n) {\n"
    "  for (int i = 0; i < n; ++i) excl[i] = NBNXN_INTERACTION_MASK_ALL;\n"
    "}\n"
)


def test_a_mask_macro_no_call_takes_is_info(tmp_path: Path) -> None:
    """The data bitmask is info with the reason; the one a wrapper macro passes to a warp
    call stays a major."""
    r = scan_path(
        write(tmp_path, {"src/nb.h": _NB_H, "src/nb.cu": _NB_CU, "src/fill.cpp": _NB_DATA}),
        ScanOptions(jobs=1),
    )
    got = {
        f.location.line: (f.severity.value, f.message)
        for f in r.findings
        if f.rule_id == "GP302" and f.location.path == "src/nb.h"
    }
    assert got[1][0] == "info" and "no call of the project takes it" in got[1][1], got
    assert got[2][0] == "major", got


# --- a pip freeze no file names (KIVI, twenty-fourth sample) --------------------------------

_FREEZE = "".join(f"pkg{i}=={i}.0.1\n" for i in range(24)) + "nvidia-cublas-cu12==12.1.3.1\n"
_PYPROJECT = '[project]\nname = "kivi"\nversion = "0.1"\n'


def _freeze_scopes(root: Path, files: dict[str, str]) -> set[str]:
    r = scan_path(write(root, files), ScanOptions(jobs=1))
    return {
        f.scope
        for f in r.findings
        if f.location.path == "requirements.txt" and f.rule_id.startswith("GP1")
    }


def test_a_pip_freeze_no_file_names_is_not_core(tmp_path: Path) -> None:
    files = {
        "pyproject.toml": _PYPROJECT,
        "requirements.txt": _FREEZE,
        "README.md": "pip install -e .\n",
    }
    assert _freeze_scopes(tmp_path / "a", files) == {"extra"}


def test_a_named_or_hand_written_requirements_file_stays_core(tmp_path: Path) -> None:
    named = {
        "pyproject.toml": _PYPROJECT,
        "requirements.txt": _FREEZE,
        "README.md": "pip install -r requirements.txt\n",
    }
    assert _freeze_scopes(tmp_path / "n", named) == {"core"}
    ranges = _FREEZE.replace("==", ">=")
    files = {"pyproject.toml": _PYPROJECT, "requirements.txt": ranges, "README.md": "x\n"}
    assert "core" in _freeze_scopes(tmp_path / "r", files)
    # no packaging of its own: the requirements file is how it installs
    bare = {"requirements.txt": _FREEZE, "README.md": "x\n"}
    assert _freeze_scopes(tmp_path / "b", bare) == {"core"}


# --- an architecture menu that lists AMD targets too (SeisSol, twenty-fourth sample) --------

_MENU = (
    "cmake_minimum_required(VERSION 3.20)\nproject(s CXX)\n"
    'set(DEVICE_ARCH "auto" CACHE STRING "GPU architecture")\n'
    "set(DEVICE_ARCH_OPTIONS auto sm_60 sm_70 sm_80 sm_90  # Nvidia\n"
    "        {amd})  # AMD\n"
    "set_property(CACHE DEVICE_ARCH PROPERTY STRINGS ${{DEVICE_ARCH_OPTIONS}})\n"
)


def _gp403(root: Path, cmake: str) -> list[str]:
    r = scan_path(write(root, {"CMakeLists.txt": cmake}), ScanOptions(jobs=1))
    return [f.severity.value for f in r.findings if f.rule_id == "GP403"]


def test_an_arch_menu_with_gfx_targets_is_not_nvidia_only(tmp_path: Path) -> None:
    assert _gp403(tmp_path / "a", _MENU.format(amd="gfx90a gfx942 gfx1100")) == []
    # no AMD target in the menu (or only in a comment): the NVIDIA-only setting stays
    assert _gp403(tmp_path / "b", _MENU.format(amd="generic")) == ["major"]
    assert _gp403(tmp_path / "c", _MENU.format(amd="generic # gfx90a later")) == ["major"]


# --- a vendored copy of Kokkos (J53 SPARTA's lib/kokkos) ------------------------------------


def _kokkos(root: Path, licence: str) -> list[str]:
    files = {
        "CMakeLists.txt": "project(sparta CXX)\nadd_executable(spa src/main.cpp)\n",
        "src/main.cpp": "int main() { return 0; }\n",
        "lib/kokkos/CMakeLists.txt": "cmake_minimum_required(VERSION 3.16)\nPROJECT(Kokkos CXX)\n",
        "lib/kokkos/core/src/Kokkos_Core.hpp": "#pragma once\nnamespace Kokkos {}\n",
        "lib/kokkos/LICENSE": licence,
        "lib/kokkos/core/src/impl/atomic.hpp": '__device__ void f() { asm("membar.gl;"); }\n',
    }
    r = scan_path(write(root, files), ScanOptions(jobs=1))
    return [s.path for s in r.skipped if "vendored" in s.reason]


def test_a_kokkos_copy_is_vendored_code(tmp_path: Path) -> None:
    assert _kokkos(
        tmp_path / "a",
        "Copyright (2020) National Technology & Engineering\nSolutions of Sandia, LLC (NTESS).\n",
    ) == ["lib/kokkos/"]
    # a licence naming someone else: the folder is the project's own code
    assert _kokkos(tmp_path / "b", "Copyright 2020 Someone Else\n") == []


def test_a_mask_macro_a_warp_file_passes_on_stays_a_lane_mask(tmp_path: Path) -> None:
    """moderngpu's ``MEMBERMASK``: a default argument of a ballot wrapper, never a call's
    first argument, in a file that makes warp calls: still a lane mask (major)."""
    hxx = (
        "#define MEMBERMASK 0xffffffff\n"
        "__device__ unsigned ballot(int p, unsigned mask = MEMBERMASK) {\n"
        "  return __ballot_sync(mask, p);\n}\n"
    )
    cu = '#include "intrinsics.hxx"\n__global__ void k(unsigned* o) { o[0] = ballot(1); }\n'
    r = scan_path(write(tmp_path, {"src/intrinsics.hxx": hxx, "src/k.cu": cu}), ScanOptions(jobs=1))
    got = [f.severity.value for f in r.findings if f.rule_id == "GP302" and f.location.line == 1]
    assert got == ["major"], got


# --- GP304: a lane number counts as a hardware lane only where it reaches a shuffling helper --

_HELPER = (
    "#pragma once\n"
    "__device__ float read_lane(float v, int src) { return __shfl_sync(0xffffffffu, v, src); }\n"
    "__device__ float group_sum(float v, bool on) {\n"
    "  return on ? __shfl_xor_sync(0xffffffffu, v, 1) : v;\n}\n"
)


def _gp304(root: Path, body: str) -> list[str]:
    cu = '#include "util.cuh"\n__global__ void k(const float* in, float* out) {\n' + body + "}\n"
    r = scan_path(write(root, {"util.cuh": _HELPER, "k.cu": cu}), ScanOptions(jobs=1))
    return [
        f.severity.value for f in r.findings if f.rule_id == "GP304" and f.location.path == "k.cu"
    ]


def test_a_lane_passed_to_a_shuffling_helper_is_a_hardware_lane(tmp_path: Path) -> None:
    body = (
        "  int lane = threadIdx.x % 32;\n  out[threadIdx.x] = read_lane(in[0], (lane + 1) % 32);\n"
    )
    assert "major" in _gp304(tmp_path / "a", body)


def test_a_group_number_beside_a_shuffling_helper_is_not(tmp_path: Path) -> None:
    """The file calls the helper, but the lane goes elsewhere (memory), or only as a predicate
    (icicle's ``sampleNTT5(..., lane < 30)``): logical 32-thread groups, info."""
    memory = (
        "  int warp = threadIdx.x / 32;\n  out[warp] = in[warp];\n"
        "  out[threadIdx.x] = read_lane(in[threadIdx.x], 0);\n"
    )
    assert set(_gp304(tmp_path / "m", memory)) == {"info"}
    predicate = (
        "  int lane = threadIdx.x % 32;\n  out[threadIdx.x] = group_sum(in[0], lane < 30);\n"
    )
    assert set(_gp304(tmp_path / "p", predicate)) == {"info"}


# --- an explicit uv index only an extra pins to (curobo, twenty-fourth sample) --------------

_UV = """\
[project]
name = "robo"
version = "1.0"
dependencies = ["numpy"]

[project.optional-dependencies]
cu13-torch = ["torch"]

[[tool.uv.index]]
name = "pytorch-cu130"
url = "https://download.pytorch.org/whl/cu130"
explicit = true

[tool.uv.sources]
torch = [{ index = "pytorch-cu130", extra = "cu13-torch" }]
"""


def _gp104(root: Path, text: str) -> list[tuple[str, str]]:
    r = scan_path(write(root, {"pyproject.toml": text}), ScanOptions(jobs=1))
    return [(f.severity.value, f.message) for f in r.findings if f.rule_id == "GP104"]


def test_an_explicit_uv_index_of_an_extra_is_info(tmp_path: Path) -> None:
    got = _gp104(tmp_path / "e", _UV)
    assert [s for s, _ in got] == ["info"], got
    assert "only the cu13-torch extra(s) use" in got[0][1]
    unused = _UV.replace('torch = [{ index = "pytorch-cu130", extra = "cu13-torch" }]\n', "")
    assert [s for s, _ in _gp104(tmp_path / "u", unused)] == ["info"]


def test_an_index_every_install_uses_keeps_its_severity(tmp_path: Path) -> None:
    """Pinned without an extra, or not explicit (uv then searches it for every package)."""
    pinned = _UV.replace(', extra = "cu13-torch"', "")
    assert [s for s, _ in _gp104(tmp_path / "p", pinned)] not in ([], ["info"])
    implicit = _UV.replace("explicit = true\n", "")
    assert [s for s, _ in _gp104(tmp_path / "i", implicit)] not in ([], ["info"])
