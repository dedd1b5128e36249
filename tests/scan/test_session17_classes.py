"""Issue 24 classes taken up in session 17 from the held-out samples' judgments (the
twenty-second's VTK-m, the twelfth's torch-harmonics): a macro a header *template* defines
only under ``__CUDA_ARCH__`` is never defined on a ROCm pass."""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from tests.scan.project_files import write

_CONFIGURE = (
    "#ifndef vtk_m_internal_Configure_h\n#define vtk_m_internal_Configure_h\n"
    "#ifdef __CUDA_ARCH__\n#define VTKM_CUDA_DEVICE_PASS\n#endif\n"
    "#cmakedefine VTKM_ENABLE_KOKKOS\n#endif\n"
)
_UNREACHABLE = (
    "#include <vtkm/internal/Configure.h>\n"
    "#if defined(VTKM_CUDA_DEVICE_PASS)\n"
    '#define VTKM_UNREACHABLE_ABORT() asm("trap;")\n'
    "#else\n#define VTKM_UNREACHABLE_ABORT() abort()\n#endif\n"
)
_CMAKE = (
    "cmake_minimum_required(VERSION 3.15)\nproject(vtkm LANGUAGES CXX)\n"
    "configure_file(vtkm/internal/Configure.h.in vtkm/internal/Configure.h)\n"
    "add_library(vtkm vtkm/internal/x.cu)\n"
)


def _ptx(root: Path, files: dict[str, str], **opts: object) -> list[str]:
    r = scan_path(write(root, files), ScanOptions(jobs=1, **opts))  # type: ignore[arg-type]
    return [f.severity.value for f in r.findings if f.rule_id == "GP301"]


def _files(template: str) -> dict[str, str]:
    return {
        "CMakeLists.txt": _CMAKE,
        "vtkm/internal/x.cu": "__global__ void k() {}\n",
        "vtkm/internal/Unreachable.h": _UNREACHABLE,
        "vtkm/internal/Configure.h.in": template,
    }


def test_a_macro_a_header_template_defines_only_under_cuda_arch_is_false_on_rocm(
    tmp_path: Path,
) -> None:
    assert _ptx(tmp_path / "a", _files(_CONFIGURE)) == ["info"]


def test_a_template_that_defines_the_macro_outside_that_branch_keeps_the_blocker(
    tmp_path: Path,
) -> None:
    live = _CONFIGURE.replace("#cmakedefine", "#define VTKM_CUDA_DEVICE_PASS\n#cmakedefine")
    assert _ptx(tmp_path / "b", _files(live)) == ["blocker"]
    # no template at all: the macro's definition is unseen, the PTX stays a blocker
    files = _files(_CONFIGURE)
    del files["vtkm/internal/Configure.h.in"]
    assert _ptx(tmp_path / "c", files) == ["blocker"]


def test_a_template_is_read_for_facts_never_judged_and_exclude_holds(tmp_path: Path) -> None:
    files = _files(_CONFIGURE + 'inline void t() { asm("trap;"); }\n')
    r = scan_path(write(tmp_path / "d", files), ScanOptions(jobs=1))
    assert not [f for f in r.findings if f.location.path.endswith(".h.in")]
    # the user's --exclude of the template is honoured: its facts are not read either
    assert _ptx(tmp_path / "e", _files(_CONFIGURE), exclude=("*.h.in",)) == ["blocker"]


_KERNEL = "__global__ void fused(float* x) { x[threadIdx.x] *= 2.0f; }\n"
_LOAD = "import os\nfrom torch.utils.cpp_extension import load\nhere = os.path.dirname(__file__)\n"


def _verdict(root: Path, op: str) -> tuple[str, str]:
    files = {"op/fused.py": op, "op/fused_kernel.cu": _KERNEL, "train.py": "import op.fused\n"}
    r = scan_path(write(root, files), ScanOptions(jobs=1))
    return r.verdict.value, r.verdict_reason


def test_a_module_level_jit_build_is_the_projects_own_cuda_build(tmp_path: Path) -> None:
    """stylegan2-pytorch (twenty-third sample): `fused = load(sources=[...cu])` at a module's
    top level runs on import, so the project builds CUDA code no ROCm build has compiled."""
    top = _LOAD + 'fused = load("fused", sources=[os.path.join(here, "fused_kernel.cu")])\n'
    verdict, reason = _verdict(tmp_path / "a", top)
    assert verdict == "major work", reason
    assert "op/fused.py:4" in reason


def test_a_jit_build_inside_a_function_stays_an_optional_fast_path(tmp_path: Path) -> None:
    inner = (
        _LOAD + "def get():\n"
        '    return load("fused", sources=[os.path.join(here, "fused_kernel.cu")])\n'
    )
    verdict, reason = _verdict(tmp_path / "b", inner)
    assert verdict != "major work", reason


