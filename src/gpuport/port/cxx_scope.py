"""Where an offset of a CUDA source stands: in code only nvcc compiles, in a function body.

Both answer for offsets asked in order by reading on from the last one (each question from the
top of the file was quadratic: red-team re-runs 11 and 12), and start again from the top for
an earlier offset.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gpuport import textre

__all__ = ["cuda_compiler_only", "function_scope"]

_PP = textre.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b([^\n]*)", re.M)
_CUDACC = textre.compile(r"^\s*(?:defined\s*\(?\s*)?__CUDACC__\b\s*\)?\s*(?://.*|/\*.*)?$")


def cuda_compiler_only(code: str) -> Callable[[int], bool]:
    """``at(offset)``: whether ``offset`` lies in the taken branch of ``#ifdef __CUDACC__``
    (or ``#if defined(__CUDACC__)``): code only nvcc compiles, since hip-clang does not define
    ``__CUDACC__``. A HIP branch put there is never compiled. ``code`` is the source with
    comments blanked (the lexer's ``code``). Offsets asked in order are read on from the last
    one (reading from the top for each ``#include`` was quadratic: red-team re-run 11, 400 KB
    of includes, 12.5 s); an earlier offset starts again from the top."""
    stack: list[bool] = []  # per open #if: is this branch nvcc-only
    done = 0

    def at(offset: int) -> bool:
        nonlocal done
        if offset < done:
            stack.clear()
            done = 0
        for m in _PP.finditer(code, done, offset):
            word, rest = m.group(1), m.group(2)
            if word in ("if", "ifdef"):
                stack.append(bool(_CUDACC.match(rest.replace("defined", "defined ", 1))))
            elif word == "ifndef":
                stack.append(False)
            elif word in ("elif", "else") and stack:
                stack[-1] = False
            elif word == "endif" and stack:
                stack.pop()
        done = offset
        return any(stack)

    return at


_NOT_FUNCTION = textre.compile(r"^\s*(?:namespace|extern|class|struct|union|enum)\b")


_BRACE = textre.compile(r"[{}]")


def function_scope(code: str) -> Callable[[int], bool]:
    """``at(offset)``: whether ``offset`` is inside a function body (not at file scope, nor
    only inside a namespace, ``extern "C"`` or a class): a brace whose head holds a
    parameter list. Offsets asked in order read on from the last one, each brace's head is
    judged once (the braces from the top for each finding were quadratic: red-team re-run
    12, 200 KB of `#if __CUDA_ARCH__ <` blocks, 25 s); an earlier offset starts again."""
    opened: list[int] = []
    done = 0
    judged: dict[int, bool] = {}

    def function_head(brace: int) -> bool:
        if brace not in judged:
            head_start = max(code.rfind(c, 0, brace) for c in ";{}") + 1
            head = code[head_start:brace]
            judged[brace] = "(" in head and not _NOT_FUNCTION.match(head)
        return judged[brace]

    def at(offset: int) -> bool:
        nonlocal done
        if offset < done:
            opened.clear()
            done = 0
        for m in _BRACE.finditer(code, done, offset):
            if m.group() == "{":
                opened.append(m.start())
            elif opened:
                opened.pop()
        done = offset
        return any(function_head(b) for b in opened)

    return at
