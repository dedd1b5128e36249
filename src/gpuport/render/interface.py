"""Output formats and the atomic writer every command shares."""

from __future__ import annotations

import contextlib
import enum
import os
import tempfile
from pathlib import Path

from gpuport.models import GpuportError


class OutputFormat(enum.StrEnum):
    TERMINAL = "terminal"
    JSON = "json"
    SARIF = "sarif"
    MARKDOWN = "markdown"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader sees the old file or the whole new one.

    A symlink is written through (its target is replaced); an existing file keeps
    its permissions, a new one gets the usual ones (0666 less the umask).
    """
    if path.is_symlink():
        path = path.resolve()
    parent = path.parent if str(path.parent) else Path()
    if not parent.is_dir():
        raise GpuportError(f"cannot write {path}: folder {parent} does not exist")
    if path.is_dir():
        raise GpuportError(f"cannot write {path}: it is a folder")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    except OSError as exc:
        raise GpuportError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        Path(tmp).chmod(_mode_for(path))
        Path(tmp).replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            Path(tmp).unlink()
        raise GpuportError(f"cannot write {path}: {exc.strerror}") from None


def _mode_for(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
