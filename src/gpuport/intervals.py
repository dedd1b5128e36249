"""Whether a position lies in any of many ranges, in logarithmic time.

A rule that asks, for each finding or token, whether it sits in one of the file's guarded
ranges or skipped spans scanned every range each time: ranges x findings (fifteenth re-run:
a CMake file of thousands of ``if(USE_ROCM)`` blocks, 800 KB, 28 s CPU). The ranges are
merged and sorted once and each question is a binary search.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

__all__ = ["Intervals", "in_any"]


class Intervals:
    """The union of half-open ranges ``[a, b)``, sorted and merged."""

    def __init__(self, spans: Sequence[tuple[int, int]]) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        for a, b in sorted(s for s in spans if s[0] < s[1]):
            if self.ends and a <= self.ends[-1]:
                self.ends[-1] = max(self.ends[-1], b)
            else:
                self.starts.append(a)
                self.ends.append(b)

    def __contains__(self, x: int) -> bool:
        i = bisect_right(self.starts, x) - 1
        return i >= 0 and x < self.ends[i]


#: the merged form of the lists last asked about (by id and whether closed, kept with the list
#: so its id is not reused while it is here); a list that grew since is merged again
_SEEN: dict[tuple[int, bool], tuple[Sequence[tuple[int, int]], int, Intervals]] = {}


def in_any(spans: Sequence[tuple[int, int]], x: int, *, closed: bool = False) -> bool:
    """Whether ``x`` is in one of ``spans`` (``[a, b)``; ``closed``: ``[a, b]``). Short lists
    are read directly; a long one is merged once (per list and length) and searched."""
    if len(spans) < 16:
        if closed:
            return any(a <= x <= b for a, b in spans)
        return any(a <= x < b for a, b in spans)
    key = (id(spans), closed)
    got = _SEEN.get(key)
    if got is None or got[0] is not spans or got[1] != len(spans):
        merged = Intervals([(a, b + 1) for a, b in spans] if closed else spans)
        while len(_SEEN) >= 16:
            del _SEEN[next(iter(_SEEN))]
        got = _SEEN[key] = (spans, len(spans), merged)
    return x in got[2]
