"""Tests of NVIDIA's compiler (``#ifdef __CUDACC__``, ``#if defined(__NVCC__)``) that the HIP
build needs too: the branch a shared header keeps for nvcc (``#define HD __host__ __device__``,
a ``__device__`` member) is the one hip-clang must compile as well.

hip-clang defines neither ``__CUDACC__`` nor ``__NVCC__``; it defines ``__HIPCC__`` and
``__HIP__``, on the host and the device pass alike (hipcc 5.2 ``-dM -E``, both passes). So on
ROCm such a test takes its other branch (host-only macros, no device member) and the device
code that needs the first one stops. The real ports write ``#if defined(__CUDACC__) ||
defined(__HIPCC__)`` (swaptube #33, stable-point-aware-3d #30) or ``|| defined(__HIP__)``
(bevfusion #509). This module writes the same, for a directive that is the test alone:

* ``#ifdef X`` / ``#if defined(X)`` / ``#elif defined(X)`` -> ``... defined(X) ||
  defined(__HIPCC__)``; ``#ifndef X`` / ``#if !defined(X)`` (the nvcc branch is its ``#else``)
  -> ``#if !defined(X) && !defined(__HIPCC__)``.
* Left as they are: a test inside a ROCm branch or a dead one, a chain that already has a HIP
  ``#elif`` (the project's own HIP branch), and a test whose nvcc branch holds what hip-clang
  cannot take there: inline assembly, a CUDA header include (its HIP twin would need a branch
  of its own), NVIDIA-only macros (``__CUDACC_VER_MAJOR__``, ``CUDA_VERSION``,
  ``__CUDA_ARCH__``: a compiler-version branch, as gsl-lite's), or a CUDA API name the API map
  gives no HIP twin.

nvcc and the host compilers of a CUDA build never define ``__HIPCC__``, so every CUDA build
sees each test take the value it took before. Who compiles the file for ROCm decides whether
the fix is safe: gpuport's opt-in CMake HIP build did not exist before (safe; part of the
``hip-compat`` fix, :mod:`gpuport.port.fix_cmake`); a PyTorch extension is already hipified
and compiled by ROCm torch, whose hipify maps ``__CUDACC__`` to ``__HIPCC__`` but not
``__NVCC__``, so there only ``__NVCC__`` tests change, as an unsafe fix (:func:`propose`): the
ROCm build then compiles the other branch.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from pathlib import PurePosixPath

from gpuport import textre
from gpuport.knowledge.api_map import load_api_map
from gpuport.port.context import PortContext, Proposal
from gpuport.scan.cxx import CxxSource, lex
from gpuport.scan.cxx_cond import HIP_UNDEFINED
from gpuport.scan.finding import Finding

__all__ = ["NVCC_NAMES", "cmake_proposal", "project_sources", "propose", "test_edits"]

#: The macros only NVIDIA's compiler defines that a HIP branch can stand beside.
NVCC_NAMES = ("__CUDACC__", "__NVCC__")
HIP_NAME = "__HIPCC__"
_HEADER_OR_CU = (".cu", ".cuh", ".h", ".hpp", ".hh", ".hxx", ".inl")
_NOT_OURS = textre.compile(
    r"^(?:build|third[_-]?party|3rdparty|vendor|vendored|external|extern|deps|submodules)$", re.I
)
_SIMPLE = textre.compile(
    r"^\(?\s*(?P<neg>!\s*)?defined\s*(?:\(\s*(?P<a>\w+)\s*\)|\s(?P<b>\w+))\s*\)?$"
)
_HIP = textre.compile(
    r"\b(?:__HIPCC__|__HIP__|__HIP_PLATFORM_\w+|__HIP_DEVICE_COMPILE__|USE_ROCM|\w*_ROCM)\b"
)
_ASM = textre.compile(r"\b(?:asm|__asm__|__asm)\b")
_NVIDIA_ONLY = textre.compile(
    r"\b(?:CUDA_VERSION|__CUDA_ARCH__|__CUDA_ARCH_LIST__|"
    + "|".join(sorted(HIP_UNDEFINED))
    + r")\b"
)
#: pragmas only nvcc knows (EDG diagnostic numbers, host/device warning switches): hip-clang
#: warns "unknown pragma ignored" at each, under -Wall in every unit that includes them
_NV_PRAGMA = textre.compile(
    r"#[ \t]*pragma[ \t]+(?:nv_)?(?:diag_\w+|diagnostic\b|hd_warning_disable|exec_check_disable)"
    r"|_Pragma[ \t]*\([ \t]*\"[ \t]*(?:nv_)?(?:diag_\w+|diagnostic\b|hd_warning_disable"
    r"|exec_check_disable)"
)
_INCLUDE = textre.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"]", re.M)
_CUDA_IDENT = textre.compile(
    r"\b(?:cuda|cu[A-Z]|CU[A-Z_]|cublas|curand|cufft|cusparse|cusolver|nccl|__nv_)\w*"
)


def project_sources(
    ctx: PortContext, folder: str, suffixes: tuple[str, ...], depth: int = 5
) -> list[str]:
    """The project's own native files under ``folder`` ending in ``suffixes``: not in a
    build, third-party, vendored or hidden folder, at most ``depth`` folders down."""
    prefix = f"{folder}/" if folder else ""
    out: list[str] = []
    for rel in ctx.files_of("cuda/c++"):
        if not rel.startswith(prefix) or not rel.endswith(suffixes):
            continue
        parts = rel[len(prefix) :].split("/")
        if len(parts) > depth or any(p.startswith(".") or _NOT_OURS.match(p) for p in parts[:-1]):
            continue
        out.append(rel)
    return out


def _test(kind: str, expr: str, names: tuple[str, ...]) -> tuple[str, bool] | None:
    """(the macro, negated) when the directive tests one of ``names`` and nothing else."""
    if "\\" in expr:
        return None
    if kind in ("ifdef", "ifndef"):
        return (expr, kind == "ifndef") if expr in names else None
    m = _SIMPLE.match(expr)
    if m is None:
        return None
    name = m.group("a") or m.group("b")
    if name not in names or (kind == "elif" and m.group("neg")):
        return None
    return name, bool(m.group("neg"))


def _chains(src: CxxSource) -> tuple[dict[int, list[int]], dict[int, int]]:
    """In one pass over the directives: for each ``#if`` whose chain closes, the indexes of
    its ``#elif``/``#else``/``#endif`` (in order); for each of those, its ``#if``."""
    members: dict[int, list[int]] = {}
    opener: dict[int, int] = {}
    stack: list[int] = []
    for i, d in enumerate(src.directives):
        if d.kind in ("if", "ifdef", "ifndef"):
            stack.append(i)
            members[i] = []
        elif stack:
            members[stack[-1]].append(i)
            opener[i] = stack[-1]
            if d.kind == "endif":
                stack.pop()
    for i in stack:  # never closed: no chain
        del members[i]
    return members, opener


