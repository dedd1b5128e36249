"""CMake projects: a HIP build of the CUDA sources behind ``-DGPUPORT_HIP=ON`` (GP401), and the
compatibility header the sources include on that build, as small ROCm ports write them (a
``#define cudaMalloc hipMalloc`` block and a CMake HIP branch).

* ``cmake/gpuport_hip.cmake`` (new): enables HIP, finds ROCm's CMake packages and provides the
  ``CUDA::`` targets the project links (``CUDA::cudart`` -> ``hip::host``, ``CUDA::cublas`` ->
  ``roc::hipblas``...) so the rest of the project's CMake stays as it is.
* The CMake file: ``option(GPUPORT_HIP ... OFF)``; the first CUDA toolkit lookup or
  ``enable_language(CUDA)`` becomes ``if(GPUPORT_HIP) include(.../gpuport_hip.cmake) else()
  <the original> endif()`` (later ones ``if(NOT GPUPORT_HIP)``); the ``.cu`` sources it names
  are marked ``LANGUAGE HIP`` on that build; so are globbed ones, ``CMAKE_CUDA_COMPILER``
  tests also take the option and nvcc's own compile options are not given to the HIP
  compiler (``cmake_reach``, ``cmake_flags``), in this file and the sub-folder CMake files
  without a CUDA lookup of their own.
* ``gpuport_hip_compat.h`` (new, beside the sources): the HIP headers and a ``#define`` for
  every CUDA runtime/library name the sources use that HIP spells differently (from the API
  map gpuport hipify uses). Each source's block of CUDA includes becomes ``#if <HIP> #include
  "gpuport_hip_compat.h" #else <the original includes> #endif``.

FindCUDA's target commands (``cuda_add_library``, ``cuda_add_executable``...) are defined by
the shim in their HIP form (``cmake_findcuda``, session 18); a handled CMake file calling one
of FindCUDA's object-making commands (``cuda_compile``, ``cuda_wrap_srcs``...) gets no HIP
branch: the opt-in configure would stop there, and the findings say so (session 15).

Safe: the option is off by default, so a CUDA configure runs the original lines, and nvcc
compiles the original includes. ``project(... LANGUAGES CXX CUDA)`` loses CUDA, which is
enabled right after it on the CUDA build (``cmake_project``: safe only where the CUDA
configure enables the same languages in the same order).
"""

from __future__ import annotations

import os
import re
from pathlib import PurePosixPath

from gpuport import textre
from gpuport.knowledge.api_map import load_api_map
from gpuport.port.cmake_files import handled_files, hook_texts, tensorrt_lookup
from gpuport.port.cmake_findcuda import findcuda_calls, findcuda_shim
from gpuport.port.cmake_flags import flag_edits
from gpuport.port.cmake_project import (
    cuda_language_sources,
    find_project_cuda,
    unmapped_sources,
)
from gpuport.port.cmake_reach import glob_covers, glob_marks, reach_edits
from gpuport.port.cmake_text import after_head, bracket_at, cuda_lookups, mark_named, uses_cuda
from gpuport.port.context import PortContext, Proposal
from gpuport.port.cuda_headers import unshipped_include
from gpuport.port.cxx_lines import edge_runs_on
from gpuport.port.cxx_scope import cuda_compiler_only, gated_use
from gpuport.port.fix_native import HIP_TEST
from gpuport.port.nvcc_tests import cmake_proposal, project_sources
from gpuport.scan.cxx import lex
from gpuport.scan.finding import Finding

__all__ = ["COMPAT", "OPTION", "propose"]

