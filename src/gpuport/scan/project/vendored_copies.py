"""Folders that are a whole copy of another project (issue 24, twenty-first sample).

vattention keeps all of CUTLASS in ``pod_attn/csrc/cutlass`` (its setup.py would fetch it as a
submodule, but the repository holds a plain copy): CUTLASS's headers, tests, tools and Python
package gave 542 of the scan's 720 findings, while the project compiles only its own sources
against a few of those headers. A folder named ``third_party`` or listed in ``.gitmodules`` is
already someone else's code; this recognises one by what it is:

* its ``CMakeLists.txt`` declares (first ``project(NAME``) or its ``pyproject.toml`` names
  (``name = "..."``) a library of ``knowledge/vendored_projects.toml``, and
* it holds one of the library's layout files (its main header) with content, and
* it carries a licence file of its own (``LICENSE*``, ``LICENCE*``, ``COPYING*``) that names
  the library's copyright holder (or its licence's title, ``licence`` in the knowledge), and
* its own build files compile no source inside it (the libraries' top build files name none).

Thirty-ninth re-run F7: ``project(pybind11)``, an empty header and an empty LICENSE in the
project's kernel folder (which its own ``add_library(k k.cu)`` compiles) turned BLOCKED into
READY. In doubt, a folder is the project's own code.

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


@lru_cache(maxsize=4096)
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


@lru_cache(maxsize=4096)
def _cached_build_files(at: str, root: str, stamp: int) -> tuple[str, ...]:
    """The build files in folder ``at``, checked once per version of the folder's entries
    (39th re-run F22: every candidate copy re-checked 6 names in every folder above it, a
    realpath each: copies x depth^2)."""
    folder = Path(at)
    return tuple(str(folder / name) for name in _BUILD_FILES if _is_file(folder / name, Path(root)))


def _build_dirs(at: Path, root: Path) -> list[frozenset[str]]:
    try:
        stamp = at.stat().st_mtime_ns
    except OSError:
        return []
    files = _cached_build_files(str(at), str(root), stamp)
    return [_source_dirs(Path(f), root) for f in files]


def _named_by_builds(folder: Path, root: Path) -> bool:
    """Whether a build file of the project around ``folder`` (in a folder from its parent up
    to ``root``) names a source or a glob inside it (``glob.glob("csrc/*.cu")``,
    ``add_library(k csrc/k.cu)``): then it is the project's own code, whatever it declares
    (thirty-sixth re-run F7: two small files made a project's kernel folder a "copy")."""
    at = folder.parent
    while True:
        rel = folder.relative_to(at).as_posix()
        for dirs in _build_dirs(at, root):
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


#: a source file or a glob of sources a build file names (`add_library(k k.cu)`,
#: `file(GLOB S src/*.cu)`, `sources=["k.cu"]`)
_MOST_OWN_NAMES = 256
_OWN_SOURCE = textre.compile(r"[\w./*+-]*\.(?:cu|cuh|cpp|cc|cxx|c|hip)\b")


def _builds_own_sources(folder: Path, root: Path) -> bool:
    """Whether the folder's own build files name a source inside it (39th re-run F7:
    ``project(pybind11)`` + ``add_library(k k.cu)`` made the project's kernels a "copy"). The
    libraries' own top build files name no source (CUTLASS's adds subdirectories, globs
    headers only), so a copy that compiles one of its own is the project's code."""
    names: set[str] = set()
    for path in _build_dirs_files(folder, root):
        for m in _OWN_SOURCE.finditer(_head(path, root, _BUILD_HEAD)):
            rel = m.group(0).lstrip("./")
            if rel and ".." not in rel.split("/"):
                names.add(rel)
            if len(names) > _MOST_OWN_NAMES:
                return True  # a build naming that many sources is no library's top file
    listings: dict[str, list[str]] = {}
    for rel in sorted(names):
        if "*" not in rel:
            if _is_file(folder / rel, root):
                return True
            continue
        head, _, pattern = rel.rpartition("/")
        if "*" in head:
            return True  # a glob of folders: in doubt, its own code
        if head not in listings:
            try:
                with os.scandir(folder / head if head else folder) as entries:
                    listings[head] = [e.name for e in entries][: _MOST_OWN_NAMES * 16]
            except OSError:
                listings[head] = []
        matcher = textre.glob(pattern)
        if any(matcher.match(name) for name in listings[head]):
            return True
    return False


def _build_dirs_files(folder: Path, root: Path) -> list[Path]:
    try:
        stamp = folder.stat().st_mtime_ns
    except OSError:
        return []
    return [Path(f) for f in _cached_build_files(str(folder), str(root), stamp)]


def _has_content(path: Path, root: Path) -> bool:
    """A regular file inside ``root`` holding more than blanks (an empty header named like
    the library's main one is no copy of it: 39th re-run F7)."""
    return _is_file(path, root) and bool(_head(path, root, 4096).strip())


def _licensed(folder: Path, root: Path, words: list[str]) -> bool:
    """Whether a licence file of the folder names the library (its copyright holder or its
    licence's title, ``licence`` in the knowledge): an empty LICENSE is anyone's."""
    try:
        with os.scandir(folder) as entries:
            names = [
                e.name
                for e in entries
                if _LICENCE.fullmatch(e.name) and e.is_file(follow_symlinks=False)
            ]
    except OSError:
        return False
    wanted = [w.lower() for w in words]
    for name in sorted(names)[:16]:
        text = " ".join(_head(folder / name, root).lower().split())
        if any(w in text for w in wanted):
            return True
    return False


def copy_of(folder: Path, root: Path) -> str | None:
    """The library ``folder`` is a whole copy of, or None (``folder`` below ``root``).

    In doubt, the project's own code: the copy must look like the library (its main header
    with content, a licence file naming it), and neither its own build files nor the
    project's around it may compile sources inside it."""
    known = declared_names()
    found = None
    for name, pattern in (("CMakeLists.txt", _CMAKE_PROJECT), ("pyproject.toml", _PYPROJECT_NAME)):
        path = folder / name
        m = pattern.search(_head(path, root)) if _is_file(path) else None
        found = known.get(m.group(1).lower()) if m else None
        if found is not None:
            break
    if found is None or not any(_has_content(folder / rel, root) for rel in found.layout):
        return None
    if not _licensed(folder, root, found.licence):
        return None
    if _builds_own_sources(folder, root) or _named_by_builds(folder, root):
        return None
    return found.name
