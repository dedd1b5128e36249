"""What the CUDA/C++ rule passes share: the sink they report through and small helpers.

A pass is a function ``(sink) -> None`` that reads ``sink.src`` (the lexed
source, see :mod:`gpuport.scan.cxx`) and calls :meth:`Sink.hit` with an
offset. The sink turns the offset into a 1-based line and column, marks the
finding guarded (lowered to info) when the line sits in a ROCm branch or in a
branch only NVIDIA's compiler sees (``#ifdef __CUDA_ARCH__``, see
:mod:`.cond`), or when its rule is folded into a file-level blocker
(:attr:`Sink.fold`), drops it when the line sits in a branch that is never
compiled (``#if 0``), and reports each rule at most once per line.
`gpuport hipify` runs the same passes on its input.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable, Iterator

from gpuport import textre
from gpuport.intervals import first_holding, in_any
from gpuport.models import Severity
from gpuport.scan.cxx import CxxSource, Directive, _guard_map
from gpuport.scan.cxx_cond import nvidia_only_lines
from gpuport.scan.cxx_expr import rocm_guard_expr, rocm_polarity
from gpuport.scan.cxx_ints import constexpr_rocm_lines
from gpuport.scan.project.cxx_selectors import dropped_spans
from gpuport.scan.project.rocm_defines import without_defined
from gpuport.scan.rules.base import RULES, FileContext

HIP_LANG_EXT = (
    "https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html"
)


class Sink:
    """Reports findings for one file; knows the source's positions and guards."""

    def __init__(self, ctx: FileContext, src: CxxSource) -> None:
        self.ctx = ctx
        self.src = src
        self.code = src.code
        self._seen: set[tuple[str, int]] = set()
        self._defines: dict[str, tuple[int, str]] | None = None
        self._widths: dict[str, str | None] = {}
        self._declared: dict[str, list[int]] | None = None
        facts = ctx.facts
        self._nvidia = nvidia_only_lines(
            src.directives, src.line_count, facts.false_names if facts else frozenset()
        )
        self._shims = facts.shims if facts else {}
        self._derived = _derived_guard(src, facts.rocm_names, facts.rocm_values) if facts else None
        self._selectors = facts.selectors if facts else {}
        self._dropped: list[tuple[int, int, str]] | None = None
        self._constexpr: list[tuple[int, int]] | None = None
        self._host: list[tuple[int, int, str]] | None = None
        self._bare: tuple[int, int] | bool | None = False  # not worked out yet
        #: Rules whose hits are lowered to info because a file-level finding already says
        #: the file must be rewritten (CUTLASS/CuTe, GP315); ``folded`` counts them.
        self.fold: frozenset[str] = frozenset()
        self.folded = 0

    def lowered(self, line: int) -> bool:
        """Whether 1-based ``line`` is in a ROCm branch or in a branch that only a compiler
        defining ``__CUDA_ARCH__`` sees (hip-clang never does)."""
        if self.src.guarded(line) and not self._in_bare_branch(line):
            return True
        derived = self._derived
        if derived is not None and 0 < line < len(derived) and derived[line]:
            return True
        if self._constexpr is None:  # `if constexpr (<ROCm test>)` chains, found once
            self._constexpr = constexpr_rocm_lines(self.src)
        if in_any(self._constexpr, line, closed=True):  # every chain per finding: quadratic
            return True
        nv = self._nvidia
        return nv is not None and 0 < line < len(nv) and nv[line] > 0

    def _in_bare_branch(self, line: int) -> bool:
        """Whether ``line`` lies in a whole-file branch ROCm never compiles that has nothing
        in its place (``#ifndef __HIP_PLATFORM_AMD__`` ... ``#endif`` around every definition
        of the file, no ``#else``, no other platform test inside): the ROCm build compiles an
        empty file, so the code still needs a port (thirty-ninth re-run F26: two lines turned
        BLOCKED into MAJOR WORK)."""
        if self._bare is False:
            self._bare = _bare_nvidia_branch(self.src)
        span = self._bare
        return isinstance(span, tuple) and span[0] < line < span[1]

    def _dropped_by(self, offset: int) -> str | None:
        """The selector macro (``AMREX_HIP_OR_CUDA``) whose argument holding ``offset`` a
        ROCm build drops, if any."""
        if self._dropped is None:  # closed ranges, searched by first_holding
            self._dropped = [
                (lo, hi - 1, name) for lo, hi, name in dropped_spans(self.src, self._selectors)
            ]
        return first_holding(self._dropped, offset)

    def host_only_at(self, offset: int) -> bool:
        """Whether ``offset`` lies in the body of a host-only function (no ``__device__``,
        ``__global__`` or device-qualifier macro): code no GPU lane runs, such as launch
        set-up that numbers grid dimensions (issue 24, thirteenth sample: jittor's
        ``mask = 1 << tid`` over tx..bz)."""
        if self._host is None:
            from gpuport.scan.rules.native.warp_units import find_units

            self._host = sorted(
                (u.body[0], u.body[1], u.name)
                for u in find_units(self.src)
                if u.kind == "host"
                and not u.both
                and u.body is not None
                # a device lambda inside (`[=] __device__ (int i) {...}`) is lane code
                and "__device__" not in self.code[u.body[0] : u.body[1]]
            )
        return first_holding(self._host, offset) is not None

    def lowered_at(self, offset: int) -> bool:
        return self.lowered(self.src.line_of(offset))

    @property
    def defines(self) -> dict[str, tuple[int, str]]:
        """Object-like ``#define NAME value`` in this file: name -> (offset of name, value)."""
        if self._defines is None:
            found: dict[str, tuple[int, str]] = {}
            for m in _DEFINE.finditer(self.code):
                line_start = self.code.rfind("\n", 0, m.start()) + 1
                if not self.code[line_start : m.start()].strip() and not self.src.dead_at(
                    m.start()
                ):
                    found.setdefault(m.group("name"), (m.start("name"), m.group("value").strip()))
            self._defines = found
        return self._defines

    def _declarations(self) -> dict[str, list[int]]:
        """Every identifier that may be declared (followed by ``=``, ``,``, ``)``, ``{``,
        ``;`` or ``[``) -> its offsets: one pass over the file for all names (a pass per
        name was quadratic: 8,000 chained masks in 400 KB took 3.8 s)."""
        if self._declared is None:
            found: dict[str, list[int]] = {}
            for m in iter_words(_DECLARED, self.code):
                found.setdefault(m.group(1), []).append(m.start())
            self._declared = found
        return self._declared

    def declared_width(self, name: str) -> str | None:
        """ "narrow" when ``name`` is declared (or #defined) as a 32-bit integer in this file,
        "wide" when as anything else, None when no declaration is found."""
        if name in self._widths:
            return self._widths[name]
        widths: set[str] = set()
        if name in self.defines:
            widths.add("narrow" if MASK32.fullmatch(self.defines[name][1].strip("() ")) else "wide")
        for start in self._declarations().get(name, ()):
            if self.src.dead_at(start):
                continue
            words = _WORDS_BEFORE.search(self.code, max(0, start - 120), start)
            typ = trailing_type(words.group().split()) if words else []
            if typ:
                widths.add("narrow" if is_32bit(typ) else "wide")
        width = "narrow" if widths == {"narrow"} else ("wide" if widths else None)
        self._widths[name] = width
        return width

    def wants(self, *rule_ids: str) -> bool:
        """Whether any of these rules is enabled for this run (skip work when not)."""
        return any(self.ctx.enabled(r) for r in rule_ids)

    def hit(
        self,
        rule_id: str,
        offset: int,
        message: str | None = None,
        *,
        fix: str | None = None,
        severity: Severity | None = None,
        guarded: bool = False,
    ) -> bool:
        """Report ``rule_id`` at ``offset``; False when this line already has it or is
        never compiled (``#if 0``). Lowered to info when ``guarded``, on a :meth:`lowered`
        line or when the rule is in :attr:`fold`."""
        line, col = self.src.line_col(offset)
        if self.src.dead(line):
            return False
        key = (rule_id, line)
        if key in self._seen:
            return False
        self._seen.add(key)
        guarded = guarded or self.lowered(line)
        if not guarded and self._selectors:
            dropped = self._dropped_by(offset)
            if dropped is not None:
                guarded = True
                message = (
                    f"{message or RULES[rule_id].title} (an argument of {dropped} that a "
                    f"ROCm build drops: {dropped} is its argument "
                    f"{self._selectors[dropped][0] + 1} there, {self._selectors[dropped][1]})"
                )
        if not guarded and self._shims:
            word = _WORD.match(self.code, offset)
            shim = self._shims.get(word.group()) if word else None
            if shim is not None:
                guarded = True
                message = (
                    f"{message or RULES[rule_id].title} (covered by the project's ROCm "
                    f"shim for {word.group()} at {shim})"  # type: ignore[union-attr]
                )
        folding = not guarded and rule_id in self.fold
        before = len(self.ctx.findings)
        self.ctx.report(
            rule_id,
            line,
            col,
            message=message,
            fix=fix,
            guarded=guarded or folding,
            severity=severity,
        )
        if folding and len(self.ctx.findings) > before:
            self.folded += 1
        return True


