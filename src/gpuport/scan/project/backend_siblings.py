"""Backend files beside their HIP counterpart: the ROCm build compiles the HIP one.

A library with one backend per vendor keeps a file per backend under names that differ only
in the vendor: ``desul/atomics/Compare_Exchange_CUDA.hpp`` beside ``Compare_Exchange_HIP.hpp``,
``core/src/Cuda/Kokkos_Cuda_Team.hpp`` beside ``core/src/HIP/Kokkos_HIP_Team.hpp``,
``cuda/base/config.hpp`` and ``dpcpp/base/config.hpp`` (Intel's SYCL executor) beside
``hip/base/config.hip.hpp``. Where the HIP counterpart exists in the project, the ROCm build
compiles it and not the others (issue 24: kokkos, ginkgo). A path is keyed with its vendor
parts blanked: a folder named ``cuda``/``hip``/``rocm``/``dpcpp``/``sycl`` (any case), a
vendor word in the file name delimited by ``_``/``-``/``.`` or the name's ends, and the
``.hip``/``.dp`` infix of ginkgo-style names.

A file stays built when a HIP-side file includes it (``hip/x.hip.cpp`` with
``#include "../cuda/x.cu"``: the HIP build compiles the CUDA text), and nothing is decided
without the counterpart itself (``ggml-hip/`` holds only a CMakeLists.txt that compiles
``ggml-cuda/*.cu``, so no ``ggml-cuda`` file has a HIP counterpart), and a file that a ROCm
build file names outside its CUDA-only branches is built whatever its name.

For a file a build compiles (it names it), and for a whole backend folder, the HIP side must
hold code (thirty-ninth re-run F20: an empty ``hip/k.cu`` hid the blockers of the
``cuda/k.cu`` a Makefile compiles): a declaration, a definition or a macro with a value, not
only comments, blank lines, an include guard or includes. And a HIP twin stands in for a
file a build compiles only where a build names the twin too or the twin defines a function
or kernel the CUDA file defines (fortieth re-run F12: a two-line ``hip/k.cu`` that no build
compiles, one variable, hid the blockers of the ``cuda/k.cu`` the only, CUDA, build
compiles). Text only.

A twin no build names stands in only by covering the CUDA file's entry points: every kernel
(``__global__``) it defines, or, with no kernel, every function other files can call (not
``static``, ``inline``, ``__device__``). One shared helper is no evidence (fortyfirst re-run
F6: a two-line ``hip/k.cu`` defining only the ``static inline ceil_div`` that ``cuda/k.cu``
also defines hid the blocker of its ``vote`` kernel). A CUDA file with no entry point of its
own is stood in for only by a twin a build names.

Code in a branch no compiler sees (``#if 0``, ``#if false``) is no code: neither a body nor a
definition nor an entry point (forty-second re-run F3: a ``hip/k.cu`` placeholder whose only
kernel sat under ``#if 0`` stood in for the ``cuda/k.cu`` the only, CUDA, build compiles).
For a twin no build names, a branch under a project macro no native file defines
(``#ifdef VOTE_PORTED``, :func:`undefined_macros`; a name with a backend word such as
``HIP``/``GPU`` is the ROCm build's switch and stays live) is no code either, and a definition
with an empty body (``{ /* TODO port */ }``, ``{ return; }``) defines nothing: a placeholder
is no ROCm code (forty-third re-run F2).

Forty-fourth re-run F4: a plain ``#if NAME`` (or ``NAME && ...``) of a macro no native text
mentions outside a conditional test is 0, so its branch is no code either; a name with a
backend word stays live only where the project has a ROCm build that may define it; and a body
of only ``;``, ``(void)x;`` and ``return;`` is a stub that defines nothing.

Forty-fifth re-run: a CUDA source no build names (a ``file(GLOB)`` may compile it) is stood
in for only by a twin with code that a build names or that defines its kernels (F13: a
``// TODO`` twin; forty-sixth re-run F5: a count of working definitions is no evidence, so a
placeholder ``return HIP_VERSION;`` stands in for no kernel); a stub body may also hold
``,``, empty blocks, traps and asserts (F3); and a macro named only in a comment or a string
is mentioned nowhere (F4: ``/* build with VOTE_PORTED */`` kept ``#if VOTE_PORTED`` live).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from os import devnull
from pathlib import Path

from gpuport import textre
from gpuport.scan.cxx import Directive, lex
from gpuport.scan.project.include_paths import owners_by_name, resolve_includes, resolve_one
from gpuport.scan.project.undefined_macros import undefined_macros

__all__ = ["backend_siblings", "keep_included"]

_DIR_VENDOR = {"cuda": "cuda", "hip": "hip", "rocm": "hip", "dpcpp": "sycl", "sycl": "sycl"}
_WORD = textre.compile(r"(?<![A-Za-z0-9])(cuda|hip|rocm|sycl|dpcpp)(?![a-z0-9])", re.I)
_WORD_VENDOR = {"cuda": "cuda", "hip": "hip", "rocm": "hip", "sycl": "sycl", "dpcpp": "sycl"}
_INFIX = {"hip": "hip", "dp": "sycl"}  # config.hip.hpp, kernels.dp.cpp


def _key(rel: str) -> tuple[str, str] | None:
    """(path with its vendor parts blanked, the one vendor it names), or None when it names
    no vendor or more than one."""
    parts = rel.split("/")
    vendors: set[str] = set()
    out: list[str] = []
    for part in parts[:-1]:
        v = _DIR_VENDOR.get(part.lower())
        if v is not None:
            vendors.add(v)
            out.append("<B>")
        else:
            out.append(part)
    name = parts[-1]
    pieces = name.split(".")
    stem = pieces[0]
    for infix in pieces[1:-1]:
        if infix.lower() in _INFIX:
            vendors.add(_INFIX[infix.lower()])
    found = [m.group(1).lower() for m in _WORD.finditer(stem)]
    vendors.update(_WORD_VENDOR[w] for w in found)
    if len(vendors) != 1:
        return None
    out.append(_WORD.sub("<B>", stem))
    return "/".join(out), vendors.pop()


#: a preprocessor line (continued lines too), and a macro given a value
_PP_LINE = textre.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
_VALUED_DEFINE = textre.compile(r"^[ \t]*#[ \t]*define[ \t]+\w+(?:\([^)\n]*\))?[ \t]+\S", re.M)


#: the macro a ``#ifdef NAME`` / ``#if defined(NAME)`` / ``#if defined NAME`` / ``#if NAME``
#: tests (one term of a ``&&`` chain)
_DEFINED_TEST = textre.compile(r"^[ \t]*(?:defined[ \t]*\(?[ \t]*)?([A-Za-z_]\w*)[ \t]*\)?[ \t]*$")

Never = Callable[[str], bool]


def _no_names(_: str) -> bool:
    return False


def _live_code(text: str, never: Never | Collection[str] = ()) -> str:
    """``text``'s code (comments and literals blanked, :func:`lex`) with the lines of the
    branches no compiler sees (``#if 0``, and ``#ifdef NAME``/``#if NAME`` for a NAME
    ``never`` holds) blanked too; offsets are kept. Raises what :func:`lex` raises."""
    src = lex(text)
    code = src.code
    if "#" not in code:
        return code
    if not callable(never):
        never = never.__contains__ if never else _no_names
    off = _never_lines(src.directives, never) if never is not _no_names else set()
    if not off and not any(d.value is not None for d in src.directives):
        return code
    lines = code.split("\n")
    return "\n".join(
        " " * len(line) if i in off or src.dead(i) else line for i, line in enumerate(lines, 1)
    )


def _tests_never(kind: str, expr: str, never: Never) -> bool:
    """Whether ``#ifdef expr`` / ``#if expr`` is false for a macro ``never`` holds: the
    macro itself, ``defined(NAME)``, or one term of a ``&&`` chain (no ``||``, no ``!``)."""
    if kind == "ifdef":
        m = _DEFINED_TEST.match(expr)
        return m is not None and not expr.lstrip().startswith("defined") and never(m.group(1))
    if "||" in expr or "!" in expr or "?" in expr:
        return False
    for term in expr.split("&&"):
        m = _DEFINED_TEST.match(term.strip().strip("()"))
        if m is not None and m.group(1) != "defined" and never(m.group(1)):
            return True
    return False


def _never_lines(directives: Iterable[Directive], never: Never) -> set[int]:
    """The lines of the branches that test a macro ``never`` holds (``#ifdef NAME``,
    ``#if NAME``, ``#if defined(NAME) && ...`` up to its ``#else``/``#elif``/``#endif``)."""
    out: set[int] = set()
    stack: list[int] = []  # per open #if: the line its dead branch starts at, or 0
    for d in directives:
        if d.kind in ("if", "ifdef"):
            stack.append(d.line if _tests_never(d.kind, d.expr, never) else 0)
        elif d.kind == "ifndef":
            stack.append(0)
        elif stack:
            start = stack[-1]
            if start:
                out.update(range(start, d.line))
            if d.kind == "endif":
                stack.pop()
            else:
                stack[-1] = 0
    return out


def _has_code(text: str) -> bool:
    """Whether ``text`` holds code, comments and bare directives aside (an include guard,
    includes, ``#pragma once``): a statement, a declaration, a body, a macro with a value."""
    if "{" not in text and ";" not in text and "define" not in text:
        return False
    try:
        code = _live_code(text)
    except (RecursionError, ValueError):
        return True  # not read: in doubt, as before
    if _VALUED_DEFINE.search(code):
        return True
    rest = _PP_LINE.sub("", code)
    return "{" in rest or ";" in rest


#: a function definition's name: `name(...) {` (a body, not a declaration)
_DEFINES = textre.compile(r"(\w+)[ \t]*\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)[^;{}()]*\{")
_NOT_NAMES = frozenset({"if", "for", "while", "switch", "catch", "return", "sizeof", "defined"})
#: the tokens of a stub body (comments already blank): blanks, ``;``/``,``, a block's braces,
#: casts to void (``(void)x``, ``static_cast<void>(x)``), a bare or constant ``return``, a
#: trap (``__builtin_trap()``, ``abort()``) and an assert; a body of only these does no work
#: (forty-fourth re-run F4; forty-fifth re-run F3: ``(void)o, (void)n;``, ``{ {} }``)
_STUB = textre.compile(
    r"(?:\s|[;,{}]"
    r"|\(\s*void\s*\)\s*\(?\s*[\w.\[\]]+(?:\s*->\s*[\w.\[\]]+)*\s*\)?"
    r"|static_cast\s*<\s*void\s*>\s*\(\s*[\w.\[\]]+(?:\s*->\s*[\w.\[\]]+)*\s*\)"
    r"|return(?:\s+(?:-?\d[\w.]*|true|false|nullptr|NULL)|\s*\{\s*\})?\s*;"
    r"|(?:(?:std\s*::\s*)?(?:abort|terminate)|__builtin_trap|__builtin_unreachable|__trap"
    r"|__brkpt)\s*\(\s*\)"
    r"|(?:static_assert|assert)\s*\([^(){};]*(?:\([^(){};]*\)[^(){};]*)*\)"
    r")*"
)


def _empty_body(code: str, at: int) -> bool:
    """Whether the body opened just before ``at`` (its ``{``) is a stub that does no work: it
    closes before any token other than :data:`_STUB`'s. Reads up to the first working token
    only."""
    m = _STUB.match(code, at)
    if m is None:
        return False
    depth = 1
    for ch in "".join(code[at : m.end()].split()):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return True
    return False


def _defines(text: str, never: Never | Collection[str] = ()) -> frozenset[str]:
    """The names of the functions and kernels ``text`` defines with a body that is not empty,
    comments and never-compiled branches aside."""
    try:
        code = _live_code(text, never)
    except (RecursionError, ValueError):
        return frozenset()
    return frozenset(
        m.group(1)
        for m in _DEFINES.finditer(code)
        if m.group(1) not in _NOT_NAMES and not _empty_body(code, m.end())
    )


#: what makes a definition a helper, not an entry point other files call
_HELPER = textre.compile(r"\b(?:static|inline|__forceinline__|__device__|__host__|constexpr)\b")


def _entries(text: str) -> frozenset[str]:
    """The entry points ``text`` defines: its kernels (``__global__``), or where it has none,
    its functions other files can call (not static, inline or device-only helpers)."""
    try:
        code = _live_code(text)
    except (RecursionError, ValueError):
        return frozenset()
    kernels: set[str] = set()
    external: set[str] = set()
    for m in _DEFINES.finditer(code):
        name = m.group(1)
        if name in _NOT_NAMES or _empty_body(code, m.end()):
            continue  # an empty body needs no ROCm twin
        lo = max(0, m.start() - 300)
        head = code[lo : m.start()]
        cut = max(head.rfind(";"), head.rfind("{"), head.rfind("}"), head.rfind("\n#"))
        head = head[cut + 1 :]
        if "__global__" in head:
            kernels.add(name)
        elif _HELPER.search(head) is None and "::" not in head[-2:]:
            external.add(name)
    return frozenset(kernels or external)


_DIRECTIVE = textre.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|endif|include)\b(.*)$", re.M)
_GUARD = textre.compile(
    r"^[ \t]*#[ \t]*ifndef[ \t]+(\w+)[ \t]*\n[ \t]*#[ \t]*define[ \t]+(\w+)", re.M
)


