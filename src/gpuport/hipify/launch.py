"""``kernel<<<grid, block, shmem, stream>>>(args)`` -> ``hipLaunchKernelGGL`` (issue 3, item 2).

Used by :func:`gpuport.hipify.translate.translate` with ``launch_syntax="ggl"``. Works on the
lexed view (comments and strings blank) and returns span edits on the original text, so the
kernel name, the launch configuration and the arguments keep their own text (and get the
identifier pass's replacements like any other code). Template arguments of the kernel name are
matched with ``<``/``>`` nesting (``>>`` closes two levels; parentheses hide comparisons). A
launch that cannot be parsed safely is left as it is and reported with a reason.
"""

from __future__ import annotations

from typing import NamedTuple

from gpuport import textre
from gpuport.scan.cxx import CxxSource

__all__ = ["LaunchEdit", "LaunchFailure", "rewrite_launches"]

_SPACE = " \t\r\n"
#: A possibly qualified name ending where the search ends (``ns::kernel``).
_NAME = textre.compile(r"(?<![\w:])(?:::)?[A-Za-z_]\w*(?:[ \t]*::[ \t]*[A-Za-z_]\w*)*$")
#: A kernel name may not follow these (it would be part of an expression).
_BAD_BEFORE = set("<.=+-*/%&|^!~?,[(>")
_NAME_CHARS = frozenset("_: \t")
_SCAN_LIMIT = 20_000


class LaunchEdit(NamedTuple):
    start: int
    end: int
    replacement: str


class LaunchFailure(NamedTuple):
    offset: int
    reason: str


def _back_space(code: str, pos: int) -> int:
    """Index of the last non-space character before ``pos`` (-1 if none)."""
    j = pos - 1
    while j >= 0 and code[j] in _SPACE:
        j -= 1
    return j


def _template_open(code: str, close: int) -> int | None:
    """Offset of the ``<`` matching the ``>`` at ``close``, scanning backwards."""
    depth = 0
    parens = 0
    stop = max(-1, close - _SCAN_LIMIT)
    for j in range(close, stop, -1):
        ch = code[j]
        if ch in ")]":
            parens += 1
        elif ch in "([":
            parens -= 1
            if parens < 0:
                return None
        elif parens:
            continue
        elif ch == ">":
            depth += 1
        elif ch == "<":
            depth -= 1
            if depth == 0:
                return j
        elif ch in ";{}":
            return None
    return None


def _config_end(code: str, start: int) -> tuple[int, list[tuple[int, int]]] | None:
    """Offset of the closing ``>>>`` after ``<<<`` (ending at ``start``) and the spans of the
    top-level comma-separated configuration arguments; None when not found."""
    depth = 0
    spans: list[tuple[int, int]] = []
    arg = start
    stop = min(len(code), start + _SCAN_LIMIT)
    i = start
    while i < stop:
        ch = code[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return None
        elif depth == 0:
            if code.startswith(">>>", i):
                spans.append((arg, i))
                return i, spans
            if ch == ",":
                spans.append((arg, i))
                arg = i + 1
            elif ch == ";" or code.startswith("<<<", i):
                return None
        i += 1
    return None


def _one(src: CxxSource, lt: int) -> tuple[list[LaunchEdit], str | None]:
    """Edits for the launch whose ``<<<`` is at ``lt``, or a reason it is not rewritten."""
    text, code = src.text, src.code
    j = _back_space(code, lt)
    templated = j >= 0 and code[j] == ">"
    name_end = j + 1
    if templated:
        opener = _template_open(code, j)
        if opener is None:
            return [], "unbalanced template arguments"
        j = _back_space(code, opener)
    lo = j  # the name is made of these characters: search only their run, not 500 before
    while lo > 0 and j - lo < 500 and (code[lo - 1] in _NAME_CHARS or code[lo - 1].isalnum()):
        lo -= 1
    m = _NAME.search(code, lo, j + 1)
    if m is None or j < 0:
        return [], "kernel name not found"
    name_start = m.start()
    before = _back_space(code, name_start)
    if before >= 0 and code[before] in _BAD_BEFORE:
        return [], "kernel name not found"
    found = _config_end(code, lt + 3)
    if found is None:
        return [], "no closing >>>"
    gt, spans = found
    if not 2 <= len(spans) <= 4:
        return [], f"expected 2 to 4 launch arguments, got {len(spans)}"
    if any(not code[a:b].strip() for a, b in spans):
        return [], "empty launch argument"
    open_paren = gt + 3
    while open_paren < len(code) and code[open_paren] in _SPACE:
        open_paren += 1
    if open_paren >= len(code) or code[open_paren] != "(":
        return [], "no argument list after >>>"
    close = src.match_close(open_paren)
    if close is None:
        return [], "unbalanced argument list"
    if text[name_start : open_paren + 1] != code[name_start : open_paren + 1]:
        return [], "comment or string inside the launch configuration"
    cfg_start = _skip_fwd(code, lt + 3, gt)
    cfg_end = gt
    while cfg_end > cfg_start and code[cfg_end - 1] in _SPACE:
        cfg_end -= 1
    fill = ", 0" * (4 - len(spans))
    sep = ""
    if code[open_paren + 1 : close].strip():
        sep = "," if code[open_paren + 1] in _SPACE else ", "
    head = "hipLaunchKernelGGL(" + ("HIP_KERNEL_NAME(" if templated else "")
    return [
        LaunchEdit(name_start, name_start, head),
        LaunchEdit(name_end, cfg_start, ("), " if templated else ", ")),
        LaunchEdit(cfg_end, open_paren + 1, fill + sep),
    ], None


def _skip_fwd(code: str, pos: int, end: int) -> int:
    while pos < end and code[pos] in _SPACE:
        pos += 1
    return pos


def rewrite_launches(src: CxxSource) -> tuple[list[LaunchEdit], list[LaunchFailure]]:
    """Edits turning every parseable ``<<<...>>>`` launch into ``hipLaunchKernelGGL``."""
    edits: list[LaunchEdit] = []
    failures: list[LaunchFailure] = []
    code = src.code
    pos = code.find("<<<")
    while pos != -1:
        run_end = pos + 3
        while run_end < len(code) and code[run_end] == "<":
            run_end += 1
        if run_end > pos + 3:  # `<<<<`: not a launch we can read
            failures.append(LaunchFailure(pos, "more than three `<`"))
            pos = code.find("<<<", run_end)
            continue
        got, why = _one(src, pos)
        if why is not None:
            failures.append(LaunchFailure(pos, why))
        edits.extend(got)
        pos = code.find("<<<", pos + 3)
    return edits, failures
