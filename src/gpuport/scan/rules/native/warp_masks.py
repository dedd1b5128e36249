"""GP302, GP304 and GP307: lane masks and lane numbers that assume 32 lanes.

A 32-bit mask passed to a ``*_sync`` intrinsic (GP302), lane or warp indices
computed with ``& 31``, ``% 32``, ``>> 5`` or ``/ 32`` (GP304), and ballot
results kept in 32 bits (GP307). :func:`gpuport.scan.rules.native.warp.check_warp`
runs these passes with the other warp-size ones. A lane passed to a project helper that
shuffles is found from one pass over the file's calls (forty-second re-run F8: not once per
lane statement and helper).
"""

from __future__ import annotations

import functools
import re

from gpuport import textre
from gpuport.models import Severity
from gpuport.scan.cxx_ints import int_constants, known_ints
from gpuport.scan.project.lane_helpers import HW_LANE, called_names
from gpuport.scan.rules.native.common import (
    MASK32,
    Sink,
    is_32bit,
    iter_words,
    split_top_level,
    trailing_type,
)
from gpuport.scan.rules.native.warp_base import left_operand

# -- helpers ---------------------------------------------------------------------------------
#
# Every whole-file pattern starts with a literal so the regex engine can skip ahead in C;
# context (the name before a ``= 32``, the operand of ``& 31``) is read from a short
# window around each hit.

_MASK_HALF64 = textre.compile(r"0[xX]0*[fF]{8}(?:[uU]?[lL]{1,2}|[lL]{1,2}[uU])")
_SYNC_CALL = textre.compile(
    r"__(?P<fn>(?:shfl(?:_up|_down|_xor)?|ballot|any|all|uni|match_any|match_all|"
    r"reduce_(?:add|min|max|and|or|xor))_sync|syncwarp)\s*\("
)


def _strip(arg: str) -> str:
    arg = arg.strip()
    while arg.startswith("(") and arg.endswith(")") and arg.count("(") == 1:
        arg = arg[1:-1].strip()
    return arg


def statement_left(code: str, pos: int, limit: int = 400) -> int:
    """Offset where the statement holding ``pos`` starts (after ``;``, ``{`` or ``}``)."""
    lo = max(0, pos - limit)
    return (
        max(code.rfind(";", lo, pos), code.rfind("{", lo, pos), code.rfind("}", lo, pos), lo - 1)
        + 1
    )


# -- GP302 -----------------------------------------------------------------------------------


def check_masks(sink: Sink) -> None:
    src, code = sink.src, sink.code
    wave = sink.ctx.target.wave_size
    for m in iter_words(_SYNC_CALL, code):
        args = src.call_args(m.end() - 1)
        if not args:
            continue
        fn = "__" + m.group("fn")
        arg = _strip(code[args[0][0] : args[0][1]])
        literal = MASK32.fullmatch(arg) is not None
        named = (
            not literal
            and textre.fullmatch(r"[A-Za-z_]\w*", arg) is not None
            and (sink.declared_width(arg) == "narrow")
        )
        if literal or named:
            what = f"`{arg}` is a 32-bit " + ("mask" if literal else "integer")
            if wave == 64:
                sink.hit(
                    "GP302",
                    m.start(),
                    f"{what}: HIP's {fn} static_asserts a 64-bit mask "
                    "(ROCm 6.2+), and 32 bits name only lanes 0-31 of a 64-lane wavefront",
                )
            else:
                sink.hit(
                    "GP302",
                    m.start(),
                    f"{what}: HIP's {fn} requires a 64-bit mask up to "
                    "ROCm 7.x even on wave32 targets (relaxed by ROCm/rocm-systems#8385)",
                    severity=Severity.MAJOR,
                )
        elif wave == 64 and _MASK_HALF64.fullmatch(arg):
            sink.hit(
                "GP302",
                m.start(),
                f"`{arg}` names only lanes 0-31 of a 64-lane "
                f"wavefront; {fn} would wait for or read lanes that never join",
                severity=Severity.MAJOR,
            )


_CONST_DECL = textre.compile(
    r"\b(?:constexpr|const)\s+(?P<type>(?:[\w:]+\s+){0,3}?)(?P<name>[A-Za-z_]\w*)\s*=\s*"
    r"(?P<value>[^;,{}]{1,60}?)\s*;"
)
_MASK_NAME = textre.compile(r"mask", re.I)
_LANE_WORDS = textre.compile(r"full|final|warp|lane|shfl|all|active|sync|wave", re.I)


_SYNC_FIRST = textre.compile(r"_sync\s*\(\s*\(?\s*(\w+)")


