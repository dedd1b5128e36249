"""The shared libraries an ELF file asks for (DT_NEEDED), read without loading it.

Whether a compiled extension (flash-attn, xformers, bitsandbytes...) was built for CUDA or
for ROCm shows in what it links: ``libc10_cuda.so``/``libcudart.so`` versus
``libc10_hip.so``/``libamdhip64.so``. Reading the program headers and the dynamic section
costs a few kilobytes of I/O even for a 400 MB ``.so``, and importing the module, which
could crash or run code, is never needed.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

_PT_LOAD, _PT_DYNAMIC = 1, 2
_DT_NULL, _DT_NEEDED, _DT_STRTAB, _DT_STRSZ = 0, 1, 5, 10
_MAX_STRTAB = 4 << 20


def needed_libraries(path: Path) -> list[str]:
    """DT_NEEDED entries of ``path``; empty for anything that is not a readable ELF."""
    try:
        with path.open("rb") as fh:
            return _needed(fh)
    except (OSError, struct.error, ValueError):
        return []


def _needed(f: BinaryIO) -> list[str]:
    ident = f.read(64)
    if len(ident) < 52 or ident[:4] != b"\x7fELF":
        return []
    wide = ident[4] == 2
    end = "<" if ident[5] == 1 else ">"
    if wide:
        (phoff,) = struct.unpack(end + "Q", ident[32:40])
        phentsize, phnum = struct.unpack(end + "HH", ident[54:58])
        ph_fmt, dyn_fmt = end + "IIQQQQQQ", end + "qQ"
    else:
        (phoff,) = struct.unpack(end + "I", ident[28:32])
        phentsize, phnum = struct.unpack(end + "HH", ident[42:46])
        ph_fmt, dyn_fmt = end + "IIIIIIII", end + "iI"
    loads: list[tuple[int, int, int]] = []  # (vaddr, offset, filesz)
    dynamic: tuple[int, int] | None = None
    for i in range(min(phnum, 256)):
        f.seek(phoff + i * phentsize)
        raw = f.read(struct.calcsize(ph_fmt))
        fields = struct.unpack(ph_fmt, raw)
        if wide:
            p_type, _flags, offset, vaddr, _paddr, filesz = fields[:6]
        else:
            p_type, offset, vaddr, _paddr, filesz = fields[:5]
        if p_type == _PT_LOAD:
            loads.append((vaddr, offset, filesz))
        elif p_type == _PT_DYNAMIC:
            dynamic = (offset, filesz)
    if dynamic is None:
        return []
    f.seek(dynamic[0])
    blob = f.read(min(dynamic[1], 1 << 20))
    size = struct.calcsize(dyn_fmt)
    needed: list[int] = []
    strtab = strsz = None
    for pos in range(0, len(blob) - size + 1, size):
        tag, val = struct.unpack(dyn_fmt, blob[pos : pos + size])
        if tag == _DT_NULL:
            break
        if tag == _DT_NEEDED:
            needed.append(val)
        elif tag == _DT_STRTAB:
            strtab = val
        elif tag == _DT_STRSZ:
            strsz = val
    if strtab is None or not needed:
        return []
    offset = next((o + strtab - v for v, o, n in loads if v <= strtab < v + n), None)
    if offset is None:
        return []
    f.seek(offset)
    table = f.read(min(strsz or _MAX_STRTAB, _MAX_STRTAB))
    names = []
    for index in needed:
        stop = table.find(b"\0", index)
        if 0 <= index < len(table) and stop > index:
            names.append(table[index:stop].decode("utf-8", errors="replace"))
    return names
