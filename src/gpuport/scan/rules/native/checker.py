"""GP3xx: CUDA/C++ sources and prebuilt GPU binaries.

This module holds the checker for native files and the rules about inline PTX,
device-side features HIP lacks (dynamic parallelism, texture references,
async copies, clusters), managed memory and GPU binaries. The warp-size rules
live in :mod:`.warp`, the library/type/intrinsic rules in
:mod:`native_api`; importing this module registers all of them.

Every pass reads the lexed view from :mod:`gpuport.scan.cxx`, so nothing in a
comment or a string fires (except the inside of ``asm("...")``, read on
purpose), a hit inside a ROCm branch of the preprocessor, or inside a branch only
NVIDIA's compiler sees (``#ifdef __CUDA_ARCH__``, :mod:`native_cond`), is
lowered to info, and nothing is reported from a branch no compiler sees (``#if
0``, ``#if false``; the ``#else`` of an ``#if 0`` is live). In a file that uses
CUTLASS or CuTe, the PTX and warp findings (GP301-GP304) are lowered to info and
counted in that file's GP315 blocker (:mod:`.libs`).
"""

from __future__ import annotations

import re

from gpuport import textre
from gpuport.models import Severity
from gpuport.scan.cxx import lex, within
from gpuport.scan.rules.base import Family, FileContext, FileKind, Rule, checker, register
from gpuport.scan.rules.native.api import check_api
from gpuport.scan.rules.native.common import (
    Pass,
    Sink,
    iter_words,
    loader_declaration,
    word_start,
)
from gpuport.scan.rules.native.libs import FOLDED_BY_CUTLASS, check_libraries, cutlass_match
from gpuport.scan.rules.native.ptx_text import PTX, PTX_IDIOMS, host_operands
from gpuport.scan.rules.native.warp import check_warp
from gpuport.scan.rules.native.warp_budget import judged_until

