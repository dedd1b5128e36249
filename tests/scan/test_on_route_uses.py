"""Issue 24, ninth round: what a ROCm route is shown to build, judged by where a thing is used.

A Makefile variable is on the route only if its value is (a default used only in a CUDA
branch or by the CUDA-source rule of a Makefile with its own HIP rule is not; a source list
named at the top but added to the build only in a CUDA branch is not); a test that wants a
CUDA switch and something else (``defined(P_ENABLE_CUDA) && (...)``) is false where the
switch is off, once ``!defined(P_ENABLE_CUDA) && !defined(P_ENABLE_HIP)`` no longer counts
as wanting both; a CMake flag inside ``$<COMPILE_LANGUAGE:CUDA>`` is not passed by a HIP
build; NVIDIA's monitoring library beside its AMD replacement is chosen at run time. Each has
a positive case (lowered, saying why) and a negative one (kept)."""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from gpuport.scan.model import ScanReport
from gpuport.scan.project.build_make_flow import make_flow
from gpuport.scan.project.on_route import OFF_ROUTE, cuda_only_genex
from gpuport.scan.project.routes_docs import doc_routes
from tests.scan.project_files import scan_files, write

PTX = '__global__ void k(unsigned *o) { unsigned l; asm volatile("mov.u32 %0, %%laneid;" : "=r"(l)); o[0] = l; }\n'  # noqa: E501
README = "Build for AMD GPUs with ROCm: `make ROCM_DIR=/opt/rocm`.\n"


def _found(report: ScanReport, path: str, rule: str) -> list[tuple[Severity, str]]:
    return [
        (f.severity, f.message)
        for f in report.findings
        if f.location.path == path and f.rule_id == rule
    ]


# --- Makefile variables: judged where they are used ---------------------------------------

BRANCH_MAKEFILE = """\
CUDA_ARCH ?= sm_70
ifdef HIPCONFIG
  GPUCXX ?= hipcc
  GPUFLAGS += -O3
else
  GPUCXX ?= nvcc
  GPUFLAGS += -arch $(CUDA_ARCH)
endif
app: main.o
\t$(GPUCXX) $(GPUFLAGS) -o app main.o
"""


def test_a_default_used_only_in_the_cuda_branch_is_not_on_the_route(tmp_path: Path) -> None:
    r = scan_files(tmp_path, {"README.md": README, "Makefile": BRANCH_MAKEFILE})
    got = _found(r, "Makefile", "GP403")
    line1 = [f for f in r.findings if f.rule_id == "GP403" and f.location.line == 1]
    assert got and line1 and all(f.severity is Severity.INFO for f in line1)
    assert OFF_ROUTE in line1[0].message and "CUDA_ARCH is used only" in line1[0].message


def test_a_default_used_outside_any_branch_stays(tmp_path: Path) -> None:
    text = BRANCH_MAKEFILE.replace("-o app main.o", "-arch $(CUDA_ARCH) -o app main.o")
    r = scan_files(tmp_path, {"README.md": README, "Makefile": text})
    line1 = [f for f in r.findings if f.rule_id == "GP403" and f.location.line == 1]
    assert line1 and line1[0].severity is not Severity.INFO


RULES_MAKEFILE = """\
NVCC ?= nvcc
HIPCC ?= hipcc
lib_src = $(wildcard src/*.cc)
ifeq ($(cuda),1)
  lib_src += $(wildcard src/cuda/*.cu)
endif
ifeq ($(hip),1)
  lib_src += $(wildcard src/hip/*.hip)
endif
lib_obj = $(addsuffix .o, $(basename $(lib_src)))
lib.so: $(lib_obj)
\t$(CXX) -shared -o $@ $^
%.o: %.hip
\t$(HIPCC) -c $< -o $@
%.o: %.cu
\t$(NVCC) -c $< -o $@
"""


def test_the_compiler_of_the_cuda_source_rule_beside_a_hip_rule() -> None:
    flow = make_flow(RULES_MAKEFILE, lambda n: not 4 <= n <= 9)
    assert "NVCC" in flow.unshown and "HIPCC" not in flow.unshown
    assert 16 in flow.cuda_recipes
    # without a rule of its own for HIP sources, the .cu rule may be the ROCm build's too
    no_hip = RULES_MAKEFILE.replace("%.o: %.hip\n\t$(HIPCC) -c $< -o $@\n", "")
    assert "NVCC" not in make_flow(no_hip, lambda n: True).unshown


