"""Reading a project's GitHub release workflows for ``port``'s ROCm release family
(:mod:`gpuport.port.fix_release`): which workflow builds CUDA artefacts, with which CUDA
switch, and where its wheel index (PEP 503) lists them.

Text only, line by line: the workflows are YAML with PowerShell or bash inside, and what is
read is what a person would copy (the ``-DGGML_CUDA=on`` options, the Python versions of the
matrix, the ``on:`` block, the release step's tag). A line whose first non-blank character
is ``#`` is a comment and never evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuport import textre
from gpuport.knowledge.release_switches import ReleaseSwitches
from gpuport.linebreaks import odd_line_break

__all__ = [
    "CU_SUFFIX",
    "CudaWorkflow",
    "cuda_evidence",
    "cuda_name",
    "index_lines",
    "link_lines",
    "linux_build",
    "read_workflow",
    "rocm_present",
]

#: a step that builds a wheel (what the ROCm workflow builds the same way)
_BUILDS = textre.compile(
    r"python3? -m build\b|\bpip3? wheel\b|\bcibuildwheel\b|setup\.py bdist_wheel|\buv build\b"
)
#: a ``-DNAME=value`` option (CMake's spelling: no space after -D)
_OPTION = textre.compile(r"-D([A-Za-z_][A-Za-z0-9_]*)=([^\s'\"`]*)")
_ON = frozenset({"on", "1", "true", "yes"})
#: option names with no meaning on a HIP build: the CUDA toolkit's
_CUDA_NAME = textre.compile(r"CUDA|CUBLAS|NVCC|CUDNN|NVIDIA", re.I)
#: CUDA evidence that is not a -D switch (for the report line of an unknown build)
_OTHER_CUDA = (
    ("a CUDA toolkit setup action", textre.compile(r"uses:\s*Jimver/cuda-toolkit")),
    ("an nvidia/cuda container", textre.compile(r"\bnvidia/cuda:")),
    ("a CUDA torch index", textre.compile(r"download\.pytorch\.org/whl/cu\d+")),
)
#: a ROCm build already there: a ROCm image, a HIP switch, ROCm's compiler
_ROCM = textre.compile(
    r"rocm/dev-ubuntu|rocm/pytorch|-D[A-Z_]*HIP(?:BLAS)?=(?:on|1|true|yes)\b|\bhipcc\b"
    r"|whl/rocm\d",
    re.I,
)
_VERSIONS = textre.compile(r"['\"](3\.\d{1,2})['\"]")
_PY_KEY = textre.compile(r"pyver|python-version|python_version|\bpython\b", re.I)
_TOP_KEY = textre.compile(r"^([A-Za-z_\"'][^:#]*):")
_TAG = textre.compile(r"^(\s*)tag_name:\s*(.*?)\s*$")
CU_SUFFIX = textre.compile(r"-cu(?:da)?(?:\$\{\{[^}]*\}\}|\d+(?:\.\d+)*)")


def _code(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith("#")


@dataclass
class CudaWorkflow:
    """A workflow that builds CUDA wheels with a CMake switch (the ROCm workflow's model)."""

    path: str
    name: str
    #: (option, value, 1-based line) of each -D option on a line that sets CMAKE_ARGS
    options: list[tuple[str, str, int]] = field(default_factory=list)
    #: the CUDA switches turned on that the knowledge table knows (option, line)
    switches: list[tuple[str, int]] = field(default_factory=list)
    #: options turned on whose name says CUDA and that the table does not know
    unknown: list[tuple[str, int]] = field(default_factory=list)
    pythons: list[str] = field(default_factory=list)
    on_block: list[str] = field(default_factory=list)
    permissions: list[str] = field(default_factory=list)
    build: str = "python -m build --wheel"
    #: the release step: its ``if:`` line (or "") and its tag with the CUDA suffix, or None
    release_if: str = ""
    release_tag: str | None = None
    #: 1-based line of the first wheel build
    build_line: int = 0


def rocm_present(text: str) -> bool:
    """Whether a workflow already builds for ROCm (a ROCm image, a HIP switch, hipcc)."""
    return any(_code(line) and _ROCM.search(line) for line in text.splitlines())


def _block(lines: list[str], key: str) -> list[str]:
    """The top-level ``key:`` block of a workflow, verbatim (the key's line and the indented
    lines under it), or []."""
    out: list[str] = []
    for line in lines:
        m = _TOP_KEY.match(line)
        if out:
            if m or (line and not line[0].isspace() and not line.startswith("#")):
                break
            out.append(line)
        elif m and m.group(1).strip("\"'") == key:
            out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return out


#: text of the CUDA workflow written back into the ROCm one: plain words only, nothing YAML
#: or a shell would read as structure (thirty-seventh re-run F2, F4)
_PLAIN_NAME = textre.compile(r"[\w .()+/-]+")
_PLAIN_COMMAND = textre.compile(r"[\w ./=:@+,-]+")
_PLAIN_EXPR = textre.compile(r"[\w .${}()'=!<>,/&|*\[\]-]+")


def _top_name(lines: list[str]) -> str:
    for line in lines:
        m = textre.match(r"^name:\s*(.*?)\s*$", line)
        if m:
            name = m.group(1).strip("\"'")
            return name if _PLAIN_NAME.fullmatch(name) else ""
    return ""


def read_workflow(path: str, text: str, table: ReleaseSwitches) -> CudaWorkflow | None:
    """The workflow as a model for a ROCm one, when it builds wheels with a CMake option
    turned on whose name says CUDA (known to ``table`` or not); else None."""
    if odd_line_break(text) is not None:
        return None  # blocks are copied line by line: a break YAML reads otherwise is not
    lines = text.splitlines()  # copied (thirty-eighth re-run F1: a form feed in a comment)
    wf = CudaWorkflow(path=path, name=_top_name(lines))
    for i, line in enumerate(lines, 1):
        if not _code(line):
            continue
        if not wf.build_line and _BUILDS.search(line):
            wf.build_line = i
            cmd = line.strip().removeprefix("run:").strip()
            if _PLAIN_COMMAND.fullmatch(cmd) and _BUILDS.match(cmd):
                wf.build = cmd
        if "CMAKE_ARGS" in line:
            for m in _OPTION.finditer(line):
                wf.options.append((m.group(1), m.group(2), i))
                if m.group(2).lower() not in _ON:
                    continue
                if table.hip_for(m.group(1)) is not None:
                    wf.switches.append((m.group(1), i))
                elif _CUDA_NAME.search(m.group(1)):
                    wf.unknown.append((m.group(1), i))
        if not wf.pythons and _PY_KEY.search(line):
            wf.pythons = list(dict.fromkeys(_VERSIONS.findall(line)))
    if not wf.build_line or not (wf.switches or wf.unknown):
        return None
    wf.on_block = _block(lines, "on") or _block(lines, "true")
    wf.permissions = _block(lines, "permissions")
    _release(wf, lines)
    return wf


def _release(wf: CudaWorkflow, lines: list[str]) -> None:
    """The release step (``softprops/action-gh-release``): its ``if:`` and its tag, when the
    tag names the CUDA build (``${{ github.ref_name }}-cu${{ env.CUDA_VERSION }}``)."""
    for i, line in enumerate(lines):
        if not _code(line) or "softprops/action-gh-release" not in line:
            continue
        indent = len(line) - len(line.lstrip(" -"))
        j = i + 1
        while j < len(lines) and (
            not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip(" ")) >= indent
        ):
            if lines[j].lstrip().startswith("- "):
                break
            cond = textre.match(r"^\s*if:\s*(.*?)\s*$", lines[j])
            if cond and _PLAIN_EXPR.fullmatch(cond.group(1)):
                wf.release_if = cond.group(1)
            tag = _TAG.match(lines[j])
            if tag and CU_SUFFIX.search(tag.group(2)) and _PLAIN_EXPR.fullmatch(tag.group(2)):
                wf.release_tag = tag.group(2)
            j += 1
        return


