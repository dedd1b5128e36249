"""Issue 24 classes taken up in session 19.

A README sentence wrapped over two lines is read to its end: mcx's "requires NVIDIA GPUs
(support for AMD/Intel CPUs/GPUs via ROCm is still / under development)" is a promise, and
"A more portable OpenCL implementation of MCX, i.e. MCXCL, / was announced ... and supports
almost all NVIDIA/AMD/Intel CPU and GPU / models" gives AMD support through OpenCL, another
program's route: neither is a ROCm route (``scan.project.routes_docs``)."""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from tests.scan.project_files import write

KERNEL = "__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n"


def _routes(root: Path, readme: str) -> list[tuple[int | None, bool, str]]:
    r = scan_path(write(root, {"README.md": readme, "k.cu": KERNEL}), ScanOptions(jobs=1))
    return [(e.line, e.counts, e.why) for e in r.routes if e.path == "README.md"]


def test_a_promise_wrapped_onto_the_next_line_is_no_route(tmp_path: Path) -> None:
    got = _routes(
        tmp_path,
        "# m\n\nM is written in C/CUDA\n"
        "and requires NVIDIA GPUs (support for AMD GPUs via ROCm is still\n"
        "under development). More text here.\n",
    )
    assert got and not any(c for _l, c, _w in got), got
    assert "promises it for later" in got[0][2]


def test_amd_support_through_opencl_is_no_rocm_route(tmp_path: Path) -> None:
    got = _routes(
        tmp_path,
        "# m\n\nUse CUDA. A more portable OpenCL implementation of M, i.e. MCL,\n"
        "was announced in 2012 and supports almost all NVIDIA/AMD/Intel CPU and GPU\n"
        "models.\n",
    )
    assert got == [(4, False, got[0][2])] and "another API" in got[0][2], got


def test_a_claim_naming_rocm_beside_opencl_and_a_plain_claim_still_count(tmp_path: Path) -> None:
    assert any(
        c
        for _l, c, _w in _routes(
            tmp_path / "a", "# m\n\nM runs on AMD GPUs through ROCm and on others\nvia OpenCL.\n"
        )
    )
    assert any(
        c
        for _l, c, _w in _routes(
            tmp_path / "b", "# m\n\nM supports AMD Instinct GPUs. Our OpenCL port is\nplanned.\n"
        )
    )


# PyFR (twenty-fourth sample): its GPU kernels are Mako templates rendered and compiled at run
# time (NVRTC/hiprtc); the scan read only its Python and called it `ready` with nothing seen.
_MAKO = (
    "<%namespace module='pyfr.backends.base.makoutil' name='pyfr'/>\n"
    "__global__ void k(${t}* x) { x[threadIdx.x] = 0; }\n"
)
_PY = "import numpy\n\ndef run():\n    return numpy.zeros(3)\n"


def test_gpu_kernel_templates_not_read_make_ready_minor_work_and_are_listed(
    tmp_path: Path,
) -> None:
    root = write(
        tmp_path,
        {
            "pkg/run.py": _PY,
            "pkg/backends/cuda/kernels/axnpby.mako": _MAKO,
            "pkg/web/page.j2": "<html>{{ title }}</html>\n",
        },
    )
    r = scan_path(root, ScanOptions(jobs=1))
    assert r.verdict.value == "minor work", r.verdict_reason
    assert "1 GPU kernel template" in r.verdict_reason
    assert "pkg/backends/cuda/kernels/" in r.verdict_reason
    skipped = {s.path: s.reason for s in r.skipped}
    assert "GPU kernel template" in skipped["pkg/backends/cuda/kernels/axnpby.mako"]
    assert "pkg/web/page.j2" not in skipped  # a template with no GPU kernel is not one


def test_without_kernel_templates_ready_stays_ready(tmp_path: Path) -> None:
    root = write(tmp_path, {"pkg/run.py": _PY, "pkg/web/page.j2": "<p>{{ x }}</p>\n"})
    r = scan_path(root, ScanOptions(jobs=1))
    assert r.verdict.value == "ready" and r.skipped == []


