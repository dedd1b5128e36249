"""What GPU work a CUDA image does, and whether its ``Dockerfile.rocm`` copy would do it on AMD
(session 15: J39, and the copies of F4, G3, I1, J7 that could not reach an AMD GPU).

A ROCm copy of an image is worth a reviewer's time only when the image's GPU work runs on
ROCm there: ROCm torch (AMD's framework image, ROCm wheels installed), a HIP build of the
project (the project's own, or the opt-in one ``port`` writes), a runtime that works on ROCm.
A copy whose RUN configures or builds **the project's own CUDA build** does not, and is
refused with the reason (no hunk): ``cmake -Bbuild`` of CMake files that look up CUDA
(``find_package(CUDA)`` is optional there: on the ROCm image the CPU build is configured),
``make`` of a Makefile that runs nvcc; also inside a project script the RUN runs (read, never
run). A copy does not switch a HIP build on (``-DGPUPORT_HIP=ON`` and the GPU targets are a
person's call; the reason names the HIP build where ``port`` writes one). A build of sources
the same RUN fetches (``git clone ... && cmake -S ...``) is someone else's and is not read; a
development image that builds nothing of the project (J6) keeps its copy.

CUDA-version variants of one image (``Dockerfile-cuda11.8``, ``Dockerfile-cuda12.0``) whose
copies are the same file byte for byte get one copy (:func:`twins`).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from gpuport import textre
from gpuport.port.context import PortContext, Proposal, unrun
from gpuport.port.docker_pip import SCRIPT, no_comments

__all__ = ["hip_build", "project_build", "twins"]

#: a command position in a shell line (line start, after ``&&``/``||``/``;``/``|``/``(``, after
#: ``then``/``do``/``else``, after ``sudo`` or ``env A=b``)
_CMD = (
    r"(?:^[ \t]*(?:RUN(?:[ \t]+--\S+)*[ \t]+)?|&&|\|\||[;|(`]|\$\(|\b(?:then|do|else)\b)"
    r"[ \t]*(?:sudo[ \t]+|(?:\w+=\S*[ \t]+)+)*"
)
#: the command and its words (up to the end of the command), or the command alone
_END = r"(?P<args>[ \t][^\n;&|)`]*|$|[;&|)`])"
_CMAKE = textre.compile(_CMD + r"(?:\S*/)?cmake3?" + _END, re.M | re.I)
_MAKE = textre.compile(_CMD + r"(?:\S*/)?g?make" + _END, re.M | re.I)
#: sources a RUN fetches: what it builds next is someone else's project
_FETCH = textre.compile(
    r"\b(?:git[ \t]+clone|svn[ \t]+(?:co|checkout)|hg[ \t]+clone|wget|curl|aria2c"
    r"|pip3?[ \t]+download)\b|\btar[ \t]+[^\n;&|]*?x|\bunzip\b"
)
#: a CMake file's CUDA lookup: the build a configure on NVIDIA's image takes
_CMAKE_CUDA = textre.compile(
    r"(?im)^[ \t]*(?:find_package[ \t]*\([ \t]*(?:CUDAToolkit|CUDA)\b|enable_language[ \t]*\("
    r"[ \t]*CUDA\b|check_language[ \t]*\([ \t]*CUDA\b|project[ \t]*\([^)]*\bCUDA\b)"
)
#: a HIP build of the project's own (CMake's HIP language, hip's package, FindHIP's commands)
_CMAKE_HIP = textre.compile(
    r"(?im)^[ \t]*(?:enable_language[ \t]*\([ \t]*HIP\b|project[ \t]*\([^)]*\bHIP\b"
    r"|find_package[ \t]*\([ \t]*hip\b|hip_add_(?:library|executable)[ \t]*\()"
)
_NVCC = textre.compile(r"\bnvcc\b")
_VERSION = textre.compile(r"(?i)(?:cuda|cu)[-_.]?(\d+(?:\.\d+)*)")


def _code(text: str) -> str:
    """Shell text without comment lines, continuations joined."""
    return no_comments(text).replace("\\\r\n", " ").replace("\\\n", " ")


def _cuda_cmake(ctx: PortContext) -> tuple[str, str] | None:
    """(file, lookup) of the project's CMake CUDA lookup: the root file's first, else the
    first file's (vendored and legacy folders are not walked or not read)."""
    got = ctx.cache.get("cmake-cuda-lookup")
    if got is None:
        got = ()
        for rel in sorted(ctx.files_of("cmake"), key=lambda r: (r.count("/"), r)):
            if unrun(rel):
                continue
            m = _CMAKE_CUDA.search(ctx.read(rel) or "")
            if m is not None:
                got = (rel, " ".join(m.group(0).split()) + "...)")
                break
        ctx.cache["cmake-cuda-lookup"] = got
    return got if got else None  # type: ignore[return-value]


