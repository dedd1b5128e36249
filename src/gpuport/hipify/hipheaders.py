"""What the installed HIP really has: its version and the names its headers define (issue 18,
item 2).

The bundled API map says in which HIP version each name appeared, from HIPIFY's tables. Those
tables are sometimes later than the headers (HIP 5.2's ``hip/library_types.h`` already defines
``hipDataType`` and ``HIP_R_32F``; the table says 5.7). When a HIP install is on this machine and
the translation is for *its* version, the headers decide instead:

* a name the map would emit and the headers contain is translated, whatever the table says;
* a host HIP name (runtime, driver, complex, hipRTC) the table says exists but the headers
  lack is left and reported ("not in the HIP headers at DIR"; device functions may come from
  clang's own headers, so they are not judged);
* a mapped ``#include`` whose HIP header is not in the install is reported (``hip/hip_bf16.h``
  on HIP 5.2; a library header such as ``hipblas/hipblas.h`` that is not installed).

The install: the ``include`` folder next to ``hipcc``'s ``bin`` (``/usr/include`` for Debian's
``/usr/bin/hipcc``, ``/opt/rocm/include``), else ``$ROCM_PATH/include`` or
``/opt/rocm/include``; its version from ``hip/hip_version.h`` (no process started). The set of
names is cached per include folder and header mtimes in the user cache folder (platformdirs).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gpuport import fileio, subproc, textre, usercache
from gpuport.models import GpuportError

__all__ = ["HipHeaders", "find_include", "header_version", "load_headers", "local_headers"]

_VERSION = textre.compile(r"#\s*define\s+HIP_VERSION_(MAJOR|MINOR)\s+(\d+)")
_COMMENT = textre.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_IDENT = textre.compile(r"[A-Za-z_]\w*")
_LIBRARY_DIRS = textre.compile(r"^(?:hip|roc|rccl|miopen)\w*$", re.I)
_MAX_FILE = 4 * 1024 * 1024
CACHE_VERSION = 1


@dataclass(frozen=True)
class HipHeaders:
    """An installed HIP: its include folder, ``major.minor`` and the identifiers its headers
    mention (comments excluded)."""

    include: Path
    version: str
    names: frozenset[str]

    def has_header(self, name: str) -> bool:
        """Whether ``#include <name>`` resolves in this install."""
        return (self.include / name).is_file()


def find_include(hipcc: str | None = None, avoid: Sequence[Path] = ()) -> Path | None:
    """The include folder of the HIP install (see the module docstring), or None; never one
    inside ``avoid`` (the project: its own ``hipcc`` or ``ROCM_PATH`` would choose the headers
    the translation is checked against)."""
    candidates: list[Path] = []
    exe = hipcc or subproc.which("hipcc", avoid=avoid)  # a sanitized PATH: no relative entry
    if exe:
        candidates.append(Path(os.path.realpath(exe)).parent.parent / "include")
    rocm = subproc.safe_env(avoid=avoid).get("ROCM_PATH")
    if rocm:
        candidates.append(Path(rocm) / "include")
    candidates.append(Path("/opt/rocm/include"))
    for c in candidates:
        if (c / "hip" / "hip_version.h").is_file():
            return c
    return None


def header_version(include: Path) -> str | None:
    """``major.minor`` from ``include/hip/hip_version.h``."""
    text = fileio.read_text_or_none(include / "hip" / "hip_version.h", limit=_MAX_FILE)
    if text is None:
        return None
    found = {m.group(1): m.group(2) for m in _VERSION.finditer(text[:65536])}
    if "MAJOR" in found and "MINOR" in found:
        return f"{found['MAJOR']}.{found['MINOR']}"
    return None


def _header_files(include: Path) -> list[Path]:
    files: list[Path] = []
    for entry in sorted(include.iterdir()) if include.is_dir() else []:
        if not _LIBRARY_DIRS.match(entry.name.split(".")[0]):
            continue
        if entry.is_dir():
            files += sorted(p for p in entry.rglob("*") if p.suffix in (".h", ".hpp", ".cuh"))
        elif entry.suffix in (".h", ".hpp"):
            files.append(entry)
    return [f for f in files if f.is_file()]


def _cache_file(include: Path, files: list[Path]) -> Path | None:
    folder = usercache.cache_dir()
    if folder is None:
        return None
    h = hashlib.sha256(str(include.resolve()).encode())
    for f in files:
        st = f.stat()
        h.update(f"{f}\0{st.st_mtime_ns}\0{st.st_size}\n".encode())
    return folder / f"hip-names-{h.hexdigest()[:20]}.json"


def _scan(files: list[Path]) -> set[str]:
    names: set[str] = set()
    for f in files:
        text = fileio.read_text_or_none(f, limit=_MAX_FILE)
        if text is None:
            continue
        names.update(_IDENT.findall(_COMMENT.sub(" ", text)))
    return names


def load_headers(include: Path) -> HipHeaders | None:
    """The install at ``include`` with its names (cached); None without a readable version."""
    version = header_version(include)
    if version is None:
        return None
    files = _header_files(include)
    cache = _cache_file(include, files)
    if cache is not None:
        # gpuport's own cache file, size-bounded: the standard parser (the bounded one cost
        # ~0.01 s of every hipify start); anything unexpected in it means a fresh scan
        try:
            data = json.loads(fileio.read_text_or_none(cache, limit=fileio.LIMIT_RESULT) or "")
            if data.get("v") == CACHE_VERSION and isinstance(data.get("names"), list):
                return HipHeaders(include, version, frozenset(map(str, data["names"])))
        except (ValueError, RecursionError, AttributeError, TypeError):
            pass
    names = _scan(files)
    if cache is not None:
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            fileio.write_atomic(cache, json.dumps({"v": CACHE_VERSION, "names": sorted(names)}))
        except (OSError, GpuportError):
            pass
    return HipHeaders(include, version, frozenset(names))


def local_headers(hip_version: str, hipcc: str | None = None) -> HipHeaders | None:
    """The installed HIP when it is ``hip_version`` (same major.minor), else None."""
    include = find_include(hipcc)
    if include is None:
        return None
    have = header_version(include)
    want = ".".join(hip_version.split(".")[:2])
    if have is None or have != want:
        return None
    return load_headers(include)
