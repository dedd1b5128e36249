"""GP302-GP308: code that assumes a 32-lane warp, and ``warpSize`` used as a constant.

CDNA GPUs (gfx90a, gfx942, gfx950) run 64-lane wavefronts and cannot switch to
32; RDNA runs 32. A hard-coded 32 in lane math, shuffle widths, masks or
ballot types builds fine and gives wrong results or hangs on CDNA, so those
rules apply to wave64 targets only. The 32-bit mask and the ``warpSize``
constexpr rules are compile errors and apply everywhere.
"""

from __future__ import annotations

import re

from gpuport.models import Severity
from gpuport.scan.rules.base import Family, Rule, register, wave64
from gpuport.scan.rules.native_common import (
    HIP_LANG_EXT,
    MASK32,
    Sink,
    int_value,
    is_32bit,
    iter_words,
    trailing_type,
    word_start,
)

HECBENCH = (
    "https://github.com/ORNL/HeCBench/issues/167",
    "https://github.com/ORNL/HeCBench/issues/171",
)
WAVE64_NOTE = "CDNA targets (wave64: gfx90a, gfx942, gfx950); RDNA runs 32-lane waves"

register(
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
            "Even widened, 0xffffffff names only lanes 0-31 of a 64-lane wavefront."
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
        applies_note="all targets (a compile error everywhere before ROCm/rocm-systems#8385; "
        "wrong lanes on wave64)",
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
            "lane number and the warp count is doubled, so per-warp results collide."
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
            "lanes; on a 64-lane wavefront the two halves are never added together. A width "
            "argument of 32 splits the wavefront into two independent halves."
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

# -- helpers ---------------------------------------------------------------------------------
#
# Every whole-file pattern starts with a literal so the regex engine can skip ahead in C;
# context (the name before a ``= 32``, the operand of ``& 31``) is read from a short
# window around each hit.

_MASK_HALF64 = re.compile(r"0[xX]0*[fF]{8}(?:[uU]?[lL]{1,2}|[lL]{1,2}[uU])")
_SYNC_CALL = re.compile(
    r"__(?P<fn>(?:shfl(?:_up|_down|_xor)?|ballot|any|all|uni|match_any|match_all|"
    r"reduce_(?:add|min|max|and|or|xor))_sync|syncwarp)\s*\("
)


def _strip(arg: str) -> str:
    arg = arg.strip()
    while arg.startswith("(") and arg.endswith(")") and arg.count("(") == 1:
        arg = arg[1:-1].strip()
    return arg


def _warpish(name: str) -> bool:
    """A name that holds the warp width (not a count of warps or a bit width)."""
    n = name.lower().replace("_", "")
    keys = (
        "warpsize",
        "warpsz",
        "warpwidth",
        "threadsperwarp",
        "lanesperwarp",
        "wavesize",
        "wavefrontsize",
        "warplanes",
        "numlanes",
        "lanecount",
        "warplen",
        "warpthreads",
    )
    return any(k in n for k in keys) or n in ("ws", "kws", "lanes", "kwarp", "warp", "wsize")


def _statement_left(code: str, pos: int, limit: int = 400) -> int:
    """Offset where the statement holding ``pos`` starts (after ``;``, ``{`` or ``}``)."""
    lo = max(0, pos - limit)
    return (
        max(code.rfind(";", lo, pos), code.rfind("{", lo, pos), code.rfind("}", lo, pos), lo - 1)
        + 1
    )


# -- GP302 -----------------------------------------------------------------------------------


def _check_masks(sink: Sink) -> None:
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
            and re.fullmatch(r"[A-Za-z_]\w*", arg) is not None
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


# -- GP303 -----------------------------------------------------------------------------------

_THIRTY_TWO = re.compile(r"32[uU]?\b")
_ASSIGN_LEFT = re.compile(r"([A-Za-z_]\w*)\s*(?:=|\{)\s*\(?\s*$")
_ASSIGN_RIGHT = re.compile(r"\s*\)?\s*[;,})>]")
_CMP_LEFT = re.compile(r"([A-Za-z_]\w*)\s*[!=]=\s*$")
_CMP_RIGHT = re.compile(r"\s*[!=]=\s*([A-Za-z_]\w*)")


def _check_constants(sink: Sink) -> None:
    code = sink.code
    for name, (offset, value) in sink.defines.items():
        if _warpish(name) and value.strip("() uU") == "32":
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
        if left and _warpish(left.group(1)) and _ASSIGN_RIGHT.match(code, end):
            sink.hit(
                "GP303",
                left.start(1),
                f"`{left.group(1)}` is set to 32, but a wavefront on this target has 64 lanes",
            )
            continue
        cmp_left = _CMP_LEFT.search(code, lo, start)
        cmp_right = _CMP_RIGHT.match(code, end)
        other = (cmp_left.group(1) if cmp_left else None) or (
            cmp_right.group(1) if cmp_right else None
        )
        if other and (other == "warpSize" or _warpish(other)):
            where = cmp_left.start(1) if cmp_left else start
            sink.hit(
                "GP303",
                where,
                f"`{other}` is compared with 32: on a 64-lane wavefront "
                "this branch is never (or always) taken",
            )


# -- GP304 -----------------------------------------------------------------------------------

_LANE_OP = re.compile(r"(?P<op>&|%|>>|/)\s*(?P<k>0[xX]1[fF]|31|32|5)[uU]?\b(?![.\w])")
_PAIRS = {"&": ("31", "0x1f"), "%": ("32",), ">>": ("5",), "/": ("32",)}
_LANEISH = re.compile(
    r"threadIdx|\b(?:tid|ltid|tidx|tx|lid|lane\w*|lane_?id|thread_?id\w*|"
    r"threadId\w*|local_?id|blockDim)\b",
    re.I,
)
_TARGET_WARPISH = re.compile(r"lane|warp|wave|^wid$|^lid$", re.I)
_OPERAND = re.compile(r"(?:[\w.]|->|\[[^\[\]]*\])+\s*$")
_STMT_TARGET = re.compile(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?=(?!=)[^=;{}]*$")


def _left_operand(code: str, op: int) -> str:
    window_start = max(0, op - 300)
    k = op
    while k > window_start and code[k - 1] in " \t":
        k -= 1
    if k > window_start and code[k - 1] == ")":
        depth = 0
        j = k - 1
        while j >= window_start:
            if code[j] == ")":
                depth += 1
            elif code[j] == "(":
                depth -= 1
                if depth == 0:
                    break
            j -= 1
        head = _OPERAND.search(code, window_start, max(window_start, j))
        return code[(head.start() if head else j) : k]
    m = _OPERAND.search(code, window_start, k)
    return m.group() if m else ""


def _plain_operator(code: str, start: int, op: str) -> bool:
    """``&``/``%``/``>>``/``/`` as a binary operator, not ``&&``, ``&=``, ``>>=``, ``>>>``,
    ``//`` and the like."""
    before = code[start - 1] if start else ""
    after = code[start + len(op)] if start + len(op) < len(code) else ""
    if after == "=" or (op == "&" and "&" in (before, after)) or (op == ">>" and before == ">"):
        return False
    return not (op == "/" and (before in "/*" or after in "/*"))


def _check_lane_math(sink: Sink) -> None:
    code = sink.code
    for m in _LANE_OP.finditer(code):
        op, k = m.group("op"), m.group("k").lower()
        if k not in _PAIRS[op] or not _plain_operator(code, m.start(), op):
            continue
        operand = _left_operand(code, m.start())
        target = _STMT_TARGET.search(code, _statement_left(code, m.start()), m.start())
        lane_operand = _LANEISH.search(operand) is not None
        lane_target = target is not None and _TARGET_WARPISH.search(target.group(1)) is not None
        if lane_operand or lane_target:
            expr = f"{operand.strip()} {op} {m.group('k')}"
            sink.hit(
                "GP304",
                m.start(),
                f"`{expr}` assumes 32 lanes per warp; a wavefront on this target has 64",
            )


# -- GP305 -----------------------------------------------------------------------------------

_FOR = re.compile(r"for\s*\(")
_SHFL_ANY = re.compile(r"__shfl\w*|shfl\w*\s*\(|__reduce_\w+_sync")
_SHFL_CALL = re.compile(r"__shfl(?P<kind>_up|_down|_xor)?(?P<sync>_sync)?\s*\(")
_DECL_PREFIX = re.compile(r"^(?:[\w:]+\s+)*(?P<var>[A-Za-z_]\w*)\s*=\s*(?P<init>.+)$", re.S)


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

_SHARED_DECL = re.compile(
    r"__shared__\b[^;{}()=]*?\b(?P<name>[A-Za-z_]\w*)\s*"
    r"(?P<dims>(?:\[[^\[\]]*\]\s*)+)"
)
_DIM = re.compile(r"\[([^\[\]]*)\]")


def _check_shared(sink: Sink) -> None:
    for m in iter_words(_SHARED_DECL, sink.code):
        dims = [int_value(d) for d in _DIM.findall(m.group("dims"))]
        if 32 not in dims:
            continue
        name = m.group("name")
        if len(dims) == 1 or re.search(r"warp|lane|wave", name, re.I):
            sink.hit(
                "GP306",
                m.start(),
                f"`__shared__ {name}[32]` holds one entry per lane or "
                "warp of a 32-lane warp; a 64-lane wavefront needs 64",
            )


# -- GP307 -----------------------------------------------------------------------------------

_BALLOT_CALL = re.compile(r"__(?:ballot(?:_sync)?|activemask)\s*\(")
_BALLOT_TARGET = re.compile(
    r"(?P<name>[A-Za-z_]\w*)\s*=\s*(?:\(\s*[\w\s:]+\)\s*|"
    r"static_cast<[\w\s:]+>\s*\(\s*)?$"
)
_WORDS = re.compile(r"(?:[\w:]+[ \t\r\n]+)+$")
_BIT_COUNT = re.compile(
    r"__(?P<fn>popc|ffs|clz|brev)\s*\(\s*(?P<arg>__ballot(?:_sync)?|"
    r"__activemask|[A-Za-z_]\w*)\b"
)
_LANE_BIT = re.compile(r"<<\s*\(?\s*(?P<var>[A-Za-z_][\w.]*)")
_ONE_BEFORE = re.compile(
    r"(?<![\w.])(?P<one>1[uU]?|0[xX]0*1[uU]?|-1|~0[uU]?|0[xX][fF]{8}[uU]?)"
    r"\s*$"
)


def _check_ballots(sink: Sink) -> None:
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
        if one is not None:
            sink.hit(
                "GP307",
                one.start(),
                f"`{one.group('one')} << {m.group('var')}` is a "
                "32-bit lane bit; lanes 32-63 overflow it (use 1ull)",
            )


# -- GP308 -----------------------------------------------------------------------------------

_WS = re.compile(r"warpSize\b")
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
_DECLARATOR = re.compile(
    r"(?P<type>[A-Za-z_][\w:]*(?:<[^<>;]*>)?)\s*[*&]*\s+[*&]*(?P<name>[A-Za-z_]\w*)\s*"
    r"(?:\[[^\[\];]*\]\s*)*\[[^\[\];]*$"
)
_TEMPLATE_OPEN = re.compile(r"[A-Za-z_][\w:]*<[^<>;{}()]*$")
_TEMPLATE_CLOSE = re.compile(r"[^<>;{}()]*>")
_CONST_CONTEXT = re.compile(
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


def _check_warpsize_constexpr(sink: Sink) -> None:
    code = sink.code
    for m in iter_words(_WS, code):
        start = m.start()
        stmt = _statement_left(code, start)
        bracket = code.rfind("[", stmt, start)
        if bracket != -1 and "]" not in code[bracket:start]:
            decl = _DECLARATOR.search(code, stmt, start)
            if decl and decl.group("type") not in _KEYWORDS and word_start(code, decl.start()):
                sink.hit(
                    "GP308",
                    decl.start("name"),
                    f"array `{decl.group('name')}` is sized "
                    "by warpSize, which is not a compile-time constant on ROCm 7+",
                )
                continue
        if _TEMPLATE_OPEN.search(code, max(stmt, start - 200), start) and _TEMPLATE_CLOSE.match(
            code, m.end()
        ):
            sink.hit(
                "GP308",
                start,
                "warpSize as a template argument does not compile on "
                "ROCm 7+ (it is no longer constexpr)",
            )
            continue
        if _open_context(code, stmt, start):
            sink.hit(
                "GP308",
                start,
                "warpSize used where a constant expression is required; "
                "it is not constexpr on ROCm 7+",
            )


def check_warp(sink: Sink) -> None:
    """Run the GP302-GP308 passes that are enabled."""
    if sink.wants("GP302"):
        _check_masks(sink)
    if sink.wants("GP303"):
        _check_constants(sink)
    if sink.wants("GP304"):
        _check_lane_math(sink)
    if sink.wants("GP305"):
        _check_shuffles(sink)
    if sink.wants("GP306"):
        _check_shared(sink)
    if sink.wants("GP307"):
        _check_ballots(sink)
    if sink.wants("GP308"):
        _check_warpsize_constexpr(sink)
