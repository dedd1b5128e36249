"""The project as its ROCm build sees it: build model, preprocessor facts, routes, scopes.

Each fixture under ``tests/fixtures/projects`` is a small project with a positive case and a
negative twin (the same code without the evidence), so each test fails if the feature breaks
in either direction.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuport.models import Severity
from gpuport.scan import ScanOptions, ScanReport, scan_path
from gpuport.scan.project.build_cmake_model import cmake_uses, cond_value
from gpuport.scan.project.build_setup_ast import setup_uses
from gpuport.scan.project.cxx_facts import cxx_facts
from gpuport.scan.project.scopes import Scope, scope_of

PROJECTS = Path(__file__).resolve().parent.parent / "fixtures" / "projects"


def scan(name: str, **kw: object) -> ScanReport:
    return scan_path(PROJECTS / name, ScanOptions(jobs=1, **kw))  # type: ignore[arg-type]


def at(report: ScanReport, path: str, rule: str) -> list[Severity]:
    return [f.severity for f in report.findings if f.location.path == path and f.rule_id == rule]


# -- build model: setup.py -------------------------------------------------------------------


def test_setup_py_cuda_only_sources_are_info_with_evidence() -> None:
    r = scan("setup_rocm_branch")
    kernel = [f for f in r.findings if f.location.path == "csrc/cuda/kernel_sm80.cu"]
    assert kernel and all(f.severity is Severity.INFO for f in kernel)
    assert kernel[0].not_built == "setup.py:11"
    assert "not compiled by the ROCm build: setup.py:11" in kernel[0].message
    # the header beside those sources goes with them
    assert at(r, "csrc/cuda/mma.cuh", "GP301") == [Severity.INFO]
    # what the ROCm branch builds is still judged
    assert at(r, "csrc/hip/kernel.cpp", "GP301") == [Severity.BLOCKER]
    assert "csrc/cuda/kernel_sm80.cu" in r.not_built
    assert any(x.kind == "build" and x.path == "setup.py" for x in r.routes)


def test_setup_py_without_a_rocm_test_models_nothing() -> None:
    r = scan("setup_cuda_only")
    assert at(r, "csrc/cuda/kernel_sm80.cu", "GP301") == [Severity.BLOCKER]
    assert at(r, "csrc/cuda/mma.cuh", "GP301") == [Severity.BLOCKER]
    # no ROCm branch modelled: only the source no build names at all is not built
    # (scan/project/unnamed_sources.py)
    assert list(r.not_built) == ["csrc/hip/kernel.cpp"], r.not_built
    assert "no build of the project names" in r.not_built["csrc/hip/kernel.cpp"]
    assert r.routes == []


def test_setup_ast_follows_names_globs_and_elif_chains() -> None:
    text = """
import glob, os, torch
from torch.utils.cpp_extension import CUDA_HOME
here = os.path.dirname(os.path.abspath(__file__))
ext = os.path.join(here, "pkg", "csrc")
sources = glob.glob(os.path.join(ext, "**", "*.cpp"), recursive=True)
source_cuda = glob.glob(os.path.join(ext, "**", "*.cu"), recursive=True)
if torch.cuda.is_available() and CUDA_HOME is not None:
    sources += source_cuda
elif torch.version.hip:
    sources += [f"pkg/csrc/hip/{name}.hip" for name in ("a", "b")]
Extension("x", sources=sources)
"""
    uses, tested, ranges = setup_uses(text)
    assert tested
    by = {(u.pattern, u.cuda_only) for u in uses}
    assert ("pkg/csrc/**/*.cu", True) in by
    assert ("pkg/csrc/**/*.cpp", False) in by
    assert ("pkg/csrc/hip/*.hip", False) in by
    assert ranges and ranges[0][2] == 8  # the `if` that ROCm does not take


def test_setup_ast_rocm_toggle_and_derived_flags() -> None:
    text = """
