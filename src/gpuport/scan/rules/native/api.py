"""GP314-GP321: NVIDIA libraries, types, intrinsics and version gates in CUDA/C++ code.

Libraries and types are reported once per file and name (the first use outside
a ROCm branch when there is one): one finding says "this file depends on X",
not one per call. Intrinsics, version gates and shared-memory sizes are
reported where they are. The library passes (GP315, GP316) live in
:mod:`.libs`.
"""

from __future__ import annotations

import re

from gpuport import textre
from gpuport.models import Severity
from gpuport.scan.cxx import ROCM_MACRO, launch_configs
from gpuport.scan.cxx_cond import without_cuda_arch
from gpuport.scan.rules.base import Family, Rule, register
from gpuport.scan.rules.native.common import (
    Sink,
    first_unlowered,
    int_value,
    iter_words,
    split_top_level,
    word_start,
)

HIPIFY_DEVICE_TABLE = (
    "https://github.com/ROCm/HIPIFY/blob/amd-staging/docs/reference/tables/"
    "CUDA_Device_API_supported_by_HIP.md"
)
GPU_SPECS = "https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html"

register(
    Rule(
        id="GP314",
        name="simd-video-intrinsic",
        title="__dp4a or SIMD video intrinsic (__vadd4, __vabsdiffu4, ...) missing in HIP",
        severity=Severity.MAJOR,
        family=Family.NATIVE,
        rationale=(
            "HIP has no __dp4a/__dp2a and none of CUDA's per-byte/per-halfword SIMD intrinsics "
            "(__vabsdiffu4, __vadd4, __vcmpeq4, __vsub4, ...); HIPIFY lists them as unsupported, "
            "so the code does not compile. AMD GPUs have dot-product instructions, but which one "
            "exists depends on the architecture."
        ),
        fix=(
            "Add a small shim: __builtin_amdgcn_sdot4 (CDNA, RDNA2) or __builtin_amdgcn_sudot4 "
            "(RDNA3/4) for __dp4a, and portable bit arithmetic for the __v* functions, under "
            "#if defined(__HIP_PLATFORM_AMD__)."
        ),
        references=(HIPIFY_DEVICE_TABLE, "https://github.com/ggml-org/llama.cpp/pull/1087"),
        effort_hours=1.0,
    ),
    Rule(
        id="GP315",
        name="nvidia-only-library",
        title="NVIDIA library with no ROCm counterpart (CUTLASS, CuTe, cuDNN frontend, ...)",
        severity=Severity.BLOCKER,
        family=Family.NATIVE,
        rationale=(
            "CUTLASS/CuTe templates, the cuDNN frontend, NVSHMEM, libcu++'s cuda::ptx, TensorRT "
            "and OptiX are NVIDIA-only and have no drop-in ROCm build. Code that uses them must be "
            "rewritten against a different library with a different API."
        ),
        fix=(
            "Port to the AMD library named in the message (Composable Kernel or hipBLASLt for "
            "CUTLASS/CuTe GEMMs, MIOpen for cuDNN graphs, rocSHMEM, MIGraphX), or keep the NVIDIA "
            "path behind #if !defined(__HIP_PLATFORM_AMD__) with a HIP fallback."
        ),
        references=(
            "https://github.com/Dao-AILab/quack/pull/98",
            "https://github.com/ROCm/HIPIFY/issues/731",
        ),
        effort_hours=16.0,
    ),
    Rule(
        id="GP316",
        name="nvidia-library-with-rocm-twin",
        title="NVIDIA library with a ROCm counterpart (cuBLAS, cuFFT, NCCL, CUB, ...)",
        severity=Severity.MINOR,
        family=Family.NATIVE,
        rationale=(
            "cuBLAS, cuBLASLt, cuSPARSE, cuFFT, cuRAND, cuSOLVER, NCCL, CUB, Thrust, NVTX, NVRTC "
            "and libcu++ have ROCm counterparts (hipBLAS, hipBLASLt, hipSPARSE, hipFFT, hipRAND, "
            "hipSOLVER, RCCL, hipCUB, rocThrust, roctx, hipRTC, libhipcxx) that HIPIFY mostly "
            "maps name for name. cuDNN maps to MIOpen, whose API differs."
        ),
        fix=(
            "Run hipify on the file and link the ROCm library named in the message; check the "
            "calls HIPIFY reports as unsupported. For cuDNN, port the calls to MIOpen."
        ),
        references=(
            "https://github.com/ROCm/HIPIFY/blob/amd-staging/docs/reference/tables/"
            "CUBLAS_API_supported_by_HIP.md",
            "https://github.com/facebookresearch/faiss/issues/5303",
        ),
        effort_hours=1.0,
        applies_note="all targets (cuDNN is reported as major)",
    ),
    Rule(
        id="GP317",
        name="cuda-version-gate",
        title="CUDA version or architecture gate without a ROCm branch",
        severity=Severity.MINOR,
        family=Family.NATIVE,
        rationale=(
            "CUDA_VERSION, __CUDACC_VER_MAJOR__ and __CUDA_ARCH__ are not defined by hip-clang, "
            "so #if CUDA_VERSION >= 11000 or #if __CUDA_ARCH__ >= 800 silently takes the oldest "
            "or the host-only branch on ROCm, and #ifdef __CUDA_ARCH__ device code is skipped."
        ),
        fix=(
            "Add a ROCm branch: test __HIP_PLATFORM_AMD__/USE_ROCM first, use "
            "__HIP_DEVICE_COMPILE__ for the device pass and HIP_VERSION for versions."
        ),
        references=(
            "https://github.com/pytorch/pytorch/blob/main/docs/source/notes/hip.rst",
            "https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html",
        ),
        effort_hours=0.25,
    ),
    Rule(
        id="GP318",
        name="shared-memory-over-lds",
        title="Shared memory per block larger than the target's LDS",
        severity=Severity.MAJOR,
        family=Family.NATIVE,
        rationale=(
            "A workgroup on MI300 (gfx942) and on RDNA gets at most 64 KiB of LDS (160 KiB on "
            "gfx950), while Ampere/Hopper kernels often opt in to 100-227 KiB of shared memory. "
            "A larger dynamic or static allocation makes the launch fail."
        ),
        fix=(
            "Shrink the tile sizes for AMD targets (choose them from "
            "hipDeviceAttributeMaxSharedMemoryPerBlock at run time), or split the work."
        ),
        references=("https://github.com/CHIP-SPV/chipStar/issues/1432", GPU_SPECS),
        effort_hours=4.0,
        applies_note="all targets; the limit comes from the target's LDS size",
    ),
    Rule(
        id="GP319",
        name="nvidia-bf16-half-types",
        title="NVIDIA-named bfloat16/half types (__nv_bfloat16, nv_bfloat162, cuda_bf16.h)",
        severity=Severity.MINOR,
        family=Family.NATIVE,
        rationale=(
            "HIP spells the bfloat16 types __hip_bfloat16/__hip_bfloat162 (hip_bf16.h); "
            "__nv_bfloat16 and the cuda_bf16.h header do not exist, and nv_bfloat162 has no "
            "mapping in HIPIFY. Some bf16 conversion intrinsics are also missing."
        ),
        fix="Use __hip_bfloat16/__hip_bfloat162 from <hip/hip_bf16.h> (or a per-platform alias).",
        references=(HIPIFY_DEVICE_TABLE,),
        effort_hours=0.5,
    ),
    Rule(
        id="GP320",
        name="nvidia-fp8-types",
        title="NVIDIA FP8 types (__nv_fp8_e4m3, __nv_fp8_e5m2, cuda_fp8.h)",
        severity=Severity.MAJOR,
        family=Family.NATIVE,
        rationale=(
            "FP8 on AMD depends on the GPU: MI300 (gfx942) uses the FNUZ variants (E4M3 max 240, "
            "no negative zero) instead of NVIDIA's OCP formats (E4M3 max 448), MI350 and RDNA4 use "
            "OCP, and MI200/RDNA3 have no FP8 hardware. Types and scaling written for OCP give "
            "wrong numbers on FNUZ."
        ),
        fix=(
            "Use HIP's FP8 types from <hip/hip_fp8.h> matching the target (the message names "
            "them) and re-derive scales from that format's max value."
        ),
        references=(
            "https://github.com/pytorch/ao/issues/1066",
            "https://github.com/pytorch/FBGEMM/pull/4280",
            HIPIFY_DEVICE_TABLE,
        ),
        effort_hours=4.0,
        applies_note="all targets; the message depends on the target's FP8 flavour",
    ),
    Rule(
        id="GP321",
        name="wmma-tensor-core-api",
        title="CUDA WMMA tensor-core API (nvcuda::wmma, mma.h)",
        severity=Severity.MAJOR,
        family=Family.NATIVE,
        rationale=(
            "nvcuda::wmma fragments and mma.h are NVIDIA tensor-core APIs that HIP does not "
            "provide. AMD matrix cores are reached through rocWMMA (a similar fragment API) or the "
            "MFMA/WMMA compiler builtins, with different fragment shapes per architecture."
        ),
        fix=(
            "Port to rocWMMA (rocwmma::fragment, load_matrix_sync, mma_sync) and check the "
            "supported tile shapes for the target, or call hipBLASLt for whole GEMMs."
        ),
        references=(
            "https://rocm.docs.amd.com/projects/rocWMMA/en/latest/api-reference-guide.html",
            "https://github.com/ROCm/rocWMMA",
        ),
        effort_hours=8.0,
    ),
)