def cuda_evidence(text: str) -> tuple[str, int] | None:
    """What shows a workflow that builds artefacts builds CUDA ones without a CMake switch
    (a toolkit setup action, an ``nvidia/cuda`` container, a CUDA torch index) and its
    1-based line, or None."""
    lines = text.splitlines()
    if not any(_code(x) and (_BUILDS.search(x) or "build-push-action" in x) for x in lines):
        return None
    for what, pattern in _OTHER_CUDA:
        for i, line in enumerate(lines, 1):
            if _code(line) and pattern.search(line):
                return what, i
    return None


def cuda_name(name: str) -> bool:
    return bool(_CUDA_NAME.search(name))


def index_lines(text: str) -> list[tuple[int, str]]:
    """(0-based line, text) of the lines that generate a CUDA wheel index page
    (``releases-to-pep-503.sh index/whl/cu124 '...-cu124$'``), comments left out."""
    out: list[tuple[int, str]] = []
    for i, line in enumerate(text.splitlines()):
        if _code(line) and textre.search(r"whl/cu\d+\b", line) and "-cu" in line:
            out.append((i, line))
    return out


def link_lines(text: str) -> list[tuple[int, str]]:
    """(0-based line, text) of a wheel index script's links to its CUDA pages
    (``echo "<a href=\\"cu124/\\">CUDA 12.4</a><br>"``), comments left out."""
    out: list[tuple[int, str]] = []
    for i, line in enumerate(text.splitlines()):
        if _code(line) and textre.search(r"href=\\?\"cu\d+/\\?\">CUDA [\d.]+<", line):
            out.append((i, line))
    return out


_JOB = textre.compile(r"^  ([A-Za-z0-9_-]+):\s*$")
_OS_KEY = textre.compile(r"\bos\b['\"]?\s*[:=]")


def linux_build(text: str, build_line: int) -> bool:
    """Whether the job holding 1-based line ``build_line`` runs on Linux: its ``runs-on``
    names Ubuntu, or names the matrix's ``os`` and that lists an Ubuntu runner."""
    lines = text.splitlines()
    start = next((i for i in range(build_line - 1, -1, -1) if _JOB.match(lines[i])), None)
    if start is None:
        return False
    end = next((i for i in range(start + 1, len(lines)) if _JOB.match(lines[i])), len(lines))
    for line in lines[start:end]:
        m = textre.match(r"^\s*runs-on:\s*(.*?)\s*$", line)
        if m is None or not _code(line):
            continue
        value = m.group(1).lower()
        if "ubuntu" in value:
            return True
        if "matrix.os" in value:
            return any(_code(x) and _OS_KEY.search(x) and "ubuntu" in x.lower() for x in lines)
        return False
    return False
