"""GP4xx: build files (CMake, Makefiles, setup.py).

CMake and Makefiles are read as text with their comments blanked out (so
columns stay right) and a map of the conditional blocks that branch on
ROCm/HIP, which lowers findings inside them to guarded. ``setup.py`` is read
with :mod:`ast` only, never executed or imported; simple assignments
(``NVCC_FLAGS = [...]``, ``.append``, ``+=``) are followed so that flags kept
in a variable are found where they are written.

In CMake, ``if(0)``/``if(FALSE)`` blocks are dead and not read; nvcc flags inside
``$<$<COMPILE_LANGUAGE:CUDA>:...>`` are guarded; architecture lists count only
where a value names architectures; libraries count only where they are linked;
and CUDA find-modules (FindCUDA.cmake, run_nvcc.cmake, ...) report info only,
since they say how to find CUDA, not whether the project uses it.

The rule table is in :mod:`gpuport.scan.rules.build.rules`, the patterns all
three kinds share in :mod:`gpuport.scan.rules.build.common`, CMake syntax in
:mod:`gpuport.scan.rules.build.cmake`, the Makefile reader in
:mod:`gpuport.scan.rules.build.make` and the setup.py reader in
:mod:`gpuport.scan.rules.build.setup_py`; this module reads CMake files.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpuport import textre
from gpuport.scan.cmake_lex import Command, Word, commands, strip_cmake_comments
from gpuport.scan.rules.base import FileContext, FileKind, checker, register
from gpuport.scan.rules.build.cmake import cuda_only_spans, dead_spans, prose_spans, rocm_guards
from gpuport.scan.rules.build.cmake_nvcc import cuda_var_spans, nvcc_only_spans, probe_spans
from gpuport.scan.rules.build.common import (
    ARCH_ASSIGN,
    ARCH_VAR,
    LIB_ALT,
    LINK,
    NVCC_WORD,
    ROCM_ARCH,
    Guards,
    lists_arch,
)
from gpuport.scan.rules.build.generated import check_cmake_generated
from gpuport.scan.rules.build.make import check_makefile, make_guards, strip_make_comments
from gpuport.scan.rules.build.rules import BUILD_RULES
from gpuport.scan.rules.build.setup_py import check_setup_py
from gpuport.scan.rules.build.text import Out, Spans, Text, in_spans, report_text_tokens

__all__ = [
    "check_cmake",
    "check_makefile",
    "check_setup_py",
    "is_cuda_find_module",
    "make_guards",
    "strip_cmake_comments",
    "strip_make_comments",
]

register(*BUILD_RULES)

_HIP_PATH = textre.compile(
    r"(?i)\benable_language\s*\([^)]*\bHIP\b|\bfind_package\s*\(\s*(?:hip|rocm)"
    r"|\bproject\s*\([^)]*\bHIP\b|\bLANGUAGE\s+HIP\b"
    r"|\binclude\s*\([^)]*\b(?:LoadHIP|hip)\.cmake\b"
)
_CUDA_FIND = textre.compile(r"(?i)^\s*(CUDA|CUDAToolkit)\b")
_CMAKE_NVCC = textre.compile(
    r"\bCMAKE_CUDA_COMPILER\b|\bCUDA_NVCC_EXECUTABLE\b|" + NVCC_WORD.pattern
)
_BARE_LIB = textre.compile(rf"(?<![\w:${{/.-])({LIB_ALT})(?![\w:}}/.-])")
# Modules that describe how to find CUDA (and helpers they run), not the project's build:
# the known names only, case-sensitive, so that FindBarracuda.cmake or a project's own
# FindMyCUDAKernels.cmake is not one.
_FIND_MODULE = textre.compile(
    r"(?:^|/)(?:FindCUDA|FindCUDAToolkit|FindCUDNN|FindNCCL|FindCUDSS|FindCUSPARSELT"
    r"|FindCUB|FindNVTX|run_nvcc|select_compute_arch|make2cmake|parse_cubin)\.cmake$"
    r"|(?:^|/)(?:Modules_CUDA_fix|FindCUDA)/"
)
_FIND_NOTE = (
    "in a CUDA find-module ({name}), which describes how to find CUDA; "
    "the project's own CMake decides whether it is used"
)
# Commands whose arguments are tests or removals, not values.
_TESTS = {"if", "elseif", "while", "unset", "else", "endif", "endwhile"}
_IF_TESTS = {"if", "elseif", "while"}
_LINK_CMDS = {"target_link_libraries", "link_libraries"}
_LINK_OPTS = {"target_link_options", "add_link_options", "link_options"}
_LINK_PROP = textre.compile(
    r"(?:INTERFACE_)?LINK_(?:LIBRARIES|OPTIONS)|IMPORTED_LINK_\w*LIBRARIES\w*"
)
_LINKER_VAR = textre.compile(r"\w*(?:LINKER_FLAGS|LDFLAGS)\w*")


def is_cuda_find_module(rel: str) -> bool:
    """Whether ``rel`` is a CUDA find-module or one of its helpers (FindCUDA/run_nvcc.cmake)."""
    return bool(_FIND_MODULE.search(rel.replace("\\", "/")))


# --- values of commands --------------------------------------------------------------------


def _upto(words: list[Word], *stop: str) -> list[Word]:
    out: list[Word] = []
    for w in words:
        if w.text in stop:
            break
        out.append(w)
    return out


def _property_values(
    cmd: Command, words: list[Word], prop: re.Pattern[str]
) -> Iterator[tuple[Word, list[Word]]]:
    """(property name, its values) for properties matching ``prop`` that the command sets."""
    names = [w.text for w in words]
    if cmd.name == "set_property" and "PROPERTY" in names:
        i = names.index("PROPERTY")
        if i + 1 < len(words) and prop.fullmatch(names[i + 1]):
            yield words[i + 1], words[i + 2 :]
    elif cmd.name.startswith("set_") and cmd.name.endswith("_properties") and "PROPERTIES" in names:
        i = names.index("PROPERTIES") + 1
        pairs = words[i:]
        for key, value in zip(pairs[::2], pairs[1::2], strict=False):
            if prop.fullmatch(key.text):
                yield key, [value]


def _assigned(
    cmd: Command, words: list[Word], var: re.Pattern[str]
) -> Iterator[tuple[Word, list[Word]]]:
    """(variable, the values given to it) for ``set``/``list(APPEND)``/``string(APPEND)``."""
    if cmd.name == "set" and words:
        name = words[0].text.removeprefix("ENV{").removesuffix("}")
        if var.fullmatch(name):
            yield words[0], _upto(words[1:], "CACHE", "PARENT_SCOPE")
    elif cmd.name in ("list", "string") and len(words) >= 2:
        op = words[0].text.upper()
        if op in ("APPEND", "PREPEND", "INSERT") and var.fullmatch(words[1].text):
            yield words[1], words[3:] if op == "INSERT" else words[2:]


def _doc_spans(cmds: list[Command]) -> Spans:
    """The help strings of cache entries and options (``set(X "0" CACHE STRING "e.g. sm_70")``,
    ``option(X "doc" OFF)``): documentation, not a value (issue 24, ninth round)."""
    spans: Spans = []
    for cmd in cmds:
        if cmd.name not in ("set", "option", "cmake_dependent_option"):
            continue
        words = cmd.words()
        at = (
            1
            if cmd.name != "set"
            else next((i + 2 for i, w in enumerate(words) if w.text == "CACHE"), len(words))
        )
        if at < len(words):
            w = words[at]
            spans.append((w.start, w.start + len(w.text) + 2))
    return spans


def _arch_hits(cmd: Command, words: list[Word]) -> Iterator[tuple[int, str]]:
    """(offset, name) where an architecture variable or property is given NVIDIA archs."""
    found = [*_assigned(cmd, words, ARCH_VAR), *_property_values(cmd, words, ARCH_VAR)]
    for name, values in found:
        if lists_arch(" ".join(v.text for v in values)):
            yield name.start, name.text
    for m in ARCH_ASSIGN.finditer(cmd.args):
        if lists_arch(m.group(2)):
            yield cmd.args_start + m.start(1), m.group(1)


def _link_spans(cmd: Command, words: list[Word]) -> Iterator[tuple[Word, bool]]:
    """Arguments that name what is linked, and whether a bare name (cublas) counts there."""
    if cmd.name in _LINK_CMDS:
        yield from ((w, True) for w in words[1 if cmd.name == "target_link_libraries" else 0 :])
    elif cmd.name in _LINK_OPTS:
        yield from ((w, False) for w in words)
    else:
        for prop, values in _property_values(cmd, words, _LINK_PROP):
            bare = "LIBRARIES" in prop.text
            yield from ((w, bare) for w in values)
        for _, values in _assigned(cmd, words, _LINKER_VAR):
            yield from ((w, False) for w in values)


# --- the checker ---------------------------------------------------------------------------


@checker(FileKind.CMAKE)
def check_cmake(ctx: FileContext) -> None:
    text = Text(strip_cmake_comments(ctx.text))
    code = text.code
    cmds = list(commands(code))
    guards = rocm_guards(cmds, text)
    dead = dead_spans(cmds, len(code))
    live = [c for c in cmds if not in_spans(dead, c.start)]
    note = None
    if is_cuda_find_module(ctx.rel):
        note = _FIND_NOTE.format(name=ctx.rel.replace("\\", "/").rsplit("/", 1)[-1])
    out = Out(ctx, note)
    live_code = _blank_spans(code, dead)
    has_hip = bool(_HIP_PATH.search(live_code))
    rocm_arch = bool(ROCM_ARCH.search(live_code))
    skip: Spans = [
        *dead,
        *((c.start, c.end) for c in cmds if c.name == "message"),
        *probe_spans(live),
        *_doc_spans(live),
        *prose_spans(live, code),
    ]
    tests: Spans = [(c.start, c.end) for c in cmds if c.name in _TESTS]
    # a flag inside a test is looked for, not passed on (issue 24)
    flag_skip: Spans = [*skip, *((c.args_start, c.end) for c in cmds if c.name in _IF_TESTS)]
    for cmd in live:
        _check_language(out, text, cmd, has_hip, guards)
        words = cmd.words()
        if not rocm_arch and cmd.name not in _TESTS and cmd.name != "message":
            for off, name in _arch_hits(cmd, words):
                line, col = text.pos(off)
                out.arch(line, col, name, line in guards)
        for word, bare in _link_spans(cmd, words):
            _link_word(out, text, word, bare, guards)
    cuda_lang = cuda_only_spans(code)
    report_text_tokens(
        out,
        text,
        guards,
        flag_skip,
        arch=not rocm_arch,
        cuda_only=[*cuda_lang, *nvcc_only_spans(live), *cuda_var_spans(live, code, cuda_lang)],
        arch_skip=tests,
    )
    out.flush()
    check_cmake_generated(ctx, _blank_spans(code, dead))
    seen: set[int] = set()
    for m in _CMAKE_NVCC.finditer(code):
        if (
            in_spans(skip, m.start())
            or in_spans(tests, m.start())
            or _forwarded(code, m)
            or _genex_test(code, m.start())
            or _dependency(code, m.start())
            or _CHOICES.search(code, max(0, m.start() - 400), m.start())
        ):
            continue
        line, col = text.pos(m.start())
        if line not in seen:
            seen.add(line)
            out.report(
                "GP408",
                line,
                col,
                message=f"{m.group(0)}: nvcc is the CUDA compiler",
                guarded=line in guards,
            )


#: the values a cache entry offers (``set_property(CACHE CMAKE_HIP_PLATFORM PROPERTY STRINGS
#: "hcc" "nvcc" "amd")``, vecmem, twenty-third sample): a list of choices runs nothing
_CHOICES = textre.compile(r"(?i)\bset_property\s*\([^()]*\bPROPERTY\s+STRINGS\b[^()]*$")

#: Generator expressions that compare (``$<STREQUAL:${HIP_PLATFORM},nvcc>``) or ask for a
#: compiler id: a word in them is tested for, not run.
_GENEX_TESTS = textre.compile(
    r"(?:STREQUAL|EQUAL|IN_LIST|VERSION_\w+|\w*COMPILER_ID|COMPILE_LANG_AND_ID|PLATFORM_ID)$"
)


def _genex_test(code: str, pos: int) -> bool:
    """Whether ``pos`` is an operand of a comparing generator expression (hoomd-blue's
    ``$<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<STREQUAL:${HIP_PLATFORM},nvcc>>:...>``): nvcc is
    compared with a variable there, not invoked (issue 24, fifth round)."""
    lo = max(0, pos - 300)
    depth = 0
    i = pos - 1
    while i >= lo:
        c = code[i]
        if c == ">":
            depth += 1
        elif c == "<" and i > 0 and code[i - 1] == "$":
            if depth == 0:
                head = code[i + 1 : pos].split(":", 1)
                return len(head) == 2 and _GENEX_TESTS.fullmatch(head[0]) is not None
            depth -= 1
        i -= 1
    return False


def _forwarded(code: str, m: re.Match[str]) -> bool:
    """``${CMAKE_CUDA_COMPILER}`` read, or ``-DCMAKE_CUDA_COMPILER=${...}`` handed on to a
    sub-build: the project passes along whatever compiler it was configured with; it does not
    choose nvcc (issue 24)."""
    if m.group(0) == "nvcc":
        return False
    if code[max(0, m.start() - 2) : m.start()] == "${":
        return True
    return textre.match(r"\s*(?::\w+)?=\s*\$\{", code[m.end() : m.end() + 40]) is not None


_DEPENDS = textre.compile(r"(?:^|\s)DEPENDS(?:_ON)?((?:\s+\w+)*)\s*$")


def _dependency(code: str, pos: int) -> bool:
    """The word at ``pos`` is one of the conditions an option depends on (``sundials_option(X
    ... DEPENDS_ON ENABLE_CUDA CMAKE_CUDA_COMPILER)``, or the ``"A;B"`` condition of
    ``cmake_dependent_option``): the option is offered only where a CUDA compiler was found,
    which asks for no nvcc (issue 24)."""
    start = code.rfind("(", max(0, pos - 400), pos)
    if start < 0:
        return False
    before = code[start + 1 : pos]
    if _DEPENDS.search(before) is not None:
        return True
    head = code[max(0, start - 30) : start].rstrip()
    quote = before.rfind('"')
    return head.endswith("cmake_dependent_option") and quote >= 0 and before.count('"') % 2 == 1


def _blank_spans(code: str, spans: Spans) -> str:
    chars = list(code)
    for a, b in spans:
        for i in range(a, b):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def _check_language(out: Out, text: Text, cmd: Command, has_hip: bool, guards: Guards) -> None:
    """GP401: the command enables or looks for CUDA."""
    hit: int | None = None
    # check_language(CUDA) only asks whether nvcc is there: a probe (issue 24); what the
    # project does with the answer (enable_language, project) is what counts
    if cmd.name in ("enable_language", "project"):
        words = list(textre.finditer(r"\S+", cmd.args))
        first = 1 if cmd.name == "project" else 0
        hit = next((w.start() for w in words[first:] if w.group(0) == "CUDA"), None)
    elif cmd.name == "find_package" and (m := _CUDA_FIND.match(cmd.args)):
        hit = m.start(1)
    elif cmd.name in ("cuda_add_library", "cuda_add_executable"):
        hit = -1
    if hit is None:
        return
    line, col = text.pos(cmd.start if hit < 0 else cmd.args_start + hit)
    msg = f"{cmd.name}(...) requires nvcc and the CUDA toolkit"
    if has_hip:
        msg += "; this file also has a HIP path"
    out.report("GP401", line, col, message=msg, guarded=has_hip or line in guards)


def _link_word(out: Out, text: Text, word: Word, bare: bool, guards: Guards) -> None:
    """GP407 for one argument of a link context: -lcudart, CUDA::cublas, ${CUDA_LIBRARIES}."""
    raw = text.code[word.start : word.start + len(word.text) + 2]
    shift = 1 if raw.startswith('"') else 0
    pats = [LINK, _BARE_LIB] if bare else [LINK]
    for pat in pats:
        for m in pat.finditer(word.text):
            line, col = text.pos(word.start + shift + m.start())
            out.link(line, col, m.group(0), line in guards)
