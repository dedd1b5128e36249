"""Reading passes of :mod:`.warp_facts` over operations: shuffles and shuffle loops, lane
and warp arithmetic, comparisons, strides, tiles and shared arrays (issue 25)."""

from __future__ import annotations

import re

from gpuport import textre
from gpuport.intervals import first_holding, in_any
from gpuport.scan.rules.native.common import int_value
from gpuport.scan.rules.native.warp_base import (
    _ATEN_SHFL,
    _DIM,
    _FOR,
    _HW,
    _LANE_OP,
    _SHARED,
    _SHFL,
    _TILE,
    _WORD,
    LOG2,
    WAVE,
    Note,
    ReaderBase,
    Site,
    _line_text,
)

#: a function-like macro's parameter list, on its ``#define`` line
_MACRO_PARAMS = textre.compile(r"\#\s*define\s+[A-Za-z_]\w*\(([^)]*)\)")
#: a function parameter named ``warpSize`` (``int warpSize``, ``const unsigned warpSize``)
_PARAM_WARPSIZE = textre.compile(r"[\w&*]\s+warpSize\s*[,)=]")
_WIDTH_DETAIL = "no width -> 32, CUDA's warp width"
#: ``out[...] = <rhs>;``: a store to an array element
_STORE = textre.compile(r"[;{}]\s*(?P<lhs>[^;{}=]*\[[^\]]*\])\s*=(?P<rhs>[^=;][^;]*);")