Pass = Callable[[Sink], None]


def first_unlowered(sink: Sink, pattern: re.Pattern[str], start: int = 0) -> re.Match[str] | None:
    """The first match outside a ROCm or NVIDIA-only branch, else the first match (never
    in ``#if 0``)."""
    first: re.Match[str] | None = None
    for m in iter_words(pattern, sink.code, start):
        if sink.src.dead_at(m.start()):
            continue
        if not sink.lowered_at(m.start()):
            return m
        first = first or m
    return first


_WORD = textre.compile(r"\w+")
_DEFINE = textre.compile(r"\#[ \t]*define[ \t]+(?P<name>\w+)(?![\w(])(?P<value>[^\n]*)")
_WORDS_BEFORE = textre.compile(r"(?:[\w:]+[ \t\r\n]+)+$")
_DECLARED = textre.compile(r"([A-Za-z_]\w*)\s*(?=[=,){;\[])")
_TYPE_WORD = textre.compile(
    r"const|constexpr|static|volatile|register|signed|unsigned|long|short|int|"
    r"auto|uint|size_t|(?:std::)?u?int\d+_t|__hip_lane_mask_t|"
    r"__device__|__shared__|__constant__|__forceinline__|inline"
)
_QUALIFIERS = frozenset(
    {
        "const",
        "constexpr",
        "static",
        "volatile",
        "register",
        "__device__",
        "__shared__",
        "__constant__",
        "__forceinline__",
        "inline",
    }
)
_TYPE32 = frozenset(
    {
        "unsigned",
        "int",
        "uint",
        "uint32_t",
        "int32_t",
        "std::uint32_t",
        "std::int32_t",
        "unsigned int",
        "signed",
        "signed int",
    }
)
#: A literal that is a full 32-lane mask of a 32-bit type.
MASK32 = textre.compile(
    r"(?:0[xX]0*[fF]{8}|4294967295)[uU]?|~0[uU]?|-1|\(\s*(?:unsigned|uint32_t)"
    r"(?:\s+int)?\s*\)\s*-1"
    # a functional cast: uint32_t(-1), unsigned(-1) (causal-conv1d's spelling)
    r"|(?:std::)?(?:uint32_t|unsigned)\s*\(\s*-1\s*\)"
)


