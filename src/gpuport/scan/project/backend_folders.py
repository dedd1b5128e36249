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

Text only: nothing is run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from gpuport import textre

__all__ = ["backend_folder_builds"]

_CUDA = frozenset({"cuda"})
_HIP = frozenset({"hip", "rocm"})
#: a variable where the backend folder goes: CMake ``${X}``, Make ``$(X)`` / ``${X}``
_VAR = r"\$[{(]\w+[})]"


def _split(rel: str) -> tuple[str, str, str] | None:
    """``src/cuda/model.cmake`` -> ("src", "cuda", "model.cmake"), or None."""
    parts = rel.split("/")
    if len(parts) < 2:
        return None
    return "/".join(parts[:-2]), parts[-2].lower(), parts[-1]


def _chosen(parent: str, name: str, texts: Mapping[str, str]) -> str | None:
    """The ``file:line`` of a build file that names ``parent/<variable>/name`` (or, for a
    ``CMakeLists.txt``, adds ``parent/<variable>`` as a sub-folder), else None."""
    last = parent.rsplit("/", 1)[-1]
    lead = rf"(?:^|[\s(\"'/=}})]){re.escape(last)}/" if last else r"(?:^|[\s(\"'/=}})])"
    forms = [lead + _VAR + "/" + re.escape(name) + r"(?![\w.])"]
    if name.lower() == "cmakelists.txt":
        forms.append(r"add_subdirectory\s*\(\s*\"?" + (lead if last else "") + _VAR + r"\"?[\s)]")
    pattern = textre.compile("|".join(f"(?:{f})" for f in forms), re.I | re.M)
    for rel, text in sorted(texts.items()):
        if name not in text and "add_subdirectory" not in text.lower():
            continue
        m = pattern.search(text)
        if m is not None:
            return f"{rel}:{textre.line_finder(text)(m.start())}"
    return None


def backend_folder_builds(files: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """Of the project's build files (relative path -> text): the HIP backend folders' files a
    variable chooses (ROCm builds), and the CUDA folders' files beside them -> why the ROCm
    build does not read them."""
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
    for (parent, name), sides in sorted(groups.items()):
        if "cuda" not in sides or "hip" not in sides:
            continue
        where = _chosen(parent, name, files)
        if where is None:
            continue
        hip = sorted(sides["hip"])
        hip_builds += hip
        for rel in sides["cuda"]:
            not_read[rel] = (
                f"the CUDA backend's build file: {where} includes one backend folder's "
                f"{name}, chosen by a variable, and {hip[0]} is the HIP one"
            )
    return hip_builds, not_read
