"""Branches only NVIDIA's compiler sees: code under ``__CUDA_ARCH__`` tests.

hip-clang never defines ``__CUDA_ARCH__`` (neither on the host pass nor on the
device pass), so a branch that is only live when it is defined is never compiled
on ROCm: ``#ifdef __CUDA_ARCH__``, ``#if defined(__CUDA_ARCH__) && X``, ``#if
__CUDA_ARCH__ >= 700``, and the ``#else`` of ``#ifndef __CUDA_ARCH__`` or ``#if
!defined(__CUDA_ARCH__)``. Hits there are lowered to info like those in a ROCm
branch. A test that another macro can still make true (``#if
defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)``) does not count, and
neither does the ``#if !defined(__CUDA_ARCH__)`` branch itself, which is the one
ROCm compiles.

The same holds for the other names only NVIDIA's toolchain defines (:data:`HIP_UNDEFINED`:
``__NVCC__``, ``CUDART_VERSION``, ``__CUDACC_VER_MAJOR__`` ...), and for ``CUDA_VERSION``
compared with a version number (``#if CUDA_VERSION >= 11000``): hip-clang leaves it undefined
(0), and torch's hipify turns it into ``TORCH_HIP_VERSION`` (600 for ROCm 6.0), which is below
every CUDA version number either way (issue 24). ``defined(CUDA_VERSION)`` alone differs
between the two and is left unknown.

A branch for a third backend is not compiled by a ROCm build either (issue 24, fifth round):
a macro a project or toolchain defines only when it builds for SYCL/oneAPI/DPC++, Metal or
MUSA (``AMREX_USE_SYCL``, ``__SYCL_DEVICE_ONLY__``, ``SYCL_LANGUAGE_VERSION``,
``GGML_USE_METAL``; :data:`OTHER_BACKEND`) is undefined on ROCm, so ``#ifdef AMREX_USE_SYCL``
is dead there like ``#ifdef __CUDA_ARCH__``. A name that turns such a backend off
(``NO_SYCL``, ``DISABLE_METAL``) is not one of them.

The directive lines are not part of a branch: GP317 still reports the test itself.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable

from gpuport import textre
from gpuport.scan.cxx import Directive, const_value

__all__ = ["HIP_UNDEFINED", "OTHER_BACKEND", "nvidia_only_lines", "without_cuda_arch"]

#: Macros that only NVIDIA's compiler or runtime headers define, which neither hip-clang nor
#: torch's hipify gives a value on ROCm.
HIP_UNDEFINED = frozenset(
    {
        "__NVCC__",
        "__CUDACC_VER_MAJOR__",
        "__CUDACC_VER_MINOR__",
        "__CUDACC_VER_BUILD__",
        "__CUDACC_RTC__",
        "CUDART_VERSION",
        "__CUDA_ARCH_FEAT_SM90_ALL",
        "__CUDA_ARCH_FEAT_SM100_ALL",
    }
)
#: nvcc's architecture-feature macros, one per arch-specific target (``sm_103a``: issue 24's
#: twelfth sample, torch-harmonics' tcgen05 gate): hip-clang defines none of them
_NV_FEATURE = textre.compile(r"__CUDA_ARCH_FEAT_SM\d+_ALL|__CUDA_ARCH_(?:FAMILY_)?SPECIFIC__")
#: A macro that says a build is for a third backend (not CUDA, not ROCm): the backend's name
#: as a whole part between underscores (``AMREX_USE_SYCL``, ``__SYCL_DEVICE_ONLY__``,
#: ``KOKKOS_ENABLE_SYCL``, ``GGML_USE_METAL``), unless a part turns it off (``NO_SYCL``).
OTHER_BACKEND = frozenset({"SYCL", "DPCPP", "ONEAPI", "METAL", "MUSA"})
_OFF_WORDS = frozenset({"NO", "NOT", "DISABLE", "DISABLED", "WITHOUT", "SKIP"})
_IDENT = textre.compile(r"\b[A-Za-z_]\w*")
#: ``__has_include`` of a header only NVIDIA's toolkit ships, with no HIP header and no
#: hipify mapping (libcu++'s barrier/pipeline, the async-copy intrinsics, CUTLASS/CuTe):
#: false on every ROCm route, as ``defined(__CUDA_ARCH__)`` is
_HAS_CUDA_ONLY = textre.compile(
    r"\b__has_include\s*\(\s*[<\"](?:cuda/(?:barrier|pipeline|annotated_ptr)"
    r"|cuda_pipeline\w*\.h|cuda_awbarrier\w*\.h|cute/[\w./]+|cutlass/[\w./]+)[>\"]\s*\)"
)


def other_backend_names(expr: str) -> list[str]:
    """The macros of :data:`OTHER_BACKEND` that ``expr`` names."""
    if not any(w in expr for w in OTHER_BACKEND):
        return []
    out = []
    for m in _IDENT.finditer(expr):
        parts = set(m.group(0).split("_"))
        if parts & OTHER_BACKEND and not parts & _OFF_WORDS and m.group(0) not in out:
            out.append(m.group(0))
    return out


#: ``CUDA_VERSION`` compared with a CUDA version number (4+ digits: 11000, 12080).
_VERSION_CMP = textre.compile(
    r"\bCUDA_VERSION\s*(?P<op>[<>]=?|[!=]=)\s*(?P<num>\d{4,}[uUlL]*)\b"
    r"|\b(?P<rnum>\d{4,}[uUlL]*)\s*(?P<rop>[<>]=?|[!=]=)\s*CUDA_VERSION\b"
)

_IF_KINDS = ("if", "ifdef", "ifndef")
_ELIF_KINDS = ("elif", "elifdef", "elifndef")
_ARCH = textre.compile(r"\b__CUDA_ARCH__\b")
_ARCH_DEFINED = textre.compile(r"\bdefined\s*(?:\(\s*__CUDA_ARCH__\s*\)|__CUDA_ARCH__\b)")
# The other side is a number or a project constant naming an architecture
# (``GGML_CUDA_CC_AMPERE``, ``CUDA_ARCH_AMPERE``): those are positive (compute capabilities).
_ARCH_CMP = textre.compile(
    r"\b__CUDA_ARCH__\s*(?P<op>[<>]=?|[!=]=)\s*(?P<num>\d+[uUlL]*|[A-Za-z_]\w*)\b"
    r"|\b(?P<rnum>\d+[uUlL]*|[A-Za-z_]\w*)\s*(?P<rop>[<>]=?|[!=]=)\s*__CUDA_ARCH__\b"
)
_CMP: dict[str, Callable[[int, int], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


def _sign(operand: str) -> int:
    if operand[0].isdigit():
        return 1 if operand.rstrip("uUlL").strip("0") else 0
    return 1


def _arch_cmp(m: re.Match[str]) -> str:
    """A comparison with ``__CUDA_ARCH__`` evaluated as the preprocessor does when it is
    not defined (an undefined name is 0): ``__CUDA_ARCH__ >= 700`` is 0."""
    # only the sign matters against 0, so no int() (ValueError past 4,300 digits); a name
    # is an architecture constant, positive
    if m.group("op"):
        value = _CMP[m.group("op")](0, _sign(m.group("num")))
    else:
        value = _CMP[m.group("rop")](_sign(m.group("rnum")), 0)
    return "1" if value else "0"


_LITERAL_CMP = textre.compile(
    r"(?<![\w.])(?P<a>\d{1,18})[uUlL]*\s*(?P<op>[<>]=?|[!=]=)\s*(?P<b>\d{1,18})[uUlL]*(?![\w.])"
)


def _literal_cmp(m: re.Match[str]) -> str:
    """``0 >= 12`` evaluated; left alone when an operand belongs to arithmetic around it
    (``A * 100 >= 120400``), which binds tighter than the comparison."""
    before = m.string[: m.start()].rstrip()[-1:]
    after = m.string[m.end() :].lstrip()[:1]
    if (before and before in "*/%+-") or (after and after in "*/%+-"):
        return m.group(0)
    return "1" if _CMP[m.group("op")](int(m.group("a")), int(m.group("b"))) else "0"


def without_cuda_arch(
    kind: str, expr: str, false_names: frozenset[str] = frozenset()
) -> bool | None:
    """The value of a conditional directive when ``__CUDA_ARCH__`` is not defined (every
    hip-clang pass), if that alone decides it; None when another macro matters or the
    expression does not name ``__CUDA_ARCH__``.

    ``defined(__CUDA_ARCH__) && X`` and ``__CUDA_ARCH__ >= 700`` are False,
    ``!defined(__CUDA_ARCH__)`` is True, ``defined(__CUDA_ARCH__) || defined(Y)`` is None.
    ``false_names`` are the project's own macros that hip-clang never defines either
    (``PTX_AVAILABLE``, defined only under ``#if __CUDA_ARCH__ >= 530``): they count the
    same way.
    """
    cuda_only = 0
    if "__has_include" in expr:  # a header no ROCm install or hipify mapping provides
        expr, cuda_only = _HAS_CUDA_ONLY.subn("0", expr)
    named = cuda_only > 0 or _ARCH.search(expr) is not None or _VERSION_CMP.search(expr) is not None
    # the expression's own words looked up, not every project name searched in each
    # expression (thousands of switch names over thousands of directives: 62 s at 800 KB)
    names = [
        n
        for n in dict.fromkeys(_IDENT.findall(expr))
        if n in false_names or n in HIP_UNDEFINED or _NV_FEATURE.fullmatch(n)
    ]
    names += [n for n in other_backend_names(expr) if n not in names]
    if not named and not names:
        return None
    if kind in ("ifdef", "ifndef", "elifdef", "elifndef"):
        words = expr.split()
        if not words or (words[0] != "__CUDA_ARCH__" and words[0] not in names):
            return None
        return kind.endswith("ndef")
    if kind not in ("if", "elif"):
        return None
    for n in names:
        expr = textre.sub(rf"\bdefined\s*(?:\(\s*{re.escape(n)}\s*\)|{re.escape(n)}\b)", "0", expr)
        expr = textre.sub(rf"\b{re.escape(n)}\b", "0", expr)
    expr = _VERSION_CMP.sub(_arch_cmp, expr)  # a version number is positive too
    expr = _LITERAL_CMP.sub(_literal_cmp, expr)  # `0 >= 12` once a name is 0
    expr = _ARCH_CMP.sub(_arch_cmp, _ARCH_DEFINED.sub("0", expr))
    expr = _ARCH.sub("0", expr)
    value = const_value(expr)
    return _int_value(expr) if value is None else value


_ARITH_ONLY = textre.compile(r"[\d\s()+\-*/%<>=!&|]+")
_ARITH_OPS: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
}
_ARITH_CMP: dict[type, Callable[[int, int], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


def _int_value(expr: str) -> bool | None:
    """An expression of integer literals (``0 * 10000 + 0 * 100 >= 120400``, once the names
    hip-clang leaves undefined are 0) evaluated with the preprocessor's arithmetic; None for
    anything else. Read with :mod:`ast`, never evaluated as code."""
    text = " ".join(expr.replace("\\\n", " ").split())
    if not text or len(text) > 400 or not _ARITH_ONLY.fullmatch(text):
        return None
    text = text.replace("&&", " and ").replace("||", " or ")
    text = textre.sub(r"!(?!=)", " not ", text).strip()
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    try:
        got = _arith(tree.body, 0)
    except (_NotArith, OverflowError):
        return None
    return bool(got)


class _NotArith(Exception):
    pass


def _arith(node: ast.AST, depth: int) -> int:
    if depth > 40:
        raise _NotArith
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value < 1 << 63:
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH_OPS:
        return _ARITH_OPS[type(node.op)](
            _arith(node.left, depth + 1), _arith(node.right, depth + 1)
        )
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return int(not _arith(node.operand, depth + 1))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_arith(node.operand, depth + 1)
    if isinstance(node, ast.BoolOp):
        values = [_arith(v, depth + 1) for v in node.values]
        return int(all(values) if isinstance(node.op, ast.And) else any(values))
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _ARITH_CMP:
        cmp = _ARITH_CMP[type(node.ops[0])]
        return int(cmp(_arith(node.left, depth + 1), _arith(node.comparators[0], depth + 1)))
    raise _NotArith


def nvidia_only_lines(
    directives: list[Directive], nlines: int, false_names: frozenset[str] = frozenset()
) -> bytearray | None:
    """Per line (index = 1-based line), 1 in the body of a branch that only a compiler
    defining ``__CUDA_ARCH__`` (or one of ``false_names``) sees; None when no directive
    names one (the common case)."""
    if not any(
        "__CUDA_ARCH__" in d.expr
        or "CUDA" in d.expr
        or "NVCC" in d.expr
        or "__has_include" in d.expr
        or any(n in d.expr for n in false_names)
        or bool(other_backend_names(d.expr))
        for d in directives
    ):
        return None
    diff = [0] * (nlines + 2)
    # per open conditional: [first body line, branch is NVIDIA-only, an earlier branch is
    # always taken on ROCm]
    stack: list[list[int]] = []

    def close(frame: list[int], end: int) -> None:
        if frame[1] and end > frame[0]:
            diff[frame[0]] += 1
            diff[end] -= 1

    for d in directives:
        body = d.line + d.expr.count("\n") + 1  # after a directive continued with `\`
        if d.kind in _IF_KINDS:
            value = without_cuda_arch(d.kind, d.expr, false_names)
            stack.append([body, int(value is False), int(value is True)])
        elif stack and (d.kind in _ELIF_KINDS or d.kind == "else"):
            frame = stack[-1]
            close(frame, d.line)
            value = True if d.kind == "else" else without_cuda_arch(d.kind, d.expr, false_names)
            frame[0] = body
            frame[1] = int(frame[2] or value is False)
            frame[2] = int(frame[2] or value is True)
        elif stack and d.kind == "endif":
            close(stack.pop(), d.line)
    for frame in stack:  # unterminated: runs to the end of the file
        close(frame, nlines + 1)
    out = bytearray(nlines + 2)
    level = 0
    for i in range(nlines + 2):
        level += diff[i]
        out[i] = 1 if level > 0 else 0
    return out