register(
    Rule(
        id="GP301",
        name="inline-ptx-asm",
        title="Inline PTX assembly",
        severity=Severity.BLOCKER,
        family=Family.NATIVE,
        rationale=(
            'asm("...") blocks written in PTX are NVIDIA\'s virtual ISA; the AMD compiler '
            "cannot assemble them and HIPIFY leaves them untouched ('There are no plans to port "
            "ISA assembler codes in an automated mode'). Each block must be rewritten by hand "
            "with a HIP intrinsic, a builtin or plain C++."
        ),
        fix=(
            "Replace the block with the HIP equivalent (the message names it for common idioms), "
            "or keep the PTX under #if !defined(__HIP_PLATFORM_AMD__) with a HIP branch beside it."
        ),
        references=(
            "https://github.com/ROCm/HIPIFY/issues/731",
            "https://github.com/ROCm/HIPIFY/issues/758",
            "https://github.com/ROCm/hip/issues/2564",
        ),
        effort_hours=2.0,
    ),
    Rule(
        id="GP309",
        name="texture-reference",
        title="Texture reference API (texture<>, cudaBindTexture, tex1Dfetch on a texref)",
        severity=Severity.MAJOR,
        family=Family.NATIVE,
        rationale=(
            "Texture and surface references were removed in CUDA 12 and are deprecated in HIP; "
            "hipBindTexture and friends are gone from the current HIP API reference, and "
            "HIPIFY's support for them is partial. Code built on them needs texture objects."
        ),
        fix=(
            "Create a hipTextureObject_t with hipCreateTextureObject and pass it to the kernel; "
            "fetch with tex1Dfetch<T>(obj, i) / tex2D<T>(obj, x, y)."
        ),
        references=(
            "https://github.com/ROCm/HIPIFY/issues/222",
            "https://github.com/ROCm/hip/issues/2514",
            "https://rocm.docs.amd.com/projects/HIP/en/latest/doxygen/html/group___texture_d.html",
        ),
        effort_hours=2.0,
    ),
    Rule(
        id="GP310",
        name="dynamic-parallelism",
        title="Dynamic parallelism (kernel launch or cudaDeviceSynchronize in device code)",
        severity=Severity.BLOCKER,
        family=Family.NATIVE,
        rationale=(
            "Launching kernels from device code (<<<>>> inside a __global__/__device__ function, "
            "device-side cudaDeviceSynchronize, cudaGetParameterBuffer) is not supported by HIP, "
            "and AMD has said there is no plan to add it."
        ),
        fix=(
            "Move the child launch to the host (split the kernel in phases, or launch a grid "
            "big enough for the nested work), or use a persistent kernel with a work queue."
        ),
        references=(
            "https://github.com/ROCm/hip/issues/3511",
            "https://github.com/ROCm/hip/issues/3895",
        ),
        effort_hours=8.0,
    ),
    Rule(
        id="GP311",
        name="cooperative-grid-sync",
        title="Cooperative-groups grid synchronisation",
        severity=Severity.MINOR,
        family=Family.NATIVE,
        rationale=(
            "this_grid().sync() works on ROCm only for kernels launched cooperatively "
            "(hipLaunchCooperativeKernel) with every block resident at once. Occupancy differs "
            "on AMD GPUs (64-lane waves, different register and LDS limits), so a grid size that "
            "fit on NVIDIA can fail to launch."
        ),
        fix=(
            "Launch with hipLaunchCooperativeKernel, size the grid from "
            "hipOccupancyMaxActiveBlocksPerMultiprocessor, and check "
            "hipDeviceAttributeCooperativeLaunch."
        ),
        references=(
            "https://github.com/ROCm/hip/pull/3478",
            "https://github.com/ROCm/legacy-rocm-build/issues/4120",
        ),
        effort_hours=1.0,
    ),
    Rule(
        id="GP312",
        name="async-copy-hopper-feature",
        title="Async copy / Hopper feature with no HIP equivalent",
        severity=Severity.BLOCKER,
        family=Family.NATIVE,
        rationale=(
            "cuda::pipeline, cuda::barrier, cuda::memcpy_async, cg::memcpy_async, "
            "__pipeline_memcpy_async, TMA tensor maps and thread-block clusters "
            "(__cluster_dims__, this_cluster()) have no HIP implementation ('HIP doesn't "
            "currently support some of the Cuda async functions'). Kernels built on them must "
            "be restructured."
        ),
        fix=(
            "Copy global memory into __shared__ with ordinary loads and __syncthreads() "
            "(double-buffer by hand), and drop clusters or emulate them with global-memory "
            "synchronisation; for GEMM/attention use CK, hipBLASLt or aiter kernels."
        ),
        references=(
            "https://github.com/ROCm/legacy-rocm-build/issues/4120",
            "https://github.com/ROCm/hip/pull/3478",
        ),
        effort_hours=8.0,
    ),
    Rule(
        id="GP313",
        name="managed-memory-xnack",
        title="Managed (unified) memory relies on XNACK page migration",
        severity=Severity.MINOR,
        family=Family.NATIVE,
        rationale=(
            "hipMallocManaged, __managed__, hipMemAdvise and hipMemPrefetchAsync exist, but "
            "on-demand page migration needs XNACK: a GPU and code objects built with xnack+ and "
            "HSA_XNACK=1 at run time. Without it, managed data is not migrated on GPU page faults, "
            "so kernels run slowly from host memory or fault."
        ),
        fix=(
            "On MI200/MI300 run with HSA_XNACK=1 and build for the xnack+ target feature; or "
            "replace managed memory with explicit hipMalloc and hipMemcpy."
        ),
        references=(
            "https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_runtime_api/"
            "memory_management/unified_memory.html",
            "https://rocm.docs.amd.com/projects/hipDF/en/latest/how-to/cudf_pandas.html",
        ),
        effort_hours=1.0,
    ),
    Rule(
        id="GP322",
        name="prebuilt-gpu-binary",
        title="Prebuilt NVIDIA GPU binary (.cubin, .fatbin, .ptx)",
        severity=Severity.BLOCKER,
        family=Family.NATIVE,
        rationale=(
            ".cubin and .fatbin files hold SASS machine code for NVIDIA GPUs, and .ptx holds "
            "NVIDIA's virtual ISA that only the NVIDIA driver compiles. None of them can be "
            "loaded on an AMD GPU; the kernels must be rebuilt from source."
        ),
        fix=(
            "Find the source the binary was built from and compile it with hipcc for the AMD "
            "targets (--offload-arch=gfx942 ...); if only the binary exists, the kernel must be "
            "rewritten."
        ),
        references=("https://github.com/ROCm/HIPIFY/issues/731", "https://github.com/vosen/ZLUDA"),
        effort_hours=8.0,
    ),
    Rule(
        id="GP323",
        name="ptx-cubin-runtime-loading",
        title="Runtime loading of PTX/cubin modules",
        severity=Severity.MAJOR,
        family=Family.NATIVE,
        rationale=(
            "cuModuleLoadData/cuLinkAddData with PTX or cubin, nvrtcGetPTX and paths to .ptx or "
            ".cubin files expect NVIDIA code. hipModuleLoad* loads AMD code objects only, and "
            "hipRTC produces them from HIP source, so the loading pipeline must change."
        ),
        fix=(
            "Compile the kernels with hipRTC (hiprtcCompileProgram, hiprtcGetCode) or ship "
            "code objects built with hipcc --genco, and load them with hipModuleLoadData."
        ),
        references=(
            "https://github.com/ROCm/HIPIFY/blob/amd-staging/docs/reference/tables/"
            "CUDA_RTC_API_supported_by_HIP.md",
            "https://github.com/ROCm/HIPIFY/blob/amd-staging/docs/reference/tables/"
            "CUDA_Driver_API_functions_supported_by_HIP.md",
            "https://github.com/ROCm/HIPIFY/issues/731",
        ),
        effort_hours=4.0,
    ),
)

