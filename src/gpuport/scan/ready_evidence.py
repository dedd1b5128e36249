"""What a ``ready`` verdict needs besides no findings: positive evidence that nothing the
project builds or compiles went unseen (issue 24, "silent READY").

* blockers or majors lowered only because the ROCm route is not shown to build their code
  make ``ready`` minor work (:func:`ready_on_route`);
* a source the build names that the scan did not read (not in the tree, written at build
  time, skipped) makes it minor work, saying what could not be seen (:func:`ready_seen`);
* GPU kernels kept as text templates a program renders and compiles (PyFR's Mako kernels,
  compiled at run time by NVRTC or hiprtc; session 19) are not read as C++: each is listed as
  not read, and ``ready`` becomes minor work naming them (:func:`unread_kernel_templates`,
  :func:`ready_templates`). Any template engine's suffix counts, and header templates a build
  configures (``k.cuh.in``, whose code outside the macros is never judged); kernel code is a
  kernel qualifier, a thread index, a barrier or a warp intrinsic (``__shfl_xor_sync``,
  ``warpSize``), not only ``__global__`` (forty-third re-run F6). A header template's macros
  are judged nowhere (the view reads them only for facts): a macro body with running kernel
  code (a thread index, a barrier, a warp intrinsic, ``warpSize``) lists it too, a bare
  qualifier alias (``#define EXEC __device__``) does not; and any suffix after a source one
  is a template (``k.cu.m4``, ``.cu.gotmpl``; forty-fourth re-run F8). Inline PTX (an
  ``asm`` statement with PTX words, GP301 in a judged file) counts as running kernel code
  too, in a macro body or in the code (forty-fifth re-run F12: ``config.cuh.in``'s
  ``#define LANE_ID(x) asm volatile("mov.u32 %0, %%laneid;" ...)``), judged over the whole
  template: an ``asm`` and a PTX word anywhere in it, even in two macros (forty-sixth re-run
  F9: ``#define PTX_LANEID "mov.u32 ..."`` beside ``asm volatile(PTX_LANEID ...)``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from gpuport import textre
from gpuport.models import Severity
from gpuport.scan.finding import Finding, SkippedFile
from gpuport.scan.model import Verdict
from gpuport.scan.project.files import Candidate, header_template, read_text
from gpuport.scan.project.on_route import OFF_ROUTE
from gpuport.scan.project.view import ProjectView
from gpuport.scan.rules.native.ptx_text import PTX

__all__ = [
    "HEADER_TEMPLATE",
    "KERNEL_TEMPLATE",
    "ready_on_route",
    "ready_seen",
    "ready_templates",
    "skip_reason",
    "skip_reasons",
    "unread_kernel_templates",
]

#: the reason a kernel template is listed as not read
KERNEL_TEMPLATE = (
    "a GPU kernel template (Mako, Jinja...) the project renders and compiles at run or build "
    "time: not read as C++, so not judged"
)
#: the reason a header template (read only for its macros) with kernel code is listed
HEADER_TEMPLATE = (
    "a header template (CMake configure_file, autoconf) holding GPU kernel code: its code and "
    "its macros are not judged"
)
#: GPU kernel code in a template's text: qualifiers, thread indices, barriers, warp intrinsics
_KERNEL = textre.compile(
    r"__global__|__device__|__shared__|__constant__|__launch_bounds__"
    r"|\b(?:threadIdx|blockIdx|blockDim|gridDim|warpSize)\b|__syncthreads\s*\(|__syncwarp\b"
    r"|__shfl(?:_up|_down|_xor)?(?:_sync)?\s*\(|__ballot(?:_sync)?\s*\(|__activemask\s*\("
    r"|__(?:any|all|uni)_sync\s*\(|__match_(?:any|all)_sync\s*\("
)
#: running kernel code in a macro: no bare qualifier (a config header's ``__device__``
#: alias), but thread indices, barriers and warp intrinsics
_RUNNING = textre.compile(
    r"\b(?:threadIdx|blockIdx|blockDim|gridDim|warpSize)\b|__syncthreads\s*\(|__syncwarp\b"
    r"|__shfl(?:_up|_down|_xor)?(?:_sync)?\s*\(|__ballot(?:_sync)?\s*\(|__activemask\s*\("
    r"|__(?:any|all|uni)_sync\s*\(|__match_(?:any|all)_sync\s*\("
)
#: an inline assembly statement's keyword (with a PTX word beside it: inline PTX)
_ASM = textre.compile(r"\b(?:asm|__asm|__asm__)\b")


def _inline_ptx(text: str) -> bool:
    """Whether the template holds an ``asm`` keyword and a PTX word anywhere, in one macro or
    across several (``#define PTX_LANEID "mov.u32 ..."`` beside ``asm volatile(PTX_LANEID
    ...)``; forty-sixth re-run F9): inline PTX, which no HIP build compiles."""
    return _ASM.search(text) is not None and PTX.search(text) is not None


#: a preprocessor line (continued lines too): a header template's macros
_PP_LINE = textre.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
#: a header's suffix before a template's (``reduce.cuh.m4``, ``config.h.cmake``)
_HEADER_THEN = textre.compile(r".*\.(?:h|hh|hpp|hxx|cuh)\.[^/]+$", re.I)
#: at most this many templates are looked into (each read to the scan's byte limit)
_MOST_TEMPLATES = 2_000


def unread_kernel_templates(found: Sequence[tuple[str, Path]], max_bytes: int) -> list[SkippedFile]:
    """The text templates of ``found`` (relative path, path) that hold GPU kernel code, each
    as a file not read; past :data:`_MOST_TEMPLATES`, one entry says how many were not
    looked into."""
    out: list[SkippedFile] = []
    for rel, path in found[:_MOST_TEMPLATES]:
        text = read_text(path, max_bytes)
        if not isinstance(text, str):
            continue
        header = header_template(rel) or _HEADER_THEN.match(rel.rsplit("/", 1)[-1]) is not None
        if header and "#" in text:
            # its macros are judged nowhere (the view reads them for facts only): running
            # kernel code in them counts, a qualifier alias does not (forty-fourth re-run F8)
            macros = "\n".join(_PP_LINE.findall(text))
            code = _PP_LINE.sub("", text)
            kernel = (
                _RUNNING.search(macros) is not None
                or _KERNEL.search(code) is not None
                or _inline_ptx(text)
            )
        else:
            kernel = _KERNEL.search(text) is not None or _inline_ptx(text)
        if kernel:
            out.append(SkippedFile(path=rel, reason=HEADER_TEMPLATE if header else KERNEL_TEMPLATE))
    if len(found) > _MOST_TEMPLATES:
        out.append(
            SkippedFile(
                path=found[_MOST_TEMPLATES][0],
                reason=f"{len(found) - _MOST_TEMPLATES} more text templates not looked into "
                f"(past {_MOST_TEMPLATES:,}): GPU kernels among them would not be judged",
            )
        )
    return out


def ready_templates(
    verdict: Verdict, reason: str, unread: Sequence[SkippedFile]
) -> tuple[Verdict, str]:
    """``ready`` beside GPU kernel templates gpuport did not read is minor work: their kernels
    are compiled (at run time or in the build) and nothing judged them; minor work says so."""
    if not unread:
        return verdict, reason
    where = sorted({s.path.rsplit("/", 1)[0] + "/" if "/" in s.path else s.path for s in unread})
    shown = ", ".join(where[:3]) + (f" and {len(where) - 3} more folders" if len(where) > 3 else "")
    said = (
        f"{len(unread)} GPU kernel template{'s' if len(unread) != 1 else ''} (compiled at run or "
        f"build time) not read: {shown}"
    )
    if verdict is Verdict.READY:
        return Verdict.MINOR_WORK, f"nothing found in what gpuport read, but {said}"
    return verdict, f"{reason}; {said}"


def ready_on_route(
    verdict: Verdict, reason: str, judged_findings: Sequence[Finding]
) -> tuple[Verdict, str]:
    """``ready`` beside blockers or majors lowered only because the ROCm route is not shown to
    build their code (issue 24, eighth round) is minor work: someone has to check that code
    is really off the route."""
    off = [
        f
        for f in judged_findings
        if f.severity is Severity.INFO
        and f.default_severity in (Severity.BLOCKER, Severity.MAJOR)
        and OFF_ROUTE in f.message
    ]
    if not off:
        return verdict, reason
    f = off[0]
    return Verdict.MINOR_WORK, (
        f"{reason}, but {len(off)} blocker/major finding{'s' if len(off) != 1 else ''} in code "
        f"the ROCm route is not shown to build (listed as info, such as "
        f"{f.location.path}:{f.location.line}): check that it is off the route"
    )


def ready_seen(
    verdict: Verdict,
    reason: str,
    view: ProjectView,
    candidates: Sequence[Candidate],
    skipped: Sequence[SkippedFile],
) -> tuple[Verdict, str]:
    """``ready`` needs positive evidence that nothing native is built unseen (issue 24): a
    source the build names that the scan did not read (not in the tree, written at build
    time, vendored or skipped) makes it minor work, saying what could not be seen."""
    read = {c.rel for c in candidates} - {s.path for s in skipped}
    reasons = skip_reasons(skipped)
    unseen = []
    for src, (evidence, by_setup) in sorted(view.build.sources.items()):
        if src in read:
            continue
        why = skip_reason(src, reasons)
        if why:
            unseen.append(f"{src} ({evidence}: not read: {why})")
        elif by_setup:
            unseen.append(f"{src} ({evidence}: not in the tree; written at build time or fetched)")
    if not unseen:
        return verdict, reason
    shown = "; ".join(unseen[:3]) + (f" and {len(unseen) - 3} more" if len(unseen) > 3 else "")
    if verdict is Verdict.MINOR_WORK:
        return (
            verdict,
            f"{reason}; the build also compiles native code gpuport could not see: {shown}",
        )
    return Verdict.MINOR_WORK, (
        f"nothing found in what gpuport read, but the build compiles native code it could not "
        f"see: {shown}"
    )


def skip_reasons(skipped: Sequence[SkippedFile]) -> dict[str, str]:
    """Skipped path (a folder ends in ``/``) -> its reason, the first listed."""
    out: dict[str, str] = {}
    for s in skipped:
        out.setdefault(s.path, s.reason)
    return out


def skip_reason(src: str, reasons: Mapping[str, str]) -> str:
    """Why ``src`` was not read: it or a folder above it skipped (looked up, not a walk of
    every skipped file per source: sources x skipped, 15,000 each, > 60 s; thirty-third
    re-run F6)."""
    if src in reasons:
        return reasons[src]
    parts = src.split("/")
    for depth in range(1, len(parts)):
        why = reasons.get("/".join(parts[:depth]) + "/")
        if why is not None:
            return why
    return ""
