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

import bisect
import posixpath
import re
from dataclasses import dataclass

from gpuport import textre
from gpuport.scan.cxx import ROCM_MACRO, CxxSource, lex
from gpuport.scan.cxx_cond import without_cuda_arch
from gpuport.scan.cxx_expr import rocm_polarity

__all__ = ["IncludeSides", "include_sides", "rocm_sides"]

_QUOTED = textre.compile(r'^[ \t]*\#[ \t]*include[ \t]*"([^"\n]+)"', re.M)
_ANGLED = textre.compile(r"^[ \t]*\#[ \t]*include[ \t]*<([^>\n]+/[^>\n]+)>", re.M)
_ROCM_DIRECTIVE = textre.compile(
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


def _side(kind: str, expr: str, false_names: frozenset[str] = frozenset()) -> int:
    """The side of a branch whose test is ``expr`` on a ROCm build, by the test alone
    (``false_names``: macros the ROCm build leaves undefined, which only ever make a branch
    one it never takes)."""
    if false_names and without_cuda_arch(kind, expr, false_names) is False:
        return -1
    if ROCM_MACRO.search(expr) is None:
        return 0
    if kind in ("ifdef", "elifdef"):
        return 1
    if kind in ("ifndef", "elifndef"):
        return -1
    return rocm_polarity(expr)


def _side_changes(
    src: CxxSource, false_names: frozenset[str] = frozenset()
) -> tuple[list[int], list[int]]:
    """Where the side a ROCm build is on changes: (directive lines, side from the next line
    on): 1 inside a branch ROCm takes, -1 inside one it never takes (a -1 anywhere above
    wins), 0 else. A branch after the one ROCm takes is -1; an ``#else`` after branches ROCm
    never takes is 1."""
    lines: list[int] = []
    sides: list[int] = []
    # per open conditional: [sides of its branches so far, effective side of the current one]
    stack: list[tuple[list[int], int]] = []
    for d in src.directives:
        kind = d.kind
        if kind in ("if", "ifdef", "ifndef"):
            side = _side(kind, d.expr, false_names)
            stack.append(([side], _combine(stack[-1][1] if stack else 0, side)))
        elif kind in ("elif", "elifdef", "elifndef", "else") and stack:
            before, _ = stack.pop()
            if 1 in before:
                side = -1  # an earlier branch is the one ROCm takes
            elif kind == "else":
                side = 1 if all(s == -1 for s in before) else 0
            else:
                side = _side(kind, d.expr, false_names)
            stack.append(([*before, side], _combine(stack[-1][1] if stack else 0, side)))
        elif kind == "endif" and stack:
            stack.pop()
        else:
            continue
        lines.append(d.line)
        sides.append(stack[-1][1] if stack else 0)
    return lines, sides


def rocm_sides(text: str) -> tuple[list[int], list[int]] | None:
    """Where the side a ROCm build is on changes in ``text`` (see :func:`_side_changes`),
    or None when no conditional of the file tests ROCm."""
    return _side_changes(lex(text)) if _ROCM_DIRECTIVE.search(text) else None


def _combine(enclosing: int, side: int) -> int:
    if enclosing == -1 or side == -1:
        return -1
    return 1 if 1 in (enclosing, side) else 0


def _suffixes(texts: dict[str, str]) -> dict[str, str | None]:
    """Path tails of two parts or more -> the one project file that ends so (None when
    several do): what ``#include <proj/x/y.hpp>`` names through an include folder."""
    out: dict[str, str | None] = {}
    for rel in texts:
        parts = rel.split("/")
        for k in range(2, len(parts) + 1):
            tail = "/".join(parts[-k:])
            out[tail] = None if tail in out and out[tail] != rel else rel
    return out


def include_sides(texts: dict[str, str], false_names: frozenset[str] = frozenset()) -> IncludeSides:
    """Which project headers a ROCm build includes only on its own side, or never.
    With ``false_names`` (macros the ROCm build leaves undefined) a test of one is a side
    ROCm never takes, and ``<proj/x.hpp>`` includes that name one project file count too."""
    seen: dict[str, set[int]] = {}
    where: dict[str, str] = {}
    tails: dict[str, str | None] | None = _suffixes(texts) if false_names else None
    for rel, text in texts.items():
        if "include" not in text or ('"' not in text and not false_names):
            continue
        folder = posixpath.dirname(rel)
        found = []
        for m in _QUOTED.finditer(text):
            target = posixpath.normpath(posixpath.join(folder, m.group(1)))
            if target not in texts and "/" in m.group(1):
                # "misc/hipify.hpp" through an include folder (qiskit-aer's src/): the one
                # project file that ends so
                if tails is None:
                    tails = _suffixes(texts)
                target = tails.get(m.group(1).lstrip("./")) or target
            if target in texts:
                found.append((m.start(), target))
        if false_names:
            found += [
                (m.start(), tail)
                for m in _ANGLED.finditer(text)
                if tails is not None and (tail := tails.get(m.group(1).lstrip("./"))) is not None
            ]
            found.sort()
        if not found:
            continue
        # lexed only when a conditional directive of the file tests ROCm (rare), or one of
        # the false names
        if _ROCM_DIRECTIVE.search(text) or any(n in text for n in false_names):
            changes = _side_changes(lex(text), false_names)
        else:
            changes = ([], [])
        line, pos = 1, 0
        for start, target in found:
            line += text.count("\n", pos, start)
            pos = start
            at = bisect.bisect_right(changes[0], line) - 1
            side = changes[1][at] if at >= 0 else 0
            seen.setdefault(target, set()).add(side)
            where.setdefault(f"{target}:{side}", f"{rel}:{line}")
    rocm_only = {h: where[f"{h}:1"] for h, s in seen.items() if s == {1}}
    not_on_rocm = {h: where[f"{h}:-1"] for h, s in seen.items() if s == {-1}}
    return IncludeSides(rocm_only=rocm_only, not_on_rocm=not_on_rocm)