def _unconditional_includes(text: str) -> set[str]:
    """What ``text`` includes (as written) outside any ``#if`` (its include guard aside):
    compiled wherever ``text`` is."""
    guard = _GUARD.search(text)
    skip_at = guard.start() if guard and guard.group(1) == guard.group(2) else -1
    depth = 0
    out: set[str] = set()
    for m in _DIRECTIVE.finditer(text):
        kind = m.group(1)
        if m.start() == skip_at:
            continue  # the include guard's #ifndef (its #endif ends the file: depth -1, fine)
        if kind in ("if", "ifdef", "ifndef"):
            depth += 1
        elif kind == "endif":
            depth -= 1
        elif depth <= 0:
            out.add(m.group(2).strip().strip('<>"'))
    return out


#: a backend word in a macro name: the switch a ROCm build file may define (``USE_HIP``)
_BACKEND = textre.compile(r"HIP|ROCM|AMD")
#: a line that only tests or closes, or a whole-line ``//`` comment: no mention of a name
_TEST_OR_COMMENT = textre.compile(
    r"^[ \t]*(?:\#[ \t]*(?:if|ifdef|ifndef|elif|else|endif)\b|//)[^\n]*$", re.M
)
_NOT_NAME = {c: " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")}


def _mentioned(texts: Iterable[str]) -> frozenset[str]:
    """Every identifier the texts' code uses outside conditional tests (a ``#define``, a
    use): a macro in none of them is defined by no native text. Comments and literals are
    blanked first (:func:`lex`): a comment or a string that names a macro defines nothing
    (forty-fifth re-run F4: ``/* build with VOTE_PORTED */``)."""
    out: set[str] = set()
    for text in texts:
        try:
            code = lex(text).code
        except (RecursionError, ValueError):
            code = text  # not read: every word counts, as before
        out.update(_TEST_OR_COMMENT.sub("", code).translate(_NOT_NAME).split())
    return frozenset(out)