def test_a_linked_kernel_template_is_never_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.mako"
    outside.write_text(_MAKO)
    root = write(tmp_path / "p", {"pkg/run.py": _PY})
    (root / "k.mako").symlink_to(outside)
    r = scan_path(root, ScanOptions(jobs=1))
    assert r.verdict.value == "ready" and r.skipped == []


# Librett (twenty-fifth sample): its Makefile.hip (the documented `make hip` route) keeps the
# CUDA Makefile's GENCODE_* variables, which no HIP compile line reads (they pass
# --amdgpu-target), and links NVTX only under `ifdef ENABLE_NVTOOLS` (make ENABLE_NVTOOLS=1).
_MAKE_HIP = """\
CUDAC = hipcc
GENCODE_SM35  := -gencode arch=compute_35,code=sm_35
GENCODE_SM70  := -gencode arch=compute_70,code=sm_70
GENCODE_FLAGS := $(GENCODE_SM70)
CUDA_CFLAGS = --offload-arch=gfx90a -std=c++17
CUDA_LFLAGS = -fPIC
ifdef ENABLE_NVTOOLS
CUDA_LFLAGS += -lnvToolsExt
endif
{extra}
build/%.o: src/%.cu
\thipcc -c $< -o $@ $(CUDA_CFLAGS)
lib/libk.a: build/k.o
\tar rcs $@ $^ $(CUDA_LFLAGS)
-include $(OBJS:.o=.d)
"""
_README = "# k\n\nBuild for AMD GPUs: `make -f Makefile.hip`, which uses hipcc for ROCm.\n"


def _make_findings(root: Path, extra: str = "", **more: str) -> dict[tuple[str, int], str]:
    files = {
        "README.md": _README,
        "Makefile.hip": _MAKE_HIP.format(extra=extra),
        "src/k.cu": "__global__ void k(float* x) { x[threadIdx.x] = 0; }\n",
        **more,
    }
    r = scan_path(write(root, files), ScanOptions(jobs=1))
    return {
        (f.rule_id, f.location.line or 0): f.severity.value
        for f in r.findings
        if f.location.path == "Makefile.hip"
    }


def test_unread_make_variables_and_opt_in_links_of_a_hip_makefile_are_info(
    tmp_path: Path,
) -> None:
    got = _make_findings(tmp_path)
    assert got[("GP402", 2)] == "info" and got[("GP402", 3)] == "info", got
    assert got[("GP407", 8)] == "info", got


def test_a_variable_the_makefile_reads_or_exports_keeps_its_severity(tmp_path: Path) -> None:
    # read by the compile rule
    read = _make_findings(tmp_path / "a", extra="CUDA_CFLAGS += $(GENCODE_FLAGS)")
    assert read[("GP402", 3)] == "major", read
    # every variable exported to sub-makes: a sub-make may read it
    exported = _make_findings(tmp_path / "b", extra="export")
    assert exported[("GP402", 2)] == "major", exported
    # another Makefile includes this one: it may read it
    included = _make_findings(tmp_path / "c", **{"Makefile": "include Makefile.hip\n"})
    assert included[("GP402", 2)] == "major", included


# gadgetron (twenty-fourth sample): `option(GADGETRON_CUDA_ALL_COMPUTE_MODEL ... OFF)` and an
# `if (...)` block that only adds -gencode flags for older GPUs.
_CMAKE_OPT = """\
cmake_minimum_required(VERSION 3.18)
project(g LANGUAGES CXX CUDA)
option({name} "Build CUDA components for all computing models" OFF)
if ({name})
    message("Compiling for all compute models")
    set(CUDA_NVCC_FLAGS ${{CUDA_NVCC_FLAGS}} "-gencode arch=compute_35,code=sm_35")
    {more}
endif ()
add_library(g k.cu)
"""