import os, torch
USE_TRITON_ROCM = os.getenv("X", "0") == "1"
SKIP_CUDA_BUILD = os.getenv("Y", "0") == "1"
if USE_TRITON_ROCM:
    SKIP_CUDA_BUILD = True
use_cuda = torch.version.cuda and CUDA_HOME is not None
if not SKIP_CUDA_BUILD:
    Extension("a", sources=["a.cu"])
if use_cuda:
    Extension("b", sources=["b.cu"])
KEEP_CUDA_BUILD = True
if KEEP_CUDA_BUILD:
    Extension("c", sources=["c.cu"])
use_cutlass = False
if use_cuda:
    use_cutlass = True
if use_cutlass:
    Extension("d", sources=["d.cu"])
"""
    uses, tested, _ = setup_uses(text)
    by = {u.pattern: u.cuda_only for u in uses}
    assert tested and by == {"a.cu": True, "b.cu": True, "c.cu": False, "d.cu": True}


def test_helper_called_only_from_cuda_branches_is_not_built() -> None:
    text = """
import subprocess, torch
def nvcc_version(home):
    return subprocess.check_output([home + "/bin/nvcc", "-V"])
def shared(x):
    return x
HIP_BUILD = bool(torch.version.hip)
if HIP_BUILD:
    shared(1)
else:
    v = nvcc_version("/usr/local/cuda")
    shared(2)