_LOADER = (
    "typedef CUresult CUDAAPI tcuTexRefCreate(CUtexref *pTexRef);\n"
    "typedef CUresult CUDAAPI tcuTensorMapEncodeTiled(CUtensorMap *tensorMap, int rank);\n"
    "extern tcuTexRefCreate *cuTexRefCreate_oro;\n"
    "extern tcuTensorMapEncodeTiled *cuTensorMapEncodeTiled_oro;\n"
    "#define cuTexRefCreate cuTexRefCreate_oro\n"
    "#define cuTensorMapEncodeTiled cuTensorMapEncodeTiled_oro\n"
    "tcuTexRefCreate *cuTexRefCreate_oro = nullptr;\n"
)


def _api_hits(root: Path, text: str) -> list[tuple[str, int]]:
    r = scan_path(write(root, {"cuew.h": text, "CMakeLists.txt": _CMAKE}), ScanOptions(jobs=1))
    return sorted(
        (f.rule_id, f.location.line)
        for f in r.findings
        if f.rule_id in ("GP309", "GP312") and f.location.path == "cuew.h"
    )


def test_a_dynamic_loaders_declarations_are_not_uses_of_the_api(tmp_path: Path) -> None:
    """cuew (bundled by Orochi, twenty-third sample) declares the driver API it loads by name:
    function-type typedefs, pointer variables and renaming #defines are no uses."""
    assert _api_hits(tmp_path / "a", _LOADER) == []


def test_calls_and_macro_bodies_that_use_the_api_still_count(tmp_path: Path) -> None:
    uses = (
        _LOADER + "void f(CUtexref *r) { cuTexRefCreate(r); }\n"
        "#define BIND(r) cuTexRefSetArray(r, 0, 0)\n"
        "CUtensorMap global_map;\n"
    )
    assert _api_hits(tmp_path / "b", uses) == [("GP309", 8), ("GP309", 9), ("GP312", 10)]


def test_a_namespaced_surface_template_is_no_texture_reference(tmp_path: Path) -> None:
    """traccc (twenty-third sample): `detray::geometry::surface<detector_t> sf` is detray's
    surface class, not CUDA's `surface<void, 2>` reference."""
    text = (
        "void f(const detray::geometry::surface<detector_t> sf);\n"
        "auto g(const obj.surface<int> s);\n"
        "texture<float, 1, cudaReadModeElementType> tex;\n"
        "::surface<void, 2> surf;\n"
    )
    assert _api_hits(tmp_path / "a", text) == [("GP309", 3), ("GP309", 4)]


def _nvcc_hits(root: Path, cmake: str) -> list[int]:
    r = scan_path(write(root, {"CMakeLists.txt": cmake, "a.cu": _KERNEL}), ScanOptions(jobs=1))
    return [f.location.line for f in r.findings if f.rule_id == "GP408"]


def test_nvcc_among_a_cache_entrys_offered_values_runs_nothing(tmp_path: Path) -> None:
    """vecmem (twenty-third sample): the HIP platform choices of a cache entry."""
    head = "cmake_minimum_required(VERSION 3.20)\nproject(v LANGUAGES CXX)\n"
    choices = 'set_property( CACHE CMAKE_HIP_PLATFORM\n   PROPERTY STRINGS "hcc" "nvcc" "amd" )\n'
    assert _nvcc_hits(tmp_path / "a", head + choices) == []
    run = 'set(CMAKE_CUDA_COMPILER "/usr/local/cuda/bin/nvcc")\n'
    assert _nvcc_hits(tmp_path / "b", head + choices + run) == [5]


def _lanes(root: Path, cu: str) -> list[tuple[str, bool]]:
    """GP304 severities, each with whether it says "logical 32-thread groups"."""
    r = scan_path(write(root, {"k.cu": cu}), ScanOptions(jobs=1))
    return [
        (f.severity.value, "logical 32-thread groups" in f.message)
        for f in r.findings
        if f.rule_id == "GP304"
    ]


_GROUPS = (
    "__global__ void absorb(unsigned long long* s, const unsigned long long* d) {\n"
    "  const int lane = threadIdx.x % 32;\n"
    "  if (lane < 25) s[lane] ^= d[lane];\n"
    "  __syncwarp();\n"
    "}\n"
)


def test_a_lane_that_only_numbers_logical_groups_in_memory_is_info(tmp_path: Path) -> None:
    """icicle's SHA-3 kernels (twenty-third sample): 32-thread groups addressed through
    memory, no shuffle, vote or ballot in the file."""
    assert _lanes(tmp_path / "a", _GROUPS) == [("info", True)]