def _gp403(root: Path, name: str, more: str = "") -> str:
    files = {
        "CMakeLists.txt": _CMAKE_OPT.format(name=name, more=more),
        "k.cu": "__global__ void k(float* x) { x[threadIdx.x] = 0; }\n",
    }
    r = scan_path(write(root, files), ScanOptions(jobs=1))
    hits = [f for f in r.findings if f.rule_id == "GP403" and f.location.line == 6]
    assert hits, [(f.rule_id, f.location.line) for f in r.findings]
    return hits[0].severity.value


def test_flags_under_an_opt_in_option_that_is_off_by_default_are_info(tmp_path: Path) -> None:
    assert _gp403(tmp_path, "GADGETRON_CUDA_ALL_COMPUTE_MODEL") == "info"


def test_a_gpu_switch_or_a_block_that_builds_more_keeps_its_severity(tmp_path: Path) -> None:
    # a switch of the GPU build itself: a ROCm build may turn it on
    assert _gp403(tmp_path / "a", "MYLIB_USE_GPU") == "major"
    # the block adds a target: a component, not a flag tuning
    assert _gp403(tmp_path / "b", "WITH_EXTRAS", "add_library(x x.cu)") == "major"


# The every-set comparison after the forty-second re-run's fixes (which read the project's
# scripts, CI and config files for names): two verdicts went wrong and were put back.
_ENV = "name: dino\nchannels:\n  - nvidia\ndependencies:\n  - cuda-cudart=12.1.105=0\n"
_SETUP_DINO = 'from setuptools import setup\nsetup(name="dino", install_requires=["numpy"])\n'


def test_a_large_notebook_is_read_for_names_not_taken_as_unreadable(tmp_path: Path) -> None:
    # GroundingDINO: two demo notebooks of 1.6 and 2.2 MB made the search "incomplete", so its
    # unnamed conda export (22 blockers) was back in core and the verdict `blocked`
    cell = '{"cell_type": "code", "source": ["print(1)"], "outputs": [{"data": "%s"}]}'
    notebook = '{"cells": [' + cell % ("A" * (2 << 20)) + "]}\n"
    files = {
        "setup.py": _SETUP_DINO,
        "dino/model.py": "import torch\nm = torch.nn.Linear(2, 2).cuda()\n",
        "environment.yaml": _ENV,
        "demo/big.ipynb": notebook,
    }
    r = scan_path(write(tmp_path, files), ScanOptions(jobs=1))
    got = [(f.severity.value, f.scope) for f in r.findings if f.location.path == "environment.yaml"]
    assert got and all(sev == "info" and scope == "extra" for sev, scope in got), got


def test_a_conda_recipes_build_key_builds_no_docker_image(tmp_path: Path) -> None:
    # torchani: `build:` in recipe/meta.yaml was read as a compose build of the Dockerfile,
    # which CI alone builds, and its CUDA base image became a core blocker
    workflow = (
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: docker/build-push-action@v5\n        with:\n          push: false\n"
    )
    files = {
        "setup.py": _SETUP_DINO,
        "Dockerfile": "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nRUN pip install .\n",
        ".github/workflows/ci.yaml": workflow,
        "recipe/meta.yaml": "package:\n  name: dino\nbuild:\n  number: 0\n",
    }
    r = scan_path(write(tmp_path, files), ScanOptions(jobs=1))
    got = [(f.severity.value, f.scope) for f in r.findings if f.rule_id == "GP501"]
    assert got and all(scope != "core" for _sev, scope in got), got


# cuckoo (twenty-fifth sample): each variant folder has its own kernel.cuh; the one in
# cuckarooz/ is included by nothing of its folder, but `#include "kernel.cuh"` of the other
# folders' sources (and their Makefiles' `kernel.cuh`) made it count as included.
_PTX = (
    "__device__ void st(unsigned* p, unsigned a) {\n"
    '  asm("st.global.cg.u32 [%0], %1;" :: "l"(p), "r"(a));\n}\n'
)
_MAIN = '#include "kernel.cuh"\n__global__ void k(unsigned* p) { st(p, threadIdx.x); }\n'
_VARIANT_MAKE = "cuda: main.cu {dep} Makefile\n\tnvcc -o k main.cu\n"


