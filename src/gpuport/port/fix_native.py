"""Kernels and their headers: single-source fixes that nvcc and hipcc both compile.

* **Full-warp masks** (GP302, safe): :mod:`gpuport.port.fix_masks` (64-bit on HIP, the same
  value for nvcc; not where the call may run with only some of a wavefront's lanes).
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
  compiles on ROCm changes. Not where the branch uses ``__CUDA_ARCH__``'s value, itself or
  through a project macro that expands to it, defined anywhere, in an included ``.def`` file
  too (forty-third, forty-fourth re-run F18).
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
from gpuport.port.cxx_lines import closed_tail, edge_runs_on, spliced_before
from gpuport.port.cxx_scope import cuda_compiler_only, function_scope
from gpuport.port.fix_masks import (
    HIP_TEST,
    MASK_MACRO,
    c_family_sources,
    lexed_sources,
    propose_masks,
)
from gpuport.scan.cxx import CxxSource, lex
from gpuport.scan.finding import Finding
from gpuport.scan.rules.native.warp_meaning import FileMeaning

__all__ = ["HIP_TEST", "MASK_MACRO", "propose"]

_MARK = "// gpuport:"
_INCLUDE = textre.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"][^\n]*\n?", re.M)
_CUB = textre.compile(r"^cub/")
_ARCH_IFDEF = textre.compile(
    r"^([ \t]*#[ \t]*)(ifdef[ \t]+__CUDA_ARCH__"
    r"|if[ \t]+defined[ \t]*\(?[ \t]*__CUDA_ARCH__[ \t]*\)?)"
    r"([ \t]*(?://.*|/\*.*)?)$"
)


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


#: why an include block is left (39th re-run F12)
_RUNS_ON = (
    "the include lines at {where} run on from or onto another line (a backslash at a line's "
    "end, or a comment or quote left open): the #if/#endif gpuport would put around them "
    "would not be read as directives, so they are left"
)


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
        if edge_runs_on(text, start, end):
            ctx.decline(hits, _RUNS_ON.format(where=f"{path}:{src.line_of(start)}"))
            continue
        new = _branch(text[start:end], hip, "GP316 CUB is hipCUB on ROCm", eol)
        prop.edit(path, start, end, new, hits)
        prop.findings += hits
    for start, end, _ in _include_blocks(src, textre.compile(r"^cuda_bf16\.h$")):
        line = src.line_of(start)
        hits = [f for f in found if f.location.line == line and f.rule_id == "GP319"]
        if not hits:
            continue
        if edge_runs_on(text, start, end):
            ctx.decline(hits, _RUNS_ON.format(where=f"{path}:{line}"))
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


#: a branch that refuses older GPUs (``static_assert(!tracing, "needs compute capability >=
#: 60")``, ``#error``, a trap) rather than providing a path for them: every AMD GPU would fail it
_REFUSES = textre.compile(r"\bstatic_assert\b|#[ \t]*error\b|\b__trap[ \t]*\(|\bassert[ \t]*\(")


_PART_TEST = (
    "the __CUDA_ARCH__ test at {where} holds a comment, goes on past one or runs onto another "
    "line: gpuport cannot be sure what it would extend is the whole test (nvcc's branch could "
    "change), so it is left"
)


def _whole_test(text: str, lo: int, m: re.Match[str]) -> bool:
    """Whether group 2 of ``m`` (a directive line's match at ``lo``) is the directive's whole
    test: no comment inside it, only comments that end on the line after it, and neither
    this line nor the one before spliced by a backslash. ``A /* c */ && B`` extended after
    ``A`` was ``A || H /* c */ && B``, a change of nvcc's branch (thirty-ninth re-run F13)."""
    return (
        "/*" not in m.group(2)
        and "//" not in m.group(2)
        and "\\" not in m.group(2)
        and closed_tail(m.group(3))
        and not spliced_before(text, lo)
    )


def _explicit(src: CxxSource, line: int) -> tuple[int, int, str] | None:
    """``#if __CUDA_ARCH__ < 700`` -> ``#if __CUDA_ARCH__ < 700 || defined(...)``: the branch
    hip-clang already takes (``__CUDA_ARCH__`` is 0 there), now said so."""
    lo, hi = src.line_span(line)
    m = _ARCH_BELOW.match(src.text[lo:hi])
    if m is None or "__HIP" in m.group(2) or "USE_ROCM" in m.group(2):
        return None
    if not _whole_test(src.text, lo, m):
        return None  # a comment inside the test or a line that runs on: left (F13)
    expr = m.group(2).rstrip()
    wrapped = f"({expr})" if any(op in expr for op in ("||", "&&", "?", ",")) else expr
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
        if any(
            (a := p.match(src.text[lo:hi])) is not None and not _whole_test(src.text, lo, a)
            for p in (_ARCH_FALLBACK, _ARCH_IFDEF, _ARCH_BELOW)
        ):  # the test goes on past a comment or onto another line (F13)
            ctx.decline([f], _PART_TEST.format(where=f"{path}:{line}"))
            continue
        fb = _ARCH_FALLBACK.match(src.text[lo:hi])
        if fb is not None and "never compiles this branch" in f.message:
            if in_function(lo):
                continue  # a pass-specific path (a host function's is dead code): left as is
            body = src.code[hi : src.line_span(_matching_endif(src, line))[0]]
            if _REFUSES.search(body):
                continue  # a check that old GPUs cannot run it, no fallback (J44's nbody.cu)
            # both of hip-clang's passes: the host pass checks device code's calls too
            expr = fb.group(2).strip()
            new = f"({expr}) || {HIP_TEST}" if not expr.startswith("(") else f"{expr} || {HIP_TEST}"
            start = lo + fb.start(2)
            fallback.edit(path, start, start + len(fb.group(2).rstrip()), new, [f])
            fallback.findings.append(f)
            continue
        m = _ARCH_IFDEF.match(src.text[lo:hi])
        if m is not None:
            end = _matching_endif(src, line)
            if (used := _arch_value_use(src, line, end, _arch_aliases(ctx))) is not None:
                ctx.decline([f], _ARCH_VALUE.format(where=f"{path}:{line}", use=used))
                continue
            new = f"{m.group(1)}if defined(__CUDA_ARCH__) || {_HIP_DEV}"
            risky.edit(path, lo, lo + m.end(2), new, [f])
            risky.findings.append(f)
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


_ARCH_VALUE = (
    "the __CUDA_ARCH__ branch at {where} uses __CUDA_ARCH__'s value itself ({use}), which "
    "hip-clang never defines: taking that branch on the HIP device pass would make it an "
    "undefined name (mcx's `#define __CUDA_ARCH_LIST__ __CUDA_ARCH__`, J46); left to a person"
)
_TEST_LINE = textre.compile(r"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|else|endif)\b")


def _arch_value_use(src: CxxSource, line: int, end: int, aliases: frozenset[str]) -> str | None:
    """The first line inside the conditional ``line``..``end`` (as ``line N: text``) that uses
    ``__CUDA_ARCH__`` or a macro of the project that expands to it (``aliases``) other than in
    a test (a ``#define`` to it, code printing it), or None. Tests inside are extended by the
    fix itself."""
    for ln in range(line + 1, end):
        code = src.code_line(ln)
        if _TEST_LINE.match(code) is not None:
            continue
        if any(w in aliases for w in _IDENT.findall(code)):
            return f"line {ln}: {code.strip()[:60]}"
    return None


_DEFINE = textre.compile(
    r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)((?:[^\n\\]|\\\r?\n|\\[^\n])*)", re.M
)
_IDENT = textre.compile(r"\b[A-Za-z_]\w*\b")


