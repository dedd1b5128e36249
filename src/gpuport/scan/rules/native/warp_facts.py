"""What one unit of CUDA code says about the warp (issue 25, the second part of the
lane-meaning analysis; units come from :mod:`.warp_units`, decisions from :mod:`.warp_meaning`).

For each unit the reader lists:

* **sites**: 32-lane tokens a wave64 port would change, each with its replacement (lane and
  warp numbers ``tid % 32``, ``tid >> 5``; warp counts ``blockDim.x / 32``; ``lane == 31``;
  shuffle loops from 16; a shuffle from lane 31; ``__shared__ T s[32]``; strides ``+= 32``;
  warp constants ``= 32``; ballots kept in 32 bits and ``__popc`` of them);
* **anchors**: what makes 32 a *logical tile* that HIP keeps on a 64-lane wavefront: a shuffle
  with an explicit width of 32 or less, ``tiled_partition<32>``;
* **blockers**: a 32 whose meaning is not a lane (a bit position, a data offset ``lane + 32``,
  a size ``2 * WS``, an unrolled shuffle from offset 16, a global warp number, a lane number
  passed to another function, a host use, a 32-thread launch) — rewriting the sites around
  it would break the code;
* **hw**: code that already means the hardware wavefront (``warpSize``, ``__lane_id()``,
  hipCUB's default-width warp primitives);
* **needs**: operations that read across the whole 64-lane wavefront on AMD (a ballot, a
  shuffle from a fixed lane with no width): 32-lane code around them is wrong as written;
* **widths**: shuffles from a fixed or computed lane with no width, where adding CUDA's
  default width (32) keeps CUDA's meaning exactly.

Every 32 of a device unit that no site, anchor or use explains is a blocker, so what the
reader does not understand stops a rewrite instead of being rewritten.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuport import lazyre
from gpuport.scan.cxx import CxxSource
from gpuport.scan.rules.native.common import int_value, is_32bit, trailing_type
from gpuport.scan.rules.native.warp_units import Unit, warpish

__all__ = ["LOG2", "WAVE", "Facts", "Note", "Site", "expr_kind", "read_unit"]

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
    #: an active mask kept in 32 bits and only passed as a ``*_sync`` mask (HIP >= 6.2
    #: static_asserts 64 bits there): widened on its own
    masks: list[Site] = field(default_factory=list)


# -- patterns ----------------------------------------------------------------------------------

_THIRTY_TWO = lazyre.compile(
    r"(?<![\w.'])(?:32|31|0[xX]1[fF])(?:[uU]|[lL]{1,2}|[uU][lL]{1,2})?(?![\w.'])|32\.0*f?\b"
)
_SHIFT5 = lazyre.compile(r"(?:>>|<<)\s*5(?:[uU])?\b(?![\w.])")
_LANE_OP = lazyre.compile(r"(?P<op>%|&|/|>>)\s*(?P<k>32|31|0[xX]1[fF]|5)(?P<suf>[uU]?)\b(?![.\w])")
_SHFL = lazyre.compile(
    r"(?:(?<![\w.>])__shfl(?P<kind>_up|_down|_xor)?(?P<sync>_sync)?"
    r"|(?<=[.>])\s*shfl(?P<mkind>_up|_down|_xor)?)\s*\("
)
_FOR = lazyre.compile(r"(?<![\w.])for\s*\(")
_DEF_EQ = lazyre.compile(r"(?<![\w.>:])(?P<name>[A-Za-z_]\w*)\s*=(?!=)")
_DEF_CTOR = lazyre.compile(
    r"\b(?:int|unsigned|long|short|auto|size_t|u?int\d*_t|index_t|uint|char)\s+"
    r"(?:const\s+)?(?P<name>[A-Za-z_]\w*)\s*\("
)
_TID_NAME = lazyre.compile(
    r"(?:tid|ltid|tidx|tx|thread_?id\w*|threadId\w*|local_?id|thread_?idx|thread_index"
    r"|lane_?id\w*|tid_?in\w*)",
    re.I,
)
_COUNT_NAME = lazyre.compile(r"(?i).*(?:thread|block|^nt$|tpb|num_?threads|nthreads|kN?threads).*")
_SHARED = lazyre.compile(
    r"__shared__\b[^;{}()=]*?\b(?P<name>[A-Za-z_]\w*)\s*(?P<dims>(?:\[[^\[\]]*\]\s*)*)(?=[;=,)])"
)
_DIM = lazyre.compile(r"\[([^\[\]]*)\]")
_TILE = lazyre.compile(r"\b(?:tiled_partition|thread_block_tile)\s*<\s*(?P<size>[\w:]+)\s*[,>]")
_HW = lazyre.compile(
    r"(?<![\w.])(?:warpSize|__lane_id\s*\(|GPUPORT_WAVE_SIZE|GPUPORT_WAVE_LOG2|"
    r"__AMDGCN_WAVEFRONT_SIZE)|\b(?:hip)?cub::Warp(?:Reduce|Scan)\s*<\s*[^,<>;]+>"
)
_BALLOT = lazyre.compile(r"(?<![\w.])__(?:ballot(?:_sync)?|activemask)\s*\(")
_BALLOT_TARGET = lazyre.compile(
    r"(?P<name>[A-Za-z_]\w*)\s*=\s*(?:\(\s*[\w\s:]+\)\s*|static_cast<[\w\s:]+>\s*\(\s*)?$"
)
_WORDS_BEFORE = lazyre.compile(r"(?:[\w:]+[ \t\r\n]+)+$")
_BIT_FN = lazyre.compile(r"(?<![\w.])__(?P<fn>popc|ffs|clz)\s*\(")
_LAUNCH = lazyre.compile(r"(?P<k>[A-Za-z_][\w:]*)\s*(?:<[^;<>]*(?:<[^;<>]*>[^;<>]*)*>\s*)?<<<")
_GGL = lazyre.compile(
    r"hipLaunchKernelGGL\s*\(\s*(?:HIP_KERNEL_NAME\s*\(\s*)?(?P<k>[A-Za-z_][\w:]*)"
)
_WORD = lazyre.compile(r"[A-Za-z_]\w*")
_OPERAND = lazyre.compile(r"(?:[\w.]|->|::|\[[^\[\]]*\])+\s*$")
_CALLEE = lazyre.compile(r"(?:[\w.]|->|::)+$|static_cast<[^<>]*>$")
_HOST_GEOMETRY = lazyre.compile(r"(?i)grid|block|thread|warp|dim3|<<<|num_|lane")

_SHIFT_OR_CMP = frozenset({"<<", ">>"})
_LANE_KINDS = frozenset({"L32", "W32"})


def _line_text(src: CxxSource, offset: int) -> str:
    return " ".join(src.code_line(src.line_of(offset)).split())[:90]


def _strip(expr: str) -> str:
    e = expr.strip()
    while True:
        m = re.match(
            r"^(?:\(\s*(?:const\s+)?(?:unsigned\s+|signed\s+)?[\w:]+\s*\)|static_cast<[^<>]+>)\s*",
            e,
        )
        if m is None:
            break
        e = e[m.end() :].strip()
    while e.startswith("(") and e.endswith(")") and _balanced(e[1:-1]):
        e = e[1:-1].strip()
    return e


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


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


class _Reader:
    """Reads one unit (see :func:`read_unit`)."""

    def __init__(
        self,
        src: CxxSource,
        unit: Unit,
        consts: set[str],
        opaque: set[str],
        lane_fns: dict[str, str],
        shared: set[str],
    ) -> None:
        self.src = src
        self.code = src.code
        self.u = unit
        self.a, self.b = unit.start, unit.end
        self.consts = consts
        self.opaque = opaque
        self.lane_fns = lane_fns
        self.shared = set(shared)
        self.f = Facts()
        self.explained: list[tuple[int, int]] = []
        self.kinds: dict[str, str] = {}
        self.defs: dict[str, int] = {}
        self.ballot_vars: set[str] = set()
        self.strided: set[str] = set()

    # -- bookkeeping -----------------------------------------------------------------------
    def explain(self, start: int, end: int) -> None:
        self.explained.append((start, end))

    def is_explained(self, pos: int) -> bool:
        return any(s <= pos < e for s, e in self.explained)

    def site(self, start: int, end: int, new: str, kind: str, detail: str) -> None:
        if any(s.start == start and s.end == end for s in self.f.sites):
            return
        self.f.sites.append(Site(start, end, new, kind, detail))
        self.explain(start, max(end, start + 1))

    def block(self, pos: int, why: str) -> None:
        self.f.blockers.append(Note(pos, why))

    # -- expression kinds ------------------------------------------------------------------
    def kind(self, expr: str) -> str:
        """T (thread of the block), G (global thread), L32/LHW (lane), W32/WHW (warp),
        N (a thread count), C (a warp constant), or O (anything else)."""
        e = _strip(expr)
        if not e:
            return "O"
        split = _top_split(e, ("%", "&", "/", ">>"))
        if split is not None:
            left, op, right = split
            lk, rk = self.kind(left), _strip(right)
            hw = rk in ("warpSize", WAVE, LOG2) or re.fullmatch(
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
        if re.search(r"(?<![\w.])__lane_id\s*\(", e):
            return "LHW"
        if "threadIdx" not in e:
            for ops in (("+", "-"), ("*",)):
                parts = _top_split(e, ops)
                if parts is None:
                    continue
                sides = (self.kind(parts[0]), self.kind(parts[2]))
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
        if re.fullmatch(r"[A-Za-z_]\w*", e):
            if e in self.kinds:
                return self.kinds[e]
            if _TID_NAME.fullmatch(e):
                return "T"
            if _COUNT_NAME.fullmatch(e):
                return "N"
            return "O"
        if re.fullmatch(r"blockDim\.[xyz]", e):
            return "N"
        call = re.fullmatch(r"(?:[\w:]+::)?(?P<f>[A-Za-z_]\w*)\s*\(\s*\)", e)
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
            m = re.fullmatch(r"\(?\s*(?P<c>[A-Za-z_]\w*)\s*-\s*1\s*\)?", right)
            return m is not None and m.group("c") in self.consts
        return op == ">>" and int_value(right) == 5

    # -- the passes ------------------------------------------------------------------------
    def read(self) -> Facts:
        if self.u.value32 is not None:
            s, e = self.u.value32
            self.site(s, e, WAVE, "constant", f"{self.u.name}: 32 -> {WAVE}")
            self.f.lane32 = True
            return self.f
        self.shared_arrays()
        self.definitions()
        self.hw()
        self.tiles()
        self.shuffles()
        self.loops()
        self.lane_math()
        self.compares()
        self.strides()
        self.ballots()
        self.lane_uses()
        self.const_uses()
        self.unexplained()
        self.f.lane32 = self.f.lane32 or any(k in _LANE_KINDS for k in self.kinds.values())
        return self.f

    def shared_arrays(self) -> None:
        for m in _SHARED.finditer(self.code, self.a, self.b):
            self.shared.add(m.group("name"))
            dims = _DIM.findall(m.group("dims"))
            if len(dims) == 1 and int_value(dims[0]) == 32:
                at = m.start("dims") + m.group("dims").index("32")
                self.site(
                    at, at + 2, WAVE, "array", f"__shared__ {m.group('name')}[32] -> [{WAVE}]"
                )
            for d in dims:
                if d.strip() in self.consts:
                    at = m.start("dims") + m.group("dims").index(d)
                    self.explain(at, at + len(d))

    def definitions(self) -> None:
        code = self.code
        found: list[tuple[int, str, str]] = []
        for m in _DEF_EQ.finditer(code, self.a, self.b):
            end = self._expr_end(m.end())
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
                and re.search(r"\b(?:const|constexpr)\b", code[max(self.a, pos - 60) : pos])
            ):
                lit = code.find("32", pos, self._expr_end(pos + len(name)))
                if lit != -1:
                    self.site(lit, lit + 2, WAVE, "constant", f"{name}: 32 -> {WAVE}")
                    self.consts = self.consts | {name}
                    self.f.lane32 = True
        for _ in range(2):
            for pos, name, expr in found:
                k = self.kind(expr)
                if k != "O" or name not in self.kinds:
                    self.kinds[name] = k
                    self.defs.setdefault(name, pos)
        self.kinds = {n: k for n, k in self.kinds.items() if k != "O"}

    def _expr_end(self, pos: int) -> int:
        depth = 0
        code = self.code
        i = pos
        while i < self.b:
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
        return self.b

    def hw(self) -> None:
        for m in _HW.finditer(self.code, self.a, self.b):
            self.f.hw.append(
                Note(m.start(), f"`{m.group().strip('( ')}` means the hardware wavefront")
            )

    def tiles(self) -> None:
        for m in _TILE.finditer(self.code, self.a, self.b):
            size = m.group("size")
            if int_value(size) == 32:
                self.f.anchors.append(
                    Note(
                        m.start(),
                        "`tiled_partition<32>`: HIP gives 32-thread tiles on a 64-lane wavefront",
                    )
                )
                self.explain(m.start("size"), m.end("size"))
            elif size in self.consts:
                self.explain(m.start("size"), m.end("size"))

    def shuffles(self) -> None:
        src, code = self.src, self.code
        for m in _SHFL.finditer(code, self.a, self.b):
            member = (
                m.group("kind") is None and m.group("sync") is None and "__shfl" not in m.group()
            )
            kind = (m.group("mkind") if member else m.group("kind")) or ""
            paren = m.end() - 1
            args = src.call_args(paren)
            if m.group("sync"):
                args = args[1:]
            if len(args) < 2:
                continue
            a1 = code[args[1][0] : args[1][1]]
            if len(args) >= 3:
                w0, w1 = args[2]
                width = code[w0:w1].strip()
                value = int_value(width)
                if value is not None and value <= 32:
                    self.f.anchors.append(
                        Note(
                            m.start(),
                            f"`{_line_text(src, m.start())}` shuffles within {value}-lane groups",
                        )
                    )
                    self.explain(w0, w1)
                elif width in self.consts:
                    self.explain(w0, w1)
            elif not member and not kind and self._in_segment(a1):
                close = src.match_close(paren)
                if close is not None:
                    self.f.needs.append(
                        Note(
                            m.start(),
                            f"`{_line_text(src, m.start())}` has no width: on a 64-lane wavefront "
                            "it reads from lanes 0-63, not from its own 32-lane half",
                        )
                    )
                    self.f.widths.append(
                        Site(close, close, ", 32", "width", "no width -> 32, CUDA's warp width")
                    )
            if not kind and not member and int_value(a1) == 31:
                lit = re.search(r"31", a1)
                assert lit is not None
                at = args[1][0] + lit.start()
                self.site(at, at + 2, f"{WAVE} - 1", "lane", f"source lane 31 -> {WAVE} - 1")
            if kind in ("_down", "_xor", "_up") and int_value(a1) == 16 and not member:
                if not any(s <= m.start() < e for s, e in self._loop_spans()):
                    self.block(
                        m.start(),
                        f"unrolled shuffle from offset 16 (`{_line_text(src, m.start())}`): a 64-lane wavefront needs a 32 step first",
                    )

    def _in_segment(self, expr: str) -> bool:
        """Whether a shuffle source is a lane of a 32-lane segment: a literal below 32, or
        an expression of 32-lane lane numbers (``lane - 1``, ``(lane + 1) % 32``)."""
        value = int_value(expr)
        if value is not None:
            return 0 <= value < 32
        names = _WORD.findall(expr)
        return (
            bool(names)
            and "threadIdx" not in expr
            and all(self.kinds.get(n) == "L32" or n in self.consts for n in names)
            and any(self.kinds.get(n) == "L32" for n in names)
        )

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

    def _body(self, close: int) -> tuple[int, int]:
        code = self.code
        i = close + 1
        while i < len(code) and code[i] in " \t\r\n":
            i += 1
        if i < len(code) and code[i] == "{":
            return i, self.src.match_close(i) or i
        end = code.find(";", i)
        return i, (len(code) if end == -1 else end)

    def loops(self) -> None:
        src, code = self.src, self.code
        for m in _FOR.finditer(code, self.a, self.b):
            close = src.match_close(m.end() - 1)
            if close is None:
                continue
            parts = list(src.top_level(m.end(), close, ";"))
            if len(parts) != 2:
                continue
            init = (m.end(), parts[0])
            cond = code[parts[0] + 1 : parts[1]].replace(" ", "")
            step = code[parts[1] + 1 : close].replace(" ", "")
            body = self._body(close)
            if not _SHFL.search(code, body[0], body[1] + 1):
                continue
            im = re.search(
                r"(?P<var>[A-Za-z_]\w*)\s*(?:=|\()\s*(?P<v>[^;]*?)\s*\)?\s*$",
                code[init[0] : init[1]],
            )
            if im is None:
                continue
            var, value = im.group("var"), im.group("v").strip()
            vstart = init[0] + im.start("v")
            halving = step in (
                f"{var}>>=1",
                f"{var}/=2",
                f"{var}={var}>>1",
                f"{var}={var}/2",
                f"{var}>>=1u",
            )
            doubling = step in (f"{var}<<=1", f"{var}*=2", f"{var}={var}<<1", f"{var}={var}*2")
            if halving and cond in (f"{var}>0", f"{var}>=1", f"{var}!=0", var):
                if int_value(value) == 16:
                    self.site(
                        vstart,
                        vstart + len(value),
                        f"{WAVE} / 2",
                        "shuffle",
                        f"offset 16 -> {WAVE} / 2",
                    )
                elif re.fullmatch(r"\(?\s*[A-Za-z_]\w*\s*(?:/\s*2|>>\s*1)\s*\)?", value):
                    name = re.match(r"\(?\s*([A-Za-z_]\w*)", value)
                    if name is not None and name.group(1) in self.consts:
                        self.explain(vstart, vstart + len(value))
            elif doubling and int_value(value) == 1:
                k = re.fullmatch(rf"{re.escape(var)}(?P<op><=?)(?P<k>\w+)", cond)
                if k is None:
                    continue
                kv = int_value(k.group("k"))
                at = code.find(k.group("k"), parts[0] + 1, parts[1])
                if (k.group("op"), kv) == ("<", 32):
                    self.site(at, at + 2, WAVE, "shuffle", f"loop bound 32 -> {WAVE}")
                elif (k.group("op"), kv) == ("<=", 16):
                    self.site(at, at + 2, f"{WAVE} / 2", "shuffle", f"loop bound 16 -> {WAVE} / 2")
                elif k.group("k") in self.consts:
                    self.explain(at, at + len(k.group("k")))

    def lane_math(self) -> None:
        code = self.code
        for m in _LANE_OP.finditer(code, self.a, self.b):
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
            left = self._left(m.start())
            lk = self.kind(left)
            k_start, k_end = m.start("k"), m.end()
            expr = f"{' '.join(left.split())} {op} {m.group('k')}"
            new = {"&": f"({WAVE} - 1)", "%": WAVE, ">>": LOG2, "/": WAVE}[op]
            lstart = code.rfind(left.strip(), max(self.a, m.start() - 300), m.start())
            shift = re.search(
                r"(?:<<|>>)\s*\(?\s*$", code[max(self.a, lstart - 12) : max(self.a, lstart)]
            )
            if shift is not None and lk in ("T", "L32", "W32", "G"):
                self.block(
                    m.start(), f"`{expr}` is a bit position (`{_line_text(self.src, m.start())}`)"
                )
                self.explain(k_start, k_end)
            elif lk in ("T", "L32", "W32") or (lk == "G" and op in ("%", "&")):
                self.site(k_start, k_end, new, "lane", f"{expr} -> {op} {new}")
            elif lk == "N" and op in ("/", ">>"):
                ceil = re.fullmatch(r"\(\s*(?P<x>.+?)\s*\+\s*31\s*\)", left.strip())
                if ceil is not None:
                    at = m.start() - len(left) + left.index("31")
                    self.site(
                        at, at + 2, f"{WAVE} - 1", "lane", "ceiling: + 31 -> + (wave size - 1)"
                    )
                self.site(k_start, k_end, new, "lane", f"{expr} -> {op} {new}")
            elif lk == "G":
                self.block(
                    m.start(),
                    f"`{expr}` numbers warps across the grid: the host sizes the grid by 32-lane warps",
                )
                self.explain(k_start, k_end)

    def _left(self, op: int) -> str:
        """The left operand of the binary operator at ``op``."""
        code = self.code
        lo = max(self.a, op - 300)
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
            head = _CALLEE.search(code, lo, max(lo, j))
            return code[(head.start() if head else j) : k]
        m = _OPERAND.search(code, lo, k)
        return m.group() if m else ""

    def compares(self) -> None:
        code = self.code
        for name, kind in self.kinds.items():
            if kind != "L32":
                continue
            pat = re.compile(
                rf"(?<![\w.]){re.escape(name)}\s*(?P<op>==|!=|<=|>=|<|>)\s*(?P<k>31|32)[uU]?\b(?![.\w])"
            )
            for m in pat.finditer(code, self.a, self.b):
                k = m.group("k")
                new = f"{WAVE} - 1" if k == "31" else WAVE
                if k == "31" and m.group("op") not in ("==", "!="):
                    new = f"({new})"
                self.site(
                    m.start("k"), m.end("k"), new, "lane", f"{name} {m.group('op')} {k} -> {new}"
                )

    def strides(self) -> None:
        """``for (j = lane; j < n; j += 32)``: a loop over data in steps of the warp width,
        from the lane number (the step is a site, the loop variable a data index); and
        ``offset += 32`` next to ``lane + offset``."""
        code = self.code
        lanes = [n for n, k in self.kinds.items() if k == "L32"]
        for m in _FOR.finditer(code, self.a, self.b):
            close = self.src.match_close(m.end() - 1)
            if close is None:
                continue
            parts = list(self.src.top_level(m.end(), close, ";"))
            if len(parts) != 2:
                continue
            init = code[m.end() : parts[0]]
            im = re.search(r"(?P<v>[A-Za-z_]\w*)\s*=\s*(?P<e>.+)$", init, re.S)
            step = re.fullmatch(
                r"\s*(?P<v>[A-Za-z_]\w*)\s*\+=\s*(?P<k>[A-Za-z_]\w*|32)\s*",
                code[parts[1] + 1 : close],
            )
            if im is None or step is None or step.group("v") != im.group("v"):
                continue
            e = im.group("e")
            if self.kind(e) not in ("L32",) and not any(
                re.search(rf"(?<![\w.]){re.escape(n)}\b", e) for n in lanes
            ):
                continue
            v, k = im.group("v"), step.group("k")
            at = parts[1] + 1 + step.start("k")
            if k == "32":
                self.site(at, at + 2, WAVE, "lane", f"stride {v} += 32 -> {WAVE}")
            elif k in self.consts:
                self.explain(at, at + len(k))
            else:
                continue
            self.strided.add(v)
            self.kinds.pop(v, None)
        if not lanes:
            return
        body = code[self.a : self.b]
        for m in re.finditer(r"(?<![\w.])(?P<v>[A-Za-z_]\w*)\s*\+=\s*(?P<k>32)\b(?![.\w])", body):
            v = m.group("v")
            at = self.a + m.start("k")
            if self.is_explained(at):
                continue
            ok = any(
                re.search(
                    rf"(?<![\w.]){re.escape(lane)}\s*\+\s*{re.escape(v)}\b"
                    rf"|(?<![\w.]){re.escape(v)}\s*\+\s*{re.escape(lane)}\b",
                    body,
                )
                for lane in lanes
            )
            if ok:
                self.site(at, at + 2, WAVE, "lane", f"stride {v} += 32 -> {WAVE}")

    # -- ballots ---------------------------------------------------------------------------
    def ballots(self) -> None:
        src, code = self.src, self.code
        for m in _BALLOT.finditer(code, self.a, self.b):
            target = _BALLOT_TARGET.search(code, max(self.a, m.start() - 120), m.start())
            call = code[m.start() : m.end() - 1].strip()
            self.f.needs.append(Note(m.start(), f"`{call}` votes across all 64 lanes on AMD"))
            inner = re.search(
                r"__(?P<fn>popc|ffs|clz)\s*\(\s*$", code[max(self.a, m.start() - 20) : m.start()]
            )
            if inner is not None:
                at = (
                    m.start()
                    - len(code[max(self.a, m.start() - 20) : m.start()])
                    + inner.start("fn")
                )
                fn = inner.group("fn")
                self.site(at, at + len(fn), fn + "ll", "ballot", f"__{fn} of a ballot -> __{fn}ll")
                continue
            if target is None:
                continue
            name = target.group("name")
            words = _WORDS_BEFORE.search(code, max(self.a, target.start() - 120), target.start())
            typ_words = words.group().split() if words else []
            typ = trailing_type(typ_words)
            decl_at = target.start()
            if not typ:
                decl = re.search(
                    rf"(?P<t>(?:(?:const|unsigned|signed|int|long|uint32_t|int32_t|uint|auto)\s+)+){re.escape(name)}\s*[;,]",
                    code[self.a : m.start()],
                )
                if decl is None:
                    self.block(m.start(), f"`{name}` holds a ballot but is declared elsewhere")
                    continue
                typ_words = decl.group("t").split()
                typ = trailing_type(typ_words)
                decl_at = self.a + decl.start("t")
                tstart, tend = decl_at, self.a + decl.end("t")
            else:
                tend = target.start()
                tstart = tend - len(words.group()) if words else tend
                for w in typ_words:
                    if w in ("static", "volatile", "__shared__", "register"):
                        tstart += len(re.match(r"\s*\S+\s*", code[tstart:tend]).group())  # type: ignore[union-attr]
                    else:
                        break
            if not is_32bit(typ):
                continue
            const = "const " if "const" in code[tstart:tend] else ""
            if self._mask_only(name, m.end()):
                # kept only to be passed as a *_sync mask: HIP (>= 6.2) needs 64 bits there
                self.f.masks.append(
                    Site(
                        tstart, tend, f"{const}unsigned long long ", "mask", f"{name}: 64-bit mask"
                    )
                )
                continue
            self.ballot_vars.add(name)
            self.f.ballots.append(Note(m.start(), f"`{name}` keeps a 64-bit ballot in 32 bits"))
            self.site(
                tstart,
                tend,
                f"{const}unsigned long long ",
                "ballot",
                f"{name}: ballot kept in 64 bits",
            )
            self._ballot_uses(name, m.end())

    def _mask_only(self, name: str, start: int) -> bool:
        uses = list(re.finditer(rf"(?<![\w.]){re.escape(name)}\b", self.code[start : self.b]))
        return bool(uses) and all(
            re.search(
                r"_sync\s*\(\s*$", self.code[max(start, start + u.start() - 40) : start + u.start()]
            )
            for u in uses
        )

    def _ballot_uses(self, name: str, start: int) -> None:
        code = self.code
        word = re.compile(rf"(?<![\w.]){re.escape(name)}\b")
        for w in word.finditer(code, start, self.b):
            before = code[max(self.a, w.start() - 40) : w.start()]
            after = code[w.end() : w.end() + 40]
            fn = re.search(r"__(?P<fn>popc|ffs|clz)\s*\(\s*\(?\s*$", before)
            if fn is not None:
                at = w.start() - len(before) + fn.start("fn")
                self.site(
                    at,
                    at + len(fn.group("fn")),
                    fn.group("fn") + "ll",
                    "ballot",
                    f"__{fn.group('fn')}({name}) -> __{fn.group('fn')}ll",
                )
                if not re.match(r"\s*(?:&|\||\^)(?![&|=])", after):
                    continue
            if re.match(r"\s*=(?!=)", after):
                continue  # assigned again (the next ballot)
            bitwise = re.match(r"\s*(?:&|\||\^)=?(?![&|])", after) or (
                re.search(r"(?:[&|^]=?)\s*\(?\s*$", before)
                and not re.search(r"(?:&&|\|\|)\s*\(?\s*$", before)
            )
            if bitwise:
                self._lane_bits(w.start())
                continue
            if re.match(r"\s*-\s*1\b", after) and re.search(r"[&|^]=?\s*\(?\s*$", before):
                continue  # b & (b - 1): the lowest set bit cleared
            cond_before = re.search(r"(?:\(|!|&&|\|\||\?|return)\s*$", before)
            cond_after = re.match(r"\s*(?:\)|!=\s*0\b|==\s*0\b|&&|\|\||\?|;)", after)
            call = re.search(r"(?<![\w.])(?P<f>[A-Za-z_]\w*)\s*\(\s*$", before)
            if call is not None and call.group("f") in ("if", "while", "for", "switch", "return"):
                call = None
            if cond_before and cond_after and call is None:
                continue  # if (b), b != 0, return b;
            if re.search(r"_sync\s*\(\s*$", before):
                continue  # the mask of another warp call
            what = "copies" if re.search(r"(?<![=!<>])=\s*$", before) else "uses"
            self.block(
                w.start(),
                f"`{_line_text(self.src, w.start())}` {what} the ballot `{name}` where a 64-bit "
                "value would change the result",
            )

    def _lane_bits(self, pos: int) -> None:
        """``b & (1 << lane)`` / ``b & mask``: the other operand must be 64 bits too."""
        code = self.code
        s = max(code.rfind(";", self.a, pos), code.rfind("{", self.a, pos), self.a - 1) + 1
        e = code.find(";", pos, self.b)
        e = self.b if e == -1 else e
        for one in re.finditer(r"(?<![\w.])(?P<one>1[uU]?|0[xX]1[uU]?)(?=\s*<<)", code[s:e]):
            at = s + one.start()
            lit = one.group("one")
            self.site(at, at + len(lit), "1ull", "ballot", f"{lit} << lane -> 1ull << lane")

    # -- lane and warp variables -----------------------------------------------------------
    def lane_uses(self) -> None:
        code = self.code
        for name, kind in self.kinds.items():
            if kind not in _LANE_KINDS:
                continue
            for m in re.finditer(rf"(?<![\w.>]){re.escape(name)}\b", code[self.a : self.b]):
                pos = self.a + m.start()
                if pos == self.defs.get(name):
                    continue
                why = self._lane_use(name, kind, pos)
                if why is not None:
                    self.block(pos, why)

    def _lane_use(self, name: str, kind: str, pos: int) -> str | None:
        code = self.code
        end = pos + len(name)
        after = code[end : end + 12].lstrip()
        before = code[max(self.a, pos - 12) : pos].rstrip()
        what = "lane" if kind == "L32" else "warp"
        if after.startswith("=") and not after.startswith("=="):
            return None
        if before.endswith("<<"):
            line = code[max(self.a, code.rfind(";", self.a, pos)) : code.find(";", pos)]
            if _BALLOT.search(line) or any(
                re.search(rf"(?<![\w.]){re.escape(b)}\b", line) for b in self.ballot_vars
            ):
                return None
            return (
                f"`{_line_text(self.src, pos)}` uses the {what} number `{name}` as a bit position"
            )
        if before.endswith(">>"):
            return (
                f"`{_line_text(self.src, pos)}` uses the {what} number `{name}` as a bit position"
            )
        if after.startswith("*") or before.endswith("*"):
            return f"`{_line_text(self.src, pos)}` scales the {what} number `{name}`: a data layout of 32-lane warps"
        mult = re.match(r"[+-]\s*(\d+)\b", after) or re.search(r"\b(\d+)\s*[+-]$", before)
        if mult is not None and int(mult.group(1)) % 32 == 0 and int(mult.group(1)) > 0:
            return f"`{_line_text(self.src, pos)}` offsets the {what} number by {mult.group(1)}: a data layout of 32-lane warps"
        enclosing = self._enclosing(pos)
        if enclosing is not None:
            opener, head = enclosing
            if opener == "[":
                if head in self.shared:
                    return None
                return f"`{_line_text(self.src, pos)}` indexes `{head}` by the {what} number"
            if opener == "(":
                if head is None or head in ("if", "while", "for", "switch", "return", "min", "max"):
                    return None
                if re.fullmatch(r"(?:__shfl\w*|shfl\w*|atomic\w+|__syncwarp)", head):
                    return None
                if "blockIdx" in code[pos - 60 : pos + 60]:
                    return f"`{_line_text(self.src, pos)}` mixes the {what} number with the block number"
                return f"`{_line_text(self.src, pos)}` passes the {what} number to `{head}`"
        if "blockIdx" in code[max(self.a, code.rfind(";", self.a, pos)) : code.find(";", pos)]:
            return f"`{_line_text(self.src, pos)}` numbers {what}s across the grid: the host sizes the grid by 32-lane warps"
        return None

    def _enclosing(self, pos: int) -> tuple[str, str | None] | None:
        """The innermost ``[`` or ``(`` around ``pos`` in its statement, and the name before it."""
        code = self.code
        depth = 0
        i = pos - 1
        lo = max(self.a, pos - 400)
        while i >= lo:
            ch = code[i]
            if ch in ")]":
                depth += 1
            elif ch in "([":
                if depth == 0:
                    m = re.search(r"([A-Za-z_]\w*)\s*(?:<[^<>;]*>)?\s*$", code[max(lo, i - 60) : i])
                    return ch, (m.group(1) if m else None)
                depth -= 1
            elif ch in ";{}":
                return None
            i -= 1
        return None

    # -- constants -------------------------------------------------------------------------
    def const_uses(self) -> None:
        code = self.code
        names = self.consts | self.opaque
        if not names:
            return
        for m in _WORD.finditer(code, self.a, self.b):
            name = m.group()
            if name not in names or self.is_explained(m.start()):
                continue
            if name in self.opaque:
                self.block(
                    m.start(),
                    f"`{name}` is 32 too (`{_line_text(self.src, m.start())}`): it cannot be told from the warp width",
                )
                continue
            why = self._const_use(name, m.start(), m.end())
            if why is None:
                self.explain(m.start(), m.end())
            else:
                self.block(m.start(), why)

    def _const_use(self, name: str, start: int, end: int) -> str | None:
        """None when this use of the warp constant ``name`` means the warp width (it moves
        with the port), else why it does not."""
        code = self.code
        lo = max(self.a, start - 80)
        b = code[lo:start].rstrip()
        a = code[end : end + 40].lstrip()
        if re.match(r"(?:/\s*2|>>\s*1)(?![\w.])", a) or (b.endswith("[") and a.startswith("]")):
            return None  # half the warp; an array dimension or index
        if re.match(r"=(?!=)\s*32[uU]?\s*[;,]", a):
            return None  # its own definition
        if b.endswith(("%", "/")):
            if self.kind(self._left(lo + len(b) - 1)) in ("T", "G", "N", "L32", "W32", "LHW"):
                return None
            return (
                f"`{_line_text(self.src, start)}` divides data by `{name}`: a bit position or a "
                "data index, not a lane"
            )
        amp = re.search(r"&\s*\(\s*$", b)
        if amp is not None and re.match(r"-\s*1\s*\)", a):
            if self.kind(self._left(lo + amp.start())) in ("T", "G", "L32", "W32", "LHW"):
                return None
            return f"`{_line_text(self.src, start)}` masks data with `{name} - 1`: a bit position"
        if re.search(r"(?:[<>]=?|==|!=|\+=|-=)\s*$", b) or re.match(r"(?:[<>]=?|==|!=)", a):
            return None  # a bound, a comparison, a stride
        if re.match(r"-\s*1\b", a) or re.search(r"=\s*[A-Za-z_][\w.]*\s*\+\s*$", b):
            return None  # the last lane; i = i + WS
        if re.search(r"(?:tiled_partition|thread_block_tile|Warp(?:Reduce|Scan))\s*<[^;<>]*$", b):
            return None
        if re.search(r"\b(?:int|unsigned)\s+\w+\s*=\s*$", b) and re.match(r"[,)]", a):
            return None  # a default parameter: int width = WARP_SIZE
        return f"`{_line_text(self.src, start)}` uses `{name}` as a size or a count"

    def unexplained(self) -> None:
        if not self.u.device and self.u.kind not in ("macro", "decl"):
            return
        code = self.code
        for pat in (_THIRTY_TWO, _SHIFT5):
            for m in pat.finditer(code, self.a, self.b):
                if self.is_explained(m.start()) or self.is_explained(m.end() - 1):
                    continue
                if self.src.dead_at(m.start()):
                    continue
                self.block(
                    m.start(),
                    f"`{_line_text(self.src, m.start())}`: this 32 is not a lane or warp number",
                )
        for m in re.finditer(
            r"\[\s*(?P<v>[A-Za-z_]\w*)\s*[+-]\s*16\s*\]|(?<![\w.])(?P<w>[A-Za-z_]\w*)\s*<\s*16\b",
            code[self.a : self.b],
        ):
            v = m.group("v") or m.group("w")
            if self.kinds.get(v) in ("T", "D", "L32") or _TID_NAME.fullmatch(v):
                self.block(
                    self.a + m.start(),
                    f"`{_line_text(self.src, self.a + m.start())}`: a warp-synchronous step over 32 lanes",
                )

    # -- host units ------------------------------------------------------------------------
    def launches(self) -> None:
        src, code = self.src, self.code
        for m in _LAUNCH.finditer(code, self.a, self.b):
            lt = code.find("<<<", m.start(), self.b)
            gt = code.find(">>>", lt, self.b)
            if lt < 0 or gt < 0:
                continue
            cfg = code[lt + 3 : gt]
            self._launch(m.group("k").split("::")[-1], cfg, m.start())
        for m in _GGL.finditer(code, self.a, self.b):
            args = src.call_args(code.find("(", m.start()))
            if len(args) >= 3:
                cfg = ",".join(code[s:e] for s, e in args[1:3])
                self._launch(m.group("k").split("::")[-1], cfg, m.start())

    def _launch(self, kernel: str, cfg: str, pos: int) -> None:
        parts = [p.strip() for p in _split_args(cfg)]
        notes = self.f.launches.setdefault(kernel, [])
        if len(parts) < 2:
            return
        block = parts[1]
        text = block
        var = re.fullmatch(r"[A-Za-z_]\w*", block)
        if var is not None:
            d = re.search(
                rf"(?<![\w.]){re.escape(block)}\s*(?:\(|\{{|=)\s*(?P<e>[^;]*);",
                self.code[self.a : pos],
            )
            if d is not None:
                text = d.group("e")
        thirty_two = _THIRTY_TWO.search(text)
        value = int_value(text)
        warp_name = any(n in self.consts for n in _WORD.findall(text)) or re.search(
            r"(?i)warp|lane", text
        )
        if thirty_two or warp_name or (value is not None and value < 64):
            notes.append(
                Note(
                    pos,
                    f"launched with `{' '.join(text.split())[:60]}` threads per block (line {self.src.line_of(pos)})",
                )
            )
        geometry = [
            s
            for s in re.split(r"[;{}]", self.code[self.a : self.b])
            if _THIRTY_TWO.search(s) and _HOST_GEOMETRY.search(s)
        ]
        if geometry:
            notes.append(
                Note(
                    pos,
                    f"the launching code sizes work with a 32: `{' '.join(geometry[0].split())[:70]}`",
                )
            )


def _split_args(cfg: str) -> list[str]:
    out: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(cfg):
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(cfg[start:i])
            start = i + 1
    out.append(cfg[start:])
    return out


def read_unit(
    src: CxxSource,
    unit: Unit,
    *,
    consts: set[str],
    opaque: set[str] = frozenset(),  # type: ignore[assignment]
    lane_fns: dict[str, str] | None = None,
    shared: set[str] = frozenset(),  # type: ignore[assignment]
) -> Facts:
    """What ``unit`` says about the warp (see the module docstring). ``consts``: the names
    of the warp constants equal to 32 (the project's); ``opaque``: other names equal to 32;
    ``lane_fns``: functions that return a lane or warp number, and which; ``shared``: the
    file's ``__shared__`` arrays."""
    r = _Reader(src, unit, consts, opaque, lane_fns or {}, shared)
    if unit.kind == "host":
        r.launches()
        return r.f
    return r.read()


def expr_kind(src: CxxSource, unit: Unit, expr: str, consts: set[str]) -> str:
    """The lane kind of ``expr`` in ``unit`` (see :meth:`_Reader.kind`)."""
    return _Reader(src, unit, consts, set(), {}, set()).kind(expr)