# -- helpers ---------------------------------------------------------------------------------


def _once_per_name(sink: Sink, pattern: re.Pattern[str]) -> list[re.Match[str]]:
    """First match of each distinct text (unguarded preferred, never in ``#if 0``)."""
    chosen: dict[str, re.Match[str]] = {}
    for m in iter_words(pattern, sink.code):
        if sink.src.dead_at(m.start()):
            continue
        key = m.group()
        prev = chosen.get(key)
        if prev is None or (sink.lowered_at(prev.start()) and not sink.lowered_at(m.start())):
            chosen[key] = m
    return sorted(chosen.values(), key=lambda m: m.start())


# -- GP314 -----------------------------------------------------------------------------------

_SIMD = (
    r"__(?:dp4a|dp2a_(?:lo|hi)|v(?:abs(?:ss|diff[su])?|add(?:ss|us)?|avg[su]|"
    r"cmp(?:eq|ne|[gl][te][su])|hadd[su]|max[su]|min[su]|neg(?:ss)?|sad[su]|"
    r"set(?:eq|ne|[gl][te][su])|sub(?:ss|us)?)[24])"
)
_SIMD_CALL = textre.compile(r"(?P<fn>" + _SIMD + r")\s*\(")
_SIMD_DEF = textre.compile(
    r"(?P<fn>" + _SIMD + r")\s*\([^;{}()]*(?:\([^()]*\)[^;{}()]*)*\)\s*"
    r"(?:const\s*)?\{"
)


