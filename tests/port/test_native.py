"""Kernels: full-warp masks, hipCUB/HIP headers, wave64 (safe and unsafe), __CUDA_ARCH__
branches."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import require_tool
from tests.port.helpers import fix_ids, project, run

KERNEL = """\
#include <cuda_runtime.h>
#include <cub/block/block_reduce.cuh>

#define WARP_SIZE 32

__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}

__global__ void k(const float* x, float* out) {
    int lane = threadIdx.x % WARP_SIZE;
    float v = warp_sum(x[blockIdx.x * blockDim.x + threadIdx.x]);
    if (lane == 0) atomicAdd(out, v);
}
"""


_compiler = require_tool


def test_mask_becomes_the_macro_and_headers_get_a_hip_branch(tmp_path: Path) -> None:
    root = project(tmp_path, {"k.cu": KERNEL})
    report = run(root, apply=True, verify=False)
    text = (root / "k.cu").read_text()
    assert "__shfl_xor_sync(GPUPORT_FULL_MASK, v, o)" in text
    assert "#define GPUPORT_FULL_MASK 0xffffffffffffffffull" in text
    assert "#define GPUPORT_FULL_MASK 0xffffffffu" in text
    assert "namespace cub = hipcub;" in text
    # consistent 32-lane code, right on wave64 as written: its port waits for --unsafe-fixes
    assert "GPUPORT_WAVE_SIZE" not in text
    assert "wave64:k.cu" in fix_ids(report, applied=False)
    assert "wave64-safe:k.cu" not in fix_ids(report)
    assert (root / "k.cu.gpuport.bak").read_text() == KERNEL


def _hipcc_ok(hipcc: str, probe: Path, obj: Path, *flags: str) -> None:
    done = subprocess.run(
        [hipcc, "--offload-arch=gfx90a", "-x", "hip", *flags, "-c", str(probe), "-o", str(obj)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "HIP_PLATFORM": "amd"},
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_unsafe_fixes_port_the_warp_size(tmp_path: Path) -> None:
    root = project(tmp_path, {"k.cu": KERNEL})
    run(root, apply=True, verify=False, unsafe_fixes=True)
    text = (root / "k.cu").read_text()
    assert "GPUPORT_WAVE_SIZE" in text and "GPUPORT_FULL_MASK" in text


def test_nvcc_still_compiles_and_sees_the_same_mask(tmp_path: Path) -> None:
    nvcc = _compiler("nvcc", "GPUPORT_REQUIRE_NVCC")
    src = KERNEL.replace("#include <cub/block/block_reduce.cuh>\n", "")
    root = project(tmp_path, {"k.cu": src})
    run(root, apply=True, verify=False, unsafe_fixes=True)
    probe = root / "probe.cu"
    probe.write_text(
        '#include "k.cu"\n'
        'static_assert(sizeof(GPUPORT_FULL_MASK) == 4, "nvcc keeps the 32-bit mask");\n'
        'static_assert(GPUPORT_FULL_MASK == 0xffffffffu, "same value");\n'
    )
    done = subprocess.run(
        [nvcc, "-x", "cu", "-c", str(probe), "-o", str(tmp_path / "p.o")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_hipcc_sees_a_64_bit_mask(tmp_path: Path) -> None:
    hipcc = _compiler("hipcc", "GPUPORT_REQUIRE_HIPCC")
    root = project(
        tmp_path,
        {
            "m.h": "#define FULL_MASK 0xffffffff\n__device__ int f(int v);\n",
            "m.cu": '#include "m.h"\n'
            "__device__ int g(int v) { return __shfl_xor_sync(FULL_MASK, v, 1); }\n",
        },
    )
    run(root, apply=True, verify=False)
    assert "#define FULL_MASK GPUPORT_FULL_MASK" in (root / "m.h").read_text()
    probe = root / "probe.hip"
    probe.write_text('#include "m.h"\nstatic_assert(sizeof(FULL_MASK) == 8, "64-bit on HIP");\n')
    _hipcc_ok(hipcc, probe, tmp_path / "p.o")


ARCH = """\
#ifdef __CUDA_ARCH__
#if __CUDA_ARCH__ < 700
__device__ void slow_path();
#endif
#endif
"""


def test_cuda_arch_branch_is_unsafe_and_handles_the_nested_test(tmp_path: Path) -> None:
    root = project(tmp_path, {"a.cuh": ARCH})
    safe = run(root)
    assert safe.files == [] and "cuda-arch-branch:a.cuh" in fix_ids(safe, applied=False)
    run(root, apply=True, verify=False, unsafe_fixes=True)
    text = (root / "a.cuh").read_text()
    assert "#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)" in text
    assert "#if __CUDA_ARCH__ < 700 || defined(__HIP_DEVICE_COMPILE__)" in text
    assert run(root, unsafe_fixes=True).files == []


def test_clean_kernel_is_left_alone(tmp_path: Path) -> None:
    clean = "#include <hip/hip_runtime.h>\n__global__ void k(float* x) { x[threadIdx.x] = 0; }\n"
    assert run(project(tmp_path, {"k.cu": clean}), unsafe_fixes=True).files == []


def test_hipcc_compiles_the_wave64_port_with_64_lanes(tmp_path: Path) -> None:
    """The unsafe wave64 rewrite is single-source: hipcc (gfx90a, wave64) compiles it and
    sees 64 lanes, as nvcc compiles it with 32 (the test above). (HIP 5.2 has no ``*_sync``
    shuffles, so the kernel here uses the lane arithmetic only.)"""
    hipcc = _compiler("hipcc", "GPUPORT_REQUIRE_HIPCC")
    src = (
        "#define WARP_SIZE 32\n"
        "__global__ void k(int* x) {\n"
        "    int lane = threadIdx.x % WARP_SIZE;\n"
        "    int warp = threadIdx.x / WARP_SIZE;\n"
        "    x[threadIdx.x] = lane + warp;\n"
        "}\n"
    )
    root = project(tmp_path, {"k.cu": src})
    run(root, apply=True, verify=False, unsafe_fixes=True)
    assert "GPUPORT_WAVE_SIZE" in (root / "k.cu").read_text()
    probe = root / "probe.hip"
    probe.write_text(
        '#include <hip/hip_runtime.h>\n#include "k.cu"\n'
        "#if defined(__HIP_DEVICE_COMPILE__)\n"
        'static_assert(GPUPORT_WAVE_SIZE == 64, "gfx90a runs 64 lanes");\n'
        "#endif\n"
    )
    _hipcc_ok(hipcc, probe, tmp_path / "p.o")


WAVE64 = Path(__file__).resolve().parents[1] / "fixtures" / "hipify" / "wave64"


def _wave64_fix(report: object, fid: str) -> object:
    return next(f for f in report.fixes if f.id == fid)  # type: ignore[attr-defined]


def test_a_safe_run_ports_what_the_lane_analysis_proves(tmp_path: Path) -> None:
    """Code wrong on a 64-lane wavefront whose every 32 is a lane (a 32-bit ballot, a
    reduction read at the hardware lane 0) is a safe fix; nothing it writes is marked unsafe."""
    src = (WAVE64 / "safe.cu").read_text(encoding="utf-8")
    root = project(tmp_path, {"safe.cu": src})
    report = run(root, apply=True, verify=False)
    text = (root / "safe.cu").read_text(encoding="utf-8")
    fix = _wave64_fix(report, "wave64-safe:safe.cu")
    assert fix.safe and fix.applied  # type: ignore[attr-defined]
    assert "__popcll(votes)" in text or "GPUPORT_WAVE_SIZE" in text
    assert "gpuport: wave64 unsafe" not in text
    assert "slot, 0, 32);" in text  # CUDA's own width


@pytest.mark.parametrize(
    "name", [*sorted(p.name for p in (WAVE64 / "harmful").iterdir()), "clear.cu", "ambiguous.cu"]
)
def test_a_safe_run_never_applies_a_rewrite_the_analysis_marks_unsafe(
    tmp_path: Path, name: str
) -> None:
    """Issue 25's harmful classes (and the fixtures of code right as written): a port safe
    run writes no line hipify's lane analysis ports only with --unsafe-fixes, and none of the
    harmful ones in either mode."""
    from gpuport.hipify.translate import port_wave64

    folder = WAVE64 / "harmful" if (WAVE64 / "harmful" / name).exists() else WAVE64
    src = (folder / name).read_text(encoding="utf-8")
    unsafe_lines = {c.line for c in port_wave64(src, path=name, unsafe=True).wave64 if c.unsafe}
    root = project(tmp_path, {name: src})
    report = run(root, apply=True, verify=False)
    text = (root / name).read_text(encoding="utf-8")
    assert "gpuport: wave64 unsafe" not in text
    kept = src.splitlines()
    for line in unsafe_lines:
        assert kept[line - 1] in text.splitlines(), (name, line)
    for fix in report.fixes:
        if fix.id.startswith("wave64"):
            assert fix.safe == fix.id.startswith("wave64-safe:"), fix.id
            assert fix.applied == fix.safe, fix.id
    if folder.name == "harmful":
        assert "GPUPORT_WAVE_SIZE" not in text
        again = project(tmp_path / "unsafe", {name: src})
        run(again, apply=True, verify=False, unsafe_fixes=True)
        assert "GPUPORT_WAVE_SIZE" not in (again / name).read_text(encoding="utf-8")


def test_the_unsafe_wave64_fix_is_an_alternative_of_the_safe_one(tmp_path: Path) -> None:
    """clear.cu has a ballot kernel (safe) and consistent 32-lane groups (unsafe): a safe run
    applies the first, --unsafe-fixes the superset, marked."""
    src = (WAVE64 / "clear.cu").read_text(encoding="utf-8")
    report = run(project(tmp_path / "a", {"k.cu": src}), apply=True, verify=False)
    assert {"wave64-safe:k.cu", "wave64:k.cu"} <= set(fix_ids(report))
    assert "wave64-safe:k.cu" in fix_ids(report, applied=True)
    assert "wave64:k.cu" in fix_ids(report, applied=False)
    root = project(tmp_path / "b", {"k.cu": src})
    report = run(root, apply=True, verify=False, unsafe_fixes=True)
    assert "wave64:k.cu" in fix_ids(report, applied=True)
    assert "wave64-safe:k.cu" in fix_ids(report, applied=False)
    assert "gpuport: wave64 unsafe" in (root / "k.cu").read_text(encoding="utf-8")


def test_wave64_judges_the_project_whole(tmp_path: Path) -> None:
    """A header's WARP_SIZE that another file's host code uses sizes the grid: never ported,
    even with --unsafe-fixes (the header alone would be)."""
    header = (
        "#define WARP_SIZE 32\n"
        "__device__ float wsum(float v) {\n"
        "  for (int o = WARP_SIZE / 2; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);\n"
        "  return v;\n}\n"
    )
    kernel = (
        '#include "warp.cuh"\n'
        "__global__ void k(float* o) {\n"
        "  float v = wsum(o[threadIdx.x]);\n"
        "  if (threadIdx.x % WARP_SIZE == 0) o[threadIdx.x / WARP_SIZE] = v;\n}\n"
        "void run(float* o, int n) { k<<<n / WARP_SIZE, 256>>>(o); }\n"
    )
    root = project(tmp_path / "a", {"warp.cuh": header, "k.cu": kernel})
    run(root, apply=True, verify=False, unsafe_fixes=True)
    assert "#define WARP_SIZE 32\n" in (root / "warp.cuh").read_text(encoding="utf-8")
    assert "GPUPORT_WAVE_SIZE" not in (root / "k.cu").read_text(encoding="utf-8")
    # the grid sized otherwise: the header's helper, which alone has no caller, is ported
    # with the kernel that calls it
    root = project(
        tmp_path / "b", {"warp.cuh": header, "k.cu": kernel.replace("n / WARP_SIZE", "n / 8")}
    )
    run(root, apply=True, verify=False, unsafe_fixes=True)
    assert "#define WARP_SIZE GPUPORT_WAVE_SIZE" in (root / "warp.cuh").read_text(encoding="utf-8")


CUB_WARP = """\
#include <cub/block/block_reduce.cuh>