# -- GP301 -----------------------------------------------------------------------------------

_ASM = textre.compile(r"asm(?:__)?\b(?:\s+(?:volatile|__volatile__|goto|inline))*\s*\(")


def _asm_template(sink: Sink, open_paren: int) -> str | None:
    """The text of the string literals of an asm statement's template (before the first
    top-level ``:``); None when unbalanced."""
    src = sink.src
    close = src.match_close(open_paren, limit=20_000)
    if close is None:
        return None
    end = next(src.top_level(open_paren + 1, close, ":"), close)
    return "".join(src.string_body(s) for s in src.strings_in(open_paren, end)[:64])


def _check_asm(sink: Sink) -> None:
    code = sink.code
    for m in _ASM.finditer(code):
        start = m.start() - 2 if code.startswith("__asm", m.start() - 2) else m.start()
        if not word_start(code, start):
            continue
        template = _asm_template(sink, m.end() - 1)
        if not template:
            continue
        ptx = PTX.search(template)
        if ptx is None or host_operands(sink.src, m.end() - 1):
            continue  # not PTX (x86/ARM host asm, or AMDGCN asm)
        hints = [hint for pattern, hint in PTX_IDIOMS if pattern.search(template)]
        what = " ".join(template.replace("%%", "%").replace("\\n", " ").split())
        if len(what) > 60:
            what = what[:57] + "..."
        message = f"inline PTX (`{what}`) does not compile for AMD GPUs"
        if hints:
            message += "; replace with " + hints[0]
            if len(hints) > 1:
                message += f" (also: {hints[1]})"
        sink.hit("GP301", start, message)


# -- GP309 -----------------------------------------------------------------------------------

_TEXREF_DECL = textre.compile(
    r"(?:texture|surface)\s*<[^;<>]*(?:<[^;<>]*>[^;<>]*)*>\s*&?\s*"
    r"(?P<name>[A-Za-z_]\w*)"
)
#: a name qualified by a namespace or reached through an object, right before the match
_QUALIFIED = textre.compile(r"(?:\w\s*::|\.|->)\s*$")
_TEXREF_API = textre.compile(
    r"cu(?:da(?:BindTexture(?:2D|ToArray|ToMipmappedArray)?|UnbindTexture|GetTextureReference|"
    r"GetTextureAlignmentOffset|BindSurfaceToArray|GetSurfaceReference)\b|TexRef\w+|SurfRef\w+)"
)
_TEX_FETCH = textre.compile(
    r"(?:tex(?:1Dfetch|1D|2D|3D|1DLayered|2DLayered|Cubemap\w*)|"
    r"surf[123]D(?:read|write))\s*(?:<[^<>;]*>)?\s*\(\s*(?P<name>[A-Za-z_]\w*)"
)


