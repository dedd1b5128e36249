"""Lines of C/C++ the native fixes edit around, read as the preprocessor reads them.

A line ending in a backslash is spliced with the next one (also at the end of a ``//``
comment: the comment goes on), and a ``/* ...`` comment left open runs onto the next line.
A directive line gpuport inserts after such a line is no directive (the ``#endif`` of an
inserted block vanished into an include's comment: thirty-ninth re-run F12), and a test
gpuport extends before a comment that is not the end of the line extends only a part of it
(``A /* c */ && B`` became ``A || H /* c */ && B``: F13). The fixes leave such lines, with
the reason. :func:`insert_at` finds where a definition goes at file scope (the full-mask
block of :mod:`gpuport.port.fix_masks`).
"""

from __future__ import annotations

import re

from gpuport import textre
from gpuport.scan.cxx import CxxSource

__all__ = [
    "INCLUDE_LINE",
    "closed_tail",
    "edge_runs_on",
    "insert_at",
    "runs_on",
    "spliced_before",
]

#: a whole ``#include <x>`` / ``#include "x"`` line (group 1: the name)
INCLUDE_LINE = textre.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"][^\n]*\n?", re.M)

#: blanks and comments that close on the line, up to an optional ``//`` comment
_CLOSED_TAIL = textre.compile(
    r"[ \t\r\f\v]*(?:/\*(?:[^*\n]|\*+[^*/\n])*\*+/[ \t\r\f\v]*)*(?://.*)?"
)
_OPENERS = textre.compile(r"/\*|//|\"|'")
_BLANKS = " \t\r\f\v"


def closed_tail(tail: str) -> bool:
    """Whether ``tail`` (the rest of a directive line after its expression or header name)
    is only blanks and comments that end on the line, with no backslash splice after."""
    return _CLOSED_TAIL.fullmatch(tail) is not None and not tail.rstrip(_BLANKS).endswith("\\")


def spliced_before(text: str, at: int) -> bool:
    """Whether the line before the line start ``at`` ends in a backslash (the preprocessor
    joins it with the line at ``at``)."""
    if at <= 0:
        return False
    prev = text[text.rfind("\n", 0, at - 1) + 1 : at - 1]
    return prev.rstrip(_BLANKS).endswith("\\")


def runs_on(text: str, start: int, end: int) -> bool:
    """Whether the line ``text[start:end]`` (started outside any comment or literal; ``end``
    before or after its line end) runs onto the next line: a backslash splice, a block
    comment or a quote left open. A quote or comment opener gpuport misreads only makes it
    leave the line."""
    line = text[start:end].rstrip("\n")
    if line.rstrip(_BLANKS).endswith("\\"):
        return True
    i = 0
    while (m := _OPENERS.search(line, i)) is not None:
        tok = m.group()
        if tok == "//":
            return False
        if tok == "/*":
            close = line.find("*/", m.end())
            if close < 0:
                return True
            i = close + 2
            continue
        j = m.end()
        while j < len(line) and line[j] != tok:
            j += 2 if line[j] == "\\" else 1
        if j >= len(line):
            return True
        i = j + 1
    return False


def edge_runs_on(text: str, start: int, end: int) -> bool:
    """Whether lines put in place of the whole lines ``text[start:end]`` would not stand as
    lines of their own: the line before ``start`` ends in a backslash, or the span's last
    line (the line before ``start`` when the span is empty, an insertion) runs onto the next.
    The line checked must start outside any comment (a directive line gpuport read)."""
    if spliced_before(text, start):
        return True
    if end <= start:
        return start > 0 and runs_on(text, text.rfind("\n", 0, start - 1) + 1, start)
    return runs_on(text, max(start, text.rfind("\n", 0, end - 1) + 1), end)


def _include_guard(src: CxxSource) -> tuple[int, int] | None:
    """(end of its ``#define`` line, offset of its ``#endif``) of a whole-file include guard:
    ``#ifndef X`` / ``#define X`` first, its ``#endif`` the file's last directive. A
    default-value block (``#ifndef vector`` / ``#define vector 1`` / ``#endif``) is not one."""
    guard = textre.match(r"\s*#\s*ifndef\s+(\w+)\s*\n\s*#\s*define\s+(\w+)[^\n]*\n", src.code)
    if guard is None or guard.group(1) != guard.group(2) or not src.directives:
        return None
    depth = 0
    for i, d in enumerate(src.directives):
        depth += d.kind in ("if", "ifdef", "ifndef")
        depth -= d.kind == "endif"
        if depth == 0:  # the guard's own #endif: it must close the file
            return (guard.end(), d.offset) if i == len(src.directives) - 1 else None
    return None


def _depth(src: CxxSource, offset: int, skip: int = -1) -> int:
    """How many conditionals are open at ``offset`` (the one opened at ``skip`` not counted)."""
    depth = 0
    for d in src.directives:
        if d.offset >= offset:
            break
        if d.kind in ("if", "ifdef", "ifndef") and d.offset != skip:
            depth += 1
        elif d.kind == "endif":
            depth -= 1
    return depth


def insert_at(src: CxxSource, before: int) -> int:
    """Offset at file scope before ``before`` to put a definition, outside every
    conditional but a whole-file include guard (a definition inside ``#ifndef block_size_x``
    vanishes when the tuner defines ``block_size_x``): after the last such ``#include``
    above it, else after a leading ``#pragma once`` / include guard, else the file start."""
    guard = _include_guard(src)
    skip = -1
    if guard is not None:
        skip = next(d.offset for d in src.directives if d.kind == "ifndef")
    best = None
    opens = ("if", "ifdef", "ifndef")
    steps = [
        (d.offset, 1 if d.kind in opens and d.offset != skip else -(d.kind == "endif"))
        for d in src.directives
    ]
    k = depth = 0  # the depth read on as the includes come in order, not from the top each
    for m in INCLUDE_LINE.finditer(src.text, 0, before):
        while k < len(steps) and steps[k][0] < m.start():
            depth += steps[k][1]
            k += 1
        if not src.code[m.start() : m.end()].strip().startswith("#"):
            continue  # inside a comment
        if depth == 0:
            best = m.end()
    if best is not None:
        return best
    once = textre.search(r"^[ \t]*#[ \t]*pragma[ \t]+once[^\n]*\n", src.text[:before], re.M)
    if (
        once is not None
        and src.code[once.start() : once.end()].strip().startswith("#")
        and (_depth(src, once.start()) == 0)
    ):
        return once.end()
    if guard is not None and guard[0] <= before:
        return guard[0]
    return 0
