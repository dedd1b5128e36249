"""The GP302-GP308 rule table: code that assumes a 32-lane warp, and ``warpSize`` as a constant.

Detection lives in :mod:`gpuport.scan.rules.native.warp` and
:mod:`gpuport.scan.rules.native.warp_masks`; this module is only the registry
metadata (``gpuport rules`` / ``gpuport explain`` read it), registered by
:mod:`gpuport.scan.rules.native.warp`.
"""

from __future__ import annotations

from gpuport.models import Severity
from gpuport.scan.rules.base import Family, Rule, wave64
from gpuport.scan.rules.native.common import HIP_LANG_EXT

HECBENCH = (
    "https://github.com/ORNL/HeCBench/issues/167",
    "https://github.com/ORNL/HeCBench/issues/171",
)
WAVE64_NOTE = "CDNA targets (wave64: gfx90a, gfx942, gfx950); RDNA runs 32-lane waves"

WARP_RULES: tuple[Rule, ...] = (
    Rule(
        id="GP302",
        name="warp-mask-32-bit",
        title="32-bit full-warp mask passed to a *_sync warp intrinsic",
        severity=Severity.BLOCKER,
        family=Family.NATIVE,
        rationale=(
            "HIP's __shfl_*_sync, __ballot_sync, __any_sync, __all_sync, __match_*_sync and "
            "__syncwarp take a 64-bit lane mask and, since ROCm 6.2, static_assert on anything "
            "narrower ('The mask must be a 64-bit integer'), so 0xffffffff does not compile. "
            "Even widened, 0xffffffff names only lanes 0-31 of a 64-lane wavefront. "
            "ROCm/rocm-systems#8385 (2026) relaxes the check for wave32 targets only, so on RDNA "
            "it is reported as major (it still fails on ROCm releases before that change)."
        ),
        fix=(
            "Pass a 64-bit mask: __activemask(), ~0ull or 0xffffffffffffffffull; in code shared "
            "with CUDA define the full mask per platform (uint64_t on HIP)."
        ),
        references=(
            "https://github.com/ROCm/hip/issues/3667",
            "https://github.com/ROCm/rocm-systems/pull/8385",
            HIP_LANG_EXT,
        ),
        effort_hours=0.25,
        applies_note="all targets (wave64: a compile error since ROCm 6.2 and wrong lanes; "
        "wave32: a compile error before ROCm/rocm-systems#8385)",
    ),
    Rule(
        id="GP303",
        name="warp-size-32-constant",
        title="Warp size hard-coded as 32",
        severity=Severity.MAJOR,
        family=Family.NATIVE,
        rationale=(
            "A WARP_SIZE/kWarpSize constant of 32 (or a check warpSize == 32) drives lane "
            "indices, loop strides, reduction depth and launch sizes. On a 64-lane CDNA "
            "wavefront, lanes 32-63 alias lanes 0-31 and reductions cover half the wave: "
            "results are silently wrong or the kernel aborts."
        ),
        fix=(
            "Use warpSize in device code, query hipDeviceAttributeWarpSize on the host, or "
            "define the constant per architecture (64 under __GFX9__, else 32); keep a separate "
            "constant where 32 means bits per word."
        ),
        references=(*HECBENCH, "https://github.com/ggml-org/llama.cpp/issues/3630"),
        effort_hours=2.0,
        applies=wave64,
        applies_note=WAVE64_NOTE,
    ),
    Rule(
        id="GP304",
        name="lane-math-32",
        title="Lane or warp index computed with a literal 32 (& 31, % 32, >> 5, / 32)",
        severity=Severity.MAJOR,
        family=Family.NATIVE,
        rationale=(
            "threadIdx.x & 31, tid % 32, tid >> 5 and blockDim.x / 32 compute lane and warp "
            "numbers for 32-lane warps. On a 64-lane wavefront two hardware lanes get the same "
            "lane number and the warp count is doubled, so per-warp results collide when the "
            "code around them means the hardware wavefront (warpSize, a ballot, a shuffle from a "
            "fixed lane with no width). Consistent 32-lane groups, where each half of a "
            "wavefront does a CUDA warp's work, are right as written and reported as info."
        ),
        fix=(
            "Write threadIdx.x % warpSize (or & (warpSize - 1), __lane_id()) and "
            "threadIdx.x / warpSize; keep 32 only where it packs bits into 32-bit words."
        ),
        references=(*HECBENCH, "https://github.com/ORNL/HeCBench/issues/177"),
        effort_hours=0.5,
        applies=wave64,
        applies_note=WAVE64_NOTE,
    ),
    Rule(
        id="GP305",
        name="shuffle-32-lanes",
        title="Shuffle reduction that starts at offset 16 or uses width 32",
        severity=Severity.MAJOR,
        family=Family.NATIVE,
        rationale=(
            "A butterfly or shift-down reduction that starts at offset 16 combines only 32 "
            "lanes; on a 64-lane wavefront the two halves are never added together, which is "
            "wrong where the result is read as the wavefront's (at lane 0 of warpSize). A width "
            "argument of 32 splits the wavefront into two 32-lane halves: right for code built "
            "on 32-lane tiles, wrong next to code that means the hardware wavefront."
        ),
        fix=(
            "Start the loop at warpSize / 2 (for (int o = warpSize / 2; o > 0; o >>= 1)) and "
            "drop the width argument or pass warpSize."
        ),
        references=(
            "https://github.com/ggml-org/llama.cpp/issues/3630",
            "https://github.com/cupy/cupy/pull/9977",
            "https://github.com/ORNL/HeCBench/issues/180",
        ),
        effort_hours=0.5,
        applies=wave64,
        applies_note=WAVE64_NOTE,
    ),
    Rule(
        id="GP306",
        name="shared-per-warp-32",
        title="__shared__ array sized [32] per warp or per lane",
        severity=Severity.MINOR,
        family=Family.NATIVE,
        rationale=(
            "A __shared__ array of 32 entries is usually indexed by lane or by warp number. "
            "Once the lane math is fixed for 64-lane wavefronts, lanes 32-63 index past its end "
            "and corrupt neighbouring shared memory."
        ),
        fix="Size it by the wavefront (64, or a per-arch constant) or by blockDim / warpSize.",
        references=(*HECBENCH, "https://github.com/ggml-org/llama.cpp/issues/3630"),
        effort_hours=0.25,
        applies=wave64,
        applies_note=WAVE64_NOTE,
    ),
    Rule(
        id="GP307",
        name="ballot-32-bit",
        title="Ballot/active mask kept in 32 bits (unsigned, __popc, __ffs, 1 << lane)",
        severity=Severity.MAJOR,
        family=Family.NATIVE,
        rationale=(
            "__ballot, __ballot_sync and __activemask return 64-bit masks on AMD. Storing them "
            "in unsigned/int, counting with __popc/__ffs or building lane bits with 1 << lane "
            "drops lanes 32-63, so votes and compactions are wrong."
        ),
        fix=(
            "Keep masks in unsigned long long (uint64_t or auto), use __popcll, __ffsll, "
            "__clzll and 1ull << lane."
        ),
        references=(
            "https://github.com/ORNL/HeCBench/issues/177",
            "https://github.com/tile-ai/tilelang/pull/1858",
            "https://github.com/alpaka-group/mallocMC/pull/182",
        ),
        effort_hours=0.5,
        applies=wave64,
        applies_note=WAVE64_NOTE,
    ),
    Rule(
        id="GP308",
        name="warpsize-not-constexpr",
        title="warpSize used as a compile-time constant",
        severity=Severity.BLOCKER,
        family=Family.NATIVE,
        rationale=(
            "Since ROCm 7.0 warpSize is no longer constexpr (and __AMDGCN_WAVEFRONT_SIZE is "
            "deprecated), because one binary can target wave32 and wave64 GPUs. Array bounds, "
            "template arguments, constexpr initialisers, static_assert and __launch_bounds__ "
            "that use it stop compiling."
        ),
        fix=(
            "Use a per-arch constexpr (64 under __GFX9__, else 32) in device code, or template "
            "the kernel on the wave size and pick the instance from hipDeviceAttributeWarpSize."
        ),
        references=(
            "https://github.com/ROCm/apex/pull/231",
            "https://github.com/ROCm/bitsandbytes/pull/86",
            "https://github.com/vllm-project/vllm/issues/20330",
        ),
        effort_hours=1.0,
        applies_note="all targets (ROCm 7.0 and later)",
    ),
)