def split_top_level(text: str) -> list[str]:
    """``text`` split at commas that are not inside (), [] or {}."""
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def word_start(code: str, pos: int) -> bool:
    """Whether ``pos`` starts a word (the character before it is not an identifier char)."""
    return pos == 0 or not (code[pos - 1].isalnum() or code[pos - 1] == "_")


def loader_declaration(code: str, pos: int) -> bool:
    """Whether the NVIDIA API name at ``pos`` is declared by a dynamic loader, not used: the
    name a ``#define`` gives (``#define cuTexRefCreate cuTexRefCreate_oro``), a function
    pointer it declares (``extern tcuTexRefCreate *cuTexRefCreate_oro;``, ``... = nullptr;``)
    or a type in a function type's ``typedef`` (``typedef CUresult CUDAAPI
    tcuTensorMapEncodeTiled(CUtensorMap *tensorMap, ...);``). cuew, bundled by Orochi
    (twenty-third sample) and others, loads the driver API by name: its uses are elsewhere."""
    # a window on each side, not the whole line: a minified one-line file has many matches
    lo = max(0, pos - 400)
    newline = code.rfind("\n", lo, pos)
    head = code[max(newline + 1, lo) : pos].strip()
    end = pos
    while end < min(len(code), pos + 200) and (code[end].isalnum() or code[end] == "_"):
        end += 1
    stop = code.find("\n", end, end + 400)
    rest = code[end : stop if stop >= 0 else end + 400]
    if newline >= 0 or lo == 0:  # the line's start is in the window
        words = head.replace("#", " ").split()
        if words[:1] == ["define"] and (len(words) == 1 or (len(words) == 2 and not rest.strip())):
            return True  # the name defined, or a rename's whole body (`#define cuX cuX_oro`)
        if head.startswith("typedef") and "(" in head:
            return True
    return head.endswith("*") and rest.lstrip()[:1] in (";", "=", ",")