OPTION = "GPUPORT_HIP"
COMPAT = "gpuport_hip_compat.h"
_GATED_HEADERS = (".h", ".hpp", ".hh", ".hxx", ".cuh", ".inl")
SHIM = "cmake/gpuport_hip.cmake"
_MARK = "# gpuport:"
_PROJECT_CUDA = textre.compile(r"^\s*project\s*\([^)]*\bCUDA\b", re.M | re.I)
_CU = textre.compile(r"(?<![\w${}/.-])([\w./-]+\.cu)(?![\w.])")
_INCLUDE = textre.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"][^\n]*\n?", re.M)
_IDENT = textre.compile(
    r"\b(?:cuda|cu[A-Z]|CU[A-Z_]|cublas|CUBLAS|curand|CURAND|cufft|CUFFT|cusparse|CUSPARSE|nccl|NCCL)\w*"
)
_TWINS = {
    "cudart": ("hip::host", None),
    "cudart_static": ("hip::host", None),
    "cuda_driver": ("hip::host", None),
    "cublas": ("roc::hipblas", "hipblas"),
    "cublas_static": ("roc::hipblas", "hipblas"),
    "cublasLt": ("roc::hipblaslt", "hipblaslt"),
    "cublasLt_static": ("roc::hipblaslt", "hipblaslt"),
    "curand": ("hip::hiprand", "hiprand"),
    "cufft": ("hip::hipfft", "hipfft"),
    "cusparse": ("roc::hipsparse", "hipsparse"),
    "cusolver": ("roc::hipsolver", "hipsolver"),
    "nccl": ("rccl::rccl", "rccl"),
}
_HEADERS_FOR_FAMILY = {
    "cublas": "hipblas/hipblas.h",
    "curand": "hiprand/hiprand.h",
    "cufft": "hipfft/hipfft.h",
    "cusparse": "hipsparse/hipsparse.h",
}


def _shim(libs: list[str], findcuda: set[str]) -> str:
    packages = sorted({pkg for lib in libs if (pkg := _TWINS.get(lib, (None, None))[1])})
    core = {"hipblas"}  # the rest (hipBLASLt, hipFFT...) only where the code uses them
    lines = [
        f"{_MARK} build the CUDA sources with HIP for AMD GPUs: cmake -D{OPTION}=ON",
        "# (written by `gpuport port`). ROCm's CMake packages must be on CMAKE_PREFIX_PATH",
        "# (/opt/rocm); the GPU targets come from CMAKE_HIP_ARCHITECTURES (e.g. gfx90a;gfx942).",
        "if(CMAKE_VERSION VERSION_LESS 3.21)",
        '  message(FATAL_ERROR "the HIP build needs CMake 3.21 or newer (the HIP language)")',
        "endif()",
        "list(APPEND CMAKE_PREFIX_PATH /opt/rocm)",
        "enable_language(HIP)",
        "find_package(hip REQUIRED)",
        *(f"find_package({p}{' REQUIRED' if p in core else ' QUIET'})" for p in packages),
        "# The CUDA:: targets this project links, provided by their ROCm twins (an empty",
        "# target where the twin is not installed: link lines keep working).",
    ]
    for lib in libs:
        twin = _TWINS.get(lib)
        if twin is None:
            continue
        lines += [
            f"if(NOT TARGET CUDA::{lib})",
            f"  add_library(CUDA::{lib} INTERFACE IMPORTED)",
            f"  if(TARGET {twin[0]})",
            f"    target_link_libraries(CUDA::{lib} INTERFACE {twin[0]})",
            "  endif()",
            "endif()",
        ]
    lines += ["set(CUDAToolkit_FOUND TRUE)", "set(CUDA_FOUND TRUE)"]
    return "\n".join(lines) + "\n" + findcuda_shim(findcuda)


def _compat(ctx: PortContext, sources: dict[str, str], headers: list[str]) -> str:
    amap = load_api_map()
    used: dict[str, str] = {}
    families: set[str] = set()
    for text in sources.values():
        code = lex(text).code
        for m in _IDENT.finditer(code):
            name = m.group()
            entry = amap.entries.get(name)
            if entry is None or not entry.hip or entry.hip == name:
                continue
            used[name] = entry.hip
            families.add(entry.family)
    include: list[str] = ["hip/hip_runtime.h"]
    for h in headers:
        hip = amap.header(h)
        if hip and hip not in include:
            include.append(hip)
    for fam, hdr in _HEADERS_FOR_FAMILY.items():
        if any(f.startswith(fam) for f in families) and hdr not in include:
            include.append(hdr)
    lines = [
        "// gpuport: the HIP names of the CUDA API these sources use (gpuport port, from the",
        "// HIPIFY tables gpuport hipify uses). Included only by the HIP build, in place of the",
        "// CUDA headers; nvcc never sees it.",
        "#pragma once",
        *(f"#include <{h}>" for h in include),
    ]
    if any(h.startswith("hipcub/") for h in include):
        lines.append("namespace cub = hipcub;")
    lines += [f"#define {k} {v}" for k, v in sorted(used.items())]
    return "\n".join(lines) + "\n"