template <int LOGICAL_WARP_THREADS>
struct Scan {
    static constexpr bool IS_ARCH_WARP = (LOGICAL_WARP_THREADS == CUB_WARP_THREADS(0));
};
"""


def test_cub_warp_threads_gets_its_hipcub_name_in_the_hip_branch(tmp_path: Path) -> None:
    root = project(tmp_path, {"scan.cuh": CUB_WARP, "other.cuh": KERNEL})
    run(root, apply=True, verify=False)
    text = (root / "scan.cuh").read_text()
    hip, cuda = text.split("#else\n", 1)
    assert "#define CUB_WARP_THREADS(unused) HIPCUB_WARP_THREADS" in hip
    assert "namespace cub = hipcub;" in hip
    # nvcc sees the original include and the original use, unchanged
    assert cuda.startswith("#include <cub/block/block_reduce.cuh>\n#endif\n")
    assert text.endswith(CUB_WARP.split("\n", 1)[1])
    # a file that does not use the macro gets no definition of it
    other = (root / "other.cuh").read_text()
    assert "namespace cub = hipcub;" in other and "CUB_WARP_THREADS" not in other
    # idempotent: the second run changes nothing
    assert run(root).files == []


def test_hipcc_expands_cub_warp_threads_to_hipcubs(tmp_path: Path) -> None:
    """With a stand-in hipcub.hpp (hipCUB is not installed here), hipcc compiles the HIP
    branch and CUB_WARP_THREADS(0) is hipCUB's warp size."""
    hipcc = _compiler("hipcc", "GPUPORT_REQUIRE_HIPCC")
    stub = project(
        tmp_path / "inc",
        {"hipcub/hipcub.hpp": "#define HIPCUB_WARP_THREADS 64\nnamespace hipcub {}\n"},
    )
    root = project(tmp_path / "p", {"scan.cuh": CUB_WARP})
    run(root, apply=True, verify=False)
    probe = root / "probe.hip"
    probe.write_text('#include "scan.cuh"\nstatic_assert(Scan<64>::IS_ARCH_WARP, "hipCUB warp");\n')
    _hipcc_ok(hipcc, probe, tmp_path / "p.o", f"-I{stub}")


