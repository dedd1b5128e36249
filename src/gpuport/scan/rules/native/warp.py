"""GP302-GP308: code that assumes a 32-lane warp, and ``warpSize`` used as a constant.

CDNA GPUs (gfx90a, gfx942, gfx950) run 64-lane wavefronts and cannot switch to
32; RDNA runs 32. A hard-coded 32 in lane math, shuffle widths, masks or
ballot types builds fine and gives wrong results or hangs on CDNA, so those
rules apply to wave64 targets only. The 32-bit mask and the ``warpSize``
constexpr rules are compile errors and apply everywhere.

The rule table is in :mod:`gpuport.scan.rules.native.warp_rules` and the mask
and lane-number passes (GP302, GP304, GP307) in
:mod:`gpuport.scan.rules.native.warp_masks`; this module registers the rules,
holds the passes about the warp width as a number (GP303, GP305, GP306, GP308)
and :func:`check_warp`, which runs them all.

GP303-GP308 read a 32 as a warp width, which only holds in CUDA or HIP code:
they run on ``.cu``/``.cuh`` files, files in a ``cuda``/``hip`` folder, and
files that mention ``__global__``, ``__device__``, ``threadIdx``, ``__shfl``,
``cuda_runtime``, ``hip_runtime`` (or another CUDA keyword, a CUTLASS device
macro or a CUB/CUTLASS include; :func:`device_code`). Metal shaders (a
``/mps/`` folder, ``[[thread_index_in_simdgroup]]``, ``<metal_stdlib>``) never
are, and SYCL or OpenCL code without those CUDA markers is skipped too (its
sub-groups are not CUDA warps).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from gpuport import textre
from gpuport.intervals import in_any
from gpuport.scan.rules.base import register
from gpuport.scan.rules.native.common import Sink, int_value, iter_words, word_start
from gpuport.scan.rules.native.warp_masks import (
    check_ballots,
    check_lane_math,
    check_mask_constants,
    check_masks,
    in_32_tile,
    statement_left,
)
from gpuport.scan.rules.native.warp_rules import WARP_RULES
from gpuport.scan.rules.native.warp_shadow import shadowed_spans
from gpuport.scan.rules.native.warp_units import warpish

register(*WARP_RULES)

_CUDA_SUFFIXES = (".cu", ".cuh")
_CUDA_MARKERS = textre.compile(
    r"__(?:global|device|host|launch_bounds)__|__(?:shfl|syncthreads|syncwarp|ballot|activemask)"
    r"|threadIdx|blockIdx|blockDim|warpSize|cuda_runtime|hip_runtime"
    r"|CUTLASS_(?:HOST_)?DEVICE|<(?:cutlass|cute|cub|hipcub)/"
)
_CUDA_DIRS = frozenset({"cuda", "hip"})
_METAL_MARKERS = textre.compile(
    r"\[\[\s*(?:thread|threads|simdgroup|threadgroup|quadgroup|simdgroups|dispatch)_\w*\s*\]\]"
    r"|<metal_stdlib>|\bmetal::"
)

# Sub-groups of other SIMT models, whose widths are not CUDA warps (Metal, SYCL, OpenCL).
_OTHER_SIMT = textre.compile(
    _METAL_MARKERS.pattern + r"|\bsycl::|<sycl/|<CL/|\bcl::|__kernel\b|\bsub_group"
)


def device_code(rel: str, code: str) -> bool:
    """Whether a file is CUDA or HIP device code, where a literal 32 can be a warp width:
    a ``.cu``/``.cuh`` file or one with CUDA/HIP markers, never a Metal one."""
    lower = "/" + rel.lower()
    if lower.endswith(".metal") or "/mps/" in lower or _METAL_MARKERS.search(code):
        return False
    if lower.endswith(_CUDA_SUFFIXES) or _CUDA_DIRS & set(lower.split("/")[:-1]):
        return True
    return _CUDA_MARKERS.search(code) is not None


# -- helpers ---------------------------------------------------------------------------------
#
# Every whole-file pattern starts with a literal so the regex engine can skip ahead in C;
# context (the name before a ``= 32``, the operand of ``& 31``) is read from a short
# window around each hit.


def _warpish(name: str) -> bool:
    """A name that holds the warp width (see :func:`.warp_units.warpish`)."""
    return warpish(name)


# -- GP303 -----------------------------------------------------------------------------------

_THIRTY_TWO = textre.compile(r"32[uU]?\b")
_ASSIGN_LEFT = textre.compile(r"([A-Za-z_]\w*)\s*(?:=|\{)\s*\(?\s*$")
_ASSIGN_RIGHT = textre.compile(r"\s*\)?\s*[;,})>]")
_CMP_LEFT = textre.compile(r"([A-Za-z_]\w*)\s*[!=]=\s*$")
_CMP_RIGHT = textre.compile(r"\s*[!=]=\s*([A-Za-z_]\w*)")


_NAMED_WARP = textre.compile(r"warp|wave", re.I)


def _check_constants(sink: Sink, *, device: bool = True) -> None:
    """GP303. Outside device code (a plain header with no CUDA marker of its own, included by
    ``.cu`` files) only definitions whose name says warp or wave count (``WARP_SIZE``,
    ``kWarpSize``): there a bare ``lanes = 32`` is more likely a SIMD width."""
    code = sink.code

    def named(name: str) -> bool:
        return _warpish(name) and (device or _NAMED_WARP.search(name) is not None)

    facts = sink.ctx.facts
    for name, (offset, value) in sink.defines.items():
        if named(name) and value.strip("() uU") == "32":
            tiles = facts.tile_defines.get((sink.ctx.rel, name)) if facts else None
            unused = facts.unused_defines.get((sink.ctx.rel, name)) if facts else None
            if unused is not None:
                sink.hit(
                    "GP303",
                    offset,
                    f"`{name}` is defined as 32, but {unused}: it decides nothing",
                    guarded=True,
                )
                continue
            if tiles is not None:
                sink.hit(
                    "GP303",
                    offset,
                    f"`{name}` is defined as 32 as the size of 32-thread tiles, which HIP "
                    f"gives on a 64-lane wavefront too ({tiles})",
                    guarded=True,
                )
                continue
            sink.hit(
                "GP303",
                offset,
                f"`{name}` is defined as 32, but a wavefront on this target has 64 lanes",
            )
    for m in _THIRTY_TWO.finditer(code):
        start, end = m.start(), m.end()
        if start and (code[start - 1].isalnum() or code[start - 1] in "_.'"):
            continue
        lo = max(0, start - 80)
        left = _ASSIGN_LEFT.search(code, lo, start)
        if left and named(left.group(1)) and _ASSIGN_RIGHT.match(code, end):
            sink.hit(
                "GP303",
                left.start(1),
                f"`{left.group(1)}` is set to 32, but a wavefront on this target has 64 lanes",
            )
            continue
        if not device:
            continue
        cmp_left = _CMP_LEFT.search(code, lo, start)
        cmp_right = _CMP_RIGHT.match(code, end)
        other = (cmp_left.group(1) if cmp_left else None) or (
            cmp_right.group(1) if cmp_right else None
        )
        if other and (other == "warpSize" or _warpish(other)):
            if _both_paths(code, start, end):
                continue  # `warpSize == 32 ? a : b`, `if (...) {...} else {...}`: both handled
            where = cmp_left.start(1) if cmp_left else start
            sink.hit(
                "GP303",
                where,
                f"`{other}` is compared with 32: on a 64-lane wavefront "
                "this branch is never (or always) taken",
            )


_WINDOW = 4000
_OPENERS, _CLOSERS = "([{", ")]}"


def _both_paths(code: str, start: int, end: int) -> bool:
    """Whether the warp-width test at ``start:end`` picks between two written paths: the
    condition of a ternary, or of an ``if`` that has an ``else``. Such code already runs on
    a 64-lane wavefront (it takes the other path); an ``assert``, a ``static_assert``, a bare
    ``if`` or a returned bool assumes 32 lanes."""
    depth = 0
    for i in range(end, min(len(code), end + _WINDOW)):  # a ternary: `?` before the end
        ch = code[i]
        if ch in _OPENERS:
            depth += 1
        elif ch in _CLOSERS:
            depth -= 1
            if depth < 0:
                break
        elif depth == 0 and ch == "?":
            return True
        elif depth == 0 and ch in ";,{":
            return False
    depth = 0
    for i in range(start - 1, max(-1, start - _WINDOW), -1):  # the `if (` around the test
        ch = code[i]
        if ch in _CLOSERS:
            depth += 1
        elif ch in _OPENERS:
            if depth == 0:
                return ch == "(" and _if_has_else(code, i)
            depth -= 1
        elif ch in ";}" and depth == 0:
            return False
    return False


_IF_BEFORE = textre.compile(r"\bif\s*(?:constexpr\s*)?$")


def _if_has_else(code: str, paren: int) -> bool:
    if not _IF_BEFORE.search(code, max(0, paren - 30), paren):
        return False
    close = _matching(code, paren)
    if close < 0:
        return False
    body = close + 1
    while body < len(code) and code[body].isspace():
        body += 1
    if body < len(code) and code[body] == "{":
        after = _matching(code, body)
    else:
        after = code.find(";", body)
    if after < 0:
        return False
    return textre.match(r"\s*else\b", code[after + 1 : after + 40]) is not None


def _matching(code: str, open_at: int) -> int:
    """The offset of the bracket closing the one at ``open_at`` (-1 if not in the window):
    brackets of any kind counted alike, from a table of the whole file made once (a scan of
    up to 16,000 characters per test was 18 s for a 0.96 MB kernel of 32-lane tests)."""
    close = _closers(code).get(open_at, -1)
    return close if 0 <= close < open_at + _WINDOW * 4 else -1


@functools.lru_cache(maxsize=2)
def _closers(code: str) -> dict[int, int]:
    """Offset of each opening bracket -> offset of its closing one (any kind counts)."""
    out: dict[int, int] = {}
    stack: list[int] = []
    for m in _BRACKET.finditer(code):
        if m.group() in _OPENERS:
            stack.append(m.start())
        elif stack:
            out[stack.pop()] = m.start()
    return out


_BRACKET = textre.compile(r"[()\[\]{}]")


# -- GP305 -----------------------------------------------------------------------------------

_FOR = textre.compile(r"for\s*\(")
_SHFL_ANY = textre.compile(r"__shfl\w*|shfl\w*\s*\(|__reduce_\w+_sync")
#: a warp-wide shuffle (not a cooperative-groups tile's ``g.shfl_down``)
_RAW_SHFL = textre.compile(r"__shfl|__reduce_\w+_sync|(?<![\w.>])shfl\w*\s*\(")
_SHFL_CALL = textre.compile(r"__shfl(?P<kind>_up|_down|_xor)?(?P<sync>_sync)?\s*\(")
_DECL_PREFIX = textre.compile(r"^(?:[\w:]+\s+)*(?P<var>[A-Za-z_]\w*)\s*=\s*(?P<init>.+)$", re.S)


def _halving(var: str, update: str) -> bool:
    u = update.replace(" ", "")
    return u in (f"{var}>>=1", f"{var}/=2", f"{var}={var}>>1", f"{var}={var}/2", f"{var}>>=1u")


def _doubling(var: str, update: str) -> bool:
    u = update.replace(" ", "")
    return u in (f"{var}<<=1", f"{var}*=2", f"{var}={var}<<1", f"{var}={var}*2")


def _loop_body(sink: Sink, close: int) -> tuple[int, int]:
    code = sink.code
    start = close + 1
    while start < len(code) and code[start] in " \t\r\n":
        start += 1
    if start < len(code) and code[start] == "{":
        return start, sink.src.match_close(start) or start
    end = code.find(";", start)
    return start, end if end != -1 else start


def _check_shuffles(sink: Sink) -> None:
    src, code = sink.src, sink.code
    if "shfl" not in code and "__reduce_" not in code:
        return
    for m in iter_words(_FOR, code):
        close = src.match_close(m.end() - 1, limit=2000)
        if close is None:
            continue
        parts = code[m.end() : close].split(";")
        if len(parts) != 3:
            continue
        decl = _DECL_PREFIX.match(parts[0].strip())
        if decl is None:
            continue
        var, init = decl.group("var"), int_value(decl.group("init"))
        cond = parts[1].replace(" ", "")
        down = init == 16 and _halving(var, parts[2].strip())
        up = init == 1 and _doubling(var, parts[2].strip()) and cond in (f"{var}<32", f"{var}<=16")
        if not (down or up):
            continue
        body_start, body_end = _loop_body(sink, close)
        if _SHFL_ANY.search(code, body_start, max(body_start, body_end)):
            what = "starts at offset 16" if down else "stops below 32"
            body = code[body_start : max(body_start, body_end)]
            tile = in_32_tile(sink, m.start())
            if tile is not None and not _RAW_SHFL.search(body):
                sink.hit(  # `g.shfl_down(v, i)` on a 32-thread tile: the tile is 32 wide
                    "GP305",
                    m.start(),
                    f"this shuffle loop {what}, over the 32-thread tiles this function makes "
                    f"({tile}), which HIP gives on a 64-lane wavefront too: consistent",
                    guarded=True,
                )
                continue
            sink.hit(
                "GP305",
                m.start(),
                f"this shuffle loop {what}: it combines 32 lanes, so "
                "the two halves of a 64-lane wavefront are never reduced together",
            )
    for m in iter_words(_SHFL_CALL, code):
        args = src.call_args(m.end() - 1)
        if m.group("sync"):
            args = args[1:]
        notes = []
        if len(args) >= 3 and int_value(code[args[2][0] : args[2][1]]) == 32:
            notes.append("width 32 splits the 64-lane wavefront into two halves")
        if (
            m.group("kind") in ("_xor", "_down")
            and len(args) >= 2
            and int_value(code[args[1][0] : args[1][1]]) == 16
        ):
            notes.append("a reduction that starts at offset 16 never combines lanes 32-63")
        if notes:
            text = "; ".join(notes)
            sink.hit("GP305", m.start(), text[0].upper() + text[1:])


# -- GP306 -----------------------------------------------------------------------------------

_SHARED_DECL = textre.compile(
    r"__shared__\b[^;{}()=]*?\b(?P<name>[A-Za-z_]\w*)\s*"
    r"(?P<dims>(?:\[[^\[\]]*\]\s*)+)"
)
_DIM = textre.compile(r"\[([^\[\]]*)\]")


def _check_shared(sink: Sink) -> None:
    for m in iter_words(_SHARED_DECL, sink.code):
        dims = [int_value(d) for d in _DIM.findall(m.group("dims"))]
        if 32 not in dims:
            continue
        name = m.group("name")
        if len(dims) == 1 or textre.search(r"warp|lane|wave", name, re.I):
            sink.hit(
                "GP306",
                m.start(),
                f"`__shared__ {name}[32]` holds one entry per lane or "
                "warp of a 32-lane warp; a 64-lane wavefront needs 64",
            )


# -- GP308 -----------------------------------------------------------------------------------

_WS = textre.compile(r"warpSize\b")
_KEYWORDS = frozenset(
    {
        "return",
        "case",
        "else",
        "do",
        "throw",
        "delete",
        "new",
        "sizeof",
        "goto",
        "co_return",
        "co_yield",
        "typedef",
    }
)
_DECLARATOR = textre.compile(
    r"(?P<type>[A-Za-z_][\w:]*(?:<[^<>;]*>)?)\s*[*&]*\s+[*&]*(?P<name>[A-Za-z_]\w*)\s*"
    r"(?:\[[^\[\];]*\]\s*)*\[[^\[\];]*$"
)
_TEMPLATE_OPEN = textre.compile(r"[A-Za-z_][\w:]*<[^<>;{}()]*$")
_TEMPLATE_CLOSE = textre.compile(r"[^<>;{}()]*>")
_CONST_CONTEXT = textre.compile(
    r"\bconstexpr\b[^;{}]*?=(?P<eq>)|\bcase\b(?P<case>)|\btemplate\s*(?P<angle><)"
    r"|\b(?:static_assert|__launch_bounds__|if\s+constexpr)\s*(?P<paren>\()"
)


def _open_context(code: str, stmt: int, pos: int) -> bool:
    """Whether ``pos`` sits where C++ needs a constant: a constexpr initialiser, a case
    label, or still inside the brackets of ``template <``, ``static_assert(``,
    ``__launch_bounds__(`` or ``if constexpr (``."""
    for m in _CONST_CONTEXT.finditer(code, stmt, pos):
        if m.group("eq") is not None or m.group("case") is not None:
            return True
        opener = "<" if m.group("angle") is not None else "("
        closer = ">" if opener == "<" else ")"
        between = code[m.end() - 1 : pos]
        if between.count(opener) > between.count(closer):
            return True
    return False


def warpsize_constexpr(code: str) -> Iterator[tuple[int, int, str]]:
    """``warpSize`` where C++ needs a constant (GP308): (offset of the report, offset of
    ``warpSize``, message). An array size, a template argument, a constexpr initialiser, a
    case label, ``static_assert``, ``__launch_bounds__``, ``if constexpr``. Not where a
    declaration of the project's own (``template <int warpSize>``) hides the builtin."""
    shadowed: list[tuple[int, int]] | None = None
    for m in iter_words(_WS, code):
        start = m.start()
        if shadowed is None:
            shadowed = shadowed_spans(code)
        if in_any(shadowed, start):  # every span per use was quadratic
            continue
        stmt = statement_left(code, start)
        bracket = code.rfind("[", stmt, start)
        if bracket != -1 and "]" not in code[bracket:start]:
            decl = _DECLARATOR.search(code, stmt, start)
            if decl and decl.group("type") not in _KEYWORDS and word_start(code, decl.start()):
                yield (
                    decl.start("name"),
                    start,
                    f"array `{decl.group('name')}` is sized "
                    "by warpSize, which is not a compile-time constant on ROCm 7+",
                )
                continue
        if _TEMPLATE_OPEN.search(code, max(stmt, start - 200), start) and _TEMPLATE_CLOSE.match(
            code, m.end()
        ):
            yield (
                start,
                start,
                "warpSize as a template argument does not compile on "
                "ROCm 7+ (it is no longer constexpr)",
            )
            continue
        if _open_context(code, stmt, start):
            yield (
                start,
                start,
                "warpSize used where a constant expression is required; "
                "it is not constexpr on ROCm 7+",
            )


def _check_warpsize_constexpr(sink: Sink) -> None:
    for at, _ws, message in warpsize_constexpr(sink.code):
        sink.hit("GP308", at, message)


def check_warp(sink: Sink) -> None:
    """Run the GP302-GP308 passes that are enabled; GP303-GP308 only on device code."""
    device = device_code(sink.ctx.rel, sink.code)
    if sink.wants("GP302"):
        check_masks(sink)
        check_mask_constants(sink, device=device)
    if not device:
        if sink.wants("GP303") and not _OTHER_SIMT.search(sink.code):
            _check_constants(sink, device=False)
        return
    if sink.wants("GP303", "GP304", "GP305", "GP306"):
        from gpuport.scan.rules.native.warp_judge import JudgedSink

        judged: Sink = JudgedSink(sink)  # type: ignore[assignment]
        if sink.wants("GP303"):
            _check_constants(judged)
        if sink.wants("GP304"):
            check_lane_math(judged)
        if sink.wants("GP305"):
            _check_shuffles(judged)
        if sink.wants("GP306"):
            _check_shared(judged)
        if sink.wants("GP305"):
            judged.report_widths()  # type: ignore[attr-defined]
    if sink.wants("GP307"):
        check_ballots(sink)
    if sink.wants("GP308"):
        _check_warpsize_constexpr(sink)