def _cuda_includes(text: str) -> list[tuple[int, int, list[str]]]:
    """Runs of ``#include`` lines of CUDA headers (the API map knows their HIP twin)."""
    amap = load_api_map()
    src = lex(text)
    out: list[tuple[int, int, list[str]]] = []
    cur: tuple[int, int, list[str]] | None = None
    nvcc_only = cuda_compiler_only(src.code, gates=True)
    for m in _INCLUDE.finditer(text):
        if src.guarded_at(m.start()) or not src.code[m.start() : m.end()].lstrip().startswith("#"):
            continue
        if nvcc_only(m.start()):  # hip-clang never compiles it
            continue
        name = m.group(1)
        cuda = amap.header(name) is not None and not name.startswith(("hip", "thrust/"))
        if not cuda:
            if cur is not None:
                out.append(cur)
                cur = None
            continue
        if cur is not None and not text[cur[1] : m.start()].strip():
            cur = (cur[0], m.end(), [*cur[2], name])
            continue
        if cur is not None:
            out.append(cur)
        cur = (m.start(), m.end(), [name])
    if cur is not None:
        out.append(cur)
    # a run whose #if/#endif would not be read as directives (a backslash or an open comment
    # at its edge: 39th re-run F12) is left, and the file counts as unmapped
    return [r for r in out if not edge_runs_on(text, r[0], r[1])]


def _native_sources(ctx: PortContext, folder: str) -> list[str]:
    """The project's CUDA/C++ files under ``folder`` that the scan read."""
    out: list[str] = []
    prefix = f"{folder}/" if folder else ""
    seen = {f.location.path for f in ctx.report.findings}
    for path in sorted(seen):
        if path.startswith(prefix) and path.endswith((".cu", ".cuh", ".cpp", ".cc", ".h", ".hpp")):
            out.append(path)
    return out


_HOST = (".cpp", ".cc", ".cxx", ".h", ".hpp", ".hh", ".hxx")


def _walk_sources(ctx: PortContext, folder: str) -> list[str]:
    """The CUDA sources under ``folder`` (``.cu``/``.cuh``), and the host sources and headers
    there that include a CUDA header (the HIP build compiles them against HIP too)."""
    out: list[str] = []
    for rel in project_sources(ctx, folder, (".cu", ".cuh", *_HOST)):
        if rel.endswith((".cu", ".cuh")):
            out.append(rel)
        else:
            text = ctx.read(rel)
            if text is not None and _cuda_includes(text):
                out.append(rel)
    return out


#: ``file(GLOB ...)`` whose patterns can take ``.cu`` files (``*.cu``, ``*.*``, ``dir/*``)
_GLOB_CU = textre.compile(
    r"\bfile\s*\(\s*GLOB(?:_RECURSE)?\b[^)]*?(?:\*\.cu\b|\*\.\*|/\*(?=[\s\")]))", re.I
)
#: the CUDA libraries a source can call, by API-map family, and their CUDA:: target
_LIB_FAMILIES = {
    "cublas": "cublas",
    "cublaslt": "cublasLt",
    "cusparse": "cusparse",
    "cusolver": "cusolver",
    "curand": "curand",
    "cufft": "cufft",
    "cudnn": "",
    "nccl": "nccl",
}


def _own_lookup(text: str) -> bool:
    """A CMake file with a CUDA lookup of its own (it gets its own fix)."""
    return bool(_PROJECT_CUDA.search(text) or OPTION in text or any(cuda_lookups(text)))


