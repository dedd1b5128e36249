"""Function-like macros whose arguments are per-backend alternatives.

AMReX writes ``AMREX_HIP_OR_CUDA(__shfl_down(x, o), __shfl_down_sync(0xffffffff, x, o))``
with ``#if defined(AMREX_USE_HIP)`` / ``#define AMREX_HIP_OR_CUDA(a,b) a`` / ``#elif
defined(AMREX_USE_CUDA)`` / ``#define AMREX_HIP_OR_CUDA(a,b) b``: on ROCm the macro expands
to its first argument and the others are dropped before the compiler sees them. A *selector*
is such a macro: every definition of it on the side a ROCm build takes (inside a branch whose
test is true for ROCm) expands to one of its parameters alone, the same one each time. Code
in its other arguments is never compiled on ROCm.

Only text is read; a definition outside any ROCm test, or one that expands to anything but a
single parameter, makes the macro an ordinary one.
"""

from __future__ import annotations

import bisect
import re

from gpuport import textre
from gpuport.scan.cxx import CxxSource
from gpuport.scan.project.cxx_includes import rocm_sides

__all__ = ["dropped_spans", "selector_macros"]

_FUNC_DEFINE = textre.compile(
    r"^[ \t]*\#[ \t]*define[ \t]+(\w+)\(([\w \t,]*)\)[ \t]*([^\n]*)$", re.M
)


def selector_macros(texts: dict[str, str]) -> dict[str, tuple[int, str]]:
    """Selector macro -> (index of the argument ROCm keeps, where it is defined)."""
    kept: dict[str, set[int]] = {}
    where: dict[str, str] = {}
    spoiled: set[str] = set()
    for rel, text in texts.items():
        if "define" not in text or "(" not in text:
            continue
        changes = None
        for m in _FUNC_DEFINE.finditer(text):
            name, params = m.group(1), [p.strip() for p in m.group(2).split(",")]
            body = m.group(3).strip().strip("()").strip()
            if len(params) < 2:
                continue
            if changes is None:
                changes = rocm_sides(text) or ([], [])
            line = textre.line_finder(text)(m.start())
            at = bisect.bisect_right(changes[0], line) - 1
            side = changes[1][at] if at >= 0 else 0
            if side == -1:
                continue  # a definition ROCm never sees
            if side == 0 or body not in params:
                spoiled.add(name)
                continue
            kept.setdefault(name, set()).add(params.index(body))
            where.setdefault(name, f"{rel}:{line}")
    return {
        n: (next(iter(k)), where[n]) for n, k in kept.items() if len(k) == 1 and n not in spoiled
    }


def _calls(code: str, name: str) -> list[int]:
    """Offsets of the ``(`` of each call of ``name`` in ``code``."""
    found = []
    i = code.find(name)
    while i != -1:
        before = code[i - 1] if i else " "
        after = code[i + len(name) :].lstrip()[:1]
        if not (before.isalnum() or before == "_") and after == "(":
            found.append(code.index("(", i + len(name)))
        i = code.find(name, i + len(name))
    return found


def dropped_spans(
    src: CxxSource, selectors: dict[str, tuple[int, str]]
) -> list[tuple[int, int, str]]:
    """(start, end, macro) of the arguments of selector calls in ``src`` that ROCm drops."""
    out: list[tuple[int, int, str]] = []
    for name, (keep, _where) in selectors.items():
        if name not in src.code:
            continue
        for at in _calls(src.code, name):
            args = src.call_args(at)
            out += [(a, b, name) for k, (a, b) in enumerate(args) if k != keep]
    return out
