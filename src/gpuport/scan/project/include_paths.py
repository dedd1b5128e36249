"""Which project file each ``#include`` of a C/C++ file denotes (issue 24).

An include is resolved by path before it is matched by name, as the compiler does: relative
to the including file's folder first (``#include "copy.h"`` in ``templates/hip/gemm.h`` is
``templates/hip/copy.h``, not ``templates/cuda/copy.h``), then against the project's include
folders, read as any project file whose path ends with the include's path
(``<proj/x.hpp>`` is ``include/proj/x.hpp``); only an include no path explains falls back to
its file name, meaning the file of that name nearest the includer. Only project files count:
a system or toolkit header resolves to nothing."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping

from gpuport import textre
from gpuport.scan.cxx_ints import nearest

__all__ = ["owners_by_name", "resolve_includes", "resolve_names", "resolve_one"]

_INCLUDE = textre.compile(r'^[ \t]*\#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)


def owners_by_name(files: Iterable[str]) -> dict[str, list[str]]:
    """File name -> the project files of that name."""
    owners: dict[str, list[str]] = {}
    for rel in files:
        owners.setdefault(rel.rsplit("/", 1)[-1], []).append(rel)
    return owners


#: per owners mapping (kept with it) and file name: the files of that name, and those files
#: by every path suffix of theirs (``x.h``, ``common/x.h``, ``a/common/x.h``), built when asked
_TAILS: dict[int, tuple[Mapping[str, list[str]], dict[str, tuple[set[str], dict[str, list[str]]]]]]
_TAILS = {}


def _tails(owners: Mapping[str, list[str]], name: str) -> tuple[set[str], dict[str, list[str]]]:
    got = _TAILS.get(id(owners))
    if got is None or got[0] is not owners:
        while len(_TAILS) >= 16:
            del _TAILS[next(iter(_TAILS))]
        got = _TAILS[id(owners)] = (owners, {})
    known = got[1].get(name)
    if known is None:
        tails: dict[str, list[str]] = {}
        for c in owners.get(name, []):
            parts = c.split("/")
            for k in range(len(parts)):
                tails.setdefault("/".join(parts[k:]), []).append(c)
        known = got[1][name] = (set(owners.get(name, [])), tails)
    return known


def resolve_one(includer: str, written: str, owners: Mapping[str, list[str]]) -> set[str]:
    """The project files ``#include <written>`` in ``includer`` denotes (``owners``: from
    ``owners_by_name``). Each file name's paths are indexed once per ``owners``: a name shared
    by thousands of files was searched through all of them per include."""
    path = written.strip().replace("\\", "/")
    name = path.rsplit("/", 1)[-1]
    cands = owners.get(name, [])
    if not cands:
        return set()
    folder = includer.rsplit("/", 1)[0] if "/" in includer else ""
    here = posixpath.normpath(posixpath.join(folder, path)) if folder else posixpath.normpath(path)
    members, tails = _tails(owners, name)
    if here in members:
        return {here}
    tail = posixpath.normpath(path)
    while tail.startswith("../"):
        tail = tail[3:]
    return nearest(includer, tails.get(tail) or cands)


def resolve_includes(native: Mapping[str, str]) -> dict[str, frozenset[str]]:
    """Each native file (relative path -> text) -> the project files its includes denote."""
    owners = owners_by_name(native)
    out: dict[str, frozenset[str]] = {}
    for rel, text in native.items():
        if "include" not in text:
            continue
        got: set[str] = set()
        for m in _INCLUDE.finditer(text):
            got |= resolve_one(rel, m.group(1), owners)
        if got:
            out[rel] = frozenset(got)
    return out


def resolve_names(
    files: Iterable[str], includes: Mapping[str, frozenset[str]]
) -> dict[str, frozenset[str]]:
    """The same from included file names alone (no texts at hand): of several files so
    named, the nearest the includer."""
    names = list(files)
    owners = owners_by_name(names)
    out: dict[str, frozenset[str]] = {}
    for rel in names:
        got: set[str] = set()
        for name in includes.get(rel, frozenset()):
            got |= nearest(rel, owners.get(name, []))
        if got:
            out[rel] = frozenset(got)
    return out
