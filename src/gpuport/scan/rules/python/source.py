"""Cheap text-level work done before (and instead of most of) ``ast.parse``.

Parsing is the expensive step of the Python rules: on the 2,400 files of an
installed torch, ``ast.parse`` of the files that hold a trigger word costs
several times more than everything else together. Two things keep it small:

* :func:`trie_regex` turns the trigger words into one prefix-factored regex
  (``n(?:v(?:ml|idia|tx)|...)``), which ``re`` scans several times faster than
  a flat alternation.
* :func:`reduced_source` keeps only the *top-level statements* that contain a
  marked line (plus every import, for name resolution) and blanks the rest,
  keeping line numbers; inside a big class or function it does the same one or
  two levels down. A statement starts on a line whose first character (after
  the block's indentation) is not blank, a comment or a closing bracket, that
  is not an ``else``/``elif``/``except``/``finally`` clause and not inside a
  triple-quoted string; decorators stay with what they decorate. If that guess
  is ever wrong the reduced text fails to parse and the caller parses the whole
  file instead, so the shortcut can cost time but not findings. Files under
  :data:`REDUCE_ABOVE` characters are always parsed whole; in a larger file a
  syntax error inside a statement that no rule needs goes unreported, just as
  in a file without trigger words (which is never parsed at all).
"""

from __future__ import annotations

import bisect
import itertools
import re
from functools import lru_cache

from gpuport import textre

_CANDIDATE = textre.compile(r"^[^\s#)\]}]", re.M)
_CLAUSE = textre.compile(r"(?:else|elif|except|finally)\b")
_TRIPLE = textre.compile(r"\"\"\"|'''")
# Smaller files are parsed whole: cheap, and a syntax error anywhere in them is reported.
REDUCE_ABOVE = 16_000
_KEEP = ("import ", "from ")
_COMPOUND = ("class ", "def ", "async def ", "@")
_HEADER_END = textre.compile(r":[ \t]*(?:#[^\n]*)?$")
_FLOW_CALLS = ("get_device_capability", "get_device_properties", "get_arch_list")
_ASSIGN_LINE = textre.compile(r"[ \t]*([A-Za-z_][\w \t,]*?)[ \t]*(?::[^=\n]*)?=(?!=)")
_WORD = textre.compile(r"\w+")
# The same runs for the per-line index, on Python's engine (see tests/test_textre.py): one
# call per line of every reduced file, where RE2's per-call cost was most of the index.
_WORD_RUNS = re.compile(r"\w+")  # Unicode: `import nvtx as ñ1` is a name too
#: searches of the whole text for names the index cannot hold (dotted), per file; past it
#: every line is kept (thirty-sixth re-run F6: a pass per import statement was quadratic)
MOST_ODD_PASSES = 64
_FOR_LINE = textre.compile(r"\bfor[ \t]+([A-Za-z_]\w*)[ \t]+in[ \t]")


_Trie = dict[str, "_Trie"]


def trie_regex(words: list[str] | tuple[str, ...]) -> str:
    """One regex matching any of ``words``, with shared prefixes factored out.

    Only for searching: a word that extends another (``cupyx`` after ``cupy``)
    is dropped, since the shorter one already matches wherever it does.
    """
    tree: _Trie = {}
    for word in words:
        node = tree
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}
    return _emit(tree)


def _emit(node: _Trie) -> str:
    if "" in node:
        return ""
    alts = [re.escape(ch) + _emit(child) for ch, child in sorted(node.items())]
    return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"


def mark_lines(
    text: str,
    pattern: re.Pattern[str],
    mask: bytearray,
    guard_words: frozenset[str] = frozenset(),
) -> tuple[list[int], list[tuple[int, int]]]:
    """Set ``mask[line] = 1`` for each 1-based line where ``pattern`` matches.

    Returns the start offsets of those lines, in order, once each. A match whose
    text is one of ``guard_words`` does not mark its line: such lines come back
    separately, as (line, start offset) pairs (see
    :func:`~gpuport.scan.rules.python.scope.guard_names`).
    """
    line = 1
    pos = 0
    last_trigger = last_guard = 0
    starts: list[int] = []
    guards: list[tuple[int, int]] = []
    for match in pattern.finditer(text):
        start = match.start()
        line += text.count("\n", pos, start)
        pos = start
        if guard_words and match.group() in guard_words:
            if line != last_guard:
                last_guard = line
                guards.append((line, text.rfind("\n", 0, start) + 1))
        elif line != last_trigger:
            last_trigger = line
            mask[line] = 1
            starts.append(text.rfind("\n", 0, start) + 1)
    return starts, guards


