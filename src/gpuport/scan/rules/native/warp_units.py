"""Where the warp-width code of a CUDA file lives: its functions, macros and constants
(issue 25, the first half of the lane-meaning analysis; :mod:`.warp_facts` reads what each
says about the warp and :mod:`.warp_meaning` decides).

A *unit* is a piece of code that is judged as one: a function body (``__global__``,
``__device__``, or host), an object- or function-like ``#define`` whose body matters to the
warp (a 32, a warp constant, a shuffle, ``threadIdx``), or a declaration outside any function
that defines a warp constant (``#define WARP_SIZE 32``, ``constexpr int kNWarps = kNThreads /
32;``). Units are named (function, macro or constant name), so a use of a name links the units.

Nothing here imports a rule module: :mod:`gpuport.hipify.wave64` and the scan's GP303-GP307
passes both use it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from gpuport import textre
from gpuport.scan.cxx import CxxSource

__all__ = ["DEVICE_WORDS", "Unit", "find_units", "warpish"]

UnitKind = Literal["kernel", "device", "host", "macro", "decl"]

#: Declaration words that make a function device code.
DEVICE_WORDS = ("__global__", "__device__")
#: a qualifier macro named for a kernel (``KERNEL``, ``GLOBAL_KERNEL``, ``MY_KERNEL_API``)
_KERNEL_WORD = textre.compile(r"\b(?:[A-Z0-9]+_)*KERNEL(?:_[A-Z0-9]+)*\b")

_DIRECTIVE_LINE = textre.compile(r"^[ \t]*\#[^\n\\]*(?:\\\n[^\n\\]*)*", re.M)
_MACRO = textre.compile(
    r"^[ \t]*\#[ \t]*define[ \t]+(?P<name>[A-Za-z_]\w*)(?P<params>\([^)\n]*\))?"
    r"(?P<body>[^\n\\]*(?:\\\n[^\n\\]*)*)",
    re.M,
)
_BRACE_OR_END = textre.compile(r"[{};]")
_SCOPE_HEAD = textre.compile(r"\b(?:namespace|struct|class|union)\b|\bextern\s*\"\s*\"", re.S)
_ENUM_HEAD = textre.compile(r"\benum\b")
_CALL_NAME = textre.compile(
    r"(?P<name>~?[A-Za-z_]\w*(?:\s*::\s*~?[A-Za-z_]\w*)*)\s*(?:<[^<>;{}]*>\s*)?\($"
)
_NOT_NAMES = frozenset(
    {
        "__launch_bounds__",
        "__attribute__",
        "__declspec",
        "alignas",
        "decltype",
        "__align__",
        "if",
        "for",
        "while",
        "switch",
        "return",
        "sizeof",
    }
)
_TAIL_WORD = textre.compile(
    r"const|noexcept|override|final|volatile|mutable|&&?|->|[\w:<>,*&]+|__attribute__"
)
_CTOR_INIT = textre.compile(r"\)\s*:\s*[\w:<>]+\s*[({]")
_WARP_TOKENS = textre.compile(
    r"(?<![\w.])(?:32|31|16|0[xX]1[fF])(?![\w.])|threadIdx|__shfl|shfl|__ballot|__activemask"
    r"|warpSize|lane|warp|__popc|__ffs|blockDim|tiled_partition"
)
#: a template parameter with the default 32, in a template header (the name and the 32)
_TEMPLATE32 = textre.compile(
    r"\btemplate\s*<[^<>;{}]{0,300}?\b(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<v>32)[uU]?\s*[,>]"
)
_DEFINE32 = textre.compile(r"^\(?\s*32[uU]?\s*\)?$")
_DECL_ASSIGN = textre.compile(r"(?P<name>[A-Za-z_]\w*)[ \t\r\n]*(?:=|\{)(?P<rhs>[^;={}]*)\}?$")
#: a declaration longer than this is not a constant definition (and regexes stay linear)
_DECL_LIMIT = 400


def _function_head(head: str) -> bool:
    """Whether ``head`` (the text before a ``{``) ends a function declarator: ``)`` and then
    only qualifiers, a trailing return type or a constructor's initialiser list."""
    close = head.rfind(")")
    if close == -1:
        return False
    tail = head[close + 1 :]
    if not tail.strip():
        return True
    if len(tail) > 300:
        return False
    if _CTOR_INIT.search(head, max(0, close - 1)) or textre.match(r"\s*:\s*[\w:<>]+\s*[({]", tail):
        return True
    words = tail.replace("(", " ").replace(")", " ").split()
    if words and words[0] == ":":
        return True
    return all(_TAIL_WORD.fullmatch(w) for w in words) and not any(w in ("=", ";") for w in words)