#: the extensions of the files a build compiles (not headers a compiled file includes)
_SOURCES = frozenset({"cu", "cpp", "cc", "cxx", "c", "c++", "hip"})


#: a vendor word inside a function's name (any case)
_NAME_VENDOR = textre.compile(r"cuda|hip|rocm", re.I)


def _plain(name: str) -> str:
    """``name`` with its vendor words (``cuda``/``hip``/``rocm``, a ``Cu``/``cu`` prefix
    before a capital) taken out, lower case: a backend's twin names its kernels so."""
    if name[:2] in ("cu", "Cu") and name[2:3].isupper():
        name = name[2:]
    name = _NAME_VENDOR.sub("", name)
    while "__" in name:
        name = name.replace("__", "_")
    return name.strip("_").lower() or "_"


def _unread(_: object) -> str | None:
    """No other file is given to :func:`undefined_macros` here (only the native texts)."""
    return None


def backend_siblings(
    native: Mapping[str, str],
    includes: Mapping[str, frozenset[str]],
    rocm_named: Collection[str] = (),
    rocm_dirs: Collection[str] = (),
    named: Collection[str] = (),
    rocm_build: bool = False,
    resolved: Mapping[str, frozenset[str]] | None = None,
) -> dict[str, str]:
    """Native files (relative path -> text) that have a HIP counterpart the ROCm build
    compiles instead -> the evidence. Kept as built: a file a HIP-side file includes, one that
    shared code includes outside any ``#if`` (compiled wherever that code is), one a ROCm build
    file names outside its CUDA-only branches (``rocm_named``: tvm compiles
    ``src/backend/cuda/codegen/*.cc`` in every build, the host code that writes CUDA), and one
    under a vendor folder that such a build file adds itself (``rocm_dirs``:
    ``add_subdirectory(cuda)`` outside the CUDA option). Whole backend folders count only
    when the project builds for ROCm at all (``rocm_build``), and never a file a build file
    names (``named``) or one that a file still compiled includes."""
    if resolved is None:
        resolved = resolve_includes(native)
    groups: dict[str, dict[str, list[str]]] = {}
    vendor_of: dict[str, str] = {}
    for rel in native:
        got = _key(rel)
        if got is not None:
            groups.setdefault(got[0], {}).setdefault(got[1], []).append(rel)
            vendor_of[rel] = got[1]
    out: dict[str, str] = {}
    # every file named for HIP, not only the counterparts: a HIP file that includes a CUDA
    # one (by its path) compiles it
    hip_includes = {
        path for h, v in vendor_of.items() if v == "hip" for path in resolved.get(h, frozenset())
    }
    has_code: dict[str, bool] = {}

    def real(rels: list[str]) -> list[str]:
        for r in rels:
            if r not in has_code:
                has_code[r] = _has_code(native.get(r, ""))
        return [r for r in rels if has_code[r]]

    defines: dict[str, frozenset[str]] = {}
    never: list[frozenset[str]] = []  # the project macros nothing defines, looked up once
    mentioned: list[frozenset[str]] = []  # names native text uses outside a test, once

    def never_defined(name: str) -> bool:
        if name in never[0]:
            return True
        if name.startswith("_") or name.isdigit() or (rocm_build and _BACKEND.search(name)):
            return False  # the compiler's, or a switch of the project's ROCm build
        if not mentioned:
            mentioned.append(_mentioned(native.values()))
        return name not in mentioned[0]

    def defined(rel: str) -> frozenset[str]:
        if rel not in defines:
            if not never:  # no build text here: a -D only a build file gives reads as
                # undefined, so a twin under it does not stand in and the findings stay
                # (no root either: an include prefix counts as outside unless a folder here)
                never.append(frozenset(undefined_macros(native, (), _unread, Path(devnull))))
            defines[rel] = _defines(native.get(rel, ""), never_defined)
        return defines[rel]

    def stands_in(rel: str, twins: list[str]) -> list[str]:
        """The twins of ``rel`` (a file a build compiles, or a CUDA source a glob may) a ROCm
        build takes instead: named by a build, or defining every entry point (kernel) ``rel``
        defines, by name with its vendor word aside (``init_lock_arrays_cuda_kernel`` is
        ``init_lock_arrays_hip_kernel``, ``CuMemAlloc`` is ``HipMemAlloc``)."""
        entries = {_plain(e) for e in _entries(native.get(rel, ""))}
        return [
            t
            for t in twins
            if t in named
            or t in rocm_named
            or (entries and entries <= {_plain(d) for d in defined(t)})
        ]

    for members in groups.values():
        hip = members.get("hip")
        if not hip or len(members) < 2:
            continue
        for vendor, rels in members.items():
            if vendor == "hip":
                continue
            for rel in rels:
                # a file a build compiles counts as replaced only by a twin with code that a
                # build names or that defines its entry points; so does a CUDA source no
                # build names (a file(GLOB) may compile it; forty-sixth re-run F5: a count
                # of working definitions let a placeholder stand in for the kernel)
                if rel in named or (
                    vendor == "cuda" and rel.rsplit(".", 1)[-1].lower() in _SOURCES
                ):
                    twins = stands_in(rel, real(hip))
                else:
                    twins = hip
                if (
                    not twins
                    or rel in rocm_named
                    or rel in hip_includes
                    or any(_adds_vendor_dir(d, rel) for d in rocm_dirs)
                ):
                    continue
                ext = rel.rsplit(".", 1)[-1]
                twin = min(twins, key=lambda h: (h.rsplit(".", 1)[-1] != ext, h))
                out[rel] = f"{twin}: the HIP counterpart the ROCm build compiles"
    if rocm_build:
        _folder_siblings(out, native, resolved, rocm_named, rocm_dirs, named, real)
    if out:
        _keep_shared_includes(out, native, includes, vendor_of)
    return out