def test_a_lane_beside_a_shuffle_or_returned_is_judged_as_before(tmp_path: Path) -> None:
    # beside a shuffle the warp judge decides (here: info, the break reported at the shuffle)
    shuffled = _GROUPS.replace("  __syncwarp();\n", "  s[0] = __shfl_sync(~0ull, s[1], lane);\n")
    assert _lanes(tmp_path / "a", shuffled) == [("info", False)]
    returned = "__device__ inline int lane_of(int tid) { return tid & 31; }\n"
    assert _lanes(tmp_path / "b", returned) == [("major", False)]
    collective = _GROUPS.replace("__syncwarp();", "typedef cub::WarpReduce<int> R;")
    assert _lanes(tmp_path / "c", collective) == [("major", False)]
    # a project's own shuffle wrapper (apex's WARP_SHFL, defined in another header) is a
    # shuffle too: the warp judge decides, as beside __shfl_sync
    wrapped = _GROUPS.replace("__syncwarp();", "s[0] = WARP_SHFL(s[1], lane);")
    assert _lanes(tmp_path / "d", wrapped) == [("info", False)]
    # the hardware's warpSize beside the literal (PowerInfer's ssm-scan: 64 on AMD, so the
    # two disagree), a warp reduction or lane-mask helper of the project's: not logical groups
    for i, line in enumerate(
        ("s[lane * warpSize] = 0;", "s[0] = warp_reduce_sum(s[lane]);", "s[0] = lanemask_lt();")
    ):
        other = _GROUPS.replace("__syncwarp();", line)
        assert ("info", True) not in _lanes(tmp_path / f"e{i}", other), line


def test_an_nvidia_binary_named_beside_its_amd_twin_is_the_other_vendors_arm(
    tmp_path: Path,
) -> None:
    """Orochi (twenty-third sample): `isAmd ? "k.hipfb" : "k.fatbin"` and a prebuilt
    .fatbin shipped with its .hipfb twin."""
    loader = (
        "void load(bool isAmd) {\n"
        '  std::string p = isAmd ? "kernels.hipfb" : "kernels.fatbin";\n'
        '  std::string q = "other.fatbin";\n'
        "}\n"
    )
    files = {"load.cpp": loader, "bin/kernels.fatbin": "x", "bin/kernels.hipfb": "x",
             "bin/alone.cubin": "x"}  # fmt: skip
    r = scan_path(write(tmp_path / "a", files), ScanOptions(jobs=1))
    got = sorted(
        (f.rule_id, f.location.path, f.location.line or 0, f.severity.value)
        for f in r.findings
        if f.rule_id in ("GP322", "GP323")
    )
    assert got == [
        ("GP322", "bin/alone.cubin", 1, "blocker"),
        ("GP322", "bin/kernels.fatbin", 1, "info"),
        ("GP323", "load.cpp", 2, "info"),
        ("GP323", "load.cpp", 3, "major"),
    ]


_HIP_NV = (
    "#ifndef HIP_INCLUDE_HIP_NVIDIA_DETAIL_HIP_RUNTIME_API_H\n"
    "#define HIP_INCLUDE_HIP_NVIDIA_DETAIL_HIP_RUNTIME_API_H\n"
    '__device__ inline void hipTrap() { asm volatile("trap;"); }\n'
    "#endif\n"
)


def test_a_bundled_copy_of_hips_nvidia_platform_header_is_not_built_on_rocm(
    tmp_path: Path,
) -> None:
    """Orochi (twenty-third sample) bundles HIP's nvidia_detail runtime header, which HIP
    includes only where it targets NVIDIA GPUs."""
    files = {
        "oro/nvidia_hip_runtime_api_oro.h": _HIP_NV,
        "oro/use.cpp": '#include "nvidia_hip_runtime_api_oro.h"\n',
    }
    r = scan_path(write(tmp_path / "a", files), ScanOptions(jobs=1))
    got = {(f.rule_id, f.severity.value) for f in r.findings if f.rule_id == "GP301"}
    assert got == {("GP301", "info")}, got
    # a guard that only looks like it (two different names) is no such header
    fake = _HIP_NV.replace("#define HIP_INCLUDE_HIP_NVIDIA_DETAIL_HIP_RUNTIME_API_H", "#define X")
    files["oro/nvidia_hip_runtime_api_oro.h"] = fake
    r = scan_path(write(tmp_path / "b", files), ScanOptions(jobs=1))
    got = {(f.rule_id, f.severity.value) for f in r.findings if f.rule_id == "GP301"}
    assert got == {("GP301", "blocker")}, got


def test_an_import_a_script_skips_on_stays_optional(tmp_path: Path) -> None:
    """triton-server's QA scripts: `except ImportError: print("skipping"); sys.exit(0)`."""
    skip = (
        "import sys\ntry:\n    import torch_tensorrt\nexcept ImportError:\n"
        '    print("skipping")\n    sys.exit(0)\n'
    )
    r = scan_path(write(tmp_path / "a", {"gen.py": skip}), ScanOptions(jobs=1))
    assert [f.severity.value for f in r.findings if f.rule_id == "GP201"] == ["info"]
