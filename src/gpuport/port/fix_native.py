"""Kernels and their headers: single-source fixes that nvcc and hipcc both compile.

* **Full-warp masks** (GP302, safe): a literal 32-bit full mask passed to a ``*_sync``
  intrinsic (``__shfl_xor_sync(0xffffffff, v, o)``) or a mask constant defined as one
  (``#define FULL_MASK 0xffffffff``) becomes ``GPUPORT_FULL_MASK``, defined once per file as
  ``0xffffffffu`` for nvcc (the same value and type as before) and
  ``0xffffffffffffffffull`` for HIP, whose ``*_sync`` intrinsics static_assert a 64-bit mask.
  A build that compiled keeps compiling the same code; the HIP build did not compile.
* **CUB and CUDA-only headers** (GP316, GP319, safe): a block of ``#include <cub/...>``
  lines becomes a HIP branch with ``<hipcub/hipcub.hpp>`` and ``namespace cub = hipcub;``
  (and ``CUB_WARP_THREADS(x)`` / ``CUB_PTX_WARP_THREADS`` defined as ``HIPCUB_WARP_THREADS``
  where the file uses them) beside the original includes, and ``<cuda_bf16.h>`` gets
  ``<hip/hip_bf16.h>`` beside it, as the real ports write it. nvcc sees the original lines.
* **Warp-size assumptions** (GP303-GP307): the rewrites of ``gpuport hipify --wave64 fix``
  on CUDA source that stays CUDA (:func:`gpuport.hipify.translate.port_wave64`), judged by
  the lane-meaning analysis over every CUDA/C++ file of the project at once (a constant that
  another file's host code uses is never ported), with the same ``GPUPORT_WAVE_SIZE`` macro,
  32 for nvcc. Safe: what the analysis proves keeps the meaning (a 32-bit ballot widened,
  ``warpSize`` as a constant, CUDA's width given to a broadcast, code wrong on a 64-lane
  wavefront whose every 32 is a lane); the nvcc build sees the same values. Unsafe (an
  alternative of the safe fix, taken with ``--unsafe-fixes``): also what ``hipify
  --unsafe-fixes`` ports, code right on wave64 as written (consistent 32-lane groups, logical
  tiles), each line marked ``// gpuport: wave64 unsafe``. Everything else is left, with the
  analysis's reason. Where the project declares its own ``warpSize`` (a struct's
  ``static constexpr int warpSize = 64`` chosen per platform, a parameter, a macro), a rewrite
  of a line naming ``warpSize`` is not made at all: the name is the project's value, not the
  builtin the analysis reasons about, and tying it to the compiled architecture would make it
  disagree with the project's own choice.
* **``#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < N``** at file scope (GP317, unsafe):
  definitions for GPUs below a capability (a half ``atomicAdd`` before Volta) that
  hip-clang never compiles get ``|| defined(USE_ROCM) || ...`` (both of hip-clang's passes:
  the host pass checks device code's calls too), as the real ports write it. Such a test
  inside a function body is a pass-specific path (in a host function, dead code) and is left.
* **``#ifdef __CUDA_ARCH__``** (GP317, unsafe): ``|| defined(__HIP_DEVICE_COMPILE__)`` is
  added, so hip-clang's device pass takes the branch nvcc's device pass takes; what it
  compiles on ROCm changes.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable

from gpuport import textre
from gpuport.hipify.translate import port_wave64
from gpuport.hipify.wave64 import meaning_of
from gpuport.models import Severity
from gpuport.port.context import FIXED_SCOPES, PortContext, Proposal, unrun
from gpuport.port.cxx_scope import cuda_compiler_only, function_scope
from gpuport.scan.cxx import CxxSource, lex
from gpuport.scan.finding import Finding
from gpuport.scan.rules.native.common import MASK32
from gpuport.scan.rules.native.warp_meaning import FileMeaning

__all__ = ["HIP_TEST", "MASK_MACRO", "propose"]

#: The preprocessor test every HIP branch ``port`` writes uses: hip-clang (``__HIPCC__``),
#: the HIP headers and CMake's hip::host (``__HIP_PLATFORM_AMD__``), torch's ROCm builds
#: (``USE_ROCM``).
HIP_TEST = "defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)"
MASK_MACRO = "GPUPORT_FULL_MASK"
_MARK = "// gpuport:"
_SYNC = textre.compile(
    r"__(?:shfl(?:_up|_down|_xor)?|ballot|any|all|uni|match_any|match_all|"
    r"reduce_(?:add|min|max|and|or|xor))_sync\s*\("
)
_DEFINE_MASK = textre.compile(
    r"^(\s*#\s*define\s+(\w+)\s+)(\(?\s*(?:0[xX]0*[fF]{8}[uU]?|~0[uU]?)\s*\)?)"
)
_CONST_MASK = textre.compile(
    r"\b(?:static\s+)?(?:constexpr|const)\s+(?P<type>(?:unsigned|uint32_t|unsigned\s+int|int|auto)"
    r"(?:\s+int)?)\s+(?P<name>\w+)\s*=\s*(?P<value>0[xX]0*[fF]{8}[uU]?|~0[uU]?)\s*;"
)
_INCLUDE = textre.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"][^\n]*\n?", re.M)
_CUB = textre.compile(r"^cub/")
_ARCH_IFDEF = textre.compile(
    r"^([ \t]*#[ \t]*)(ifdef[ \t]+__CUDA_ARCH__"
    r"|if[ \t]+defined[ \t]*\(?[ \t]*__CUDA_ARCH__[ \t]*\)?)"
    r"([ \t]*(?://.*|/\*.*)?)$"
)


def mask_block(eol: str = "\n") -> str:
    lines = [
        f"#ifndef {MASK_MACRO} {_MARK} GP302 full-warp mask: 64-bit on HIP, which asserts it",
        f"#if {HIP_TEST}",
        f"#define {MASK_MACRO} 0xffffffffffffffffull",
        "#else",
        f"#define {MASK_MACRO} 0xffffffffu",
        "#endif",
        "#endif",
    ]
    return eol.join(lines) + eol


def _include_guard(src: CxxSource) -> tuple[int, int] | None:
    """(end of its ``#define`` line, offset of its ``#endif``) of a whole-file include guard:
    ``#ifndef X`` / ``#define X`` first, its ``#endif`` the file's last directive. A
    default-value block (``#ifndef vector`` / ``#define vector 1`` / ``#endif``) is not one."""
    guard = textre.match(r"\s*#\s*ifndef\s+(\w+)\s*\n\s*#\s*define\s+(\w+)[^\n]*\n", src.code)
    if guard is None or guard.group(1) != guard.group(2) or not src.directives:
        return None
    depth = 0
    for i, d in enumerate(src.directives):
        depth += d.kind in ("if", "ifdef", "ifndef")
        depth -= d.kind == "endif"
        if depth == 0:  # the guard's own #endif: it must close the file
            return (guard.end(), d.offset) if i == len(src.directives) - 1 else None
    return None


def _depth(src: CxxSource, offset: int, skip: int = -1) -> int:
    """How many conditionals are open at ``offset`` (the one opened at ``skip`` not counted)."""
    depth = 0
    for d in src.directives:
        if d.offset >= offset:
            break
        if d.kind in ("if", "ifdef", "ifndef") and d.offset != skip:
            depth += 1
        elif d.kind == "endif":
            depth -= 1
    return depth


def _insert_at(src: CxxSource, before: int) -> int:
    """Offset at file scope before ``before`` to put a definition, outside every
    conditional but a whole-file include guard (a definition inside ``#ifndef block_size_x``
    vanishes when the tuner defines ``block_size_x``): after the last such ``#include``
    above it, else after a leading ``#pragma once`` / include guard, else the file start."""
    guard = _include_guard(src)
    skip = -1
    if guard is not None:
        skip = next(d.offset for d in src.directives if d.kind == "ifndef")
    best = None
    opens = ("if", "ifdef", "ifndef")
    steps = [
        (d.offset, 1 if d.kind in opens and d.offset != skip else -(d.kind == "endif"))
        for d in src.directives
    ]
    k = depth = 0  # the depth read on as the includes come in order, not from the top each
    for m in _INCLUDE.finditer(src.text, 0, before):
        while k < len(steps) and steps[k][0] < m.start():
            depth += steps[k][1]
            k += 1
        if not src.code[m.start() : m.end()].strip().startswith("#"):
            continue  # inside a comment
        if depth == 0:
            best = m.end()
    if best is not None:
        return best
    once = textre.search(r"^[ \t]*#[ \t]*pragma[ \t]+once[^\n]*\n", src.text[:before], re.M)
    if once is not None and _depth(src, once.start()) == 0:
        return once.end()
    if guard is not None and guard[0] <= before:
        return guard[0]
    return 0


def _masks(ctx: PortContext, path: str, text: str, found: list[Finding]) -> Proposal | None:
    src = lex(text)
    eol = ctx.eol(text)
    prop = Proposal(
        id=f"full-mask:{path}",
        family="kernels",
        title=f"{path}: full-warp masks that HIP accepts (GPUPORT_FULL_MASK)",
        safe=True,
        why="nvcc sees 0xffffffffu, the value and type it saw; only the HIP build, which did "
        "not compile, changes",
        findings=[],
    )
    first = None
    for f in found:
        line = f.location.line
        if line is None or line > src.line_count:
            continue
        lo, hi = src.line_span(line)
        code_line = src.code[lo:hi]
        m = _DEFINE_MASK.match(code_line)
        if m is not None:
            s, e = lo + m.start(3), lo + m.end(3)
            prop.edit(path, s, e, MASK_MACRO, [f])
            prop.findings.append(f)
            first = s if first is None else min(first, s)
            continue
        c = _CONST_MASK.search(code_line)
        if c is not None:
            prop.edit(path, lo + c.start("type"), lo + c.end("type"), "auto", [f])
            prop.edit(path, lo + c.start("value"), lo + c.end("value"), MASK_MACRO, [f])
            prop.findings.append(f)
            first = lo if first is None else min(first, lo)
            continue
        col = (f.location.column or 1) - 1
        call = _SYNC.search(src.code, lo + col, hi + 1)
        if call is None:
            continue
        args = src.call_args(call.end() - 1)
        if not args:
            continue
        a0, a1 = args[0]
        raw = src.code[a0:a1].strip()
        if MASK32.fullmatch(raw) is None or raw == "-1":
            continue
        start = a0 + (len(src.code[a0:a1]) - len(src.code[a0:a1].lstrip()))
        prop.edit(path, start, start + len(raw), MASK_MACRO, [f])
        prop.findings.append(f)
        first = start if first is None else min(first, start)
    if first is None:
        return None
    if f"define {MASK_MACRO}" not in text:
        at = _insert_at(src, first)
        prop.edit(path, at, at, mask_block(eol))
    return prop


def _include_blocks(src: CxxSource, want: re.Pattern[str]) -> list[tuple[int, int, list[str]]]:
    """Runs of consecutive ``#include`` lines (blank lines and comments between allowed)
    whose headers all match ``want``: (start, end, header names); not those only nvcc
    compiles (``#ifdef __CUDACC__``)."""
    out: list[tuple[int, int, list[str]]] = []
    cur: tuple[int, int, list[str]] | None = None
    nvcc_only = cuda_compiler_only(src.code)
    for m in _INCLUDE.finditer(src.text):
        if src.guarded_at(m.start()) or not src.code[m.start() : m.end()].lstrip().startswith("#"):
            continue
        if nvcc_only(m.start()):
            continue
        if not want.search(m.group(1)):
            if cur is not None:
                out.append(cur)
                cur = None
            continue
        if cur is not None and not src.text[cur[1] : m.start()].strip(" \t\r\n/"):
            cur = (cur[0], m.end(), [*cur[2], m.group(1)])
            continue
        if cur is not None:
            out.append(cur)
        cur = (m.start(), m.end(), [m.group(1)])
    if cur is not None:
        out.append(cur)
    return out


def _branch(original: str, hip_lines: Iterable[str], why: str, eol: str) -> str:
    body = original if original.endswith(("\n", "\r\n")) else original + eol
    return (
        f"#if {HIP_TEST} {_MARK} {why}{eol}"
        + eol.join(hip_lines)
        + eol
        + f"#else{eol}"
        + body
        + f"#endif{eol}"
    )


#: CUB's warp-size macros, which hipCUB spells HIPCUB_WARP_THREADS (its ``namespace`` alias
#: cannot carry a macro): the HIP branch defines the ones the file uses, as the real ports
#: replace them (mamba: ``CUB_WARP_THREADS(0)`` -> ``HIPCUB_WARP_THREADS``)
_CUB_WARP_MACROS = (
    ("CUB_WARP_THREADS", textre.compile(r"(?<![\w])CUB_WARP_THREADS[ \t]*\("), "(unused)"),
    ("CUB_PTX_WARP_THREADS", textre.compile(r"(?<![\w])CUB_PTX_WARP_THREADS(?![\w])"), ""),
)


def _cub_macros(src: CxxSource) -> list[str]:
    """``#define``\\ s of the CUB warp-size macros the file's code uses, for its HIP branch.
    Without them the HIP build stops at an undeclared identifier, so defining them changes
    no build that compiled."""
    out: list[str] = []
    for name, used, params in _CUB_WARP_MACROS:
        if used.search(src.code):
            out += [f"#ifndef {name}", f"#define {name}{params} HIPCUB_WARP_THREADS", "#endif"]
    return out


def _headers(ctx: PortContext, path: str, text: str, found: list[Finding]) -> Proposal | None:
    src = lex(text)
    eol = ctx.eol(text)
    prop = Proposal(
        id=f"hip-headers:{path}",
        family="kernels",
        title=f"{path}: hipCUB and HIP headers beside the CUDA ones",
        safe=True,
        why="nvcc compiles the original includes; a HIP build gets the ROCm twins",
        findings=[],
    )
    by_line = {f.location.line: f for f in found}
    for start, end, _names in _include_blocks(src, _CUB):
        lines = range(src.line_of(start), src.line_of(max(start, end - 1)) + 1)
        hits = [by_line[ln] for ln in lines if ln in by_line]
        if not hits and not any(f.rule_id == "GP316" and "CUB" in f.message for f in found):
            continue
        hip = ["#include <hipcub/hipcub.hpp>", "namespace cub = hipcub;", *_cub_macros(src)]
        hits = hits or [f for f in found if f.rule_id == "GP316" and "CUB" in f.message][:1]
        new = _branch(text[start:end], hip, "GP316 CUB is hipCUB on ROCm", eol)
        prop.edit(path, start, end, new, hits)
        prop.findings += hits
    for start, end, _ in _include_blocks(src, textre.compile(r"^cuda_bf16\.h$")):
        line = src.line_of(start)
        hits = [f for f in found if f.location.line == line and f.rule_id == "GP319"]
        if not hits:
            continue
        new = _branch(
            text[start:end], ["#include <hip/hip_bf16.h>"], "GP319 bf16 header of HIP", eol
        )
        prop.edit(path, start, end, new, hits)
        prop.findings += hits
    return prop if prop.findings else None


_ARCH_BELOW = textre.compile(
    r"^([ \t]*#[ \t]*(?:el)?if[ \t]+)(.*__CUDA_ARCH__[ \t]*<=?[ \t]*\w+.*?)([ \t]*(?://.*|/\*.*)?)$"
)
_HIP_DEV = "defined(__HIP_DEVICE_COMPILE__)"
#: ``#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700``: code for GPUs older than a
#: capability (a fallback: ``atomicAdd`` on half before Volta), never compiled by hip-clang
_ARCH_FALLBACK = textre.compile(
    r"^([ \t]*#[ \t]*(?:el)?if[ \t]+)"
    r"(\(?[ \t]*defined[ \t]*\(?[ \t]*__CUDA_ARCH__[ \t]*\)?[ \t]*&&[ \t]*"
    r"\(?[ \t]*__CUDA_ARCH__[ \t]*<=?[ \t]*\d+[ \t]*\)?[ \t]*\)?)"
    r"([ \t]*(?://.*|/\*.*)?)$"
)


def _explicit(src: CxxSource, line: int) -> tuple[int, int, str] | None:
    """``#if __CUDA_ARCH__ < 700`` -> ``#if __CUDA_ARCH__ < 700 || defined(...)``: the branch
    hip-clang already takes (``__CUDA_ARCH__`` is 0 there), now said so."""
    lo, hi = src.line_span(line)
    m = _ARCH_BELOW.match(src.text[lo:hi])
    if m is None or "__HIP" in m.group(2) or "USE_ROCM" in m.group(2):
        return None
    expr = m.group(2).rstrip()
    wrapped = f"({expr})" if "||" in expr or "&&" in expr else expr
    return lo + m.start(2), lo + m.start(2) + len(m.group(2).rstrip()), f"{wrapped} || {_HIP_DEV}"


def _cuda_arch(ctx: PortContext, path: str, text: str, found: list[Finding]) -> list[Proposal]:
    src = lex(text)
    safe = Proposal(
        id=f"cuda-arch-explicit:{path}",
        family="kernels",
        title=f"{path}: the __CUDA_ARCH__ branches ROCm takes, said so",
        safe=True,
        why="hip-clang already takes these branches (__CUDA_ARCH__ is 0 there): the test now "
        "names the HIP device pass too; no build compiles anything else",
        findings=[],
    )
    risky = Proposal(
        id=f"cuda-arch-branch:{path}",
        family="kernels",
        title=f"{path}: device-pass branches hip-clang takes too",
        safe=False,
        why="hip-clang's device pass then compiles the branch nvcc's device pass compiles: "
        "what ROCm builds changes",
        findings=[],
    )
    fallback = Proposal(
        id=f"cuda-arch-fallback:{path}",
        family="kernels",
        title=f"{path}: the fallbacks for older NVIDIA GPUs compiled on ROCm too",
        safe=False,
        why="ROCm then compiles code nvcc compiles only for GPUs below a capability (a "
        "definition HIP may provide itself, or a slower path): what ROCm builds changes",
        findings=[],
    )
    in_function = function_scope(src.code)
    for f in sorted(found, key=lambda f: f.location.line or 0):  # in order: read on, not over
        line = f.location.line
        if line is None or line > src.line_count:
            continue
        lo, hi = src.line_span(line)
        fb = _ARCH_FALLBACK.match(src.text[lo:hi])
        if fb is not None and "never compiles this branch" in f.message:
            if in_function(lo):
                continue  # a pass-specific path (a host function's is dead code): left as is
            # both of hip-clang's passes: the host pass checks device code's calls too
            expr = fb.group(2).strip()
            new = f"({expr}) || {HIP_TEST}" if not expr.startswith("(") else f"{expr} || {HIP_TEST}"
            start = lo + fb.start(2)
            fallback.edit(path, start, start + len(fb.group(2).rstrip()), new, [f])
            fallback.findings.append(f)
            continue
        m = _ARCH_IFDEF.match(src.text[lo:hi])
        if m is not None:
            new = f"{m.group(1)}if defined(__CUDA_ARCH__) || {_HIP_DEV}"
            risky.edit(path, lo, lo + m.end(2), new, [f])
            risky.findings.append(f)
            end = _matching_endif(src, line)
            for inner in range(line + 1, end):
                got = _explicit(src, inner)
                if got is not None:
                    risky.edit(path, *got, [f])
            continue
        got = _explicit(src, line)
        if got is not None and "takes this branch" in f.message:
            safe.edit(path, *got, [f])
            safe.findings.append(f)
    return [p for p in (safe, risky, fallback) if p.findings]


def _matching_endif(src: CxxSource, line: int) -> int:
    depth = 0
    for ln in range(line, src.line_count + 1):
        code = src.code_line(ln).strip()
        if textre.match(r"#\s*if", code):
            depth += 1
        elif textre.match(r"#\s*endif", code):
            depth -= 1
            if depth == 0:
                return ln
    return src.line_count


#: the project's own ``warpSize``: a macro, or a variable, member or parameter of that name
#: (``static constexpr int warpSize = 64;``, ``int warpSize``), which shadows CUDA's builtin
_OWN_WARPSIZE = textre.compile(
    r"#[ \t]*define[ \t]+warpSize\b"
    r"|\b(?:int|unsigned|auto|size_t|u?int(?:8|16|32|64)_t|long|short)[ \t]+(?:const[ \t]+)?"
    r"warpSize[ \t]*(?:[=;,){]|$)",
    re.M,
)
_COMMENT = textre.compile(r"//[^\n]*|/\*[\s\S]*?\*/")
_WARPSIZE = textre.compile(r"\bwarpSize\b")


def _own_warpsize(ctx: PortContext) -> str | None:
    """Where the project declares its own ``warpSize`` (``path:line``), or None (once per
    run)."""
    cached = ctx.cache.get("own-warpsize")
    if isinstance(cached, str):
        return cached or None
    where = ""
    for rel in ctx.files_of("cuda/c++"):
        text = ctx.read(rel)
        if text is None or "warpSize" not in text:
            continue
        code = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
        m = _OWN_WARPSIZE.search(code)
        if m is not None:
            where = f"{rel}:{textre.line_finder(code)(m.start())}"
            break
    ctx.cache["own-warpsize"] = where
    return where or None


def _meanings(ctx: PortContext) -> dict[str, FileMeaning]:
    """The lane-meaning decisions for every CUDA/C++ file of the project, analysed together
    as ``hipify`` analyses a folder (once per run)."""
    cached = ctx.cache.get("wave64-meaning")
    if isinstance(cached, dict):
        return cached
    files: dict[str, CxxSource] = {}
    for rel in ctx.files_of("cuda/c++"):
        text = ctx.read(rel)
        if text is not None:
            files[rel] = lex(text)
    found = meaning_of(files)
    ctx.cache["wave64-meaning"] = found
    ctx.cache["wave64-lexed"] = files
    return found


def _wave64(ctx: PortContext, path: str, text: str, found: list[Finding]) -> list[Proposal]:
    meanings = _meanings(ctx)
    lexed = ctx.cache.get("wave64-lexed")
    src = lexed.get(path) if isinstance(lexed, dict) else None
    out: list[Proposal] = []
    safe_text = text
    for unsafe in (False, True):
        done = port_wave64(text, path=path, unsafe=unsafe, meaning=meanings.get(path), src=src)
        if done.text in (text, safe_text):
            continue  # no rewrite, or the unsafe run adds nothing to the safe one
        changed = {c.line for c in done.wave64}
        hits = [f for f in found if f.location.line in changed]
        if not hits:
            continue
        own = _own_warpsize(ctx)
        lines = text.splitlines()
        if own is not None and any(
            0 < ln <= len(lines) and _WARPSIZE.search(lines[ln - 1]) for ln in changed
        ):
            ctx.decline(
                found,
                f"wave64 left: the project declares its own warpSize ({own}); a rewrite of "
                "the lines naming it would tie the project's value to the compiled "
                "architecture",
            )
            return []
        marked = sum(c.unsafe for c in done.wave64)
        prop = Proposal(
            id=f"wave64:{path}" if unsafe else f"wave64-safe:{path}",
            family="kernels",
            title=f"{path}: warp-size assumptions ported (GPUPORT_WAVE_SIZE)"
            + (", with the unproven ones" if unsafe else ""),
            safe=not unsafe,
            why="also code that is right on a 64-lane wavefront as written (32-lane groups, "
            "logical tiles) is made to span the wavefront: a 32 may have been a tile size"
            if unsafe
            else "each rewrite keeps what the code computes (the lane-meaning analysis proved "
            "every use of the 32 means the hardware warp); nvcc still sees 32",
            findings=hits,
            note=f"{len(done.wave64)} site(s) rewritten"
            + (f" ({marked} marked unsafe)" if unsafe else "")
            + f", {len(done.wave64_left)} left with the reason (gpuport hipify --wave64 report)",
        )
        _line_proposal(prop, path, text, done.text, hits)
        out.append(prop)
        if not unsafe:
            safe_text = done.text
    if len(out) == 2:
        for prop in out:
            prop.group = f"wave64:{path}"
    covered = {f.location.line for prop in out for f in prop.findings}
    reasons = {left.line: left.reason for left in done.wave64_left}
    for f in found:
        if f.location.line not in covered:
            why = reasons.get(f.location.line or 0, "not a 32 the lane-meaning analysis can port")
            ctx.decline([f], f"wave64 left: {why}")
    return out


def _line_proposal(prop: Proposal, path: str, old: str, new: str, hits: list[Finding]) -> None:
    starts = [0]
    for ln in old.splitlines(keepends=True):
        starts.append(starts[-1] + len(ln))
    for start, end, edit in _line_edits(old, new):
        line = bisect.bisect_right(starts, start)
        prop.edit(path, start, end, edit, [f for f in hits if f.location.line == line])


def _line_edits(old: str, new: str) -> list[tuple[int, int, str]]:
    """The changed line runs of ``old`` -> ``new`` as span edits on ``old``."""
    import difflib

    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    starts = [0]
    for ln in a:
        starts.append(starts[-1] + len(ln))
    out: list[tuple[int, int, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        base, was, now = starts[i1], "".join(a[i1:i2]), "".join(b[j1:j2])
        if tag != "replace":
            out.append((base, base + len(was), now))
            continue
        # within a changed run, only the characters that change: another fix may edit the
        # same line elsewhere (a mask argument beside a rewritten loop bound)
        chars = difflib.SequenceMatcher(None, was, now, autojunk=False)
        for ctag, c1, c2, d1, d2 in chars.get_opcodes():
            if ctag != "equal":
                out.append((base + c1, base + c2, now[d1:d2]))
    return out


def _judged_defines(ctx: PortContext) -> dict[str, list[Finding]]:
    """``#define WARP_SIZE 32`` findings the scan lowered to info because the code around them
    is right on a 64-lane wavefront as written: what ``--unsafe-fixes`` may still port to the
    full wavefront (the scan judged them major until it could read their component)."""
    out: dict[str, list[Finding]] = {}
    for f in ctx.report.findings:
        if (
            f.rule_id == "GP303"
            and f.severity is Severity.INFO
            and f.default_severity is Severity.MAJOR
            and "is defined as 32, but a wavefront" in f.message
            and "correct on a 64-lane wavefront as written" in f.message
            and f.scope in FIXED_SCOPES
            and not unrun(f.location.path)
        ):
            out.setdefault(f.location.path, []).append(f)
    return out


def propose(ctx: PortContext) -> list[Proposal]:
    out: list[Proposal] = []
    judged = _judged_defines(ctx)
    for path in sorted(set(ctx.files_with("GP30", "GP31")) | set(judged)):
        text = ctx.read(path)
        if text is None:
            continue
        mine = ctx.of("GP3", path=path) + judged.get(path, [])
        for make, rules in (
            (_masks, ("GP302",)),
            (_headers, ("GP316", "GP319")),
            (_wave64, ("GP303", "GP304", "GP305", "GP306", "GP307")),
            (_cuda_arch, ("GP317",)),
        ):
            found = [f for f in mine if f.rule_id in rules]
            if found:
                got = make(ctx, path, text, found)
                if isinstance(got, list):
                    out.extend(got)
                elif got is not None:
                    out.append(got)
    return out
