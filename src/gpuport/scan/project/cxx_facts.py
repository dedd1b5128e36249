"""Preprocessor facts the project states about itself, gathered before the rules run.

* **Macros hip-clang never defines.** A project macro defined only inside a
  branch that only NVIDIA's compiler sees (``#if __CUDA_ARCH__ >= 530`` /
  ``#define PTX_AVAILABLE``) is undefined on every ROCm pass, so code under
  ``#ifdef PTX_AVAILABLE`` is not compiled for ROCm. Followed twice, so a macro
  defined under such a macro counts too. A macro also defined anywhere else does
  not count.
* **Shims.** A CUDA warp intrinsic the project redefines inside a ROCm branch
  (``#ifdef USE_ROCM`` / ``#define __shfl_xor_sync(mask, v, l) __shfl_xor(v, l)``,
  or a ``__device__`` function of that name) makes its call sites safe: the
  rules lower them to info and name the shim. A header the project includes only
  inside ROCm branches (ggml's ``vendors/hip.h``) is a ROCm branch as a whole: every
  CUDA-style ``__name`` it defines (``__vsubss4``) is a shim.
* **Selector macros.** ``AMREX_HIP_OR_CUDA(hip_expr, cuda_expr)`` defined as its first
  parameter in the ROCm branch: the other arguments are not compiled on ROCm
  (:mod:`gpuport.scan.project.cxx_selectors`).
* **Integer constants.** ``#define WARP_SIZE 32`` or ``constexpr int kTile = 32;``
  anywhere in the project gives the name its value, when every definition of the
  name agrees (a ``#define WARP_SIZE 64`` in a ROCm branch, or one from
  ``ROCM_WAVEFRONT_SIZE``, leaves it unknown). The warp rules use it to tell a
  ``tiled_partition<WARP_SIZE>`` of 32 threads from a hardware wavefront.
* **Data masks.** A ``#define X_MASK 0xffffffff`` no call takes first (past line breaks
  and casts) and no file making warp calls, or calling a project function or macro that
  makes them, names: a bitmask of data (forty-second re-run F9).

Only text is read (never compiled or run); each file is lexed only when it
defines a macro next to a ``__CUDA_ARCH__`` test or a ROCm macro.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuport import textre
from gpuport.scan.cxx import ROCM_MACRO, lex
from gpuport.scan.cxx_cond import nvidia_only_lines
from gpuport.scan.cxx_ints import int_constants, known_ints, tile_only_defines
from gpuport.scan.project.cxx_includes import include_sides
from gpuport.scan.project.cxx_selectors import selector_macros
from gpuport.scan.project.lane_helpers import called_names, lane_functions
from gpuport.scan.project.rocm_defines import rocm_defines

__all__ = ["CxxFacts", "cxx_facts", "includes_of"]

_DEFINE = textre.compile(r"^[ \t]*\#[ \t]*define[ \t]+(\w+)", re.M)
#: the test right above a ``#define`` is NVIDIA's compiler alone (``#if defined(__CUDACC__)``)
_NVCC_ONLY_TEST = textre.compile(
    r"\#[ \t]*(?:ifdef[ \t]+(?:__CUDACC__|__NVCC__)|if[ \t]+\(?[ \t]*defined[ \t]*\(?[ \t]*"
    r"(?:__CUDACC__|__NVCC__)[ \t]*\)?[ \t]*\)?)[ \t]*\n[ \t]*$"
)
#: ``#define X 0`` (or ``(0)``, ``false``): defined, but false in ``#if X``
_ZERO_DEFINE = textre.compile(
    r"[ \t]*\#[ \t]*define[ \t]+\w+[ \t]+\(?[ \t]*(?:0+|false)[ \t]*\)?[ \t]*$", re.M
)
_INCLUDE = textre.compile(r'^[ \t]*\#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)
# warp intrinsics, and the integer dot-product and SIMD video intrinsics (``__dp4a``,
# ``__vsubss4``) a project defines for ROCm itself
_SHIM_NAME = (
    r"__(?:shfl\w*|\w+_sync|activemask|ballot\w*|lanemask\w*|syncwarp|dp[24]a\w*"
    r"|v(?:add|sub|cmp\w\w|abs\w*|max|min|set\w\w|avg\w*|neg\w*|sad|hadd|absdiff)\w*\d)"
)
_SHIM_DEFINE = textre.compile(rf"^[ \t]*\#[ \t]*define[ \t]+({_SHIM_NAME})\b", re.M)
_SHIM_FUNC = textre.compile(rf"\b({_SHIM_NAME})\s*\([^;{{)]*\)\s*(?:const\s*)?\{{")
# In a header only a ROCm branch includes (ggml's vendors/hip.h), any CUDA-style ``__name``
# it defines is a shim: __vsubss4, __shfl_xor_sync ...
_ANY_DEFINE = textre.compile(r"^[ \t]*\#[ \t]*define[ \t]+(__[a-z]\w*)\b", re.M)
_ANY_FUNC = textre.compile(r"\b(__[a-z]\w*)\s*\([^;{)]*\)\s*(?:const\s*)?\{")


@dataclass(frozen=True)
class CxxFacts:
    #: project macros hip-clang never defines -> where they are defined ("file:line")
    false_macros: dict[str, str] = field(default_factory=dict)
    #: CUDA intrinsics the project redefines for ROCm -> where ("file:line")
    shims: dict[str, str] = field(default_factory=dict)
    #: headers included only in branches a ROCm build takes -> the include ("file:line")
    rocm_only: dict[str, str] = field(default_factory=dict)
    #: headers included only in branches a ROCm build never takes -> the include
    not_on_rocm: dict[str, str] = field(default_factory=dict)
    #: names every definition in the project gives the same integer -> that integer
    ints: dict[str, int] = field(default_factory=dict)
    #: (header, name) of a ``#define WARP_SIZE 32`` used only as a 32-thread tile's size
    tile_defines: dict[tuple[str, str], str] = field(default_factory=dict)
    #: (file, name) of a ``#define WARP_SIZE 32`` that no file of the project uses
    unused_defines: dict[tuple[str, str], str] = field(default_factory=dict)
    #: macros whose arguments are per-backend alternatives -> (argument ROCm keeps, where)
    selectors: dict[str, tuple[int, str]] = field(default_factory=dict)
    #: 32-bit lane-mask macros every ``*_sync`` use of which sits in a branch hip-clang never
    #: compiles (``#if CUDART_VERSION >= 9000``) -> one such use ("file:line")
    nv_only_masks: dict[str, str] = field(default_factory=dict)
    #: 32-bit mask macros (``#define X_MASK 0xffffffff``) that no call of the project takes
    #: as its first argument (a wrapper's ``SHFL(FULL_MASK, v, o)`` counts as one): data
    data_masks: frozenset[str] = frozenset()
    #: functions of the project whose body uses a hardware lane (a shuffle, a ballot), or
    #: calls one that does: a lane passed to one is a hardware lane (fortyfirst re-run F3)
    lane_functions: frozenset[str] = frozenset()
    #: project macros defined on one side of ROCm tests only (ggml's ``AMD_MFMA_AVAILABLE``):
    #: ``#ifdef`` of one, or a test of its value, is a ROCm test (:mod:`.rocm_defines`)
    rocm_names: frozenset[str] = frozenset()
    #: project macros whose value tells ROCm apart (``WS`` 64 or 32 by
    #: ``__AMDGCN_WAVEFRONT_SIZE``): only a test of the value is a ROCm test
    rocm_values: frozenset[str] = frozenset()

    @property
    def false_names(self) -> frozenset[str]:
        return frozenset(self.false_macros)


_TESTED = textre.compile(r"defined[ \t]*\(?[ \t]*(\w+)|\#[ \t]*ifn?def[ \t]+(\w+)")


def _tested_defined(texts: dict[str, str]) -> frozenset[str]:
    """The names some file tests with ``defined(name)``, ``#ifdef`` or ``#ifndef``, read in
    one pass per file (a pattern per name over every file was quadratic: 9,000 such defines,
    > 60 s; thirty-fifth re-run F6)."""
    out: set[str] = set()
    for text in texts.values():
        if "def" in text:
            out.update(a or b for a, b in _TESTED.findall(text))
    return frozenset(out)


def includes_of(text: str) -> frozenset[str]:
    """The file names (last path part) a C/C++ file includes."""
    if "include" not in text:
        return frozenset()
    return frozenset(m.group(1).rsplit("/", 1)[-1] for m in _INCLUDE.finditer(text))


_SHIM_HINT = textre.compile(_SHIM_NAME + r"\s*\(")
_SHIM_WORDS = (
    "_sync", "__shfl", "__activemask", "__ballot", "__lanemask", "__syncwarp", "__dp4a",
    "__dp2a", "__vsub", "__vadd", "__vcmp", "__vabs", "__vmax", "__vmin", "__vset", "__vavg",
)  # fmt: skip
_ROCM_WORDS = ("HIP", "ROCM", "ROCm", "rocm", "AMDGCN", "AMDGPU", "amdgcn", "__gfx", "__GFX")


def cxx_facts(
    texts: dict[str, str],
    includes: dict[str, frozenset[str]] | None = None,
    build_false: dict[str, str] | None = None,
    build_live: frozenset[str] = frozenset(),
) -> CxxFacts:
    """Facts from every CUDA/C++ file of the project (relative path -> text; ``includes``:
    the header names each includes, when the caller has them; ``build_false``: macros the
    build defines only where ROCm does not build, with the evidence; ``build_live``: every
    macro a build file defines)."""
    shims: dict[str, str] = {}
    values: dict[str, set[str]] = {}
    # macros a build file may define (``build_live``), outside the CUDA-only ones, are live
    live: set[str] = set(build_live - set(build_false or ()))
    arch_files: list[tuple[str, str]] = []
    sides = include_sides(texts)
    rocm_only = sides.rocm_only
    seeded = tuple(build_false or ())
    for rel, text in texts.items():
        for name, vals in int_constants(text).items():
            values.setdefault(name, set()).update(vals)
        has_define = "define" in text
        # a file that defines macros under a CUDA-only test (``__CUDA_ARCH__``, or a macro the
        # build leaves off on ROCm) is read branch by branch
        arch = has_define and ("__CUDA_ARCH" in text or any(n in text for n in seeded))
        whole = rel in rocm_only  # every line of it is on ROCm's side
        shim = whole or (
            any(w in text for w in _SHIM_WORDS)
            and any(w in text for w in _ROCM_WORDS)
            and ROCM_MACRO.search(text) is not None
            and _SHIM_HINT.search(text) is not None
        )
        if not arch and not shim:
            if has_define:
                live.update(_DEFINE.findall(text))
            continue
        src = lex(text)
        if shim:
            pats = (_ANY_DEFINE, _ANY_FUNC) if whole else (_SHIM_DEFINE, _SHIM_FUNC)
            for pat in pats:
                for m in pat.finditer(src.code):
                    line = src.line_of(m.start())
                    if whole or src.guarded(line):
                        shims.setdefault(m.group(1), f"{rel}:{line}")
        if arch:
            arch_files.append((rel, text))
        elif has_define:
            live.update(_DEFINE.findall(src.code))
    # a macro the build defines only for CUDA, and no live #define gives it: false too
    seed = {n: ev for n, ev in (build_false or {}).items() if n not in live}
    false: dict[str, str] = dict(seed)
    tested: frozenset[str] | None = None  # names tested with defined(), read on first need
    lexed = {rel: lex(text) for rel, text in arch_files}
    for _ in range(2):  # a macro defined under a false macro is false too
        in_nv: dict[str, str] = {}
        zeros: set[str] = set()
        round_live = set(live)
        for rel, src in lexed.items():
            nv = nvidia_only_lines(src.directives, src.line_count, frozenset(false))
            for m in _DEFINE.finditer(src.code):
                line = src.line_of(m.start())
                if nv is not None and 0 < line < len(nv) and nv[line]:
                    in_nv.setdefault(m.group(1), f"{rel}:{line}")
                elif m.group(1) in seed and _NVCC_ONLY_TEST.search(
                    src.code[max(0, m.start() - 200) : m.start()]
                ):
                    # ``#if defined(__CUDACC__)`` / ``#define X_COMPILE_CUDA`` beside its HIP
                    # twin defined under ``__HIPCC__``: the project maps each compiler to
                    # its own backend switch, so the CUDA one is off where hip-clang builds
                    in_nv.setdefault(m.group(1), f"{rel}:{line}")
                elif not src.dead(line):
                    if _ZERO_DEFINE.match(src.code, m.start()):
                        zeros.add(m.group(1))
                    else:
                        round_live.add(m.group(1))
        new = {n: ev for n, ev in seed.items() if n not in round_live}
        new |= {n: where for n, where in in_nv.items() if n not in round_live}
        # `#if FEAT_SM100 / #define X 1 / #else / #define X 0`: X is 0 on ROCm, which makes
        # `#if X` false (torch-harmonics' DISCO_TCGEN05_SUPPORTED, issue 24 twelfth sample);
        # a name some file tests with defined()/#ifdef is defined there, so it is not false
        if tested is None and zeros:
            tested = _tested_defined(texts)
        new = {n: w for n, w in new.items() if n not in zeros or n not in (tested or ())}
        if new == false:
            break
        false = new
    ints = known_ints(values)
    lanes = lane_functions(texts)
    unused: dict[tuple[str, str], str] = {}
    tiles = tile_only_defines(texts, includes_of, ints, includes, unused)
    not_on_rocm = dict(sides.not_on_rocm)
    if false:
        # headers included only under a macro the ROCm build leaves off (RAJA's
        # ``#ifdef RAJA_CUDA_ACTIVE`` / ``#include <RAJA/policy/tensor/arch/cuda.hpp>``)
        for header, where in include_sides(texts, frozenset(false)).not_on_rocm.items():
            not_on_rocm.setdefault(header, where)
    derived = rocm_defines(texts.values(), build_live)
    return CxxFacts(
        rocm_names=derived[0],
        rocm_values=derived[1],
        nv_only_masks=_nv_only_masks(texts, frozenset(false)),
        data_masks=_data_masks(texts, lanes),
        false_macros=false,
        shims=shims,
        rocm_only=rocm_only,
        not_on_rocm=not_on_rocm,
        ints=ints,
        tile_defines=tiles,
        unused_defines=unused,
        selectors=selector_macros(texts),
        lane_functions=lanes,
    )


_MASK_DEFINE = textre.compile(
    r"^[ \t]*\#[ \t]*define[ \t]+(\w*MASK\w*)[ \t]+\(?[ \t]*(?:0[xX]0*[fF]{8}|4294967295)[uU]?",
    re.M | re.I,
)
_SYNC_USE = textre.compile(r"_sync[ \t]*\([ \t]*\(?[ \t]*(\w+)\b")


def _nv_only_masks(texts: dict[str, str], false: frozenset[str]) -> dict[str, str]:
    """32-bit mask macros (``#define FULL_MASK 0xffffffff``) whose every ``*_sync(NAME, ...)``
    use in the project lies on lines only NVIDIA's compiler takes (issue 24, thirteenth
    sample: darknet's FULL_MASK, used only under ``#if CUDART_VERSION >= 9000``, whose
    ``#else`` calls ``__shfl(val, lane)``). A mask with no use found, or one live use, is
    not in it."""
    names = {m.group(1) for text in texts.values() if "MASK" in text.upper()
             for m in _MASK_DEFINE.finditer(text)}  # fmt: skip
    if not names:
        return {}
    dead_use: dict[str, str] = {}
    live: set[str] = set()
    for rel, text in texts.items():
        if "_sync" not in text or not any(n in text for n in names):
            continue
        src = lex(text)
        nv = nvidia_only_lines(src.directives, src.line_count, false)
        for m in _SYNC_USE.finditer(src.code):
            name = m.group(1)
            if name not in names:
                continue
            line = src.line_of(m.start())
            if nv is not None and 0 < line < len(nv) and nv[line]:
                dead_use.setdefault(name, f"{rel}:{line}")
            elif not src.dead(line):
                live.add(name)
    return {n: where for n, where in dead_use.items() if n not in live}


_WARP_CALL = textre.compile(r"_sync[ \t]*\(|\b__(?:shfl|ballot|any|all|activemask)\w*[ \t]*\(")
_MASK_WORD = textre.compile(r"\w*(?i:mask)\w*")
#: the first word of a call's first argument, past line breaks, parentheses and casts
#: (``SHFL(\n FULL_MASK``, ``SHFL((unsigned)FULL_MASK``, ``static_cast<unsigned>(FULL_MASK)``,
#: ``SHFL(unsigned(FULL_MASK)``): forty-second re-run F9
_FIRST_ARG = textre.compile(
    r"(?:\b\w+|>)\s*\(\s*"
    r"(?:\(\s*[A-Za-z_][\w:\s*]*\)\s*|[A-Za-z_][\w:]*\s*(?:<[\w:\s*]*>\s*)?\(\s*|\(\s*)*"
    r"(\w+)"
)


def _data_masks(texts: dict[str, str], lanes: frozenset[str] = frozenset()) -> frozenset[str]:
    """The 32-bit mask macros of the project that no call takes as its first argument and no
    file making warp calls names (issue 30, J55: MD-Bench's ``NBNXN_INTERACTION_MASK_ALL`` is a
    data bitmask no call takes). One pass per file for the words naming a mask (a test per
    name and file was names x files: the thirty-fifth re-run's 24,000 mask defines)."""
    names = {m.group(1) for text in texts.values() if "MASK" in text.upper()
             for m in _MASK_DEFINE.finditer(text)}  # fmt: skip
    if not names:
        return frozenset()
    out: set[str] = set()
    for text in texts.values():
        named = set(_MASK_WORD.findall(text)) & names if "ask" in text or "ASK" in text else set()
        if not named:
            continue
        if _WARP_CALL.search(text) is not None or (lanes and called_names(text) & lanes):
            # a file that makes warp calls, or calls a project function or macro that makes
            # them (``lanes``: ``SHFL_DOWN(FULL_MASK, v, o)`` in any argument, forty-second
            # re-run F9), may pass it on through a variable or a default
            # argument (moderngpu's ``ballot(int p, unsigned mask=MEMBERMASK)``): a lane mask
            out |= named
            continue
        out.update(n for n in _FIRST_ARG.findall(text) if n in named)
    return frozenset(names - out)
