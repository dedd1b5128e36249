"""Rewrite CMake and Makefile build files from CUDA to their HIP forms (issue 3, item 5).

Only the code part of each line is touched: comments stay as they are. The patterns and the
CUDA-library table come from the scanner's build rules (:mod:`gpuport.scan.rules.build.common`),
so ``hipify --build-files`` fixes what ``scan``'s GP4xx rules report. Running the rewrite on
its own output changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gpuport import textre
from gpuport.scan.project.files import classify
from gpuport.scan.rules import FileKind
from gpuport.scan.rules.build.common import CUDA_LIB_NAMES, lists_arch
from gpuport.scan.rules.native.warp import _warpish

__all__ = ["BUILD_KINDS", "WAVE64_NOTE", "Change", "build_kind", "rewrite_build_file", "unresolved"]

Change = tuple[int, str, str]
BUILD_KINDS = (FileKind.CMAKE, FileKind.MAKEFILE)

# CMake ---------------------------------------------------------------------------------------
_LANG_CALL = textre.compile(r"(?i)\b(?:project|enable_language)\s*\(")
_CUDA_WORD = textre.compile(r"(?<![\w:$\{-])CUDA(?![\w:-])")
_ARCH_NAME = textre.compile(r"\b(CMAKE_)?CUDA_ARCHITECTURES\b")
_FIND_TOOLKIT = textre.compile(r"(?i)\bfind_package\s*\(\s*CUDAToolkit\b[^)]*\)")
_CUDA_TARGET = textre.compile(r"\bCUDA::(\w+)")
_CU_SOURCE = textre.compile(r"[\w./${}-]+\.cu\b")
_VALUE_WORD = textre.compile(r'\s*(=)?("[^"]*"|[^\s()"#]+)')

# Makefile ------------------------------------------------------------------------------------
_NVCC = textre.compile(r"(?<![\w-])(?:[^\s=:;]*/)?nvcc(?![\w-])")
_ARCH_FLAG = textre.compile(
    r"([ \t]+|(?<![\w-]))(?:(?:-arch|--gpu-architecture)(?:=|\s+)(?:sm|compute)_\w+"
    r"|(?:-gencode|--generate-code)(?:=|\s+)arch=\S+)"
)
_FAST_MATH = textre.compile(r"(?<![\w-])--?use_fast_math(?![\w-])")
_CUDART = textre.compile(r"(?<![\w-])-lcudart(?:_static)?(?![\w-])")
_OTHER_LIB = textre.compile(r"(?<![\w-])-l(\w+)")

# Both ------------------------------------------------------------------------------------------
_WARP_FLAG = textre.compile(r"(?<![\w-])(?P<d>-D\s*)?(?P<name>[A-Za-z_]\w*)=(?P<v>32)\b(?![.\w])")
_DEFINITIONS = textre.compile(
    r"(?i)\b(?:add_compile_definitions|target_compile_definitions|add_definitions)\b"
)
WAVE64_NOTE = "gpuport: wave64 warp size of the --target"


def _warp_flags(code: str, cmake: bool) -> str:
    """``-DWARP_SIZE=32`` (a warp-size name; bare ``WARP_SIZE=32`` in a CMake definitions call)
    -> 64: the rewritten build file compiles for the one wave64 ``--target``."""
    bare_ok = cmake and _DEFINITIONS.search(code) is not None

    def repl(m: re.Match[str]) -> str:
        if not _warpish(m.group("name")) or not (m.group("d") or bare_ok):
            return m.group(0)
        return m.group(0)[: m.start("v") - m.start()] + "64"

    return _WARP_FLAG.sub(repl, code)


def build_kind(rel_path: str) -> FileKind | None:
    """CMAKE or MAKEFILE for a build file the rewrite handles, else None."""
    kind = classify(rel_path)
    return kind if kind in BUILD_KINDS else None


def _split_comment(line: str) -> tuple[str, str]:
    """(code, comment): the comment starts at the first ``#`` outside double quotes."""
    quoted = False
    prev = ""
    for i, ch in enumerate(line):
        if ch == '"' and prev != "\\":
            quoted = not quoted
        elif ch == "#" and not quoted and prev != "\\":
            return line[:i], line[i:]
        prev = ch
    return line, ""


def _hip_target(name: str) -> str | None:
    hip = CUDA_LIB_NAMES.get(name) or CUDA_LIB_NAMES.get(name.removesuffix("_static"))
    if hip is None:
        return None
    first = hip.split()[0]
    return first if "::" in first else None


