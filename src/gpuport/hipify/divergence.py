"""Where a warp intrinsic may run with only some of a wavefront's lanes.

HIP's ``*_sync`` warp functions (HIP >= 6.2) check their mask against the lanes that execute
the call (``__hip_check_mask``: ``__builtin_trap()`` unless ``NDEBUG``). A 32-bit full mask
does not compile on HIP; made 64-bit, it compiles, and then traps wherever fewer than the
wavefront's 64 lanes reach the call. On NVIDIA a 32-lane branch (``if (lane < 16)``,
``if (threadIdx.x < 32)``, ``if (warp_id == 0)`` with ``warp_id = threadIdx.x / 32``) can
still hold a whole warp; on a 64-lane wavefront it never holds all 64. So a full mask is
widened only where the call is not *lane-divergent*:

* inside an ``if``/``else``, loop or ``switch`` whose condition depends on the thread or lane
  index (``threadIdx``, ``__lane_id()``, a ``thread_rank()``, a variable or parameter named
  for a lane or thread index, or a variable assigned from any of those, transitively);
* after a ``return`` (or, in the same loop, a ``break``/``continue``) taken under such a
  condition, in the same function;
* in a function (or a function-like macro) that is called at such a place anywhere in the
  files analysed together, or whose callers are, a few calls up.

The analysis is lexical and conservative: it answers "divergent" whenever such a condition
is seen, even one that is uniform per wavefront (``threadIdx.x / warpSize == 0``); a site it
cannot place is judged by the function it is in. :class:`Divergence` reads a set of files
once; :meth:`Divergence.why` answers for an offset.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass

from gpuport import textre
from gpuport.scan.cxx import CxxSource

from .divergence_sweeps import around as _around
from .divergence_sweeps import rhs as _rhs
from .narrow_blocks import NarrowBlocks

__all__ = ["Divergence"]

_DIRECTIVE = textre.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
_DEFINE = textre.compile(r"[ \t]*#[ \t]*define[ \t]+(\w+)\(")
_SEP = textre.compile(r"[{};]")
_NOT_FUNCTION = textre.compile(
    r"^\s*(?:namespace|extern|class|struct|union|enum)\b|\b(?:if|for|while|switch|catch)\s*\($"
    r"|^\s*(?:else|do|try)\s*$"
)
_ATTRIBUTE = frozenset(
    {
        "__launch_bounds__",
        "__attribute__",
        "alignas",
        "__declspec",
        "__align__",
        "decltype",
        "noexcept",
        "throw",
        "requires",
        "sizeof",
        "operator",
        "if",
        "for",
        "while",
        "switch",
        "return",
    }
)
_CLASS = textre.compile(r"\b(?:class|struct|union)\b")
_LAMBDA = textre.compile(r"(\w+)\s*=\s*\[[^\]]*\]\s*(?:\(|$)")
_CONTROL = textre.compile(r"\b(if|for|while|switch|do|else|return|break|continue)\b")
_PAREN_AFTER = textre.compile(r"\s*(?:constexpr\s*)?\(")
_ELSE = textre.compile(r"\s*else\b")
_WHILE = textre.compile(r"\s*while\s*\(")
_STATEMENT = textre.compile(r"(if|for|while|switch|do)\b")
_IDENT = textre.compile(r"[A-Za-z_]\w*")
_ASSIGN = textre.compile(r"\b([A-Za-z_]\w*)\s*(?:\[[^\]\n;]*\]\s*)*(?:[-+*/%&|^]|<<|>>)?=(?!=)")
_WORDS = textre.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
#: names that are the thread or lane index whatever they are assigned from
_SEEDS = frozenset({"threadIdx", "__lane_id", "__laneid", "thread_rank", "thread_index"})
#: words that make a name a count or a size (``lane_count``), not an index
_COUNTS = frozenset({"count", "size", "num", "width", "stride", "n", "bits", "per"})
#: how many calls up a site's function is followed to its callers
_DEPTH = 4


@functools.lru_cache(maxsize=4096)
def lane_named(name: str) -> bool:
    """Whether ``name`` names a lane or thread index (``lane``, ``lane_id``, ``laneId``,
    ``warpLane``, ``tid``, ``thread_id``, ``threadIdx``), not a count (``num_lanes``)."""
    if name in _SEEDS:
        return True
    words = {w.lower() for w in _WORDS.findall(name)}
    if words & _COUNTS:
        return False
    if words & {"lane", "laneid", "laneidx", "tid", "tidx", "ltid"}:
        return True
    return "thread" in words and bool(words & {"id", "idx", "index", "rank"})


def _blank_but_newlines(text: str) -> str:
    """``text`` with every character but a newline made a space."""
    return "\n".join(" " * len(line) for line in text.split("\n"))


@dataclass(frozen=True)
class _Region:
    start: int  # the controlled statement: after the condition, to its end
    end: int
    cond: tuple[int, int]
    kind: str  # if, else, for, while, do, switch


@dataclass
class _Function:
    name: str
    head: int  # where the head starts (after the previous `;`, `{` or `}`)
    body: tuple[int, int]  # the braces
    #: the class body a member function is defined in: called as ``x.name``, ``X::name``
    #: (or from inside that class), never as a free function of that name
    klass: tuple[int, int] | None = None
    regions: list[_Region] | None = None
    tainted: frozenset[str] | None = None
    exits: list[tuple[int, str]] | None = None  # return/break/continue offsets
    #: per region: whether its condition depends on the lane
    lane: list[bool] | None = None
    #: exits under a lane condition: (offset, keyword, end of the last such region, that
    #: region, the loop a break/continue leaves or None)
    lane_exits: list[tuple[int, str, int, _Region, _Region | None]] | None = None
    #: why the function is too large to judge (its warp calls are then taken as divergent)
    too_large: str | None = None
    #: the regions sorted by start, their starts, each one's enclosing region and innermost
    #: lane region (-1: none): a question is answered by a walk up, not a loop over all
    nest: tuple[list[int], list[int], list[int], list[int]] | None = None


_ANY_CALL = textre.compile(r"\b(\w+)\s*(?:<[^;{}()<>]*(?:<[^;{}]*?>)?[^;{}()<>]*>)?\s*\(")


class _File:
    def __init__(self, rel: str, src: CxxSource) -> None:
        self.rel = rel
        self.src = src
        self.code = _DIRECTIVE.sub(lambda m: _blank_but_newlines(m.group()), src.code)
        self.limit = len(self.code) + 1  # a function's braces however far apart
        self.functions = self._functions()
        self.starts = [f.body[0] for f in self.functions]
        self._macro_lines: dict[int, int] = {}  # line -> the first line of its continued run
        self._calls: dict[str, list[int]] | None = None

    def calls(self) -> dict[str, list[int]]:
        """Name -> where it is called (``name(``, ``name<T>(``; not ``name<<<``), in one pass
        over the file: a pattern per name over every file was quadratic (12,000 device
        functions with warp calls: > 60 s; thirty-fifth re-run F3)."""
        if self._calls is None:
            found: dict[str, list[int]] = {}
            for m in _ANY_CALL.finditer(self.src.code):
                if "<<<" not in m.group():
                    found.setdefault(m.group(1), []).append(m.start())
            self._calls = found
        return self._calls

    def _functions(self) -> list[_Function]:
        code, out = self.code, []
        # per open brace: a function body or inside one; the class body it is (else None)
        stack: list[tuple[bool, tuple[int, int] | None]] = []
        last = -1
        for m in _SEP.finditer(code):
            c = m.group()
            if c == "{":
                head = code[last + 1 : m.start()]
                inside = bool(stack) and stack[-1][0]
                mine = not inside and "(" in head and not _NOT_FUNCTION.search(head.strip())
                close = self.src.match_close(m.start(), self.limit) if not inside else None
                klass = None
                if mine and close is not None:
                    owner = stack[-1][1] if stack else None
                    out.append(_Function(_name(head), last + 1, (m.start(), close), owner))
                elif not inside and close is not None and _CLASS.search(head):
                    klass = (m.start(), close)
                stack.append((inside or (mine and close is not None), klass))
            elif c == "}" and stack:
                stack.pop()
            last = m.start()
        return out

    def function_at(self, offset: int) -> _Function | None:
        i = bisect.bisect_right(self.starts, offset) - 1
        if i >= 0 and self.functions[i].body[0] < offset < self.functions[i].body[1]:
            return self.functions[i]
        return None

    def macro_at(self, offset: int) -> str | None:
        """The function-like macro whose definition holds ``offset``."""
        start = self.src.line_of(offset)
        line, walked = start, []
        # each line's first line is remembered: a walk back per call was calls x lines (a
        # #define of 6,666 continued shuffle lines: 65 s; the stall test's own input)
        while line not in self._macro_lines and line > 1:
            if not self.src.code_line(line - 1).rstrip().endswith("\\"):
                break
            walked.append(line)
            line -= 1
        line = self._macro_lines.get(line, line)
        for seen in (start, *walked):
            self._macro_lines[seen] = line
        m = _DEFINE.match(self.src.code_line(line))
        return m.group(1) if m else None

    # -- inside one function ---------------------------------------------------------------

    def regions(self, fn: _Function) -> list[_Region]:
        if fn.regions is not None:
            return fn.regions
        code, src = self.code, self.src
        lo, hi = fn.body
        out: list[_Region] = []
        exits: list[tuple[int, str]] = []
        for m in _CONTROL.finditer(code, lo + 1, hi):
            kw = m.group(1)
            if kw in ("return", "break", "continue"):
                exits.append((m.start(), kw))
                continue
            if kw == "else":
                continue  # read with its if
            if kw == "do":
                end = self._stmt_end(m.end(), hi)
                w = _WHILE.match(code, end, hi)
                if w is not None:
                    open_ = w.end() - 1
                    close = src.match_close(open_)
                    if close is not None:
                        out.append(_Region(m.end(), end, (open_ + 1, close), "do"))
                continue
            p = _PAREN_AFTER.match(code, m.end(), hi)
            if p is None:
                continue
            close = src.match_close(p.end() - 1)
            if close is None or close >= hi:
                continue
            end = self._stmt_end(close + 1, hi)
            cond = (p.end(), close)
            out.append(_Region(close + 1, end, cond, kw))
            if kw == "if":
                e = _ELSE.match(code, end, hi)
                if e is not None:
                    out.append(_Region(e.end(), self._stmt_end(e.end(), hi), cond, "else"))
        fn.regions, fn.exits = out, exits
        return out

    def _stmt_end(self, pos: int, limit: int, depth: int = 0) -> int:
        """The end of the statement that starts at ``pos`` (a block, a control statement or
        an expression up to its ``;``)."""
        code, src = self.code, self.src
        while pos < limit and code[pos] in " \t\r\n":
            pos += 1
        if pos >= limit or depth > 50:
            return limit
        if code[pos] == "{":
            close = src.match_close(pos, self.limit)
            return limit if close is None or close > limit else close + 1
        k = _STATEMENT.match(code, pos, limit)
        if k is not None and k.group(1) != "do":
            p = _PAREN_AFTER.match(code, k.end(), limit)
            close = src.match_close(p.end() - 1) if p is not None else None
            if close is None or close >= limit:
                return limit
            end = self._stmt_end(close + 1, limit, depth + 1)
            if k.group(1) == "if":
                e = _ELSE.match(code, end, limit)
                if e is not None:
                    end = self._stmt_end(e.end(), limit, depth + 1)
            return end
        if k is not None:  # do ... while (...);
            end = self._stmt_end(pos + 2, limit, depth + 1)
            semi = next(iter(src.top_level(end, limit, ";")), None)
            return limit if semi is None else semi + 1
        semi = next(iter(src.top_level(pos, limit, ";")), None)
        return limit if semi is None else semi + 1

    def tainted(self, fn: _Function) -> frozenset[str]:
        """The names in ``fn`` that hold a lane or thread index."""
        if fn.tainted is not None:
            return fn.tainted
        code = self.code
        lo, hi = fn.body
        pairs: list[tuple[str, set[str]]] = []
        names: set[str] = set()
        budget = READ_PER_CHAR * (hi - lo) + 100_000  # right-hand sides read, in characters
        for m in _ASSIGN.finditer(code, lo, hi):
            rhs = _rhs(code, m.end(), hi)
            budget -= len(rhs)
            if budget < 0:  # assignments chained over thousands of characters each
                fn.too_large = _too_large("assignments that read more than the function holds")
                fn.tainted = frozenset()
                return fn.tainted
            used = set(_IDENT.findall(rhs))
            if any(lane_named(w) for w in used):
                names.add(m.group(1))
            else:
                pairs.append((m.group(1), used))
        for _ in range(8):
            grew = False
            for lhs, used in pairs:
                if lhs not in names and not used.isdisjoint(names):
                    names.add(lhs)
                    grew = True
            if not grew:
                break
        fn.tainted = frozenset(names)
        return fn.tainted

    @staticmethod
    def _depends(expr: str, names: set[str] | frozenset[str]) -> bool:
        return any(w in names or lane_named(w) for w in _IDENT.findall(expr))

    def _lane_facts(self, fn: _Function) -> None:
        regions = self.regions(fn)
        if len(regions) > MOST_REGIONS or len(fn.exits or []) > MOST_REGIONS:
            fn.too_large = _too_large(f"{len(regions):,} branches and loops")
            return
        names = self.tainted(fn)
        if fn.too_large is not None:
            return
        code = self.code
        fn.lane = [self._depends(code[r.cond[0] : r.cond[1]], names) for r in regions]
        out: list[tuple[int, str, int, _Region, _Region | None]] = []
        exits = fn.exits or []
        holding = _around(regions, [at for at, _ in exits])
        if holding is None:
            fn.too_large = _too_large(f"{len(exits):,} exits under deeply nested branches")
            return
        for (at, kw), around in zip(exits, holding, strict=True):
            under = [regions[i] for i in around if fn.lane[i]]
            if not under:
                continue
            loop = None
            if kw != "return":  # a break/continue leaves its loop (or a switch) only
                kinds = (
                    ("for", "while", "do", "switch") if kw == "break" else ("for", "while", "do")
                )
                inner = [regions[i] for i in around if regions[i].kind in kinds]
                if not inner or inner[-1].kind == "switch":
                    continue
                loop = inner[-1]
            out.append((at, kw, max(r.end for r in under), under[0], loop))
        # returns first, the earliest-ending one first (one is enough); then break/continue
        out.sort(key=lambda e: (e[1] != "return", e[2] if e[1] == "return" else e[0]))
        returns = [e for e in out if e[1] == "return"][:1]
        fn.lane_exits = returns + [e for e in out if e[1] != "return"]
        order = sorted(range(len(regions)), key=lambda i: (regions[i].start, -regions[i].end))
        parent = [-1] * len(regions)
        lane_up = [-1] * len(regions)  # the innermost lane region holding each (or itself)
        stack: list[int] = []
        for i in order:
            while stack and regions[stack[-1]].end <= regions[i].start:
                stack.pop()
            parent[i] = stack[-1] if stack else -1
            lane_up[i] = i if fn.lane[i] else (lane_up[parent[i]] if parent[i] != -1 else -1)
            stack.append(i)
        fn.nest = (order, [regions[i].start for i in order], parent, lane_up)

    def divergent_in(self, fn: _Function, offset: int) -> str | None:
        """Why ``offset`` in ``fn`` may run with some lanes only (None: all of them)."""
        if fn.lane_exits is None and fn.too_large is None:
            self._lane_facts(fn)
        if fn.too_large is not None:
            return fn.too_large
        regions, nest = fn.regions or [], fn.nest
        if nest is not None and regions:
            order, starts, parent, lane_up = nest
            j = bisect.bisect_right(starts, offset) - 1
            c = order[j] if j >= 0 else -1
            while c != -1 and not regions[c].start <= offset < regions[c].end:
                c = parent[c]  # the last region to start ended before: its enclosing ones
            if c != -1 and lane_up[c] != -1:
                return self._say(regions[lane_up[c]], "inside")
        for at, kw, last, r, loop in fn.lane_exits or []:
            if kw == "return" and last > offset:
                continue  # the earliest-ending return (the only one kept) ends after offset
            if at >= offset or offset < last:
                continue  # in the same branch, after its exit: not reached by those lanes
            if loop is not None and not loop.start <= offset < loop.end:
                continue
            return self._say(r, f"after the `{kw}` taken")
        return None

    def _say(self, r: _Region, where: str) -> str:
        cond = " ".join(self.code[r.cond[0] : r.cond[1]].split())
        if len(cond) > 60:
            cond = cond[:57] + "..."
        kw = "if" if r.kind == "else" else r.kind
        line = self.src.line_of(r.cond[0])
        return f"{where} `{kw} ({cond})` ({self.rel}:{line}), which depends on the lane"


#: Branches and loops (or exits) in one function the lane analysis reads; past it (or past
#: 2,000,000 enclosing regions over all exits: 20,000 nested `if`s around 20,000 returns took
#: > 2 GB; thirty-fourth re-run F2), its warp calls are taken as divergent (the mask stays
#: 32-bit). Real kernels have a few hundred.
MOST_REGIONS = 50_000
#: Characters of right-hand sides read per character of a function (chained assignments
#: `a+=a+=...` each read to the end of the chain: thirty-fourth re-run F3)
READ_PER_CHAR = 8


#: Call sites the caller walks read over one run (every warp call asks): 3,000 helpers called
#: from one function with 3,000 callers walked those callers per helper (thirty-fourth re-run
#: F4). Past it, every later warp call is taken as divergent.
MOST_SITES_READ = 200_000
_SITES_SPENT = (
    "not judged: the callers of these files' warp code are too many to follow (over "
    f"{MOST_SITES_READ:,} call sites read), so it may run on some lanes only"
)


def _too_large(what: str) -> str:
    return (
        f"not judged: {what} (more than the lane analysis reads in one function), so it may "
        "run on some lanes only"
    )


def _name(head: str) -> str:
    lam = _LAMBDA.search(head)
    if lam is not None:
        return lam.group(1)
    depth = 0
    for m in textre.finditer(r"[()]|(\w+)\s*\(", head):
        if m.group() == ")":
            depth -= 1
            continue
        if depth == 0 and m.group(1) and m.group(1) not in _ATTRIBUTE:
            return m.group(1)
        depth += 1
    return ""


class Divergence:
    """The lane-divergence of warp calls over ``files`` (relative path -> lexed source),
    read together: a helper in a header is judged by its callers in every file."""

    def __init__(self, files: dict[str, CxxSource]) -> None:
        self.sources = files
        self._files: dict[str, _File] = {}  # read when first asked about
        self._calls: dict[str, list[tuple[_File, int]]] = {}
        self._callers: dict[str, str | None] = {}
        self._narrow = NarrowBlocks(files, self._body_at)
        self._launched: dict[tuple[str, int], str | None] = {}
        self._sites_read = 0  # call sites read by every question so far (MOST_SITES_READ)

    def why(self, rel: str, offset: int) -> str | None:
        """Why the warp call at ``offset`` of ``rel`` may run with only some lanes (a
        sentence), or None: a lane branch or exit (above), or a kernel running it that is
        launched with blocks that leave lanes of a 64-lane wavefront empty
        (:mod:`.narrow_blocks`)."""
        f = self._file(rel)
        if f is None:
            return None
        if self._sites_read > MOST_SITES_READ:
            return _SITES_SPENT
        macro = f.macro_at(offset)
        if macro is not None:
            got = self._called(macro, None, 0, set())
            return got if got is not None else self._launch_why(f, macro, None, -1)
        fn = f.function_at(offset)
        if fn is None:
            return None
        got = f.divergent_in(fn, offset)
        if got is None and fn.name:
            got = self._called(fn.name, self._owner(f, fn), 0, set())
        if got is None and fn.name:
            got = self._launch_why(f, fn.name, self._owner(f, fn), fn.body[0])
        return got

    def _body_at(self, rel: str, offset: int) -> tuple[int, int] | None:
        f = self._file(rel)
        fn = f.function_at(offset) if f is not None else None
        return fn.body if fn is not None else None

    def _launch_why(
        self, f: _File, name: str, owner: tuple[str, int, int] | None, at: int
    ) -> str | None:
        """Why a kernel that runs ``name`` (itself, or a caller up to four calls up) may run
        in blocks narrower than a wavefront (once per function or macro)."""
        key = (f.rel if at >= 0 else "#" + name, at)
        if key not in self._launched:
            self._launched[key] = self._narrow.why(self._reaching(name, owner))
        return self._launched[key]

    def _reaching(self, name: str, owner: tuple[str, int, int] | None) -> list[str]:
        """``name`` and the functions and macros that call it, up to four calls up (the
        callers :meth:`_called` follows), nearest first."""
        out = [name]
        seen = {f"{name}@{owner}"}
        level = [(name, owner)]
        for _ in range(_DEPTH):
            up: list[tuple[str, tuple[str, int, int] | None]] = []
            for callee, klass in level:
                for f, at in self._call_sites(callee):
                    self._sites_read += 1
                    if self._sites_read > MOST_SITES_READ:
                        return out
                    if klass is not None and not _member_call(f, at, klass):
                        continue
                    macro = f.macro_at(at)
                    fn = None if macro is not None else f.function_at(at)
                    caller = macro or (fn.name if fn is not None else "")
                    cowner = self._owner(f, fn) if fn is not None else None
                    if caller and f"{caller}@{cowner}" not in seen and len(seen) < 400:
                        seen.add(f"{caller}@{cowner}")
                        out.append(caller)
                        up.append((caller, cowner))
            level = up
        return out

    @staticmethod
    def _owner(f: _File, fn: _Function) -> tuple[str, int, int] | None:
        return None if fn.klass is None else (f.rel, *fn.klass)

    def _file(self, rel: str) -> _File | None:
        if rel not in self._files:
            src = self.sources.get(rel)
            if src is None:
                return None
            self._files[rel] = _File(rel, src)
        return self._files[rel]

    def _called(
        self, name: str, owner: tuple[str, int, int] | None, depth: int, seen: set[str]
    ) -> str | None:
        """Why a call of ``name`` (a function, a member of ``owner``'s class, or a macro)
        may run with some lanes only."""
        key = f"{name}@{owner}"
        if depth >= _DEPTH or key in seen:
            return None
        seen.add(key)
        if depth == 0 and key in self._callers:
            return self._callers[key]
        answer = None
        for f, at in self._call_sites(name):
            self._sites_read += 1
            if self._sites_read > MOST_SITES_READ:
                answer = _SITES_SPENT
                break
            if owner is not None and not _member_call(f, at, owner):
                continue
            macro = f.macro_at(at)
            if macro is not None:
                got = self._called(macro, None, depth + 1, seen)
            else:
                fn = f.function_at(at)
                if fn is None:
                    continue
                got = f.divergent_in(fn, at)
                if got is not None:
                    line = f.src.line_of(at)
                    got = f"`{name}` is called at {f.rel}:{line}, {got}"
                elif fn.name:
                    got = self._called(fn.name, self._owner(f, fn), depth + 1, seen)
            if got is not None:
                answer = got
                break
        if depth == 0:
            self._callers[key] = answer
        return answer

    def _call_sites(self, name: str) -> list[tuple[_File, int]]:
        if name not in self._calls:
            out: list[tuple[_File, int]] = []
            for rel in self.sources:
                f = self._file(rel)
                if f is None:
                    continue
                for at in f.calls().get(name, ()):
                    if f.function_at(at) is None and f.macro_at(at) is None:
                        continue  # a declaration or a definition's head
                    out.append((f, at))
            self._calls[name] = out
        return self._calls[name]


def _member_call(f: _File, at: int, owner: tuple[str, int, int]) -> bool:
    """Whether the call at ``at`` can be of a member function of ``owner``'s class: through
    an object or a qualifier, or from inside that class."""
    rel, lo, hi = owner
    if f.rel == rel and lo < at < hi:
        return True
    j = at - 1
    code = f.src.code
    while j >= 0 and code[j] in " \t\r\n":
        j -= 1
    return j >= 0 and code[j] in ".>:"