FALLBACK = """\
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700  // half atomics before Volta
__device__ void atomicAdd(short* a, short v);
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
__device__ void ampere_path();
#endif
"""


def test_a_fallback_for_older_gpus_is_compiled_on_rocm_only_with_unsafe_fixes(
    tmp_path: Path,
) -> None:
    """``defined(__CUDA_ARCH__) && __CUDA_ARCH__ < N`` gets a HIP test (unsafe); the newer-GPU
    path (``>= 800``) is left, and the safe run writes nothing."""
    root = project(tmp_path, {"a.cuh": FALLBACK})
    safe = run(root)
    assert safe.files == [] and "cuda-arch-fallback:a.cuh" in fix_ids(safe, applied=False)
    run(root, apply=True, verify=False, unsafe_fixes=True)
    lines = (root / "a.cuh").read_text().splitlines()
    assert lines[0] == (
        "#if (defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700) || defined(USE_ROCM) || "
        "defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)  // half atomics before Volta"
    )
    assert lines[3] == "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800"
    assert run(root, unsafe_fixes=True).files == []


def test_a_branch_that_refuses_older_gpus_is_no_fallback(tmp_path: Path) -> None:
    """J44 (llama's nbody.cu): `#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 600` holding a
    static_assert (no 64-bit atomics there) checks old GPUs, it provides nothing: compiled on
    ROCm it would fail every AMD build. Left, even with --unsafe-fixes."""
    refuse = (
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 600\n"
        'static_assert(!kTrace, "tracing needs compute capability >= 60 for 64bit atomics");\n'
        "#endif\n"
    )
    for body in (refuse, refuse.replace("static_assert", "#error x\n//")):
        root = project(tmp_path / str(len(body)), {"a.cuh": FALLBACK + body})
        report = run(root, unsafe_fixes=True)
        new = "\n".join(ln for f in report.files for h in f.hunks for ln in h.lines)
        assert "< 700) ||" in new and "< 600) ||" not in new, new


