"""What a project's documented ROCm route is shown to build (issue 24, eighth round).

In a project that already has a working ROCm route, the question a scan answers is "what
breaks on that route", so a finding keeps its severity only where there is positive evidence
that the route compiles the code it cites. A native file is *shown on the route* when:

* a build file that builds for ROCm names it outside its CUDA-only branches (a source of the
  HIP branch, or one both branches compile: :attr:`BuildModel.rocm_named`);
* a setup.py names it as an extension source outside a CUDA-only branch: ROCm torch hipifies
  and compiles what such a setup.py builds;
* it includes, directly or through other project headers, a portability header of the
  project's own (three or more ``#define cudaX hipX``): code written against it;
* it is a source directly in a folder such a build file adds (``add_subdirectory``) outside
  its CUDA-only branches;
* its own text is written for HIP too (a HIP/ROCm macro such as ``__HIP_PLATFORM_AMD__``,
  ``USE_ROCM``, ``X_COMPILE_HIP``, a ``hip/`` header, a ``hip*`` runtime call): code the
  project compiles on both sides;
* a file shown on the route includes it (resolved by path, :mod:`include_paths`), outside
  the CUDA side of a conditional (``#elif defined(USE_CUDA)``, the ``#else`` of a HIP test),
  followed until nothing changes. Of several files one include may denote, one in a folder named for
  CUDA/NVIDIA is not taken when another, not so named, is (per-target include folders:
  ``include/targets/cuda/x.h`` beside ``include/targets/generic/x.h``).

Everything else is *not shown*: in a project with a route its findings are lowered to info
by :func:`gpuport.scan.project.view.apply`, naming the route, never dropped.

A build-file line (CMake, Make) is shown on the route when every conditional around it is
one a ROCm build takes (or it is outside any): :func:`open_branch`, the innermost test of
unknown (or false) value around a line, says otherwise. A Makefile variable is "read by
nothing" only in a Makefile nothing combines (forty-third re-run F12: ``make -f a -f b``) and
that no other Makefile needs (uses without assigning it; forty-fourth re-run F12).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any

from gpuport import textre
from gpuport.scan.cxx_expr import ROCM_MACRO
from gpuport.scan.project.build_cmake_model import (
    CUDA_VAR,
    HIP_VAR,
    NOT_ROCM_WORD,
    ROCM_WORD,
    close_paren,
    cond_value,
)
from gpuport.scan.project.build_make_flow import MakeFlow, MakeIncludes, make_flow
from gpuport.scan.project.include_paths import owners_by_name, resolve_one

__all__ = [
    "OFF_ROUTE",
    "RouteShown",
    "cuda_only_genex",
    "has_hip_mark",
    "make_flow_of",
    "make_unshown",
    "off_route",
    "on_route_files",
    "open_branch",
    "rocm_branch_defines",
    "route_includes",
]

#: Text written for HIP: the compiler's and torch's macros, a project's own HIP/ROCm macro
#: (``OIDN_COMPILE_HIP``, ``GGML_USE_HIP``, ``MYLIB_ENABLE_ROCM``), HIP headers and calls.
_HIP_MARK = textre.compile(
    r"__HIP(?:_PLATFORM_\w+|CC|_DEVICE_COMPILE)?__|\bUSE_ROCM\b"
    r"|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:HIP|ROCM)(?:_[A-Z0-9]+)*\b"
    r"|[<\"/]hip/|\bhip(?:rtc|blas|fft|sparse|solver|rand)?[A-Z]\w*\s*\(|\bhipcub::|\brocprim::"
)
#: the words every finding lowered for this says (the verdict counts them)
OFF_ROUTE = "not shown to be built by the ROCm route"
_SOURCE = textre.compile(r"\.(?:cu|cpp|cc|cxx|c)$")
_CUDA_FOLDER = textre.compile(r"(?:^|/)(?:cuda|nvidia|nv|cublas|ptx|sm\d+)(?:/|$)", re.I)


def has_hip_mark(text: str) -> bool:
    """Whether a C/C++ text is written for HIP too (see the module docstring)."""
    return ("hip" in text or "HIP" in text or "ROCM" in text or "rocprim" in text) and bool(
        _HIP_MARK.search(text)
    )


_DIRECTIVE = textre.compile(
    r"^[ \t]*\#[ \t]*(if|ifdef|ifndef|elif|else|endif|include)\b[ \t]*([^\n]*)", re.M
)
_CUDA_SIDE = textre.compile(r"(?<![A-Za-z0-9])(?:CUDA|NVCC|CUDACC|NVIDIA)(?![a-z])|__CUDA_ARCH__")
_WORDS = textre.compile(r"\w+")
_WRITTEN = textre.compile(r'^[<"]([^>"]+)[>"]')


def _term_side(term: str, rocm_defined: frozenset[str]) -> int:
    """1 when a test's term wants HIP, -1 when it wants CUDA, 0 neither or both (or it
    names a macro a build file defines on the ROCm side too)."""
    sides = set()
    for part in term.split("&&"):
        part = part.strip().strip("()").strip()
        if rocm_defined and rocm_defined.intersection(_WORDS.findall(part)):
            continue
        hip = ROCM_MACRO.search(part) is not None
        cuda = _CUDA_SIDE.search(part) is not None
        if hip == cuda:
            continue
        neg = part.startswith("!") or part.startswith("not ")
        if not neg:  # a negated term (``!defined(USE_CUDA)``) wants neither side
            sides.add(1 if hip else -1)
    return sides.pop() if len(sides) == 1 else 0


def _side(kind: str, expr: str, rocm_defined: frozenset[str]) -> int:
    """1 when a conditional's branch is the HIP side, -1 the CUDA side, 0 neither: every
    disjunct of its test wants the same side (``defined(USE_CUDA) || defined(USE_CUDAUVM)``)."""
    if kind == "ifndef":
        return 0
    if kind == "ifdef":
        expr = f"defined({expr.strip()})"
    sides = {_term_side(t, rocm_defined) for t in expr.split("||")}
    return sides.pop() if len(sides) == 1 else 0


def route_includes(
    includer: str,
    text: str,
    owners: Mapping[str, list[str]],
    rocm_defined: frozenset[str] = frozenset(),
) -> set[str]:
    """The project files ``includer``'s includes denote, less those it includes only on the
    CUDA side of a conditional (``#elif defined(USE_CUDA)``, the ``#else`` of a HIP test)."""
    out: set[str] = set()
    # per conditional: [side of this branch, sides seen (1: HIP, 2: CUDA)]
    stack: list[list[int]] = []
    cuda: list[bool] = []  # cuda[i]: a frame of stack[: i + 1] is the CUDA side
    bits = {1: 1, -1: 2, 0: 0}
    for m in _DIRECTIVE.finditer(text):
        kind, rest = m.group(1), m.group(2)
        if kind in ("if", "ifdef", "ifndef"):
            side = _side(kind, rest, rocm_defined)
            stack.append([side, bits[side]])
        elif kind == "elif" and stack:
            side = _side("elif", rest, rocm_defined)
            stack[-1] = [side, stack[-1][1] | bits[side]]
        elif kind == "else" and stack:
            seen = stack[-1][1]
            stack[-1] = [{1: -1, 2: 1}.get(seen, 0), seen]
        elif kind == "endif" and stack:
            stack.pop()
        elif kind == "include" and not (cuda and cuda[-1]):
            w = _WRITTEN.match(rest.strip())
            if w:
                out.update(_targets(includer, resolve_one(includer, w.group(1), owners)))
            continue
        # every open frame per #include was includes x depth (sixteenth re-run: 800 KB, 50 s)
        _fold(stack, cuda, lambda f, below: f[0] == -1 or bool(below))
    return out


def _fold(stack: list[list[int]], agg: list[Any], step: Callable[[list[int], Any], Any]) -> None:
    """Keep ``agg[i] == step(stack[i], agg[i - 1])`` (``None`` below the first frame) after one
    change at the stack's top (a push, a pop or the top frame changed): a question about every
    open frame is then one lookup, not a walk of the stack per line."""
    del agg[len(stack) :]
    if stack:
        top = step(stack[-1], agg[len(stack) - 2] if len(stack) > 1 else None)
        if len(agg) == len(stack):
            agg[-1] = top
        else:
            agg.append(top)


def _targets(includer: str, got: Iterable[str]) -> Iterable[str]:
    """The files an include of ``includer`` carries the route to: of several candidates,
    not one under a CUDA-named folder when another is not under one."""
    got = list(got)
    if len(got) < 2:
        return got
    plain = [g for g in got if not _CUDA_FOLDER.search(g.rsplit("/", 1)[0] if "/" in g else "")]
    return plain if plain else got


class RouteShown:
    """:func:`on_route_files` of a project, worked out on first use (a project with a route
    and a native finding asks): most scans never need it."""

    def __init__(
        self,
        native: Mapping[str, str] | None = None,
        build: Any = None,
        setup_sources: Iterable[str] = (),
        build_files: Mapping[str, str] | None = None,
        resolved: Mapping[str, frozenset[str]] | None = None,
    ) -> None:
        self._args = (native or {}, build, list(setup_sources), build_files or {}, resolved or {})
        self._files: dict[str, str] | None = None

    def files(self) -> dict[str, str]:
        if self._files is None:
            native, build, setup_sources, build_files, resolved = self._args
            self._files = (
                on_route_files(
                    native,
                    build.rocm_named,
                    setup_sources,
                    build.not_built,
                    build.rocm_dirs,
                    rocm_branch_defines(build_files),
                    resolved,
                )
                if build is not None
                else {}
            )
        return self._files

    def __contains__(self, rel: object) -> bool:
        return rel in self.files()

    def get(self, rel: str) -> str | None:
        return self.files().get(rel)


#: A portability header maps CUDA runtime names to HIP ones (``#define cudaMalloc hipMalloc``,
#: ``#define cufftDestroy hipfftDestroy``): the project compiles its CUDA-style code for HIP
#: through it.
_PORT_DEFINE = textre.compile(
    r"^[ \t]*\#[ \t]*define[ \t]+(?:cu|CU|__shfl)\w*[ \t]+(?:hip|HIP)\w*", re.M
)
_MIN_PORT_DEFINES = 3


def _portable_includers(
    native: Mapping[str, str],
    resolved: Mapping[str, frozenset[str]],
    not_built: Mapping[str, str],
    shown: dict[str, str],
) -> None:
    """Files that include (directly or through other project headers) a portability header of
    the project's own (at least three ``#define cudaX hipX`` lines) are written against it: the
    ROCm build compiles them through it."""
    ports = [
        rel
        for rel, text in native.items()
        if "define" in text
        and ("hip" in text or "HIP" in text)
        and len(_PORT_DEFINE.findall(text)) >= _MIN_PORT_DEFINES
    ]
    if not ports:
        return
    includers: dict[str, list[str]] = {}
    for rel, targets in resolved.items():
        for t in targets:
            includers.setdefault(t, []).append(rel)
    todo = list(ports)
    seen = set(ports)
    while todo:
        header = todo.pop()
        for rel in includers.get(header, ()):
            if rel in seen or rel in not_built:
                continue
            seen.add(rel)
            shown.setdefault(rel, f"written against the project's HIP portability header {header}")
            todo.append(rel)


def on_route_files(
    native: Mapping[str, str],
    rocm_named: Iterable[str],
    setup_sources: Iterable[str],
    not_built: Mapping[str, str],
    rocm_dirs: Iterable[str] = (),
    rocm_defined: frozenset[str] = frozenset(),
    resolved: Mapping[str, frozenset[str]] | None = None,
) -> dict[str, str]:
    """Native file -> why it is shown to be compiled by the ROCm route (see the module
    docstring). ``not_built`` files never are; ``rocm_defined``: macros a build file defines
    on the ROCm side (an include under one of them is not the CUDA side)."""
    shown: dict[str, str] = {}
    for rel in rocm_named:
        if rel in native and rel not in not_built:
            shown.setdefault(rel, "named by a build file that builds for ROCm")
    for rel in setup_sources:
        if rel in native and rel not in not_built:
            shown.setdefault(rel, "an extension source of a setup.py (hipified by ROCm torch)")
    _portable_includers(native, resolved or {}, not_built, shown)
    added = set(rocm_dirs)
    for rel, text in native.items():
        if rel in shown or rel in not_built:
            continue
        if has_hip_mark(text):
            shown[rel] = "written for HIP too"
        elif _SOURCE.search(rel) and (rel.rsplit("/", 1)[0] if "/" in rel else "") in added:
            shown[rel] = "a source of a folder a build file that builds for ROCm adds"
    owners = owners_by_name(native)
    todo = list(shown)
    while todo:
        rel = todo.pop()
        text = native[rel]
        found = route_includes(rel, text, owners, rocm_defined) if "include" in text else set()
        for dest in found:
            if dest not in shown and dest not in not_built:
                shown[dest] = f"included by {rel}"
                todo.append(dest)
    return shown


_CMAKE_COND = textre.compile(r"^[ \t]*(if|elseif|else|endif)[ \t]*\(", re.I | re.M)
_MAKE_COND = textre.compile(r"^[ \t]*(ifeq|ifneq|ifdef|ifndef|else|endif)\b(.*)$", re.M)
_MAKE_WORD = textre.compile(r"\$\((\w+)\)|\b(\w+)\b")
#: a Makefile test against the empty string (``ifneq ($(X),)``, ``ifeq (,$(X))``)
_EMPTY_TEST = textre.compile(r"^[ \t]*\([ \t]*,|,[ \t]*\)[ \t]*$|^[ \t]*\"\"|\"\"[ \t]*$")


def _cmake_args(text: str, start: int) -> str:
    """The arguments of the command whose ``(`` is at ``start``."""
    end = close_paren(text, start)
    return text[start + 1 : end] if end >= 0 else text[start + 1 : start + 200]


def _make_value(kind: str, rest: str) -> bool | None:
    """A Makefile test's value on a ROCm build: ``ifdef X_HIP`` true, ``ifdef X_CUDA`` false,
    ``ifeq ($(BACKEND),hip)`` true, ``ifeq ($(BACKEND),cuda)`` false; else unknown."""
    names = [a or b for a, b in _MAKE_WORD.findall(rest)]
    if kind in ("ifdef", "ifndef"):
        name = names[0] if names else ""
        v = True if HIP_VAR.match(name) else (False if CUDA_VAR.match(name) else None)
        return v if kind == "ifdef" or v is None else not v
    hip = any(HIP_VAR.match(x) or ROCM_WORD.match(x) for x in names)
    cuda = any(CUDA_VAR.match(x) or NOT_ROCM_WORD.match(x) for x in names)
    if _EMPTY_TEST.search(rest):
        # ``ifneq ($(HIP_LIB_DIR),)``: whether it is set, not which value it has: a HIP
        # variable is set on a ROCm build; whether a CUDA one is, is not known
        is_set = True if hip and not cuda else None
        return is_set if kind == "ifneq" or is_set is None else not is_set
    v = True if hip and not cuda else (False if cuda and not hip else None)
    return v if kind == "ifeq" or v is None else not v


def _advance(stack: list[list[int]], m: re.Match[str], text: str, at: int) -> None:
    """Follow one conditional command (``m``: a match of ``_CMAKE_COND``/``_MAKE_COND``) on the
    stack of open ones: per conditional [line of the current branch's test, it is shown
    taken, an earlier branch is taken, every earlier branch is false]."""
    kind = m.group(1).lower()
    if kind in ("if", "elseif"):
        value = cond_value(_cmake_args(text, m.end() - 1))
    elif kind in ("ifeq", "ifneq", "ifdef", "ifndef"):
        value = _make_value(kind, m.group(2))
    else:
        value = None
    if kind in ("if", "ifeq", "ifneq", "ifdef", "ifndef"):
        stack.append([at, int(value is True), int(value is True), int(value is False)])
    elif kind in ("elseif", "else") and stack:
        f = stack[-1]
        if kind == "else" and f[3] and not f[2]:
            value = True  # every earlier test is false on ROCm: this branch is taken
        taken = 0 if f[2] else int(value is True)
        f[0], f[1], f[2], f[3] = at, taken, int(f[2] or taken), int(f[3] and value is False)
    elif kind == "endif" and stack:
        stack.pop()


def open_branch(path: str, text: str, line: int) -> int | None:
    """The line of the innermost conditional around ``line`` of a CMake file or Makefile
    whose branch a ROCm build is not shown to take (a test of unknown or false value, an
    ``else()`` after a test of unknown value); None when every branch around it is taken
    (or it is in none). The file's conditionals are followed once (:func:`_branches`) and
    each line looked up: following them from the top for each finding was findings x
    conditionals (a CMake file of 600 guarded blocks: 34 s CPU)."""
    table = _branches(path, text)
    if table is None:
        return None
    ats, answers = table
    i = bisect_left(ats, line) - 1  # the last conditional before the line
    return answers[i] if i >= 0 else None


@lru_cache(maxsize=32)
def _branches(path: str, text: str) -> tuple[list[int], list[int | None]] | None:
    """Each conditional's line, and the answer of :func:`open_branch` for the lines after it
    (until the next one); None for a file that is neither CMake nor a Makefile."""
    name = path.rsplit("/", 1)[-1].lower()
    cmake = name == "cmakelists.txt" or name.endswith(".cmake")
    if not cmake and not _is_makefile(path):
        return None
    # per open conditional: [line of the current branch's test, it is shown taken, an
    # earlier branch is taken, every earlier branch is false]
    stack: list[list[int]] = []
    line_of = textre.line_finder(text)
    ats: list[int] = []
    answers: list[int | None] = []
    inner: list[int | None] = []  # inner[i]: the innermost frame of stack[: i + 1] not taken
    for m in (_CMAKE_COND if cmake else _MAKE_COND).finditer(text):
        at = line_of(m.start())
        _advance(stack, m, text, at)
        _fold(stack, inner, lambda f, below: below if f[1] else f[0])
        ats.append(at)
        answers.append(inner[-1] if inner else None)
    return ats, answers


_NATIVE_FILE = textre.compile(r"\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp|hh|hxx|inl)$")


def off_route(
    rule_id: str,
    path: str,
    line: int | None,
    shown: RouteShown | Mapping[str, str],
    build_texts: Mapping[str, str],
    route: str,
    column: int | None = None,
) -> str | None:
    """Why a finding of a project with a ROCm route (``route``: its first evidence) is not
    shown to be on that route: native code (GP3xx) in a file not ``shown`` on it, or a
    build-file line (GP4xx) in a branch a ROCm build is not shown to take; None when it is
    shown (or is neither)."""
    if rule_id.startswith("GP3") and _NATIVE_FILE.search(path):
        if path in shown:
            return None
        return f"{OFF_ROUTE} (route: {route})"
    text = build_texts.get(path)
    if not rule_id.startswith("GP4") or text is None or line is None:
        return None
    at = open_branch(path, text, line)
    if at is None:
        why = make_unshown(path, text, line, build_texts) or cuda_only_genex(text, line, column)
        return f"{OFF_ROUTE}: {why} (route: {route})" if why else None
    return (
        f"{OFF_ROUTE}: {path}:{at} is a branch a ROCm build is not shown to take (route: {route})"
    )


#: a generator expression that holds only when CUDA sources are compiled
#: (``$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fPIC>``, ``$<COMPILE_LANG_AND_ID:CUDA,NVIDIA>``)
_CUDA_GENEX = textre.compile(
    r"COMPILE_LANGUAGE:CUDA>|COMPILE_LANG_AND_ID:CUDA,|\$<BOOL:(\$\{\w+\}|\w+)>"
)
_LONGEST_GENEX_LINE = 2000  # longer lines are not read for it (the walk is per genex)


def cuda_only_genex(text: str, line: int, column: int | None) -> str | None:
    """Why a CMake line's finding at ``column`` is not on the route: it is inside a generator
    expression that applies only to the CUDA language, which a HIP build (the HIP language, or
    hipcc as the C++ compiler) does not compile with, or only when a CUDA switch a ROCm build
    leaves off is on (``$<$<BOOL:${X_WITH_CUDA}>:CUDA::cublas>``, read as ``if(X_WITH_CUDA)``);
    None otherwise (a genex for ``CUDA,CXX`` applies to C++ too)."""
    lines = _genex_lines(text) if column is not None else None
    if column is None or lines is None or not 0 < line <= len(lines):
        return None
    src = lines[line - 1]
    if len(src) > _LONGEST_GENEX_LINE:
        return None
    outer = _outer_genexes(src)
    starts = [a for a, _ in outer]
    for m in _CUDA_GENEX.finditer(src):
        switch = m.group(1)
        if switch is not None and cond_value(switch) is not False:
            continue  # $<BOOL:${X}> of a setting a ROCm build may turn on
        # the outermost $<...> that holds the test
        k = bisect_right(starts, m.start()) - 1  # the outermost ones do not overlap
        span = outer[k] if k >= 0 and outer[k][1] >= m.start() else None
        if span is None or "NOT:" in src[span[0] : m.start()]:  # $<$<NOT:$<...CUDA>>:...>
            continue
        if span[0] <= column - 1 <= span[1]:
            if switch is not None:
                return f"inside a generator expression on {switch}, which a ROCm build leaves off"
            return "inside a generator expression for the CUDA language, which a HIP build has not"
    return None


@lru_cache(maxsize=8)
def _genex_lines(text: str) -> list[str] | None:
    """The lines of a CMake file with a CUDA generator expression, once per file (a search
    and a split of the whole file per finding was findings x bytes); None without one."""
    if "COMPILE_LANG" not in text and "$<BOOL:" not in text:
        return None
    return text.split("\n")


def _outer_genexes(src: str) -> list[tuple[int, int]]:
    """(start, end) of each outermost ``$<...>`` of a line, in one pass (an unclosed one runs
    to the end of the line)."""
    out: list[tuple[int, int]] = []
    depth, start, i = 0, 0, 0
    while i < len(src):
        if src.startswith("$<", i):
            if depth == 0:
                start = i
            depth, i = depth + 1, i + 2
            continue
        if src[i] == ">" and depth:
            depth -= 1
            if depth == 0:
                out.append((start, i))
        i += 1
    if depth:
        out.append((start, len(src)))
    return out


#: a Makefile by name: ``Makefile``, ``GNUmakefile``, ``*.mk`` and named variants
#: (``Makefile.hip``, ``makefile.linux``); not Automake's ``Makefile.am``/``.in`` (another syntax)
_MAKE_NAME = textre.compile(r"^(?:gnu)?makefile(?:[._-]\w+)?$|\.mk$", re.I)


def _is_makefile(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return _MAKE_NAME.search(name) is not None and not name.endswith((".am", ".in"))


def make_unshown(path: str, text: str, line: int, build_texts: Mapping[str, str]) -> str | None:
    """Why a Makefile line outside any conditional the ROCm build skips is still not shown on
    the route: it assigns a variable none of whose uses reach it (``NVCC ?= nvcc`` used only
    by the ``%.o: %.cu`` rule of a Makefile with its own HIP rule), or it is a recipe line of
    such a CUDA-source rule (:mod:`build_make_flow`); None otherwise. A Makefile another
    build file combines with others (``make -f config.mk -f kernels/Makefile``,
    ``MAKEFILES=``) or one with no rule of its own is never "read by nothing" (forty-third
    re-run F12)."""
    if not _is_makefile(path):
        return None
    flow = make_flow_of(path, text, build_texts)
    name = flow.assigned_at.get(line)
    if name is not None and name in flow.unshown:
        return (
            f"{name} is used only where a ROCm build is not shown to go "
            f"({path}:{flow.unshown[name]})"
        )
    if name is not None and name in flow.unused:
        return (
            f"{name} is read by nothing: no rule, recipe or used variable of {path} names it, "
            "no other build file includes it or runs make with it and another Makefile, "
            "and it exports nothing"
        )
    if line in flow.cuda_recipes:
        return "a recipe of the Makefile's CUDA-source rule (its HIP sources have their own)"
    return None


#: the includes index of the build files last asked about, and the flows of the last few
#: Makefiles (path -> (text, build files, flow))
_INDEX: list[tuple[Mapping[str, str], MakeIncludes]] = []
_FLOWS: dict[str, tuple[str, Mapping[str, str], MakeFlow]] = {}


def make_flow_of(path: str, text: str, build_texts: Mapping[str, str]) -> MakeFlow:
    """:func:`make_flow` of one Makefile with the ROCm build's conditionals, once per file."""
    got = _FLOWS.get(path)
    if got is not None and got[0] is text and got[1] is build_texts:
        return got[2]
    if not _INDEX or _INDEX[0][0] is not build_texts:
        _INDEX[:] = [(build_texts, MakeIncludes(build_texts))]
    included = _INDEX[0][1].used_by_included(path, text)
    top = not _INDEX[0][1].included(path)
    needed = _INDEX[0][1].needed(path, text) if top else frozenset()
    flow = make_flow(text, lambda n: open_branch(path, text, n) is None, included, top, needed)
    while len(_FLOWS) >= 32:
        del _FLOWS[next(iter(_FLOWS))]
    _FLOWS[path] = (text, build_texts, flow)
    return flow


_DEFINITION = textre.compile(
    r"(?:(?<![\w-])-D[ \t]*|compile_definitions[ \t]*\(|add_definitions[ \t]*\()([^\n]*)", re.I
)
_HIP_FOLDER = textre.compile(r"(?:^|/)[^/]*(?:hip|rocm)[^/]*/", re.I)


def rocm_branch_defines(build_files: Mapping[str, str]) -> frozenset[str]:
    """Macros a CMake file or Makefile defines inside a branch a ROCm build is shown to take
    (``if(USE_HIP)`` / ``add_compile_definitions(P_USE_CUDA)``), or anywhere in a build file
    of a HIP/ROCm folder (ggml's ``ggml-hip/CMakeLists.txt``): on in the ROCm build, so an
    include under one is no CUDA side. One pass per file."""
    out: set[str] = set()
    for rel, text in build_files.items():
        name = rel.rsplit("/", 1)[-1].lower()
        cmake = name == "cmakelists.txt" or name.endswith(".cmake")
        if not cmake and not (name in ("makefile", "gnumakefile") or name.endswith(".mk")):
            continue
        if "-D" not in text and "definitions" not in text.lower():
            continue
        whole = _HIP_FOLDER.search(rel) is not None
        events = [(m.start(), 0, m) for m in (_CMAKE_COND if cmake else _MAKE_COND).finditer(text)]
        events += [(m.start(), 1, m) for m in _DEFINITION.finditer(text)]
        stack: list[list[int]] = []
        taken: list[bool] = []  # taken[i]: every frame of stack[: i + 1] is shown taken
        for _, kind_of, m in sorted(events, key=lambda e: e[0]):
            if kind_of == 1:
                if whole or (taken and taken[-1]):
                    out.update(_WORDS.findall(m.group(1).replace("-D", " ")))
            else:
                _advance(stack, m, text, 0)
                _fold(stack, taken, lambda f, below: bool(f[1]) and below is not False)
    return frozenset(out)
