"""``hipify --wave64 fix``: port the 32-lane warp assumptions whose meaning is clear (issue 18).

CDNA GPUs (gfx90a, gfx942, gfx950: all ``__GFX9__``) run 64-lane wavefronts; RDNA runs 32 and
NVIDIA 32. Each rewrite refers to one macro, defined once per file by the block below (the
``#ifndef`` lets headers and sources that all carry it agree), so the output stays single-source:
nvcc and wave32 targets see 32, GFX8/GFX9 device code sees 64::

    #ifndef GPUPORT_WAVE_SIZE
    #if defined(__GFX8__) || defined(__GFX9__)
    #define GPUPORT_WAVE_SIZE 64
    ...

What is rewritten (each line changed gets a ``// gpuport: wave64 ...`` comment and a
:class:`WaveChange` in the report):

* ``constant``: ``#define WARP_SIZE 32``, ``const int WS = 32``, ``constexpr int kWarpSize = 32``
  (a warp-size name, see :func:`gpuport.scan.rules.native.warp._warpish`) -> ``GPUPORT_WAVE_SIZE``;
* ``mask``: a full-warp mask constant (``#define FULL_MASK 0xffffffff``, ``const unsigned m =
  0xffffffff`` used as a ``*_sync`` mask) -> 64 bits, when the target HIP keeps the masks (>= 6.2);
* ``ballot``: a ballot kept in a 32-bit variable (``int b = __ballot_sync(...)``) -> ``unsigned
  long long``; ``__popc``/``__ffs``/``__clz`` of it -> the ``ll`` forms; ``1 << lane`` next to it
  -> ``1ull << lane``;
* ``shuffle``: a shuffle loop (``__shfl*`` or a tile's ``.shfl*``) from offset 16 down (``for
  (int o = 16; o > 0; o /= 2)``) or up to 32 -> ``GPUPORT_WAVE_SIZE / 2`` / ``GPUPORT_WAVE_SIZE``,
  and an explicit shuffle width of 32 (the whole CUDA warp) in it -> ``GPUPORT_WAVE_SIZE``;
* ``tile``: a cooperative-groups tile of a whole warp (``tiled_partition<32>``,
  ``thread_block_tile<32>``) -> ``GPUPORT_WAVE_SIZE``;
* ``array``: a one-dimensional ``__shared__ T a[32]`` -> ``a[GPUPORT_WAVE_SIZE]``;
* ``lane``: lane and warp numbers from a thread index (``threadIdx.x & 31``, ``% 32``, ``>> 5``,
  ``/ 32``; ``blockDim.x / 32``) -> the same operator with the wave size; ``lane == 31`` (the
  last lane) -> ``GPUPORT_WAVE_SIZE - 1``.

What is ambiguous is left as it is and listed (:class:`WaveLeft`): a warp-size constant whose
line speaks of bits or words (a 32 that is also a word width), a lane number used as a bit
position (``1 << (threadIdx.x & 31)``), a shuffle with an explicit width of 32 (a sub-warp
reduction below 32), a ballot kept in a variable declared elsewhere. The scan's GP3xx findings still
report every site, fixed or not.

Host code sees 32: the macro depends on the device architecture being compiled, so a host-side
computation from the constant (a grid size) keeps the 32-lane value; that over-provisions threads
on CDNA, which bounds-checked kernels tolerate. Running :func:`plan` on its own output changes
nothing (the macro name is not a site).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from gpuport import textre
from gpuport.scan.cxx import CxxSource
from gpuport.scan.rules.native.common import int_value, is_32bit, trailing_type
from gpuport.scan.rules.native.warp import _warpish, device_code

__all__ = [
    "MACRO",
    "MARK",
    "WAVE64_MODES",
    "WaveChange",
    "WaveLeft",
    "WaveMode",
    "WavePlan",
    "macro_block",
    "plan",
]

WaveMode = Literal["fix", "report"]
WAVE64_MODES: tuple[WaveMode, ...] = ("fix", "report")
MACRO = "GPUPORT_WAVE_SIZE"
LOG2 = "GPUPORT_WAVE_LOG2"
MARK = "gpuport: wave64"
FULL_MASK_64 = "0xffffffffffffffffull"


def macro_block(eol: str = "\n") -> str:
    """The per-architecture definition every rewrite refers to."""
    lines = [
        f"#ifndef {MACRO} // {MARK}: lanes per wavefront of the architecture being compiled",
        "#if defined(__GFX8__) || defined(__GFX9__)",
        f"#define {MACRO} 64",
        f"#define {LOG2} 6",
        "#else",
        f"#define {MACRO} 32",
        f"#define {LOG2} 5",
        "#endif",
        "#endif",
    ]
    return eol.join(lines) + eol


class WaveChange(NamedTuple):
    """One rewrite: 1-based line of the input, the kind (see the module docstring), what."""

    line: int
    kind: str
    detail: str


class WaveLeft(NamedTuple):
    """A 32-lane site left as it is, and why."""

    line: int
    kind: str
    reason: str


@dataclass
class WavePlan:
    """Span edits on the input text, what they change, and what was left."""

    edits: list[tuple[int, int, str]] = field(default_factory=list)
    changes: list[WaveChange] = field(default_factory=list)
    left: list[WaveLeft] = field(default_factory=list)
    needs_macro: bool = False


_OWN = frozenset({MACRO, LOG2})
_BITS_WORDS = textre.compile(r"\b(?:bits?|words?|ints?|bitmask|bitset)\b", re.I)
_DEFINE32 = textre.compile(
    r"^[ \t]*\#[ \t]*define[ \t]+(?P<name>\w+)[ \t]+\(?(?P<v>32)[uU]?\)?[ \t]*$"
)
_CONST32 = textre.compile(
    r"\b(?P<name>[A-Za-z_]\w*)\s*(?:=|\{)\s*\(?\s*(?P<v>32)[uU]?\s*\)?\s*\}?\s*[;,)]"
)
_CONST_TYPES = textre.compile(
    r"(?:\b(?:static|const|constexpr|inline|__device__|__constant__|__host__)\s+)+"
    r"(?:unsigned\s+|signed\s+)?(?:int|uint32_t|int32_t|size_t|unsigned|short|long|auto)\s*$"
)
_MASK_DEFINE = textre.compile(
    r"^[ \t]*\#[ \t]*define[ \t]+(?P<name>\w+)[ \t]+\(?(?P<v>0[xX][fF]{8}[uU]?)\)?[ \t]*$"
)
_MASK_CONST = textre.compile(
    r"(?P<type>(?:unsigned(?:\s+int)?|uint32_t|int))\s+(?P<name>[A-Za-z_]\w*)\s*=\s*"
    r"(?P<v>0[xX][fF]{8}[uU]?)\s*;"
)
_SYNC_FIRST = r"__(?:shfl(?:_up|_down|_xor)?|ballot|any|all|match_any|match_all)_sync\s*\(\s*"
_BALLOT_DECL = textre.compile(
    r"(?P<type>(?:(?:const|unsigned|signed|int|uint32_t|int32_t|long)\s+)*"
    r"(?:unsigned|int|uint32_t|int32_t))\s+(?P<name>[A-Za-z_]\w*)\s*=\s*"
    r"(?P<call>__ballot(?:_sync)?|__activemask)\s*\("
)
_BALLOT_ASSIGN = textre.compile(
    r"\b(?P<name>[A-Za-z_]\w*)\s*=\s*(?:__ballot(?:_sync)?|__activemask)\s*\("
)
_BITFN = textre.compile(r"\b__(?P<fn>popc|ffs|clz)\s*\(\s*(?P<arg>[A-Za-z_]\w*)\b")
_ONE_SHIFT = textre.compile(r"(?<![\w.])(?P<one>1[uU]?|-1|~0[uU]?)(?=\s*<<)")
_FOR16 = textre.compile(
    r"\bfor\s*\(\s*(?:(?:const\s+)?(?:unsigned\s+|signed\s+)?(?:int|unsigned|uint32_t|auto)\s+)?"
    r"(?P<var>[A-Za-z_]\w*)\s*=\s*(?P<init>16[uU]?|[^;]{1,40}?)\s*;(?P<cond>[^;]*);(?P<step>[^)]*)\)"
)
_SHFL_CALL = textre.compile(
    r"(?:\b__shfl(?:_up|_down|_xor)?(?P<sync>_sync)?|(?<=[.>])\s*shfl(?:_up|_down|_xor)?)\s*\("
)
_TILE32 = textre.compile(r"\b(?:tiled_partition|thread_block_tile)\s*<\s*(?P<v>32)[uU]?\s*[,>]")
_LANE_CMP = textre.compile(
    r"\b(?P<var>[A-Za-z_]\w*)(?:\s*\+[^;(){}]{1,30}\))?\s*(?P<op>==|!=|<=|>=|<|>)\s*"
    r"(?P<k>31|32)[uU]?\b(?![.\w])"
)
_SRC_LANE = textre.compile(r"\b__shfl(?:_sync)?\s*\(")
_UNROLLED = textre.compile(r"\b__shfl_(?:xor|down)(?:_sync)?\s*\(")
_SHARED32 = textre.compile(
    r"__shared__\b[^;{}()=]*?\b(?P<name>[A-Za-z_]\w*)\s*\[\s*(?P<v>32)[uU]?\s*\]\s*(?=[;=,])"
)
_LANE_OP = textre.compile(r"(?P<op>&|%|>>|/)\s*(?P<k>0[xX]1[fF]|31|32|5)[uU]?\b(?![.\w])")
_THREAD_INDEX = textre.compile(
    r"^\(?\s*(?:threadIdx\.[xyz]|(?:tid|ltid|tidx|tx|thread_?id\w*|threadId\w*|local_?id)"
    r"|blockDim\.[xyz]|(?:\w*block\w*|\w*BLOCK\w*|\w*threads\w*|\w*THREADS\w*|TPB))\s*\)?$"
)
_OPERAND = textre.compile(r"(?:[\w.]|->)+\s*$")
_TARGET = textre.compile(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?=(?!=)[^=;{}]*$")
_LANE_TARGET = textre.compile(r"lane|warp|wave|^wid$|^lid$", re.I)


def _stmt_start(code: str, pos: int) -> int:
    lo = max(0, pos - 400)
    return (
        max(code.rfind(";", lo, pos), code.rfind("{", lo, pos), code.rfind("}", lo, pos), lo - 1)
        + 1
    )


def _stmt_end(code: str, pos: int) -> int:
    end = code.find(";", pos)
    return len(code) if end == -1 else end


def _block_end(src: CxxSource, pos: int) -> int:
    """End of the innermost ``{...}`` block holding ``pos`` (or of the file)."""
    code = src.code
    depth = 0
    i = pos
    while i < len(code):
        c = code[i]
        if c == "{":
            depth += 1
        elif c == "}":
            if depth == 0:
                return i
            depth -= 1
        i += 1
    return len(code)


class _Planner:
    def __init__(self, src: CxxSource, keep_masks: bool) -> None:
        self.src = src
        self.code = src.code
        self.keep_masks = keep_masks
        self.out = WavePlan()
        self.taken: list[tuple[int, int]] = []
        self.marks: dict[int, list[str]] = {}

    def edit(self, start: int, end: int, new: str, kind: str, detail: str) -> bool:
        if any(s < end and start < e for s, e in self.taken) or self.src.dead_at(start):
            return False
        self.taken.append((start, end))
        self.out.edits.append((start, end, new))
        line = self.src.line_of(start)
        self.out.changes.append(WaveChange(line, kind, detail))
        kinds = self.marks.setdefault(line, [])
        if kind not in kinds:
            kinds.append(kind)
        if MACRO in new or LOG2 in new:
            self.out.needs_macro = True
        return True

    def leave(self, pos: int, kind: str, reason: str) -> None:
        if not self.src.dead_at(pos):
            self.out.left.append(WaveLeft(self.src.line_of(pos), kind, reason))

    # -- constants -----------------------------------------------------------------------
    def constants(self) -> None:
        src, code = self.src, self.code
        for line in range(1, src.line_count + 1):
            text = src.code_line(line)
            m = _DEFINE32.match(text)
            if m is None or not _warpish(m.group("name")) or m.group("name") in _OWN:
                continue
            start, _ = src.line_span(line)
            self._constant(m.group("name"), start + m.start("v"), start + m.end("v"), line)
        for m in _CONST32.finditer(code):
            name = m.group("name")
            if not _warpish(name) or name in _OWN:
                continue
            if not _CONST_TYPES.search(code, max(0, m.start() - 80), m.start()):
                continue
            self._constant(name, m.start("v"), m.end("v"), src.line_of(m.start()))

    def _constant(self, name: str, start: int, end: int, line: int) -> None:
        lo, hi = self.src.line_span(line)
        comment = self.src.text[lo:hi]
        if _BITS_WORDS.search(comment[len(self.src.code_line(line).rstrip()) :] or ""):
            self.leave(start, "constant", f"`{name}` = 32 is described as a bit or word width")
            return
        if textre.search(r"<<\s*\(?[^;]*%\s*" + re.escape(name) + r"\b", self.code):
            self.leave(
                start, "constant", f"`{name}` is also used as a bit position (`<< x % {name}`)"
            )
            return
        end_num = end
        while end_num < len(self.code) and self.code[end_num] in "uU":
            end_num += 1
        self.edit(start, end_num, MACRO, "constant", f"{name}: 32 -> {MACRO}")

    # -- masks -----------------------------------------------------------------------------
    def masks(self) -> None:
        """Named full masks, where the target HIP keeps the masks (below 6.2 they are dropped
        at the calls and the constant is no longer used)."""
        if not self.keep_masks:
            return
        src, code = self.src, self.code
        for line in range(1, src.line_count + 1):
            m = _MASK_DEFINE.match(src.code_line(line))
            if m is None or not textre.search(
                _SYNC_FIRST + re.escape(m.group("name")) + r"\b", code
            ):
                continue
            start, _ = src.line_span(line)
            self.edit(
                start + m.start("v"),
                start + m.end("v"),
                FULL_MASK_64,
                "mask",
                f"{m.group('name')}: 32-bit full mask -> 64 bits",
            )
        for m in _MASK_CONST.finditer(code):
            name = m.group("name")
            if not textre.search(_SYNC_FIRST + re.escape(name) + r"\b", code):
                continue
            if self.edit(
                m.start("type"), m.end("type"), "unsigned long long", "mask", f"{name}: 64-bit mask"
            ):
                self.taken.append((m.start("v"), m.end("v")))
                self.out.edits.append((m.start("v"), m.end("v"), FULL_MASK_64))

    # -- ballots ---------------------------------------------------------------------------
    def ballots(self) -> None:
        code = self.code
        declared: set[int] = set()
        for m in _BALLOT_DECL.finditer(code):
            words = m.group("type").split()
            if not is_32bit(trailing_type(words)):
                continue
            name = m.group("name")
            declared.add(m.start("name"))
            const = "const " if "const" in words else ""
            if not self.edit(
                m.start("type"),
                m.end("type"),
                const + "unsigned long long",
                "ballot",
                f"{name}: ballot kept in 64 bits",
            ):
                continue
            self._ballot_uses(name, m.end(), _block_end(self.src, m.end()))
        for m in _BALLOT_ASSIGN.finditer(code):
            if m.start("name") in declared or m.group("name") in ("return",):
                continue
            name = m.group("name")
            self.leave(
                m.start(), "ballot", f"`{name}` holds a ballot; declared elsewhere, not widened"
            )
        for m in textre.finditer(
            r"\b__(?P<fn>popc|ffs|clz)\s*\(\s*(?=__ballot|__activemask)", code
        ):
            fn = m.group("fn")
            at = m.start() + 2
            self.edit(at, at + len(fn), fn + "ll", "ballot", f"__{fn} of a ballot -> __{fn}ll")

    def _ballot_uses(self, name: str, start: int, end: int) -> None:
        code = self.code
        word = textre.compile(r"\b" + re.escape(name) + r"\b")
        for m in _BITFN.finditer(code, start, end):
            if m.group("arg") != name:
                continue
            fn = m.group("fn")
            at = m.start() + 2
            self.edit(at, at + len(fn), fn + "ll", "ballot", f"__{fn}({name}) -> __{fn}ll")
        pos = start
        while True:
            w = word.search(code, pos, end)
            if w is None:
                break
            s, e = _stmt_start(code, w.start()), _stmt_end(code, w.end())
            for one in _ONE_SHIFT.finditer(code, s, e):
                lit = one.group("one")
                new = {"1": "1ull", "1u": "1ull", "1U": "1ull", "-1": "~0ull"}.get(lit, "~0ull")
                self.edit(one.start(), one.end(), new, "ballot", f"{lit} << lane -> {new} << lane")
            pos = max(e, w.end())

    # -- shuffle loops ---------------------------------------------------------------------
    def shuffles(self) -> None:
        src, code = self.src, self.code
        for m in _FOR16.finditer(code):
            var, init = m.group("var"), m.group("init")
            cond = m.group("cond").replace(" ", "")
            step = m.group("step").replace(" ", "")
            down = init.rstrip("uU") == "16"
            if down:
                ok = step in (f"{var}>>=1", f"{var}/=2", f"{var}={var}>>1", f"{var}={var}/2")
            else:
                ok = cond in (f"{var}<32", f"{var}<=16") and step in (
                    f"{var}<<=1",
                    f"{var}*=2",
                    f"{var}={var}<<1",
                    f"{var}={var}*2",
                )
            if not ok:
                continue
            body = self._body(m.end())
            calls = [c for c in _SHFL_CALL.finditer(code, body[0], body[1])]
            if not calls:
                continue
            narrow = False
            widths: list[tuple[int, int]] = []  # explicit widths of 32: the full CUDA warp
            for c in calls:
                args = src.call_args(c.end() - 1)
                if c.group("sync"):
                    args = args[1:]
                if len(args) >= 3:
                    w = int_value(code[args[2][0] : args[2][1]])
                    if w == 32:
                        widths.append(args[2])
                    elif w is not None and w < 32:
                        narrow = True
            if narrow:
                self.leave(
                    m.start(),
                    "shuffle",
                    "shuffle loop with an explicit width below 32: a sub-warp reduction",
                )
                continue
            for a0, a1 in widths:
                lit = textre.search(r"32[uU]?", code[a0:a1])
                if lit is not None:
                    self.edit(
                        a0 + lit.start(), a0 + lit.end(), MACRO, "shuffle", "width 32 -> wave size"
                    )
            if down:
                self.edit(
                    m.start("init"),
                    m.end("init"),
                    f"{MACRO} / 2",
                    "shuffle",
                    "offset 16 -> wave size / 2",
                )
            else:
                c0 = m.start("cond")
                k = textre.search(r"(32|16)[uU]?", code[c0 : m.end("cond")])
                if k is None:
                    continue
                new = MACRO if k.group(1) == "32" else f"{MACRO} / 2"
                self.edit(
                    c0 + k.start(),
                    c0 + k.end(),
                    new,
                    "shuffle",
                    f"loop bound {k.group(1)} -> {new}",
                )

    def _body(self, close_end: int) -> tuple[int, int]:
        code = self.code
        i = close_end
        while i < len(code) and code[i] in " \t\r\n":
            i += 1
        if i < len(code) and code[i] == "{":
            return i, self.src.match_close(i) or i
        return i, _stmt_end(code, i)

    # -- cooperative-group tiles of a whole warp ---------------------------------------------
    def tiles(self) -> None:
        for m in _TILE32.finditer(self.code):
            self.edit(m.start("v"), m.end("v"), MACRO, "tile", f"tile of 32 -> {MACRO}")

    # -- shared arrays ---------------------------------------------------------------------
    def arrays(self) -> None:
        for m in _SHARED32.finditer(self.code):
            self.edit(
                m.start("v"),
                m.end("v"),
                MACRO,
                "array",
                f"__shared__ {m.group('name')}[32] -> [{MACRO}]",
            )

    # -- lane and warp numbers -------------------------------------------------------------
    def lanes(self) -> None:
        code = self.code
        for m in _LANE_OP.finditer(code):
            op, k = m.group("op"), m.group("k").lower()
            if k not in {"&": ("31", "0x1f"), "%": ("32",), ">>": ("5",), "/": ("32",)}[op]:
                continue
            before = code[m.start() - 1] if m.start() else ""
            after = code[m.start() + len(op)] if m.start() + len(op) < len(code) else ""
            if (
                after == "="
                or (op == "&" and "&" in (before, after))
                or (op == ">>" and before == ">")
            ):
                continue
            if op == "/" and (before in "/*" or after in "/*"):
                continue
            stmt = _stmt_start(code, m.start())
            operand = _OPERAND.search(code, max(stmt, m.start() - 80), m.start())
            left = operand.group().strip() if operand else ""
            target = _TARGET.search(code, stmt, m.start())
            lane_target = target is not None and _LANE_TARGET.search(target.group(1)) is not None
            if not (_THREAD_INDEX.match(left) or (lane_target and left)):
                continue
            if op in ("&", "%") and textre.search(
                r"<<\s*\(?\s*$", code[max(stmt, m.start() - 120) : m.start() - len(left)]
            ):
                self.leave(
                    m.start(), "lane", f"`{left} {op} {m.group('k')}` is a bit position (after <<)"
                )
                continue
            if target is not None and textre.search(r"bit|word", target.group(1), re.I):
                self.leave(m.start(), "lane", f"`{target.group(1)}` looks like a bit or word index")
                continue
            k_start = m.start("k")
            k_end = m.end()
            new = {"&": f"({MACRO} - 1)", "%": MACRO, ">>": LOG2, "/": MACRO}[op]
            self.edit(k_start, k_end, new, "lane", f"{left} {op} {m.group('k')} -> {op} {new}")

    def lane_compares(self) -> None:
        code = self.code
        for m in _LANE_CMP.finditer(code):
            var = m.group("var")
            if not textre.fullmatch(r"(?i)lane(?:_?id(?:x)?)?|lid|laneIdx|lane_index", var):
                continue
            k = m.group("k")
            new = f"{MACRO} - 1" if k == "31" else MACRO
            if k == "31" and m.group("op") in ("<", ">", "<=", ">="):
                new = f"({new})"
            self.edit(m.start("k"), m.end("k"), new, "lane", f"{var} {m.group('op')} {k} -> {new}")

    def broadcasts(self) -> None:
        """``__shfl(v, 31)``: a read from the last lane (a scan's total)."""
        src, code = self.src, self.code
        for m in _SRC_LANE.finditer(code):
            args = src.call_args(m.end() - 1)
            if "_sync" in m.group():
                args = args[1:]
            if len(args) != 2 or int_value(code[args[1][0] : args[1][1]]) != 31:
                continue
            lit = textre.search(r"31[uU]?", code[args[1][0] : args[1][1]])
            if lit is not None:
                at = args[1][0] + lit.start()
                new = f"{MACRO} - 1"
                self.edit(at, args[1][0] + lit.end(), new, "lane", f"source lane 31 -> {new}")

    def unrolled(self) -> None:
        """A shuffle with a literal offset of 16 outside a loop: an unrolled reduction that
        needs a 32 step on a 64-lane wavefront; left to a person."""
        src, code = self.src, self.code
        for m in _UNROLLED.finditer(code):
            args = src.call_args(m.end() - 1)
            if "_sync" in m.group():
                args = args[1:]
            if len(args) == 2 and int_value(code[args[1][0] : args[1][1]]) == 16:
                self.leave(m.start(), "shuffle", "unrolled shuffle from offset 16: add a 32 step")

    def marks_edits(self) -> None:
        src, text = self.src, self.src.text
        for line, kinds in self.marks.items():
            lo, hi = src.line_span(line)
            body = text[lo:hi].rstrip("\r")
            note = f"{MARK} {', '.join(kinds)}"
            if MARK in body:
                continue
            if body.rstrip().endswith("\\"):
                cut = lo + len(body.rstrip()) - 1
                self.out.edits.append((cut, cut, f"/* {note} */ "))
            else:
                end = lo + len(body)
                self.out.edits.append((end, end, f" // {note}"))


def plan(
    src: CxxSource, *, keep_masks: bool, rel: str = "source.cu", widened: Sequence[int] = ()
) -> WavePlan:
    """The wave64 rewrites of ``src`` (see the module docstring). ``keep_masks``: the target
    HIP keeps the ``*_sync`` masks (>= 6.2), so full-mask constants must become 64-bit;
    ``widened``: offsets of literal masks the translator already widened (listed and marked
    here, not edited)."""
    p = _Planner(src, keep_masks)
    for offset in widened:
        line = src.line_of(offset)
        p.out.changes.append(WaveChange(line, "mask", "0xffffffff -> 64 bits"))
        kinds = p.marks.setdefault(line, [])
        if "mask" not in kinds:
            kinds.append("mask")
    p.constants()
    if device_code(rel, src.code):
        p.masks()
        p.ballots()
        p.shuffles()
        p.tiles()
        p.arrays()
        p.lanes()
        p.lane_compares()
        p.broadcasts()
        p.unrolled()
    if p.out.needs_macro and f"define {MACRO}" in src.code:
        p.out.needs_macro = False
    p.marks_edits()
    p.out.changes.sort()
    p.out.left.sort()
    return p.out