def test_the_fallback_test_keeps_nvcc_and_takes_hip(tmp_path: Path) -> None:
    """The rewritten test, preprocessed: nvcc's arch 700 and host pass skip it as before,
    arch 600 takes it, and a HIP compile takes it."""
    cpp = shutil.which("cpp")
    if cpp is None:
        pytest.skip("no C preprocessor")
    root = project(tmp_path, {"a.cuh": FALLBACK})
    run(root, apply=True, verify=False, unsafe_fixes=True)
    cases = (
        ([], False),
        (["-D__CUDA_ARCH__=700"], False),
        (["-D__CUDA_ARCH__=600"], True),
        (["-D__HIPCC__"], True),
    )
    for defs, taken in cases:
        args = [cpp, "-P", *defs, str(root / "a.cuh")]
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
        assert ("atomicAdd" in out) is taken, defs


def test_an_older_gpu_path_inside_a_function_is_left(tmp_path: Path) -> None:
    """Negative: inside a function body (a device path, or a host function where the test
    is dead code on nvcc too) the gate is pass-specific: no fallback fix. A file-scope one
    inside a namespace still gets it."""
    src = (
        "namespace ft {\n"
        "void gemm(float* a) {\n"
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700\n"
        "  slow_gemm(a);\n"
        "#endif\n"
        "}\n"
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 600\n"
        "__device__ double atomicAdd(double* a, double v);\n"
        "#endif\n"
        "}\n"
    )
    root = project(tmp_path, {"g.cu": src})
    run(root, apply=True, verify=False, unsafe_fixes=True)
    lines = (root / "g.cu").read_text().splitlines()
    assert lines[2] == "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700"
    assert lines[6].startswith("#if (defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 600) || ")


