"""Where a value of a manifest is written: its line (and column), found without a search
from the top for each value (several such searches were quadratic in the thirteenth and
fourteenth re-runs). Used by :mod:`gpuport.scan.rules.deps.readers`."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=64)
def code_part(line: str) -> str:
    """The line without its trailing comment (``#`` at the start or after a space, unquoted).
    Cached: each item of a list on one long line used to rescan the whole line."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def find_line(lines: list[str], needle: str, start: int = 0, end: int | None = None) -> int | None:
    """1-based line in ``[start, end)`` where ``needle`` occurs as a whole word outside comments."""
    found = find_at(lines, needle, start, end)
    return None if found is None else found[0] + 1


def find_at(
    lines: list[str],
    needle: str,
    start: int = 0,
    end: int | None = None,
    col: int = 0,
    reach: int | None = None,
) -> tuple[int, int] | None:
    """``(index, offset just past needle)`` of the first whole-word ``needle`` outside comments
    in lines ``[start, end)``, looked for from offset ``col`` on line ``start``, and (with
    ``reach``) only where it starts within ``reach`` characters of where each line is read."""
    for i in range(start, len(lines) if end is None else min(end, len(lines))):
        at = col if i == start else 0
        stop = len(lines[i]) if reach is None else at + reach + len(needle)
        if lines[i].find(needle, at, stop) >= 0:
            past = whole_word(code_part(lines[i]), needle, at)
            if past >= 0:
                return i, past
    return None


def whole_word(code: str, needle: str, pos: int = 0) -> int:
    """The offset just past the first ``needle`` in ``code`` from ``pos`` on with no word
    character, ``.`` or ``-`` on either side, else -1 (a plain search: compiling a regex per
    value made a long dependency list slow)."""
    pos = code.find(needle, pos)
    while pos != -1:
        end = pos + len(needle)
        if not (pos and wordish(code[pos - 1])) and not (end < len(code) and wordish(code[end])):
            return end
        pos = code.find(needle, pos + 1)
    return -1


def wordish(ch: str) -> bool:
    return ch.isalnum() or ch in "_.-"


def line_of(lines: list[str], needle: str, start: int = 0) -> int:
    """1-based line of ``needle`` at or after line index ``start``, else anywhere, else 1."""
    return find_line(lines, needle, start) or find_line(lines, needle) or 1


def quoted_line(lines: list[str], value: str, start: int = 0) -> int:
    """Line of a string value, preferring its quoted form (``"torch>=2"``)."""
    for needle in (f'"{value}"', f"'{value}'"):
        found = find_line(lines, needle, start) or find_line(lines, needle)
        if found:
            return found
    return line_of(lines, value, start)


def quoted_from(lines: list[str], value: str, hint: int, col: int = 0) -> tuple[int, int] | None:
    """``(index, offset past it)`` of ``"value"``/``'value'`` within a few lines of ``hint``
    (from offset ``col`` on that line): the next item of a list is near the last one, and a
    bounded look from where the last one ended keeps a long list linear, on one line too."""
    end = hint + NEAR
    needles = (f'"{value}"', f"'{value}'")
    if next_quote(lines[hint] if hint < len(lines) else "", col) == "'":
        needles = needles[::-1]  # the form of the next string first: on one long line, looking
        # for the other form first searched to the line's end once per item
    for needle in needles:  # the next item is near: a bounded look on each line (an item
        # written otherwise, with escapes, searched to the end of a long line once per item)
        found = find_at(lines, needle, hint, end, col, reach=REACH)
        if found:
            return found
    return None


class InOrder:
    """Lines of string values met in file order (index URLs of ``[[tool.poetry.source]]`` and
    ``[[tool.uv.index]]``): each looked for near where the last one was found, a few in the
    whole file (an index written with escapes, or out of order), past those the line of the
    one before: a search from the top for each was quadratic (fourteenth re-run, F9: 400 KB
    of sources, 31 s)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.hint = self.col = 0
        self.searches = WHOLE_FILE_SEARCHES

    def line(self, value: str) -> int:
        near = quoted_from(self.lines, value, self.hint, self.col)
        if near is not None:
            self.hint, self.col = near
            return self.hint + 1
        if self.searches <= 0:
            return self.hint + 1
        self.searches -= 1
        line = quoted_line(self.lines, value)
        if line - 1 > self.hint:
            self.hint, self.col = line - 1, 0
        return line


def next_quote(line: str, col: int) -> str:
    """The first quote character at or after ``col`` ("" if none): where the next item opens."""
    for i in range(col, len(line)):  # (not islice: it steps through the first col too)
        if line[i] in "\"'":
            return line[i]
    return ""


NEAR = 8
REACH = 4096
WHOLE_FILE_SEARCHES = 16
