"""nvcc's own options in a CMake file's ``target_compile_options`` / ``add_compile_options``,
kept from the opt-in HIP build (``fix_cmake``), as setup.py's lists are (``fix_setup``).

A compile option given without a ``$<COMPILE_LANGUAGE:CUDA>`` generator expression reaches
every compiler of the target, so on the HIP build hip-clang gets ``--expt-relaxed-constexpr``
or ``-Xptxas -v`` and stops. The statement becomes ``if(GPUPORT_HIP) <the statement without
nvcc's options> else() <the original> endif()`` (``--use_fast_math`` given to clang as
``-ffast-math``), or ``if(NOT GPUPORT_HIP) <the original> endif()`` when nothing else is
left. With the option OFF (the default) the original runs. An nvcc option inside another
generator expression is not rewritten; the fix says the HIP build would get it.
"""

from __future__ import annotations

import re

from gpuport import textre
from gpuport.port.cmake_text import Statements
from gpuport.port.fix_setup import CLANG_SPELLING, NVCC_ONLY, NVCC_VALUED

__all__ = ["flag_edits"]

_STMT = textre.compile(r"^([ \t]*)((?:target|add)_compile_options)[ \t]*\(", re.M | re.I)
_KEYWORDS = {"PRIVATE", "PUBLIC", "INTERFACE", "BEFORE"}
_ARCH = textre.compile(r"^(?:arch=)?compute_\d+|^sm_\d+$|^code=")
_QUOTED = textre.compile(r'"(?:\\.|[^"\\])*"?')
_CUDA_LANG = textre.compile(r"COMPILE_LANG(?:UAGE|_AND_ID):CUDA\b")
_BRACKET = textre.compile(r"\[=*\[")


class _Unreadable(Exception):
    """A statement gpuport cannot read word by word (39th re-run F5)."""


#: what a kept generator expression may hold: one line, no parentheses, comments or escapes
#: (a ``$<1:-g)`` ran over ``)`` and lines, and a command after it became live); a quoted
#: part only of plain characters (swaptube's
#: ``$<$<COMPILE_LANGUAGE:CUDA>:"--diag_suppress=20012">``: one argument to CMake, read whole)
_PLAIN_GENEX = textre.compile(r"(?:[^\n()\"#\\]|\"[^\"\n()#\\\s;$]*\")*")


def _tokens(text: str, start: int) -> tuple[int, list[str]] | None:
    """The arguments of the call whose ``(`` is at ``start`` and the offset of its ``)``
    (quoted strings and ``$<...>`` kept whole), or None when it does not close. Raises
    ``_Unreadable`` at a bracket comment or argument, an escape outside quotes or a generator
    expression that spans lines or holds a parenthesis: CMake reads those otherwise."""
    out: list[str] = []
    i, n, cur = start + 1, len(text), ""
    while i < n:
        c = text[i]
        if c == '"':
            q = _QUOTED.match(text, i)
            end = q.end() if q else n
            cur += text[i:end]
            i = end
            continue
        if c == "$" and text[i + 1 : i + 2] == "<":
            depth, j = 0, i
            while j < n:
                if text[j] == "$" and text[j + 1 : j + 2] == "<":
                    depth += 1
                    j += 2
                    continue
                if text[j] == ">":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= n or not _PLAIN_GENEX.fullmatch(text, i, j + 1):
                raise _Unreadable(text[i : i + 40])
            cur += text[i : j + 1]
            i = j + 1
            continue
        if c == "\\" or (c == "[" and _BRACKET.match(text, i)):
            raise _Unreadable(text[i : i + 40])
        if c == "#":
            if _BRACKET.match(text, i + 1):
                raise _Unreadable(text[i : i + 40])
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        if c == ")":
            if cur:
                out.append(cur)
            return i, out
        if c.isspace():
            if cur:
                out.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    return None


def _kind(word: str) -> str | None:
    words = word.split()
    first = words[0] if words else word
    name = first.split("=", 1)[0]
    if name in NVCC_ONLY:
        return "plain"
    if name in NVCC_VALUED:
        return "plain" if "=" in first or len(words) > 1 else "valued"
    if _ARCH.match(word):
        return "plain"
    return None


def _nvcc_word(token: str) -> bool:
    return any(_kind(w) for w in textre.split(r"[\s:;,>]+", token) if w)


def flag_edits(
    text: str, option: str, eol: str, mark: str
) -> tuple[list[tuple[int, int, str]], str]:
    """The edits keeping nvcc's options from the HIP build, and why the HIP build would
    still get one (empty when it would not)."""
    edits: list[tuple[int, int, str]] = []
    live = Statements(text)
    for m in _STMT.finditer(text):
        if not live.starts(m.start(2)):
            continue  # a line of a quoted argument or a comment: string text (40th re-run F3)
        try:
            got = _tokens(text, m.end() - 1)
        except _Unreadable as e:
            return [], (
                f"{m.group(2)}() holds {str(e).split(chr(10))[0]!r}, which gpuport cannot read "
                "word by word (a bracket comment, an escape or a generator expression over "
                "lines or parentheses): nvcc's own options there may reach the HIP compiler"
            )
        if got is None:
            continue
        close, toks = got
        target = m.group(2).lower().startswith("target")
        kept: list[str] = []
        dropped = skip = False
        for i, tok in enumerate(toks):
            if skip:
                skip = False
                continue
            if (target and i == 0) or tok.upper() in _KEYWORDS:
                kept.append(tok)
                continue
            if tok.startswith("$<"):
                if _CUDA_LANG.search(tok):
                    kept.append(tok)
                elif _nvcc_word(tok):
                    return [], f"an nvcc option inside {tok[:60]} reaches the HIP compiler"
                else:
                    kept.append(tok)
                continue
            word = tok.strip('"')
            kind = _kind(word)
            if kind is None:
                kept.append(tok)
                continue
            dropped = True
            if word in CLANG_SPELLING:
                kept.append(CLANG_SPELLING[word])
            skip = kind == "valued"
        if not dropped:
            continue
        ind = m.group(1)
        orig = text[m.start() + len(ind) : close + 1]
        flags = [
            t for i, t in enumerate(kept) if not ((target and i == 0) or t.upper() in _KEYWORDS)
        ]
        if flags:
            hip = f"{m.group(2)}({' '.join(kept)})"
            new = (
                f"{ind}if({option})  {mark} nvcc's own options are not given to the HIP "
                f"compiler{eol}{ind}    {hip}{eol}{ind}else(){eol}{ind}    {orig}{eol}{ind}endif()"
            )
        else:
            new = (
                f"{ind}if(NOT {option})  {mark} nvcc's own options{eol}"
                f"{ind}    {orig}{eol}{ind}endif()"
            )
        edits.append((m.start(), close + 1, new))
    return edits, ""