def warpish(name: str) -> bool:
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


@dataclass
class Unit:
    """A function, macro or constant declaration judged as one (see the module docstring)."""

    idx: int
    kind: UnitKind
    name: str
    #: where the unit's code is read: a function's parameters and body, a macro's body,
    #: a declaration's statement
    start: int
    end: int
    #: for a constant (a ``decl`` unit or an object-like macro equal to 32): the span of the 32
    value32: tuple[int, int] | None = None
    #: the function's body braces (functions only)
    body: tuple[int, int] | None = None
    #: a host function that is also device code (``__host__ __device__``)
    both: bool = False
    names: set[str] = field(default_factory=set)

    @property
    def device(self) -> bool:
        return self.kind in ("kernel", "device")


def _blank_directives(code: str) -> str:
    """``code`` with every preprocessor line (and its continuations) blanked, newlines kept."""
    out: list[str] = []
    continued = False
    for line in code.split("\n"):
        if continued or line.lstrip(" \t").startswith("#"):
            out.append(" " * len(line))
            continued = line.endswith("\\")
        else:
            out.append(line)
            continued = False
    return "\n".join(out)


def device_macros(code: str) -> set[str]:
    """Object-like macros that stand for device qualifiers (``#define DEVICE __forceinline__
    __device__``): a function declared with one is device code."""
    out: set[str] = set()
    for m in _MACRO.finditer(code):
        if m.group("params") is None and any(w in m.group("body") for w in DEVICE_WORDS):
            out.add(m.group("name"))
    return out