def mark_words(text: str, names: set[str], mask: bytearray) -> None:
    """Mark lines where one of ``names`` occurs as a whole identifier."""
    line, pos = 1, 0
    for first in _word_lines(text, names) if names else ():
        line += text.count("\n", pos, first)  # offsets come in increasing order
        pos = first
        mask[line] = 1


@lru_cache(maxsize=512)
def _compiled(regex: str) -> re.Pattern[str]:
    return textre.compile(regex)


def _word_lines(text: str, names: set[str]) -> dict[int, str]:
    """The lines (by start offset) where one of ``names`` occurs as a whole identifier.

    The trie regex only matches the shortest of ``load``/``load_inline``, so each
    match is extended to the whole identifier before it is looked up.
    """
    found: dict[int, str] = {}
    size = len(text)
    regex = trie_regex(sorted(names))
    if all(n[:1].isascii() and (n[:1].isalnum() or n[:1] == "_") for n in names):
        regex = r"\b" + regex  # RE2 passes over matches inside a longer identifier itself
    pattern = _compiled(regex)
    pos = 0
    while pos < size:
        match = pattern.search(text, pos)
        if match is None:
            break
        start, end = match.span()
        while end < size and (text[end].isalnum() or text[end] == "_"):
            end += 1  # the whole identifier
        if (start and (text[start - 1].isalnum() or text[start - 1] == "_")) or (
            end != match.end() and text[start:end] not in names
        ):
            pos = max(end, start + 1)  # inside or beside another identifier: go past it
            continue
        first = text.rfind("\n", 0, start) + 1
        last = text.find("\n", start)
        line_end = last if last >= 0 else size
        found[first] = text[first:line_end]
        pos = line_end + 1  # later matches on this line need no look-up
    return found