def iter_words(pattern: re.Pattern[str], code: str, start: int = 0) -> Iterator[re.Match[str]]:
    """Matches of ``pattern`` that start at a word boundary.

    Patterns are written to begin with a literal (``cublas``, not ``\\bcublas``) so the
    regex engine can skip ahead in C; the boundary is checked here instead, which is
    many times faster on large files.
    """
    for m in pattern.finditer(code, start):
        first = code[m.start()] if m.start() < len(code) else ""
        if not (first.isalnum() or first == "_") or word_start(code, m.start()):
            yield m


def trailing_type(words: list[str]) -> list[str]:
    """The type words at the end of ``words`` (what precedes a declared name), qualifiers
    dropped."""
    out: list[str] = []
    for w in reversed(words):
        if not _TYPE_WORD.fullmatch(w):
            break
        out.append(w)
    return [w for w in reversed(out) if w not in _QUALIFIERS]


def is_32bit(type_words: list[str]) -> bool:
    return bool(type_words) and " ".join(type_words) in _TYPE32


_INT_LITERAL = textre.compile(
    r"(0[xX][0-9a-fA-F']+|0[bB][01']+|\d[\d']*)(?:[uU]?[lL]{0,2}|[lL]{1,2}[uU])"
)
_CONST_EXPR = textre.compile(r"[\d\sxXa-fA-FuUlL'()+\-*/<>%]+")


def int_value(expr: str) -> int | None:
    """The value of a constant integer expression made of literals only
    (``96 * 1024``, ``(1 << 16) + 1``, ``0x10000u``); None for anything else.
    Evaluated with :mod:`ast` on a whitelist of nodes, never with ``eval``."""
    expr = expr.strip()
    if not expr or not _CONST_EXPR.fullmatch(expr):
        return None
    parts: list[str] = []
    last = 0
    for m in _INT_LITERAL.finditer(expr):
        value = _c_int(m.group(1))
        if value is None:
            return None
        parts += [expr[last : m.start()], str(value)]
        last = m.end()
    py = ("".join(parts) + expr[last:]).replace("/", "//")
    try:
        tree = ast.parse(py, mode="eval")
    except SyntaxError:
        return None
    return _eval(tree.body)


def _c_int(literal: str) -> int | None:
    """A C integer literal's value (``0x1F``, ``0b101``, ``017`` octal, ``1'000``); None when
    it is malformed (``09``) or longer than any real one (the fuzzer found both)."""
    digits = literal.replace("'", "")
    if not digits or len(digits) > 64:
        return None
    try:
        if digits[:2].lower() in ("0x", "0b"):
            return int(digits, 0)
        if len(digits) > 1 and digits[0] == "0":
            return int(digits, 8)
        return int(digits)
    except ValueError:
        return None


