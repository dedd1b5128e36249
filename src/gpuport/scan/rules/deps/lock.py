"""Dependencies with no ROCm build that are still no ROCm gap.

* A lock file (pip-compile, ``uv export``) resolved against the CUDA build of torch holds
  NVIDIA's runtime wheels (``nvidia-cublas-cu12 ... # via torch``). They are no choice of
  the project: resolving the lock again against the ROCm torch index drops them, one job
  for the whole file (one message, so the effort counts it once).
* Another vendor's accelerator stack (Intel Extension for PyTorch, Gaudi): the CUDA build
  of the project does without it, so the ROCm build can too.
"""

from __future__ import annotations

from gpuport import textre
from gpuport.knowledge import PackageInfo
from gpuport.models import Severity
from gpuport.scan.rules.base import OTHER_VENDOR, FileContext, physical_lines

VIA_KEY = "deps.via"
_VIA = textre.compile(r"^\s*#\s*via\b\s*(.*)$")
_VIA_MORE = textre.compile(r"^\s*#\s+(\S.*)$")
#: Packages whose CUDA build pulls NVIDIA's runtime wheels in (``# via torch`` in a lock).
_CUDA_BUILDS = frozenset({"torch", "torchvision", "torchaudio", "jax", "jaxlib", "tensorflow"})


def via_annotations(text: str) -> dict[int, list[str]]:
    """pip-compile/uv annotations: requirement line -> the packages that pull it in."""
    lines = physical_lines(text)
    out: dict[int, list[str]] = {}
    for no, raw in enumerate(lines, 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        parents: list[str] = []
        nxt = no  # 0-based index of the line after ``no``
        while nxt < len(lines) and lines[nxt].lstrip().startswith("#"):
            m = _VIA.match(lines[nxt])
            if m:
                parents += m.group(1).split()
                nxt += 1
                while nxt < len(lines) and (more := _VIA_MORE.match(lines[nxt])):
                    if _VIA.match(lines[nxt]):
                        break
                    parents.append(more.group(1).split()[0])
                    nxt += 1
                break
            nxt += 1
        if parents:
            out[no] = parents
    return out


def pulled_by_cuda_build(ctx: FileContext, line: int) -> bool:
    """Is the requirement on ``line`` only there because a lock resolved CUDA torch?"""
    via = ctx.scratch.get(VIA_KEY)
    parents = via.get(line, []) if isinstance(via, dict) else []
    return bool(parents) and all(
        p in _CUDA_BUILDS or textre.match(r"^nvidia-[\w-]+-cu\d+$", p) for p in parents
    )


def not_a_rocm_gap(
    ctx: FileContext, pkg: PackageInfo, text: str, line: int, column: int | None
) -> bool:
    """Report a status-"no" requirement that is no ROCm gap (see above); False otherwise."""
    if pkg.category == OTHER_VENDOR:
        ctx.report(
            "GP101",
            line,
            column,
            message=text + " It is another vendor's accelerator stack, not part of the CUDA "
            "path: nothing to port for ROCm.",
            fix="Nothing to port: keep it out of the ROCm install, as out of the CUDA one.",
            severity=Severity.INFO,
        )
        return True
    if pkg.category == "nvidia-runtime" and pulled_by_cuda_build(ctx, line):
        ctx.report(
            "GP102",
            line,
            column,
            message="an NVIDIA runtime wheel that this lock file holds only because it was "
            "resolved against the CUDA build of torch (`# via torch`): resolving it again "
            "against the ROCm torch index drops it",
            fix="Regenerate the lock with the ROCm wheel index "
            "(--extra-index-url https://download.pytorch.org/whl/rocm6.x).",
        )
        return True
    return False
