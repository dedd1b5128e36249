"""CMake branches no build takes: a test of ``CMAKE_VERSION`` that the project's own
``cmake_minimum_required`` already decides.

nvblox's ``cmake/setup_compilers.cmake`` keeps nvcc's ``-gencode`` flags in the ``else()`` of
``if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.18)`` (the fallback from before
``CMAKE_CUDA_ARCHITECTURES``), while its ``CMakeLists.txt`` requires CMake 3.22.1: no CMake
that configures the project runs that branch, so its findings describe nothing a build does
(issue 24, twenty-second sample). The minimum is the highest ``cmake_minimum_required`` of a
``CMakeLists.txt`` in the file's folder or a folder above it, where every build of that part
of the project starts. Only a test that is one comparison of ``CMAKE_VERSION`` with a version
(``NOT`` allowed) is read; the branch it rules out, to the next ``elseif``/``else``/``endif``
of the same ``if``, and after a true test every later branch, is not taken. Text only.

Both are read as CMake reads them (``cmake_lex``): a ``cmake_minimum_required`` in a comment,
a bracket comment or a quoted argument is none, nor is one inside an ``if()``, a loop or a
function, which not every configure runs (fortieth re-run F5: a commented-out
``# cmake_minimum_required(VERSION 3.30)`` ruled out the branch every CMake 3.18-3.29 takes);
and the ``if`` family is found in one pass over the commands (a scan for the closing ``)``
of each ``if(`` line was quadratic on a file of 5,000 unclosed ones: F16).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from gpuport import textre
from gpuport.scan.cmake_lex import Command, commands, strip_cmake_comments

__all__ = ["cmake_dead_branches"]

#: digit runs bounded: int() of a 5,000-digit version raised (exit 4: fortieth re-run F19)
_MIN = textre.compile(r"(\d{1,9}(?:\.\d{1,9}){0,3})(?:\.\.\.\S*)?")
_BRANCH = frozenset({"if", "elseif", "else", "endif"})
#: blocks whose body not every configure runs (a cmake_minimum_required there is no minimum)
_OPEN = frozenset({"if", "foreach", "while", "function", "macro", "block"})
_CLOSE = frozenset({"endif", "endforeach", "endwhile", "endfunction", "endmacro", "endblock"})
_TEST = textre.compile(
    r"^\s*(NOT\s+)?\"?\$?\{?CMAKE_VERSION\}?\"?\s+"
    r"(VERSION_LESS|VERSION_LESS_EQUAL|VERSION_GREATER|VERSION_GREATER_EQUAL|VERSION_EQUAL)"
    r"\s+\"?(\d{1,9}(?:\.\d{1,9}){0,3})\"?\s*$",
    re.I,
)
_MOST_BRANCHES = 5_000


def _version(text: str) -> tuple[int, ...]:
    parts = [int(p) for p in text.split(".")]
    return tuple(parts + [0] * (4 - len(parts)))


def _decided(args: str, least: tuple[int, ...]) -> bool | None:
    """The test's value on every CMake >= ``least``, or None when that does not decide it."""
    m = _TEST.match(args)
    if m is None:
        return None
    op, v = m.group(2).upper(), _version(m.group(3))
    value: bool | None
    if op == "VERSION_LESS":
        value = False if least >= v else None
    elif op == "VERSION_LESS_EQUAL" or op == "VERSION_EQUAL":
        value = False if least > v else None
    elif op == "VERSION_GREATER_EQUAL":
        value = True if least >= v else None
    else:  # VERSION_GREATER
        value = True if least > v else None
    if value is not None and m.group(1):
        value = not value
    return value


def _least(rel: str, minimums: Mapping[str, tuple[int, ...]]) -> tuple[int, ...] | None:
    parts = rel.split("/")[:-1]
    found = [
        minimums[f] for i in range(len(parts), -1, -1) if (f := "/".join(parts[:i])) in minimums
    ]
    return max(found) if found else None


def cmake_dead_branches(build_files: Mapping[str, str]) -> dict[str, list[tuple[int, int, str]]]:
    """CMake file -> (first line, last line, why) of each branch no supported CMake takes."""
    minimums: dict[str, tuple[int, ...]] = {}
    for rel, text in build_files.items():
        if rel.rsplit("/", 1)[-1].lower() == "cmakelists.txt":
            versions = _minimums(list(commands(strip_cmake_comments(text))))
            if versions:
                minimums[rel.rsplit("/", 1)[0] if "/" in rel else ""] = max(versions)
    out: dict[str, list[tuple[int, int, str]]] = {}
    for rel, text in build_files.items():
        low = rel.lower()
        if not (low.endswith(".cmake") or low.endswith("cmakelists.txt")):
            continue
        if "CMAKE_VERSION" not in text:
            continue
        least = _least(rel, minimums)
        if least is not None:
            spans = _spans(text, least)
            if spans:
                shown = ".".join(str(p) for p in least)
                while shown.endswith(".0"):
                    shown = shown[:-2]
                why = f"a CMAKE_VERSION branch that cmake_minimum_required {shown} rules out"
                out[rel] = [(a, b, why) for a, b in spans]
    return out


@dataclass
class _If:
    taken: bool  # an earlier branch is always taken
    start: int  # first line of the current branch
    dead: bool  # the current branch is never taken
    decided: bool  # every test so far is decided


def _minimums(cmds: list[Command]) -> list[tuple[int, ...]]:
    """The versions of the ``cmake_minimum_required(VERSION min[...max])`` calls every
    configure of the file runs (outside any block), as CMake reads the commands."""
    out: list[tuple[int, ...]] = []
    depth = 0
    for cmd in cmds:
        if cmd.name in _OPEN:
            depth += 1
        elif cmd.name in _CLOSE:
            depth = max(0, depth - 1)
        elif cmd.name == "cmake_minimum_required" and depth == 0:
            words = [w.text for w in cmd.words()]
            if len(words) >= 2 and words[0] == "VERSION" and (m := _MIN.fullmatch(words[1])):
                out.append(_version(m.group(1)))
    return out


def _spans(text: str, least: tuple[int, ...]) -> list[tuple[int, int]]:
    """Line ranges of the branches ``least`` rules out."""
    line_of = textre.line_finder(text)
    stack: list[_If] = []
    spans: list[tuple[int, int]] = []
    branches = (c for c in commands(strip_cmake_comments(text)) if c.name in _BRANCH)
    for n, c in enumerate(branches):
        if n > _MOST_BRANCHES:
            break
        cmd, args = c.name, c.args
        line = line_of(c.start)
        if cmd == "if":
            value = _decided(args, least)
            stack.append(_If(value is True, line, value is False, value is not None))
            continue
        if not stack:
            continue
        top = stack[-1]
        if top.dead:
            spans.append((top.start, line - 1))
        if cmd == "endif":
            stack.pop()
            continue
        top.start = line
        if top.taken:  # an earlier branch is always taken: this one never is
            top.dead = True
        elif cmd == "else":  # taken when every earlier test is false (or not known)
            top.dead = False
        else:
            value = _decided(args, least)
            top.decided = top.decided and value is not None
            top.taken, top.dead = value is True and top.decided, value is False
    return spans