def _handled(ctx: PortContext, path: str, folder: str) -> dict[str, str]:
    """The CMake files the fix edits: this one, and those under its folder without a CUDA
    lookup of their own (those get their own fix), which the HIP build configures through
    ``add_subdirectory`` and which see the option."""
    return handled_files(ctx, path, folder, _own_lookup, SHIM)


def _folder(rel: str) -> str:
    parent = str(PurePosixPath(rel).parent)
    return "" if parent == "." else parent


def _reached(handled: dict[str, str], source: str, named: set[str]) -> bool:
    """Whether a handled CMake file names ``source`` (by its file name: ``named``, read once
    for all sources) or globs it."""
    if PurePosixPath(source).name in named:
        return True
    return any(glob_covers(text, _folder(rel), source) for rel, text in handled.items())


def _unbuildable(ctx: PortContext, folder: str, handled: dict[str, str]) -> str:
    """Why the opt-in HIP build would not build (empty when nothing is seen): .cu sources
    no handled CMake file names or globs where gpuport can read the pattern (only those are
    marked HIP), a ``NOT CMAKE_CUDA_COMPILER`` test (the HIP build takes its no-GPU path),
    or a CUDA library the sources call that no ``CUDA::`` target links (the shim maps only
    those)."""
    sources = _walk_sources(ctx, folder)
    # the .cu names of the handled files, read once (a read per source was quadratic: a
    # CMakeLists.txt listing 2,000 sources, 23 s; thirty-sixth re-run F10)
    named = {PurePosixPath(c).name for text in handled.values() for c in _CU.findall(text)}
    unreached = [s for s in sources if s.endswith(".cu") and not _reached(handled, s, named)]
    globbing = [r for r, t in handled.items() if _GLOB_CU.search(t)]
    if unreached and globbing:
        return (
            f"{len(unreached)} .cu source(s) ({unreached[0]}...) come from file(GLOB ...) in "
            f"{globbing[0]} with a pattern gpuport cannot match to them: only the .cu files the "
            "CMake files name or glob are marked HIP, so the HIP build would not build"
        )
    elsewhere = _named_elsewhere(
        ctx, folder, {PurePosixPath(u).name for u in unreached}, set(handled)
    )
    if elsewhere:
        return (
            f"{elsewhere[1]} is compiled by {elsewhere[0]}, which the fix leaves: only the "
            ".cu files the CMake files it edits name are marked HIP, so the HIP build would "
            "not build"
        )
    if hit := unshipped_include(ctx, project_sources(ctx, folder, (".cu", ".cuh", ".c", *_HOST))):
        return f"{hit[0]}:{hit[1]} includes <{hit[2]}>, a CUDA header HIP does not ship"
    for rel, text in handled.items():
        if out := next((c for c in _CU.findall(text) if c.startswith("../")), None):
            # J51: the compat header reaches the sources under the CMake file's folder only
            return f"{rel} compiles {out}, outside its folder: that source gets no HIP names"
        why = flag_edits(text, OPTION, "\n", _MARK)[1]
        if why:
            return f"in {rel}, {why}"
        if reach_edits(text, OPTION)[1]:
            return (
                f"{rel} tests NOT CMAKE_CUDA_COMPILER: the HIP build (no nvcc) takes that "
                "no-GPU path"
            )
    amap = load_api_map()
    families: set[str] = set()
    texts: dict[str, str] = {}
    renamed: dict[str, str] = {}  # a source -> a CUDA name it uses that HIP spells otherwise
    for rel in project_sources(ctx, folder, (".cu", ".cuh", *_HOST)):
        src = ctx.read(rel)
        if src is None:
            continue
        texts[rel] = src
        for m in _IDENT.finditer(lex(src).code):
            entry = amap.entries.get(m.group())
            if entry is not None and entry.family in _LIB_FAMILIES and rel in sources:
                families.add(entry.family)
            if entry is not None and entry.hip and entry.hip != m.group():
                renamed.setdefault(rel, m.group())
    headers = {r: ctx.read(r) or "" for r in project_sources(ctx, "", _GATED_HEADERS)}
    if gated := gated_use({r: texts.get(r) or "" for r in sources}, headers):
        return (
            f"{gated[0]} uses {gated[1]}, declared only where a CUDA header exists "
            f"({gated[2]}: __has_include): the HIP build would not compile it"
        )
    mapped = {rel for rel, text in texts.items() if _cuda_includes(text)}
    if (bare := unmapped_sources(texts, mapped, renamed)) is not None:
        return (
            f"{bare[0]} calls {bare[1]} and reaches no CUDA header the HIP branch maps "
            "(nvcc includes the runtime by itself): the HIP build would not compile it"
        )
    links = " ".join(handled.values())
    for fam in sorted(families):
        target = _LIB_FAMILIES[fam]
        if not target or f"CUDA::{target}" not in links:
            return (
                f"the sources call {fam}, which the CMake file links through no CUDA:: "
                "target gpuport maps to its ROCm twin: the HIP build would not link it"
            )
    return ""


