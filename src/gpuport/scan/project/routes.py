"""The project's own ROCm route: evidence that it already builds or ships for ROCm.

Read as text, never run: ROCm Dockerfiles (named for ROCm/AMD, or ``FROM`` a
ROCm image), ROCm requirement files, ROCm extras in pyproject/setup.py, build
files with a HIP branch (from the build model), CI workflows that run on ROCm or
AMD Instinct runners, and README/docs sections about ROCm. A project with a route
is judged on what that route still lacks; its CUDA variants (a CUDA Dockerfile
beside a ROCm one) are info.
"""

from __future__ import annotations

import re
from pathlib import Path

from gpuport import fileio, textre
from gpuport.scan.model import RouteEvidence
from gpuport.scan.project.routes_docs import doc_routes

__all__ = [
    "RouteEvidence",
    "find_routes",
    "is_rocm_variant_name",
    "working_route",
]

_ROCM_NAME = textre.compile(r"(?:^|[-_.])(?:rocm|amd|hip)(?:[-_.\d]|$)", re.I)
_FROM_ROCM = textre.compile(r"^\s*FROM\s+\S*rocm\S*", re.I | re.M)
_REQ_ROCM = textre.compile(r"download\.pytorch\.org/whl/rocm|\+rocm\d|repo\.radeon\.com", re.I)
_EXTRA_ROCM = textre.compile(
    r"""^\s*["']?([\w.-]*(?:rocm|amd)[\w.-]*)["']?\s*[=:]\s*\[""", re.I | re.M
)
_CI = textre.compile(
    r"rocm|\bmi(?:2[0-9]{2}x?|3[0-9]{2}x?)\b|gfx9[0-9a]{2}|amd-?gpu|runs-on:.*\bamd\b", re.I
)


_FROM_VAR = textre.compile(r"^[ \t]*FROM[ \t]+\$\{?(\w+)\}?", re.I | re.M)
_ARG_ROCM = textre.compile(
    r"^[ \t]*ARG[ \t]+(\w+)[ \t]*=[ \t]*[\"']?([^\s\"']*rocm[^\s\"']*)", re.I | re.M
)


def _rocm_base(text: str) -> tuple[int, str] | None:
    """Where a Dockerfile starts from a ROCm image, and the line: ``FROM rocm/pytorch:...``,
    or ``FROM ${BASE_IMAGE}`` whose ``ARG BASE_IMAGE=rocm/pytorch:...`` default is one
    (LLaMA-Factory's docker/docker-rocm/Dockerfile; issue 24, fifteenth sample)."""
    m = _FROM_ROCM.search(text)
    if m is not None:
        return m.start(), _first_line(m.group())
    if "ARG" not in text.upper():
        return None
    # every ARG with a ROCm default, read once (a search of the text before each FROM was
    # quadratic: 60,000 `FROM $V` lines, > 60 s; thirty-fifth re-run F2)
    args: dict[str, tuple[int, str]] = {}
    for a in _ARG_ROCM.finditer(text):
        args.setdefault(a.group(1).lower(), (a.start(), a.group(2)))
    for f in _FROM_VAR.finditer(text) if args else ():
        got = args.get(f.group(1).lower())
        if got is not None and got[0] < f.start():
            return f.start(), f"{_first_line(f.group())} ({f.group(1)}={got[1]})"
    return None


def working_route(routes: list[RouteEvidence]) -> bool:
    """A route the project really has: one piece of evidence that counts (issue 24: a docs
    page with ROCm install commands, a README support table with an AMD row, a single HIP
    build branch are each enough). Evidence that does not count (a heading alone, a line
    that says ROCm is not supported) is listed with the reason."""
    return any(r.counts for r in routes)


#: A build file that configures a HIP build of its own (it requires the HIP/ROCm packages or
#: enables CMake's HIP language): a whole ROCm build, evidence enough on its own (ggml's
#: ``ggml-hip/CMakeLists.txt``).
OWN_HIP_BUILD = (
    "configures a HIP build of its own (find_package(hip), enable_language(HIP), a hipcc makefile)"
)
_OWN_HIP = textre.compile(
    r"^[ \t]*(?:enable_language\s*\(\s*HIP\b|find_package\s*\(\s*(?:hip|hipblas|rocblas|hipcub)\b)",
    re.M | re.I,
)


def own_hip_build(text: str) -> bool:
    """Whether a CMake file requires HIP/ROCm packages or enables the HIP language."""
    return _OWN_HIP.search(text) is not None


def is_rocm_variant_name(rel: str) -> bool:
    """Whether a file's name marks it as the ROCm/AMD variant (``Dockerfile_amd``)."""
    return _ROCM_NAME.search(rel.rsplit("/", 1)[-1]) is not None


def _line(text: str, pos: int) -> int:
    return textre.line_finder(text)(pos)


def _first_line(text: str, limit: int = 120) -> str:
    return " ".join(text.strip().split())[:limit]