def test_the_cuda_source_rule_that_runs_hipcc_is_on_the_route() -> None:
    text = RULES_MAKEFILE.replace("\t$(NVCC) -c", "\t$(HIPCC) $(NVCC_COMPAT) -c")
    flow = make_flow(text + "NVCC_COMPAT = -x hip\n", lambda n: True)
    assert "NVCC_COMPAT" not in flow.unshown and not flow.cuda_recipes


SOURCES_MAKEFILE = """\
ifneq ($(ROCM_DIR),)
  HIPFLAGS = -I$(ROCM_DIR)/include
endif
cuda.cpp := $(sort $(wildcard backends/fast/*.cpp))
hip.cpp := $(sort $(wildcard backends/port/*.cpp))
core.cpp := $(wildcard core/*.cpp)
lib.cpp := $(core.cpp)
ifneq ($(CUDA_LIB_DIR),)
  lib.cpp += $(cuda.cpp)
endif
ifneq ($(HIP_LIB_DIR),)
  lib.cpp += $(hip.cpp)
endif
lib.o = $(lib.cpp:%.cpp=%.o)
libp.so: $(lib.o)
\t$(CXX) -shared -o $@ $^
"""


def test_sources_named_at_the_top_but_built_only_in_a_cuda_branch(tmp_path: Path) -> None:
    files = {
        "README.md": README,
        "Makefile": SOURCES_MAKEFILE,
        "backends/fast/compile.cpp": PTX,
        "backends/port/hip_impl.cpp": PTX.replace("__global__", "static"),
        "core/core.cpp": PTX,
    }
    r = scan_files(tmp_path, files)
    cuda = _found(r, "backends/fast/compile.cpp", "GP301")
    assert cuda and all(s is Severity.INFO for s, _ in cuda)
    assert OFF_ROUTE in cuda[0][1]
    # a list the route does add keeps its sources' findings
    assert [s for s, _ in _found(r, "core/core.cpp", "GP301")] == [Severity.BLOCKER]
    assert [s for s, _ in _found(r, "backends/port/hip_impl.cpp", "GP301")] == [Severity.BLOCKER]


# --- a CUDA backend switch in a conjunction -------------------------------------------------

SWITCH_CMAKE = (
    'project(p LANGUAGES CXX)\noption(P_ENABLE_CUDA "c" OFF)\noption(P_ENABLE_HIP "h" OFF)\n'
    "if(P_ENABLE_HIP)\n  enable_language(HIP)\nendif()\nadd_library(p src/a.cpp)\n"
)
HOST_ONLY = "#if !defined(P_ENABLE_CUDA) && !defined(P_ENABLE_HIP)\nint host_only;\n#endif\n"


def _switch_project(both: str) -> dict[str, str]:
    return {
        "CMakeLists.txt": SWITCH_CMAKE,
        "src/a.cpp": '#include "k.hpp"\n#include "host.hpp"\n',
        "src/host.hpp": HOST_ONLY + both,
        "src/k.hpp": "#if defined(P_ENABLE_CUDA) && (defined(P_ARCH_V) || defined(P_ARCH_A))\n"
        + PTX
        + "#endif\n",
    }


def test_a_cuda_switch_in_a_conjunction_is_off_when_neither_is_wanted(tmp_path: Path) -> None:
    r = scan_files(tmp_path, _switch_project(""))
    got = _found(r, "src/k.hpp", "GP301")
    assert got and all(s is Severity.INFO for s, _ in got)


def test_a_cuda_switch_wanted_with_its_hip_twin_is_not_off(tmp_path: Path) -> None:
    both = "#if defined(P_ENABLE_CUDA) && defined(P_ENABLE_HIP)\nint both;\n#endif\n"
    r = scan_files(tmp_path, _switch_project(both))
    assert [s for s, _ in _found(r, "src/k.hpp", "GP301")] == [Severity.BLOCKER]


# --- a generator expression for the CUDA language -----------------------------------------