def _arch_aliases(ctx: PortContext) -> frozenset[str]:
    """``__CUDA_ARCH__`` and every macro of the project's C-family files (and the files they
    include under any suffix, ``arch.def``: forty-fourth re-run F18) whose body expands to
    it, directly or through another (``#define ARCH_NOW __CUDA_ARCH__``, defined anywhere: a
    use inside the branch reads the value as much as ``__CUDA_ARCH__`` itself; forty-third
    re-run F18), once per run."""
    cached = ctx.cache.get("cuda-arch-aliases")
    if isinstance(cached, frozenset):
        return cached
    users: dict[str, set[str]] = {}  # a name -> the macros whose body names it
    for src in c_family_sources(ctx).values():
        if "define" not in src.code:
            continue
        for m in _DEFINE.finditer(src.code):
            for word in set(_IDENT.findall(m.group(2))):
                users.setdefault(word, set()).add(m.group(1))
    found = {"__CUDA_ARCH__"}
    todo = ["__CUDA_ARCH__"]
    while todo:
        for name in users.get(todo.pop(), ()):
            if name not in found:
                found.add(name)
                todo.append(name)
    out = frozenset(found)
    ctx.cache["cuda-arch-aliases"] = out
    return out


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
    files = lexed_sources(ctx)
    found = meaning_of(files)
    ctx.cache["wave64-meaning"] = found
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


def _folded(ctx: PortContext, path: str, mine: list[Finding]) -> list[Finding]:
    """Width/offset findings the scan folded into a GP302 mask finding of the same shuffle
    (one construct, counted once, :func:`gpuport.scan.engine.one_per_construct`): the mask
    fix leaves the call's other 32-lane assumptions as they were, so the wave64 pass takes
    them in the same run -- otherwise a second run, with the mask fixed and the finding no
    longer folded, would propose the width (not idempotent: AutoAWQ_kernels, F2)."""
    masked = {
        f.location.line for f in mine if f.rule_id == "GP302" and f.severity is not Severity.INFO
    }
    return [
        f
        for f in ctx.report.findings
        if f.location.path == path
        and f.location.line in masked
        and f.rule_id in _FOLDED_INTO_MASK
        and f.severity is Severity.INFO
        and f.default_severity is not None
        and f.default_severity is not Severity.INFO
        and f.scope in FIXED_SCOPES
    ]


#: The rules of a shuffle's other sides the wave64 pass can fix (the 32s of its width,
#: offset and lane arithmetic).
_FOLDED_INTO_MASK = frozenset({"GP304", "GP305", "GP307"})


def propose(ctx: PortContext) -> list[Proposal]:
    out: list[Proposal] = []
    judged = _judged_defines(ctx)
    for path in sorted(set(ctx.files_with("GP30", "GP31")) | set(judged)):
        text = ctx.read(path)
        if text is None:
            continue
        mine = ctx.of("GP3", path=path) + judged.get(path, [])
        mine += _folded(ctx, path, mine)
        for make, rules in (
            (propose_masks, ("GP302",)),
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