def _check_textures(sink: Sink) -> None:
    code = sink.code
    names: set[str] = set()
    for m in iter_words(_TEXREF_DECL, code):
        if _QUALIFIED.search(code, max(0, m.start() - 80), m.start()):
            continue  # `detray::geometry::surface<detector_t> sf` (traccc): another `surface`
        names.add(m.group("name"))
        sink.hit(
            "GP309",
            m.start(),
            f"texture reference `{m.group('name')}`: texture references "
            "were removed in CUDA 12 and are deprecated in HIP; use a texture object",
        )
    for m in iter_words(_TEXREF_API, code):
        if loader_declaration(code, m.start()):
            continue
        sink.hit(
            "GP309",
            m.start(),
            f"`{m.group()}` is texture-reference API; use "
            "hipCreateTextureObject and a hipTextureObject_t instead",
        )
    if names:
        for m in iter_words(_TEX_FETCH, code):
            if m.group("name") in names:
                sink.hit(
                    "GP309",
                    m.start(),
                    f"fetch through texture reference "
                    f"`{m.group('name')}`; fetch through a texture object instead",
                )


# -- GP310 -----------------------------------------------------------------------------------

_DEVICE_QUALIFIER = textre.compile(r"__(?:global|device)__\b")
_HOST_QUALIFIER = textre.compile(r"\b__host__\b")
_LAUNCH = textre.compile(r"<<<")
_DEVICE_ONLY_DP = textre.compile(r"cudaDeviceSynchronize\s*\(")
_DP_API = textre.compile(
    r"cuda(?:GetParameterBuffer\w*|LaunchDevice\w*|StreamTailLaunch|"
    r"StreamFireAndForget)\b"
)


def _check_dynamic_parallelism(sink: Sink) -> None:
    code = sink.code
    bodies = []
    if "<<<" in code or "cudaDeviceSynchronize" in code:
        bodies = sink.src.function_bodies(_DEVICE_QUALIFIER, exclude=_HOST_QUALIFIER)
    if bodies:
        for m in _LAUNCH.finditer(code):
            if within(bodies, m.start()):
                sink.hit(
                    "GP310",
                    m.start(),
                    "kernel launch inside device code (dynamic "
                    "parallelism) is not supported by HIP",
                )
        for m in iter_words(_DEVICE_ONLY_DP, code):
            if within(bodies, m.start()):
                sink.hit(
                    "GP310",
                    m.start(),
                    "cudaDeviceSynchronize() in device code waits for "
                    "child kernels (dynamic parallelism); HIP has no device-side launch",
                )
    for m in iter_words(_DP_API, code):
        sink.hit(
            "GP310",
            m.start(),
            f"`{m.group()}` is part of the device-launch API, which HIP does not provide",
        )


# -- GP311-GP313 -----------------------------------------------------------------------------

_GRID_SYNC = textre.compile(
    r"this_grid\s*\(\s*\)|grid_group\b|this_multi_grid\s*\(\s*\)|"
    r"multi_grid_group\b"
)
_ASYNC = textre.compile(
    r"cuda::(?:pipeline\w*|make_pipeline|barrier|memcpy_async|aligned_size_t|"
    r"device::memcpy_async_tx|device::barrier_\w+)\b"
    r"|cg::(?:memcpy_async|wait|wait_prior)\b"
    r"|cooperative_groups::(?:memcpy_async|wait|wait_prior)\b"
    r"|__pipeline_(?:memcpy_async|commit|wait_prior|arrive_on)\b"
    r"|__cluster_dims__\b|this_cluster\s*\(|cluster_group\b|cudaLaunchAttributeCluster\w*"
    r"|cudaFuncAttributeNonPortableClusterSizeAllowed\b|CUtensorMap\w*|cuTensorMapEncode\w*"
    r"|<cuda/(?:pipeline|barrier)>|<cuda_pipeline(?:_primitives)?\.h>|<cuda_awbarrier\w*\.h>"
    r"|<cooperative_groups/memcpy_async\.h>"
)
_PROBE = textre.compile(r"\b__has_include\s*\(\s*$")
_MANAGED = textre.compile(
    r"__managed__\b|cu(?:da)?(?:MallocManaged|MemAllocManaged|MemAdvise\w*|"
    r"MemPrefetchAsync)\b"
)