def _vendor_folder(rel: str) -> tuple[str, str, str] | None:
    """(the folder above the first vendor folder of ``rel``, its vendor, the vendor folder),
    or None when no folder of the path is named for a vendor."""
    parts = rel.split("/")
    for i, part in enumerate(parts[:-1]):
        v = _DIR_VENDOR.get(part.lower())
        if v is not None:
            return "/".join(parts[:i]), v, "/".join(parts[: i + 1])
    return None


def _folder_siblings(
    out: dict[str, str],
    native: Mapping[str, str],
    resolved: Mapping[str, frozenset[str]],
    rocm_named: Collection[str],
    rocm_dirs: Collection[str],
    named: Collection[str],
    real: Callable[[list[str]], list[str]],
) -> None:
    """A whole backend folder beside its HIP sibling (``tl_templates/cuda/`` beside
    ``tl_templates/hip/``, ``src/cuda/`` beside ``src/rocm/``): every file of the CUDA (or
    SYCL) one is that backend's, also those with no namesake on the HIP side, unless a HIP
    file includes it or a ROCm build file names it or adds its folder."""
    sides: dict[str, dict[str, list[str]]] = {}
    folders: dict[tuple[str, str], str] = {}
    for rel in native:
        got = _vendor_folder(rel)
        if got is not None:
            sides.setdefault(got[0], {}).setdefault(got[1], []).append(rel)
            folders.setdefault((got[0], got[1]), got[2])
    found: dict[str, str] = {}
    for above, members in sides.items():
        hip = real(members.get("hip", [])) if len(members) >= 2 else []
        if not hip:
            continue
        hip_includes = {path for h in members["hip"] for path in resolved.get(h, frozenset())}
        hip_folder = folders[(above, "hip")]
        for vendor, rels in members.items():
            if vendor == "hip":
                continue
            for rel in rels:
                if (
                    rel in out
                    or rel in named
                    or rel in rocm_named
                    or rel in hip_includes
                    or any(_adds_vendor_dir(d, rel) for d in rocm_dirs)
                ):
                    continue
                found[rel] = (
                    f"{hip_folder}/: the HIP side of the backend folder "
                    f"{folders[(above, vendor)]}/, which the ROCm build compiles instead"
                )
    keep_included(found, [r for r in native if r not in found and r not in out], resolved)
    out.update(found)