def _named_elsewhere(
    ctx: PortContext, folder: str, names: set[str], handled: set[str]
) -> tuple[str, str] | None:
    """A CMake file under ``folder`` the fix does not edit that names one of the .cu ``names``."""
    if not names:
        return None
    prefix = f"{folder}/" if folder else ""
    for rel in ctx.files_of("cmake"):
        if not rel.startswith(prefix) or rel in handled:
            continue
        text = ctx.read(rel) or ""
        for c in _CU.findall(text):
            if PurePosixPath(c).name in names:
                return rel, PurePosixPath(c).name
    return None


def _mark_named(text: str, eol: str) -> tuple[int, str] | None:
    """After the statement naming the file's last .cu source: those sources are HIP on the
    HIP build (``cmake_text``: the statement's own ``)``, found as CMake reads it)."""
    extra, after = cuda_language_sources(text)  # sources given LANGUAGE CUDA (a .cpp too)
    return mark_named(text, eol, OPTION, _MARK, extra, after)


def _reach(prop: Proposal, ctx: PortContext, handled: dict[str, str], path: str) -> None:
    """The edits that let the HIP build reach and compile the sources in every handled CMake
    file: the ``CMAKE_CUDA_COMPILER`` tests, the globs, nvcc's own compile options
    (``cmake_flags``) and (besides ``path``, done by the caller) the named .cu sources."""
    for rel, text in handled.items():
        eol = ctx.eol(text)
        for start, end, new in reach_edits(text, OPTION)[0]:
            prop.edit(rel, start, end, new)
        for pos, block in glob_marks(text, OPTION, eol, _MARK):
            prop.edit(rel, pos, pos, block)
        for start, end, new in flag_edits(text, OPTION, eol, _MARK)[0]:
            prop.edit(rel, start, end, new)
        if rel != path and (named := _mark_named(text, eol)) is not None:
            prop.edit(rel, named[0], named[0], named[1])


