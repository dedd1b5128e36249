"""A ``.gitignore``'s patterns, matched in time linear in the path and in the patterns.

pathspec reads each line by git's wildmatch rules into a regular expression. Its own matchers
run those on Python's ``re`` (``*a*a*a*a*b`` against a long file name backtracks for minutes)
or put all of them in one RE2 set (which refuses a .gitignore of a few thousand patterns).
Here each pattern runs on :mod:`gpuport.textre` (RE2), and the patterns are grouped in blocks
of :data:`BLOCK` behind one alternation each: a path is tried against a block at once, and
only a block where one matches is walked pattern by pattern. The answer is pathspec's
``GitIgnoreSpec.match_file`` (the last matching pattern decides; a match of a folder part
``dir/`` yields to a later match of the whole path), which a test compares on many inputs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gpuport import textre

__all__ = ["BLOCK", "IgnoreSpec"]

BLOCK = 64
_DIR_MARK = "ps_d"  # pathspec's group for the "/" after a folder a pattern matched


def _names_folders(line: str) -> bool:
    """Whether a line's match through the folder mark can be the folder itself (``*/``,
    ``/**/``, ``build/``, ``[ab]*``): any line with a name part. A bare ``/`` (pathspec reads it
    as every folder) matches nothing for git."""
    return line.rstrip(" ").removeprefix("!").strip("/") != ""


class IgnoreSpec:
    """The patterns of one .gitignore (or of ``--exclude``), with ``match_file``."""

    def __init__(self, lines: Sequence[str]) -> None:
        from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

        used: list[tuple[str, bool, bool]] = []
        for line in lines:  # pathspec's reading of each line (a bad one raises ValueError)
            regex, include = GitIgnoreSpecPattern.pattern_to_regex(line)
            if include is not None and regex:
                used.append((regex, include, _names_folders(line)))
        # blocks in reverse, each in reverse: the last pattern that matches decides
        self._blocks: list[tuple[textre.TextPattern, list[tuple[re.Pattern[str], bool, bool]]]]
        self._blocks = []
        for start in range(0, len(used), BLOCK):
            self._add_block(used[start : start + BLOCK][::-1])
        self._blocks.reverse()

    def _add_block(self, block: list[tuple[str, bool, bool]]) -> None:
        """One alternation for ``block`` (already reversed), or two for its halves where RE2
        refuses the whole as too large: a few long wildcard patterns are enough for that, and
        each of them alone is a valid line. A single pattern RE2 refuses raises Unsupported."""
        # each pattern compiled when first used (a block whose alternation matches); the
        # alternation is compiled now, so a pattern RE2 refuses is found while lines are read
        patterns = [(textre.compile(regex), include, folders) for regex, include, folders in block]
        either = "|".join(
            f"(?:{regex.replace(f'(?P<{_DIR_MARK}>', '(?:')})" for regex, _, _ in block
        )
        try:
            whole = textre.TextPattern(either).check()
        except textre.Unsupported:
            if len(block) == 1:
                raise
            half = len(block) // 2
            # later halves first: _blocks is reversed at the end, as the block order is
            self._add_block(block[half:])
            self._add_block(block[:half])
            return
        self._blocks.append((whole, patterns))

    def match_file(self, file: str) -> bool:
        """Whether the path (``dir/`` for a folder) is ignored, as pathspec decides it."""
        from pathspec.util import normalize_file

        path = normalize_file(file)
        include: bool | None = None
        priority = 0
        for either, block in self._blocks:
            if either.search(path) is None:
                continue
            for pattern, includes, folders in block:
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
