"""Headers a ROCm build includes only on one side of a ROCm test.

A project that ports itself with a vendor header (ggml: ``#if defined(GGML_USE_HIP)`` /
``#include "vendors/hip.h"`` / ``#else`` / ``#include "vendors/cuda.h"``) splits its headers:
one is compiled only on ROCm (its code *is* the port: every CUDA-style name it defines is a
shim), the other never on ROCm (like a source the build leaves out). A header counts only
when every ``#include "..."`` of it in the project is on that side; an include outside any
ROCm test, or on a side gpuport cannot tell, keeps it ordinary.

Only quoted includes that resolve to a file of the project (relative to the includer's
folder) count; ``<...>`` includes name the toolkit's headers. Text only: nothing is compiled.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from gpuport.scan.cxx import ROCM_MACRO, CxxSource, lex
from gpuport.scan.cxx_expr import rocm_polarity

__all__ = ["IncludeSides", "include_sides"]

_QUOTED = re.compile(r'^[ \t]*\#[ \t]*include[ \t]*"([^"\n]+)"', re.M)
_ROCM_DIRECTIVE = re.compile(
    r"^[ \t]*\#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef)\b[^\n]*?"
    r"(?:HIP|ROCM|ROCm|rocm|AMDGCN|AMDGPU|amdgcn|__gfx|__GFX)",
    re.M,
)


@dataclass(frozen=True)
class IncludeSides:
    #: header (relative path) -> the include that makes it ROCm-only ("file:line")
    rocm_only: dict[str, str]
    #: header (relative path) -> the include that ROCm never compiles ("file:line")
    not_on_rocm: dict[str, str]


def _branch_sides(src: CxxSource) -> dict[int, int]:
    """Directive line -> the side the branch it opens is on, on a ROCm build: 1 taken, -1
    not taken, 0 unknown (only branches of conditionals that test ROCm are listed)."""
    out: dict[int, int] = {}
    # per open conditional: [sides of its branches so far]
    stack: list[list[int]] = []
    for d in src.directives:
        kind = d.kind
        if kind in ("if", "ifdef", "ifndef"):
            side = _side(kind, d.expr)
            stack.append([side])
        elif kind in ("elif", "elifdef", "elifndef", "else") and stack:
            before = stack[-1]
            if 1 in before:
                side = -1  # an earlier branch is the one ROCm takes
            elif kind == "else":
                side = 1 if before and all(s == -1 for s in before) else 0
            else:
                side = _side(kind, d.expr)
            before.append(side)
        elif kind == "endif" and stack:
            stack.pop()
            continue
        else:
            continue
        out[d.line] = side
    return out


def _side(kind: str, expr: str) -> int:
    if ROCM_MACRO.search(expr) is None:
        return 0
    if kind in ("ifdef", "elifdef"):
        return 1
    if kind in ("ifndef", "elifndef"):
        return -1
    return rocm_polarity(expr)


def _sides_of_lines(src: CxxSource) -> list[int]:
    """Per line (index = 1-based line): 1 inside a branch ROCm takes, -1 inside one it
    never takes (innermost decided branch wins; a -1 anywhere above wins over all), 0 else."""
    starts = _branch_sides(src)
    n = src.line_count
    out = [0] * (n + 2)
    stack: list[int] = []  # effective side of each open conditional's current branch
    pending = {d.line: d for d in src.directives}
    for line in range(1, n + 1):
        d = pending.get(line)
        if d is not None:
            if d.kind in ("if", "ifdef", "ifndef"):
                stack.append(_combine(stack, starts.get(line, 0)))
            elif d.kind in ("elif", "elifdef", "elifndef", "else") and stack:
                stack[-1] = _combine(stack[:-1], starts.get(line, 0))
            elif d.kind == "endif" and stack:
                stack.pop()
            continue
        out[line] = stack[-1] if stack else 0
    return out


def _combine(outer: list[int], side: int) -> int:
    enclosing = outer[-1] if outer else 0
    if enclosing == -1 or side == -1:
        return -1
    return 1 if 1 in (enclosing, side) else 0


def include_sides(texts: dict[str, str]) -> IncludeSides:
    """Which project headers a ROCm build includes only on its own side, or never."""
    seen: dict[str, set[int]] = {}
    where: dict[str, str] = {}
    for rel, text in texts.items():
        if '"' not in text or "include" not in text:
            continue
        folder = posixpath.dirname(rel)
        found = [
            (m.start(), target)
            for m in _QUOTED.finditer(text)
            if (target := posixpath.normpath(posixpath.join(folder, m.group(1)))) in texts
        ]
        if not found:
            continue
        # lexed only when a conditional directive of the file tests ROCm (rare)
        sides = _sides_of_lines(lex(text)) if _ROCM_DIRECTIVE.search(text) else []
        line, pos = 1, 0
        for start, target in found:
            line += text.count("\n", pos, start)
            pos = start
            side = sides[line] if line < len(sides) else 0
            seen.setdefault(target, set()).add(side)
            where.setdefault(f"{target}:{side}", f"{rel}:{line}")
    rocm_only = {h: where[f"{h}:1"] for h, s in seen.items() if s == {1}}
    not_on_rocm = {h: where[f"{h}:-1"] for h, s in seen.items() if s == {-1}}
    return IncludeSides(rocm_only=rocm_only, not_on_rocm=not_on_rocm)