def _cmake(ctx: PortContext, path: str, text: str, found: list[Finding]) -> list[Proposal]:
    if OPTION in text:
        return []
    folder = _folder(path)
    eol = ctx.eol(text)
    proj = None
    if _PROJECT_CUDA.search(text):
        # only the files that name a hook matter to it (all of them joined, per file with a
        # CUDA project(), was files x files: twenty-second re-run)
        others = " ".join(t for r, t in hook_texts(ctx) if r != path)
        proj = find_project_cuda(text, others)
        if proj is None:
            return []  # a project() call gpuport cannot read word by word: left
    lookups, unread = cuda_lookups(text)
    if unread:
        ctx.decline(found, unread)
        return []
    if not lookups and proj is None:
        return []
    shim_rel = f"{folder}/{SHIM}" if folder else SHIM
    if ctx.exists(shim_rel):
        return []
    handled = _handled(ctx, path, folder)
    for rel, txt in handled.items():  # text CMake reads otherwise than line by line: left
        if (at := bracket_at(txt)) is not None:
            ctx.decline(
                found,
                f"{rel}:{_line(txt, at)} opens a CMake bracket comment or argument "
                f"({txt[at : at + 3]!r}), which gpuport does not read: the HIP branch "
                "could take its text for live arguments, or it could swallow a line gpuport "
                "inserts, so no HIP branch is written (left to a person)",
            )
            return []
    if (
        proj is None
        and not uses_cuda(" ".join(handled.values()))
        and not _walk_sources(ctx, folder)
    ):
        ctx.decline(
            found,
            f"{path} looks CUDA up, but the project compiles no CUDA source (no .cu/.cuh, no "
            "host file including a CUDA header), enables no CUDA language and reads no result "
            "of the lookup (CUDA_* variables, CUDA:: targets): a HIP branch would build nothing "
            "more (torchchat's libtorch runner, J50); nothing written",
        )
        return []
    findcuda, legacy = findcuda_calls(handled)
    if legacy is not None:
        ctx.decline(
            found,
            f"{legacy[0]} calls {legacy[1]}, a command of CMake's FindCUDA module that makes "
            f"nvcc's objects by hand; the HIP branch gpuport writes (in place of "
            f"find_package(CUDA)) defines only FindCUDA's target commands (cuda_add_library, "
            f"cuda_add_executable...): a -D{OPTION}=ON configure would stop there (Unknown "
            "CMake command), so no HIP branch is written; that step needs its HIP form, left "
            "to a person",
        )
        return []
    if (trt := tensorrt_lookup(handled)) is not None:
        ctx.decline(
            found,
            f"{trt[0]} requires TensorRT ({trt[1]}...), an NVIDIA inference library with no "
            "ROCm build: a HIP branch in place of the CUDA lookup would configure on no machine "
            "(the CUDA lookup serves TensorRT); a ROCm port replaces that backend (MIGraphX, "
            "ONNX Runtime's ROCm/MIGraphX providers), left to a person (J51)",
        )
        return []
    libs = sorted(set(textre.findall(r"CUDA::(\w+)", " ".join(handled.values()))) | {"cudart"})
    broken = _unbuildable(ctx, folder, handled) or (proj.unsafe if proj else "")
    prop = Proposal(
        id=f"cmake-hip:{path}",
        family="cmake",
        title=f"{path}: a HIP build of the CUDA sources (cmake -D{OPTION}=ON)",
        safe=not broken,
        why=f"a CUDA configure is unchanged, but {broken}"
        if broken
        else f"{OPTION} is OFF by default: a CUDA configure runs the original lines",
        findings=found,
        note="needs ROCm's CMake packages; set CMAKE_HIP_ARCHITECTURES",
    )
    option = (
        f'option({OPTION} "Build the CUDA sources with HIP for AMD GPUs" OFF)  '
        f"{_MARK} GP401 (gpuport port){eol}"
    )
    include = "${CMAKE_CURRENT_LIST_DIR}/" + SHIM
    by_line: dict[int | None, list[Finding]] = {}  # each edit's findings by line: no scan per edit
    for f in found:
        by_line.setdefault(f.location.line, []).append(f)
    done_first = proj is not None
    if proj is None:
        prop.edit(path, _top(text), _top(text), option)
    else:  # CUDA leaves project() and is enabled after it, on the CUDA build only
        ind = proj.indent
        new = (
            f"{proj.without}{eol}{ind}{option}{ind}if({OPTION})  {_MARK} GP401 HIP stands in "
            f"for CUDA{eol}{ind}    include({include}){eol}{ind}else(){eol}{ind}    "
            f"enable_language(CUDA)  {_MARK} was in project(){eol}{ind}endif()"
        )
        prop.edit(path, proj.start, proj.end, new, by_line.get(_line(text, proj.start), []))
    for m in lookups:
        ind = m.group(1)
        orig = m.group(2) + (f"  {m.group(3)}" if m.group(3) else "")
        if not done_first:
            new = (
                f"{ind}if({OPTION})  {_MARK} GP401 HIP stands in for CUDA{eol}"
                f"{ind}    include({include}){eol}{ind}else(){eol}{ind}    {orig}{eol}{ind}endif()"
            )
            done_first = True
        else:
            new = f"{ind}if(NOT {OPTION}){eol}{ind}    {orig}{eol}{ind}endif()"
        prop.edit(
            path,
            m.start(),
            m.end(),
            new,
            by_line.get(_line(text, m.start()), []),
        )
    if (named := _mark_named(text, eol)) is not None:
        prop.edit(path, named[0], named[0], named[1])
    _reach(prop, ctx, handled, path)
    prop.creates[shim_rel] = _shim(libs, findcuda)
    out = [prop]
    tests, tested = cmake_proposal(ctx, path, folder, found, COMPAT)
    compat = _compat_proposal(ctx, folder, found, tested)
    if compat is not None:
        out.append(compat)
        if tests.edits:  # the branches name CUDA API the compat header maps
            out.append(tests)
    return out