def test_no_hip_branch_where_only_nvcc_compiles(tmp_path: Path) -> None:
    """Includes under ``#ifdef __CUDACC__`` are never compiled by hip-clang (it does not
    define __CUDACC__): a HIP branch there would be dead, so none is written; the same
    include outside such a block (or under ``__CUDACC__ || __HIPCC__``) gets it."""
    guarded = KERNEL.replace(
        "#include <cub/block/block_reduce.cuh>\n",
        "#ifdef __CUDACC__\n#include <cub/block/block_reduce.cuh>\n#endif\n",
    )
    report = run(project(tmp_path / "nv", {"k.cuh": guarded}))
    assert not any(i.startswith("hip-headers") for i in fix_ids(report, applied=True))
    both = guarded.replace("#ifdef __CUDACC__", "#if defined(__CUDACC__) || defined(__HIPCC__)")
    report = run(project(tmp_path / "both", {"k.cuh": both}))
    assert "hip-headers:k.cuh" in fix_ids(report, applied=True)


BUILTIN_WARPSIZE = """\
#include <cstdint>
#include <type_traits>
__device__ int lanes_log2() { return (warpSize == 32) ? 5 : 6; }
using LaneMask = std::conditional_t<warpSize == 32, uint32_t, uint64_t>;
__global__ void k(int* out) {
    static_assert(warpSize == 32 || warpSize == 64, "32 or 64 lanes");
    out[threadIdx.x] = lanes_log2();
}
"""