def _in_run(ctx: PortContext, path: str, code: str) -> str | None:
    """What in one shell text builds the project's CUDA code (see :func:`project_build`)."""
    if _FETCH.search(code):
        return None  # it fetches sources and builds them: not the project's build
    for m in _CMAKE.finditer(code):
        args = (m.group("args") or "").split()
        if args and args[0] in ("-E", "-P", "--version", "--help", "--install"):
            continue
        lookup = _cuda_cmake(ctx)
        if lookup is not None:
            cmd = textre.sub(r"^(?:RUN\s+(?:--\S+\s+)*)?", "", " ".join(m.group(0).split()))
            cmd = cmd.lstrip("&|;(`$ ")
            hip = hip_build(ctx)
            return (
                f"`{cmd[:90]}` configures the project's CMake build, whose {lookup[0]} looks "
                f"up CUDA ({lookup[1]}): on the ROCm image it finds no CUDA and builds the "
                "CPU path (or stops)" + (f"; {hip} is not what this RUN configures" if hip else "")
            )
    for m in _MAKE.finditer(code):
        args = (m.group("args") or "").split()
        folder = str(PurePosixPath(path).parent)
        if "-C" in args[:-1]:
            folder = args[args.index("-C") + 1].lstrip("./") or "."
        for name in ("Makefile", "makefile", "GNUmakefile"):
            for base in dict.fromkeys((folder, ".")):
                rel = name if base in (".", "") else f"{base}/{name}"
                key = f"make-nvcc:{rel}"
                if key not in ctx.cache:
                    text = ctx.read(rel)
                    ctx.cache[key] = text is not None and bool(_NVCC.search(no_comments(text)))
                if ctx.cache[key]:
                    return (
                        f"`make` builds {rel}, which compiles with nvcc: the ROCm image has no nvcc"
                    )
    return None


def project_build(ctx: PortContext, path: str, chunk: str, copied: dict[str, str]) -> str | None:
    """What in a RUN of ``path`` configures or builds the project's own CUDA build (a CMake
    configure of CMake files that look up CUDA, ``make`` of a Makefile that runs nvcc), also
    inside a project script the RUN runs (read, never run); None when nothing does."""
    code = _code(chunk)
    got = _in_run(ctx, path, code)
    if got is not None:
        return got
    here = PurePosixPath(path).parent
    for m in SCRIPT.finditer(code):
        given = m.group(1)
        rel = given[2:] if given.startswith("./") else given
        for cand in (copied.get(PurePosixPath(given).name), str(here / rel), rel):
            text = ctx.read(cand) if cand and not cand.startswith("/") else None
            if text is None:
                continue
            key = f"docker-gpu-script:{path}\0{cand}"  # each script read once, however
            if key not in ctx.cache:  # many RUNs name it (thirty-sixth re-run F8)
                ctx.cache[key] = _in_run(ctx, path, _code(text))
            inner = ctx.cache[key]
            if isinstance(inner, str):
                return f"{cand}, which the RUN runs: {inner}"
            break
    return None


def hip_build(ctx: PortContext) -> str | None:
    """The project's HIP build, if it has one: the opt-in one ``port`` writes safely in this
    run (the CMake family runs first), or its own (CMake's HIP language, hip's package)."""
    safe = ctx.cache.get("cmake-hip-safe")
    if isinstance(safe, set) and safe:
        return f"the HIP build gpuport writes for {sorted(safe)[0]} (-DGPUPORT_HIP=ON)"
    for rel in ctx.files_of("cmake"):
        if not unrun(rel) and _CMAKE_HIP.search(ctx.read(rel) or ""):
            return f"the project's HIP build ({rel})"
    return None


def _body(path: str, target: str, text: str) -> str:
    """A copy's text with its own names (the header's) taken out."""
    return text.replace(PurePosixPath(target).name, "\0T").replace(PurePosixPath(path).name, "\0S")


def _version(path: str) -> tuple[int, ...]:
    m = _VERSION.search(PurePosixPath(path).name)
    return tuple(int(x) for x in m.group(1).split(".")) if m else ()


def twins(ctx: PortContext, copies: dict[str, Proposal]) -> set[str]:
    """The Dockerfiles (keys of ``copies``: Dockerfile -> its ``dockerfile-rocm`` proposal)
    whose copy is, byte for byte, another's in the same folder (CUDA-version variants of one
    image become one ROCm image): the newest CUDA version's copy is kept and says which files
    it stands for; the others are declined with the reason and returned."""
    groups: dict[tuple[str, str], list[str]] = {}
    for path, prop in copies.items():
        if len(prop.creates) != 1:
            continue
        target, text = next(iter(prop.creates.items()))
        key = (str(PurePosixPath(path).parent), _body(path, target, text))
        groups.setdefault(key, []).append(path)
    dropped: set[str] = set()
    for paths in groups.values():
        if len(paths) < 2:
            continue
        keep = max(paths, key=lambda p: (_version(p), p))
        target = next(iter(copies[keep].creates))
        others = [p for p in sorted(paths) if p != keep]
        for p in others:
            ctx.decline(
                copies[p].findings,
                f"the ROCm copy of {p} would be {target} byte for byte (the CUDA images differ "
                "only in what ROCm replaces): one ROCm image, written once",
            )
            dropped.add(p)
        text = copies[keep].creates[target]
        lines = text.splitlines(True)
        for i, ln in enumerate(lines):
            if "ROCm variant of" in ln:
                eol = "\r\n" if ln.endswith("\r\n") else "\n"
                names = ", ".join(PurePosixPath(p).name for p in others)
                lines.insert(i + 1, f"#   (also the ROCm variant of {names}: the same image){eol}")
                break
        copies[keep].creates[target] = "".join(lines)
    return dropped
