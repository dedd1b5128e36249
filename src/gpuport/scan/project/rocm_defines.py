"""Project macros that stand for a ROCm test (issue 24, twenty-seventh sample).

LC-framework defines ``WS`` 64 under ``#if defined(__AMDGCN_WAVEFRONT_SIZE) &&
(__AMDGCN_WAVEFRONT_SIZE == 64)`` and 32 otherwise, then writes both sides of ``#if
defined(WS) && (WS == 64)``; ggml defines ``AMD_MFMA_AVAILABLE`` only under ``#if
defined(GGML_USE_HIP) && defined(CDNA)``. A conditional on such a macro is a ROCm test:

* a macro every ``#define`` of which sits on one known side of ROCm tests (the branch of a
  positive test such as ``defined(GGML_USE_HIP) && ...``, or the ``#else`` of a plain
  ``#ifdef __HIP_PLATFORM_AMD__``), is defined on one platform only: ``#ifdef`` and
  ``defined()`` of it test ROCm, and so do comparisons of its value (:func:`rocm_defines`'s
  first set);
* a macro defined in several branches of ROCm tests with different sides (``WS`` 64 and 32)
  is defined everywhere, with a value that tells the platforms apart: only comparisons of its
  value test ROCm, not ``#ifdef`` (the second set; forty-sixth re-run F4: ``#ifdef WS`` is true
  on ROCm, so code under it is compiled there).

A definition outside every ROCm test, one a build file gives, or one in a file that tests no
ROCm macro makes the name plain (no ROCm test).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gpuport import textre
from gpuport.scan.cxx import ROCM_MACRO, CxxSource, lex
from gpuport.scan.cxx_expr import _split_top, _strip_parens, rocm_polarity

__all__ = ["rocm_defines", "without_defined"]

_DEFINE = textre.compile(r"^[ \t]*\#[ \t]*define[ \t]+(\w+)", re.M)
_DEFINED = textre.compile(r"\bdefined\s*(?:\(\s*\w+\s*\)|\w+)")


def without_defined(expr: str) -> str:
    """``expr`` without its ``defined(X)`` terms: what is left compares values."""
    return _DEFINED.sub(" ", expr)


def _sides(expr: str, kind: str) -> tuple[int, int]:
    """(side of the branch, side of its ``#else``): +1 taken only on ROCm, -1 only elsewhere,
    0 not known. A conjunction with one positive ROCm term is taken only on ROCm; its
    ``#else`` is known only when the test is that one term."""
    if kind == "ifdef":
        return (1, -1) if ROCM_MACRO.search(expr) else (0, 0)
    if kind == "ifndef":
        return (-1, 1) if ROCM_MACRO.search(expr) else (0, 0)
    whole = _strip_parens(expr)
    if len(_split_top(whole, "||")) > 1:
        pol = rocm_polarity(whole) if ROCM_MACRO.search(whole) else 0
        return (pol, 0)
    terms = [_strip_parens(t) for t in _split_top(whole, "&&")]
    signs = [rocm_polarity(t) for t in terms]
    if 1 in signs:
        side = 1
    elif -1 in signs:
        side = -1
    else:
        return (0, 0)
    return (side, -side if len(terms) == 1 else 0)


def _define_sides(src: CxxSource) -> Iterable[tuple[str, int | None, int]]:
    """(name, side, conditional id) per ``#define``: side None outside every ROCm test."""
    defines = [(src.line_of(m.start()), m.group(1)) for m in _DEFINE.finditer(src.code)]
    if not defines:
        return
    # frames: [conditional id, side of the current branch, side of its #else, rocm, the
    # index of the innermost ROCm frame at or above it (-1: none)]: a running value per frame
    stack: list[list[int]] = []
    events = sorted(
        [(d.line, 0, i) for i, d in enumerate(src.directives)]
        + [(line, 1, i) for i, (line, _n) in enumerate(defines)]
    )
    for _line, what, i in events:
        if what == 1:
            name = defines[i][1]
            owner = stack[-1][4] if stack else -1
            yield (name, None, -1) if owner < 0 else (name, stack[owner][1], stack[owner][0])
            continue
        d = src.directives[i]
        if d.kind in ("if", "ifdef", "ifndef"):
            side, other = _sides(d.expr, d.kind) if d.rocm else (0, 0)
            outer = stack[-1][4] if stack else -1
            stack.append([i, side, other, int(d.rocm), len(stack) if d.rocm else outer])
        elif d.kind in ("elif", "elifdef", "elifndef") and stack:
            frame = stack[-1]
            if d.rocm:
                frame[1], frame[2], frame[3] = _sides(d.expr, d.kind[2:])[0], 0, 1
                frame[4] = len(stack) - 1
            else:
                frame[1] = 0 if frame[3] else frame[1]
        elif d.kind == "else" and stack:
            stack[-1][1] = stack[-1][2]
        elif d.kind == "endif" and stack:
            stack.pop()


def rocm_defines(
    texts: Iterable[str], build_live: frozenset[str]
) -> tuple[frozenset[str], frozenset[str]]:
    """(macros defined on one side of ROCm tests only, macros whose value tells the
    platforms apart) of the project's C/C++ ``texts``; ``build_live``: every macro a build
    file defines (plain)."""
    plain: set[str] = set(build_live)
    sides: dict[str, set[tuple[int, int]]] = {}
    for text in texts:
        if "define" not in text:
            continue
        if ROCM_MACRO.search(text) is None:
            plain.update(_DEFINE.findall(text))
            continue
        for name, side, cond in _define_sides(lex(text)):
            if side is None:
                plain.add(name)
            else:
                sides.setdefault(name, set()).add((side, cond))
    one: set[str] = set()
    valued: set[str] = set()
    for name, got in sides.items():
        if name in plain:
            continue
        known = {s for s, _c in got}
        if known == {1} or known == {-1}:
            one.add(name)
        elif known & {1, -1}:
            valued.add(name)  # 64 on one side, 32 on the other (or in an unknown #else)
    return frozenset(one), frozenset(valued)
