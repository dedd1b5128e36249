"""What inline assembly is PTX (GP301): the instruction words of PTX, the HIP replacement of
each idiom, and the operand constraints that only host assemblers know.

ARM NEON's ``vadd.f16`` reads like a PTX video instruction; its operands are ``"w"`` (a NEON
register), which PTX has no constraint for. PTX operands take only ``h r l q f d n C`` (``q``
is 128-bit) with ``= + &`` and matching digits: an asm statement with any other operand
constraint is host assembly (MegEngine's ``dnn/src/arm_common/simd_macro/marm_neon.h``, papi's
AVR32 atomics; issue 24, twenty-sixth sample).
"""

from __future__ import annotations

import re

from gpuport import textre
from gpuport.scan.cxx import CxxSource

__all__ = ["PTX", "PTX_IDIOMS", "host_operands"]

PTX = textre.compile(
    r"%%?(?:laneid|n?warpid|n?smid|gridid|lanemask_\w+|clock(?:64|_hi)?|globaltimer\w*|n?tid|"
    r"n?ctaid|dynamic_smem_size|total_smem_size|envreg\d+)\b"
    r"|\b(?:mov|ld|st|cvta?|add|sub|mul|mad|fma|div|rem|abs|neg|min|max|shfl|vote|bar|barrier|"
    r"bfe|bfi|prmt|lop3|cp|mma|wgmma|ldmatrix|stmatrix|red|atom|setp|selp|and|or|xor|not|shl|"
    r"shr|membar|fence|redux|match|tex|tld4|suld|sust|isspacep|brev|popc|clz|dp4a|dp2a|rcp|sqrt|"
    r"rsqrt|ex2|lg2|sin|cos|tanh|mbarrier|elect|griddepcontrol|setmaxnreg|testp|copysign|slct|"
    r"vabsdiff\w*|vadd\w*|vsub\w*|vmax\w*|vmin\w*|multimem|tensormap|nanosleep|activemask|"
    r"prefetch|createpolicy|getctarank)(?:\.[a-z0-9_]+)+\b"
    r"|\.reg\s+\.\w+|(?<![\w.])(?:trap|exit|pmevent)\s*;"
)
PTX_IDIOMS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (textre.compile(p), hint)
    for p, hint in (
        (r"%%?laneid", "__lane_id()"),
        (r"%%?n?warpid", "a wave index from threadIdx (threadIdx.x / warpSize)"),
        (r"%%?n?smid", "__smid() (the hardware CU id)"),
        (r"\bbfe\.", "__bitextract_u32/__bitextract_u64 or shifts and masks"),
        (r"\bbfi\.", "__bitinsert_u32/__bitinsert_u64"),
        (r"\bshfl\.", "__shfl/__shfl_up/__shfl_down/__shfl_xor (or _sync with a 64-bit mask)"),
        (r"\bvote\.|\bactivemask\.", "__ballot/__any/__all/__activemask (64-bit results)"),
        (r"\bld\.global\.(?:\w+\.)*nc\b", "__ldg()"),
        (
            r"\bcp\.async\.bulk|\bcp\.reduce\.async\.bulk|\btensormap|\bmbarrier|\bwgmma|"
            r"\bsetmaxnreg|\bgriddepcontrol|\bmultimem|\belect\.",
            "nothing direct: Hopper TMA/wgmma/mbarrier features have no HIP equivalent",
        ),
        (r"\bcp\.async", "plain global-to-__shared__ copies and __syncthreads() (no async copy)"),
        (
            r"\bmma\.|\bldmatrix|\bstmatrix",
            "rocWMMA or the MFMA builtins (__builtin_amdgcn_mfma_*)",
        ),
        (r"\bprmt\.", "__byte_perm()"),
        (r"\blop3\.", "the equivalent C++ bitwise expression"),
        (r"\bdp[24]a\.", "__builtin_amdgcn_sdot4/__builtin_amdgcn_udot4 or a portable shim"),
        (r"%%?clock|%%?globaltimer", "clock64() / wall_clock64()"),
        (
            r"\b(?:membar|fence)\.",
            "__threadfence(), __threadfence_block() or __threadfence_system()",
        ),
        (r"\b(?:red|atom)\.", "atomicAdd/atomicCAS/... or the scoped __hip_atomic_* builtins"),
        (r"\bbar(?:rier)?\.", "__syncthreads()"),
        (r"\bcvt\.", "the conversion intrinsics (__float2half_rn, __float2bfloat16, ...)"),
        (r"\bex2\.approx", "exp2f() (or __expf())"),
        (r"\blg2\.approx", "__log2f()"),
        (r"\brcp\.approx", "__frcp_rn() (or __builtin_amdgcn_rcpf())"),
        (r"\brsqrt\.approx", "rsqrtf() (or __frsqrt_rn())"),
        (r"\bsqrt\.approx", "__fsqrt_rn() / sqrtf()"),
        (r"\bsin\.approx", "__sinf()"),
        (r"\bcos\.approx", "__cosf()"),
        (r"\btanh\.approx", "tanhf()"),
        (r"\bbrev\.", "__brev()/__brevll()"),
        (r"\bpopc\.", "__popc()/__popcll()"),
        (r"\bclz\.", "__clz()/__clzll()"),
    )
)

#: the letters of PTX's inline-asm operand constraints, and the modifiers
_PTX_CONSTRAINT = frozenset("hrlqfdnC0123456789=+&")
_OPERAND = textre.compile(r"\s*\(")


def host_operands(src: CxxSource, open_paren: int) -> bool:
    """Whether the asm statement opening at ``open_paren`` has an operand constraint PTX does
    not have (``"w"``, ``"x"``, ``"t"``...): host assembly, whatever its words look like."""
    close = src.match_close(open_paren, limit=20_000)
    if close is None:
        return False
    colon = next(src.top_level(open_paren + 1, close, ":"), None)
    if colon is None:
        return False
    for lit in src.strings_in(colon, close)[:64]:
        if not _OPERAND.match(src.code, lit.end):
            continue  # a clobber ("memory", "cc"), not an operand
        body = src.string_body(lit)
        if body and not set(body) <= _PTX_CONSTRAINT:
            return True
    return False