def _check_simd(sink: Sink) -> None:
    calls = list(iter_words(_SIMD_CALL, sink.code))
    if not calls:
        return
    defined = {
        m.group("fn") for m in iter_words(_SIMD_DEF, sink.code) if not sink.src.dead_at(m.start())
    }
    target = sink.ctx.target
    if target.family in ("CDNA", "GCN") or target.name.startswith("gfx103"):
        dot = "__builtin_amdgcn_sdot4(a, b, c, false)"
    else:
        dot = "__builtin_amdgcn_sudot4(true, a, true, b, c, false) (the RDNA3/RDNA4 form)"
    for m in calls:
        fn = m.group("fn")
        if fn in defined:
            continue  # the file brings its own implementation (a HIP shim)
        if fn.startswith("__dp"):
            msg = f"{fn} does not exist in HIP; on {target.name} use {dot} or a portable shim"
        else:
            msg = f"{fn} (CUDA SIMD video intrinsic) does not exist in HIP; use a portable shim"
        sink.hit("GP314", m.start(), msg)


# -- GP317 -----------------------------------------------------------------------------------

_VERSION_MACRO = textre.compile(
    r"\b(?:CUDA_VERSION|CUDART_VERSION|__CUDA_ARCH__|__CUDA_ARCH_LIST__|"
    r"__CUDACC_VER_(?:MAJOR|MINOR|BUILD)__)\b"
)