class WordLines:
    """The lines each identifier of a text occurs on, indexed in one pass on first use.

    The walk learns names one import or assignment at a time; looking each batch up here
    instead of searching the whole text again keeps a file of many imports linear.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._index: dict[str, list[int]] | None = None
        self._odd_passes = 0

    def mark(self, names: set[str], mask: bytearray) -> None:
        """Like :func:`mark_words`: mark lines where one of ``names`` is a whole identifier."""
        if self._index is None:
            index: dict[str, list[int]] = {}
            for line, text in enumerate(self.text.split("\n"), 1):
                for word in set(_WORD_RUNS.findall(text)):
                    index.setdefault(word, []).append(line)
            self._index = index
        odd = set()
        for name in names:
            if not name.isidentifier():
                odd.add(name)
            for line in self._index.get(name, ()):
                mask[line] = 1
        if odd:
            self._odd_passes += 1
            if self._odd_passes > MOST_ODD_PASSES:
                mask[1:] = b"\x01" * (len(mask) - 1)  # every line kept: linear, and safe
            else:
                mark_words(self.text, odd, mask)


def flow_names(text: str) -> set[str]:
    """Names bound (directly or through other such names) to capability / arch values.

    The walk tracks these too, but only inside the statements it parses; finding
    them first by regex keeps the statements that *use* them in the reduced
    source. Three rounds reach ``cap = get_device_capability()`` ->
    ``major, minor = cap`` -> ``sm = major * 10 + minor``.
    """
    if not any(call in text for call in _FLOW_CALLS):
        return set()
    names: set[str] = set()
    frontier = set(_FLOW_CALLS)
    for _ in range(3):
        new: set[str] = set()
        for line in _word_lines(text, frontier).values():
            assign = _ASSIGN_LINE.match(line)
            if assign:
                new.update(n.strip() for n in assign.group(1).split(","))
            loop = _FOR_LINE.search(line)
            if loop:
                new.add(loop.group(1))
        frontier = {n for n in new if n.isidentifier()} - names - set(_FLOW_CALLS)
        if not frontier:
            break
        names |= frontier
    return names


def _string_lines(text: str, nlines: int) -> bytearray:
    """``out[line] == 1`` for lines that begin inside a triple-quoted string."""
    inside = bytearray(nlines + 2)
    opened: str | None = None
    open_line = 0
    line = 1
    pos = 0
    for match in _TRIPLE.finditer(text):
        start = match.start()
        line += text.count("\n", pos, start)
        pos = start
        quote = match.group()
        if opened is None:
            opened, open_line = quote, line
        elif quote == opened:
            if line > open_line:
                inside[open_line + 1 : line + 1] = b"\x01" * (line - open_line)
            opened = None
    return inside


class _Reducer:
    """Blanks unmarked statements, top level first, then inside big classes and functions."""

    MAX_DEPTH = 2  # module -> class body -> method body
    MIN_SPLIT = 40  # lines; smaller statements are kept whole

    def __init__(self, text: str, mask: bytearray) -> None:
        self.text = text
        self.mask = mask
        self.lines = text.split("\n")
        self.out = list(self.lines)
        # offsets[i] is where line i + 1 starts (each line's length plus its newline)
        self.offsets = [0, *itertools.accumulate(map((1).__add__, map(len, self.lines)))]
        quoted = '"""' in text or "'''" in text
        self.inside = _string_lines(text, len(self.lines)) if quoted else None
        self._patterns: dict[str, re.Pattern[str]] = {"": _CANDIDATE}

    def starts(self, first: int, end: int, indent: str) -> list[int]:
        """First lines of the statements at ``indent`` within lines [first, end)."""
        pattern = self._patterns.get(indent)
        if pattern is None:
            pattern = textre.compile("^" + re.escape(indent) + r"[^\s#)\]}]", re.M)
            self._patterns[indent] = pattern
        found: list[int] = []
        decorated = False
        text, offsets, inside = self.text, self.offsets, self.inside
        for match in pattern.finditer(text, offsets[first - 1], offsets[end - 1]):
            pos = match.start()
            line = bisect.bisect_right(offsets, pos)
            if (inside is not None and inside[line]) or _CLAUSE.match(text, pos + len(indent)):
                continue
            if not decorated:
                found.append(line)
            decorated = text.startswith("@", pos + len(indent))
        return found

    def body(self, first: int, end: int, indent: str) -> tuple[int, str] | None:
        """Where the body of the class/def starting at ``first`` begins, and its indentation."""
        header = self.lines[first - 1][len(indent) :]
        if not header.startswith(_COMPOUND):
            return None
        inside = self.inside
        line = first
        while line < min(end, first + 60) and not _HEADER_END.search(self.lines[line - 1]):
            line += 1
        for nxt in range(line + 1, end):
            text = self.lines[nxt - 1]
            stripped = text.lstrip()
            if not stripped or stripped.startswith("#") or (inside is not None and inside[nxt]):
                continue
            body_indent = text[: len(text) - len(stripped)]
            return (nxt, body_indent) if len(body_indent) > len(indent) else None
        return None

    def reduce(self, first: int, end: int, indent: str, depth: int) -> int:
        """Blank the unmarked statements in [first, end); returns how many lines stay."""
        starts = self.starts(first, end, indent)
        if not starts:
            return end - first
        kept = starts[0] - first
        for start, stop in itertools.pairwise([*starts, end]):
            marked = self.mask.find(1, start, stop) >= 0
            if marked or self.lines[start - 1][len(indent) :].startswith(_KEEP):
                inner = self.body(start, stop, indent) if depth < self.MAX_DEPTH else None
                if marked and inner is not None and stop - start > self.MIN_SPLIT:
                    body_first, body_indent = inner
                    kept += body_first - start
                    kept += self.reduce(body_first, stop, body_indent, depth + 1)
                else:
                    kept += stop - start
            else:
                self.out[start - 1 : stop - 1] = [indent + "pass" if depth else ""] + [""] * (
                    stop - start - 1
                )
        return kept


def reduced_source(text: str, mask: bytearray, min_size: int = REDUCE_ABOVE) -> str | None:
    """The text with unmarked statements blanked, or None if nothing would be saved.

    Line numbers and columns of what stays are unchanged; a blanked statement
    inside a class or function body becomes ``pass`` so the body stays valid.
    Files under ``min_size`` characters are left whole (None).
    """
    if len(text) < min_size:
        return None
    reducer = _Reducer(text, mask)
    total = len(reducer.lines)
    kept = reducer.reduce(1, total + 1, "", 0)
    if kept * 4 > total * 3:
        return None  # parsing three quarters of the file anyway: not worth a second string
    return "\n".join(reducer.out)
