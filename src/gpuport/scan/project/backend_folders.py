"""A build that includes one backend folder's build file, chosen by a variable.

Mini-apps and libraries with one programming model per configure keep a build file per backend
folder and load the one asked for: TeaLeaf's ``load_model(${MODEL})`` sets
``${CMAKE_CURRENT_SOURCE_DIR}/src/${MODEL_LOWER}/model.cmake`` and includes it, so
``cmake -DMODEL=hip`` reads ``src/hip/model.cmake`` and never ``src/cuda/model.cmake``
(issue 24, fifteenth sample). The same shape is ``add_subdirectory(backends/${BACKEND})`` and
a Makefile's ``include $(MODEL)/make.inc``.

When a build file of the project names such a path (a variable in place of the backend folder,
then the file name) and the folders beside each other hold the same file for CUDA (``cuda/``)
and for HIP (``hip/``, ``rocm/``), the HIP folder's file is a ROCm build of the project (a
route: the project builds for ROCm by choosing that backend) and the CUDA folder's file is not
read by it. Both files must exist; nothing is evaluated, and a folder with only a CUDA file
(no HIP one to choose) stays as it is.

So is a folder whose only ``add_subdirectory`` is commented out
(:func:`cmake_calls.commented_out_folders`: cudpp's ``#add_subdirectory(apps/satGL)``).

A Windows port is such a folder too (``win/``, ``windows/``, ``msvc/``, ``vs2022/``...): when
the project builds outside those folders as well, the port's build files and sources are not
read by a ROCm build, which runs on Linux (gpu-burn's ``win/CMakeLists.txt``, ``build.bat`` and
its own ``win/gpu_burn-drv.cpp`` beside the top-level Makefile; issue 24, sixteenth sample).

Text only: nothing is run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from gpuport import textre
from gpuport.scan.project.cmake_calls import commented_out_folders

__all__ = ["backend_folder_builds"]

_CUDA = frozenset({"cuda"})
_HIP = frozenset({"hip", "rocm"})
_WINDOWS_DIR = textre.compile(r"(?i)^(?:win|windows|win32|win64|msvc|vs20\d\d|visualstudio)$")
#: a variable where the backend folder goes: CMake ``${X}``, Make ``$(X)`` / ``${X}``
_VAR = r"\$[{(]\w+[})]"


def _split(rel: str) -> tuple[str, str, str] | None:
    """``src/cuda/model.cmake`` -> ("src", "cuda", "model.cmake"), or None."""
    parts = rel.split("/")
    if len(parts) < 2:
        return None
    return "/".join(parts[:-2]), parts[-2].lower(), parts[-1]


_NAMED_PATH = textre.compile(
    r"(?:^|[\s(\"'/=}])(?:(?P<last>[\w.+-]+)/)?" + _VAR + r"/(?P<name>[\w.+-]+)(?![\w.])",
    re.M,
)
_ADDED_VAR = textre.compile(
    r"(?i)add_subdirectory\s*\(\s*\"?(?:(?P<last>[\w.+-]+)/)?" + _VAR + r"\"?[\s)]"
)


def _chosen_index(texts: Mapping[str, str]) -> dict[tuple[str, str], str]:
    """(last folder of the parent or "", file name), both lower case -> the ``file:line`` of
    the first build file (in path order) that names ``<parent>/<variable>/<name>``; and
    ("", "add_subdirectory") / (last, "add_subdirectory") for ``add_subdirectory(<parent>/
    <variable>)``. One pass over each text (a pattern and a pass per folder pair was pairs x
    texts: 5,000 pairs, > 100 s; thirty-third re-run F3)."""
    out: dict[tuple[str, str], str] = {}
    for rel, text in sorted(texts.items()):
        if "$" not in text:
            continue
        line_of = textre.line_finder(text)
        pos = 0
        while (m := _NAMED_PATH.search(text, pos)) is not None:
            where = f"{rel}:{line_of(m.start())}"
            name = m.group("name").lower()
            out.setdefault(("", name), where)
            if m.group("last"):
                out.setdefault((m.group("last").lower(), name), where)
            # the name may be the parent folder of the next variable (`${ROOT}/src/${M}/x`)
            pos = m.start("name") - 1
        for m in _ADDED_VAR.finditer(text):
            where = f"{rel}:{line_of(m.start())}"
            out.setdefault(("", "add_subdirectory"), where)
            if m.group("last"):
                out.setdefault((m.group("last").lower(), "add_subdirectory"), where)
    return out


def _chosen(parent: str, name: str, index: Mapping[tuple[str, str], str]) -> str | None:
    """The ``file:line`` of a build file that names ``parent/<variable>/name`` (or, for a
    ``CMakeLists.txt``, adds ``parent/<variable>`` as a sub-folder), else None."""
    last = parent.rsplit("/", 1)[-1].lower()
    found = index.get((last, name.lower()))
    if found is None and name.lower() == "cmakelists.txt":
        found = index.get((last, "add_subdirectory"))
    return found


def _windows_port(files: Mapping[str, str], native: Iterable[str]) -> dict[str, str]:
    """Build files and sources of a Windows port folder -> why, when the project has a build
    file outside such folders."""

    def folder(rel: str) -> str | None:
        return next((p for p in rel.split("/")[:-1] if _WINDOWS_DIR.match(p)), None)

    ported = [rel for rel in files if folder(rel) is not None]
    if not ported or len(ported) == len(files):
        return {}
    out: dict[str, str] = {}
    for rel in [*ported, *native]:
        name = folder(rel)
        if name is not None:
            out[rel] = f"{rel}: a Windows port's file ({name}/: ROCm builds on Linux)"
    return out


def backend_folder_builds(
    files: Mapping[str, str], native: Iterable[str] = ()
) -> tuple[list[str], dict[str, str]]:
    """Of the project's build files (relative path -> text): the HIP backend folders' files a
    variable chooses (ROCm builds), and the files no ROCm build reads -> why: the CUDA
    folders' build files beside them, a Windows port's build files and ``native`` sources."""
    native = list(native)
    groups: dict[tuple[str, str], dict[str, list[str]]] = {}
    for rel in files:
        got = _split(rel)
        if got is None or got[1] not in _CUDA | _HIP:
            continue
        parent, folder, name = got
        side = "cuda" if folder in _CUDA else "hip"
        groups.setdefault((parent, name), {}).setdefault(side, []).append(rel)
    hip_builds: list[str] = []
    not_read: dict[str, str] = {}
    paired = any("cuda" in sides and "hip" in sides for sides in groups.values())
    index = _chosen_index(files) if paired else {}
    for (parent, name), sides in sorted(groups.items()):
        if "cuda" not in sides or "hip" not in sides:
            continue
        where = _chosen(parent, name, index)
        if where is None:
            continue
        hip = sorted(sides["hip"])
        hip_builds += hip
        for rel in sides["cuda"]:
            not_read[rel] = (
                f"the CUDA backend's build file: {where} includes one backend folder's "
                f"{name}, chosen by a variable, and {hip[0]} is the HIP one"
            )
    for rel, why in _windows_port(files, native).items():
        not_read.setdefault(rel, why)
    off = commented_out_folders(files)
    for rel in [*files, *native] if off else ():
        parts = rel.split("/")  # the folders above it, outermost first (not every folder per file)
        top = next((f for d in range(1, len(parts)) if (f := "/".join(parts[:d])) in off), None)
        if top is not None:
            not_read.setdefault(rel, f"{rel}: not configured by the build ({off[top]})")
    return hip_builds, not_read
