"""Reading and writing sources byte-for-byte: bytes that are not UTF-8 survive a translation.

Sources are decoded as UTF-8 with ``surrogateescape``, so a stray latin-1 byte in a comment
becomes a lone surrogate in the text (the translator treats it like any other character) and is
written back as the same byte.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import TextIO

from gpuport.fileio import write_atomic
from gpuport.models import GpuportError
from gpuport.scan.files import Skip, read_text

__all__ = ["encode", "read_source", "write_source", "write_stdout"]

_NOT_UTF8 = "not valid UTF-8"


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def read_source(path: Path) -> str | Skip:
    """The text of ``path`` (same skip rules as the scanner, except that bytes that are not
    UTF-8 are kept as surrogates instead of skipping the file)."""
    got = read_text(path)
    if not isinstance(got, Skip) or not got.reason.startswith(_NOT_UTF8):
        return got
    try:
        data = path.read_bytes()
    except OSError as exc:
        return Skip(path.name, f"cannot read: {exc.strerror or exc}")
    return data.decode("utf-8", "surrogateescape").removeprefix("\ufeff")


def _clean(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def write_source(path: Path, text: str) -> None:
    """Write ``text`` atomically; lone surrogates go back to the bytes they came from."""
    if _clean(text):
        write_atomic(path, text)
        return
    if path.is_symlink():
        path = path.resolve()
    parent = path.parent if str(path.parent) else Path()
    try:
        mode = path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    except OSError as exc:
        raise GpuportError(f"cannot write {path}: {exc.strerror}") from None
    try:
        try:
            data = memoryview(encode(text))
            while data:
                data = data[os.write(fd, data) :]
        finally:
            os.close(fd)
        Path(tmp).chmod(mode)
        Path(tmp).replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            Path(tmp).unlink()
        raise GpuportError(f"cannot write {path}: {exc.strerror}") from None


def write_stdout(stream: TextIO, text: str) -> None:
    """Write ``text`` to ``stream``; lone surrogates as their original bytes when possible."""
    if _clean(text):
        stream.write(text)
        return
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(text.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
        return
    stream.flush()
    buffer.write(encode(text))
    buffer.flush()