class _Finder:
    def __init__(self, src: CxxSource) -> None:
        self.src = src
        self.code = _blank_directives(src.code)
        self.dev = device_macros(src.code)
        self.kernel_macros = {
            m.group("name")
            for m in _MACRO.finditer(src.code)
            if m.group("params") is None and "__global__" in m.group("body")
        }
        self.units: list[Unit] = []
        # and the usual library qualifiers (CUTLASS_DEVICE, C10_HOST_DEVICE, HOST_DEVICE...)
        self._dev_re = textre.compile(
            r"\b(?:"
            + "|".join(re.escape(w) for w in (*DEVICE_WORDS, *sorted(self.dev)))
            + r"|[A-Z0-9_]*DEVICE[A-Z0-9_]*)\b"
        )

    def match(self, pos: int) -> int | None:
        return self.src.match_close(pos)

    def scan(self, lo: int, hi: int) -> None:
        """Declarations in ``[lo, hi)``: descend into namespaces and classes, record
        function bodies, skip initialisers."""
        code = self.code
        head_start = lo
        pos = lo
        while pos < hi:
            m = _BRACE_OR_END.search(code, pos, hi)
            if m is None:
                return
            ch = m.group()
            if ch in ";}":
                self._decl(head_start, m.start()) if ch == ";" else None
                head_start = pos = m.end()
                continue
            close = self.match(m.start())
            if close is None or close > hi:
                return
            head = code[head_start : m.start()]
            if "(" in head and _function_head(head):
                self._function(head_start, head, m.start(), close)
            elif _SCOPE_HEAD.search(head) and not _ENUM_HEAD.search(head) and "=" not in head:
                self.scan(m.start() + 1, close)
            # `struct S {...} s;` / `= {...};`: the rest of the statement belongs to it
            head_start = pos = close + 1

    def _function(self, head_start: int, head: str, open_: int, close: int) -> None:
        name, params = self._name(head, head_start)
        if name is None or params is None:
            return
        device = self._dev_re.search(head) is not None
        # `KERNEL void f(...)`: a kernel qualifier macro (OpenMM's common kernels, defined as
        # `extern "C" __global__` in another file: issue 24, twelfth sample), by its body
        # when this file defines it, else by its name
        quals = head[: params - head_start].rsplit(name.split("::")[-1], 1)[0]  # before the name
        kernel = "__global__" in head or _KERNEL_WORD.search(quals) is not None
        kernel = kernel or any(w in self.kernel_macros for w in quals.split())
        both = device and "__host__" in head
        self._template32(head_start, params)
        kind: UnitKind = "kernel" if kernel else "device" if device else "host"
        self.units.append(
            Unit(
                idx=len(self.units),
                kind=kind,
                name=name.split("::")[-1].strip(),
                start=params,
                end=close + 1,
                body=(open_, close),
                both=both,
            )
        )

    def _template32(self, start: int, end: int) -> None:
        """A warp constant as a template parameter's default in the function's head
        (``template <typename FP, unsigned warp_size = 32>``, qsim: issue 24, eighteenth
        sample): a constant unit from its name to the 32, as ``const int WS = 32;`` is."""
        for m in _TEMPLATE32.finditer(self.code, start, end):
            if warpish(m.group("name")):
                at = m.end("v") - 2
                self.units.append(
                    Unit(len(self.units), "decl", m.group("name"), m.start("name"), at + 2,
                         value32=(at, at + 2))
                )  # fmt: skip

    def _name(self, head: str, base: int) -> tuple[str | None, int | None]:
        """The function's name and where its parameter list opens (an offset in the file)."""
        depth = 0
        for i, ch in enumerate(head):
            if ch == "(":
                if depth == 0:
                    m = _CALL_NAME.search(head, 0, i + 1)
                    if m is not None and m.group("name").split("::")[-1] not in _NOT_NAMES:
                        return m.group("name"), base + i
                depth += 1
            elif ch == ")":
                depth -= 1
        return None, None

    def _decl(self, start: int, end: int) -> None:
        """A declaration statement outside any function: a warp constant (``const int WS =
        32;``) or a candidate derived value (``constexpr int kNWarps = kNThreads / 32;``),
        kept later only when it is about the warp."""
        stmt = self.code[start:end]
        start += len(stmt) - len(stmt.lstrip())
        stmt = stmt.lstrip()
        if len(stmt) > _DECL_LIMIT or not ("=" in stmt or "{" in stmt):
            return
        m = _DECL_ASSIGN.search(self.code, start, end)
        if m is None or "(" in self.code[start : m.start("name")]:
            return
        name = m.group("name")
        if _DEFINE32.match(m.group("rhs").strip()):
            if not warpish(name):
                return
            at = m.start("rhs") + self.code[m.start("rhs") : m.end("rhs")].index("32")
            self.units.append(Unit(len(self.units), "decl", name, at, at + 2, value32=(at, at + 2)))
            return
        self.units.append(Unit(len(self.units), "decl", name, m.start("rhs"), end))

    def macros(self) -> None:
        code = self.src.code
        for m in _MACRO.finditer(code):
            name, body = m.group("name"), m.group("body")
            if self.src.dead_at(m.start()) or not body.strip() or name.startswith("GPUPORT_"):
                continue  # dead, empty, or hipify's own per-architecture block
            if m.group("params") is None and _DEFINE32.match(body.strip()):
                at = m.start("body") + body.index("32")
                value = (at, at + 2) if warpish(name) else None
                self.units.append(Unit(len(self.units), "macro", name, at, at + 2, value))
                continue
            self.units.append(Unit(len(self.units), "macro", name, m.start("body"), m.end()))


def find_units(src: CxxSource) -> list[Unit]:
    """The units of one lexed file (see the module docstring), in file order per kind."""
    f = _Finder(src)
    f.scan(0, len(f.code))
    f.macros()
    return f.units
