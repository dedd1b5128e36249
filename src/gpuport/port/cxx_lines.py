"""Lines of C/C++ the native fixes edit around, read as the preprocessor reads them.

A line ending in a backslash is spliced with the next one (also at the end of a ``//``
comment: the comment goes on), and a ``/* ...`` comment left open runs onto the next line.
A directive line gpuport inserts after such a line is no directive (the ``#endif`` of an
inserted block vanished into an include's comment: thirty-ninth re-run F12), and a test
gpuport extends before a comment that is not the end of the line extends only a part of it
(``A /* c */ && B`` became ``A || H /* c */ && B``: F13). The fixes leave such lines, with
the reason.
"""

from __future__ import annotations

from gpuport import textre

__all__ = ["closed_tail", "edge_runs_on", "runs_on", "spliced_before"]

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