def test_a_header_only_other_folders_same_named_headers_are_included_by_is_not_built(
    tmp_path: Path,
) -> None:
    files = {
        "a/main.cu": _MAIN,
        "a/kernel.cuh": _PTX,
        "a/Makefile": _VARIANT_MAKE.format(dep="kernel.cuh"),
        "b/main.cu": "__global__ void k(unsigned* p) { p[threadIdx.x] = 0; }\n",
        "b/kernel.cuh": _PTX,
        "b/Makefile": _VARIANT_MAKE.format(dep=""),
    }
    r = scan_path(write(tmp_path / "p", files), ScanOptions(jobs=1))
    sev = {f.location.path: f.severity.value for f in r.findings if f.rule_id == "GP301"}
    assert sev == {"a/kernel.cuh": "blocker", "b/kernel.cuh": "info"}, sev
    assert "b/kernel.cuh" in r.not_built and "a/kernel.cuh" not in r.not_built
    # b's own Makefile naming its kernel.cuh keeps it
    named = {**files, "b/Makefile": _VARIANT_MAKE.format(dep="kernel.cuh")}
    r = scan_path(write(tmp_path / "q", named), ScanOptions(jobs=1))
    sev = {f.location.path: f.severity.value for f in r.findings if f.rule_id == "GP301"}
    assert sev == {"a/kernel.cuh": "blocker", "b/kernel.cuh": "blocker"}, sev


# The every-set comparison after the forty-third re-run's fixes: FlagGems' opt-in C extension
# (a CI job turns FLAGGEMS_BUILD_C_EXTENSIONS on to test it) and OpenRLHF's pynvml (its
# Dockerfile runs `pip uninstall ... pynvml`) had gone back to major.
def test_a_ci_job_testing_an_opt_in_option_does_not_make_it_the_default(tmp_path: Path) -> None:
    cmake = (
        "cmake_minimum_required(VERSION 3.18)\nproject(g LANGUAGES CXX)\n"
        'option(G_BUILD_C_EXTENSIONS "C extension" OFF)\n'
        "if(NOT G_BUILD_C_EXTENSIONS)\n  return()\nendif()\n"
        "find_package(CUDAToolkit REQUIRED)\nadd_library(g k.cpp)\n"
    )
    job = (
        "on: push\njobs:\n  c:\n    runs-on: ubuntu-latest\n    steps:\n"
        '      - run: SKBUILD_CMAKE_ARGS="-DG_BUILD_C_EXTENSIONS=ON" pip install -e .\n'
    )
    files = {"CMakeLists.txt": cmake, "k.cpp": "int k;\n", ".github/workflows/c.yaml": job}
    r = scan_path(write(tmp_path, files), ScanOptions(jobs=1))
    got = [f.severity.value for f in r.findings if f.rule_id == "GP401" and f.location.line == 7]
    assert got == ["info"], [(f.rule_id, f.location.line, f.severity.value) for f in r.findings]


def test_a_dockerfile_uninstalling_a_monitor_does_not_run_it(tmp_path: Path) -> None:
    files = {
        "pyproject.toml": '[project]\nname = "o"\ndependencies = ["pynvml", "numpy"]\n',
        "o/__init__.py": "import numpy\n",
        "Dockerfile": "FROM python:3.11\nRUN pip uninstall -y flash_attn pynvml\n",
    }
    r = scan_path(write(tmp_path, files), ScanOptions(jobs=1))
    got = [f.severity.value for f in r.findings if f.rule_id == "GP101" and "pynvml" in f.message]
    assert got == ["info"], got
