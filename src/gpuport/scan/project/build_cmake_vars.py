"""CMake variables a project sets true only where ROCm does not build.

hoomd-blue sets ``CUSOLVER_AVAILABLE`` to TRUE only inside ``if (ENABLE_HIP AND
HIP_PLATFORM STREQUAL "nvcc")`` (its CUDA build), and another file links
``CUDA::cusolver`` under ``if (CUSOLVER_AVAILABLE)``. On a ROCm build that variable is never
true, so the second branch is not configured either. :func:`cuda_only_vars` finds such
variables (every truthy ``set()`` of the name in the project is in a branch ROCm never takes,
no ``option()`` or cache entry lets a user set it); :func:`false_var_ranges` gives the lines
of the branches they make false, for the build model's ``cuda_lines``.

Text only: no CMake is run.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gpuport import textre
from gpuport.scan.project.build_cmake_model import cond_value
from gpuport.scan.project.build_settings import evidence_at

__all__ = ["cuda_only_vars", "false_var_ranges"]

_SET = textre.compile(
    r"^[ \t]*(set|option|cmake_dependent_option)[ \t]*\([ \t]*(\w+)([^)\n]*)", re.M | re.I
)
_TRUE = frozenset({"TRUE", "ON", "YES", "Y", "1"})
_FALSE = frozenset({"FALSE", "OFF", "NO", "N", "0", ""})
_NAME = textre.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CMD = textre.compile(r"^[ \t]*(if|elseif|else|endif|\w+)[ \t]*\(([^)\n]*)", re.M | re.I)


def _lines(text: str) -> Callable[[int], int]:
    """The 1-based line of an offset, for offsets asked in increasing order (each match's
    line counted from the last one, not from the start: quadratic in a long file)."""
    state = [0, 1]  # offset counted to, its line

    def line_of(at: int) -> int:
        if at < state[0]:
            state[0], state[1] = 0, 1
        state[1] += text.count("\n", state[0], at)
        state[0] = at
        return state[1]

    return line_of


def _is_cmake(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1].lower()
    return name == "cmakelists.txt" or name.endswith(".cmake")


def cuda_only_vars(
    files: dict[str, str], cuda_lines: dict[str, list[tuple[int, int, str]]]
) -> dict[str, str]:
    """Variable -> where it is set true (in a branch ROCm never takes)."""
    only: dict[str, str] = {}
    spoiled: set[str] = set()
    for rel, text in files.items():
        if not _is_cmake(rel) or "set" not in text.lower():
            continue
        ranges = cuda_lines.get(rel, [])
        line_of = _lines(text)
        for m in _SET.finditer(text):
            cmd, name, rest = m.group(1).lower(), m.group(2), m.group(3).split()
            if cmd != "set":
                spoiled.add(name)  # a user can switch it on
                continue
            value = rest[0].strip('"').upper() if rest else ""
            if value in _FALSE and "CACHE" not in (w.upper() for w in rest):
                continue
            line = line_of(m.start())
            where = evidence_at(ranges, line) if value in _TRUE else None
            if where is None or "CACHE" in (w.upper() for w in rest):
                spoiled.add(name)
            else:
                only.setdefault(name, f"{rel}:{line} ({where})")
    return {n: ev for n, ev in only.items() if n not in spoiled}


def false_var_ranges(text: str, false_vars: dict[str, str]) -> list[tuple[int, int, str]]:
    """(first, last, evidence) of the bodies of ``if()`` branches that the variables of
    ``false_vars`` make false on ROCm (the ``else()`` after one is left alone)."""
    names = frozenset(false_vars)
    out: list[tuple[int, int, str]] = []
    stack: list[tuple[int, str] | None] = []  # per open if: (first body line, evidence)
    line_of = _lines(text)
    for m in _CMD.finditer(text):
        cmd, args = m.group(1).lower(), m.group(2)
        if cmd not in ("if", "elseif", "else", "endif"):
            continue
        line = line_of(m.start())
        if cmd != "if" and stack:
            frame = stack.pop()
            if frame is not None and line > frame[0]:
                out.append((frame[0], line - 1, frame[1]))
            if cmd != "endif":
                stack.append(None)
            continue
        if cmd == "if":
            # the names in the test, not every name tried against it: 10,000 if() lines and
            # 10,000 CUDA-only names took 28 s (eighth review)
            var = min(set(_NAME.findall(args)) & names, default=None)
            if var is not None and cond_value(args, names) is False:
                stack.append(
                    (
                        line + 1,
                        f"{line}: if({args.strip()}), {var} is set true only at {false_vars[var]}",
                    )
                )
            else:
                stack.append(None)
    return out