def keep_included(
    candidates: dict[str, str], live: Iterable[str], resolved: Mapping[str, frozenset[str]]
) -> None:
    """Drop from ``candidates`` (files about to count as not built) each one that a ``live``
    file (compiled by the ROCm build) includes, and then what those include, resolved by path
    (``include_paths``): a header that a compiled file includes is compiled too, and another
    header of the same file name is not."""
    # a worklist: each included file is looked at once (passes over every candidate until
    # none changed took a pass per header of a chain written against the list's order)
    seen: set[str] = set()
    todo: list[str] = []
    for r in live:
        for header in resolved.get(r, frozenset()):
            if header not in seen:
                seen.add(header)
                todo.append(header)
    while todo and candidates:
        rel = todo.pop()
        if candidates.pop(rel, None) is None:
            continue
        for header in resolved.get(rel, frozenset()):
            if header not in seen:
                seen.add(header)
                todo.append(header)


def _adds_vendor_dir(folder: str, rel: str) -> bool:
    """``folder`` (added by a ROCm build) holds ``rel`` and is a CUDA folder itself. Only
    CUDA: the build model leaves out what a CUDA option adds, but not yet what a SYCL option
    adds (ginkgo's ``if(GINKGO_BUILD_SYCL) add_subdirectory(dpcpp)``), which a ROCm build
    never turns on either."""
    return rel.startswith(folder + "/") and any(
        _DIR_VENDOR.get(part.lower()) == "cuda" for part in folder.split("/")
    )


def _keep_shared_includes(
    out: dict[str, str],
    native: Mapping[str, str],
    includes: Mapping[str, frozenset[str]],
    vendor_of: Mapping[str, str],
) -> None:
    """Drop from ``out`` what shared code (no vendor's own file) includes unconditionally:
    the file the include resolves to by path (``include_paths``), not another of that name
    (``#include "copy.h"`` in ``op/copy.cc`` is ``op/copy.h``, not ``templates/cuda/copy.h``;
    ``<ginkgo/config.hpp>`` is not ``cuda/config.hpp``)."""
    names = {rel.rsplit("/", 1)[-1] for rel in out}
    owners = owners_by_name(native)
    for rel, inc in includes.items():
        if rel in vendor_of or not (inc & names):
            continue
        for written in _unconditional_includes(native.get(rel, "")):
            for target in resolve_one(rel, written, owners):
                out.pop(target, None)
