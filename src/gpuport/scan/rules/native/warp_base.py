"""The reader of :mod:`.warp_facts`: its records, its helpers, and how it tells what an
expression is (a thread index, a lane or warp number, a count) — issue 25."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from gpuport import textre
from gpuport.intervals import Growing
from gpuport.scan.cxx import CxxSource
from gpuport.scan.rules.native.common import int_value, split_top_level
from gpuport.scan.rules.native.warp_units import Unit, warpish

__all__ = ["LOG2", "WAVE", "Facts", "Note", "ReaderBase", "Site"]

WAVE = "GPUPORT_WAVE_SIZE"
LOG2 = "GPUPORT_WAVE_LOG2"


@dataclass(frozen=True)
class Site:
    """A token to rewrite: ``[start, end)`` becomes ``new`` (an insertion when equal)."""

    start: int
    end: int
    new: str
    kind: str  # constant, lane, shuffle, array, ballot, width, mask
    detail: str


@dataclass(frozen=True)
class Note:
    """Why a unit is what it is: an offset and a sentence."""

    offset: int
    text: str


@dataclass
class Facts:
    """What one unit says about the warp (see the module docstring)."""

    sites: list[Site] = field(default_factory=list)
    anchors: list[Note] = field(default_factory=list)
    blockers: list[Note] = field(default_factory=list)
    hw: list[Note] = field(default_factory=list)
    needs: list[Note] = field(default_factory=list)
    widths: list[Site] = field(default_factory=list)
    #: ballots kept in 32 bits (their sites are in ``sites`` too)
    ballots: list[Note] = field(default_factory=list)
    #: kernels this (host) unit launches, with a note when the launch fixes 32 lanes
    launches: dict[str, list[Note]] = field(default_factory=dict)
    #: the unit names a value of 32 lanes: a lane or warp variable, or a 32 constant
    lane32: bool = False
    #: groups narrower than the CUDA warp (width-16 shuffles, 8-thread tiles): kept in every mode
    fixed_tiles: list[Note] = field(default_factory=list)
    #: what the reader cannot judge (a tile of unknown size)
    unknown: list[Note] = field(default_factory=list)
    #: an active mask kept in 32 bits and only passed as a ``*_sync`` mask (HIP >= 6.2
    #: static_asserts 64 bits there): widened on its own
    masks: list[Site] = field(default_factory=list)


# -- patterns ----------------------------------------------------------------------------------

#: the longest expression read as a definition's value (``int lane = threadIdx.x % 32;``)
_LONGEST_DEF = 2000
_THIRTY_TWO = textre.compile(
    r"(?<![\w.'])(?:32|31|0[xX]1[fF])(?:[uU]|[lL]{1,2}|[uU][lL]{1,2})?(?![\w.'])|32\.0*f?\b"
)
_SHIFT5 = textre.compile(r"(?:>>|<<)\s*5(?:[uU])?\b(?![\w.])")
_LANE_OP = textre.compile(r"(?P<op>%|&|/|>>)\s*(?P<k>32|31|0[xX]1[fF]|5)(?P<suf>[uU]?)\b(?![.\w])")
_SHFL = textre.compile(
    r"(?:(?<![\w.>])__shfl(?P<kind>_up|_down|_xor)?(?P<sync>_sync)?"
    r"|(?<=[.>])\s*shfl(?P<mkind>_up|_down|_xor)?)\s*\("
)
#: PyTorch's shuffles (``ATen/cuda/DeviceUtils.cuh``): ``WARP_SHFL(value, lane, width =
#: warpSize, mask = full)``, likewise ``_UP``/``_DOWN``/``_XOR``: no mask first, HIP's width
#: (64) when none is given. Read as shuffles only in a file that includes that header.
_ATEN_SHFL = textre.compile(r"(?<![\w.>])WARP_SHFL(?P<kind>_UP|_DOWN|_XOR)?\s*\(")
_ATEN_INCLUDE = textre.compile(r"#\s*include\s*[<\"]ATen/cuda/DeviceUtils\.cuh[>\"]")
_FOR = textre.compile(r"(?<![\w.])for\s*\(")
_DEF_EQ = textre.compile(r"(?<![\w.>:])(?P<name>[A-Za-z_]\w*)\s*=(?!=)")
_DEF_CTOR = textre.compile(
    r"\b(?:int|unsigned|long|short|auto|size_t|u?int\d*_t|index_t|uint|char)\s+"
    r"(?:const\s+)?(?P<name>[A-Za-z_]\w*)\s*\("
)
_TID_NAME = textre.compile(
    r"(?:tid|ltid|tidx|tx|thread_?id\w*|threadId\w*|local_?id|thread_?idx|thread_index"
    r"|lane_?id\w*|tid_?in\w*)",
    re.I,
)
_COUNT_NAME = textre.compile(r"(?i)nt|.*(?:thread|block|tpb|num_?threads|nthreads|kn?threads).*")
_SHARED = textre.compile(
    r"__shared__\b[^;{}()=]*?\b(?P<name>[A-Za-z_]\w*)\s*(?P<dims>(?:\[[^\[\]]*\]\s*)*)(?=[;=,)])"
)
_DIM = textre.compile(r"\[([^\[\]]*)\]")
_TILE = textre.compile(r"\b(?:tiled_partition|thread_block_tile)\s*<\s*(?P<size>[\w:]+)\s*[,>]")
_HW = textre.compile(
    r"(?<![\w.])(?:warpSize|__lane_id\s*\(|GPUPORT_WAVE_SIZE|GPUPORT_WAVE_LOG2|"
    r"__AMDGCN_WAVEFRONT_SIZE)|\b(?:hip)?cub::Warp(?:Reduce|Scan)\s*<\s*[^,<>;]+>"
)
_BALLOT = textre.compile(r"(?<![\w.])__(?:ballot(?:_sync)?|activemask)\s*\(")
_BALLOT_TARGET = textre.compile(
    r"(?P<name>[A-Za-z_]\w*)\s*=\s*(?:\(\s*[\w\s:]+\)\s*|static_cast<[\w\s:]+>\s*\(\s*)?$"
)
_WORDS_BEFORE = textre.compile(r"(?:[\w:]+[ \t\r\n]+)+$")
_BIT_FN = textre.compile(r"(?<![\w.])__(?P<fn>popc|ffs|clz)\s*\(")
_LAUNCH = textre.compile(r"(?P<k>[A-Za-z_][\w:]*)\s*(?:<[^;<>]*(?:<[^;<>]*>[^;<>]*)*>\s*)?<<<")
_GGL = textre.compile(
    r"hipLaunchKernelGGL\s*\(\s*(?:HIP_KERNEL_NAME\s*\(\s*)?(?P<k>[A-Za-z_][\w:]*)"
)
_WORD = textre.compile(r"[A-Za-z_]\w*")
_OPERAND = textre.compile(r"(?:[\w.]|->|::|\[[^\[\]]*\])+\s*$")
_CALLEE = textre.compile(r"(?:[\w.]|->|::)+$|static_cast<[^<>]*>$")
_HOST_GEOMETRY = textre.compile(r"(?i)grid|block|thread|warp|dim3|<<<|num_|lane")

_SHIFT_OR_CMP = frozenset({"<<", ">>"})
_LANE_KINDS = frozenset({"L32", "W32"})


#: The source whose lines :func:`_line_text` gave last, and those lines (one per line number)
_LINE_TEXTS: list[Any] = [None, {}]


def _line_text(src: CxxSource, offset: int) -> str:
    """The line of ``offset``, its spaces collapsed, cut to 90 characters; each line is
    made once (a 200 KB line of shuffles was split again for each of its sites: 12.7 s in
    hipify; third review)."""
    if _LINE_TEXTS[0] is not src:
        _LINE_TEXTS[:] = [src, {}]
    cache: dict[int, str] = _LINE_TEXTS[1]
    line = src.line_of(offset)
    got = cache.get(line)
    if got is None:
        got = cache[line] = " ".join(src.code_line(line).split())[:90]
    return got


_CAST = textre.compile(
    r"(?:\(\s*(?:const\s+)?(?:unsigned\s+|signed\s+)?[\w:]+\s*\)|static_cast<[^<>]+>)\s*"
)
#: sub-expressions deeper than this are ``O``: a lane expression is a few operators (a
#: ``% 32 % 32 ...`` chain of thousands was split once per operator, each split a pass over
#: the rest: eighteenth re-run, 50 KB 18 s)
_MOST_DEPTH = 32
#: and longer than this (a lane or warp expression is a line at most)
_MOST_CHARS = 2_000


def _strip(expr: str) -> str:
    """``expr`` without leading casts and the parentheses around all of it, in one pass (one
    level per pass over the rest was quadratic: 25,000 nested parentheses, 75 s)."""
    e = expr.strip()
    at = 0
    while (m := _CAST.match(e, at)) is not None and m.end() > at:
        at = m.end()
    e = e[at:]
    if not e.startswith("(") or not e.endswith(")"):
        return e
    partner: dict[int, int] = {}
    opened: list[int] = []
    for i, ch in enumerate(e):
        if ch in "([{":
            opened.append(i)
        elif ch in ")]}":
            if not opened:
                return e  # more closed than opened: nothing to take off
            partner[opened.pop()] = i
    lo, hi = 0, len(e) - 1
    while lo < hi and e[lo] == "(" and e[hi] == ")" and partner.get(lo) == hi:
        lo, hi = lo + 1, hi - 1
        while lo <= hi and e[lo].isspace():
            lo += 1
        while hi >= lo and e[hi].isspace():
            hi -= 1
    return e[lo : hi + 1]


def _top_split(expr: str, ops: tuple[str, ...]) -> tuple[str, str, str] | None:
    """The last top-level occurrence of one of ``ops`` in ``expr``: (left, op, right)."""
    depth = 0
    best: tuple[int, str] | None = None
    i = 0
    while i < len(expr):
        ch = expr[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0:
            for op in ops:
                if expr.startswith(op, i):
                    before = expr[i - 1] if i else ""
                    after = expr[i + len(op)] if i + len(op) < len(expr) else ""
                    if op == "&" and "&" in (before, after):
                        break
                    if op in (">>", "<<") and (after in "<>=" or before in "<>"):
                        break
                    if after == "=" or (op == "/" and after in "/*"):
                        break
                    best = (i, op)
                    i += len(op) - 1
                    break
        i += 1
    if best is None:
        return None
    at, op = best
    return expr[:at], op, expr[at + len(op) :]


_DECLARED = textre.compile(
    r"\b(?:int|unsigned|long|short|auto|size_t|u?int\d*_t|char|float|double|bool|index_t|uint)"
    r"\s+(?:const\s+)?[A-Za-z_]\w*\s*$"
)
_STEPPED = textre.compile(
    r"(?<![\w.])(?P<a>[A-Za-z_]\w*)[ \t]*(?:[-+*/%&|^]=|\+\+|--)"
    r"|(?:\+\+|--)[ \t]*(?P<b>[A-Za-z_]\w*)"
)
#: an expression worth classifying: a thread or lane index in it, or arithmetic a lane comes from
_KIND_HINT = textre.compile(r"threadIdx|blockDim|__lane_id|[%&/]|>>|\(\s*\)")
_IDENT_ONLY = textre.compile(r"[A-Za-z_]\w*")
_CONDITIONS = frozenset({"if", "while", "for", "switch", "return", "min", "max", "sizeof"})


class ReaderBase:
    """What the reading passes share (bookkeeping, expression kinds)."""

    def __init__(
        self,
        src: CxxSource,
        unit: Unit,
        consts: set[str],
        opaque: set[str],
        lane_fns: dict[str, str],
        shared: set[str],
        ints: dict[str, int] | None = None,
    ) -> None:
        self.src = src
        self.ints = ints or {}
        self.code = src.code
        self.u = unit
        self.a, self.b = unit.start, unit.end
        self.consts = consts
        self.opaque = opaque
        self.lane_fns = lane_fns
        self.shared = set(shared)
        self.f = Facts()
        #: the file includes PyTorch's DeviceUtils.cuh: its WARP_SHFL* calls are shuffles
        self.aten_shfl = _ATEN_INCLUDE.search(src.text) is not None and not textre.search(
            r"#\s*define\s+WARP_SHFL", src.text
        )
        self._site_keys: set[tuple[int, int]] = set()  # (start, end) of f.sites
        self.explained = Growing()
        self.kinds: dict[str, str] = {}
        self.defs: dict[str, int] = {}
        self.ballot_vars: set[str] = set()
        self.strided: set[str] = set()
        #: ``__shared__`` arrays of this unit whose size does not follow the warp width
        self.fixed_shared: set[str] = set()

    def explain(self, start: int, end: int) -> None:
        self.explained.add(start, end)

    def is_explained(self, pos: int) -> bool:
        return pos in self.explained

    def site(self, start: int, end: int, new: str, kind: str, detail: str) -> None:
        if (start, end) in self._site_keys:
            return
        self._site_keys.add((start, end))
        self.f.sites.append(Site(start, end, new, kind, detail))
        self.explain(start, max(end, start + 1))

    def block(self, pos: int, why: str) -> None:
        self.f.blockers.append(Note(pos, why))

    def kind(self, expr: str, depth: int = 0) -> str:
        """T (thread of the block), G (global thread), L32/LHW (lane), W32/WHW (warp),
        N (a thread count), C (a warp constant), or O (anything else)."""
        e = _strip(expr)
        if not e or depth > _MOST_DEPTH or len(e) > _MOST_CHARS:
            return "O"
        split = _top_split(e, ("%", "&", "/", ">>"))
        if split is not None:
            left, op, right = split
            lk, rk = self.kind(left, depth + 1), _strip(right)
            hw = rk in ("warpSize", WAVE, LOG2) or textre.fullmatch(
                r"\(?\s*(?:warpSize|GPUPORT_WAVE_SIZE)\s*-\s*1\s*\)?", rk
            )
            k32 = self._k32(op, rk)
            if (hw or k32) and lk in ("T", "G", "L32", "LHW"):
                if op in ("%", "&"):
                    return "LHW" if hw else "L32"
                if lk == "G":
                    return "G32"
                return "WHW" if hw else "W32"
            if (hw or k32) and op in ("/", ">>") and lk == "N":
                return "N32"
            return "O"
        if textre.search(r"(?<![\w.])__lane_id\s*\(", e):
            return "LHW"
        if "threadIdx" not in e:
            for ops in (("+", "-"), ("*",)):
                parts = _top_split(e, ops)
                if parts is None:
                    continue
                sides = (self.kind(parts[0], depth + 1), self.kind(parts[2], depth + 1))
                if any(k in ("T", "G", "D", "L32", "W32", "LHW", "WHW") for k in sides):
                    return "D"  # derived from a thread index: a data index, not a lane
                if all(
                    k == "N" or int_value(p) is not None
                    for k, p in zip(sides, (parts[0], parts[2]), strict=True)
                ):
                    return "N"
                return "O"
        if "threadIdx" in e:
            return "G" if "blockIdx" in e else "T"
        if textre.fullmatch(r"[A-Za-z_]\w*", e):
            if e in self.kinds:
                return self.kinds[e]
            if _TID_NAME.fullmatch(e):
                return "T"
            if _COUNT_NAME.fullmatch(e):
                return "N"
            return "O"
        if textre.fullmatch(r"blockDim\.[xyz]", e):
            return "N"
        call = textre.fullmatch(r"(?:[\w:]+::)?(?P<f>[A-Za-z_]\w*)\s*\(\s*\)", e)
        if call is not None:
            name = call.group("f")
            if name in self.lane_fns:
                return self.lane_fns[name]
            if _TID_NAME.fullmatch(name):
                return "T"
        return "O"

    def _k32(self, op: str, right: str) -> bool:
        if op in ("%", "/"):
            return int_value(right) == 32 or right in self.consts
        if op == "&":
            if int_value(right) == 31:
                return True
            m = textre.fullmatch(r"\(?\s*(?P<c>[A-Za-z_]\w*)\s*-\s*1\s*\)?", right)
            return m is not None and m.group("c") in self.consts
        return op == ">>" and int_value(right) == 5

    def definitions(self) -> None:
        code = self.code
        found: list[tuple[int, str, str]] = []
        for m in _DEF_EQ.finditer(code, self.a, self.b):
            # an expression of a definition ends within _LONGEST_DEF characters, or is none
            # (`a=a=a=...;` read each link to the same `;`, quadratic: 120 KB > 60 s in
            # hipify; thirty-fourth re-run F1)
            end = self._expr_end(m.end(), m.end() + _LONGEST_DEF)
            if end >= 0:
                found.append((m.start(), m.group("name"), code[m.end() : end]))
        for m in _DEF_CTOR.finditer(code, self.a, self.b):
            close = self.src.match_close(m.end() - 1)
            if close is None or close > self.b:
                continue
            after = code[close + 1 : close + 3].lstrip()
            if after[:1] in (";", ","):
                found.append((m.start("name"), m.group("name"), code[m.end() : close]))
        found.sort()
        for pos, name, expr in found:  # a warp constant of this function: const int WS = 32;
            if (
                int_value(expr) == 32
                and warpish(name)
                and textre.search(r"\b(?:const|constexpr)\b", code[max(self.a, pos - 60) : pos])
            ):
                lit = code.find("32", pos, self._expr_end(pos + len(name)))
                if lit != -1:
                    self.site(lit, lit + 2, WAVE, "constant", f"{name}: 32 -> {WAVE}")
                    self.consts = self.consts | {name}
                    self.f.lane32 = True
        counts: dict[str, int] = {}
        for _pos, name, _expr in found:
            counts[name] = counts.get(name, 0) + 1
        # a variable given a value more than once, or stepped (`i += stride`, `i++`), is a
        # loop or data index, not a thread index
        stepped = {m.group("a") or m.group("b") for m in _STEPPED.finditer(code, self.a, self.b)}
        found = [d for d in found if _KIND_HINT.search(d[2]) or _IDENT_ONLY.fullmatch(d[2].strip())]
        for _ in range(2):
            for pos, name, expr in found:
                k = self.kind(expr)
                if counts[name] > 1 or name in stepped:
                    k = "D" if k != "O" else k
                if k != "O" or name not in self.kinds:
                    self.kinds[name] = k
                    self.defs.setdefault(name, pos)
        self.kinds = {n: k for n, k in self.kinds.items() if k != "O"}

    def _expr_end(self, pos: int, window: int | None = None) -> int:
        """Where the expression at ``pos`` ends (a top-level ``;`` or ``,``, or the bracket
        that closes an enclosing one); -1 when it runs past ``window``."""
        depth = 0
        code = self.code
        i = pos
        stop = self.b if window is None else min(self.b, window)
        while i < stop:
            ch = code[i]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                if depth == 0:
                    return i
                depth -= 1
            elif ch in ";," and depth == 0:
                return i
            i += 1
        return self.b if stop == self.b else -1

    def _left(self, op: int) -> str:
        """The left operand of the binary operator at ``op``."""
        return left_operand(self.code, op, max(self.a, op - 300), _CALLEE)

    def _grid_statement(self, pos: int) -> bool:
        """Whether the statement at ``pos`` also names the block or grid (a warp or tile number
        across the grid, whose count the host fixes when it sizes the grid)."""
        code = self.code
        start = max(code.rfind(c, self.a, pos) for c in ";{}") + 1
        end = code.find(";", pos, self.b)
        stmt = code[max(start, self.a) : end if end != -1 else self.b]
        return textre.search(r"\b(?:blockIdx|gridDim)\b", stmt) is not None

    def index_context(self, pos: int) -> str | None:
        """Why a lane number at ``pos`` (a variable or an inline ``tid % 32``) cannot follow a
        port: it indexes memory that is not a scaling ``__shared__`` array, or it is passed to
        a function; None when it is a shared index, a shuffle argument, a condition."""
        code = self.code
        lo = max(self.a, pos - 400)
        depth = 0
        i = pos - 1
        while i >= lo:
            ch = code[i]
            if ch in ")]":
                depth += 1
            elif ch in "([":
                if depth > 0:
                    depth -= 1
                else:
                    m = textre.search(
                        r"([A-Za-z_]\w*)\s*(?:<[^<>;]*>)?\s*$", code[max(lo, i - 60) : i]
                    )
                    head = m.group(1) if m else None
                    text = _line_text(self.src, pos)
                    if ch == "[":
                        if head in self.fixed_shared:
                            return f"`{text}` indexes `{head}`, whose size does not follow the wave"
                        if head in self.shared:
                            return None
                        what = f"`{head}`" if head else "an array"
                        return f"`{text}` indexes {what} by a lane or warp number"
                    if head is None:  # a grouping parenthesis: look further out
                        i -= 1
                        continue
                    if ch == "(" and _DECLARED.search(code, max(lo, i - 80), i):
                        return None  # `unsigned warpid(tid >> 5);`: a definition
                    if head in _CONDITIONS or textre.fullmatch(r"__shfl\w*|shfl\w*", head):
                        return None
                    if self.aten_shfl and textre.fullmatch(r"WARP_SHFL\w*", head):
                        return None
                    return f"`{text}` passes a lane or warp number to `{head}`"
            elif ch in ";{}" and depth == 0:
                return None
            i -= 1
        return None

    def _body(self, close: int) -> tuple[int, int]:
        code = self.code
        i = close + 1
        while i < len(code) and code[i] in " \t\r\n":
            i += 1
        if i < len(code) and code[i] == "{":
            return i, self.src.match_close(i) or i
        end = code.find(";", i)
        return i, (len(code) if end == -1 else end)

    def _loop_spans(self) -> list[tuple[int, int]]:
        if not hasattr(self, "_loops"):
            spans: list[tuple[int, int]] = []
            for m in _FOR.finditer(self.code, self.a, self.b):
                close = self.src.match_close(m.end() - 1)
                if close is None:
                    continue
                body = self._body(close)
                spans.append((m.start(), body[1]))
            self._loops = spans
        return self._loops


def left_operand(code: str, op: int, lo: int, head: re.Pattern[str]) -> str:
    """The left operand of the binary operator at ``op``, read back to ``lo`` at most: a
    bracketed group with the call or cast ``head`` matches before it, or a plain operand."""
    k = op
    while k > lo and code[k - 1] in " \t\r\n":
        k -= 1
    if k > lo and code[k - 1] == ")":
        depth = 0
        j = k - 1
        while j >= lo:
            if code[j] == ")":
                depth += 1
            elif code[j] == "(":
                depth -= 1
                if depth == 0:
                    break
            j -= 1
        found = head.search(code, lo, max(lo, j))
        return code[(found.start() if found else j) : k]
    m = _OPERAND.search(code, lo, k)
    return m.group() if m else ""


def _split_args(cfg: str) -> list[str]:
    return split_top_level(cfg)
