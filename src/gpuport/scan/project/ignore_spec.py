"""A ``.gitignore``'s patterns, matched in time linear in the path and in the patterns.

Git itself is the reference (forty-fifth re-run F1/F2): :meth:`IgnoreSpec.decide` reads each
line as git's ``dir.c`` and ``wildmatch.c`` do (``a/**/`` names only folders inside ``a``, and
``a/**`` never ``a`` itself) into a regular expression over one path, and answers for that
path alone, the last matching line deciding; the walk asks it for each folder before entering
it and for each file of a folder it entered, the deepest .gitignore first, as git does. Each
pattern runs on :mod:`gpuport.textre` (RE2), grouped in blocks of :data:`BLOCK` behind one
alternation each: a path is tried against a block at once, and only a block where one
matches is walked pattern by pattern. :meth:`IgnoreSpec.match_file` keeps pathspec's
``GitIgnoreSpec.match_file`` answer (compiled on first use), which a test compares. A
bracket class is written as byte ranges, a negated one as ``[^...]`` (``[!a]`` is ``[^a/]``, not
254 bytes spelled out: forty-sixth re-run F11).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from gpuport import textre

__all__ = ["BLOCK", "IgnoreSpec", "git_pattern"]

BLOCK = 64
_DIR_MARK = "ps_d"  # pathspec's group for the "/" after a folder a pattern matched
#: a path is matched as its UTF-8 bytes read as Latin-1 (git's ``?`` is one byte)
_ANY = "[\\x00-\\xff]"
_NEVER = "[^\\x00-\\xff]"
#: wildmatch's ``[:name:]`` classes (ASCII only, as git's): byte ranges
_CLASSES = {
    "alnum": ((48, 57), (65, 90), (97, 122)), "alpha": ((65, 90), (97, 122)),
    "blank": ((9, 9), (32, 32)), "cntrl": ((0, 31), (127, 127)), "digit": ((48, 57),),
    "graph": ((33, 126),), "lower": ((97, 122),), "print": ((32, 126),),
    "punct": ((33, 47), (58, 64), (91, 96), (123, 126)), "space": ((9, 13), (32, 32)),
    "upper": ((65, 90),), "xdigit": ((48, 57), (65, 70), (97, 102)),
}  # fmt: skip


def _char(c: str) -> str:
    return c if c.isascii() and c.isalnum() else f"\\x{ord(c):02x}"


def _bracket(pat: str, i: int) -> tuple[str, int] | None:
    """wildmatch's ``[...]`` from ``pat[i]`` (just past the ``[``): the regex class and the
    index past its ``]``, or None where git gives the whole match up (no closing ``]``, an
    unknown ``[:class:]``). With git's path matching a class never matches ``/``."""
    n = len(pat)
    negated = i < n and pat[i] in "!^"
    i += negated
    ranges: list[tuple[int, int]] = []
    prev: str | None = None
    while True:
        if i >= n:
            return None
        c = pat[i]
        if c == "\\":
            i += 1
            if i >= n:
                return None
            prev = pat[i]
            ranges.append((ord(prev), ord(prev)))
        elif c == "-" and prev is not None and i + 1 < n and pat[i + 1] != "]":
            i += 1
            if pat[i] == "\\":
                i += 1
                if i >= n:
                    return None
            ranges.append((ord(prev), ord(pat[i])))  # reversed: matches nothing
            prev = None
        elif c == "[" and i + 1 < n and pat[i + 1] == ":":
            end = pat.find("]", i + 2)
            if end < 0:
                return None
            if end - i - 3 < 0 or pat[end - 1] != ":":  # no ``:]``: a plain ``[``
                prev = "["
                ranges.append((91, 91))
            else:
                cls = _CLASSES.get(pat[i + 2 : end - 1])
                if cls is None:
                    return None
                ranges.extend(cls)
                prev = None
                i = end
        else:
            prev = c
            ranges.append((ord(c), ord(c)))
        i += 1
        if i >= n:
            return None
        if pat[i] == "]":
            break
    return _class(ranges, negated), i + 1


