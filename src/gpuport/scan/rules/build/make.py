"""GP4xx on Makefiles (``Makefile``, ``*.mk``), read as text with comments blanked.

``ifeq/ifdef`` blocks that test ROCm/HIP make the findings inside them guarded;
``echo``/``$(info ...)`` lines are text, not commands, and are skipped.
"""

from __future__ import annotations

import re

from gpuport import textre
from gpuport.scan.rules.base import FileContext, FileKind, checker
from gpuport.scan.rules.build.common import (
    ARCH_ASSIGN,
    ARCH_VAR,
    LINK,
    NVCC_WORD,
    ROCM_ARCH,
    ROCM_COND,
    Guards,
    lists_arch,
)
from gpuport.scan.rules.build.text import Out, Text, in_spans, report_text_tokens

_MAKE_COND = textre.compile(r"^\s*(ifeq|ifneq|ifdef|ifndef|else|endif)\b(.*)$")
_FILTER_OUT = textre.compile(r"\$[({]filter-out[ \t]+([^,\n]*),")
_MAKE_ECHO = textre.compile(r"^\s*@?-?\s*(echo|printf)\b|\$\((info|warning|error)\s")
_NVCC_VAR = textre.compile(r"\$[({]NVCC[)}]")
# TORCH_CUDA_ARCH_LIST := 8.0 9.0 (a make assignment: the value runs to the end of the line)
_MAKE_ARCH = textre.compile(
    rf"^\s*(?:export\s+|override\s+)*({ARCH_VAR.pattern})\s*(?:[:?+!]|::)?=(.*)$", re.M
)


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


_CU_RULE = textre.compile(r"^(?:\.cu\.\w+\s*:|%\.\w+\s*:\s*%\.cu\b)")
_HIP_RULE = textre.compile(r"^(?:\.hip\.\w+\s*:|%\.\w+\s*:\s*%\.hip\b)|\bhipcc\b|\$\(HIPCC\)")


def cuda_rules_beside_hip(lines: list[str]) -> list[tuple[int, int]]:
    """The ``.cu`` suffix and pattern rules (``.cu.lo:``, ``%.o: %.cu``) with their recipes,
    in a Makefile that has the HIP rule beside them (``.hip.lo:``, hipcc): they run only for
    ``.cu`` sources, which the HIP build does not compile (issue 24, fifteenth sample: elpa's
    ``Makefile.am``)."""
    if not any(_HIP_RULE.search(line) for line in lines):
        return []
    out: list[tuple[int, int]] = []
    idx = 0
    while idx < len(lines):
        if _CU_RULE.match(lines[idx]):
            end = idx + 1
            while end < len(lines) and lines[end].startswith("\t"):
                end += 1
            out.append((idx + 1, end))  # 1-based, the rule's line through its recipe
            idx = end
        else:
            idx += 1
    return out


_CUDA_VAR = r"(?:NVCC|NVCCFLAGS|NVCC_FLAGS|NVCC_OPTS|CUDAFLAGS|CUFLAGS|\w+_CUDA)"
_CUDA_ASSIGN = textre.compile(rf"^\s*(?:override\s+|export\s+)?{_CUDA_VAR}\s*[:?+!]?=")
_CUDA_USE = textre.compile(rf"\$[({{]{_CUDA_VAR}[)}}]")
_HIP_VAR = textre.compile(r"^\s*(?:override\s+|export\s+)?(?:HIPCC|HIPCCFLAGS|\w+_HIP)\s*[:?+!]?=")
#: a recipe that builds for ROCm: hipcc, or a sub-make of a HIP target (qsim's `$(MAKE) -C apps/
#: qsim-hip`)
_HIP_RECIPE = textre.compile(
    r"^\t.*(?:\$[({]HIPCC[)}]|\bhipcc\b|\$[({]MAKE[)}].*(?:\bhip|-hip\b|\bhip-))"
)
_NVCC_PROBE = textre.compile(
    r"^\s*(?:ifeq|ifneq)\b.*\$\(shell\s+(?:which|command\s+-v)\s+\$[({]NVCC[)}]"
)


def cuda_side_beside_hip(lines: list[str]) -> list[tuple[int, int]]:
    """In a Makefile that builds with hipcc too (``HIPCC ?= hipcc``, ``PYBINDFLAGS_HIP``), the
    lines that set the CUDA compiler's own variables (``NVCC ?= nvcc``, ``NVCCFLAGS +=
    -Xcompiler ...``, ``PYBINDFLAGS_CUDA``) and the test that picks the HIP build when nvcc
    is absent (``ifeq ($(shell which $(NVCC)),)``) are its CUDA side (issue 24, eighteenth
    sample: qsim). Not when the HIP side reads those variables (``HIPCCFLAGS :=
    $(NVCCFLAGS)``, a hipcc recipe with ``$(NVCCFLAGS)``): then they reach hipcc."""
    hip = [line for line in lines if _HIP_VAR.match(line) or _HIP_RULE.search(line)]
    if not any(_HIP_RECIPE.match(line) for line in lines):
        return []  # a HIPCC variable no recipe runs builds nothing for ROCm
    if any(_CUDA_USE.search(line) for line in hip):
        return []
    return [
        (idx + 1, idx + 1)
        for idx, line in enumerate(lines)
        if _CUDA_ASSIGN.match(line) or _NVCC_PROBE.match(line)
    ]


@checker(FileKind.MAKEFILE)
def check_makefile(ctx: FileContext) -> None:
    text = Text(strip_make_comments(ctx.text))
    lines = text.code.split("\n")
    guards = Guards(make_guards(lines) + cuda_rules_beside_hip(lines) + cuda_side_beside_hip(lines))
    skip = [
        (text.starts[idx], text.starts[idx] + len(line))
        for idx, line in enumerate(lines)
        if _MAKE_ECHO.search(line)
    ]
    # the flags ``$(filter-out A B,$(FLAGS))`` names are the ones taken out, not passed on
    skip += [m.span(1) for m in _FILTER_OUT.finditer(text.code)]
    out = Out(ctx)
    rocm_arch = bool(ROCM_ARCH.search(text.code))
    report_text_tokens(out, text, guards, skip, arch=not rocm_arch)
    if not rocm_arch:
        arch_hits = [(m.start(1), m.group(1), m.group(2)) for m in _MAKE_ARCH.finditer(text.code)]
        arch_hits += [(m.start(1), m.group(1), m.group(2)) for m in ARCH_ASSIGN.finditer(text.code)]
        for off, name, value in arch_hits:
            if not in_spans(skip, off) and lists_arch(value):
                line, col = text.pos(off)
                out.arch(line, col, name, line in guards)
    for m in LINK.finditer(text.code):
        if not in_spans(skip, m.start()):
            line, col = text.pos(m.start())
            out.link(line, col, m.group(0), line in guards)
    out.flush()
    _report_nvcc(out, lines, guards)


def _report_nvcc(out: Out, lines: list[str], guards: Guards) -> None:
    found_literal = False
    for idx, line in enumerate(lines, 1):
        if (m := NVCC_WORD.search(line)) and not _MAKE_ECHO.search(line):
            found_literal = True
            out.report(
                "GP408",
                idx,
                m.start() + 1,
                message="nvcc is the CUDA compiler",
                guarded=idx in guards,
            )
    if not found_literal:
        for idx, line in enumerate(lines, 1):
            if m := _NVCC_VAR.search(line):
                out.report(
                    "GP408",
                    idx,
                    m.start() + 1,
                    message=f"{m.group(0)} runs nvcc (NVCC is defined outside this file)",
                    guarded=idx in guards,
                )
                break