def test_a_flag_for_the_cuda_only_genex() -> None:
    line = '  "$<$<BUILD_INTERFACE:$<COMPILE_LANGUAGE:CUDA>>:-Xcompiler=-fvisibility=hidden>")'
    assert cuda_only_genex(line, 1, line.index("-Xcompiler") + 1)
    for other in (
        '  "$<$<COMPILE_LANGUAGE:CUDA,CXX>:-Xcompiler=-fPIC>"',  # C++ too
        '  "$<$<NOT:$<COMPILE_LANGUAGE:CUDA>>:-Xcompiler=-fPIC>"',  # everything but CUDA
        "  -Xcompiler=-fPIC $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>",  # outside the genex
    ):
        assert cuda_only_genex(other, 1, other.index("-Xcompiler") + 1) is None, other


def test_a_link_item_on_a_cuda_switch() -> None:
    line = "  $<$<BOOL:${P_WITH_CUDA}>:CUDA::cublas> $<$<BOOL:${P_WITH_HIP}>:roc::rocblas>"
    why = cuda_only_genex(line, 1, line.index("CUDA::cublas") + 1)
    assert why and "P_WITH_CUDA" in why
    assert cuda_only_genex(line, 1, line.index("roc::rocblas") + 1) is None
    # a setting a ROCm build may turn on, or the negation of the CUDA switch, stays
    for other in (
        "$<$<BOOL:${P_WITH_MPI}>:CUDA::cublas>",
        "$<$<NOT:$<BOOL:${P_WITH_CUDA}>>:CUDA::cublas>",
    ):
        assert cuda_only_genex(other, 1, other.index("CUDA::cublas") + 1) is None, other


def test_a_cuda_language_flag_in_a_project_with_a_route(tmp_path: Path) -> None:
    cmake = SWITCH_CMAKE + (
        'target_compile_options(p PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fPIC>")\n'
        "target_compile_options(p PRIVATE -Xcompiler=-fPIC)\n"
    )
    r = scan_files(tmp_path, {"CMakeLists.txt": cmake, "src/a.cpp": "int a;\n"})
    got = {f.location.line: f.severity for f in r.findings if f.rule_id == "GP402"}
    assert got == {8: Severity.INFO, 9: Severity.MAJOR}


# --- NVIDIA's monitoring library beside its AMD replacement ---------------------------------


def test_nvml_beside_amdsmi_is_minor(tmp_path: Path) -> None:
    deps = '[project]\nname = "m"\nversion = "1"\ndependencies = ["nvidia-ml-py", "amdsmi"]\n'
    r = scan_files(tmp_path, {"pyproject.toml": deps})
    got = _found(r, "pyproject.toml", "GP101")
    assert got and got[0][0] is Severity.MINOR and "amdsmi is a dependency too" in got[0][1]
    alone = deps.replace(', "amdsmi"', "")
    r = scan_files(tmp_path / "alone", {"pyproject.toml": alone})
    assert [s for s, _ in _found(r, "pyproject.toml", "GP101")] == [Severity.MAJOR]


def test_a_variable_this_file_never_uses_is_for_the_file_that_includes_it() -> None:
    # a defaults.mk: NVCC_FLAGS is used by the Makefile that includes it, so CUDA_ARCH is too
    text = "CUDA_ARCH = sm_60\nNVCC_FLAGS = -arch=$(CUDA_ARCH)\n"
    assert not make_flow(text, lambda n: True).unshown
    assert (
        "CUDA_ARCH"
        in make_flow(text + "ifdef NVCC_ON\nX = $(NVCC_FLAGS)\nendif\n", lambda n: n < 3).unshown
    )


# --- a route documented under doc/ ------------------------------------------------------------


def test_a_build_page_under_doc_is_a_route(tmp_path: Path) -> None:
    page = "Building for AMD GPUs (ROCm/HIP)\n================\n\n    make -f makefile.hip\n"
    write(tmp_path / "a", {"doc/installation.rst": page})
    got = [e for e in doc_routes(tmp_path / "a") if e.counts]
    assert got and got[0].path == "doc/installation.rst"
    # a page there that says ROCm is not supported is listed, and does not count
    write(
        tmp_path / "b",
        {"doc/faq.rst": "ROCm is not supported yet: `make -f makefile.hip` fails.\n"},
    )
    assert not [e for e in doc_routes(tmp_path / "b") if e.counts]