def _check_version_gates(sink: Sink) -> None:
    for d in sink.src.directives:
        if d.kind not in ("if", "ifdef", "ifndef", "elif", "elifdef", "elifndef"):
            continue
        m = _VERSION_MACRO.search(d.expr)
        if m is None or d.value is not None:
            continue  # no version macro, or literals decide the test (``#if 0 && CUDA_VERSION``)
        macro = m.group()
        on_rocm = without_cuda_arch(d.kind, d.expr) if macro == "__CUDA_ARCH__" else None
        if on_rocm is False:
            msg = (
                "hip-clang never defines __CUDA_ARCH__, so ROCm never compiles this branch "
                "(findings inside it are lowered to info); test __HIP_DEVICE_COMPILE__ too "
                "if ROCm needs this code"
            )
        elif on_rocm is True:
            msg = (
                "hip-clang never defines __CUDA_ARCH__, so ROCm takes this branch on the "
                "device pass too; the branches after it are NVIDIA-only (lowered to info)"
            )
        elif macro == "__CUDA_ARCH__" and (
            d.kind in ("ifdef", "ifndef", "elifdef", "elifndef")
            or not textre.search(r"__CUDA_ARCH__\s*[<>=!]", d.expr)
        ):
            msg = (
                "hip-clang does not define __CUDA_ARCH__: this device-pass test is false on "
                "ROCm (test __HIP_DEVICE_COMPILE__ too)"
            )
        else:
            msg = (
                f"{macro} is not defined by the HIP toolchain, so on ROCm this gate takes its "
                "fallback branch; add a __HIP_PLATFORM_AMD__ branch"
            )
        # A test that also names ROCm (``defined(USE_ROCM) || CUDA_VERSION >= 11000``) has
        # already decided what ROCm compiles, even when its branch is not a ROCm guard.
        sink.hit("GP317", d.offset, msg, guarded=ROCM_MACRO.search(d.expr) is not None)


# -- GP318 -----------------------------------------------------------------------------------

_SMEM_ATTR = textre.compile(r"FuncSetAttribute\s*\(")
_SHARED_ARRAY = textre.compile(
    r"__shared__\s+(?:(?:volatile|static|const|alignas\(\d+\))\s+)*"
    r"(?P<type>[\w:]+(?:\s+(?:int|long|char|short))*)\s+[A-Za-z_]\w*\s*"
    r"(?P<dims>(?:\[[^\[\];]*\]\s*)+)"
)
_SMEM_WORD = textre.compile(r"[Ss](?:[Mm][Ee][Mm]|[Hh][Mm][Ee][Mm]|hared|HARED)")
_IDENT_AT = textre.compile(r"[A-Za-z_]\w*")
_IDENT_TAIL = textre.compile(r"\w*$")
_ASSIGNED = textre.compile(r"\s*=\s*(?P<value>[^;,{}=]+);")
_DIM = textre.compile(r"\[([^\[\]]*)\]")
_SIZES = {
    "char": 1,
    "int8_t": 1,
    "uint8_t": 1,
    "unsigned char": 1,
    "bool": 1,
    "half": 2,
    "__half": 2,
    "short": 2,
    "int16_t": 2,
    "uint16_t": 2,
    "__nv_bfloat16": 2,
    "__hip_bfloat16": 2,
    "float": 4,
    "int": 4,
    "unsigned": 4,
    "unsigned int": 4,
    "uint32_t": 4,
    "int32_t": 4,
    "half2": 4,
    "__half2": 4,
    "double": 8,
    "long long": 8,
    "int64_t": 8,
    "uint64_t": 8,
    "float2": 8,
    "float4": 16,
    "double2": 16,
    "int4": 16,
}


