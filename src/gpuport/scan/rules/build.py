"""GP4xx: build files (CMake, Makefiles, setup.py).

CMake and Makefiles are read as text with their comments blanked out (so
columns stay right) and a map of the conditional blocks that branch on
ROCm/HIP, which lowers findings inside them to guarded. ``setup.py`` is read
with :mod:`ast` only, never executed or imported; simple assignments
(``NVCC_FLAGS = [...]``, ``.append``, ``+=``) are followed so that flags kept
in a variable are found where they are written.

The rule table is in :mod:`gpuport.scan.rules.build_rules`, the patterns all
three kinds share in :mod:`gpuport.scan.rules.build_common`, and the setup.py
reader in :mod:`gpuport.scan.rules.build_setup`; this module reads CMake files
and Makefiles.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

from gpuport.scan.rules.base import FileContext, FileKind, checker, register
from gpuport.scan.rules.build_common import (
    CUDA_ARCH,
    HALF_MACRO,
    LIB_ALT,
    LINK,
    NVCC_ONLY,
    NVCC_WORD,
    ROCM_ARCH,
    ROCM_COND,
    Guards,
    flag_fix,
    lib_fix,
)
from gpuport.scan.rules.build_rules import BUILD_RULES
from gpuport.scan.rules.build_setup import check_setup_py

__all__ = [
    "check_cmake",
    "check_makefile",
    "check_setup_py",
    "make_guards",
    "strip_cmake_comments",
    "strip_make_comments",
]

register(*BUILD_RULES)

# --- CMake and Makefile text ---------------------------------------------------------------


class _Text:
    """Comment-free text of a build file with offset→(line, column) mapping."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.starts = [0] + [i + 1 for i, c in enumerate(code) if c == "\n"]

    def pos(self, offset: int) -> tuple[int, int]:
        idx = bisect.bisect_right(self.starts, offset) - 1
        return idx + 1, offset - self.starts[idx] + 1


def _report_text_tokens(
    ctx: FileContext,
    text: _Text,
    guards: Guards,
    skip: list[tuple[int, int]],
) -> None:
    """GP402/403/406/407 on comment-free CMake or Makefile text."""
    target = ctx.target.name
    rocm_arch = bool(ROCM_ARCH.search(text.code))
    code = text.code

    def live(off: int) -> tuple[int, int] | None:
        if any(a <= off < b for a, b in skip):
            return None
        return text.pos(off)

    for m in NVCC_ONLY.finditer(code):
        if (at := live(m.start())) is not None:
            flag = m.group(1)
            ctx.report(
                "GP402",
                at[0],
                at[1],
                message=f"nvcc-only flag {flag}",
                fix=flag_fix(flag, target),
                guarded=at[0] in guards,
            )
    arch_lines: set[int] = set()
    for m in CUDA_ARCH.finditer(code):
        at = live(m.start())
        if rocm_arch or at is None or at[0] in arch_lines:
            continue
        arch_lines.add(at[0])
        ctx.report(
            "GP403",
            at[0],
            at[1],
            message=f"{m.group(0)}: NVIDIA architectures only, no AMD target in this file",
            fix=f"Add the AMD target {target}: set(GPU_TARGETS {target}) or "
            f"CMAKE_HIP_ARCHITECTURES {target}; PYTORCH_ROCM_ARCH={target}; "
            f"--offload-arch={target}.",
            guarded=at[0] in guards,
        )
    for m in HALF_MACRO.finditer(code):
        if (at := live(m.start())) is not None:
            ctx.report(
                "GP406",
                at[0],
                at[1],
                message=f"{m.group(0)} is remapped on ROCm",
                guarded=at[0] in guards,
            )
    for m in LINK.finditer(code):
        if (at := live(m.start())) is not None:
            name = m.group(1) or m.group(2) or m.group(3)
            ctx.report(
                "GP407",
                at[0],
                at[1],
                message=f"links NVIDIA library {m.group(0)}",
                fix=lib_fix(name),
                guarded=at[0] in guards,
            )


# --- CMake ---------------------------------------------------------------------------------

