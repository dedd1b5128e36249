"""Copying a file's bytes with its holes kept (``SEEK_DATA``/``SEEK_HOLE``), for
:func:`gpuport.fileio.copy_atomic`: a sparse file of 100 GB with a few bytes of data must not be
written out as 100 GB."""

from __future__ import annotations

import errno
import os

__all__ = ["copy_sparse"]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def copy_sparse(rfd: int, wfd: int, size: int) -> None:
    """Copy ``size`` bytes keeping holes as holes (``SEEK_DATA``/``SEEK_HOLE``): a sparse file
    of 100 GB with a few bytes of data must not be written out as 100 GB."""
    seek_data, seek_hole = getattr(os, "SEEK_DATA", None), getattr(os, "SEEK_HOLE", None)
    if seek_data is None or seek_hole is None:
        while chunk := os.read(rfd, 1 << 20):
            _write_all(wfd, chunk)
        return
    offset = 0
    while offset < size:
        try:
            start = os.lseek(rfd, offset, seek_data)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # only a hole is left
                break
            raise
        end = min(os.lseek(rfd, start, seek_hole), size)
        os.lseek(rfd, start, os.SEEK_SET)
        os.lseek(wfd, start, os.SEEK_SET)
        left = end - start
        while left > 0:
            chunk = os.read(rfd, min(left, 1 << 20))
            if not chunk:
                break
            _write_all(wfd, chunk)
            left -= len(chunk)
        offset = end
    os.ftruncate(wfd, size)