def _check_shared_memory(sink: Sink) -> None:
    src, code = sink.src, sink.code
    kib = sink.ctx.target.lds_kib
    limit = kib * 1024
    where = f"the {kib} KiB LDS per workgroup of {sink.ctx.target.name}"

    def over(offset: int, size: int | None, what: str) -> None:
        if size is not None and size > limit:
            sink.hit("GP318", offset, f"{what} of {size} bytes exceeds {where}")

    for m in _SMEM_ATTR.finditer(code):
        args = src.call_args(m.end() - 1)
        attr = code[args[1][0] : args[1][1]] if len(args) >= 3 else ""
        call = _IDENT_TAIL.search(code, max(0, m.start() - 8), m.start())
        if "MaxDynamicShared" in attr or "MAX_DYNAMIC_SHARED" in attr:
            size = int_value(code[args[2][0] : args[2][1]])
            over(call.start() if call else m.start(), size, "dynamic shared memory")
    for start, cfg_start, cfg_end in launch_configs(code):
        parts = split_top_level(code[cfg_start:cfg_end])
        if len(parts) >= 3:
            over(start, int_value(parts[2]), "a launch with dynamic shared memory")
    for m in _SHARED_ARRAY.finditer(code):
        elem = _SIZES.get(" ".join(m.group("type").split()))
        dims = [int_value(d) for d in _DIM.findall(m.group("dims"))]
        if elem is None or not dims or any(d is None for d in dims):
            continue
        total = elem
        for d in dims:
            total *= d or 0
        over(m.start(), total, "a __shared__ array")
    seen: set[int] = set()
    for m in _SMEM_WORD.finditer(code):
        tail = _IDENT_TAIL.search(code, max(0, m.start() - 60), m.start())
        start = tail.start() if tail else m.start()
        ident = _IDENT_AT.match(code, start)
        if ident is None or start in seen or not word_start(code, start):
            continue
        seen.add(start)
        value = _ASSIGNED.match(code, ident.end())
        if value is not None:
            over(start, _a_size(int_value(value.group("value"))), f"`{ident.group()}`")
    for name, (offset, value_text) in sink.defines.items():
        if _SMEM_WORD.search(name):
            over(offset, _a_size(int_value(value_text)), f"`{name}`")


#: more than any NVIDIA GPU gives one block (227 KiB on H100 and B200): a value named for
#: shared memory that is larger is not its size in bytes (libfabric's capability bit
#: ``FI_SHARED_AV (1ULL << 53)``: issue 24, nineteenth sample)
_MOST_SHARED_ON_NVIDIA = 228 * 1024


def _a_size(value: int | None) -> int | None:
    """``value`` when it can be the shared-memory size of code that runs on NVIDIA."""
    return value if value is not None and value <= _MOST_SHARED_ON_NVIDIA else None


# -- GP319-GP321 -----------------------------------------------------------------------------

