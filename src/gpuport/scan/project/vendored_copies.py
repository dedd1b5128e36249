"""Folders that are a whole copy of another project (issue 24, twenty-first sample).

vattention keeps all of CUTLASS in ``pod_attn/csrc/cutlass`` (its setup.py would fetch it as a
submodule, but the repository holds a plain copy): CUTLASS's headers, tests, tools and Python
package gave 542 of the scan's 720 findings, while the project compiles only its own sources
against a few of those headers. A folder named ``third_party`` or listed in ``.gitmodules`` is
already someone else's code; this recognises one by what it is:

* its ``CMakeLists.txt`` declares (first ``project(NAME``) or its ``pyproject.toml`` names
  (``name = "..."``) a library of ``knowledge/vendored_projects.toml``, and
* it carries a licence file of its own (``LICENSE*``, ``LICENCE*``, ``COPYING*``).

Such a folder is skipped and listed like ``third_party/`` (``--include-vendored`` reads it).
The project's own files that use the library still say so (GP315 on each file that includes
CUTLASS), and a source the project's build names inside the copy keeps ``ready`` from being
said (the engine's check of sources it could not read). The scanned folder itself is never a
copy. Read through the file layer, the first 64 KB of each build file, nothing run.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from gpuport import fileio, textre
from gpuport.knowledge.vendored_projects import declared_names

__all__ = ["copy_of"]

_BUILD_FILES = ("setup.py", "CMakeLists.txt", "Makefile", "makefile", "GNUmakefile", "meson.build")
_BUILD_HEAD = 1 << 20
_CMAKE_PROJECT = textre.compile(r"^[ \t]*project[ \t]*\([ \t\r\n]*([A-Za-z0-9_.+-]+)", re.M | re.I)
#: `name = "..."` of the `[project]` table (the first line of the file's text after it)
_PYPROJECT_NAME = textre.compile(
    r"^\[project\][ \t]*\r?\n(?:[^\[\n][^\n]*\n|\n)*?"
    r'[ \t]*name[ \t]*=[ \t]*["\']([A-Za-z0-9_.+-]+)["\']',
    re.M,
)
_LICENCE = textre.compile(r"(?:licen[cs]e|copying)(?:[-_.][\w.-]*)?", re.I)


def _head(path: Path, root: Path, size: int = 64 * 1024) -> str:
    try:
        with fileio.open_regular(path, root=root) as f:
            data = f.read(size)
    except (fileio.ReadRefused, OSError):
        return ""
    return data.decode("utf-8", "replace")


def _is_file(path: Path, root: Path | None = None) -> bool:
    """A regular file (not a link) at ``path``, reached without leaving ``root`` (a folder
    link out of the project would tell whether an outside file exists; 37th re-run F14)."""
    try:  # a path past PATH_MAX, a file gone: not there
        if root is not None and fileio.outside_root(path, root) is not None:
            return False
        return path.is_file() and not path.is_symlink()
    except OSError:
        return False


_QUOTED = textre.compile(r"[\"']([\w.+-]+)[\"']")
_SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".hip")
_SOURCE_REF = textre.compile(r"([^\s\"'()]+)/[^\s\"')/]*(?:\*|\.(?:cu|cuh|cpp|cc|cxx|c|hip)\b)")


@lru_cache(maxsize=256)
def _cached_dirs(path: str, root: str, stamp: tuple[int, int]) -> frozenset[str]:
    """The folders (every run of whole path parts) a build file names a source or a glob
    in, read once per version of the file (37th re-run F12: re-read and searched for each
    candidate folder under it)."""
    out: set[str] = set()
    text = _head(Path(path), Path(root), _BUILD_HEAD)
    # quoted parts, as `os.path.join("kern", "k.cu")` names them (37th re-run F1): kept
    # with a leading "'" so they cannot meet a folder path
    out.update("'" + q for q in _QUOTED.findall(text) if "/" not in q)
    for m in _SOURCE_REF.finditer(text):
        parts = [p for p in m.group(1).split("/") if p]
        for i in range(len(parts)):
            for j in range(i + 1, min(len(parts), i + 8) + 1):
                out.add("/".join(parts[i:j]))
    return frozenset(out)


def _source_dirs(path: Path, root: Path) -> frozenset[str]:
    try:
        st = path.stat()
    except OSError:
        return frozenset()
    return _cached_dirs(str(path), str(root), (st.st_mtime_ns, st.st_size))


def _named_by_builds(folder: Path, root: Path) -> bool:
    """Whether a build file of the project around ``folder`` (in a folder from its parent up
    to ``root``) names a source or a glob inside it (``glob.glob("csrc/*.cu")``,
    ``add_library(k csrc/k.cu)``): then it is the project's own code, whatever it declares
    (thirty-sixth re-run F7: two small files made a project's kernel folder a "copy")."""
    at = folder.parent
    while True:
        rel = folder.relative_to(at).as_posix()
        for name in _BUILD_FILES:
            path = at / name
            dirs = _source_dirs(path, root) if _is_file(path, root) else frozenset()
            if rel in dirs:
                return True
            if (
                "'" + folder.name in dirs
                and any(  # the folder and a source of it, quoted
                    q.endswith(_SOURCE_SUFFIXES) and _is_file(folder / q[1:], root) for q in dirs
                )
            ):
                return True
        if at == root or root not in at.parents:
            return False
        at = at.parent


def copy_of(folder: Path, root: Path) -> str | None:
    """The library ``folder`` is a whole copy of, or None (``folder`` below ``root``)."""
    known = declared_names()
    found = None
    for name, pattern in (("CMakeLists.txt", _CMAKE_PROJECT), ("pyproject.toml", _PYPROJECT_NAME)):
        path = folder / name
        m = pattern.search(_head(path, root)) if _is_file(path) else None
        found = known.get(m.group(1).lower()) if m else None
        if found is not None:
            break
    if found is None or not any(_is_file(folder / rel, root) for rel in found.layout):
        return None
    try:
        with os.scandir(folder) as entries:
            licensed = any(
                _LICENCE.fullmatch(e.name) and e.is_file(follow_symlinks=False) for e in entries
            )
    except OSError:
        return None
    if not licensed or _named_by_builds(folder, root):
        return None
    return found.name
