"""Findings ``scan`` lowered to info only because the project *documents* a ROCm route.

``scan`` lowers a CUDA Dockerfile, a compose GPU reservation, an install step or an
NVIDIA-only component to info when the project already has a ROCm route: the verdict is about
what blocks a ROCm user, and the route answers that. When every piece of that route is prose
(a README support table, a page that runs ``docker run --device=/dev/kfd``), the ROCm user
still repeats those steps by hand, and a real port puts them in files: the ports in the
backtest whose route was documented only (D4 voicebox, H2, H3) added exactly a
``Dockerfile.rocm``, a compose overlay, a compatibility header. So ``port`` takes these
findings back, at their own severity, for **safe** fixes only: new files and branches a CUDA
build never sees. An unsafe fix is never proposed for them (scan did not ask for a change), and
the fix says why it is there. A route that is a file (a ROCm requirements file, image, build
or CI job) is a route the project already wrote: its findings stay lowered and unfixed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import PurePosixPath

from gpuport.models import Severity
from gpuport.scan.finding import Finding
from gpuport.scan.model import RouteEvidence, ScanReport
from gpuport.scan.project.on_route import OFF_ROUTE

__all__ = ["built_by_fix", "documented_only", "note", "route_lowered"]

#: What ``scan`` appends to a finding it lowers because of a route
#: (:func:`gpuport.scan.project.view.apply`), and nothing else.
_MARKERS = (
    "(CUDA variant beside the project's ROCm route)",
    "(an install step the project's ROCm route gives: ",
    "(the ROCm route installs it from ",
    " beside the ROCm route)",
    "): replace or drop it on ROCm)",
)


def documented_only(report: ScanReport) -> list[RouteEvidence]:
    """The project's route evidence when it counts and all of it is documentation (else [])."""
    counting = [r for r in report.routes if r.counts]
    return counting if counting and all(r.kind == "docs" for r in counting) else []


def route_lowered(report: ScanReport) -> list[Finding]:
    """The findings lowered to info only because of a documented route, at their own
    severity again (the caller filters scope and folders as for every finding)."""
    if not documented_only(report):
        return []
    out: list[Finding] = []
    for f in report.findings:
        if f.severity is not Severity.INFO or f.guarded or f.default_severity is None:
            continue
        if f.default_severity is Severity.INFO or not any(m in f.message for m in _MARKERS):
            continue
        out.append(dataclasses.replace(f, severity=f.default_severity, not_built=None))
    return out


def note(report: ScanReport) -> str:
    """What a fix of such findings says about them."""
    where = ", ".join(dict.fromkeys(r.path for r in documented_only(report)))
    return (
        f"scan lowered its findings to info because {where} documents a ROCm route; the "
        "route is prose only, so this puts it in a file a CUDA build never reads"
    )


def built_by_fix(
    report: ScanReport, setups: list[str], sources: Iterable[str] = ()
) -> list[Finding]:
    """The findings scan lowered as "not shown to be built by the ROCm route" in the
    extensions of ``setups`` (setup.py files a taken fix makes build on ROCm torch: the
    ``CUDA_HOME is None`` test also taking ``IS_HIP_EXTENSION``) and in ``sources`` (files a
    taken fix makes include the project's new HIP compatibility header, which scan counts
    as code written for the route), at their own severity again: a second run would see
    them so (pytorch/ao's fp6_llm kernels; mcx's ``__CUDA_ARCH__`` tests, J46), and ``port``
    is idempotent, so the first run takes them."""
    folders = [str(PurePosixPath(s).parent) for s in setups]
    exact = frozenset(sources)
    out: list[Finding] = []
    for f in report.findings:
        if f.severity is not Severity.INFO or f.guarded or f.default_severity is None:
            continue
        if f.default_severity is Severity.INFO or OFF_ROUTE not in f.message:
            continue
        path = f.location.path
        if path not in exact and not any(d == "." or path.startswith(f"{d}/") for d in folders):
            continue
        out.append(dataclasses.replace(f, severity=f.default_severity, not_built=None))
    return out
