"""CMake functions and macros that nothing calls: their bodies never run.

taichi's ``runtime_module/CMakeLists.txt`` defines ``function(COMPILE_CUSTOM_CUDA_LIBRARY)``
with an nvcc-style ``--cuda-gpu-arch=sm_60`` compile, and its only call is commented out
(issue 24, fifteenth sample): no build of the project, CUDA or ROCm, runs those lines, so what
they name is no finding of the project's.

A ``function(NAME ...)`` or ``macro(NAME ...)`` counts when no CMake file the scan read calls
``NAME(...)`` outside comments (CMake command names are case-insensitive). Nothing is decided
when a file calls commands by a computed name (``cmake_language(CALL ${f})``,
``cmake_language(EVAL ...)``, ``variable_watch``), or when the body has no end.

Text only: nothing is run.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuport import textre
from gpuport.scan.cmake_lex import commands, strip_cmake_comments

__all__ = ["uncalled_bodies"]

_ENDS = {"function": "endfunction", "macro": "endmacro"}
_DYNAMIC = textre.compile(
    r"(?i)\bcmake_language\s*\(\s*(?:CALL|EVAL|DEFER)\b|\bvariable_watch\s*\("
)


def _is_cmake(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1].lower()
    return name == "cmakelists.txt" or name.endswith(".cmake")


def uncalled_bodies(files: Mapping[str, str]) -> dict[str, list[tuple[int, int, str]]]:
    """CMake file -> [(first line, last line, evidence)] of function/macro bodies that no
    CMake file of ``files`` (relative path -> text) calls."""
    defined: list[tuple[str, str, int, int]] = []  # (name, file, first line, last line)
    called: set[str] = set()
    for rel, text in files.items():
        if not _is_cmake(rel) or "(" not in text:
            continue
        code = strip_cmake_comments(text)
        if _DYNAMIC.search(code):
            return {}
        line_of = textre.line_finder(code)
        open_: list[tuple[str, str, int]] = []  # (kind, name, line) of an unclosed definition
        for cmd in commands(code):
            if cmd.name in _ENDS:
                words = cmd.words()
                open_.append((cmd.name, words[0].text.lower() if words else "", line_of(cmd.start)))
            elif open_ and cmd.name == _ENDS[open_[-1][0]]:
                _, name, first = open_.pop()
                if name:
                    defined.append((name, rel, first, line_of(cmd.start)))
            else:
                called.add(cmd.name)
    out: dict[str, list[tuple[int, int, str]]] = {}
    for name, rel, first, last in defined:
        if name not in called:
            why = f"{rel}:{first}: {name}() is defined but never called"
            out.setdefault(rel, []).append((first, last, why))
    return out
