"""Atomic file writes, shared by every command that writes a file the user asked for.

A reader (or a crash) sees the old file or the whole new one, never half of it:
the content goes to a temporary file in the same folder, which then replaces the
target. A symlink is written through (its target is replaced); an existing file
keeps its permissions, a new one gets the usual ones (0666 less the umask).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from gpuport.models import GpuportError


def check_writable(path: Path, what: str = "") -> None:
    """Refuse a destination that cannot be written, before any long work is done for it."""
    target = path.resolve() if path.is_symlink() else path
    parent = target.parent if str(target.parent) else Path()
    label = f"{what} {path}" if what else str(path)
    if target.is_dir():
        raise GpuportError(f"cannot write {label}: it is a folder; give a file name")
    if not parent.is_dir():
        raise GpuportError(f"cannot write {label}: folder {parent} does not exist")


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path to write; on success it replaces ``path``, on error it is removed."""
    if path.is_symlink():
        path = path.resolve()
    parent = path.parent if str(path.parent) else Path()
    if not parent.is_dir():
        raise GpuportError(f"cannot write {path}: folder {parent} does not exist")
    if path.is_dir():
        raise GpuportError(f"cannot write {path}: it is a folder")
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    except OSError as exc:
        raise GpuportError(f"cannot write {path}: {exc.strerror}") from None
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        tmp.chmod(_mode_for(path))
        tmp.replace(path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError):
            raise GpuportError(f"cannot write {path}: {exc.strerror or exc}") from None
        raise


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_atomic_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def _mode_for(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