def _arch_values(code: str, target: str) -> str:
    """Rename CUDA_ARCHITECTURES variables/properties and give them ``target`` as value."""
    out: list[str] = []
    pos = 0
    for m in _ARCH_NAME.finditer(code):
        out.append(code[pos : m.start()])
        out.append(("CMAKE_" if m.group(1) else "") + "HIP_ARCHITECTURES")
        pos = m.end()
        # the value: arch words (80 90, "80;90", =80) that follow the name
        end, first, replaced = pos, True, False
        while True:
            w = _VALUE_WORD.match(code, end)
            if w is None or (w.group(1) and not first) or not lists_arch(w.group(2)):
                break
            if not first and w.group(2).startswith('"'):
                break
            end, first = w.end(), False
            replaced = True
        if replaced:
            value = code[pos:end]
            lead = value[: len(value) - len(value.lstrip())]
            eq = "=" if value.lstrip().startswith("=") else ""
            quote = '"' if '"' in value else ""
            out.append(f"{lead}{eq}{quote}{target}{quote}")
            pos = end
    out.append(code[pos:])
    return "".join(out)


def _cmake_line(code: str, target: str, in_lang_call: bool) -> tuple[str, bool]:
    """Rewrite one CMake code fragment; returns it and whether a language call stays open."""
    parts: list[str] = []
    pos = 0
    depth = 1 if in_lang_call else 0
    # replace CUDA language words inside project(...) / enable_language(...)
    for m in _LANG_CALL.finditer(code):
        if depth:
            break
        parts.append(code[pos : m.end()])
        pos, depth = m.end(), 1
        break
    if depth:
        i = pos
        while i < len(code) and depth:
            if code[i] == "(":
                depth += 1
            elif code[i] == ")":
                depth -= 1
            i += 1
        parts.append(_CUDA_WORD.sub("HIP", code[pos:i]))
        pos = i
    parts.append(code[pos:])
    code = "".join(parts)
    code = _arch_values(code, target)
    code = _FIND_TOOLKIT.sub("find_package(hip REQUIRED)", code)
    code = _CUDA_TARGET.sub(lambda m: _hip_target(m.group(1)) or m.group(0), code)
    return code, depth > 0


def _make_line(code: str, target: str) -> str:
    code = _NVCC.sub("hipcc", code)
    flag = f"--offload-arch={target}"
    have = flag in code

    def arch(m: re.Match[str]) -> str:
        nonlocal have
        if have:
            return ""
        have = True
        return m.group(1) + flag

    code = _ARCH_FLAG.sub(arch, code)
    code = _FAST_MATH.sub("-ffast-math", code)
    return _CUDART.sub("-lamdhip64", code)


def rewrite_build_file(
    text: str, kind: FileKind, target: str, *, wave64: bool = False
) -> tuple[str, list[Change]]:
    """``text`` with its CUDA build settings rewritten to HIP, and the (line, before, after)
    of every changed line. ``kind`` is FileKind.CMAKE or FileKind.MAKEFILE. ``wave64``: the
    target runs 64-lane wavefronts and ``--wave64 fix`` is on, so a ``-DWARP_SIZE=32`` flag
    becomes 64 (marked with a comment where the line can take one)."""
    if kind not in BUILD_KINDS:
        raise ValueError(f"not a build file kind: {kind}")
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    changes: list[Change] = []
    open_call = False
    for n, line in enumerate(lines, 1):
        body = line.rstrip("\r\n")
        eol = line[len(body) :]
        code, comment = _split_comment(body)
        if kind is FileKind.CMAKE:
            new, open_call = _cmake_line(code, target, open_call)
        else:
            new = _make_line(code, target)
        if wave64:
            flagged = _warp_flags(new, kind is FileKind.CMAKE)
            if flagged != new and not comment and not flagged.rstrip().endswith("\\"):
                comment = f" # {WAVE64_NOTE}"
            new = flagged
        if new != code:
            changes.append((n, body, new + comment))
        out.append(new + comment + eol)
    return "".join(out), changes


def unresolved(text: str, kind: FileKind) -> list[tuple[int, str]]:
    """(line, message) for what the rewrite leaves to a person: unknown CUDA:: targets and
    -l libraries, ``.cu`` sources (CMake compiles them as CUDA unless told LANGUAGE HIP)."""
    notes: list[tuple[int, str]] = []
    finders: list[Callable[[str], list[str]]] = []
    if kind is FileKind.CMAKE:
        finders.append(
            lambda code: [
                f"CUDA::{m.group(1)} has no HIP target here; link its ROCm counterpart"
                for m in _CUDA_TARGET.finditer(code)
                if _hip_target(m.group(1)) is None
            ]
        )
        finders.append(
            lambda code: [
                f"{m.group(0)}: set_source_files_properties(... PROPERTIES LANGUAGE HIP)"
                for m in _CU_SOURCE.finditer(code)
            ]
        )
    else:
        finders.append(
            lambda code: [
                f"-l{m.group(1)}: link its ROCm counterpart"
                for m in _OTHER_LIB.finditer(code)
                if m.group(1) in CUDA_LIB_NAMES and not m.group(1).startswith("cudart")
            ]
        )
    for n, line in enumerate(text.splitlines(), 1):
        code, _ = _split_comment(line)
        for find in finders:
            notes.extend((n, msg) for msg in find(code))
    return notes
