"""CMake text that mentions nvcc or its flags without giving them to a ROCm compiler.

Issue 24 (false positives on CMake C++ libraries with a HIP backend): a flag or the word
``nvcc`` in CMake is a finding only where it reaches the compiler of the build. Three kinds
of text do not:

* **tests and probes**: ``if("-Xcompiler" IN_LIST FLAGS)``, ``list(REMOVE_ITEM FLAGS
  "-Xcompiler")``, ``string(FIND ${version} "nvcc" found)``, ``execute_process(COMMAND
  ${CXX} --version)`` look for nvcc or a flag; they pass nothing on. Their spans are skipped.
* **nvcc-only flag lists**: values written to ``CMAKE_CUDA_FLAGS``/``CUDA_NVCC_FLAGS`` or to a
  variable named for nvcc (``NODEDUP_XCOMPILER_OPTIONS``), and the body of a function or
  macro named for it (``function(GKO_XCOMPILER ...)``): only nvcc (the CUDA language) reads
  them, a ROCm build never does. Flags there are *guarded*, like those in
  ``$<$<COMPILE_LANGUAGE:CUDA>:...>``.
* **per-compiler flag tables**: ``compiler_specific_flags(Clang -fgpu-rdc NVIDIA
  --relocatable-device-code=true)``: the flags after CMake's compiler id ``NVIDIA`` (nvcc) up
  to the next compiler id are chosen only when nvcc compiles; they are guarded too.
* **flag lists only CUDA reads**: ``set(CUDA_RELEASE_FLAGS --expt-extended-lambda ...)`` whose
  every ``${CUDA_RELEASE_FLAGS}`` in the file is inside ``$<$<COMPILE_LANGUAGE:CUDA>:...>``
  (gunrock, whose AMD backend compiles ``LANGUAGE HIP`` with its own ``HIP_FLAGS``; issue 24,
  eleventh sample): guarded too. A list used anywhere else, or in no place this file shows,
  is not.

``check_language(CUDA)`` is a probe as well (it asks whether CUDA is there); the rule for
GP401 leaves it out, and ``enable_language(CUDA)`` stays a finding.
"""

from __future__ import annotations

import re

from gpuport import textre
from gpuport.scan.cmake_lex import Command
from gpuport.scan.rules.build.text import Spans, in_spans

__all__ = ["cuda_var_spans", "nvcc_only_spans", "probe_spans"]

#: ``list(...)``/``string(...)`` sub-commands that read or remove, never pass a value on
_LIST_TESTS = frozenset({"REMOVE_ITEM", "REMOVE_AT", "REMOVE_DUPLICATES", "FIND", "FILTER"})
_STRING_TESTS = frozenset({"FIND", "REPLACE", "REGEX", "COMPARE"})
#: a variable (or function) that holds flags only nvcc reads
_NVCC_VAR = textre.compile(
    r"^(?:CMAKE_CUDA_FLAGS\w*|CUDA_NVCC_FLAGS\w*|\w*NVCC\w*|\w*XCOMPILER\w*)$", re.I
)
_HIP_NAME = textre.compile(r"HIP|ROCM|AMD", re.I)
#: CMake's compiler ids: a flag table's columns
_COMPILER_ID = frozenset(
    {"Clang", "AppleClang", "GNU", "Intel", "IntelLLVM", "MSVC", "NVIDIA", "NVHPC", "PGI",
     "XL", "XLClang", "Cray", "Fujitsu", "HIPCC", "DEFAULT"}
)  # fmt: skip
_VERSION_PROBE = textre.compile(r"(?:^|\s)(?:--version|-V|--help)(?:\s|$)")


def _first(cmd: Command) -> str:
    words = cmd.args.split(None, 1)
    return words[0].strip('"').upper() if words else ""


def probe_spans(cmds: list[Command]) -> Spans:
    """Arguments of commands that test for a flag or for nvcc rather than pass one on."""
    spans: Spans = []
    for cmd in cmds:
        first = _first(cmd)
        if (
            (cmd.name == "list" and first in _LIST_TESTS)
            or (cmd.name == "string" and first in _STRING_TESTS)
            or (cmd.name == "execute_process" and _VERSION_PROBE.search(cmd.args))
        ):
            spans.append((cmd.args_start, cmd.end))
    return spans


def _target_var(cmd: Command) -> str:
    """The variable ``set``/``string(APPEND)``/``list(APPEND)`` write, or ''."""
    words = cmd.args.split()
    if cmd.name == "set" and words:
        return words[0]
    if cmd.name in ("string", "list") and len(words) >= 2 and words[0].upper() in (
        "APPEND", "PREPEND", "INSERT"
    ):  # fmt: skip
        return words[1]
    return ""


def _table_spans(cmd: Command) -> Spans:
    """The NVIDIA column of a per-compiler flag table in ``cmd``'s arguments."""
    out: Spans = []
    start: int | None = None
    for m in textre.finditer(r"[^\s\"]+", cmd.args):
        word = m.group(0)
        if word in _COMPILER_ID:
            if start is not None:
                out.append((start, cmd.args_start + m.start()))
                start = None
            if word == "NVIDIA":
                start = cmd.args_start + m.end()
    if start is not None:
        out.append((start, cmd.end))
    return out


def nvcc_only_spans(cmds: list[Command]) -> Spans:
    """Spans whose flags only nvcc ever reads (see the module's docstring)."""
    spans: Spans = []
    body_start: int | None = None
    for cmd in cmds:
        if cmd.name in ("function", "macro") and body_start is None:
            name = cmd.args.split(None, 1)[0] if cmd.args.split() else ""
            if _NVCC_VAR.match(name) and not _HIP_NAME.search(name):
                body_start = cmd.end
            continue
        if cmd.name in ("endfunction", "endmacro") and body_start is not None:
            spans.append((body_start, cmd.start))
            body_start = None
            continue
        var = _target_var(cmd)
        if var and _NVCC_VAR.match(var) and not _HIP_NAME.search(var):
            spans.append((cmd.args_start, cmd.end))
        elif cmd.name not in ("if", "elseif", "while") and "NVIDIA" in cmd.args:
            spans.extend(_table_spans(cmd))
    return spans


def cuda_var_spans(cmds: list[Command], code: str, cuda_only: Spans) -> Spans:
    """The values written to variables whose every use in ``code`` is inside ``cuda_only``
    (spans of ``$<$<COMPILE_LANGUAGE:CUDA>:...>``); see the module's docstring."""
    if not cuda_only:
        return []
    writes: dict[str, list[tuple[int, int]]] = {}
    for cmd in cmds:
        var = _target_var(cmd)
        if var and textre.fullmatch(r"[A-Za-z_]\w*", var):
            writes.setdefault(var, []).append((cmd.args_start, cmd.end))
    uses: dict[str, list[int]] = {}
    for m in _VAR_REF.finditer(code):  # one pass over the text, however many variables
        if m.group(1) in writes:
            uses.setdefault(m.group(1), []).append(m.start())
    spans: Spans = []
    for var, where in writes.items():
        seen = uses.get(var)
        if seen and all(in_spans(cuda_only, u) for u in seen):
            spans.extend(where)
    return spans


_VAR_REF = textre.compile(r"\$\{([A-Za-z_]\w*)\}")