_BF16 = textre.compile(r"__nv_bfloat162?(?:_raw)?\b|nv_bfloat162?\b|<cuda_bf16\.h>")
_FP8 = textre.compile(
    r"__nv_fp8(?:x[24])?_(?:e4m3|e5m2|storage_t)\b|__nv_fp8_interpretation_t\b|"
    r"<cuda_fp8\.h>|__NV_E[45]M[23]\b"
)
#: an FP8 value held or converted: NVIDIA's types and intrinsics, or a project's alias of them
#: (``fp8e4m3``, ``float8_e4m3``); a file that only includes <cuda_fp8.h> has none
_FP8_USE = textre.compile(
    r"[eE][45][mM][23]|__nv_fp8|__nv_cvt_\w*fp8|\bfp8(?:x[24])?_t\b|__NV_SATFINITE"
)
_WMMA = textre.compile(r"nvcuda::wmma\b|wmma::\w+|<mma\.h>")
_HIP_BF16 = {
    "__nv_bfloat16": "__hip_bfloat16",
    "__nv_bfloat162": "__hip_bfloat162",
    "nv_bfloat16": "__hip_bfloat16",
    "nv_bfloat162": "__hip_bfloat162",
    "__nv_bfloat16_raw": "__hip_bfloat16_raw",
    "__nv_bfloat162_raw": "__hip_bfloat162_raw",
    "<cuda_bf16.h>": "<hip/hip_bf16.h>",
}


def _fp8_message(name: str, target: str, fp8: str) -> tuple[str, Severity | None]:
    """What an NVIDIA FP8 name becomes on ``target``, and how bad it is there."""
    if "storage_t" in name or "interpretation_t" in name:
        hip = name.replace("__nv_", "__hip_")
        return f"`{name}`: HIP spells it `{hip}` (<hip/hip_fp8.h>)", Severity.MINOR
    kind = "e5m2" if "e5m2" in name.lower() else "e4m3"
    if fp8 == "fnuz":
        numerics = (
            "E4M3-FNUZ tops out at 240, not 448"
            if kind == "e4m3"
            else "E5M2-FNUZ has no infinities or negative zero"
        )
        return (
            f"`{name}` is OCP FP8, but {target} uses FNUZ: use __hip_fp8_{kind}_fnuz "
            f"({numerics}) and re-derive the scales"
        ), None
    if fp8 == "ocp":
        return (
            f"`{name}`: {target} uses OCP FP8 like NVIDIA; use __hip_fp8_{kind}",
            Severity.MINOR,
        )
    return (
        f"`{name}`: {target} has no FP8 hardware, so FP8 kernels cannot run there "
        "(software emulation only)"
    ), Severity.BLOCKER


def _check_types(sink: Sink) -> None:
    for m in _once_per_name(sink, _BF16):
        hip = _HIP_BF16.get(m.group(), "__hip_bfloat16")
        sink.hit("GP319", m.start(), f"`{m.group()}` is CUDA-only; HIP spells it `{hip}`")
    target = sink.ctx.target
    fp8_hits = _once_per_name(sink, _FP8)
    for m in fp8_hits:
        name = m.group()
        msg, sev = _fp8_message(name, target.name, target.fp8)
        if name.startswith("<") and not _FP8_USE.search(sink.code.replace(name, "")):
            # The header alone: nothing in the file holds or converts an FP8 value.
            msg = (
                f"`{name}` is included, but this file uses no FP8 type or conversion: only the "
                "header name changes on ROCm (<hip/hip_fp8.h>, which hipify maps)"
            )
            sev = Severity.MINOR
        sink.hit("GP320", m.start(), msg, severity=sev)
    wmma = first_unlowered(sink, _WMMA)
    if wmma is not None:
        sink.hit(
            "GP321",
            wmma.start(),
            f"`{wmma.group()}`: CUDA WMMA has no HIP equivalent; "
            "port to rocWMMA or the MFMA/WMMA builtins",
        )


def check_api(sink: Sink) -> None:
    """Run the GP314 and GP317-GP321 passes that are enabled (GP315/GP316: native/libs.py)."""
    if sink.wants("GP314"):
        _check_simd(sink)
    if sink.wants("GP317"):
        _check_version_gates(sink)
    if sink.wants("GP318"):
        _check_shared_memory(sink)
    if sink.wants("GP319", "GP320", "GP321"):
        _check_types(sink)