def check_mask_constants(sink: Sink, *, device: bool) -> None:
    """GP302 on the definition of a named 32-bit lane mask (``#define FINAL_MASK 0xffffffff``,
    ``constexpr unsigned FULL_MASK = 0xffffffff;``) that no ``*_sync`` call of this file uses:
    the calls are in the files that include it, so the definition is where to fix it. Major,
    not blocker: it breaks the build only where an includer passes it to such a call.

    A name counts when it says mask and, outside device code, also says which lanes
    (full/final/warp/lane/...), so that a hash or bit-field constant is left alone."""
    code = sink.code
    found: dict[str, int] = {}
    for name, (offset, value) in sink.defines.items():
        if MASK32.fullmatch(value.strip("() ")):
            found.setdefault(name, offset)
    for m in _CONST_DECL.finditer(code):
        words = m.group("type").split()
        narrow = not words or words[-1] == "auto" or is_32bit(trailing_type(words))
        if narrow and MASK32.fullmatch(_strip(m.group("value"))):
            found.setdefault(m.group("name"), m.start("name"))
    # the names passed first to a *_sync call, read once (a pattern per name over the file
    # was quadratic: 24,000 mask defines, > 60 s; thirty-fifth re-run F4)
    passed = set(_SYNC_FIRST.findall(code)) if found and "_sync" in code else set()
    for name, offset in found.items():
        if not _MASK_NAME.search(name) or not (device or _LANE_WORDS.search(name)):
            continue
        if name in passed:
            continue  # the call sites in this file are reported themselves
        facts = sink.ctx.facts
        if facts is not None and name in facts.nv_only_masks:
            continue  # every use is in code hip-clang never compiles (thirteenth, darknet)
        if facts is not None and name in facts.data_masks:
            sink.hit(
                "GP302",
                offset,
                f"`{name}` is 0xffffffff, but no call of the project takes it as a lane mask "
                "(a bitmask of data): nothing to change for wave64",
                severity=Severity.INFO,
            )
            continue
        sink.hit(
            "GP302",
            offset,
            f"`{name}` is a 32-bit full-warp mask: passed to a *_sync intrinsic, HIP "
            "static_asserts a 64-bit mask (ROCm 6.2+), and 32 bits name only lanes 0-31 of a "
            "64-lane wavefront; define it as a 64-bit value (0xffffffffffffffffULL)",
            severity=Severity.MAJOR,  # a compile error only where an includer passes it
        )


# -- GP304 -----------------------------------------------------------------------------------