def _refusal(branch: str, raw: str) -> str | None:
    """Why hip-clang cannot take ``branch`` (comments blanked; ``raw``: the same text)."""
    if _ASM.search(branch):
        return "inline assembly"
    if _NV_PRAGMA.search(raw):  # llama.hpp's `#pragma nv_diag_suppress 940` (J44)
        return "nvcc's own diagnostic pragmas, which hip-clang warns are unknown"
    amap = load_api_map()
    for m in _INCLUDE.finditer(raw):
        name = m.group(1)
        if amap.header(name) is not None and not name.startswith(("hip", "thrust/")):
            return f"a CUDA header (<{name}>)"
    hit = _NVIDIA_ONLY.search(branch)
    if hit:
        return f"{hit.group()}, which hip-clang leaves undefined"
    for m in _CUDA_IDENT.finditer(branch):
        entry = amap.entries.get(m.group())
        if entry is not None and (not entry.hip or entry.hip == m.group()):
            return f"{m.group()}, which HIP has no twin for"
    return None


def test_edits(text: str, names: tuple[str, ...] = NVCC_NAMES) -> list[tuple[int, int, str]]:
    """(start, end, new text) for each test of ``names`` in ``text`` that the HIP build takes
    too, and none where the test is left (see the module's docstring)."""
    if not any(n in text for n in names):
        return []
    src = lex(text)
    members, opener = _chains(src)
    facts: dict[int, tuple[set[int], list[int], list[int]]] = {}
    out: list[tuple[int, int, str]] = []
    for i, d in enumerate(src.directives):
        if d.kind not in ("if", "ifdef", "ifndef", "elif"):
            continue
        got = _test(d.kind, d.expr, names)
        if got is None or src.guarded_at(d.offset) or src.dead_at(d.offset):
            continue
        name, negated = got
        first = opener.get(i, i) if d.kind == "elif" else i
        full = members.get(first)
        if not full:  # an #if never closed
            continue
        # the chain's facts once per chain, each test's by a search (rebuilding the chain and
        # searching it per #elif was elifs^2: seventeenth re-run, 200 KB, 42 s)
        if first not in facts:
            hips = {j for j in [first, *full] if _HIP.search(src.directives[j].expr)}
            kinds = [src.directives[j].kind for j in full]
            facts[first] = (
                hips,
                [j for j, k in zip(full, kinds, strict=True) if k == "else"],
                [j for j, k in zip(full, kinds, strict=True) if k == "elif"],
            )
        hips, elses_all, elifs_all = facts[first]
        if hips - {i} if first != i else hips - {first}:
            continue
        k = bisect_right(full, i)  # the members after i
        if negated:  # the nvcc branch is the #else
            if bisect_right(elifs_all, i) < len(elifs_all):
                continue
            e = bisect_right(elses_all, i)
            span = (elses_all[e], full[-1]) if e < len(elses_all) else None
        else:
            span = (i, full[k])
        if span is not None:
            start = src.line_span(src.directives[span[0]].line)[1]
            end = src.line_span(src.directives[span[1]].line)[0]
            if _refusal(src.code[start:end], text[start:end]) is not None:
                continue
        line_start, line_end = src.line_span(d.line)
        code_line = src.code[line_start:line_end]
        expr_end = line_start + len(code_line.rstrip())
        lead = text[line_start : d.offset]
        if negated:
            new = f"{lead}if !defined({name}) && !defined({HIP_NAME})"
        else:
            kw = "elif" if d.kind == "elif" else "if"
            new = f"{lead}{kw} defined({name}) || defined({HIP_NAME})"
        out.append((line_start, expr_end, new))
    return out