"""
    _, tested, ranges = setup_uses(text)
    assert tested
    assert (3, 4, 8) in ranges  # nvcc_version: only the CUDA side (the `if` on line 8)
    assert not any(first == 5 for first, _, _ in ranges)  # shared: both sides


def test_broken_setup_py_gives_no_model() -> None:
    assert setup_uses("def (:\n") == ([], False, [])


# -- build model: CMake ----------------------------------------------------------------------


def test_cmake_cuda_only_sources_are_info() -> None:
    r = scan("cmake_rocm_branch")
    assert at(r, "csrc/gemm_sm80.cu", "GP301") == [Severity.INFO]
    assert r.not_built["csrc/gemm_sm80.cu"] == "CMakeLists.txt:8"
    assert at(r, "csrc/common.cu", "GP301") == [Severity.BLOCKER]


def test_cmake_without_hip_models_nothing() -> None:
    r = scan("cmake_cuda_only")
    assert at(r, "csrc/gemm_sm80.cu", "GP301") == [Severity.BLOCKER]
    assert r.not_built == {}


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("BUILD_HIP", True),
        ("NOT HIP", False),
        ("USE_CUDA", False),
        ('${COMPUTE_BACKEND} STREQUAL "cuda"', False),
        ('${COMPUTE_BACKEND} STREQUAL "hip"', True),
        ("GGML_HIP AND NOT WIN32", None),
        ("CUDA_FOUND OR HIP_FOUND", True),
        ("APPLE", None),
    ],
)
def test_cmake_conditions_on_a_rocm_build(expr: str, value: bool | None) -> None:
    assert cond_value(expr) is value


def test_cmake_add_subdirectory_in_a_cuda_branch() -> None:
    uses, tested, _ = cmake_uses(
        "if(USE_ROCM)\n  add_subdirectory(hip)\nelse()\n  add_subdirectory(cuda_only)\nendif()\n"
    )
    assert tested
    assert {(u.pattern, u.cuda_only) for u in uses} == {("hip", False), ("cuda_only", True)}


# -- preprocessor facts ----------------------------------------------------------------------


def test_macro_defined_only_under_cuda_arch_is_false_on_rocm() -> None:
    r = scan("arch_macro")
    assert at(r, "copy.cu", "GP301") == [Severity.INFO]
    facts = cxx_facts({"include/utils.h": (PROJECTS / "arch_macro/include/utils.h").read_text()})
    assert facts.false_macros == {"PTX_AVAILABLE": "include/utils.h:3"}


def test_macro_also_defined_unconditionally_is_not_false() -> None:
    r = scan("arch_macro_live")
    assert at(r, "copy.cu", "GP301") == [Severity.BLOCKER]


def test_shim_header_covers_call_sites() -> None:
    r = scan("shim")
    hit = [f for f in r.findings if f.rule_id == "GP302"]
    assert [f.severity for f in hit] == [Severity.INFO]
    assert "shim for __shfl_xor_sync at include/compat.h:3" in hit[0].message


def test_without_the_shim_the_mask_is_a_blocker() -> None:
    assert at(scan("no_shim"), "reduce.cu", "GP302") == [Severity.BLOCKER]


# -- routes, variants, scopes, components ----------------------------------------------------


def test_cuda_dockerfile_beside_a_rocm_one_is_a_variant() -> None:
    r = scan("docker_pair")
    assert at(r, "Dockerfile", "GP501") == [Severity.INFO]
    kinds = {(x.kind, x.path) for x in r.routes}
    assert ("docker", "Dockerfile.rocm") in kinds and ("docs", "README.md") in kinds
    assert r.verdict.value == "ready"


def test_cuda_dockerfile_alone_is_a_blocker() -> None:
    r = scan("docker_cuda")
    assert at(r, "Dockerfile", "GP501") == [Severity.BLOCKER]
    assert r.routes == [] and r.verdict.value == "blocked"


def test_scopes_component_and_family_effort() -> None:
    r = scan("routed")
    test = [f for f in r.findings if f.location.path == "tests/test_fp8.py"]
    assert test and test[0].scope == "test" and test[0].severity is Severity.BLOCKER
    comp = [f for f in r.findings if f.location.path.startswith("fa_cute/")]
    assert comp and all(f.severity is Severity.INFO for f in comp)
    assert any(c.path == "fa_cute" and c.nvidia_only for c in r.components)
    # kernels/ is in no build file, and its route is an image: nothing shows the ROCm route
    # builds its CUTLASS kernels (issue 24, eighth round), so they are listed as info and
    # cost nothing; the verdict says someone has to check that
    kernels = [
        f for f in r.findings if f.rule_id == "GP315" and f.location.path.startswith("kernels/")
    ]
    assert len(kernels) == 3 and all(f.severity is Severity.INFO for f in kernels)
    assert not [i for i in r.effort.basis if i.rule_id == "GP315"]
    assert any(i.rule_id == "component" and "fa_cute" in i.title for i in r.effort.basis)
    assert r.verdict.value == "minor work"
    assert "not shown to build" in r.verdict_reason
    assert r.scope_counts["test"][Severity.BLOCKER] == 1
    # --scope all judges the test too; the verdict still follows the route
    everything = scan("routed", scope="all")
    assert everything.verdict.value == "minor work"
    assert "1 blocker" in everything.verdict_reason  # the test's


@pytest.mark.parametrize(
    ("path", "scope"),
    [
        ("pkg/core.py", Scope.CORE),
        ("tests/test_x.py", Scope.TEST),
        ("pkg/test_x.py", Scope.TEST),
        ("examples/run.py", Scope.EXAMPLE),
        ("benchmarks/b.py", Scope.BENCHMARK),
        ("docs/conf.py", Scope.DOCS),
        ("scripts/release.sh", Scope.TOOLING),
        ("backends/gaudi/server/x.py", Scope.OTHER_VENDOR),
        ("op_builder/hpu/x.py", Scope.OTHER_VENDOR),
        ("ggml/src/ggml-et/x.c", Scope.OTHER_VENDOR),
        ("ggml/src/ggml-cuda/x.cu", Scope.CORE),
        ("server/requirements_intel.txt", Scope.OTHER_VENDOR),
        ("requirements/docs.txt", Scope.DOCS),
        ("requirements-docs.txt", Scope.DOCS),
        ("requirements/pytorch/test.txt", Scope.TEST),
        ("requirements_test.txt", Scope.TEST),
        ("requirements-dev.txt", Scope.TOOLING),
        ("requirements/typing.txt", Scope.TOOLING),
        ("requirements/base.txt", Scope.CORE),
        ("requirements.txt", Scope.CORE),
        ("requirements_rocm.txt", Scope.CORE),
        ("src/dev_utils.py", Scope.CORE),
        ("Dockerfile_trtllm", Scope.CORE),
        # finufft's perftest/cuperftest_helpers.py (thirteenth sample): performance tests
        ("perftest/cuperftest_helpers.py", Scope.BENCHMARK),
        ("perf-tests/run.py", Scope.BENCHMARK),
    ],
)
def test_scope_of(path: str, scope: Scope) -> None:
    assert scope_of(path) is scope


def test_top_blockers_rank_by_impact_not_path() -> None:
    from gpuport.scan.rules import RULES
    from gpuport.scan.verdict import top_blockers

    r = scan("setup_cuda_only")
    top = top_blockers(r.findings, RULES)
    hours = [RULES[f.rule_id].effort_hours for f in top]
    assert hours == sorted(hours, reverse=True)


def test_every_format_lists_the_route(cli) -> None:  # type: ignore[no-untyped-def]
    root = str(PROJECTS / "docker_pair")
    out = cli("scan", root, "-f", "json", "--no-progress")
    assert json.loads(out.out)["routes"][0]["path"] == "Dockerfile.rocm"
    sarif = cli("scan", root, "-f", "sarif", "--no-progress")
    props = json.loads(sarif.out)["runs"][0]["properties"]
    assert props["rocmRoute"][0]["path"] == "Dockerfile.rocm" and props["scope"] == "core"
    md = cli("scan", root, "-f", "markdown", "--no-progress")
    assert "## ROCm route" in md.out and "Dockerfile.rocm" in md.out
    term = cli("scan", root, "--no-progress")
    assert "ROCm route" in term.out and "Dockerfile.rocm" in term.out
    bad = cli("scan", root, "--scope", "some")
    assert bad.code == 2 and "--scope must be core or all" in bad.err


def test_assess_html_lists_the_route(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "report.html"
    res = cli("assess", str(PROJECTS / "docker_pair"), "-f", "html", "-o", str(out))
    assert res.code == 0
    html = out.read_text()
    assert (
        "ROCm route (the project&#39;s own evidence)" in html
        or "ROCm route (the project's own evidence)" in html
    )
    assert "docker Dockerfile.rocm:1" in html


def test_cuda_image_of_a_packaged_project_is_counted_apart() -> None:
    """A project installed as a package runs on ROCm from a ROCm image the user picks; its
    own CUDA image (CI, a dev image) is shown, counted apart, and judged with --scope all."""
    r = scan("docker_packaged")
    found = [f for f in r.findings if f.rule_id == "GP501"]
    assert [(f.location.path, f.severity, f.scope) for f in found] == [
        ("docker/lib-gpu/Dockerfile", Severity.BLOCKER, "tooling")
    ]
    assert "packaged by pyproject.toml" in found[0].message
    assert r.verdict.value == "ready"
    # judged with it, the image is the only blocker of a project that installs without it
    # (issue 24, sixteenth sample: OpenRLHF): major work, the image named
    judged = scan("docker_packaged", scope="all")
    assert judged.verdict.value == "major work"
    assert "only its container images block (docker/lib-gpu/Dockerfile" in judged.verdict_reason
    # The twin without packaging (an application shipped as its image) stays blocked.
    assert scan("docker_cuda").verdict.value == "blocked"


def test_setup_py_and_setup_cfg_extras_are_scope_extra(tmp_path: Path) -> None:
    from gpuport.scan.project.extras import setup_cfg_extra_lines, setup_py_extra_lines

    text = (PROJECTS / "setup_extras" / "setup.py").read_text()
    lines = setup_py_extra_lines(text)
    assert lines[5] == "trt" and lines[12] == "kernels"  # a named dict, and the keyword
    assert 11 not in lines  # install_requires is not an extra
    assert setup_py_extra_lines("setup(extras_require=") == {}  # broken: nothing, no error
    cfg = (
        "[options]\ninstall_requires =\n    torch\n[options.extras_require]\ntrt =\n    tensorrt\n"
    )
    assert setup_cfg_extra_lines(cfg) == {5: "trt", 6: "trt"}
    r = scan("setup_extras")
    got = {(f.rule_id, f.location.line, f.scope) for f in r.findings if f.rule_id == "GP101"}
    assert got == {("GP101", 5, "extra"), ("GP101", 12, "extra")}
    assert r.verdict.value == "ready"
    # The same package required to install the project: core, and a blocker.
    (tmp_path / "setup.py").write_text(
        'from setuptools import setup\nsetup(install_requires=["deep-gemm"])\n'
    )
    twin = scan_path(tmp_path, ScanOptions(jobs=1))
    assert [(f.rule_id, f.scope) for f in twin.findings] == [("GP101", "core")]
    assert twin.verdict.value == "blocked"


def test_headers_split_by_a_rocm_test_are_the_port_and_the_cuda_side() -> None:
    """ggml-style vendor headers: `#if defined(X_USE_HIP)` includes vendors/hip.h (the port:
    its `__names` are shims, its own findings info), `#else` vendors/cuda.h (never compiled
    on ROCm). The twin includes both unconditionally: nothing is a shim, all are hazards."""
    r = scan("vendor_shim")
    sev = {(f.rule_id, f.location.path): f for f in r.findings}
    assert sev[("GP302", "src/reduce.cu")].severity is Severity.INFO
    assert (
        "shim for __shfl_xor_sync at src/vendors/hip.h:5" in sev[("GP302", "src/reduce.cu")].message
    )
    assert sev[("GP314", "src/reduce.cu")].severity is Severity.INFO  # __vsubss4, a function
    assert sev[("GP301", "src/vendors/cuda.h")].not_built == (
        "src/common.cuh:5: included only where ROCm does not compile"
    )
    assert sev[("GP310", "src/vendors/hip.h")].severity is Severity.INFO
    assert "ROCm-only header" in sev[("GP310", "src/vendors/hip.h")].message
    plain = scan("vendor_shim_plain")
    psev = {(f.rule_id, f.location.path): f.severity for f in plain.findings}
    assert psev[("GP302", "src/reduce.cu")] is Severity.BLOCKER
    assert psev[("GP301", "src/vendors/cuda.h")] is Severity.BLOCKER
    assert psev[("GP314", "src/reduce.cu")] is Severity.MAJOR
    assert plain.verdict.value == "blocked"


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("!defined(GGML_USE_HIP) && __CUDA_ARCH__ >= GGML_CUDA_CC_AMPERE", False),
        ("GGML_CUDA_CC_TURING <= __CUDA_ARCH__", False),
        ("__CUDA_ARCH__ < GGML_CUDA_CC_RUBIN", True),  # undefined is 0, below any arch
        ("defined(__CUDA_ARCH__) || defined(OTHER)", None),
    ],
)
def test_cuda_arch_compared_with_an_architecture_constant(expr: str, value: bool | None) -> None:
    from gpuport.scan.cxx_cond import without_cuda_arch

    assert without_cuda_arch("if", expr) is value


def test_a_build_file_without_rocm_beside_a_rocm_build_is_the_cuda_variant() -> None:
    r = scan("build_variant")
    gp4 = [f for f in r.findings if f.rule_id.startswith("GP4")]
    assert gp4 and all(f.severity is Severity.INFO and f.scope == "extra" for f in gp4)
    assert all("beside the ROCm build (backend-hip/CMakeLists.txt)" in f.message for f in gp4)
    assert r.verdict.value == "ready"
    # Without the HIP build beside it, the same file is the project's only build: core.
    twin = scan("build_variant_cuda")
    assert {(f.rule_id, f.severity, f.scope) for f in twin.findings} >= {
        ("GP401", Severity.MAJOR, "core"),
        ("GP407", Severity.MAJOR, "core"),
    }
    assert twin.verdict.value == "major work"


def test_cmake_remove_item_in_the_hip_branch_makes_those_sources_cuda_only() -> None:
    text = (
        "list(APPEND CUDA_SOURCES src/awq/gemm.cu src/k.cu)\n"
        "if(WITH_CUDA)\n"
        "  list(REMOVE_ITEM CUDA_SOURCES src/k.cu)\n"  # the CUDA branch: no ROCm evidence
        "elseif(WITH_HIP)\n"
        "  list(REMOVE_ITEM CUDA_SOURCES src/awq/gemm.cu)\n"
        "endif()\n"
        "add_library(x ${CUDA_SOURCES})\n"
    )
    uses, tested, _ = cmake_uses(text)
    got = {u.pattern: (u.cuda_only, u.line) for u in uses}
    assert tested
    assert got == {"src/awq/gemm.cu": (True, 5), "src/k.cu": (False, 7)}


def test_side_trees_of_a_packaged_project_are_extra(tmp_path: Path) -> None:
    r = scan("side_tree")
    assert [(f.rule_id, f.scope) for f in r.findings] == [("GP301", "extra")]
    assert r.verdict.value == "ready"
    # Without packaging at the root there is no package to be beside: extra/ is core.
    import shutil

    shutil.copytree(PROJECTS / "side_tree" / "extra", tmp_path / "extra")
    twin = scan_path(tmp_path, ScanOptions(jobs=1))
    assert [(f.rule_id, f.scope) for f in twin.findings] == [("GP301", "core")]
    assert twin.verdict.value == "blocked"


def test_native_component_beside_a_root_build_for_rocm_is_extra(tmp_path: Path) -> None:
    """`ext = CUDAExtension` then `ext(...)` builds native code; with the root setup.py
    building for ROCm, a research project's own CUDA-only package beside it is an extra."""
    import shutil

    r = scan("component_root_hip")
    comp = [f for f in r.findings if f.location.path.startswith("projects/")]
    assert comp and {f.scope for f in comp} == {"extra"}
    assert [c.builds_native for c in r.components] == [True]
    shutil.copytree(PROJECTS / "component_root_hip", tmp_path / "p")
    (tmp_path / "p" / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='lib', packages=['lib'])\n"
    )
    twin = scan_path(tmp_path / "p", ScanOptions(jobs=1))
    assert {f.scope for f in twin.findings if f.location.path.startswith("projects/")} == {"core"}


def test_a_hip_build_of_its_own_is_a_working_route(tmp_path: Path) -> None:
    """A CMake file that enables the HIP language or requires the HIP packages is a whole ROCm
    build (ggml's ggml-hip/): a route by itself. A HIP branch alone is a route too (issue 24:
    a single HIP build branch counts), with its own wording."""
    import shutil

    from gpuport.scan.project.routes import OWN_HIP_BUILD, working_route

    r = scan("build_variant")
    assert [(x.path, x.detail) for x in r.routes] == [("backend-hip/CMakeLists.txt", OWN_HIP_BUILD)]
    assert working_route(r.routes)
    shutil.copytree(PROJECTS / "build_variant", tmp_path / "p")
    (tmp_path / "p" / "backend-hip" / "CMakeLists.txt").write_text(
        'if(BACKEND_HIP)\n  file(GLOB SOURCES "../backend-cuda/*.cu")\n'
        "  set_source_files_properties(${SOURCES} PROPERTIES LANGUAGE HIP)\nendif()\n"
    )
    twin = scan_path(tmp_path / "p", ScanOptions(jobs=1))
    assert [x.detail for x in twin.routes] != [OWN_HIP_BUILD] and working_route(twin.routes)