def _eval(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        val = _eval(node.operand)
        return None if val is None else (-val if isinstance(node.op, ast.USub) else val)
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left), _eval(node.right)
        if left is None or right is None:
            return None
        ops: dict[type[ast.operator], Callable[[int, int], int]] = {
            ast.Add: lambda a, b: a + b,
            ast.Sub: lambda a, b: a - b,
            ast.Mult: lambda a, b: a * b,
            ast.FloorDiv: lambda a, b: a // b if b else 0,
            ast.Mod: lambda a, b: a % b if b else 0,
            ast.LShift: lambda a, b: a << b if 0 <= b < 64 else 0,
            ast.RShift: lambda a, b: a >> b if 0 <= b < 64 else 0,
        }
        fn = ops.get(type(node.op))
        return None if fn is None else fn(left, right)
    return None


_PP_LINE = textre.compile(r"^[ \t]*#[^\n]*$", re.M)


def _bare_nvidia_branch(src: CxxSource) -> tuple[int, int] | None:
    """(line of the ``#if``, line of its ``#endif``) of the one top-level conditional that
    holds all the file's code when ROCm never takes it and it has no other branch, else
    None (see :meth:`Sink._in_bare_branch`)."""
    top: list[list[int]] = []  # [if index, endif index] of top-level conditionals
    depth = 0
    directives = src.directives
    for i, d in enumerate(directives):
        if d.kind in ("if", "ifdef", "ifndef"):
            if depth == 0:
                top.append([i, -1])
            depth += 1
        elif d.kind == "endif":
            depth -= 1
            if depth == 0 and top:
                top[-1][1] = i
        elif depth == 1 and top:
            top[-1].append(i)  # an #else/#elif of the top-level conditional
        if depth < 0:
            return None
    branches = [t for t in top if _never_on_rocm(directives[t[0]])]
    if len(branches) != 1 or len(branches[0]) != 2 or branches[0][1] < 0:
        return None
    first, last = branches[0]
    if any(d.rocm for d in directives[first + 1 : last]):
        return None  # a ROCm side inside it
    lo, hi = directives[first].line, directives[last].line
    start, end = src.line_span(lo)[0], src.line_span(hi)[1]
    inside, outside = src.code[start:end], src.code[:start] + "\n" + src.code[end:]
    if _PP_LINE.sub("", outside).strip() or "{" not in inside:
        return None  # code of the file outside it, or no definition inside
    return lo, hi


def _never_on_rocm(d: Directive) -> bool:
    """``#ifndef USE_ROCM``, ``#if !defined(__HIP_PLATFORM_AMD__)``: ROCm never takes it."""
    if not d.rocm:
        return False
    return d.kind == "ifndef" or (d.kind == "if" and rocm_polarity(d.expr.strip()) == -1)


def _derived_guard(
    src: CxxSource, names: frozenset[str], values: frozenset[str]
) -> bytearray | None:
    """Lines inside a conditional on a project macro that stands for a ROCm test
    (:mod:`gpuport.scan.project.rocm_defines`: ggml's ``AMD_MFMA_AVAILABLE`` defined only in a
    HIP branch; LC-framework's ``WS``, 64 or 32 by ``__AMDGCN_WAVEFRONT_SIZE``, whose value
    only is a test: ``#ifdef WS`` is true everywhere; issue 24, twenty-seventh sample, and
    forty-sixth re-run F4); None when no directive of the file names one."""
    if not names and not values:
        return None
    changed = False
    directives: list[Directive] = []
    for d in src.directives:
        if (
            not d.rocm
            and d.kind in _COND_KINDS
            and (
                rocm_guard_expr(d.kind, d.expr, names)
                or (
                    bool(values)
                    and d.kind in ("if", "elif")
                    and rocm_guard_expr(d.kind, without_defined(d.expr), values)
                )
            )
        ):
            d = dataclasses.replace(d, rocm=True)
            changed = True
        directives.append(d)
    return _guard_map(directives, src.line_count) if changed else None


_COND_KINDS = frozenset({"if", "ifdef", "ifndef", "elif", "elifdef", "elifndef"})
