"""What makes the opt-in CMake HIP build (``fix_cmake``) reach the CUDA sources it builds.

Two CMake idioms kept that build from building, and both have a rewrite a CUDA configure
never sees:

* **A CUDA lookup behind ``if(CMAKE_CUDA_COMPILER)``** (``check_language(CUDA)`` first): a
  machine without nvcc never enters the branch, so the HIP build inside it was unreachable.
  Each ``if``/``elseif`` test of ``CMAKE_CUDA_COMPILER`` (as a truth value, not under
  ``NOT``) becomes ``(GPUPORT_HIP OR CMAKE_CUDA_COMPILER)``: with the option OFF (the
  default) the test is the original one. A ``NOT CMAKE_CUDA_COMPILER`` test is not
  rewritten; the HIP build would take its no-GPU path, so the fix says so (unsafe).
* **``.cu`` sources collected by ``file(GLOB ...)``**: only sources marked ``LANGUAGE HIP``
  are compiled by the HIP compiler, and a glob names none. After each glob whose patterns
  can take ``.cu`` files, ``if(GPUPORT_HIP)`` marks the ``.cu`` entries of its variable HIP.
  A source counts as reached only when a glob pattern, read relative to the CMake file's
  folder, matches its path (a pattern built from another variable is not guessed at).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import PurePosixPath

from gpuport import textre
from gpuport.port.cmake_text import Statements
from gpuport.scan.project.build_cmake_model import close_paren

__all__ = ["cu_globs", "glob_covers", "glob_marks", "reach_edits"]


def _glob_match(name: str, pattern: str) -> bool:
    """``fnmatch._glob_match`` on RE2 (``textre.glob``): project text never reaches ``re``."""
    return textre.glob(pattern).match(name) is not None


_IF_HEAD = textre.compile(r"^[ \t]*(?:if|elseif)[ \t]*\(", re.M | re.I)
_TOKEN = textre.compile(r"(?<![\w${}\-])CMAKE_CUDA_COMPILER(?![\w}])")
#: the word before / after a name in a condition (parentheses skipped); none at its ends
_PREV = textre.compile(r"([^\s()]+)[\s(]*$")
_NEXT = textre.compile(r"[\s)]*([^\s()]+)")
_GLOB = textre.compile(
    r"^([ \t]*)file\s*\(\s*(GLOB|GLOB_RECURSE)\s+([A-Za-z_][\w]*)\b([^)]*)\)[^\n]*", re.M | re.I
)
_ARG = textre.compile(r'"([^"]*)"|([^\s"]+)')
_OPTIONS = {"LIST_DIRECTORIES", "RELATIVE", "CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS"}
#: a pattern that can take a .cu file: ``*.cu``, ``*.cu*``, ``*.*``, ``dir/*``
_CAN_CU = textre.compile(r"(?:\.cu\*?|\*\.\*|/\*|^\*)$")
_HERE = ("${CMAKE_CURRENT_SOURCE_DIR}/", "${CMAKE_CURRENT_LIST_DIR}/")
_ROOT = ("${PROJECT_SOURCE_DIR}/", "${CMAKE_SOURCE_DIR}/", "${CMAKE_HOME_DIRECTORY}/")


def _condition(text: str, open_paren: int) -> int:
    """The offset of the ``)`` closing the condition opened at ``open_paren`` (or -1)."""
    return close_paren(text, open_paren, blank_line_ends=True)
    return -1


def reach_edits(text: str, option: str) -> tuple[list[tuple[int, int, str]], int]:
    """Edits turning each truth test of ``CMAKE_CUDA_COMPILER`` in an ``if``/``elseif``
    into ``(<option> OR CMAKE_CUDA_COMPILER)``, and the number of ``NOT`` tests left."""
    edits: list[tuple[int, int, str]] = []
    negated = 0
    live = Statements(text)
    for head in _IF_HEAD.finditer(text):
        if not live.starts(head.end() - len(head.group().lstrip(" \t"))):
            continue  # a line of a quoted argument or a comment (fortieth re-run F3)
        close = _condition(text, head.end() - 1)
        if close < 0:
            continue
        cond_start = head.end()
        cond = text[cond_start:close]
        if option in cond:
            continue
        for m in _TOKEN.finditer(cond):
            before = _PREV.search(cond[: m.start()])
            after = _NEXT.match(cond[m.end() :])
            prev = before.group(1).upper() if before else ""
            nxt = after.group(1).upper() if after else ""
            if prev not in ("", "AND", "OR", "NOT") or nxt not in ("", "AND", "OR"):
                continue  # an operand (DEFINED X, X MATCHES ..., X STREQUAL ...): a value
            if prev == "NOT":
                negated += 1
                continue
            s = cond_start + m.start()
            alone = cond.strip() == m.group()  # if(CMAKE_CUDA_COMPILER): no parentheses
            test = f"{option} OR CMAKE_CUDA_COMPILER"
            edits.append((s, s + len(m.group()), test if alone else f"({test})"))
    return edits, negated


def _patterns(args: str) -> list[str]:
    out: list[str] = []
    skip = False
    for m in _ARG.finditer(args):
        word = m.group(1) if m.group(1) is not None else m.group(2)
        if skip:
            skip = False
            continue
        if word.upper() in _OPTIONS:
            skip = word.upper() in {"LIST_DIRECTORIES", "RELATIVE"}
            continue
        out.append(word)
    return out


@lru_cache(maxsize=64)
def cu_globs(text: str) -> list[tuple[re.Match[str], list[str]]]:
    """The ``file(GLOB ...)`` statements whose patterns can take ``.cu`` files, with them
    (read once per text: a glob check per source re-read them; thirty-sixth re-run F10)."""
    out = []
    live = Statements(text)
    for m in _GLOB.finditer(text):
        # the statement CMake reads, to its own ')' with only a comment after it on the line
        # (a glob line inside a quoted argument is the string's text: fortieth re-run F3)
        if not live.exact(m.start() + len(m.group(1)), m.end(4) + 1, m.end()):
            continue
        pats = [p for p in _patterns(m.group(4)) if _CAN_CU.search(p)]
        if pats:
            out.append((m, pats))
    return out


def glob_marks(text: str, option: str, eol: str, mark: str) -> list[tuple[int, str]]:
    """For each glob that can take ``.cu`` files: where to insert (after its line) the block
    marking the ``.cu`` entries of its variable as HIP on the HIP build."""
    out: list[tuple[int, str]] = []
    for m, _ in cu_globs(text):
        ind, var = m.group(1), m.group(3)
        tmp = f"_gpuport_hip_{var.lower()}"
        block = (
            f"{eol}{ind}if({option})  {mark} the globbed CUDA sources are HIP on the HIP build"
            f"{eol}{ind}    set({tmp} ${{{var}}}){eol}"
            f'{ind}    list(FILTER {tmp} INCLUDE REGEX "\\\\.cu$"){eol}'
            f"{ind}    if({tmp}){eol}"
            f"{ind}        set_source_files_properties(${{{tmp}}} PROPERTIES LANGUAGE HIP){eol}"
            f"{ind}    endif(){eol}{ind}endif()"
        )
        out.append((m.end(), block))
    return out


def _resolve(pattern: str, folder: str) -> str | None:
    """The pattern as a path from the project root, or None where it depends on a variable
    gpuport does not know."""
    for pre in _HERE:
        if pattern.startswith(pre):
            pattern = pattern[len(pre) :]
            break
    else:
        for pre in _ROOT:
            if pattern.startswith(pre):
                if folder:
                    return None  # another project's root may be meant
                pattern = pattern[len(pre) :]
                break
    if "$" in pattern or pattern.startswith("/") or ".." in pattern.split("/"):
        return None
    pattern = pattern.removeprefix("./")
    return f"{folder}/{pattern}" if folder else pattern


def glob_covers(text: str, folder: str, source: str) -> bool:
    """Whether a ``.cu``-taking glob of this CMake file (in ``folder``) collects ``source``."""
    src = PurePosixPath(source)
    for m, pats in cu_globs(text):
        recurse = m.group(2).upper() == "GLOB_RECURSE"
        for pat in pats:
            full = _resolve(pat, folder)
            if full is None:
                continue
            pdir, pname = PurePosixPath(full).parent, PurePosixPath(full).name
            if not _glob_match(src.name, pname):
                continue
            if recurse:
                if any(c in str(pdir) for c in "*?["):
                    continue
                if str(pdir) in ("", ".") or src.parent == pdir or pdir in src.parent.parents:
                    return True
            else:
                parts, want = src.parent.parts, pdir.parts if str(pdir) != "." else ()
                if len(parts) == len(want) and all(
                    _glob_match(a, b) for a, b in zip(parts, want, strict=True)
                ):
                    return True
    return False