class OpsPasses(ReaderBase):
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
            first = dims[0].strip() if dims else ""
            if first and int_value(first) != 32 and not any(c in first for c in self.consts):
                self.fixed_shared.add(m.group("name"))

    def hw(self) -> None:
        head_end = self.u.body[0] if self.u.body is not None else self.a
        own = self._own_warpsize(head_end)
        for m in _HW.finditer(self.code, self.a, self.b):
            if own and m.group() == "warpSize":
                continue  # the unit's own parameter named `warpSize`, not HIP's builtin
            if m.start() < head_end and textre.search(r"=\s*$", self.code[self.a : m.start()]):
                continue  # `int width = warpSize`: HIP's own default width, not a meaning
            self.f.hw.append(
                Note(m.start(), f"`{m.group().strip('( ')}` means the hardware wavefront")
            )

    def _own_warpsize(self, head_end: int) -> bool:
        """Whether ``warpSize`` is a parameter of the unit: a function-like macro's
        (llamafile's ``#define __shfl_down(var, srcLane, warpSize) __shfl_down_sync(-1u, var,
        srcLane, warpSize)``, issue 24) or a function's (``int warpSize``). Then it names the
        caller's value, not the hardware wavefront."""
        code = self.code
        if self.u.kind == "macro":
            line = code[code.rfind("\n", 0, self.a) + 1 : self.a]
            params = _MACRO_PARAMS.search(line)
            return params is not None and "warpSize" in params.group(1).replace(",", " ").split()
        body = self.u.body is not None
        return body and _PARAM_WARPSIZE.search(code, self.a, head_end) is not None

    def tiles(self) -> None:
        for m in _TILE.finditer(self.code, self.a, self.b):
            size = m.group("size")
            value = int_value(size)
            if value is None:
                value = self.ints.get(size.rsplit("::", 1)[-1])
            if size in self.consts:
                self.explain(m.start("size"), m.end("size"))
            elif value is not None and value <= 32:
                self.f.anchors.append(
                    Note(
                        m.start(),
                        f"`tiled_partition<{size}>`: HIP gives {value}-thread tiles on a "
                        "64-lane wavefront too",
                    )
                )
                self.explain(m.start("size"), m.end("size"))
                if value == 32 and int_value(size) == 32:
                    self.site(m.start("size"), m.end("size"), WAVE, "tile", f"tile of 32 -> {WAVE}")
                else:
                    self.f.fixed_tiles.append(Note(m.start(), f"`tiled_partition<{size}>`"))
            elif value is None:
                note = Note(m.start(), f"the tile size `{size}` is not known")
                self.f.unknown.append(note)
                self.f.blockers.append(note)

    def _shuffle_calls(self, a: int, b: int) -> list[tuple[int, int, str, bool, bool]]:
        """(start, opening parenthesis, kind ``_up``/``_down``/``_xor``/``""``, has a mask
        first, is a tile member) of every shuffle call in ``[a, b)``: CUDA's and HIP's, a
        cooperative-groups member, and PyTorch's ``WARP_SHFL*`` where the file includes them."""
        calls = []
        for m in _SHFL.finditer(self.code, a, b):
            member = (
                m.group("kind") is None and m.group("sync") is None and "__shfl" not in m.group()
            )
            kind = (m.group("mkind") if member else m.group("kind")) or ""
            calls.append((m.start(), m.end() - 1, kind, bool(m.group("sync")), member))
        if self.aten_shfl:
            for m in _ATEN_SHFL.finditer(self.code, a, b):
                calls.append(
                    (m.start(), m.end() - 1, (m.group("kind") or "").lower(), False, False)
                )
        return sorted(calls)

    def shuffles(self) -> None:
        src, code = self.src, self.code
        for start, paren, kind, sync, member in self._shuffle_calls(self.a, self.b):
            args = src.call_args(paren)
            if sync:
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
                            start,
                            f"`{_line_text(src, start)}` shuffles within {value}-lane groups",
                        )
                    )
                    self.explain(w0, w1)
                    lit = textre.search(r"32[uU]?", code[w0:w1]) if value == 32 else None
                    if lit is not None:
                        at = w0 + lit.start()
                        self.site(at, w0 + lit.end(), WAVE, "shuffle", f"width 32 -> {WAVE}")
                    else:
                        self.f.fixed_tiles.append(Note(start, f"{value}-lane shuffle groups"))
                elif width in self.consts:
                    self.explain(w0, w1)
            elif not member and not kind and self._in_segment(a1):
                close = src.match_close(paren)
                if close is not None:
                    self.f.needs.append(
                        Note(
                            start,
                            f"`{_line_text(src, start)}` has no width: on a 64-lane wavefront "
                            "it reads from lanes 0-63, not from its own 32-lane half",
                        )
                    )
                    self.f.widths.append(Site(close, close, ", 32", "width", _WIDTH_DETAIL))
            if not kind and not member and int_value(a1) == 31:
                at = args[1][0] + a1.index("31")
                self.site(at, at + 2, f"{WAVE} - 1", "lane", f"source lane 31 -> {WAVE} - 1")
            if kind in ("_down", "_up") and not member and len(args) < 3:
                self._every_lane_stores(start, paren)
            unrolled = kind in ("_down", "_xor", "_up") and int_value(a1) == 16 and not member
            if unrolled and not in_any(self._loop_spans(), start):
                self.block(
                    start,
                    f"unrolled shuffle from offset 16 (`{_line_text(src, start)}`): "
                    "a 64-lane wavefront needs a 32 step first",
                )

    def _every_lane_stores(self, call: int, paren: int) -> None:
        """A ``__shfl_down``/``__shfl_up`` with no width whose result every lane then stores
        (``out[threadIdx.x] = v``): on a 64-lane wavefront lanes next to the 32-lane boundary
        read the other half, which only a read at lane 0 of each half escapes. CUDA's width
        (32) keeps what CUDA does."""
        code = self.code
        stmt = max(code.rfind(";", self.a, call), code.rfind("{", self.a, call)) + 1
        target = textre.search(r"(?P<v>[A-Za-z_]\w*)\s*[-+*|&^]?=(?!=)[^;=]*$", code[stmt:call])
        if target is None:
            return
        var = target.group("v")
        close = self.src.match_close(paren)
        if close is None:
            return
        if not hasattr(self, "_loop_ends"):  # the first loop holding a call, by a search
            self._loop_ends = [(s, e - 1, e) for s, e in self._loop_spans()]
        loop = first_holding(self._loop_ends, call)
        after = (loop if loop is not None else close) + 1
        uses = textre.compile(rf"\b{re.escape(var)}\b")
        m = next(
            (
                s
                for s in _STORE.finditer(code, after - 1, self.b)
                if uses.search(s.group("rhs")) and code[s.start("lhs") - 1 : s.start("lhs")] != "."
            ),
            None,
        )
        if m is None or textre.search(
            r"\bif\s*\(", code[max(self.a, m.start() - 80) : m.start("lhs")]
        ):
            return
        self.f.needs.append(
            Note(
                call,
                f"`{_line_text(self.src, call)}` has no width and every lane stores the result "
                f"(line {self.src.line_of(m.start('lhs'))}): on a 64-lane wavefront lanes next to "
                "the 32-lane boundary read the other half",
            )
        )
        self.f.widths.append(Site(close, close, ", 32", "width", _WIDTH_DETAIL))

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
            if not self._shuffle_calls(body[0], body[1] + 1):
                continue
            im = textre.search(
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
                elif textre.fullmatch(r"\(?\s*[A-Za-z_]\w*\s*(?:/\s*2|>>\s*1)\s*\)?", value):
                    name = textre.match(r"\(?\s*([A-Za-z_]\w*)", value)
                    if name is not None and name.group(1) in self.consts:
                        self.explain(vstart, vstart + len(value))
            elif doubling and int_value(value) == 1:
                k = textre.fullmatch(rf"{re.escape(var)}(?P<op><=?)(?P<k>\w+)", cond)
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
            shift = textre.search(
                r"(?:<<|>>)\s*\(?\s*$", code[max(self.a, lstart - 12) : max(self.a, lstart)]
            )
            if shift is not None and lk in ("T", "L32", "W32", "G"):
                self.block(
                    m.start(), f"`{expr}` is a bit position (`{_line_text(self.src, m.start())}`)"
                )
                self.explain(k_start, k_end)
            elif op in ("/", ">>") and lk in ("T", "N", "W32") and self._grid_statement(m.start()):
                self.block(
                    m.start(),
                    f"`{_line_text(self.src, m.start())}` numbers warps across the grid: the host "
                    "sizes the grid by 32-lane warps",
                )
                self.explain(k_start, k_end)
            elif lk in ("T", "L32", "W32") or (lk == "G" and op in ("%", "&")):
                lstart = code.rfind(left.strip(), max(self.a, m.start() - 300), m.start())
                why = self.index_context(max(self.a, lstart))
                if why is not None:
                    self.block(m.start(), why)
                self.site(k_start, k_end, new, "lane", f"{expr} -> {op} {new}")
            elif lk == "N" and op in ("/", ">>"):
                ceil = textre.fullmatch(r"\(\s*(?P<x>.+?)\s*\+\s*31\s*\)", left.strip())
                if ceil is not None:
                    at = m.start() - len(left) + left.index("31")
                    self.site(
                        at, at + 2, f"{WAVE} - 1", "lane", "ceiling: + 31 -> + (wave size - 1)"
                    )
                self.site(k_start, k_end, new, "lane", f"{expr} -> {op} {new}")
            elif lk == "G":
                self.block(
                    m.start(),
                    f"`{expr}` numbers warps across the grid: "
                    "the host sizes the grid by 32-lane warps",
                )
                self.explain(k_start, k_end)

    def tile_numbers(self) -> None:
        """``blockIdx.x * tile.meta_group_size() + tile.meta_group_rank()``: work numbered by
        tile across the grid, whose count the host fixes (``(n + 7) / 8`` blocks of 256)."""
        for m in textre.finditer(r"\.\s*meta_group_(?:rank|size)\s*\(", self.code[self.a : self.b]):
            at = self.a + m.start()
            if self._grid_statement(at):
                self.block(
                    at,
                    f"`{_line_text(self.src, at)}` numbers tiles across the grid: the host sizes "
                    "the grid by 32-thread tiles",
                )

    def compares(self) -> None:
        code = self.code
        for name, kind in self.kinds.items():
            if kind != "L32":
                continue
            pat = textre.compile(
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
            im = textre.search(r"(?P<v>[A-Za-z_]\w*)\s*=\s*(?P<e>.+)$", init, re.S)
            step = textre.fullmatch(
                r"\s*(?P<v>[A-Za-z_]\w*)\s*\+=\s*(?P<k>[A-Za-z_]\w*|32)\s*",
                code[parts[1] + 1 : close],
            )
            if im is None or step is None or step.group("v") != im.group("v"):
                continue
            e = im.group("e")
            if self.kind(e) not in ("L32",) and not any(
                textre.search(rf"(?<![\w.]){re.escape(n)}\b", e) for n in lanes
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
        sums: set[tuple[str, str]] | None = None
        for m in textre.finditer(
            r"(?<![\w.])(?P<v>[A-Za-z_]\w*)\s*\+=\s*(?P<k>32)\b(?![.\w])", body
        ):
            v = m.group("v")
            at = self.a + m.start("k")
            if self.is_explained(at):
                continue
            if sums is None:  # `a + b` pairs of the body, read once (a search per statement
                sums = _sums(body)  # and lane name was cubic; thirty-fifth re-run F5)
            if any((lane, v) in sums for lane in lanes):
                self.site(at, at + 2, WAVE, "lane", f"stride {v} += 32 -> {WAVE}")


_TOKEN = textre.compile(r"\w+")


def _sums(body: str) -> set[tuple[str, str]]:
    """The pairs of whole words written ``a + b`` in ``body``, both ways round."""
    out: set[tuple[str, str]] = set()
    prev = None
    for m in _TOKEN.finditer(body):
        if prev is not None and body[prev.end() : m.start()].strip() == "+":
            out.add((prev.group(), m.group()))
            out.add((m.group(), prev.group()))
        prev = m
    return out