def _proposal(
    ctx: PortContext,
    key: str,
    folder: str,
    found: list[Finding],
    *,
    safe: bool,
    title: str,
    why: str,
    names: tuple[str, ...] = NVCC_NAMES,
    suffixes: tuple[str, ...] = _HEADER_OR_CU,
    depth: int = 5,
    skip: str = "",
) -> tuple[Proposal, dict[str, str]]:
    """The fix ``hip-compiler-tests:<key>`` over the files under ``folder`` (none whose text
    holds ``skip``), and the texts of the files it edits."""
    prop = Proposal(
        id=f"hip-compiler-tests:{key}",
        family="cmake" if safe else "kernels",
        title=title,
        safe=safe,
        why=why,
        findings=found,
        resolves=safe,  # the torch route's GP404 stays: named, not counted as fixed
    )
    texts: dict[str, str] = {}
    for rel in project_sources(ctx, folder, suffixes, depth):
        text = ctx.read(rel)
        if text is None or (skip and skip in text):
            continue
        for start, end, new in test_edits(text, names):
            prop.edit(rel, start, end, new)
            texts[rel] = text
    return prop, texts


def cmake_proposal(
    ctx: PortContext, path: str, folder: str, found: list[Finding], compat: str
) -> tuple[Proposal, dict[str, str]]:
    """Safe, for gpuport's opt-in CMake HIP build of ``path``: the ``.cu``/``.cuh`` files and
    headers under ``folder`` (not host ``.cpp`` files, which the C++ compiler builds on both
    sides, nor one that includes ``compat`` already)."""
    return _proposal(
        ctx,
        path,
        folder,
        found,
        safe=True,
        title=f"{path}: the nvcc-only branches of the sources also for the HIP build",
        why=(
            "a __CUDACC__/__NVCC__ test also taking __HIPCC__ keeps its value on every CUDA "
            "build (nvcc and host compilers never define __HIPCC__); only the opt-in HIP "
            "build, which did not exist, takes the nvcc branch"
        ),
        skip=compat,
    )


def propose(ctx: PortContext) -> list[Proposal]:
    """For each PyTorch extension (``setup.py`` with a GP404 finding): its ``__NVCC__`` tests
    also taken by ROCm torch's build, as an unsafe fix (see the module's docstring)."""
    out: list[Proposal] = []
    for setup in ctx.files_with("GP404"):
        if not setup.endswith("setup.py"):
            continue
        folder = str(PurePosixPath(setup).parent)
        prop, _ = _proposal(
            ctx,
            setup,
            "" if folder == "." else folder,
            ctx.of("GP404", path=setup),
            safe=False,
            title=f"{setup}: the extension's __NVCC__ branches also for hip-clang (__HIPCC__)",
            why=(
                "ROCm torch already hipifies and compiles these files, and its hipify maps "
                "__CUDACC__ but not __NVCC__: the ROCm build now compiles the nvcc branch in "
                "place of the other one (a CUDA build is unchanged: nvcc and the host "
                "compiler never define __HIPCC__)"
            ),
            names=("__NVCC__",),
            # an extension's sources sit deeper than a CMake project's (bevfusion:
            # mmdet3d/ops/spconv/include/tensorview/tensorview.h)
            depth=8,
        )
        if prop.edits:
            out.append(prop)
    return out