_BRACKET = re.compile(r"\[(=*)\[")
_COMMAND = re.compile(r"([A-Za-z_]\w*)[ \t]*\(")
_HIP_PATH = re.compile(
    r"(?i)\benable_language\s*\([^)]*\bHIP\b|\bfind_package\s*\(\s*(?:hip|rocm)"
    r"|\bproject\s*\([^)]*\bHIP\b|\bLANGUAGE\s+HIP\b"
)
_CUDA_FIND = re.compile(r"(?i)^\s*(CUDA|CUDAToolkit)\b")
_CMAKE_NVCC = re.compile(r"\bCMAKE_CUDA_COMPILER\b|\bCUDA_NVCC_EXECUTABLE\b|" + NVCC_WORD.pattern)
_LINK_CMDS = {"target_link_libraries", "link_libraries"}
_BARE_LIB = re.compile(rf"(?<![\w:${{/.-])({LIB_ALT})(?![\w:}}/.-])")


def _blank(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = " "


def strip_cmake_comments(text: str) -> str:
    """Blank out ``#`` and ``#[[...]]`` comments, keeping strings and bracket arguments."""
    chars = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif c == "[" and (m := _BRACKET.match(text, i)):
            end = text.find("]" + m.group(1) + "]", m.end())
            i = n if end < 0 else end + len(m.group(1)) + 2
        elif c == "#":
            m = _BRACKET.match(text, i + 1)
            if m:
                end = text.find("]" + m.group(1) + "]", m.end())
                end = n if end < 0 else end + len(m.group(1)) + 2
            else:
                end = text.find("\n", i)
                end = n if end < 0 else end
            _blank(chars, i, end)
            i = end
        else:
            i += 1
    return "".join(chars)


@dataclass(frozen=True)
class _Command:
    name: str
    args: str
    start: int  # offset of the command name
    args_start: int
    end: int  # offset just past ')'


def _commands(code: str) -> Iterator[_Command]:
    pos = 0
    while (m := _COMMAND.search(code, pos)) is not None:
        depth, j, n = 1, m.end(), len(code)
        while j < n and depth:
            ch = code[j]
            if ch == '"':
                j += 1
                while j < n and code[j] != '"':
                    j += 2 if code[j] == "\\" else 1
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            j += 1
        yield _Command(m.group(1).lower(), code[m.end() : j - 1], m.start(), m.end(), j)
        pos = j


def _cmake_guards(cmds: list[_Command], text: _Text) -> Guards:
    guards = Guards()
    stack: list[tuple[int, bool]] = []
    last = len(text.starts)
    for cmd in cmds:
        line = text.pos(cmd.start)[0]
        if cmd.name == "if":
            stack.append((line, bool(ROCM_COND.search(cmd.args))))
        elif cmd.name == "elseif" and stack:
            start, rocm = stack[-1]
            stack[-1] = (start, rocm or bool(ROCM_COND.search(cmd.args)))
        elif cmd.name == "endif" and stack:
            start, rocm = stack.pop()
            if rocm:
                guards.ranges.append((start, line))
    guards.ranges.extend((start, last) for start, rocm in stack if rocm)
    return guards


@checker(FileKind.CMAKE)
def check_cmake(ctx: FileContext) -> None:
    text = _Text(strip_cmake_comments(ctx.text))
    cmds = list(_commands(text.code))
    guards = _cmake_guards(cmds, text)
    has_hip = bool(_HIP_PATH.search(text.code))
    skip = [(c.start, c.end) for c in cmds if c.name == "message"]
    for cmd in cmds:
        hit: int | None = None
        if cmd.name in ("enable_language", "check_language", "project"):
            words = list(re.finditer(r"\S+", cmd.args))
            first = 1 if cmd.name == "project" else 0
            hit = next((w.start() for w in words[first:] if w.group(0) == "CUDA"), None)
        elif cmd.name == "find_package" and (m := _CUDA_FIND.match(cmd.args)):
            hit = m.start(1)
        elif cmd.name in ("cuda_add_library", "cuda_add_executable"):
            hit = -1
        if hit is not None:
            line, col = text.pos(cmd.start if hit < 0 else cmd.args_start + hit)
            msg = f"{cmd.name}(...) requires nvcc and the CUDA toolkit"
            if has_hip:
                msg += "; this file also has a HIP path"
            ctx.report("GP401", line, col, message=msg, guarded=has_hip or line in guards)
        if cmd.name in _LINK_CMDS:
            for m in _BARE_LIB.finditer(cmd.args):
                line, col = text.pos(cmd.args_start + m.start())
                ctx.report(
                    "GP407",
                    line,
                    col,
                    message=f"links NVIDIA library {m.group(1)}",
                    fix=lib_fix(m.group(1)),
                    guarded=line in guards,
                )
    _report_text_tokens(ctx, text, guards, skip)
    seen: set[int] = set()
    for m in _CMAKE_NVCC.finditer(text.code):
        if any(a <= m.start() < b for a, b in skip):
            continue
        line, col = text.pos(m.start())
        if line not in seen:
            seen.add(line)
            ctx.report(
                "GP408",
                line,
                col,
                message=f"{m.group(0)}: nvcc is the CUDA compiler",
                guarded=line in guards,
            )


# --- Makefiles -----------------------------------------------------------------------------

_MAKE_COND = re.compile(r"^\s*(ifeq|ifneq|ifdef|ifndef|else|endif)\b(.*)$")
_MAKE_ECHO = re.compile(r"^\s*@?-?\s*(echo|printf)\b|\$\((info|warning|error)\s")
_NVCC_VAR = re.compile(r"\$[({]NVCC[)}]")


def strip_make_comments(text: str) -> str:
    """Blank ``#`` comments (not ``\\#``, not inside quotes); a comment ending in ``\\`` goes on."""
    out: list[str] = []
    in_comment = False
    for line in text.split("\n"):
        if in_comment:
            in_comment = line.rstrip().endswith("\\")
            out.append(" " * len(line))
            continue
        quote = ""
        cut = -1
        for i, ch in enumerate(line):
            if quote:
                quote = "" if ch == quote else quote
            elif ch in "'\"" and line.startswith("\t"):
                quote = ch
            elif ch == "#" and (i == 0 or line[i - 1] != "\\"):
                cut = i
                break
        if cut >= 0:
            in_comment = line.rstrip().endswith("\\")
            line = line[:cut] + " " * (len(line) - cut)
        out.append(line)
    return "\n".join(out)


def make_guards(lines: list[str]) -> list[tuple[int, int]]:
    """Line ranges of Makefile ``ifeq/ifdef ... endif`` blocks that test ROCm/HIP."""
    ranges: list[tuple[int, int]] = []
    stack: list[tuple[int, bool]] = []
    for idx, line in enumerate(lines, 1):
        m = _MAKE_COND.match(line)
        if m is None:
            continue
        word, rest = m.group(1), m.group(2)
        if word.startswith("if"):
            stack.append((idx, bool(ROCM_COND.search(rest))))
        elif word == "else" and stack:
            start, rocm = stack[-1]
            stack[-1] = (start, rocm or bool(ROCM_COND.search(rest)))
        elif word == "endif" and stack:
            start, rocm = stack.pop()
            if rocm:
                ranges.append((start, idx))
    return ranges + [(start, len(lines)) for start, rocm in stack if rocm]


@checker(FileKind.MAKEFILE)
def check_makefile(ctx: FileContext) -> None:
    text = _Text(strip_make_comments(ctx.text))
    lines = text.code.split("\n")
    guards = Guards(make_guards(lines))
    skip = [
        (text.starts[idx], text.starts[idx] + len(line))
        for idx, line in enumerate(lines)
        if _MAKE_ECHO.search(line)
    ]
    _report_text_tokens(ctx, text, guards, skip)
    found_literal = False
    for idx, line in enumerate(lines, 1):
        if (m := NVCC_WORD.search(line)) and not _MAKE_ECHO.search(line):
            found_literal = True
            ctx.report(
                "GP408",
                idx,
                m.start() + 1,
                message="nvcc is the CUDA compiler",
                guarded=idx in guards,
            )
    if not found_literal:
        for idx, line in enumerate(lines, 1):
            if m := _NVCC_VAR.search(line):
                ctx.report(
                    "GP408",
                    idx,
                    m.start() + 1,
                    message=f"{m.group(0)} runs nvcc (NVCC is defined outside this file)",
                    guarded=idx in guards,
                )
                break
