"""Where an offset of a CUDA source stands: in code only nvcc compiles, in a function body.

Both answer for offsets asked in order by reading on from the last one (each question from the
top of the file was quadratic: red-team re-runs 11 and 12), and start again from the top for
an earlier offset.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from gpuport import textre
from gpuport.scan.cxx import lex

__all__ = ["cuda_compiler_only", "cuda_gated_names", "function_scope", "gated_use"]

_PP = textre.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b([^\n]*)", re.M)
_CUDACC = textre.compile(r"^\s*(?:defined\s*\(?\s*)?__CUDACC__\b\s*\)?\s*(?://.*|/\*.*)?$")


#: a test a ROCm build of the project never passes: a CUDA header present (false on a ROCm
#: machine), a multi-backend library's CUDA backend switch (alpaka's
#: ``ALPAKA_ACC_GPU_CUDA_ENABLED``, Kokkos' ``KOKKOS_ENABLE_CUDA``: a HIP build sets the HIP
#: one); J44's compat includes there were never compiled (llama's AlpakaStream.cpp,
#: BlobAllocators.hpp)
_CUDA_GATE = textre.compile(
    r"^\s*(?:__has_include\s*\(\s*[<\"]cuda[\w.]*[>\"]\s*\)"
    r"|(?:defined\s*\(?\s*)?\w*(?:CUDA_ENABLED|ENABLE_CUDA)\b\s*\)?)\s*(?://.*|/\*.*)?$"
)


def cuda_compiler_only(code: str, gates: bool = False) -> Callable[[int], bool]:
    """``at(offset)``: whether ``offset`` lies in the taken branch of ``#ifdef __CUDACC__``
    (or ``#if defined(__CUDACC__)``): code only nvcc compiles, since hip-clang does not define
    ``__CUDACC__``. A HIP branch put there is never compiled. With ``gates``, also the taken
    branch of a test no ROCm build passes (:data:`_CUDA_GATE`). ``code`` is the source with
    comments blanked (the lexer's ``code``). Offsets asked in order are read on from the last
    one (reading from the top for each ``#include`` was quadratic: red-team re-run 11, 400 KB
    of includes, 12.5 s); an earlier offset starts again from the top."""
    # per open #if: whether it or one outside it is an nvcc-only branch (asking every open
    # #if per question was includes x depth: sixteenth re-run, 1.6 MB, 52 s)
    stack: list[bool] = []
    done = 0

    def at(offset: int) -> bool:
        nonlocal done
        if offset < done:
            stack.clear()
            done = 0
        for m in _PP.finditer(code, done, offset):
            word, rest = m.group(1), m.group(2)
            outer = bool(stack) and stack[-2] if len(stack) > 1 else False
            if word in ("if", "ifdef"):
                test = rest.replace("defined", "defined ", 1)
                mine = bool(_CUDACC.match(test)) or (gates and bool(_CUDA_GATE.match(rest)))
                stack.append(mine or (bool(stack) and stack[-1]))
            elif word == "ifndef":
                stack.append(bool(stack) and stack[-1])
            elif word in ("elif", "else") and stack:
                stack[-1] = outer
            elif word == "endif" and stack:
                stack.pop()
        done = offset
        return bool(stack) and stack[-1]

    return at


_NOT_FUNCTION = textre.compile(r"^\s*(?:namespace|extern|class|struct|union|enum)\b")


_SEPARATOR = textre.compile(r"[{};]")


def function_scope(code: str) -> Callable[[int], bool]:
    """``at(offset)``: whether ``offset`` is inside a function body (not at file scope, nor
    only inside a namespace, ``extern "C"`` or a class): a brace whose head holds a
    parameter list. Offsets asked in order read on from the last one, each brace's head is
    judged once, when it opens, from the separator before it (the braces from the top for
    each finding were quadratic: red-team re-run 12, 200 KB of `#if __CUDA_ARCH__ <` blocks,
    25 s; so was asking every open brace per finding: re-run 16, 800 KB of open namespaces,
    23 s); an earlier offset starts again."""
    inside: list[bool] = []  # per open brace: it or one outside it is a function body
    done = 0
    last = -1  # the last `{`, `}` or `;` read: a brace's head starts after it

    def at(offset: int) -> bool:
        nonlocal done, last
        if offset < done:
            inside.clear()
            done, last = 0, -1
        for m in _SEPARATOR.finditer(code, done, offset):
            c = m.group()
            if c == "{":
                head = code[last + 1 : m.start()]
                body = "(" in head and not _NOT_FUNCTION.match(head)
                inside.append(body or (bool(inside) and inside[-1]))
            elif c == "}" and inside:
                inside.pop()
            last = m.start()
        done = offset
        return bool(inside) and inside[-1]

    return at


_HAS_CUDA = textre.compile(
    r"^[ \t]*#[ \t]*if[ \t]+__has_include[ \t]*\([ \t]*<cuda[\w.]*>[ \t]*\)", re.M
)
_PP_LINE = textre.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b", re.M)
_MOST_GATES = 64  # per file: each is followed to its #endif
_DECLARED = textre.compile(r"\b(?:struct|class|using|enum)[ \t]+([A-Za-z_]\w*)")


def cuda_gated_names(code: str) -> dict[str, int]:
    """Types a header declares only where a CUDA header exists (``#if
    __has_include(<cuda_runtime.h>)`` ... ``struct CudaMalloc``) -> the line of the test: on a
    ROCm machine the test is false and users of these names do not compile (J44: llama's
    examples allocate with ``llama::bloballoc::CudaMalloc``). ``code``: comments blanked."""
    out: dict[str, int] = {}
    line_of = textre.line_finder(code)
    for n, m in enumerate(_HAS_CUDA.finditer(code)):
        if n >= _MOST_GATES:
            break
        depth, end = 0, len(code)
        for d in _PP_LINE.finditer(code, m.end()):
            word = d.group(1)
            if word.startswith("if"):
                depth += 1
            elif word == "endif" and depth:
                depth -= 1
            elif not depth:  # this test's #elif/#else/#endif
                end = d.start()
                break
        line = line_of(m.start())
        for name in _DECLARED.findall(code, m.end(), end):
            out.setdefault(name, line)
    return out


_NAME = textre.compile(r"[A-Za-z_]\w*")


def gated_use(
    sources: Mapping[str, str], headers: Mapping[str, str]
) -> tuple[str, str, str] | None:
    """(source, name, where) for a source that uses a type some header declares only where a
    CUDA header exists (:func:`cuda_gated_names`), or None."""
    gated: dict[str, str] = {}
    for rel, text in headers.items():
        if "__has_include" in text:
            gated.update((k, f"{rel}:{v}") for k, v in cuda_gated_names(lex(text).code).items())
    if not gated:
        return None
    for rel, text in sources.items():
        used = set(_NAME.findall(lex(text).code)) & set(gated)
        if used:
            name = min(used)
            return rel, name, gated[name]
    return None