def find_routes(
    root: Path,
    texts: dict[str, tuple[str, str]],
    hip_builds: list[str],
    own_hip: frozenset[str] = frozenset(),
) -> list[RouteEvidence]:
    """``texts``: relative path -> (file kind, text) for the project's manifests,
    Dockerfiles and build files; ``hip_builds``: build files with a HIP branch."""
    out: list[RouteEvidence] = []
    for rel, (kind, text) in sorted(texts.items()):
        if kind == "dockerfile":
            base = _rocm_base(text)
            if base or is_rocm_variant_name(rel):
                detail = base[1] if base else "ROCm variant by name"
                out.append(
                    RouteEvidence(
                        kind="docker",
                        path=rel,
                        line=_line(text, base[0]) if base else None,
                        detail=detail,
                        install=True,
                    )
                )
        elif kind == "requirements":
            m = _REQ_ROCM.search(text)
            if m or is_rocm_variant_name(rel):
                out.append(
                    RouteEvidence(
                        kind="requirements",
                        path=rel,
                        line=_line(text, m.start()) if m else None,
                        detail=m.group() if m else "ROCm requirements by name",
                        install=True,
                    )
                )
        elif kind in ("pyproject", "setup.py", "setup.cfg"):
            for m in _EXTRA_ROCM.finditer(text):
                out.append(
                    RouteEvidence(
                        kind="extra",
                        path=rel,
                        line=_line(text, m.start()),
                        detail=f"extra {m.group(1)!r}",
                        install=True,
                    )
                )
    for rel in hip_builds:
        path, _, line = rel.partition(":")
        own = path in own_hip
        out.append(
            RouteEvidence(
                kind="build",
                path=path,
                line=int(line) if line.isdigit() else None,
                detail=OWN_HIP_BUILD
                if own
                else "builds for ROCm/HIP (a HIP branch chooses its sources or flags)",
            )
        )
    out += _ci(root) + _autotools(root) + doc_routes(root)
    return out


#: an autotools option that builds for ROCm: ``AC_ARG_WITH([rocr])`` (libfabric),
#: ``AC_ARG_ENABLE([amd-gpu])`` (ELPA), ``--enable-accelerator=cuda|sycl|hip|none`` (Grid)
#: (issue 24, eighteenth and nineteenth samples)
_AUTOTOOLS = textre.compile(
    r"AC_ARG_WITH\(\s*\[?(?P<with>rocm|rocr|hip|hsa)\b"
    r"|AC_ARG_ENABLE\(\s*\[?(?P<enable>(?:amd[-_]gpu|hip|rocm)[\w-]*)"
    r"|AS_HELP_STRING\(\s*\[(?P<choice>--enable-[\w-]+=[\w|]*\bhip\b[\w|]*)",
    re.I,
)


def _autotools(root: Path) -> list[RouteEvidence]:
    """A ROCm option of the project's own ``configure.ac``."""
    for name in ("configure.ac", "configure.in"):
        text = _read(root / name, root)
        if text is None:
            continue
        m = _AUTOTOOLS.search(text)
        if m is None:
            continue
        option = (
            f"--with-{m.group('with')}"
            if m.group("with")
            else f"--enable-{m.group('enable')}"
            if m.group("enable")
            else m.group("choice")
        )
        return [
            RouteEvidence(
                kind="build",
                path=name,
                line=_line(text, m.start()),
                detail=f"configure option {option} builds for ROCm/HIP",
            )
        ]
    return []


def _read(path: Path, root: Path) -> str | None:
    """A CI file, bounded; None when it cannot be read or leads out of ``root``, the project:
    a linked ``.github`` or ``workflows`` folder included (fourteenth re-run, F5: a folder link
    to an outside CI file was read and quoted as route evidence)."""
    return fileio.read_text_or_none(path, limit=2_000_000, root=root)


#: a CI line that names ROCm without doing anything with it: a step's name, a comment, an echo
#: (libfabric's "Install ROCm" step: `echo "Installing ROCm SDK"` and a TODO; issue 24,
#: nineteenth sample)
_CI_WORDS_ONLY = textre.compile(r"[ \t]*(?:-[ \t]*)?(?:name:|#|echo\b|run:[ \t]*echo\b)", re.I)


def _acting_match(text: str) -> re.Match[str] | None:
    """The first ROCm word on a line that does something (not a label, comment or echo):
    each line looked at once (a line per match was matches x line length: a 1.5 MB comment
    line of `rocm`s > 60 s; thirty-fourth re-run F7)."""
    pos = 0
    while (m := _CI.search(text, pos)) is not None:
        start = text.rfind("\n", 0, m.start()) + 1
        if _CI_WORDS_ONLY.match(text, start) is None:
            return m
        end = text.find("\n", m.end())
        if end < 0:
            return None
        pos = end + 1
    return None


def _ci(root: Path) -> list[RouteEvidence]:
    out = []
    wf = root / ".github" / "workflows"
    try:
        files = sorted(p for p in wf.iterdir() if p.suffix in (".yml", ".yaml") and p.is_file())
    except OSError:
        return []
    for p in files:
        text = _read(p, root)
        if text is None:
            continue
        m = _acting_match(text)
        if m:
            rel = p.relative_to(root).as_posix()
            line = text[text.rfind("\n", 0, m.start()) + 1 : text.find("\n", m.end())]
            out.append(
                RouteEvidence(
                    kind="ci", path=rel, line=_line(text, m.start()), detail=_first_line(line)
                )
            )
    return out