_LANE_OP = textre.compile(r"(?P<op>&|%|>>|/)\s*(?P<k>0[xX]1[fF]|31|32|5)[uU]?\b(?![.\w])")
_PAIRS = {"&": ("31", "0x1f"), "%": ("32",), ">>": ("5",), "/": ("32",)}
_LANEISH = textre.compile(
    r"threadIdx|\b(?:tid|ltid|tidx|tx|lid|lane\w*|lane_?id|thread_?id\w*|"
    r"threadId\w*|local_?id|blockDim)\b",
    re.I,
)
_TARGET_WARPISH = textre.compile(r"lane|warp|wave|^wid$|^lid$", re.I)
_OPERAND = textre.compile(r"(?:[\w.]|->|\[[^\[\]]*\])+\s*$")
_STMT_TARGET = textre.compile(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?=(?!=)[^=;{}]*$")


def _left_operand(code: str, op: int) -> str:
    return left_operand(code, op, max(0, op - 300), _OPERAND)


def _plain_operator(code: str, start: int, op: str) -> bool:
    """``&``/``%``/``>>``/``/`` as a binary operator, not ``&&``, ``&=``, ``>>=``, ``>>>``,
    ``//`` and the like."""
    before = code[start - 1] if start else ""
    after = code[start + len(op)] if start + len(op) < len(code) else ""
    if after == "=" or (op == "&" and "&" in (before, after)) or (op == ">>" and before == ">"):
        return False
    return not (op == "/" and (before in "/*" or after in "/*"))


_TILE_32 = textre.compile(r"\b(?:tiled_partition|thread_block_tile)\s*<\s*(?P<size>[\w:]+)\s*>")
_FUNCTION_START = textre.compile(r"__global__|__device__")


@functools.lru_cache(maxsize=4)
def _file_constants(code: str) -> dict[str, set[str]]:
    return int_constants(code)


def tile_size(sink: Sink, size: str) -> int | None:
    """The value of a tile size as written: a literal, or a name the file itself or (when
    every definition agrees) the project defines as an integer (``WARP_SIZE``,
    ``td_sort::warp_size``); None when unknown."""
    if size.isdigit():
        return int(size)
    name = size.rsplit("::", 1)[-1]
    local = _file_constants(sink.code).get(name)
    if local is not None:
        known = known_ints({name: local})
        return known.get(name)
    facts = sink.ctx.facts
    return facts.ints.get(name) if facts is not None else None


def in_32_tile(sink: Sink, pos: int) -> str | None:
    """The 32-thread tile (cooperative groups) the function around ``pos`` makes before
    ``pos``, as written (``tiled_partition<32>``, ``tiled_partition<WARP_SIZE>`` with
    ``WARP_SIZE`` 32); None when it makes none. Then ``tid >> 5``/``& 31`` index those
    tiles."""
    code = sink.code
    start = max(0, pos - 3000)
    heads = [h.start() for h in _FUNCTION_START.finditer(code, start, pos)]
    if not heads:
        return None
    for m in _TILE_32.finditer(code, heads[-1], pos):
        size = m.group("size")
        if tile_size(sink, size) == 32:
            return f"`tiled_partition<{size}>`" + ("" if size == "32" else f", {size} = 32")
    return None


def _lane_callees(sink: Sink) -> list[str]:
    """The project functions the file calls whose body (here or in another file: an
    included header's) uses a hardware lane (see :mod:`gpuport.scan.project.lane_helpers`)."""
    facts = sink.ctx.facts
    if facts is None or not facts.lane_functions:
        return []
    return sorted(facts.lane_functions & called_names(sink.code))


def _args_text(code: str, start: int, limit: int = 400) -> str:
    """The text of a call's arguments from just after its ``(`` to the matching ``)`` (at
    most ``limit`` characters; a definition's parameters, never its body)."""
    depth = 1
    end = min(len(code), start + limit)
    for i in range(start, end):
        ch = code[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return code[start:i]
        elif ch in ";{":
            break
    return code[start:end].split(";", 1)[0].split("{", 1)[0]


_COMPARE = textre.compile(r"[<>]=?|[!=]=|&&|\|\|")


_WORD = textre.compile(r"\w+")


def _passed_lanes(code: str, callees: list[str]) -> dict[str, str]:
    """Each name a call in ``code`` of one of ``callees`` passes as (part of) an argument ->
    the first such callee (sorted order): the F3 shape, ``read_lane(v, (lane + 1) % 32)``.
    Read once per file, one pass over its calls (a pattern per lane statement and callee
    over the whole file was N x M x L: 800 lanes x 200 helpers in 44 KB, > 20 s;
    forty-second re-run F8)."""
    wanted = set(callees)
    seen: dict[str, int] = {}
    out: dict[str, str] = {}
    for m in _CALL_NAME.finditer(code):
        callee = m.group(1)
        if callee not in wanted:
            continue
        n = seen.get(callee, 0)
        if n >= 64:
            continue
        seen[callee] = n + 1
        for arg in split_top_level(_args_text(code, m.end())):
            # the lane itself (``(lane + 1) % 32``), not a predicate on it (icicle's
            # ``sampleNTT5(..., lane < 30)``: whether the thread takes part)
            if _COMPARE.search(arg) is not None:
                continue
            for word in _WORD.findall(arg):
                if word not in out or callee < out[word]:
                    out[word] = callee
    return out


_CALL_NAME = textre.compile(r"\b([A-Za-z_]\w*)\s*\(")


def check_lane_math(sink: Sink) -> None:
    code = sink.code
    # no warp-level operation anywhere in the file: `lane = threadIdx.x % 32` can only number
    # logical 32-thread groups addressed through memory, which a 64-lane wavefront runs as two
    # such groups in lockstep (icicle's SHA-3 kernels, twenty-third sample); a call of a
    # project function whose definition (an included header's) shuffles or ballots counts
    # as a hardware-lane use (fortyfirst re-run F3: `read_lane(v, (lane + 1) % 32)`)
    hw_lanes: bool | None = None
    callees: list[str] = []  # helpers elsewhere that shuffle, when this file shows no shuffle
    passes: dict[str, str] | None = None  # lane name -> the helper a call passes it to
    for m in _LANE_OP.finditer(code):
        op, k = m.group("op"), m.group("k").lower()
        if k not in _PAIRS[op] or not _plain_operator(code, m.start(), op):
            continue
        operand = _left_operand(code, m.start())
        target = _STMT_TARGET.search(code, statement_left(code, m.start()), m.start())
        lane_operand = _LANEISH.search(operand) is not None
        lane_target = target is not None and _TARGET_WARPISH.search(target.group(1)) is not None
        if lane_operand or lane_target:
            expr = f"{operand.strip()} {op} {m.group('k')}"
            tile = in_32_tile(sink, m.start())
            if tile is not None:
                sink.hit(
                    "GP304",
                    m.start(),
                    f"`{expr}` numbers the 32-thread tiles this function makes itself "
                    f"({tile}), which HIP gives on a 64-lane wavefront too: "
                    "consistent, though not the fastest split on AMD",
                    guarded=True,  # lowered to info, like code the ROCm build handles
                )
                continue
            if hw_lanes is None:
                hw_lanes = HW_LANE.search(code) is not None
                if not hw_lanes:
                    callees = _lane_callees(sink)
                    hw_lanes = bool(callees)
            returned = code[statement_left(code, m.start()) : m.start()].lstrip()
            if not hw_lanes and not returned.startswith("return"):  # a returned lane escapes
                sink.hit(
                    "GP304",
                    m.start(),
                    f"`{expr}` numbers logical 32-thread groups: no shuffle, vote, ballot or "
                    "warp collective in this file uses a hardware lane, and a 64-lane "
                    "wavefront runs two such groups in lockstep",
                    guarded=True,
                )
                continue
            passed = None
            if callees:
                if passes is None:
                    passes = _passed_lanes(code, callees)
                var = target.group(1) if target else ""
                passed = passes.get(var) if var.isidentifier() else None
            if callees and passed is None:
                # the lane goes to no helper that shuffles: a logical group's number (the
                # file calls such a helper for something else: icicle, DeepEP, ggml)
                sink.hit(
                    "GP304",
                    m.start(),
                    f"`{expr}` numbers logical 32-thread groups: this file passes it to no "
                    "shuffle, vote or ballot, so a 64-lane wavefront runs two such groups "
                    "in lockstep",
                    guarded=True,
                )
                continue
            if passed is not None:
                # the lane-meaning analysis judges this file alone, where no shuffle shows:
                # the helper's shuffle is in another file, so its judgement is not asked
                plain = getattr(sink, "_sink", sink)
                plain.hit(
                    "GP304",
                    m.start(),
                    f"`{expr}` assumes 32 lanes per warp; a wavefront on this target has 64 "
                    f"(this file calls `{passed}`, a project function that shuffles, "
                    "votes or otherwise reads hardware lanes)",
                )
                continue
            sink.hit(
                "GP304",
                m.start(),
                f"`{expr}` assumes 32 lanes per warp; a wavefront on this target has 64",
            )


# -- GP307 -----------------------------------------------------------------------------------

_BALLOT_CALL = textre.compile(r"__(?:ballot(?:_sync)?|activemask)\s*\(")
_BALLOT_TARGET = textre.compile(
    r"(?P<name>[A-Za-z_]\w*)\s*=\s*(?:\(\s*[\w\s:]+\)\s*|"
    r"static_cast<[\w\s:]+>\s*\(\s*)?$"
)
_WORDS = textre.compile(r"(?:[\w:]+[ \t\r\n]+)+$")
_BIT_COUNT = textre.compile(
    r"__(?P<fn>popc|ffs|clz|brev)\s*\(\s*(?P<arg>__ballot(?:_sync)?|"
    r"__activemask|[A-Za-z_]\w*)\b"
)
_LANE_BIT = textre.compile(r"<<\s*\(?\s*(?P<var>[A-Za-z_][\w.]*)")
_ONE_BEFORE = textre.compile(
    r"(?<![\w.])(?P<one>1[uU]?|0[xX]0*1[uU]?|-1|~0[uU]?|0[xX][fF]{8}[uU]?)"
    r"\s*$"
)


def check_ballots(sink: Sink) -> None:
    code = sink.code
    holders: set[str] = set()
    for m in iter_words(_BALLOT_CALL, code):
        target = _BALLOT_TARGET.search(code, max(0, m.start() - 120), m.start())
        if target is None or sink.src.dead_at(m.start()):
            continue
        name = target.group("name")
        holders.add(name)
        words = _WORDS.search(code, max(0, target.start() - 120), target.start())
        typ = trailing_type(words.group().split()) if words else []
        narrow = is_32bit(typ) if typ else sink.declared_width(name) == "narrow"
        if narrow:
            fn = code[m.start() : m.end() - 1].strip()
            sink.hit(
                "GP307",
                target.start("name"),
                f"`{name}` keeps the 64-bit result of {fn} in 32 bits: lanes 32-63 are lost",
            )
    for m in iter_words(_BIT_COUNT, code):
        arg = m.group("arg")
        if arg in holders or arg.startswith(("__ballot", "__activemask")):
            fn = "__" + m.group("fn")
            sink.hit("GP307", m.start(), f"{fn} counts 32 bits of a 64-bit lane mask; use {fn}ll")
    for m in _LANE_BIT.finditer(code):
        if not _LANEISH.search(m.group("var")) or code.startswith("<<<", m.start()):
            continue
        one = _ONE_BEFORE.search(code, max(0, m.start() - 20), m.start())
        if one is not None and not sink.host_only_at(m.start()):
            sink.hit(
                "GP307",
                one.start(),
                f"`{one.group('one')} << {m.group('var')}` is a "
                "32-bit lane bit; lanes 32-63 overflow it (use 1ull)",
            )
