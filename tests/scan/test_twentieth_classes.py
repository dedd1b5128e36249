"""Issue 24, twentieth sample's classes (development data since its before run, the held-out
figure for session 14's scan changes)."""

from __future__ import annotations

from pathlib import Path

from tests.scan.project_files import scan_files

_MAKE = """\
CXXFLAGS += -O3
ifneq (,$(call parse_config,gpu_nvidia))
\tCXXFLAGS += -DSMILEI_ACCELERATOR_GPU
\tGPU_COMPILER ?= nvcc
\tGPU_COMPILER_FLAGS += -x cu
endif
ifneq (,$(call parse_config,gpu_amd))
\tCXXFLAGS += -DSMILEI_ACCELERATOR_GPU
\tGPU_COMPILER ?= $(CC)
\tGPU_COMPILER_FLAGS += -x hip
endif
%.o: %.cu
\t$(GPU_COMPILER) $(GPU_COMPILER_FLAGS) -c $< -o $@
"""
_KERNEL = "__global__ void k(float *x) { x[threadIdx.x] = 0; }\n"


def test_a_makefile_configuration_named_for_amd_gpus_is_a_route(tmp_path: Path) -> None:
    """Smilei's ``make config=gpu_amd`` (``$(call parse_config,gpu_amd)``) compiles the
    ``.cu`` files with ``-x hip``: a route; its ``gpu_nvidia`` branch is the CUDA side."""
    r = scan_files(tmp_path / "a", {"makefile": _MAKE, "src/k.cu": _KERNEL})
    assert [(e.kind, e.path) for e in r.routes if e.counts] == [("build", "makefile")]
    nvcc = [f for f in r.findings if f.rule_id == "GP408" and f.location.line == 4]
    assert nvcc and all(f.severity.value == "info" for f in nvcc), nvcc
    # named for neither vendor: nothing decided
    plain = _MAKE.replace("gpu_amd", "gpu_b").replace("gpu_nvidia", "gpu_a")
    r = scan_files(tmp_path / "b", {"makefile": plain, "src/k.cu": _KERNEL})
    assert not [e for e in r.routes if e.counts and e.path == "makefile"]


def test_an_annotation_library_with_gaps_is_minor(tmp_path: Path) -> None:
    """hidet's ``nvtx``: its calls are no-ops on AMD, only the profiler ranges are lost."""
    r = scan_files(tmp_path, {"requirements.txt": "nvtx>=0.2\n"})
    got = [f.severity.value for f in r.findings if f.rule_id == "GP103"]
    assert got == ["minor"], got


_TMA = '__device__ void load() { asm volatile("cp.async.bulk.tensor.2d.shared::cluster"); }\n'


def test_a_recent_generation_variant_beside_an_older_one_is_not_built(tmp_path: Path) -> None:
    """mirage's ``tasks/hopper`` and ``tasks/blackwell`` beside ``tasks/ampere``: a ROCm build
    takes the Ampere variant. A Hopper-only library's Hopper code is the library."""
    files = {
        "setup.py": "from setuptools import setup\nsetup(name='m')\n",
        "include/tasks/ampere/linear.cuh": _KERNEL,
        "include/tasks/hopper/linear.cuh": _TMA,
        "include/tasks/blackwell/linear_sm100.cuh": _TMA,
    }

    def core_asm(root: Path, files: dict[str, str]) -> set[str]:
        r = scan_files(root, files)
        return {
            f.location.path
            for f in r.findings
            if f.rule_id == "GP301" and f.severity.value != "info"
        }

    assert core_asm(tmp_path / "a", files) == set()
    del files["include/tasks/ampere/linear.cuh"]
    assert core_asm(tmp_path / "b", files) == {
        "include/tasks/hopper/linear.cuh",
        "include/tasks/blackwell/linear_sm100.cuh",
    }