def _check_device_features(sink: Sink) -> None:
    code = sink.code
    for m in iter_words(_GRID_SYNC, code):
        sink.hit(
            "GP311",
            m.start(),
            f"`{m.group()}`: grid-wide sync needs a cooperative "
            "launch (hipLaunchCooperativeKernel) with every block resident",
        )
    for m in iter_words(_ASYNC, code):
        if _PROBE.search(code, max(0, m.start() - 40), m.start()):
            continue  # `#if __has_include(<cuda/pipeline>)`: a probe, false on ROCm
        if loader_declaration(code, m.start()):
            continue
        sink.hit("GP312", m.start(), f"`{m.group()}` has no HIP equivalent")
    family = sink.ctx.target.family
    for m in iter_words(_MANAGED, code):
        if family in ("CDNA", "GCN"):
            note = "managed memory needs XNACK (HSA_XNACK=1, xnack+ build) to migrate on demand"
        else:
            note = "this RDNA target has no XNACK page-fault retry, so managed pages do not migrate"
        sink.hit("GP313", m.start(), f"`{m.group()}`: {note}")


# -- GP323 -----------------------------------------------------------------------------------

_MODULE_LOAD = textre.compile(
    r"cu(?:ModuleLoad(?:Data|DataEx|FatBinary)?|LinkAdd(?:Data|File)|"
    r"(?:da)?LibraryLoad(?:Data|FromFile))\s*\("
    r"|CU_JIT_INPUT_(?:PTX|CUBIN|FATBINARY)\b|nvrtcGet(?:PTX|CUBIN)(?:Size)?\s*\("
)
_BINARY_PATH = textre.compile(r"\.(?:ptx|cubin|fatbin)$", re.I)
_AMD_BINARY = textre.compile(r"\.(?:hipfb|hsaco|co|hipfatbin)$|amdgcn|gfx\d", re.I)


_RETURN_TYPE = textre.compile(r"[A-Za-z_][\w:]*[\s*&]+$")
_NOT_TYPES = frozenset({"return", "else", "case", "throw", "co_return", "new", "delete"})


def defines_api(code: str, m: re.Match[str]) -> bool:
    """Whether the call-like ``name(`` at ``m`` is a definition of the project's own: a
    return type before it and a body after its parameter list (cupy's stub header for
    documentation builds defines ``nvrtcResult nvrtcGetPTX(...) { return NVRTC_SUCCESS; }``).
    A prototype (``;`` after it) declares, and such a stub or shim calls nothing of
    NVIDIA's: neither is a use of the API."""
    if not m.group().endswith("("):
        return False
    before = _RETURN_TYPE.search(code, max(0, m.start() - 80), m.start())
    if before is None or before.group().split()[0].rstrip("*&") in _NOT_TYPES:
        return False
    depth, i, end = 0, m.end() - 1, min(len(code), m.end() + 2000)
    while i < end:
        c = code[i]
        depth += (c == "(") - (c == ")")
        i += 1
        if depth == 0:
            return code[i:end].lstrip()[:1] in ("{", ";")
    return False


_ENUM_HEAD = textre.compile(r"\benum(?:\s+(?:class|struct))?(?:\s+\w+)?(?:\s*:\s*[\w:]+)?\s*$")


def declares_enumerator(code: str, m: re.Match[str]) -> bool:
    """Whether the name at ``m`` is an enumerator the project declares (hashcat's
    dynamically loaded ``ext_cuda.h``: ``typedef enum CUjitInputType_enum {
    CU_JIT_INPUT_CUBIN = 0, CU_JIT_INPUT_PTX, ...``): a declaration, not a use."""
    if m.group().endswith("("):
        return False
    after = code[m.end() : m.end() + 200].lstrip()[:1]
    if after not in (",", "}", "="):
        return False
    start = max(0, m.start() - 4000)
    opened = code.rfind("{", start, m.start())
    if opened == -1 or "}" in code[opened : m.start()] or ";" in code[opened : m.start()]:
        return False
    return _ENUM_HEAD.search(code, max(0, opened - 120), opened) is not None


