"""Kernels launched with blocks that may leave lanes of a 64-lane wavefront empty.

HIP's ``*_sync`` mask check (``__hip_assert(MASK == __ballot(true))``, HIP >= 6.2) compares the
mask with the lanes that run the call. A block of 32 threads on a 64-lane wavefront (CDNA) has
no upper 32 lanes, so a 64-bit full mask names lanes that do not exist and traps, with no branch
at all; so does any block whose thread count is not a multiple of 64 (its last wavefront is part
empty). On wave32 GPUs (RDNA) HIP cuts the mask to 32 bits first, and such blocks are fine.

:class:`NarrowBlocks` reads every launch of the files analysed together (``kernel<<<grid,
block, ...>>>`` as :func:`gpuport.scan.cxx.launch_configs` finds them, and
``hipLaunchKernelGGL(kernel, grid, block, ...)``) and says why a kernel may run in such a
block: the block's thread count (``x * y * z``) is known and is under 64 or not a multiple of
64 (``<<<g, 32>>>``, ``dim3 block(32, 1)``, ``WARP_SIZE`` defined as 32), or it is unknown and
made from a 32 (``dim3 block(32, ny)``, ``WARP_SIZE * nwarps``, a constant defined as 32 in one
branch). A launch whose size is unknown and has no 32 in it (a parameter, ``std::min(256,
n)``) is not a reason: that would refuse nearly every mask. Values come from the function
holding the launch (``dim3 block(...)``, ``int threads = ...``, before the launch) and the
project's integer constants (:func:`gpuport.scan.cxx_ints.int_constants`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

from gpuport import textre
from gpuport.scan.cxx import CxxSource, launch_configs
from gpuport.scan.cxx_ints import int_constants
from gpuport.scan.rules.native.common import int_value, split_top_level

__all__ = ["WAVEFRONT", "NarrowBlocks"]

#: the lanes of a CDNA wavefront
WAVEFRONT = 64
_GGL = textre.compile(r"hipLaunchKernelGGL\s*\(")
_KERNEL_ARG = textre.compile(r"(?:HIP_KERNEL_NAME\s*\(\s*)?(?:::)?(?:\w+\s*::\s*)*(\w+)")
_NAME_END = textre.compile(r"(\w+)\s*$")
_DIM3 = textre.compile(r"(?:::)?dim3\s*[({](?P<args>.*)[)}]", re.S)
_IDENT = textre.compile(r"(?<![\w.>:])[A-Za-z_]\w*")
_THIRTY_TWO = textre.compile(r"(?<![\w.'])(?:32|0[xX]20)(?:[uU]?[lL]{0,2})(?![\w.'])")
_DEPTH = 4


@dataclass(frozen=True)
class _Size:
    threads: int | None  # x * y * z when known
    from32: bool  # made from a 32 (a literal, a constant defined as 32)
    shown: str  # the value as read, for the reason


_UNKNOWN = _Size(None, False, "")
#: names the launch check evaluates in one run (and 5 more per launch): a project constant
#: is worked out again per launch (its value may read the launching function's names), so a
#: wide #define tree times
#: many launches was a stall (a 47 KB file, 26 s; thirty-seventh re-run F9); past it every
#: launch is "not judged", which leaves its masks 32-bit (only a fix lost; the most in a real
#: tree of the port backtest: 11, ggml)
MOST_EVALUATIONS = 2_000
EVALUATIONS_PER_LAUNCH = 5


@dataclass(frozen=True)
class _Launch:
    rel: str
    offset: int
    block: str  # the block argument as written


class NarrowBlocks:
    """The launches of ``sources`` (relative path -> lexed source). ``body_at(rel, offset)``:
    the braces of the function holding ``offset`` (None at file scope)."""

    def __init__(
        self,
        sources: dict[str, CxxSource],
        body_at: Callable[[str, int], tuple[int, int] | None],
    ) -> None:
        self.sources = sources
        self._body_at = body_at
        self._launches: dict[str, list[_Launch]] | None = None
        self._consts: dict[str, set[str]] | None = None
        self._answers: dict[_Launch, str | None] = {}
        # what a name holds at a launch, each worked out once: a chain of #defines each
        # summing copies of the one before was re-evaluated per copy, exponential (933 bytes,
        # > 60 s in port; thirty-fourth re-run F6)
        self._held: dict[tuple[str, int, str], _Size] = {}
        self._evals = 0  # names evaluated for every launch so far (MOST_EVALUATIONS)
        self._most: int | None = None  # the run's budget of evaluations, worked out once
        self._matches: dict[
            tuple[str, tuple[int, int], str], tuple[list[int], list[re.Match[str]]]
        ] = {}

    def why(self, kernels: Iterable[str]) -> str | None:
        """Why one of ``kernels`` (names, in order) may run in a block narrower than a
        wavefront or not a whole number of them: the first such launch, or None."""
        launches = self._all_launches()
        for name in kernels:
            for launch in launches.get(name, ()):
                got = self._judge(name, launch)
                if got is not None:
                    return got
        return None

    # -- the launches -----------------------------------------------------------------------

    def _all_launches(self) -> dict[str, list[_Launch]]:
        if self._launches is not None:
            return self._launches
        out: dict[str, list[_Launch]] = {}
        for rel, src in self.sources.items():
            code = src.code
            if "<<<" in code:
                for lt, c0, c1 in launch_configs(code):
                    name = self._pointee(rel, lt, _kernel_before(code, lt))
                    args = split_top_level(code[c0:c1])
                    if name and len(args) >= 2 and args[1].strip():
                        out.setdefault(name, []).append(_Launch(rel, lt, args[1].strip()))
            if "hipLaunchKernelGGL" in code:
                for m in _GGL.finditer(code):
                    spans = src.call_args(m.end() - 1)
                    if len(spans) < 3:
                        continue
                    k = _KERNEL_ARG.match(code, spans[0][0] + _lead(code, spans[0]))
                    block = code[spans[2][0] : spans[2][1]].strip()
                    if k is not None and block:
                        out.setdefault(k.group(1), []).append(_Launch(rel, m.start(), block))
        self._launches = out
        return out

    def _pointee(self, rel: str, lt: int, name: str | None) -> str | None:
        """The kernel a pointer variable launched at ``lt`` holds (``auto kernel =
        &k<Traits>; kernel<<<...>>>``), else ``name``."""
        body = self._body_at(rel, lt) if name else None
        if body is None or name is None:
            return name
        last = self._last_before(rel, body, _pointer_pattern(name), lt)
        return last.group(1) if last is not None else name

    def _last_before(
        self, rel: str, body: tuple[int, int], pat: re.Pattern[str], at: int
    ) -> re.Match[str] | None:
        """The last match of ``pat`` in the function ``body`` that ends by ``at``: the body is
        searched once per pattern, not once per launch (10,000 launches in one function were
        quadratic, > 60 s; thirty-fifth re-run F1)."""
        key = (rel, body, pat.pattern)
        found = self._matches.get(key)
        if found is None:
            ms = list(pat.finditer(self.sources[rel].code, body[0], body[1]))
            found = self._matches[key] = ([m.end() for m in ms], ms)
        i = bisect.bisect_right(found[0], at) - 1
        return found[1][i] if i >= 0 else None

    def _budget(self) -> int:
        if self._most is None:  # once: it is asked per evaluation
            launches = sum(len(v) for v in self._all_launches().values())
            self._most = MOST_EVALUATIONS + EVALUATIONS_PER_LAUNCH * launches
        return self._most

    def _judge(self, kernel: str, launch: _Launch) -> str | None:
        if launch not in self._answers:
            size = self._size(launch.rel, launch.offset, launch.block, 0)
            line = self.sources[launch.rel].line_of(launch.offset)
            where = f"`{kernel}` is launched at {launch.rel}:{line} with `{_short(launch.block)}`"
            shown = "" if size.shown == launch.block.strip() else f" (`{_short(size.shown)}`)"
            answer = None
            if self._evals > self._budget():
                answer = (
                    f"{where}: not judged (over {self._budget():,} names evaluated for the "
                    "launches' block sizes), so its blocks may leave wavefront lanes empty"
                )
            elif size.threads is not None and size.threads > 0:
                if size.threads < WAVEFRONT or size.threads % WAVEFRONT:
                    answer = (
                        f"{where} threads per block{shown}: {size.threads} threads, not whole "
                        f"{WAVEFRONT}-lane wavefronts (a wavefront's other lanes do not run)"
                    )
            elif size.from32:
                answer = (
                    f"{where} threads per block{shown}: made from a 32, its size unknown here "
                    f"(a 32-thread block leaves half of a {WAVEFRONT}-lane wavefront empty)"
                )
            self._answers[launch] = answer
        return self._answers[launch]

    # -- sizes ------------------------------------------------------------------------------

    def _constants(self) -> dict[str, set[str]]:
        if self._consts is None:
            merged: dict[str, set[str]] = {}
            for src in self.sources.values():
                if "define" in src.code or "constexpr" in src.code:
                    for name, values in int_constants(src.code).items():
                        merged.setdefault(name, set()).update(values)
            self._consts = merged
        return self._consts

    def _size(self, rel: str, at: int, expr: str, depth: int) -> _Size:
        """The thread count of the block ``expr`` (a ``dim3``, a variable, an integer
        expression) as seen at ``at`` of ``rel``."""
        expr = expr.strip()
        if depth > _DEPTH or not expr:
            return _Size(None, bool(_THIRTY_TWO.search(expr)), expr)
        d = _DIM3.fullmatch(expr)
        if d is not None:
            return self._dims(rel, at, d.group("args"), depth)
        if _IDENT.fullmatch(expr) is not None:
            return self._name(rel, at, expr, depth)
        total = expr
        from32 = bool(_THIRTY_TWO.search(expr))
        known = True
        # right to left, so the offsets still to replace stay valid
        for m in reversed(list(_IDENT.finditer(expr))):
            if expr[m.end() :].lstrip().startswith("("):
                known = False  # a call: its value is not read
                continue
            got = self._name(rel, at, m.group(), depth)
            from32 = from32 or got.from32
            if got.threads is None:
                known = False
                continue
            total = total[: m.start()] + f"({got.threads})" + total[m.end() :]
        value = int_value(total) if known else None
        return _Size(value, from32, expr)

    def _dims(self, rel: str, at: int, args: str, depth: int) -> _Size:
        parts = [p for p in split_top_level(args) if p.strip()]
        total: int | None = 1
        from32 = False
        for p in parts[:3]:
            got = self._size(rel, at, p, depth + 1)
            from32 = from32 or got.from32
            total = None if total is None or got.threads is None else total * got.threads
        return _Size(total, from32, "(" + ", ".join(p.strip() for p in parts) + ")")

    def _name(self, rel: str, at: int, name: str, depth: int) -> _Size:
        """What ``name`` holds at ``at``: its last definition before ``at`` in the function
        holding ``at``, else a project constant (worked out once per launch and name)."""
        key = (rel, at, name)
        held = self._held.get(key)
        if held is None:
            self._held[key] = _UNKNOWN  # a name defined through itself: unknown
            held = self._held[key] = self._name_once(rel, at, name, depth)
        return held

    def _name_once(self, rel: str, at: int, name: str, depth: int) -> _Size:
        self._evals += 1
        if self._evals > self._budget():
            return _UNKNOWN  # the launch is "not judged" (see _judge): the mask stays 32-bit
        body = self._body_at(rel, at)
        if body is not None:
            code = self.sources[rel].code
            last = self._last_before(rel, body, _definition_pattern(name), at)
            if last is not None:
                op = last.group("op")
                if op == "=":
                    end = code.find(";", last.end(), at)
                    value = code[last.end() : end if end != -1 else at]
                    return self._size(rel, at, value, depth + 1)
                close = self.sources[rel].match_close(last.end() - 1)
                if close is None or close > at:
                    return _UNKNOWN
                inner = code[last.end() : close]
                if (last.group("type") or "").startswith("dim3"):
                    return self._dims(rel, at, inner, depth + 1)
                return self._size(rel, at, inner, depth + 1)
        values = self._constants().get(name)
        if not values:
            return _UNKNOWN
        sizes = [self._size(rel, at, v, depth + 1) for v in sorted(values)]
        from32 = any(s.from32 or s.threads == 32 for s in sizes)
        first = sizes[0].threads
        if first is not None and all(s.threads == first for s in sizes):
            return _Size(first, from32, sizes[0].shown)
        return _Size(None, from32, " or ".join(s.shown for s in sizes))


@lru_cache(maxsize=4096)
def _pointer_pattern(name: str) -> re.Pattern[str]:
    return textre.compile(
        rf"(?<![\w.>:]){re.escape(name)}\s*=\s*&?\s*(?:::)?(?:\w+\s*::\s*)*(\w+)\s*[<;]"
    )


@lru_cache(maxsize=4096)
def _definition_pattern(name: str) -> re.Pattern[str]:
    return textre.compile(
        rf"(?<![\w.>:])(?P<type>dim3\s+|\w+\s+)?{re.escape(name)}\s*(?P<op>[({{]|=(?!=))"
    )


def _lead(code: str, span: tuple[int, int]) -> int:
    text = code[span[0] : span[1]]
    return len(text) - len(text.lstrip())


def _kernel_before(code: str, lt: int) -> str | None:
    """The kernel's name before the ``<<<`` at ``lt`` (its template arguments skipped)."""
    j = lt - 1
    while j >= 0 and code[j] in " \t\r\n":
        j -= 1
    if j >= 0 and code[j] == ">":  # kernel<T, 32><<<...
        depth = 0
        stop = max(-1, j - 2000)
        while j > stop:
            c = code[j]
            if c in ";{}":
                return None
            if c == ">":
                depth += 1
            elif c == "<":
                depth -= 1
                if depth == 0:
                    break
            j -= 1
        if depth != 0:
            return None
        j -= 1
    m = _NAME_END.search(code, max(0, j - 200), j + 1)
    return m.group(1) if m is not None else None


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."
