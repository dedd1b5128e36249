"""Reading and writing sources byte-for-byte: bytes that are not UTF-8 survive a translation.

Sources are decoded as UTF-8 with ``surrogateescape``, so a stray latin-1 byte in a comment
becomes a lone surrogate in the text (the translator treats it like any other character) and is
written back as the same byte.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from gpuport import fileio
from gpuport.scan.project.files import Skip

__all__ = ["encode", "read_source", "write_source", "write_stdout"]


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def read_source(path: Path, root: Path | None = None) -> str | Skip:
    """The text of ``path`` (same skip rules as the scanner, except that bytes that are not
    UTF-8 are kept as surrogates instead of skipping the file). With ``root``, a file that
    resolves outside it is not read (see :mod:`gpuport.fileio`)."""
    try:
        data = fileio.read_bytes(path, limit=fileio.LIMIT_SOURCE, root=root)
    except fileio.ReadRefused as exc:
        return Skip(path.name, exc.reason)
    if b"\x00" in data[:8192]:
        return Skip(path.name, "binary file (contains NUL bytes)")
    return data.decode("utf-8", "surrogateescape").removeprefix("\ufeff")


def _clean(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def write_source(path: Path, text: str, root: Path | None = None) -> None:
    """Write ``text`` atomically (never through a link; inside ``root`` if given); lone
    surrogates go back to the bytes they came from."""
    fileio.write_atomic_bytes(path, encode(text), root=root)


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
