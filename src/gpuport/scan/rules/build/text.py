"""Reading and reporting on build files as text: CMake and Makefiles.

:class:`Text` maps offsets in comment-free text to lines and columns;
:class:`Out` reports through the file context, merging the libraries one line
links into one GP407 finding and lowering every finding of a CUDA find-module
to info; :func:`report_text_tokens` finds the tokens both kinds share.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from gpuport.intervals import in_any
from gpuport.models import Severity
from gpuport.scan.rules.base import FileContext
from gpuport.scan.rules.build.common import (
    HALF_MACRO,
    NVCC_ONLY,
    SM_TOKEN,
    Guards,
    flag_fix,
    flag_severity,
    libs_fix,
)

Spans = list[tuple[int, int]]


def in_spans(spans: Spans, offset: int) -> bool:
    """Whether ``offset`` is in one of ``spans``: a search once the spans are many (a scan of
    every span per token was spans x tokens; fifteenth re-run)."""
    return in_any(spans, offset)


class Text:
    """Comment-free text of a build file with offset→(line, column) mapping."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.starts = [0] + [i + 1 for i, c in enumerate(code) if c == "\n"]

    def pos(self, offset: int) -> tuple[int, int]:
        idx = bisect.bisect_right(self.starts, offset) - 1
        return idx + 1, offset - self.starts[idx] + 1


@dataclass
class Out:
    """Where a build-file checker reports.

    ``note`` is set for CUDA find-modules and helpers (FindCUDA.cmake, run_nvcc.cmake):
    their findings are info, since the project's own CMake decides whether they run.
    """

    ctx: FileContext
    note: str | None = None
    arches: dict[int, tuple[int, str, bool]] = field(default_factory=dict)
    links: dict[int, list[tuple[int, str, bool]]] = field(default_factory=dict)

    def report(
        self,
        rule: str,
        line: int,
        col: int,
        *,
        message: str,
        fix: str | None = None,
        guarded: bool = False,
        severity: Severity | None = None,
    ) -> None:
        if self.note is not None:
            guarded, message = True, f"{message}; {self.note}"
        self.ctx.report(
            rule, line, col, message=message, fix=fix, guarded=guarded, severity=severity
        )

    def arch(self, line: int, col: int, token: str, guarded: bool) -> None:
        """An NVIDIA architecture named on ``line``; :meth:`flush` reports each line once."""
        if line not in self.arches or col < self.arches[line][0]:
            self.arches[line] = (col, token, guarded)

    def link(self, line: int, col: int, token: str, guarded: bool) -> None:
        """A CUDA library linked on ``line``; :meth:`flush` reports each line once."""
        self.links.setdefault(line, []).append((col, token, guarded))

    def flush(self) -> None:
        """Report the GP403 and GP407 findings gathered by :meth:`arch` and :meth:`link`."""
        target = self.ctx.target.name
        for line, (col, token, guarded) in sorted(self.arches.items()):
            self.report(
                "GP403",
                line,
                col,
                message=f"{token}: NVIDIA architectures only, no AMD target in this file",
                fix=f"Add the AMD target {target}: set(GPU_TARGETS {target}) or "
                f"CMAKE_HIP_ARCHITECTURES {target}; PYTORCH_ROCM_ARCH={target}; "
                f"--offload-arch={target}.",
                guarded=guarded,
            )
        for line in sorted(self.links):
            hits = sorted(self.links[line])
            names = list(dict.fromkeys(token for _, token, _ in hits))
            what = "library" if len(names) == 1 else "libraries"
            self.report(
                "GP407",
                line,
                hits[0][0],
                message=f"links NVIDIA {what} {', '.join(names)}",
                fix=libs_fix(names),
                guarded=all(g for _, _, g in hits),
            )
        self.arches.clear()
        self.links.clear()


def report_text_tokens(
    out: Out,
    text: Text,
    guards: Guards,
    skip: Spans,
    *,
    arch: bool = True,
    cuda_only: Spans | None = None,
    arch_skip: Spans | None = None,
) -> None:
    """GP402, GP406 and sm_XX/compute_XX GP403 on comment-free CMake or Makefile text.

    ``cuda_only`` are spans that apply only when nvcc compiles CUDA (CMake's
    ``$<$<COMPILE_LANGUAGE:CUDA>:...>``, ``CMAKE_CUDA_FLAGS``, an NVIDIA flag-table column):
    nvcc flags there are guarded.
    ``arch`` is false where the file names an AMD target.
    """
    target = out.ctx.target.name
    code = text.code
    for m in NVCC_ONLY.finditer(code):
        if in_spans(skip, m.start()):
            continue
        line, col = text.pos(m.start())
        flag = m.group(1)
        only_cuda = in_spans(cuda_only or [], m.start())
        out.report(
            "GP402",
            line,
            col,
            message=f"nvcc-only flag {flag}"
            + (" (passed only when nvcc compiles CUDA)" if only_cuda else ""),
            fix=flag_fix(flag, target),
            guarded=only_cuda or line in guards,
            severity=flag_severity(flag),
        )
    if arch:
        for m in SM_TOKEN.finditer(code):
            if not in_spans(skip, m.start()) and not in_spans(arch_skip or [], m.start()):
                line, col = text.pos(m.start())
                out.arch(line, col, m.group(0), line in guards)
    for m in HALF_MACRO.finditer(code):
        if not in_spans(skip, m.start()):
            line, col = text.pos(m.start())
            out.report(
                "GP406",
                line,
                col,
                message=f"{m.group(0)} is remapped on ROCm",
                guarded=line in guards,
            )
