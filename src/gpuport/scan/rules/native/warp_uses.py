"""Reading passes of :mod:`.warp_facts` over uses: ballots and what is done with them, what
is done with lane and warp numbers and warp constants, the 32s nothing explains, and kernel
launches in host code (issue 25)."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from gpuport import textre
from gpuport.scan.rules.native.common import int_value, is_32bit, trailing_type
from gpuport.scan.rules.native.warp_base import (
    _BALLOT,
    _BALLOT_TARGET,
    _GGL,
    _HOST_GEOMETRY,
    _LANE_KINDS,
    _LAUNCH,
    _SHIFT5,
    _THIRTY_TWO,
    _TID_NAME,
    _WORD,
    Note,
    ReaderBase,
    Site,
    _line_text,
    _split_args,
)

_TYPE_BEFORE = textre.compile(
    r"(?P<t>(?:(?:const|volatile|static|register|__shared__|unsigned|signed|int|long|short"
    r"|uint|u?int(?:32|64)_t|std::u?int(?:32|64)_t|size_t|auto)[ \t\r\n]+)+)$"
)

#: A name that is not a member (``x.lane``, ``p->lane``): each lane name's uses, for all of
#: them in one pass (a pass per name was names x kernel; fourteenth re-run)
_NAME_NOT_MEMBER = textre.compile(r"(?<![\w.>])\w+")
#: A name that is not a field (``x.b``): a ``<<`` line's names, looked up among the ballots
#: at once (a search per ballot and use, each a new pattern, took 85 KB past two minutes;
#: fourteenth re-run, F6)
_NAME_NOT_FIELD = textre.compile(r"(?<![\w.])\w+")


#: a plain declaration of any name: ``unsigned long long name;`` / ``int name,``
_DECLARATION = textre.compile(
    r"(?P<t>(?:(?:const|volatile|unsigned|signed|int|long|short|uint|u?int(?:32|64)_t|auto)"
    r"\s+)+)(?P<n>[A-Za-z_]\w*)\s*[;,]"
)
_DECLARATIONS: dict[tuple[int, int, int], dict[str, list[re.Match[str]]]] = {}


def _declaration(code: str, name: str, lo: int, hi: int) -> re.Match[str] | None:
    """``unsigned name;`` (or ``unsigned name,``) declared last in ``[lo, hi)``.

    Every declaration from ``lo`` on is found in one pass and kept for the next ballot of the
    same kernel (a new pattern per ballot, each searched from the kernel's start, kept a
    4.75 MB file of ballots busy for a minute; thirty-second re-run F4)."""
    key = (hash(code), len(code), lo)  # a str's hash is computed once, then kept
    names = _DECLARATIONS.get(key)
    if names is None:
        if len(_DECLARATIONS) > 64:
            _DECLARATIONS.clear()
        names = {}
        for m in _DECLARATION.finditer(code, lo):
            names.setdefault(m.group("n"), []).append(m)
        _DECLARATIONS[key] = names
    found = names.get(name, [])
    at = bisect_right([m.end() for m in found], hi) - 1 if len(found) > 1 else 0
    if found and at >= 0 and found[at].end() <= hi:
        return found[at]
    return None


_U64 = "unsigned long long"


class UsesPasses(ReaderBase):
    _mask_uses: dict[str, tuple[list[int], list[bool]]]
    _uses_from: dict[str, int]

    def ballots(self) -> None:
        code = self.code
        self._mask_uses, self._uses_from = {}, {}
        for m in _BALLOT.finditer(code, self.a, self.b):
            call = code[m.start() : m.end() - 1].strip()
            vote = Note(m.start(), f"`{call}` votes across all 64 lanes on AMD")
            before = code[max(self.a, m.start() - 20) : m.start()]
            inner = textre.search(r"__(?P<fn>popc|ffs|clz)\s*\(\s*$", before)
            if inner is not None:
                self.f.needs.append(vote)
                at = m.start() - len(before) + inner.start("fn")
                fn = inner.group("fn")
                self.site(at, at + len(fn), fn + "ll", "ballot", f"__{fn} of a ballot -> __{fn}ll")
                continue
            target = _BALLOT_TARGET.search(code, max(self.a, m.start() - 120), m.start())
            if target is None:
                self.f.needs.append(vote)
                continue
            name = target.group("name")
            span = _TYPE_BEFORE.search(code, max(self.a, target.start() - 120), target.start())
            if span is None:  # assigned here, declared above: `unsigned b; ... b = __ballot(p);`
                span = _declaration(code, name, self.a, m.start())
                if span is None:
                    self.f.needs.append(vote)
                    self.block(m.start(), f"`{name}` holds a ballot but is declared elsewhere")
                    continue
            tstart, tend = span.start("t"), span.end("t")
            words = code[tstart:tend].split()
            if not is_32bit(trailing_type(words)):
                if self._mask_only(name, m.end()) is False:
                    self.f.needs.append(vote)
                continue
            const = "const " if "const" in words else ""
            lead = textre.match(
                r"(?:(?:static|volatile|register|__shared__)\s+)*", code[tstart:tend]
            )
            tstart += lead.end() if lead else 0
            if self._mask_only(name, m.end()):
                # kept only to be passed as a *_sync mask: HIP (>= 6.2) needs 64 bits there
                self.f.masks.append(
                    Site(tstart, tend, f"{const}{_U64} ", "mask", f"{name}: 64-bit mask")
                )
                continue
            self.f.needs.append(vote)
            self.ballot_vars.add(name)
            self.f.ballots.append(Note(m.start(), f"`{name}` keeps a 64-bit ballot in 32 bits"))
            self.site(tstart, tend, f"{const}{_U64} ", "ballot", f"{name}: ballot kept in 64 bits")
            self._ballot_uses(name, m.end())

    def _mask_only(self, name: str, start: int) -> bool:
        """Whether the value is only ever passed as a ``*_sync`` mask (or never used: HIP
        below 6.2 drops the masks at the calls) after ``start``. The uses of ``name`` are
        found once per unit and judged once each (a use's window of 40 characters is cut at
        ``start`` only for the uses just after it): one pass per ballot was quadratic in a
        unit of many ballots."""
        table = self._mask_uses.get(name)
        if table is None:
            word = textre.compile(rf"(?<![\w.]){re.escape(name)}\b")
            at = [w.start() for w in word.finditer(self.code, self.a, self.b)]
            ok = [self._sync_before(p, self.a) for p in at]
            rest = [True] * (len(at) + 1)  # rest[i]: all of ok[i:]
            for i in range(len(at) - 1, -1, -1):
                rest[i] = rest[i + 1] and ok[i]
            table = self._mask_uses[name] = (at, rest)
        at, rest = table
        i = bisect_left(at, start)
        while i < len(at) and at[i] - 40 < start:  # its window is cut at start
            if not self._sync_before(at[i], start):
                return False
            i += 1
        return rest[i]

    def _sync_before(self, pos: int, lo: int) -> bool:
        return textre.search(r"_sync\s*\(\s*$", self.code[max(lo, pos - 40) : pos]) is not None

    def _ballot_uses(self, name: str, start: int) -> None:
        # what each use means depends on the use alone, and a unit's ballots come in order:
        # the first ballot of ``name`` already judged every later use (quadratic otherwise)
        if self._uses_from.get(name, self.b) <= start:
            return
        self._uses_from[name] = start
        code = self.code
        word = textre.compile(rf"(?<![\w.]){re.escape(name)}\b")
        for w in word.finditer(code, start, self.b):
            before = code[max(self.a, w.start() - 40) : w.start()]
            after = code[w.end() : w.end() + 40]
            fn = textre.search(r"__(?P<fn>popc|ffs|clz)\s*\(\s*\(?\s*$", before)
            if fn is not None:
                at = w.start() - len(before) + fn.start("fn")
                self.site(
                    at,
                    at + len(fn.group("fn")),
                    fn.group("fn") + "ll",
                    "ballot",
                    f"__{fn.group('fn')}({name}) -> __{fn.group('fn')}ll",
                )
                if not textre.match(r"\s*(?:&|\||\^)(?![&|=])", after):
                    continue
            if textre.match(r"\s*=(?!=)", after):
                continue  # assigned again (the next ballot)
            bitwise = textre.match(r"\s*(?:&|\||\^)=?(?![&|])", after) or (
                textre.search(r"(?:[&|^]=?)\s*\(?\s*$", before)
                and not textre.search(r"(?:&&|\|\|)\s*\(?\s*$", before)
            )
            if bitwise:
                self._lane_bits(w.start())
                continue
            if textre.match(r"\s*-\s*1\b", after) and textre.search(r"[&|^]=?\s*\(?\s*$", before):
                continue  # b & (b - 1): the lowest set bit cleared
            cond_before = textre.search(r"(?:\(|!|&&|\|\||\?|return)\s*$", before)
            cond_after = textre.match(r"\s*(?:\)|!=\s*0\b|==\s*0\b|&&|\|\||\?|;)", after)
            call = textre.search(r"(?<![\w.])(?P<f>[A-Za-z_]\w*)\s*\(\s*$", before)
            if call is not None and call.group("f") in ("if", "while", "for", "switch", "return"):
                call = None
            if cond_before and cond_after and call is None:
                continue  # if (b), b != 0, return b;
            if textre.search(r"_sync\s*\(\s*$", before):
                continue  # the mask of another warp call
            what = "copies" if textre.search(r"(?<![=!<>])=\s*$", before) else "uses"
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
        for one in textre.finditer(r"(?<![\w.])(?P<one>1[uU]?|0[xX]1[uU]?)(?=\s*<<)", code[s:e]):
            at = s + one.start()
            lit = one.group("one")
            self.site(at, at + len(lit), "1ull", "ballot", f"{lit} << lane -> 1ull << lane")

    def lane_uses(self) -> None:
        code = self.code
        wanted = {n for n, k in self.kinds.items() if k in (*_LANE_KINDS, "N32")}
        at: dict[str, list[int]] = {}  # every use of each, found in one pass over the unit
        if wanted:
            for m in _NAME_NOT_MEMBER.finditer(code, self.a, self.b):
                if m.group(0) in wanted:
                    at.setdefault(m.group(0), []).append(m.start())
        for name, kind in self.kinds.items():
            if kind not in (*_LANE_KINDS, "N32"):
                continue
            for pos in at.get(name, ()):
                if pos == self.defs.get(name):
                    continue
                if kind == "N32":  # a warp count: wrong only as a count of warps in the grid
                    if self._grid_statement(pos):
                        self.block(
                            pos,
                            f"`{_line_text(self.src, pos)}` numbers warps across the grid: the "
                            "host sizes the grid by 32-lane warps",
                        )
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
            if _BALLOT.search(line) or not self.ballot_vars.isdisjoint(
                m.group(0) for m in _NAME_NOT_FIELD.finditer(line)
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
            return (
                f"`{_line_text(self.src, pos)}` scales the {what} number `{name}`: a data "
                "layout of 32-lane warps"
            )
        mult = textre.match(r"[+-]\s*(\d+)\b", after) or textre.search(r"\b(\d+)\s*[+-]$", before)
        if mult is not None and int(mult.group(1)) % 32 == 0 and int(mult.group(1)) > 0:
            return (
                f"`{_line_text(self.src, pos)}` offsets the {what} number by {mult.group(1)}: "
                "a data layout of 32-lane warps"
            )
        enclosing = self._enclosing(pos)
        if enclosing is not None and enclosing[0] == "[" and enclosing[1] in self.shared:
            if enclosing[1] in self.fixed_shared and kind == "L32":
                return (
                    f"`{_line_text(self.src, pos)}` indexes `{enclosing[1]}` by the lane number; "
                    "its size does not follow the wave"
                )
            return None
        if enclosing is not None:
            why = self.index_context(pos)
            if why is not None:
                if "blockIdx" in code[pos - 60 : pos + 60]:
                    line = _line_text(self.src, pos)
                    return f"`{line}` mixes the {what} number with the block number"
                return why
            return None
        stmt = code[max(self.a, code.rfind(";", self.a, pos)) : code.find(";", pos)]
        if "blockIdx" in stmt:
            return (
                f"`{_line_text(self.src, pos)}` numbers {what}s across the grid: the host sizes "
                "the grid by 32-lane warps"
            )
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
                    m = textre.search(
                        r"([A-Za-z_]\w*)\s*(?:<[^<>;]*>)?\s*$", code[max(lo, i - 60) : i]
                    )
                    return ch, (m.group(1) if m else None)
                depth -= 1
            elif ch in ";{}":
                return None
            i -= 1
        return None

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
                    f"`{name}` is 32 too (`{_line_text(self.src, m.start())}`): it cannot be "
                    "told from the warp width",
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
        if textre.match(r"(?:/\s*2|>>\s*1)(?![\w.])", a) or (b.endswith("[") and a.startswith("]")):
            return None  # half the warp; an array dimension or index
        if textre.match(r"=\s*32[uU]?\s*[;,]", a):
            return None  # its own definition
        if b.endswith(("%", "/")):
            if self.kind(self._left(lo + len(b) - 1)) in ("T", "G", "N", "L32", "W32", "LHW"):
                return None
            return (
                f"`{_line_text(self.src, start)}` divides data by `{name}`: a bit position or a "
                "data index, not a lane"
            )
        amp = textre.search(r"&\s*\(\s*$", b)
        if amp is not None and textre.match(r"-\s*1\s*\)", a):
            if self.kind(self._left(lo + amp.start())) in ("T", "G", "L32", "W32", "LHW"):
                return None
            return f"`{_line_text(self.src, start)}` masks data with `{name} - 1`: a bit position"
        if textre.search(r"(?:[<>]=?|==|!=|\+=|-=)\s*$", b) or textre.match(r"(?:[<>]=?|==|!=)", a):
            return None  # a bound, a comparison, a stride
        if textre.match(r"-\s*1\b", a) or textre.search(r"=\s*[A-Za-z_][\w.]*\s*\+\s*$", b):
            return None  # the last lane; i = i + WS
        if textre.search(
            r"(?:tiled_partition|thread_block_tile|Warp(?:Reduce|Scan))\s*<[^;<>]*$", b
        ):
            return None
        if textre.search(r"\b(?:int|unsigned)\s+\w+\s*=\s*$", b) and textre.match(r"[,)]", a):
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
        for m in textre.finditer(
            r"\[\s*(?P<v>[A-Za-z_]\w*)\s*[+-]\s*16\s*\]|\b(?P<w>[A-Za-z_]\w*)\s*<\s*16\b",
            code[self.a : self.b],
        ):
            v = m.group("v") or m.group("w")
            if self.kinds.get(v) in ("T", "D", "L32") or _TID_NAME.fullmatch(v):
                self.block(
                    self.a + m.start(),
                    f"`{_line_text(self.src, self.a + m.start())}`: a warp-synchronous step "
                    "over 32 lanes",
                )

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
        var = textre.fullmatch(r"[A-Za-z_]\w*", block)
        if var is not None:
            text = self._defined_before(block, pos) or text
        thirty_two = _THIRTY_TWO.search(text)
        value = int_value(text)
        warp_name = any(n in self.consts for n in _WORD.findall(text)) or textre.search(
            r"(?i)warp|lane", text
        )
        if thirty_two or warp_name or (value is not None and value < 64):
            notes.append(
                Note(
                    pos,
                    f"launched with `{' '.join(text.split())[:60]}` threads per block",
                )
            )
        geometry = self._geometry()
        if geometry:
            notes.append(
                Note(
                    pos,
                    "the launching code sizes work with a 32: "
                    f"`{' '.join(geometry[0].split())[:70]}`",
                )
            )

    # Asked once per launch, answered once per function: a host function of 50 KB of
    # launches searched its whole body again for each (20 s; third review).

    def _defined_before(self, name: str, pos: int) -> str | None:
        """What ``name = ...;`` (or ``name(...)``, ``name{...}``) first sets it to in this
        function, when that ends before ``pos``."""
        defs: dict[str, re.Match[str] | None] = self.__dict__.setdefault("_defs", {})
        if name not in defs:
            body = self.code[self.a : self.b]
            defs[name] = textre.search(
                rf"(?<![\w.]){re.escape(name)}\s*(?:\(|\{{|=)\s*(?P<e>[^;]*);", body
            )
        m = defs[name]
        return m.group("e") if m is not None and self.a + m.end() <= pos else None

    def _geometry(self) -> list[str]:
        """The statements of this function that size work with a 32."""
        if "_geometry_found" not in self.__dict__:
            self.__dict__["_geometry_found"] = [
                s
                for s in textre.split(r"[;{}]", self.code[self.a : self.b])
                if _THIRTY_TWO.search(s) and _HOST_GEOMETRY.search(s)
            ]
        found: list[str] = self.__dict__["_geometry_found"]
        return found