def _check_module_loading(sink: Sink) -> None:
    for m in iter_words(_MODULE_LOAD, sink.code):
        if defines_api(sink.code, m) or declares_enumerator(sink.code, m):
            continue
        name = m.group().rstrip("( \t")
        sink.hit(
            "GP323",
            m.start(),
            f"`{name}` loads NVIDIA PTX/cubin; AMD GPUs load code "
            "objects (hipModuleLoadData after hiprtcGetCode or hipcc --genco)",
        )
    strings = sink.src.strings
    for i, lit in enumerate(strings):
        body = sink.src.string_body(lit)
        if body[-4:].lower() in (".ptx", "ubin", "tbin") and _BINARY_PATH.search(body):
            # `isAmd ? "k.hipfb" : "k.fatbin"` (Orochi, twenty-third sample): the other arm
            end = sink.code.find(";", lit.start, lit.start + 400)
            left = sink.code.rfind(";", max(0, lit.start - 400), lit.start)
            amd = any(
                _AMD_BINARY.search(sink.src.string_body(other))
                for other in strings[max(0, i - 4) : i + 5]
                if other is not lit and left < other.start < (end if end >= 0 else lit.start)
            )
            sink.hit(
                "GP323",
                lit.start,
                f'"{body}" names an NVIDIA binary; build and load an AMD code object instead'
                + ("; the same statement names the AMD one beside it" if amd else ""),
                guarded=amd,
            )


_PASSES: tuple[tuple[Pass, tuple[str, ...]], ...] = (
    (_check_asm, ("GP301",)),
    (_check_textures, ("GP309",)),
    (_check_dynamic_parallelism, ("GP310",)),
    (_check_device_features, ("GP311", "GP312", "GP313")),
    (_check_module_loading, ("GP323",)),
)


@checker(FileKind.NATIVE)
def check_native(ctx: FileContext) -> None:
    """Run every GP3xx pass on one CUDA/C++ file."""
    sink = Sink(ctx, lex(ctx.text))
    if cutlass_match(sink) is not None:
        sink.fold = FOLDED_BY_CUTLASS
    for run, ids in _PASSES:
        if sink.wants(*ids):
            run(sink)
    budget = judged_until(sink.src)
    if budget is None:
        check_warp(sink)
    else:  # a generated file of thousands of warp operations: judged up to the budget
        cut, line, count, most = budget
        warp_sink = Sink(ctx, lex(ctx.text[:cut]))
        warp_sink.fold = sink.fold
        check_warp(warp_sink)
        sink.folded += warp_sink.folded
        ctx.skip_reason = (
            f"partly judged: {count:,} warp tokens (shuffles, thread indices, 32s...), more than "
            f"the {most:,} one file is judged for; the warp rules (GP302-GP308) "
            f"stopped at line {line}"
        )
    check_api(sink)
    check_libraries(sink)  # last: GP315 counts the findings folded into it


@checker(FileKind.GPU_BINARY)
def check_gpu_binary(ctx: FileContext) -> None:
    """A prebuilt .cubin/.fatbin/.ptx file: its contents are not read (text is empty)."""
    suffix = ctx.rel.rsplit(".", 1)[-1].lower()
    if suffix == "ptx":
        message = (
            f"{ctx.rel} is PTX, which only NVIDIA's driver compiles; rebuild the kernel "
            "from source for AMD targets"
        )
    else:
        message = (
            f"{ctx.rel} is a prebuilt NVIDIA binary ({suffix}) that cannot run on AMD "
            "GPUs; rebuild it from source"
        )
    # the AMD build shipped beside it (Orochi's .fatbin/.hipfb): the loader picks per vendor
    amd = next((s for s in (".hipfb", ".hsaco", ".co") if ctx.path.with_suffix(s).is_file()), "")
    if amd:
        message += f"; {ctx.path.with_suffix(amd).name} beside it is the AMD build"
    ctx.report("GP322", 1, None, message=message, guarded=bool(amd))