def _spans(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The byte ranges (a reversed one matches nothing) merged, sorted, clipped to bytes."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted((lo, min(hi, 0xFF)) for lo, hi in ranges if lo <= min(hi, 0xFF)):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _class(ranges: list[tuple[int, int]], negated: bool) -> str:
    """A compact class of the bytes in ``ranges`` (or, ``negated``, of those not in them),
    never ``/``: ``[^a/]`` rather than 254 bytes written out (forty-sixth re-run F11). A path
    is matched as Latin-1 text, so a negated class's characters past 0xff never occur."""
    spans = _spans([*ranges, (0x2F, 0x2F)] if negated else ranges)
    if not negated:  # take ``/`` out of the spans
        spans = [
            part
            for lo, hi in spans
            for part in ((lo, min(hi, 0x2E)), (max(lo, 0x30), hi))
            if part[0] <= part[1]
        ]
        if not spans:
            return _NEVER
    elif spans == [(0, 0xFF)]:
        return _NEVER
    body = "".join(f"\\x{lo:02x}" if lo == hi else f"\\x{lo:02x}-\\x{hi:02x}" for lo, hi in spans)
    return f"[{'^' if negated else ''}{body}]"


def _wild(pat: str, pathname: bool) -> str | None:
    """wildmatch's reading of ``pat`` (``pathname``: WM_PATHNAME, where ``**`` between
    slashes or at an end crosses folders), or None where it can never match."""
    out: list[str] = []
    i, n = 0, len(pat)
    while i < n:
        c = pat[i]
        if c == "*":
            j = i
            while j < n and pat[j] == "*":
                j += 1
            at_start = i == 0 or pat[i - 1] == "/"  # git: the pattern's own start counts
            if pathname and j - i > 1 and at_start and (j == n or pat.startswith(("/", "\\/"), j)):
                if j < n and pat[j] == "/":
                    out.append(f"(?:{_ANY}*/)?")  # `**/`: no folder, or any
                    i = j + 1
                else:
                    out.append(f"{_ANY}*")
                    i = j
                continue
            out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            got = _bracket(pat, i + 1)
            if got is None:
                return None
            out.append(got[0])
            i = got[1]
        elif c == "\\":
            if i + 1 >= n:
                return None  # a trailing backslash matches nothing
            out.append(_char(pat[i + 1]))
            i += 2
        else:
            out.append(_char(c))
            i += 1
    return "".join(out)


def _trim(line: str) -> str:
    """git's ``trim_trailing_spaces``: trailing spaces go unless escaped (``\\ ``)."""
    last: int | None = None
    i, n = 0, len(line)
    while i < n:
        if line[i] == " ":
            last = i if last is None else last
        elif line[i] == "\\":
            i += 1
            if i >= n:
                return line
            last = None
        else:
            last = None
        i += 1
    return line if last is None else line[:last]


def git_pattern(line: str) -> tuple[str, bool, bool] | None:
    """git's reading of one .gitignore line: (a regex for the whole path relative to the
    .gitignore's folder, as UTF-8 bytes read as Latin-1; whether it ignores (no ``!``);
    whether it names folders only (a closing ``/``)), or None where it matches nothing."""
    if not line or line.startswith("#"):
        return None
    body = _trim(line)
    ignores = not body.startswith("!")
    body = body if ignores else body[1:]
    folders = body.endswith("/")
    body = body[:-1] if folders else body
    if not body:
        return None
    raw = body.encode("utf-8", "surrogateescape").decode("latin-1")
    if "/" not in raw:  # matched against the name alone, in any folder
        wild = _wild(raw, pathname=False)
        return None if wild is None else (f"(?:{_ANY}*/)?{wild}", ignores, folders)
    raw = raw.removeprefix("/")
    # git compares the part before the first wildcard as it stands, and wildmatches the rest
    # as a pattern of its own (so ``x/a**/b`` crosses folders: its ``**`` starts that rest)
    cut = next((k for k, c in enumerate(raw) if c in "*?[\\"), len(raw))
    wild = _wild(raw[cut:], pathname=True)
    if wild is None:
        return None
    return "".join(map(_char, raw[:cut])) + wild, ignores, folders


_T = TypeVar("_T")
_Blocks = list[tuple[textre.TextPattern, list[tuple[re.Pattern[str], _T]]]]


def _blocks(regexes: list[tuple[str, _T]], plain: Callable[[str], str]) -> _Blocks[_T]:
    """The regexes in blocks of BLOCK, last first, each block's own last first (the last
    that matches decides), behind one alternation each (of ``plain(regex)``)."""
    out: _Blocks[_T] = []

    def add(block: list[tuple[str, _T]]) -> None:
        # One alternation for ``block`` (already reversed), or two for its halves where RE2
        # refuses the whole as too large: a few long wildcard patterns are enough for that,
        # and each of them alone is a valid line. A single pattern RE2 refuses raises
        # Unsupported. Each pattern is compiled when first used (a block whose alternation
        # matches); the alternation now, so a pattern RE2 refuses is found as lines are read.
        patterns = [(textre.compile(regex), data) for regex, data in block]
        either = "|".join(f"(?:{plain(regex)})" for regex, _ in block)
        try:
            whole = textre.TextPattern(either).check()
        except textre.Unsupported:
            if len(block) == 1:
                raise
            half = len(block) // 2
            add(block[half:])  # later halves first: ``out`` is reversed at the end
            add(block[:half])
            return
        out.append((whole, patterns))

    for start in range(0, len(regexes), BLOCK):
        add(regexes[start : start + BLOCK][::-1])
    out.reverse()
    return out


def _names_folders(line: str) -> bool:
    """Whether a line's match through the folder mark can be the folder itself (``*/``,
    ``/**/``, ``build/``, ``[ab]*``): any line with a name part. A bare ``/`` (pathspec reads it
    as every folder) matches nothing for git."""
    return line.rstrip(" ").removeprefix("!").strip("/") != ""


class IgnoreSpec:
    """The patterns of one .gitignore (or of ``--exclude``): :meth:`decide` (git's answer for
    one path) and :meth:`match_file` (pathspec's). A line pathspec refuses raises ValueError,
    and one RE2 refuses textre.Unsupported (the caller leaves such lines out, and says so)."""

    def __init__(self, lines: Sequence[str]) -> None:
        from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

        self._used: list[tuple[str, tuple[bool, bool]]] = []
        git: list[tuple[str, tuple[bool, bool]]] = []
        for line in lines:  # pathspec's reading of each line (a bad one raises ValueError)
            regex, include = GitIgnoreSpecPattern.pattern_to_regex(line)
            if include is not None and regex:
                self._used.append((regex, (include, _names_folders(line))))
            mine = git_pattern(line)
            if mine is not None:
                git.append((mine[0], (mine[1], mine[2])))
        self._git = _blocks(git, lambda regex: regex)
        self._pathspec: _Blocks[tuple[bool, bool]] | None = None

    def decide(self, path: str, is_dir: bool) -> bool | None:
        """git's answer for the path itself (relative to the .gitignore's folder, no closing
        ``/``): True ignored, False re-included by a ``!`` line, None when no line matches.
        Folders above the path are not looked at: the walk never enters an ignored one."""
        text = path.encode("utf-8", "surrogateescape").decode("latin-1")
        for either, block in self._git:
            if either.fullmatch(text) is None:
                continue
            for pattern, (ignores, folders) in block:
                if (is_dir or not folders) and pattern.fullmatch(text) is not None:
                    return ignores
        return None

    @property
    def _blocks(self) -> _Blocks[tuple[bool, bool]]:
        if self._pathspec is None:
            self._pathspec = _blocks(
                self._used, lambda regex: regex.replace(f"(?P<{_DIR_MARK}>", "(?:")
            )
        return self._pathspec

    def match_file(self, file: str) -> bool:
        """Whether the path (``dir/`` for a folder) is ignored, as pathspec decides it."""
        from pathspec.util import normalize_file

        path = normalize_file(file)
        include: bool | None = None
        priority = 0
        for either, block in self._blocks:
            if either.search(path) is None:
                continue
            for pattern, (includes, folders) in block:
                m = pattern.search(path)
                if m is None:
                    continue
                level = 2
                if m.groupdict().get(_DIR_MARK):
                    level = 1  # a match through the folder mark is about a folder above
                    # ... unless the mark can be the path's own closing `/`: `!*/` or
                    # `!/**/` then names this folder itself (git's "ignore all but folders
                    # and *.*" idiom: libparanumal's `*`, `!/**/`, `!*.*` hid 861 of its 862
                    # files; issue 24, twenty-sixth sample)
                    if (
                        folders
                        and path.endswith("/")
                        and (
                            m.end(_DIR_MARK) == len(path)
                            or (
                                (own := pattern.search(path, len(path) - 1)) is not None
                                and own.end(_DIR_MARK) == len(path)
                            )
                        )
                    ):
                        level = 2
                if level > priority:
                    include, priority = includes, level
                if level == 2:
                    return bool(include)
        return bool(include)