@pytest.mark.parametrize(
    "own",
    [
        "namespace cfg {\nstatic constexpr int warpSize = 32;\n}\n",
        "#define warpSize 32\n",
        "struct Config {\n#if defined(__HIPCC__)\n  static constexpr int warpSize = 64;\n"
        "#else\n  static constexpr int warpSize = 32;\n#endif\n};\n",
    ],
)
def test_no_wave64_rewrite_where_the_project_declares_its_own_warp_size(
    tmp_path: Path, own: str
) -> None:
    """The builtin ``warpSize`` compared with 32 gets the safe wave64 rewrite; where the
    project declares a ``warpSize`` of its own (a struct's per-platform constant, a macro),
    the name may be the project's value, and tying it to the compiled architecture would
    change the project's choice: no rewrite, the reason names the declaration."""
    alone = run(project(tmp_path / "a", {"k.cu": BUILTIN_WARPSIZE}), apply=False)
    assert "wave64-safe:k.cu" in fix_ids(alone)
    root = project(tmp_path / "b", {"k.cu": BUILTIN_WARPSIZE, "config.h": own})
    report = run(root, apply=True, verify=False, unsafe_fixes=True)
    assert not [f for f in fix_ids(report) if f.startswith("wave64")]
    assert (root / "k.cu").read_text(encoding="utf-8") == BUILTIN_WARPSIZE
    reasons = [u.reason for u in report.unfixed if u.finding.path == "k.cu"]
    assert any("declares its own warpSize (config.h:" in r for r in reasons)


TUNED = """\
#ifndef block_size_x
    #define block_size_x 64
#endif
#ifdef USE_HALF
#include <cuda_fp16.h>
#endif

__global__ void k(float* y) {
    float v = y[threadIdx.x];
    for (int s = 16; s > 0; s >>= 1) v += __shfl_xor_sync(0xffffffff, v, s);
    y[threadIdx.x] = v;
}
"""


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor (cpp)")
def test_the_mask_is_defined_outside_a_default_value_block(tmp_path: Path) -> None:
    """``#ifndef block_size_x`` / ``#define block_size_x 64`` is a default a tuner overrides
    (kernel_tuner defines block_size_x for every configuration), not an include guard: the
    mask defined inside it, or after an include inside another conditional, would vanish and
    nvcc would stop on GPUPORT_FULL_MASK. A whole-file include guard still takes it."""
    root = project(
        tmp_path, {"k.cu": TUNED, "g.cuh": "#ifndef G_CUH\n#define G_CUH\n" + TUNED + "#endif\n"}
    )
    run(root, apply=True, verify=False)
    for name in ("k.cu", "g.cuh"):
        text = (root / name).read_text()
        for defs in ((), ("-Dblock_size_x=128",), ("-Dblock_size_x=128", "-DUSE_HALF")):
            out = subprocess.run(
                ["cpp", "-P", "-D__CUDACC__", *defs, "-include", "/dev/null", "-"],
                input=text.replace("#include <cuda_fp16.h>", ""),
                capture_output=True,
                text=True,
                check=True,
                timeout=60,
            ).stdout
            assert "__shfl_xor_sync(0xffffffffu, v, s)" in out, (name, defs, out)
    guarded = (root / "g.cuh").read_text()
    assert guarded.index("#define G_CUH") < guarded.index("#ifndef GPUPORT_FULL_MASK")
    assert guarded.index("#ifndef GPUPORT_FULL_MASK") < guarded.index("#ifndef block_size_x")