def _top(text: str) -> int:
    """After the ``cmake_minimum_required``/``project`` calls the file opens with (comments
    and blank lines between allowed), else 0: the option goes at file scope. Their ``)`` as
    CMake reads it: a ``)`` in a quoted DESCRIPTION is not the end (fortieth re-run F13)."""
    return after_head(text, ("cmake_minimum_required", "project"))


def _line(text: str, offset: int) -> int:
    return textre.line_finder(text)(offset)  # one line index per text, not a count per call


def _compat_proposal(
    ctx: PortContext, folder: str, found: list[Finding], tested: dict[str, str] | None = None
) -> Proposal | None:
    files = _walk_sources(ctx, folder) or [
        p for p in _native_sources(ctx, folder) if p.endswith((".cu", ".cuh"))
    ]
    sources: dict[str, str] = {}
    for rel in files:
        text = ctx.read(rel)
        if text is not None and "gpuport_hip_compat.h" not in text:
            sources[rel] = text
    if not sources:
        return None
    base = (
        os.path.commonpath([str(PurePosixPath(p).parent) for p in sources])
        if len(sources) > 1
        else str(PurePosixPath(next(iter(sources))).parent)
    )
    base = "" if base == "." else base
    compat_rel = f"{base}/{COMPAT}" if base else COMPAT
    if ctx.exists(compat_rel):
        return None
    prop = Proposal(
        id=f"hip-compat:{compat_rel}",
        family="cmake",
        title=f"{compat_rel}: the HIP names of the CUDA API, for the HIP build",
        safe=True,
        why="nvcc compiles the original includes; the header is read only by the HIP build",
        findings=found,
    )
    headers: list[str] = []
    for rel, text in sources.items():
        eol = ctx.eol(text)
        for start, end, names in _cuda_includes(text):
            headers += [n for n in names if n not in headers]
            inc = os.path.relpath(compat_rel, str(PurePosixPath(rel).parent) or ".").replace(
                os.sep, "/"
            )
            block = text[start:end]
            block = block if block.endswith("\n") else block + eol
            new = (
                f"#if {HIP_TEST} // gpuport: GP401 the HIP build gets the HIP names{eol}"
                f'#include "{inc}"{eol}#else{eol}{block}#endif{eol}'
            )
            prop.edit(rel, start, end, new)
    if not prop.edits:
        return None
    for rel, text in (tested or {}).items():
        sources.setdefault(rel, text)  # the names the nvcc branches it takes use
    prop.creates[compat_rel] = _compat(ctx, sources, headers)
    return prop


def propose(ctx: PortContext) -> list[Proposal]:
    out: list[Proposal] = []
    for path in ctx.files_with("GP401"):
        if not path.endswith(("CMakeLists.txt", ".cmake")):
            continue
        text = ctx.read(path)
        if text is None:
            continue
        got = _cmake(ctx, path, text, ctx.of("GP401", "GP407", path=path))
        if got and path == "CMakeLists.txt" and got[0].safe:  # a CI job checks a safe build
            ctx.cache["cmake-hip"] = path
        if got and got[0].safe:  # an image's ROCm copy serves this HIP build (containers)
            safe_builds = ctx.cache.setdefault("cmake-hip-safe", set())
            if isinstance(safe_builds, set):
                safe_builds.add(path)
        out.extend(got)
    return out
